/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats/compare.h"
#include "stats/stats.h"

/*
 * One measured set: a cell and variant's values of a metric, each with the round it was taken
 * in. What show, compare and the HTML report say of it: its outliers, the median's interval, the
 * comparison with its cell's baseline (paired by round when the run measured side by side), and
 * a cell's time/memory Pareto front (docs/analysis.md).
 */

typedef struct SampleSet {
        double *values;  /* in round order */
        int64_t *rounds; /* the round of each value */
        size_t n;
} SampleSet;

/* Counts the values compare_outliers() flags; with exclude, leaves them out of values and rounds
 * and recomputes *stats from the rest. Returns the count, or -ENOMEM. */
int sampleset_outliers(SampleSet *s, bool exclude, Stats *stats);

/* The median's order-statistic interval at COMPARE_LEVEL (compare_median_order_interval), s->n >
 * 0. Returns 0 or -ENOMEM. */
int sampleset_median_interval(const SampleSet *s, double *ret_lo, double *ret_hi);

/* Of each round measured on both sides (base's value positive), x's value over base's, into
 * ret (room for x->n); returns how many. Both sets in round order. */
size_t sampleset_round_ratios(const SampleSet *base, const SampleSet *x, double *ret);

/* The median, over the rounds measured on both sides (base's value positive), of x's value over
 * base's in the same round: a ratio of values measured side by side, which a machine that speeds
 * up or slows down between rounds moves far less than the ratio of the two medians; and its
 * standard error in log terms (stats_median_se of the rounds' log ratios). Returns 0, -ENODATA
 * when no round is on both sides, -ENOMEM. Both sets in round order. */
int sampleset_round_ratio(const SampleSet *base, const SampleSet *x, double *ret, double *ret_se);

/* How a run's values of one cell may be compared, from the order it measured them in. */
typedef enum SampleDesign {
        SAMPLE_ROUNDS,      /* interleaved, randomized: each round measured every variant side by side */
        SAMPLE_INDEPENDENT, /* sequential (an import): each variant's samples after the other's, as
                             * another tool measured them, compared as independent samples */
        SAMPLE_BLOCKS,      /* blocked: no test (a drift of the machine between blocks is no difference) */
} SampleDesign;

/* The design of a run measured in `order` (runs.order_mode: interleaved, randomized, blocked or
 * sequential). */
SampleDesign sampleset_design(const char *order);

/* Whether x and base pair by round: measured in rounds, the same rounds on both sides (failures
 * can leave gaps), and enough of them (compare_pairs). */
bool sampleset_paired(const SampleSet *base, const SampleSet *x, SampleDesign design,
                      const CompareRule *rule);

/* x against base, its verdict not yet decided (compare_correct, compare_decide): by the
 * signed-rank test when they pair, else by the rank-sum test; blocks get only a ratio. */
int sampleset_compare(const SampleSet *base, const SampleSet *x, SampleDesign design,
                      const CompareRule *rule, Comparison *ret);

/* For n points (cost[i], rss[i]), lower being better in both (a time; a figure where more is
 * better, negated): front[i] when eligible[i] and no other eligible point is at least as low in
 * both and lower in one. */
void sampleset_pareto_front(const double *cost, const double *rss, const bool *eligible, size_t n,
                            bool *ret_front);
