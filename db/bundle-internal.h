/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "db/bundle.h"
#include "db/sql.h"
#include "util/cleanup.h"

/* What the bundle modules (db/bundle-*.c) share, and nothing else includes. */

/* A column of a row copied into another file: its value, an SQL expression over the source
 * row `src`, in place of the source's own value. */
typedef struct Mapping {
        const char *column;
        const char *expr;
} Mapping;

/*
 * INSERT INTO to.table SELECT FROM from.table AS src WHERE where: every column of the table by
 * name, each from the source row's column of that name or as mapped; a column the source does
 * not have (a bundle of an earlier schema) takes its default. Returns 0, -EIO, -ENOMEM.
 */
int bundle_copy_rows(sqlite3 *db, const char *from, const char *to, const char *table, const Mapping *map,
                     size_t n_map, const char *where);

/* The tables a run is imported from, as bundle_export() writes them. */
static const char *const run_tables[] = {
        "hosts",
        "experiments",
        "specs",
        "allocators",
        "runs",
        "variants",
        "cells",
        "samples",
        "sample_metrics",
        "probe_reports",
        "sample_timelines",
        "exclusions",
        "stats",
        "calibration",
        "pruned_values",
};

/* The tables of a run's own rows, from runs on (run_tables[RUN_OWN...]), each read by a
 * statement prepared once for every run of an import. */
#define RUN_OWN 4

/* A bundle being imported: the file named, and the private copy of it that is checked and
 * attached as `schema` (b0, b1, ...). SQLite opens a file by name (a /proc/self/fd link it
 * resolves to the name), so the file named could be swapped between check and attach; a copy
 * in a directory only this process's user can write cannot. */
typedef struct Source {
        const char *path;
        char *copy_dir; /* $TMPDIR/alloclab-import-XXXXXX, mode 0700; NULL until made */
        int doomed[2];  /* copy_dir and the copy, registered for removal (util/doomed.h) */
        int fd;         /* the copy, held open */
        char uri[64];   /* file:/proc/self/fd/N?mode=ro&immutable=1: the copy */
        char schema[16];
} Source;

void bundle_source_done(Source *src);

/* Copies src->path privately and checks the copy (bundle-check.c): a bundle of this schema whose
 * every row holds what alloclab writes. Returns 0, or an error with *ret_message. */
int bundle_check_file(Source *src, char **ret_message);

/* Statements that read a run's own rows in `schema`, prepared once per import. */
typedef struct Hasher {
        sqlite3 *db;
        const char *schema;
        sqlite3_stmt *tables[ELEMENTSOF(run_tables) - RUN_OWN];
} Hasher;

#define CONTENT_HEX_SIZE 33 /* XXH3-128 in hex */

int bundle_hasher_init(Hasher *h, sqlite3 *db, const char *schema);
void bundle_hasher_done(Hasher *h);
/* The content hash of the run with UUID uuid (bundle-content.c). Returns 0, -ENOENT, -EIO. */
int bundle_hasher_run(Hasher *h, const char *uuid, char ret_hex[CONTENT_HEX_SIZE]);
