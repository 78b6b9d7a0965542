/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Comparing two series of measurements: the order-statistic interval of a median, the bootstrap
 * interval of a ratio of medians (seeded: the same data gives the same interval), the
 * Mann-Whitney U test for independent samples and the Wilcoxon signed-rank test for paired ones
 * (exact, ties included, up to COMPARE_EXACT_MAX values; beyond, the normal approximation with
 * tie and continuity corrections), and outliers by the modified z-score. Pure functions; they
 * give the verdicts of `alloclab show` (docs/analysis.md).
 */

#define COMPARE_OUTLIER_Z 3.5  /* Iglewicz and Hoaglin's threshold for the modified z-score */
#define COMPARE_RESAMPLES 2000 /* bootstrap resamples of an interval */
#define COMPARE_LEVEL     0.95 /* confidence level of an interval */
#define COMPARE_MIN_PAIRS 10   /* fewer pairs: the rank-sum test, which can decide from fewer samples */
#define COMPARE_EXACT_MAX 50   /* values (both samples, or pairs) up to which the tests' p is exact */

typedef enum Verdict {
        VERDICT_SAME,   /* no significant difference (or smaller than the minimum effect) */
        VERDICT_LOWER,  /* the variant's values are lower: faster, or less memory */
        VERDICT_HIGHER, /* the variant's values are higher */
        _VERDICT_MAX,
} Verdict;

/* A variant against the baseline on one metric. */
typedef struct Comparison {
        double ratio;  /* median(variant) / median(baseline) */
        double lo, hi; /* bootstrap COMPARE_LEVEL interval of the ratio */
        double p;      /* two-sided p-value: Wilcoxon signed-rank when paired, else Mann-Whitney */
        bool paired;
        Verdict verdict;
} Comparison;

/* The percentile interval of values[0..n) (n > 0) at `level`: the order statistics a sort would
 * give at the tails, found by two selections (values is reordered). */
void compare_percentile_interval(double *values, size_t n, double level, double *ret_lo, double *ret_hi);

/* The distribution-free interval of the median from order statistics (binomial): no resampling,
 * coverage at least `level` (for n < 6 at 95% no such pair exists and it is [min, max]).
 * sorted[0..n) ascending, n > 0. */
void compare_median_order_interval(const double *sorted, size_t n, double level, double *ret_lo,
                                   double *ret_hi);

/* Percentile bootstrap interval of median(b) / median(a), resampling both independently. Returns
 * 0, -EINVAL for an empty side, -ENOMEM. */
int compare_ratio_ci(const double *a, size_t na, const double *b, size_t nb, uint64_t seed,
                     unsigned resamples, double level, double *ret_lo, double *ret_hi);

/* Two-sided Mann-Whitney U test: U of a, and the p-value. Returns 0, -EINVAL (an empty side),
 * -ENOMEM. */
int compare_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *ret_u,
                         double *ret_p);

/* Two-sided Wilcoxon signed-rank test on pairs (a[i], b[i]); zero differences are dropped.
 * ret_w is the smaller of the rank sums. Returns 0, -EINVAL (no non-zero difference),
 * -ENOMEM. */
int compare_wilcoxon(const double *a, const double *b, size_t n, double *ret_w, double *ret_p);

/*
 * Compares x with the baseline: ratio of medians with its bootstrap interval and Mann-Whitney
 * p-value. The verdict is a difference only when p < alpha, the interval excludes 1 and the ratio
 * is at least min_effect away from 1; anything less is VERDICT_SAME. Returns 0, -EINVAL (an
 * empty side or a zero baseline median), -ENOMEM.
 */
int compare_to_baseline(const double *base, size_t nb, const double *x, size_t nx, uint64_t seed,
                        double min_effect, double alpha, Comparison *ret);

/* compare_to_baseline for scanning many comparisons (history): the bootstrap interval, the
 * costly part, is only computed where the test and the effect size already point to a
 * difference; elsewhere lo and hi are NAN and the verdict is VERDICT_SAME, as it would be. */
int compare_screen_to_baseline(const double *base, size_t nb, const double *x, size_t nx, uint64_t seed,
                               double min_effect, double alpha, Comparison *ret);

/* The same for samples taken in rounds (base[i] and x[i] measured in round i, side by side):
 * the bootstrap resamples rounds and the test is the Wilcoxon signed-rank test, which removes the
 * drift a machine shows from round to round. */
int compare_paired_to_baseline(const double *base, const double *x, size_t n, uint64_t seed,
                               double min_effect, double alpha, Comparison *ret);

/* The geometric mean of n ratios (a variant across cells) with an interval at `level`: the cells'
 * log-ratio intervals read as normal standard errors (half-width / z) and combined as
 * independent, sqrt(sum se^2) / n (one cell keeps its own interval). Comparisons without an
 * interval count in the mean but widen nothing. Returns 0, -EINVAL when n == 0. */
int compare_geomean(const Comparison *const *c, size_t n, double level, double *ret_mean, double *ret_lo,
                    double *ret_hi);

/* "wilcoxon" or "mann-whitney": the test behind c->p. */
const char *comparison_test(const Comparison *c);

/* The smallest two-sided p the test can give with n samples per variant, whatever the values:
 * when rounds (interleaved or randomized order) and n >= COMPARE_MIN_PAIRS the signed-rank
 * test's 2 / 2^n, else the rank-sum test's 2 / C(2n, n). With p never below alpha, no verdict
 * can be anything but VERDICT_SAME. */
double compare_smallest_p(size_t n, bool rounds);

/* The smallest n per variant with compare_smallest_p(n, rounds) < alpha. */
unsigned compare_samples_needed(double alpha, bool rounds);

/* "faster" / "slower" for time metrics, "lower" / "higher" for others, "~" for VERDICT_SAME. */
const char *verdict_word(Verdict v, bool time_metric);

/* Flags values whose modified z-score 0.6745 * |x - median| / MAD exceeds COMPARE_OUTLIER_Z
 * (with MAD == 0: values that differ from the median). Returns the number flagged, or -ENOMEM. */
int compare_outliers(const double *x, size_t n, bool *ret_flags);
