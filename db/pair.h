/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/history.h"
#include "db/query.h"
#include "stats/compare.h"

/*
 * Two runs side by side (`alloclab compare`): what keeps them from being comparable, and for
 * every cell and variant they share, the change of the first run's metric from A to B.
 */

typedef struct PairChange {
        size_t cell_a, variant_a; /* indexes into a's cell_labels and variant_names */
        size_t cell_b, variant_b; /* the same cell label and variant name in b */
        double value_a, value_b;  /* each run's median; relative: each run's ratio to its baseline */
        double se_a, se_b;        /* their log standard errors within their runs (0: unknown) */
        bool has_comparison;      /* both values positive */
        Comparison comparison;    /* B against A: value_b / value_a (compare_run_medians) */
} PairChange;

typedef struct RunPair {
        Report *a, *b;      /* both read for a's metric */
        char **differences; /* strv: what differs between the runs' hosts, allocators, spec and
                             * matrix, in words ("THP: madvise -> always"); empty: comparable */
        /* Variants built from source (spec build:) at another revision in B, "new: v1 (f97ca68)
         * -> v2 (97f268e)": what the comparison is of, not what keeps it from being one (their
         * files differ, and a spec that names the revisions differs there). Empty: none. */
        char **revisions;
        PairChange *changes;
        size_t n_changes;
        /* Relative: each variant's within-run ratio to the baseline variant (the median of its
         * rounds' ratios, sampleset_round_ratio) in B against the same in A, so that what moves
         * the whole machine between the runs falls out; the baseline itself is not a change. */
        bool relative;
        const char *baseline; /* relative: the baseline variant's name (in a) */
        HistorySpread spread; /* between runs of A's experiment on A's host up to the older run */
        double aa_floor;      /* > 0: without earlier runs, the spread came from run A's A/A noise
                               * floor (this half-width of its interval, as a fraction) */
        CompareRule rule;     /* A's min_effect, alpha and correction over the changes compared */
} RunPair;

/* Reads runs a and b and compares them (relative: their within-run ratios). Returns 0, -ENOENT
 * when either does not exist (*ret_missing says which), -ENOMEM, -EIO. */
int query_run_pair(Store *s, int64_t a, int64_t b, bool relative, RunPair **ret, int64_t *ret_missing);
RunPair *run_pair_free(RunPair *p);
static inline void run_pair_freep(RunPair **p) {
        run_pair_free(*p);
}
