/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

/*
 * Retention (alloclab prune, docs/export.md): a run whose measured samples are dropped keeps its
 * statistics (the stats table, every metric), its failed samples, its smoke runs with what the
 * probe found, its calibration, and per cell and variant the values of its own metric in round
 * order (pruned_values): every figure and verdict of the run, in its metric, is computed from
 * them as from its samples. What goes: the measured and warm-up samples that succeeded, with
 * their other metrics, probe reports and memory timelines.
 */

typedef struct PruneQuery {
        const char *experiment; /* NULL: every experiment */
        /* The last keep_last runs of each experiment on each machine (by start time) keep their
         * samples; 0: none kept for being recent */
        size_t keep_last;
        /* Only runs started at least this long ago; 0: any */
        uint64_t older_than_s;
        /* Of each experiment on each machine, the 1st, (N+1)th, (2N+1)th... run by start time
         * keeps its samples (one run in N); 0 or 1: none kept for this */
        size_t keep_every;
        bool dry_run; /* count, write nothing */
} PruneQuery;

typedef struct PruneTally {
        size_t runs;     /* runs pruned (or that would be) */
        int64_t samples; /* samples dropped (or that would be) */
} PruneTally;

/* Prunes the runs q selects that are neither running nor pruned already, each in a transaction
 * of its own (a prune ended at any moment leaves every run whole or pruned). The pages freed
 * are reused by the runs that follow; store_vacuum() gives them back to the file system.
 * Returns 0, -EIO, -ENOMEM. */
int store_prune(Store *s, const PruneQuery *q, PruneTally *ret);

/* Rewrites the database without its free pages (VACUUM: as long as the database takes to write).
 * Returns 0 or -EIO. */
int store_vacuum(Store *s);
