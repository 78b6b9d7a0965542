/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/query.h"
#include "stats/compare.h"

/*
 * Two runs side by side (`alloclab compare`): what keeps them from being comparable, and for
 * every cell and variant they share, the change of the first run's metric from A to B.
 */

typedef struct PairChange {
        size_t cell_a, variant_a; /* indexes into a's cell_labels and variant_names */
        size_t cell_b, variant_b; /* the same cell label and variant name in b */
        bool has_comparison;      /* both sides have measured values */
        Comparison comparison;    /* B against A: ratio = median(B) / median(A), Mann-Whitney */
} PairChange;

typedef struct RunPair {
        Report *a, *b;      /* both read for a's metric */
        char **differences; /* strv: what differs between the runs' hosts, allocators, spec and
                             * matrix, in words ("THP: madvise -> always"); empty: comparable */
        PairChange *changes;
        size_t n_changes;
} RunPair;

/* Reads runs a and b. Returns 0, -ENOENT when either does not exist (*ret_missing says which),
 * -ENOMEM, -EIO. The intervals are seeded by a's seed, so the same pair compares the same. */
int query_run_pair(Store *s, int64_t a, int64_t b, RunPair **ret, int64_t *ret_missing);
RunPair *run_pair_free(RunPair *p);
static inline void run_pair_freep(RunPair **p) {
        run_pair_free(*p);
}
