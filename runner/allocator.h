/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

#include "configs/catalog.h"
#include "util/memo.h"
#include "util/sha256.h"

/*
 * An allocator as found on this machine: the file that will be preloaded, its digest and the
 * version of the package that installed it. Resolution happens once per run, before any child
 * starts, so a missing allocator never costs a half-finished run.
 */

typedef struct Allocator {
        char *name;    /* catalog name (also for a path to the file the catalog name finds), or the path */
        char *path;    /* absolute path of the preloaded file; NULL: nothing preloaded (glibc) */
        char *version; /* package version, or "unknown" */
        char sha256[SHA256_HEX_SIZE]; /* of path; of libc for glibc */
        const CatalogEntry *entry;    /* NULL for a path preload of a file the catalog does not find */
} Allocator;

/*
 * Resolves a preload value (catalog name, absolute path, or NULL for glibc). Returns 0, or
 * -ENOENT when the catalog allocator is not installed or the path does not exist (ret->entry is
 * set then, so callers can name the package), -ENOMEM.
 */
int allocator_resolve(const char *preload, Allocator *ret);

/* The same; without identify, only the file is found (sha256 and version "unknown"): what a
 * check needs, at a fraction of the cost (hashing and dpkg's status file are most of it).
 * memo (may be NULL) remembers where catalog sonames were found (util/memo.h). */
int allocator_resolve_as(const char *preload, bool identify, Memo *memo, Allocator *ret);

void allocator_done(Allocator *a);

/* Finds a catalog entry's shared object in its own directory (e->dir) or the system library
 * directories, or in memo (may be NULL) where it was found before. -ENOENT if absent. */
int allocator_find_library(const CatalogEntry *e, Memo *memo, char **ret_path);
