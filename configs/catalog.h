/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/*
 * The allocators alloclab knows by name: which shared object to preload and which Debian
 * package ships it. Finding the file on this machine is the runner's job (runner/allocator.c).
 */

/* How alloclab learns which options an allocator knows, to check the variables of its option
 * prefix (runner/options.c). */
typedef enum CatalogOptionNames {
        CATALOG_OPTIONS_UNCHECKED, /* not checked here (jemalloc names an unknown key itself) */
        CATALOG_OPTIONS_VERBOSE,   /* it lists its option table when verbose (mimalloc) */
        CATALOG_OPTIONS_STRINGS,   /* each variable it reads is a string in its file (getenv) */
} CatalogOptionNames;

typedef struct CatalogEntry {
        const char *name;
        const char *soname;  /* file name to preload; NULL for glibc (nothing preloaded) */
        const char *package; /* Debian package that ships soname */
        const char *description;
        /* Where soname is when not in the system library directories (a glob: compiler-rt puts
         * Scudo under LLVM's version), or NULL. */
        const char *dir;
        /* The environment entries that configure this allocator and no other, as fnmatch(3)
         * patterns of "NAME=VALUE" ("MIMALLOC_*"); NULL-terminated, or NULL for none. */
        const char *const *settings;
        /* The probe's name of its family (probe/report.h): what the probe finds serving malloc
         * under it, and what a file whose name holds it is taken for. */
        const char *family;
        /* Variables named with this prefix set its options, checked as option_names says; or
         * NULL. */
        const char *option_prefix;
        CatalogOptionNames option_names;
        /* How its complaints about its configuration start on stderr; NULL-terminated, or NULL. */
        const char *const *complaints;
        /* Building it from its source tree (a variant's build: family): shell command lines run
         * in the tree, and the file they make, relative to it; NULL when alloclab has none. */
        const char *const *build_commands;
        const char *build_output;
} CatalogEntry;

/* Entry for name, or NULL. */
const CatalogEntry *catalog_find(const char *name);

/* Entry whose shared object a file is, by its name ("/x/libmimalloc.so.2.1", "libjemalloc.so"):
 * the same name up to ".so"; "libc.so.6" is glibc. NULL when none. */
const CatalogEntry *catalog_find_file(const char *path);

/* The entry whose family a shared object's file name holds ("/opt/mimalloc-dev/libmimalloc-
 * debug.so" is mimalloc's), the first in table order; NULL when none. */
const CatalogEntry *catalog_find_family(const char *path);

/* Whether the environment entry ("NAME=VALUE") configures e's allocator. */
bool catalog_reads(const CatalogEntry *e, const char *entry);

/* The first allocator that the environment entry configures, or NULL (one that every program
 * reads, or none). */
const CatalogEntry *catalog_reader(const char *entry);

/* "jemalloc, mimalloc, ...": the allocators with build defaults, for messages (static storage). */
const char *catalog_build_families(void);

/* The whole table, NULL-name terminated. */
const CatalogEntry *catalog_entries(void);

/* "glibc, jemalloc, ..." for error messages (static storage). */
const char *catalog_names(void);

/* What to say of a preload name the catalog does not have: "unknown allocator 'jemaloc' (did you
 * mean 'jemalloc'?) (known: glibc, ...; or an absolute path)". A new string, or NULL. */
char *catalog_unknown(const char *name);
