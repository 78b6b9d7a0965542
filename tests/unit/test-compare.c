/* SPDX-License-Identifier: MIT */
/*
 * Comparison statistics against values computed by hand from the textbook formulas: exact
 * p-values of small samples (against enumerating every arrangement, ties included), the normal
 * approximation past them, bootstrap intervals that are reproducible for a seed, outliers.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner/plan.h"
#include "stats/compare.h"
#include "util/rng.h"

/* Average ranks (1-based) of x[0..n), ties sharing theirs: the reference for the brute force. */
static void ranks_of(const double *x, size_t n, double *ranks) {
        for (size_t i = 0; i < n; i++) {
                size_t below = 0, equal = 0;
                for (size_t k = 0; k < n; k++) {
                        below += x[k] < x[i];
                        equal += x[k] == x[i];
                }
                ranks[i] = (double) below + (double) (equal + 1) / 2;
        }
}

/* The rank-sum test's exact p by enumerating every way to pick a's na values out of all n. */
static double brute_rank_sum_p(const double *a, size_t na, const double *b, size_t nb) {
        double all[16], ranks[16];
        size_t n = na + nb;
        memcpy(all, a, na * sizeof(double));
        memcpy(all + na, b, nb * sizeof(double));
        ranks_of(all, n, ranks);
        double observed = 0, mean = (double) na * (double) (n + 1) / 2;
        for (size_t i = 0; i < na; i++)
                observed += ranks[i];
        size_t tail = 0, total = 0;
        for (unsigned mask = 0; mask < 1u << n; mask++) {
                if ((size_t) __builtin_popcount(mask) != na)
                        continue;
                double sum = 0;
                for (size_t i = 0; i < n; i++)
                        if (mask & 1u << i)
                                sum += ranks[i];
                total++;
                tail += fabs(sum - mean) >= fabs(observed - mean) - 1e-9;
        }
        return (double) tail / (double) total;
}

/* The signed-rank test's exact p by enumerating every sign of the nonzero differences. */
static double brute_signed_rank_p(const double *a, const double *b, size_t n) {
        double d[16], magnitude[16], ranks[16];
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
                if (b[i] != a[i]) {
                        d[m] = b[i] - a[i];
                        magnitude[m] = fabs(d[m]);
                        m++;
                }
        ranks_of(magnitude, m, ranks);
        double observed = 0, mean = 0;
        for (size_t i = 0; i < m; i++) {
                observed += d[i] > 0 ? ranks[i] : 0;
                mean += ranks[i] / 2;
        }
        size_t tail = 0;
        for (unsigned mask = 0; mask < 1u << m; mask++) {
                double sum = 0;
                for (size_t i = 0; i < m; i++)
                        if (mask & 1u << i)
                                sum += ranks[i];
                tail += fabs(sum - mean) >= fabs(observed - mean) - 1e-9;
        }
        return (double) tail / (double) (1u << m);
}

static void test_mann_whitney(void **state) {
        (void) state;
        /* Exact for small samples: fully apart, 3 vs 3 is 2 / C(6, 3), 4 vs 4 is 2 / 70 and 5 vs 5
         * is 2 / 252 = 0.0079, the textbook values (the normal approximation said 0.081 and
         * 0.012 for 3 and 5: no verdict at n = 5 was ever possible at alpha 0.01). */
        double a[] = { 1, 2, 3, 4, 5 }, b[] = { 6, 7, 8, 9, 10 }, u, p;
        assert_int_equal(compare_mann_whitney(a, 3, b, 3, &u, &p), 0);
        assert_float_equal(u, 0, 0);
        assert_float_equal(p, 2.0 / 20, 1e-12);
        assert_int_equal(compare_mann_whitney(a, 4, b, 4, &u, &p), 0);
        assert_float_equal(p, 2.0 / 70, 1e-12);
        assert_int_equal(compare_mann_whitney(a, 5, b, 5, &u, &p), 0);
        assert_float_equal(p, 2.0 / 252, 1e-12);
        assert_int_equal(compare_mann_whitney(b, 5, a, 5, &u, &p), 0);
        assert_float_equal(u, 25, 0);
        assert_float_equal(p, 2.0 / 252, 1e-12);
        /* Ties: the exact distribution of the tied (average) ranks, as enumeration gives it. */
        double c[] = { 1, 2, 2, 7 }, d[] = { 2, 3, 4, 5, 6 };
        assert_int_equal(compare_mann_whitney(c, 4, d, 5, &u, &p), 0);
        assert_float_equal(u, 6, 0);
        assert_float_equal(p, brute_rank_sum_p(c, 4, d, 5), 1e-12);
        /* Many small samples with many ties against the enumeration. */
        uint64_t rng = 7;
        for (int round = 0; round < 200; round++) {
                double x[8], y[8];
                size_t nx = 1 + round % 7, ny = 1 + (round / 7) % 7;
                for (size_t i = 0; i < nx + ny; i++) {
                        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                        (i < nx ? x : y)[i < nx ? i : i - nx] = (double) (rng >> 61); /* 0..7: ties */
                }
                assert_int_equal(compare_mann_whitney(x, nx, y, ny, &u, &p), 0);
                assert_float_equal(p, brute_rank_sum_p(x, nx, y, ny), 1e-9);
        }
        assert_int_equal(compare_mann_whitney(a, 0, b, 3, &u, &p), -EINVAL);
}

static void test_mann_whitney_large(void **state) {
        (void) state;
        /* Past COMPARE_EXACT_MAX values, the normal approximation with the continuity
         * correction: 30 vs 30 fully apart, z = (450 - 0.5) / sqrt(30 * 30 * 61 / 12). */
        double a[30], b[30], u, p;
        for (int i = 0; i < 30; i++) {
                a[i] = i;
                b[i] = 100 + i;
        }
        assert_int_equal(compare_mann_whitney(a, 30, b, 30, &u, &p), 0);
        assert_float_equal(p, erfc((450 - 0.5) / sqrt(30.0 * 30 * 61 / 12) / sqrt(2)), 1e-12);
}

static void test_wilcoxon(void **state) {
        (void) state;
        /* Every one of 5 pairs the same way: exactly 2 / 2^5. */
        double a[] = { 1, 2, 3, 4, 5 }, b[] = { 2, 4, 6, 8, 10 }, w, p;
        assert_int_equal(compare_wilcoxon(a, b, 5, &w, &p), 0);
        assert_float_equal(w, 0, 0);
        assert_float_equal(p, 2.0 / 32, 1e-12);
        /* A zero difference is dropped; the 3 others, all positive: 2 / 2^3. */
        double x[] = { 10, 11, 12, 13 }, y[] = { 11, 11, 14, 13.5 };
        assert_int_equal(compare_wilcoxon(x, y, 4, &w, &p), 0);
        assert_float_equal(w, 0, 0);
        assert_float_equal(p, 2.0 / 8, 1e-12);
        assert_int_equal(compare_wilcoxon(x, x, 4, &w, &p), -EINVAL);
        /* Tied magnitudes and mixed signs against the enumeration. */
        uint64_t rng = 11;
        for (int round = 0; round < 200; round++) {
                double base[12], other[12];
                size_t n = 1 + round % 12;
                for (size_t i = 0; i < n; i++) {
                        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                        base[i] = 10;
                        other[i] = 10 + (double) (int) (rng >> 61) - 3; /* -3..4: ties and zeros */
                }
                if (compare_wilcoxon(base, other, n, &w, &p) == -EINVAL)
                        continue;
                assert_float_equal(p, brute_signed_rank_p(base, other, n), 1e-9);
        }
}

/* Whether a verdict is possible at all with n samples: 5 per variant at alpha 0.01 (2/252);
 * 7 at 0.001 (2/3432, where 6 gives 2/924); with pairs from 10 on, 2 / 2^n. */
static void test_smallest_p(void **state) {
        (void) state;
        assert_float_equal(compare_smallest_p(3, false), 0.1, 1e-12);
        assert_float_equal(compare_smallest_p(5, true), 2.0 / 252, 1e-12);
        assert_float_equal(compare_smallest_p(10, true), 2.0 / 1024, 1e-12);
        assert_float_equal(compare_smallest_p(10, false), 2.0 / 184756, 1e-15);
        assert_int_equal(compare_samples_needed(0.01, false), 5);
        assert_int_equal(compare_samples_needed(0.01, true), 5);
        assert_int_equal(compare_samples_needed(0.001, false), 7);
        assert_int_equal(compare_samples_needed(0.05, false), 4);
        /* 5 vs 5 fully apart now gives a verdict at alpha 0.01. */
        double base[] = { 10, 10.1, 10.2, 10.3, 10.4 }, x[] = { 11, 11.1, 11.2, 11.3, 11.4 };
        Comparison c;
        assert_int_equal(compare_to_baseline(base, 5, x, 5, 1, 0.02, 0.01, &c), 0);
        assert_int_equal(c.verdict, VERDICT_HIGHER);
        assert_float_equal(c.p, 2.0 / 252, 1e-12);
}

static void test_bootstrap(void **state) {
        (void) state;
        double x[] = { 10, 11, 9, 10.5, 9.5, 10.2, 30 }, y[] = { 20, 22, 18, 21, 19, 20.4, 60 };
        double lo1, hi1, lo2, hi2, lo3, hi3;
        assert_int_equal(compare_ratio_ci(x, 7, y, 7, 42, 2000, 0.95, &lo1, &hi1), 0);
        assert_int_equal(compare_ratio_ci(x, 7, y, 7, 42, 2000, 0.95, &lo2, &hi2), 0);
        assert_float_equal(lo1, lo2, 0); /* same data, same seed: same interval */
        assert_float_equal(hi1, hi2, 0);
        assert_true(lo1 <= 2 && 2 <= hi1);
        double constant[] = { 5, 5, 5 };
        assert_int_equal(compare_ratio_ci(constant, 3, constant, 3, 1, 100, 0.95, &lo3, &hi3), 0);
        assert_float_equal(lo3, 1, 0);
        assert_float_equal(hi3, 1, 0);
        /* b is twice a: every resampled ratio lies between the extreme pairings. */
        double a[] = { 1, 2, 3, 4 }, b[] = { 2, 4, 6, 8 };
        assert_int_equal(compare_ratio_ci(a, 4, b, 4, 7, 2000, 0.95, &lo3, &hi3), 0);
        assert_true(lo3 > 0.5 && lo3 <= 2 && hi3 >= 2 && hi3 < 8);
        assert_int_equal(compare_ratio_ci(x, 0, y, 7, 1, 100, 0.95, &lo3, &hi3), -EINVAL);
}

static void test_outliers(void **state) {
        (void) state;
        /* median 10, |x - 10| = 0 1 1 0.5 0.5 20 -> MAD 0.75; z(30) = 0.6745 * 20 / 0.75 = 18 */
        double x[] = { 10, 11, 9, 10.5, 9.5, 30 };
        bool flags[6];
        assert_int_equal(compare_outliers(x, 6, flags), 1);
        assert_true(flags[5]);
        assert_false(flags[1]);
        double flat[] = { 7, 7, 7, 8 };
        assert_int_equal(compare_outliers(flat, 4, flags), 1); /* MAD 0: anything else stands out */
        assert_true(flags[3]);
}

static void test_verdict(void **state) {
        (void) state;
        /* 12 samples each, fully separated, 10% apart: p ~ 7e-5, interval near 1.1. */
        double base[12], slower[12], close[12];
        for (int i = 0; i < 12; i++) {
                base[i] = 100 + i * 0.1;
                slower[i] = 110 + i * 0.1;
                close[i] = 101 + i * 0.1; /* separated too, but only 1% apart */
        }
        Comparison c;
        assert_int_equal(compare_to_baseline(base, 12, slower, 12, 1, 0.02, 0.01, &c), 0);
        assert_int_equal(c.verdict, VERDICT_HIGHER);
        assert_true(c.p < 1e-3 && c.lo > 1.05 && c.hi < 1.15 && c.ratio > c.lo && c.ratio < c.hi);
        assert_int_equal(compare_to_baseline(slower, 12, base, 12, 1, 0.02, 0.01, &c), 0);
        assert_int_equal(c.verdict, VERDICT_LOWER);
        assert_string_equal(verdict_word(c.verdict, true), "faster");
        /* Significant but below the minimum effect. */
        assert_int_equal(compare_to_baseline(base, 12, close, 12, 1, 0.02, 0.01, &c), 0);
        assert_true(c.p < 0.01);
        assert_int_equal(c.verdict, VERDICT_SAME);
        /* Identical series: no difference. */
        assert_int_equal(compare_to_baseline(base, 12, base, 12, 1, 0.02, 0.01, &c), 0);
        assert_int_equal(c.verdict, VERDICT_SAME);
        assert_true(c.p > 0.5);
        double zero[] = { 0, 0 };
        assert_int_equal(compare_to_baseline(zero, 2, base, 12, 1, 0.02, 0.01, &c), -EINVAL);
}

static void test_paired_verdict(void **state) {
        (void) state;
        /* Rounds drift by 20% each, the variant is 5% above the baseline in every round: the
         * independent test drowns in the drift, the paired one sees all 10 pairs agree
         * (W = 0, exactly p = 2 / 2^10). */
        double base[10], x[10];
        for (int i = 0; i < 10; i++) {
                base[i] = 100 + 20 * i;
                x[i] = base[i] * 1.05;
        }
        Comparison c;
        assert_int_equal(compare_to_baseline(base, 10, x, 10, 3, 0.02, 0.01, &c), 0);
        assert_int_equal(c.verdict, VERDICT_SAME);
        assert_false(c.paired);
        assert_int_equal(compare_paired_to_baseline(base, x, 10, 3, 0.02, 0.01, &c), 0);
        assert_true(c.paired);
        assert_int_equal(c.verdict, VERDICT_HIGHER);
        assert_float_equal(c.p, 2.0 / 1024, 1e-12);
        assert_true(fabs(c.lo - 1.05) < 1e-9 && fabs(c.hi - 1.05) < 1e-9);
        /* Identical pairs: no difference, p = 1. */
        assert_int_equal(compare_paired_to_baseline(base, base, 10, 3, 0.02, 0.01, &c), 0);
        assert_int_equal(c.verdict, VERDICT_SAME);
        assert_true(c.p == 1);
}

/* Textbook order-statistic intervals of the median at 95%: (x(2), x(9)) for n = 10 and
 * (x(6), x(15)) for n = 20 (binomial tails 0.011 and 0.021); for n = 5 none exists. */
static void test_order_interval(void **state) {
        (void) state;
        double x[20], lo, hi;
        for (int i = 0; i < 20; i++)
                x[i] = i + 1; /* x(k) = k */
        compare_median_order_interval(x, 10, 0.95, &lo, &hi);
        assert_true(lo == 2 && hi == 9);
        compare_median_order_interval(x, 20, 0.95, &lo, &hi);
        assert_true(lo == 6 && hi == 15);
        compare_median_order_interval(x, 5, 0.95, &lo, &hi);
        assert_true(lo == 1 && hi == 5);
}

/* The screened comparison agrees with the full one on the verdict, and skips the interval only
 * where there is no difference. */
static void test_screened(void **state) {
        (void) state;
        double base[12], same[12], slower[12];
        for (int i = 0; i < 12; i++) {
                base[i] = 100 + i % 4;
                same[i] = 100 + (i + 1) % 4;
                slower[i] = 110 + i % 4;
        }
        Comparison full, screened;
        assert_int_equal(compare_to_baseline(base, 12, slower, 12, 3, 0.02, 0.01, &full), 0);
        assert_int_equal(compare_screen_to_baseline(base, 12, slower, 12, 3, 0.02, 0.01, &screened), 0);
        assert_int_equal(screened.verdict, VERDICT_HIGHER);
        assert_true(screened.lo == full.lo && screened.hi == full.hi && screened.p == full.p);
        assert_int_equal(compare_screen_to_baseline(base, 12, same, 12, 3, 0.02, 0.01, &screened), 0);
        assert_int_equal(screened.verdict, VERDICT_SAME);
        assert_true(isnan(screened.lo) && isnan(screened.hi) && screened.p > 0.01);
}

/* Two cells with ratios 1.1 and 1.21 (geometric mean 1.1537) and log-symmetric intervals whose
 * standard errors are 0.05 each: combined se = sqrt(2 * 0.05^2) / 2 = 0.03536. */
static void test_geomean(void **state) {
        (void) state;
        double z = 1.959963985;
        Comparison a = { .ratio = 1.1, .lo = 1.1 * exp(-z * 0.05), .hi = 1.1 * exp(z * 0.05) };
        Comparison b = { .ratio = 1.21, .lo = 1.21 * exp(-z * 0.05), .hi = 1.21 * exp(z * 0.05) };
        const Comparison *both[] = { &a, &b };
        double mean, lo, hi;
        assert_int_equal(compare_geomean(both, 2, 0.95, &mean, &lo, &hi), 0);
        assert_true(fabs(mean - sqrt(1.1 * 1.21)) < 1e-9);
        assert_true(fabs(log(hi / mean) - z * 0.0353553) < 1e-5 &&
                    fabs(log(mean / lo) - z * 0.0353553) < 1e-5);
        assert_int_equal(compare_geomean(both, 1, 0.95, &mean, &lo, &hi), 0);
        assert_true(mean == 1.1 && lo == a.lo && hi == a.hi);
        assert_int_equal(compare_geomean(both, 0, 0.95, &mean, &lo, &hi), -EINVAL);
}

static int cmp_values(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

/* The selection finds what sorting finds: random arrays of every size up to 300, with and
 * without ties, at several levels. */
static void test_percentile_interval(void **state) {
        (void) state;
        uint64_t rng = 7;
        for (size_t n = 1; n <= 300; n++)
                for (int ties = 0; ties < 2; ties++) {
                        double v[300], sorted[300];
                        for (size_t i = 0; i < n; i++)
                                v[i] = sorted[i] = (double) (rng_next(&rng) % (ties ? 7 : 1000000));
                        qsort(sorted, n, sizeof(double), cmp_values);
                        const double level = n % 3 == 0 ? 0.95 : n % 3 == 1 ? 0.5 : 0.99;
                        double tail = (1 - level) / 2, lo, hi;
                        size_t a = (size_t) floor(tail * (double) (n - 1)),
                               b = (size_t) ceil((1 - tail) * (double) (n - 1));
                        compare_percentile_interval(v, n, level, &lo, &hi);
                        assert_true(lo == sorted[a]);
                        assert_true(hi == sorted[b < n ? b : n - 1]);
                }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_mann_whitney),   cmocka_unit_test(test_mann_whitney_large),
                cmocka_unit_test(test_wilcoxon),       cmocka_unit_test(test_smallest_p),
                cmocka_unit_test(test_bootstrap),      cmocka_unit_test(test_outliers),
                cmocka_unit_test(test_verdict),        cmocka_unit_test(test_paired_verdict),
                cmocka_unit_test(test_order_interval), cmocka_unit_test(test_screened),
                cmocka_unit_test(test_geomean),        cmocka_unit_test(test_percentile_interval),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
