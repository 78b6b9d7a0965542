/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Comparing two series of measurements: bootstrap confidence intervals of a median and of a
 * ratio of medians (seeded: the same data gives the same interval), the Mann-Whitney U test for
 * independent samples and the Wilcoxon signed-rank test for paired ones (normal approximation
 * with tie and continuity corrections), and outliers by the modified z-score. Pure functions;
 * groundwork of the analysis issue.
 */

#define COMPARE_OUTLIER_Z 3.5 /* Iglewicz and Hoaglin's threshold for the modified z-score */

/* Percentile bootstrap interval of the median at confidence `level` (e.g. 0.95). Returns 0,
 * -EINVAL for n == 0, -ENOMEM. */
int compare_median_ci(const double *x, size_t n, uint64_t seed, unsigned resamples, double level,
                      double *ret_lo, double *ret_hi);

/* Percentile bootstrap interval of median(b) / median(a), resampling both independently. */
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

/* Flags values whose modified z-score 0.6745 * |x - median| / MAD exceeds COMPARE_OUTLIER_Z
 * (with MAD == 0: values that differ from the median). Returns the number flagged, or -ENOMEM. */
int compare_outliers(const double *x, size_t n, bool *ret_flags);
