/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "stats/changepoint.h"
#include "stats/student.h"
#include "util/cleanup.h"

void changepoint_pool_spread(double squares, double df, double *ret_spread, double *ret_df) {
        double prior = CHANGEPOINT_PRIOR_RUNS * CHANGEPOINT_PRIOR_SPREAD * CHANGEPOINT_PRIOR_SPREAD;
        *ret_df = df + CHANGEPOINT_PRIOR_RUNS;
        *ret_spread = sqrt((squares + prior) / *ret_df);
}

/* The level the earlier runs from..to-1 set, and how far a run may lie from it. */
typedef struct Level {
        double mean;  /* of their log medians */
        double scale; /* the standard error of a new run's distance from mean */
        double df;
        double spread;
} Level;

static bool level_of(const double *log_medians, size_t from, size_t to, Level *ret) {
        double k = (double) (to - from), sum = 0, squares = 0;
        for (size_t j = from; j < to; j++)
                sum += log_medians[j];
        double mean = sum / k;
        for (size_t j = from; j < to; j++)
                squares += (log_medians[j] - mean) * (log_medians[j] - mean);
        if (!isfinite(mean))
                return false; /* a median of 0 or less: no ratio */
        double spread, df;
        changepoint_pool_spread(squares, k - 1, &spread, &df);
        *ret = (Level){ .mean = mean, .scale = spread * sqrt(1 + 1 / k), .df = df, .spread = spread };
        return true;
}

/* Run i against level at alpha: fills p->against and p->outside. */
static void check(const ChangePointRun *run, double log_median, const Level *level, double alpha,
                  ChangePoint *p) {
        double distance = log_median - level->mean, t = fabs(distance) / level->scale;
        double reach = student_quantile(alpha, level->df) * level->scale;
        p->against = (Comparison){ .ratio = exp(distance),
                                   .lo = exp(distance - reach),
                                   .hi = exp(distance + reach),
                                   .p = student_p(t, level->df),
                                   .detectable = expm1(reach),
                                   .test = COMPARE_TEST_NONE };
        p->against.p_adjusted = p->against.p;
        p->spread = level->spread;
        p->outside = isfinite(log_median) && p->against.p < alpha &&
                     fabs(p->against.ratio - 1) >= run->min_effect;
        p->against.verdict = !p->outside            ? VERDICT_INCONCLUSIVE
                             : p->against.ratio > 1 ? VERDICT_HIGHER
                                                    : VERDICT_LOWER;
}

int changepoint_find(const ChangePointRun *runs, size_t n, ChangePoint *ret) {
        _cleanup_free_ double *log_medians = malloc((n ? n : 1) * sizeof(double));
        if (!log_medians)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                ret[i] = (ChangePoint){ .change = VERDICT_INCONCLUSIVE };
                log_medians[i] = runs[i].median > 0 ? log(runs[i].median) : NAN;
        }
        size_t since = 0;            /* the first run after the last change point or new baseline */
        size_t confirmer = SIZE_MAX; /* the run that confirmed the last change point */
        for (size_t i = 0; i < n; i++) {
                ChangePoint *p = &ret[i];
                if (runs[i].new_baseline) {
                        since = i;
                        continue;
                }
                /* It is the new level's second run, not a run to check against the first alone (it
                 * was flagged the other way against the change point it had just confirmed). */
                if (i == confirmer)
                        continue;
                size_t from = i > since + CHANGEPOINT_WINDOW ? i - CHANGEPOINT_WINDOW : since;
                Level level;
                if (from == i || !level_of(log_medians, from, i, &level))
                        continue;
                p->baseline_runs = i - from;
                p->baseline_from = from;
                check(&runs[i], log_medians[i], &level, runs[i].alpha, p);
                if (!p->outside)
                        continue;
                if (i + 1 == n) { /* nothing after it yet */
                        p->change = p->against.verdict;
                        p->tentative = true;
                        continue;
                }
                if (runs[i + 1].new_baseline)
                        continue;
                /* The next run against the same earlier runs: out of line the same way? */
                ChangePoint next = {};
                check(&runs[i + 1], log_medians[i + 1], &level,
                      fmin(CHANGEPOINT_CONFIRM_ALPHA_MAX, CHANGEPOINT_CONFIRM_FACTOR * runs[i + 1].alpha),
                      &next);
                if (next.outside && next.against.verdict == p->against.verdict) {
                        p->change = p->against.verdict;
                        p->confirmed_by = i + 1;
                        since = i;
                        confirmer = i + 1;
                }
        }
        return 0;
}
