/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats/compare.h"

/*
 * Change points of a series of runs (one cell and variant on one host, oldest first): each run's
 * median with its distribution-free interval, and whether its values differ from the pooled
 * values of the runs before it, back to the last change point or new baseline and at most
 * CHANGEPOINT_WINDOW runs, by the run's own verdict rule (docs/analysis.md).
 */

#define CHANGEPOINT_WINDOW 5 /* previous runs pooled as the distribution a run is checked against */

typedef struct ChangePointRun {
        const double *values; /* the run's measured values */
        size_t n;             /* > 0 */
        /* What is measured changed here (another host, another configuration): the run is not
         * compared, and the runs before it are not pooled for later ones. */
        bool new_baseline;
        uint64_t seed; /* the run's verdict rule */
        double min_effect, alpha;
} ChangePointRun;

typedef struct ChangePoint {
        double median, lo, hi; /* the median and its COMPARE_LEVEL order-statistic interval */
        size_t baseline_runs;  /* runs pooled for the check; 0: not checked */
        size_t baseline_from;  /* the index of the first of them */
        Comparison against;    /* against the pool when baseline_runs > 0 (compare_screen_to_baseline) */
        Verdict change;        /* VERDICT_HIGHER: the values rose; VERDICT_SAME: no change point */
} ChangePoint;

/* Fills ret[0..n) for runs[0..n). Returns 0 or -ENOMEM. */
int changepoint_find(const ChangePointRun *runs, size_t n, ChangePoint *ret);
