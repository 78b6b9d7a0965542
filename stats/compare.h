/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A variant against a baseline: how much higher or lower its values are, as a ratio, with the
 * rank test and the interval that inverts it, so that the two always agree. The ratio is the
 * Hodges-Lehmann estimate on log values: for independent samples the median of every ratio
 * x[j] / base[i], for pairs (a round's two values) the median of the Walsh averages of the
 * rounds' log ratios. The interval is the exact distribution-free interval at 1 - alpha around
 * it (order statistics of the same ratios, bounds from the rank statistic's null distribution,
 * stats/ranks.h), and the two-sided p is the test whose acceptance region that interval is:
 * p < alpha exactly when the interval excludes 1. Under a correction, compare_family() moves
 * every interval of the family to the level at which the same holds for the corrected p. Values that are not
 * all positive (a reported metric can be 0) are compared by differences instead, as a fraction of the
 * baseline's median. Pure functions; they give the verdicts of `alloclab show` (docs/analysis.md).
 */

#define COMPARE_OUTLIER_Z 3.5  /* Iglewicz and Hoaglin's threshold for the modified z-score */
#define COMPARE_LEVEL     0.95 /* confidence level of a median's own interval (order statistics) */
#define COMPARE_MIN_PAIRS 10   /* fewer rounds never pair: the rank-sum test decides from fewer */
#define COMPARE_POWER     0.80 /* the chance at which a detectable change is stated */

typedef enum Verdict {
        VERDICT_INCONCLUSIVE, /* neither of the two below: the run cannot tell */
        VERDICT_SAME,         /* the interval lies within +-min_effect: no difference that large */
        VERDICT_LOWER,        /* significantly lower by at least min_effect: faster, or less memory */
        VERDICT_HIGHER,       /* significantly higher by at least min_effect */
        _VERDICT_MAX,
} Verdict;

typedef enum CompareTest {
        COMPARE_TEST_RANK_SUM,    /* independent samples: Mann-Whitney */
        COMPARE_TEST_SIGNED_RANK, /* rounds: Wilcoxon signed-rank on the rounds' log ratios */
        COMPARE_TEST_RUNS,        /* two runs' medians, by Student's t with the between-run spread */
        COMPARE_TEST_NONE,        /* a design no test is valid for (blocked order): no verdict */
        _COMPARE_TEST_MAX,
} CompareTest;

/* How the verdicts of many comparisons at once keep their error rate (compare_correct). */
typedef enum Correction {
        CORRECTION_HOLM, /* the family-wise error: no false verdict among them, at alpha */
        CORRECTION_BH,   /* Benjamini-Hochberg: false verdicts at most alpha of all verdicts */
        CORRECTION_NONE, /* alpha per comparison */
        _CORRECTION_MAX,
} Correction;

/* The verdict rule: the spec's min_effect and alpha, and how many comparisons share them. */
typedef struct CompareRule {
        double min_effect, alpha;
        Correction correction;
        size_t tests; /* comparisons in the family (>= 1) */
        /* The intervals are at 1 - interval_alpha (0: alpha): compare_family() sets the level at
         * which the family's corrected decisions and its intervals agree. */
        double interval_alpha;
} CompareRule;

typedef struct Comparison {
        double ratio;      /* variant / baseline (Hodges-Lehmann) */
        double lo, hi;     /* its interval at 1 - interval_alpha; NAN with COMPARE_TEST_NONE */
        double p;          /* two-sided p of the test; NAN with COMPARE_TEST_NONE */
        double p_adjusted; /* p after the family's correction (compare_correct) */
        /* The smallest change, as a fraction (0.08: 8%), this test would find with COMPARE_POWER
         * at the per-test level of its rule (compare_test_alpha); INFINITY when no values could
         * reach it at this n. */
        double detectable;
        CompareTest test;
        Verdict verdict;
} Comparison;

/* The level each single test of the family must reach: alpha, or alpha / tests under a
 * correction (Holm's first step; Benjamini-Hochberg's for a single true difference). */
double compare_test_alpha(const CompareRule *rule);

/* Whether n rounds are compared as pairs under rule: at least COMPARE_MIN_PAIRS of them, and the
 * signed-rank test able to reach a quarter of compare_test_alpha() (so that a round or two the
 * other way still leaves a decision). Since both tests' smallest p falls with n, a larger n never
 * loses the ability to decide that a smaller one has. */
bool compare_pairs(size_t n, const CompareRule *rule);

/* base[0..nb) against x[0..nx), independent. Fills everything but the verdict, p_adjusted = p.
 * Returns 0, -EINVAL (an empty side, or a baseline median of 0 where values are not all
 * positive), -ENOMEM. */
int compare_independent(const double *base, size_t nb, const double *x, size_t nx, const CompareRule *rule,
                        Comparison *ret);

/* (base[i], x[i]) measured in round i, side by side. The same, by the signed-rank test. */
int compare_paired(const double *base, const double *x, size_t n, const CompareRule *rule, Comparison *ret);

/* Run B's median against run A's (or two runs' within-run ratios): each run one draw of a
 * median that varies between runs with log sd `spread`, estimated with df degrees of freedom
 * (stats/changepoint.h: changepoint_pool_spread). The ratio mb / ma, its interval at 1 -
 * interval_alpha (or alpha) and the t test's p; everything but the verdict. -EINVAL when a median is not
 * positive. */
int compare_run_medians(double ma, double mb, double spread, double df, const CompareRule *rule,
                        Comparison *ret);

/* Without a valid test: only the ratio, test COMPARE_TEST_NONE, verdict inconclusive. */
int compare_ratio_only(const double *base, size_t nb, const double *x, size_t nx, Comparison *ret);

/* Sets p_adjusted of c[0..n) (a family of n tests) by correction, and returns the level alpha'
 * at which intervals agree with the corrected decisions at alpha: with R of the m tests
 * rejected, Holm's alpha / (m - R) (every rejected p lies below it, every other one above), the
 * Benjamini-Yekutieli false-coverage level R alpha / m for Benjamini-Hochberg (alpha / m with no
 * rejection), alpha without a correction. */
double compare_correct(Comparison *const *c, size_t n, Correction correction, double alpha);

/* A family decided as one: corrects c[0..n) by rule, sets rule->interval_alpha to the level
 * compare_correct() returns, has recompute(userdata, i, rule, c[i]) compute each comparison's
 * interval again at that level (its p_adjusted kept), and decides each. Returns 0 or what
 * recompute returned below 0. */
int compare_family(Comparison *const *c, size_t n, CompareRule *rule,
                   int (*recompute)(void *userdata, size_t i, const CompareRule *rule, Comparison *ret),
                   void *userdata);

/* The verdict from p_adjusted, the interval and min_effect: a difference when p_adjusted < alpha
 * and the ratio is at least min_effect away from 1 (its interval then excludes 1); same when the
 * interval lies within [1 - min_effect, 1 + min_effect]; inconclusive otherwise. */
void compare_decide(Comparison *c, const CompareRule *rule);

/* compare_independent() and compare_decide() for a single comparison. */
int compare_to_baseline(const double *base, size_t nb, const double *x, size_t nx, const CompareRule *rule,
                        Comparison *ret);

/* The distribution-free interval of the median from order statistics (binomial): no resampling,
 * coverage at least `level` (for n < 6 at 95% no such pair exists and it is [min, max]).
 * sorted[0..n) ascending, n > 0. */
void compare_median_order_interval(const double *sorted, size_t n, double level, double *ret_lo,
                                   double *ret_hi);

/* The geometric mean of n ratios (a variant across cells) with an interval at `level`, the
 * level of the cells' own intervals: their log half-widths read as normal standard errors and
 * combined as independent, sqrt(sum se^2) / n (one cell keeps its own interval; an unbounded
 * one makes it unbounded). Returns 0, -EINVAL when n == 0. */
int compare_geomean(const Comparison *const *c, size_t n, double level, double *ret_mean, double *ret_lo,
                    double *ret_hi);

/* "wilcoxon", "mann-whitney", "runs-t" or "none": the test behind c->p. */
const char *comparison_test(const Comparison *c);

/* The smallest two-sided p a test can give with n values per side, whatever the values: paired
 * the signed-rank test's 2 / 2^n, else the rank-sum test's 2 / C(2n, n). */
double compare_smallest_p(size_t n, bool paired);

/* Whether n values per variant (in rounds, or not) can give a verdict under rule in the best
 * case (Holm needs alpha / tests even then; Benjamini-Hochberg alpha, when every comparison
 * differs), and the smallest n that can. */
bool compare_can_decide(size_t n, bool rounds, const CompareRule *rule);
unsigned compare_samples_needed(bool rounds, const CompareRule *rule);

/* "faster" / "slower" for time metrics, "lower" / "higher" for others, "same", "inconclusive". */
const char *verdict_word(Verdict v, bool time_metric);

/* The verdict in a table cell: verdict_word(), "~" for inconclusive. */
const char *verdict_mark(Verdict v, bool time_metric);

const char *correction_to_string(Correction c);
int correction_from_string(const char *s); /* a Correction, or -1 when unknown */

/* Flags values whose modified z-score 0.6745 * |x - median| / MAD exceeds COMPARE_OUTLIER_Z
 * (with MAD == 0, as counted instructions have it: values that differ from the median by more than
 * COMPARE_OUTLIER_FLAT of it; 13 instructions in 29 million are not an outlier). Returns the number
 * flagged, or -ENOMEM. */
#define COMPARE_OUTLIER_FLAT 0.001
int compare_outliers(const double *x, size_t n, bool *ret_flags);
