/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats/compare.h"

/*
 * Change points of a series of runs (one cell and variant on one host, oldest first). The run is
 * the unit: runs differ from each other by more than samples within a run do (another process
 * image and layout, another moment of the machine), so each run is summarised by its median and
 * the series of medians is what is tested. A run is out of line when its log median lies outside
 * the prediction interval, at 1 - alpha, of the earlier runs' log medians (back to the last change
 * point or new baseline, at most CHANGEPOINT_WINDOW runs): Student's t with their spread, shrunk
 * toward CHANGEPOINT_PRIOR_SPREAD while they are few, and at least min_effect away. A change
 * point is a run out of line whose next run is out of line the same way against the same earlier
 * runs (at CHANGEPOINT_CONFIRM_FACTOR alpha): one run out of line is a busy moment of the
 * machine, two are a new level. The series'
 * last run out of line is a tentative change point until the next run. (docs/analysis.md)
 */

#define CHANGEPOINT_WINDOW            10   /* earlier runs that set the level a run is checked against */
#define CHANGEPOINT_PRIOR_SPREAD      0.02 /* assumed spread of a run's median between runs (log sd) */
#define CHANGEPOINT_PRIOR_RUNS        2    /* ... worth as much as this many runs' spread */
/* The next run confirms a run out of line when it is out of line the same way at this many
 * times the run's alpha (at most CHANGEPOINT_CONFIRM_ALPHA_MAX): a false change point needs a
 * run beyond alpha and the next one beyond 10 alpha, one-sided, the same way. */
#define CHANGEPOINT_CONFIRM_FACTOR    10
#define CHANGEPOINT_CONFIRM_ALPHA_MAX 0.2

typedef struct ChangePointRun {
        double median; /* the run's summary (its median, or a ratio); not > 0: not compared */
        /* What is measured changed here (another host, another configuration): the run is not
         * compared, and the runs before it are not used for later ones. */
        bool new_baseline;
        double min_effect, alpha; /* the run's verdict rule */
} ChangePointRun;

typedef struct ChangePoint {
        size_t baseline_runs; /* earlier runs it was checked against; 0: not checked */
        size_t baseline_from; /* the index of the first of them */
        /* Against them when baseline_runs > 0: ratio = median / their geometric mean, lo and hi
         * its prediction interval at 1 - alpha, p the t test's (test COMPARE_TEST_NONE: not a
         * rank test). */
        Comparison against;
        double spread;       /* the between-run spread used (log sd of a run's median) */
        bool outside;        /* out of line with the earlier runs */
        Verdict change;      /* VERDICT_HIGHER or VERDICT_LOWER at a change point, else inconclusive */
        bool tentative;      /* a change point the next run has yet to confirm (the last run) */
        size_t confirmed_by; /* at a confirmed change point, the index of the run that confirmed it */
} ChangePoint;

/* The between-run spread of a median from squares, the sum of squared deviations of log medians
 * from their segment's mean, with df degrees of freedom (runs less segments), pooled with the
 * prior (CHANGEPOINT_PRIOR_SPREAD worth CHANGEPOINT_PRIOR_RUNS): the spread, and its degrees of
 * freedom. */
void changepoint_pool_spread(double squares, double df, double *ret_spread, double *ret_df);

/* Fills ret[0..n) for runs[0..n). Returns 0 or -ENOMEM. */
int changepoint_find(const ChangePointRun *runs, size_t n, ChangePoint *ret);
