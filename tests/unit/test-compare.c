/* SPDX-License-Identifier: MIT */
/*
 * Comparison statistics against brute force: the rank statistics' null distributions against
 * enumerating every arrangement; the Hodges-Lehmann ratio and its interval against listing and
 * sorting every pairwise ratio (or Walsh average); the test against the interval it inverts;
 * the ability to decide over a grid of sample counts and levels, with real comparisons; the four
 * verdicts, the corrections for many comparisons, and two runs' medians by Student's t.
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

#include "stats/compare.h"
#include "stats/ranks.h"
#include "stats/sampleset.h"
#include "stats/student.h"
#include "util/rng.h"

static const CompareRule rule_01 = {
        .min_effect = 0.02, .alpha = 0.01, .correction = CORRECTION_NONE, .tests = 1
};

static int cmp_values(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

/* The rank-sum null by enumerating which m of m + n positions are the first sample's: U counts
 * the pairs (first, second) with the first one later. */
static void brute_rank_sum(size_t m, size_t n, double *cdf) {
        size_t counts[200] = { 0 }, total = 0;
        for (unsigned mask = 0; mask < 1u << (m + n); mask++) {
                if ((size_t) __builtin_popcount(mask) != m)
                        continue;
                size_t u = 0, seen_second = 0;
                for (size_t i = 0; i < m + n; i++) {
                        if (mask & 1u << i)
                                u += seen_second;
                        else
                                seen_second++;
                }
                counts[u]++;
                total++;
        }
        for (size_t t = 0, running = 0; t <= m * n; t++)
                cdf[t] = (double) (running += counts[t]) / (double) total;
}

static void test_rank_null(void **state) {
        (void) state;
        for (size_t m = 1; m <= 7; m++)
                for (size_t n = 1; n <= 7; n++) {
                        double cdf[64];
                        RankNull r;
                        brute_rank_sum(m, n, cdf);
                        assert_int_equal(rank_null_rank_sum(&r, m, n), 0);
                        for (size_t t = 0; t <= m * n; t++)
                                assert_true(fabs(rank_null_cdf(&r, t) - cdf[t]) < 1e-12);
                        rank_null_done(&r);
                }
        for (size_t n = 1; n <= 12; n++) { /* signed-rank: every subset of ranks 1..n is positive */
                size_t counts[100] = { 0 };
                for (unsigned mask = 0; mask < 1u << n; mask++) {
                        size_t sum = 0;
                        for (size_t i = 0; i < n; i++)
                                sum += mask & 1u << i ? i + 1 : 0;
                        counts[sum]++;
                }
                RankNull r;
                assert_int_equal(rank_null_signed_rank(&r, n), 0);
                for (size_t t = 0, running = 0; t <= n * (n + 1) / 2; t++)
                        assert_true(fabs(rank_null_cdf(&r, t) -
                                         (double) (running += counts[t]) / (double) (1u << n)) < 1e-12);
                rank_null_done(&r);
        }
        /* Textbook smallest p: 3 vs 3 fully apart 2 / 20, 5 vs 5 2 / 252, 10 pairs 2 / 1024. */
        RankNull r;
        assert_int_equal(rank_null_rank_sum(&r, 3, 3), 0);
        assert_float_equal(rank_null_smallest_p(&r), 0.1, 1e-12);
        rank_null_done(&r);
        assert_int_equal(rank_null_rank_sum(&r, 5, 5), 0);
        assert_float_equal(rank_null_smallest_p(&r), 2.0 / 252, 1e-12);
        rank_null_done(&r);
        assert_int_equal(rank_null_signed_rank(&r, 10), 0);
        assert_float_equal(rank_null_smallest_p(&r), 2.0 / 1024, 1e-12);
        rank_null_done(&r);
        /* Past the exact range, the normal approximation: symmetric about its mean. */
        assert_int_equal(rank_null_rank_sum(&r, 40, 40), 0);
        assert_null(r.cdf);
        assert_float_equal(rank_null_cdf(&r, 800) + rank_null_cdf(&r, 799), 1, 1e-9);
        rank_null_done(&r);
}

/* The k-th smallest (1-based) of every ratio x[j] / base[i], or of every geometric mean of two
 * paired ratios (i <= j), listed and sorted. */
static double brute_kth(const double *base, size_t nb, const double *x, size_t nx, bool walsh, size_t k) {
        static double all[4096];
        size_t n = 0;
        if (walsh) {
                double r[64];
                for (size_t i = 0; i < nx; i++)
                        r[i] = x[i] / base[i];
                for (size_t i = 0; i < nx; i++)
                        for (size_t j = i; j < nx; j++)
                                all[n++] = sqrt(r[i] * r[j]);
        } else {
                for (size_t i = 0; i < nb; i++)
                        for (size_t j = 0; j < nx; j++)
                                all[n++] = x[j] / base[i];
        }
        qsort(all, n, sizeof(double), cmp_values);
        return all[k - 1];
}

/* Random samples with and without ties, of every size up to 12 (paired: up to 30): the ratio is
 * the median of the listed ratios, the interval their order statistics at the rank the null
 * distribution gives, and p < alpha exactly when the interval excludes 1. */
static void test_hodges_lehmann(void **state) {
        (void) state;
        uint64_t rng = 11;
        const double alphas[] = { 0.05, 0.01, 0.001 };
        for (int round = 0; round < 400; round++) {
                bool paired = round % 2, ties = round % 3 == 0;
                size_t nb = 1 + rng_next(&rng) % (paired ? 30 : 12),
                       nx = paired ? nb : 1 + rng_next(&rng) % 12;
                double base[64], x[64], shift = 1 + (double) (rng_next(&rng) % 5) * 0.05;
                for (size_t i = 0; i < nb; i++)
                        base[i] = ties ? 10 + (double) (rng_next(&rng) % 4)
                                       : 10 + (double) (rng_next(&rng) % 100000) / 10000;
                for (size_t j = 0; j < nx; j++)
                        x[j] = shift * (ties ? 10 + (double) (rng_next(&rng) % 4)
                                             : 10 + (double) (rng_next(&rng) % 100000) / 10000);
                const CompareRule rule = { .min_effect = 0.02,
                                           .alpha = alphas[round % 3],
                                           .correction = CORRECTION_NONE,
                                           .tests = 1 };
                Comparison c;
                RankNull null;
                size_t pairs = paired ? nb * (nb + 1) / 2 : nb * nx;
                if (paired) {
                        assert_int_equal(compare_paired(base, x, nb, &rule, &c), 0);
                        assert_int_equal(rank_null_signed_rank(&null, nb), 0);
                } else {
                        assert_int_equal(compare_independent(base, nb, x, nx, &rule, &c), 0);
                        assert_int_equal(rank_null_rank_sum(&null, nb, nx), 0);
                }
                double low = brute_kth(base, nb, x, nx, paired, (pairs + 1) / 2),
                       high = brute_kth(base, nb, x, nx, paired, pairs / 2 + 1);
                double median = pairs % 2 ? low : sqrt(low * high);
                assert_true(fabs(c.ratio - median) <= 1e-12 * median);
                size_t k = rank_null_bound(&null, rule.alpha / 2);
                if (k > 0) {
                        assert_true(c.lo == brute_kth(base, nb, x, nx, paired, k));
                        assert_true(c.hi == brute_kth(base, nb, x, nx, paired, pairs + 1 - k));
                } else {
                        assert_true(c.lo == 0 && isinf(c.hi));
                }
                assert_true(c.lo <= c.ratio && c.ratio <= c.hi);
                assert_true((c.p < rule.alpha) == (c.lo > 1 || c.hi < 1));
                rank_null_done(&null);
        }
}

/* The ratio of fully separated samples is exact where the values allow it, and zeros (a reported
 * metric) are compared by differences, as a fraction of the baseline's median. */
static void test_exact_ratio(void **state) {
        (void) state;
        double ten[8] = { 10, 10, 10, 10, 10, 10, 10, 10 }, twenty[8] = { 20, 20, 20, 20, 20, 20, 20, 20 };
        Comparison c;
        assert_int_equal(compare_to_baseline(ten, 8, twenty, 8, &rule_01, &c), 0);
        assert_true(c.ratio == 2 && c.lo == 2 && c.hi == 2);
        assert_float_equal(c.p, 2.0 / 12870, 1e-15); /* 2 / C(16, 8) */
        assert_int_equal(c.verdict, VERDICT_HIGHER);
        double with_zero[5] = { 0, 1, 2, 3, 4 }, plus_one[5] = { 1, 2, 3, 4, 5 };
        assert_int_equal(compare_independent(with_zero, 5, plus_one, 5, &rule_01, &c), 0);
        assert_float_equal(c.ratio, 1.5, 1e-12); /* a shift of 1 on a median of 2 */
        double zeros[3] = { 0, 0, 0 };
        assert_int_equal(compare_independent(zeros, 3, plus_one, 5, &rule_01, &c), -EINVAL);
        assert_int_equal(compare_independent(ten, 0, twenty, 8, &rule_01, &c), -EINVAL);
}

/* Whether n values per variant can decide, over the grid of the issue: alpha 0.05, 0.01 and
 * 0.001, n from 3 to 30, alone or shared by 16 comparisons, in rounds or not. If some n can, so
 * can every larger n; and real comparisons of samples fully apart decide exactly then. */
static void test_decidable_grid(void **state) {
        (void) state;
        const double alphas[] = { 0.05, 0.01, 0.001 };
        for (size_t a = 0; a < 3; a++)
                for (size_t tests = 1; tests <= 16; tests += 15)
                        for (int rounds = 0; rounds < 2; rounds++) {
                                CompareRule rule = { .min_effect = 0.02,
                                                     .alpha = alphas[a],
                                                     .correction =
                                                             tests > 1 ? CORRECTION_HOLM : CORRECTION_NONE,
                                                     .tests = tests };
                                bool could = false;
                                for (size_t n = 3; n <= 30; n++) {
                                        bool can = compare_can_decide(n, rounds, &rule);
                                        assert_true(can || !could);
                                        could = can;
                                        double base[30], x[30];
                                        int64_t r[30];
                                        for (size_t i = 0; i < n; i++) {
                                                base[i] = 100 + (double) ((i * 7) % n);
                                                x[i] = 1.5 * base[i] + (double) ((i * 3) % 5);
                                                r[i] = (int64_t) i;
                                        }
                                        SampleSet sb = { base, r, n }, sx = { x, r, n };
                                        Comparison c;
                                        assert_int_equal(
                                                sampleset_compare(&sb, &sx,
                                                                  rounds ? SAMPLE_ROUNDS : SAMPLE_BLOCKS,
                                                                  &rule, &c),
                                                0);
                                        if (!rounds) /* blocked: no test */
                                                continue;
                                        /* The smallest p the design gives, for data fully apart. */
                                        assert_true(
                                                fabs(c.p - compare_smallest_p(
                                                                   n, c.test == COMPARE_TEST_SIGNED_RANK)) <
                                                1e-12 * c.p);
                                        assert_true((c.p < compare_test_alpha(&rule)) == can);
                                }
                                assert_true(could);
                                assert_int_equal(compare_can_decide(compare_samples_needed(rounds, &rule),
                                                                    rounds, &rule),
                                                 true);
                        }
        /* The textbook counts: 5 at 0.01, 7 at 0.001, 4 at 0.05; 10 rounds pair at 0.01. */
        CompareRule r = rule_01;
        assert_int_equal(compare_samples_needed(true, &r), 5);
        assert_true(compare_pairs(10, &r));
        r.alpha = 0.001;
        assert_int_equal(compare_samples_needed(true, &r), 7);
        assert_false(compare_pairs(10, &r)); /* 2 / 1024 > 0.001: the rank-sum test keeps deciding */
        r.alpha = 0.05;
        assert_int_equal(compare_samples_needed(false, &r), 4);
}

static void test_four_verdicts(void **state) {
        (void) state;
        double base[20], slower[20], near[20], noisy[20];
        for (int i = 0; i < 20; i++) {
                base[i] = 100 + (i * 7) % 20 * 0.01;
                slower[i] = 110 + (i * 3) % 20 * 0.01;
                near[i] = 100.5 + (i * 11) % 20 * 0.01; /* significant, and within 2% */
                noisy[i] = 100 * (1 + 0.25 * ((i * 13) % 20 - 9.5) / 10);
        }
        Comparison c;
        assert_int_equal(compare_to_baseline(base, 20, slower, 20, &rule_01, &c), 0);
        assert_int_equal(c.verdict, VERDICT_HIGHER);
        assert_string_equal(verdict_word(c.verdict, true), "slower");
        assert_int_equal(compare_to_baseline(slower, 20, base, 20, &rule_01, &c), 0);
        assert_int_equal(c.verdict, VERDICT_LOWER);
        assert_string_equal(verdict_word(c.verdict, true), "faster");
        assert_int_equal(compare_to_baseline(base, 20, near, 20, &rule_01, &c), 0);
        assert_true(c.p < 0.01);
        assert_int_equal(c.verdict, VERDICT_SAME);
        assert_true(c.lo >= 0.98 && c.hi <= 1.02);
        assert_string_equal(verdict_word(c.verdict, false), "same");
        /* 25% noise: neither a difference nor within 2%; what could be seen is stated. */
        assert_int_equal(compare_to_baseline(base, 20, noisy, 20, &rule_01, &c), 0);
        assert_int_equal(c.verdict, VERDICT_INCONCLUSIVE);
        assert_string_equal(verdict_mark(c.verdict, true), "~");
        assert_string_equal(verdict_word(c.verdict, true), "inconclusive");
        assert_true(isfinite(c.detectable) && c.detectable > 0.02);
        /* Three values can decide nothing at 0.01: nothing is detectable. */
        assert_int_equal(compare_to_baseline(base, 3, slower, 3, &rule_01, &c), 0);
        assert_int_equal(c.verdict, VERDICT_INCONCLUSIVE);
        assert_true(isinf(c.detectable));
        /* Blocked: a ratio and nothing else. */
        assert_int_equal(compare_ratio_only(base, 20, slower, 20, &c), 0);
        assert_int_equal(c.test, COMPARE_TEST_NONE);
        assert_true(isnan(c.lo) && isnan(c.p) && c.ratio > 1.09);
        assert_string_equal(comparison_test(&c), "none");
        compare_decide(&c, &rule_01);
        assert_int_equal(c.verdict, VERDICT_INCONCLUSIVE);
}

/* Rounds drift by 20% each, the variant is 5% above the baseline in every round: the
 * independent test drowns in the drift, the paired one sees all 10 rounds agree (p = 2 / 2^10). */
static void test_paired(void **state) {
        (void) state;
        double base[10], x[10];
        for (int i = 0; i < 10; i++) {
                base[i] = 100 + 20 * i;
                x[i] = base[i] * 1.05;
        }
        Comparison c;
        assert_int_equal(compare_to_baseline(base, 10, x, 10, &rule_01, &c), 0);
        assert_int_equal(c.verdict, VERDICT_INCONCLUSIVE);
        assert_int_equal(compare_paired(base, x, 10, &rule_01, &c), 0);
        compare_decide(&c, &rule_01);
        assert_string_equal(comparison_test(&c), "wilcoxon");
        assert_int_equal(c.verdict, VERDICT_HIGHER);
        assert_float_equal(c.p, 2.0 / 1024, 1e-12);
        assert_true(fabs(c.lo - 1.05) < 1e-9 && fabs(c.hi - 1.05) < 1e-9);
        assert_int_equal(compare_paired(base, base, 10, &rule_01, &c), 0);
        compare_decide(&c, &rule_01);
        assert_int_equal(c.verdict, VERDICT_SAME);
        assert_true(c.p == 1);
}

static void test_corrections(void **state) {
        (void) state;
        const double p[] = { 0.01, 0.04, 0.03, 0.005 };
        const double holm[] = { 0.03, 0.06, 0.06, 0.02 }, bh[] = { 0.02, 0.04, 0.04, 0.02 };
        Comparison c[5];
        Comparison *family[5];
        for (int k = 0; k < 3; k++) {
                for (int i = 0; i < 4; i++) {
                        c[i] = (Comparison){ .p = p[i], .test = COMPARE_TEST_RANK_SUM };
                        family[i] = &c[i];
                }
                c[4] = (Comparison){ .p = NAN, .test = COMPARE_TEST_NONE }; /* not a test: not counted */
                family[4] = &c[4];
                Correction correction = k == 0 ? CORRECTION_HOLM : k == 1 ? CORRECTION_BH : CORRECTION_NONE;
                /* At 0.05 Holm rejects 2 of 4 (their intervals agree at 0.05 / (4 - 2)), BH all 4
                 * (at 4 * 0.05 / 4); none leaves 0.05. */
                double level = compare_correct(family, 5, correction, 0.05);
                assert_float_equal(level, k == 0 ? 0.025 : 0.05, 1e-15);
                for (int i = 0; i < 4; i++)
                        assert_float_equal(c[i].p_adjusted, k == 0 ? holm[i] : k == 1 ? bh[i] : p[i], 1e-12);
        }
        assert_string_equal(correction_to_string(CORRECTION_BH), "bh");
        assert_int_equal(correction_from_string("holm"), CORRECTION_HOLM);
        assert_int_equal(correction_from_string("bonferroni"), -1);
        /* A per-test level: alpha / tests under a correction. */
        CompareRule r = { .alpha = 0.01, .correction = CORRECTION_HOLM, .tests = 48 };
        assert_float_equal(compare_test_alpha(&r), 0.01 / 48, 1e-15);
}

typedef struct Samples {
        double base[16][12], x[16][12];
} Samples;

static int recompare(void *userdata, size_t i, const CompareRule *rule, Comparison *ret) {
        Samples *s = userdata;
        return compare_independent(s->base[i], 12, s->x[i], 12, rule, ret);
}

/* A family of 16 comparisons of real data, some shifted by up to 6%, decided as one: under
 * every correction a difference is declared exactly where the interval excludes 1, and the
 * intervals are no narrower than the uncorrected ones. */
static void test_family_agrees(void **state) {
        (void) state;
        uint64_t rng = 5;
        for (int round = 0; round < 60; round++) {
                Samples s;
                Comparison c[16], alone[16];
                Comparison *family[16];
                CompareRule rule = {
                        .min_effect = 0, .alpha = 0.05, .correction = (Correction) (round % 3), .tests = 16
                };
                for (size_t i = 0; i < 16; i++) {
                        double shift = 1 + (double) (rng_next(&rng) % 4) * 0.02;
                        for (size_t k = 0; k < 12; k++) {
                                s.base[i][k] = 100 + (double) (rng_next(&rng) % 1000) / 100;
                                s.x[i][k] = shift * (100 + (double) (rng_next(&rng) % 1000) / 100);
                        }
                        assert_int_equal(recompare(&s, i, &rule, &c[i]), 0);
                        alone[i] = c[i];
                        family[i] = &c[i];
                }
                assert_int_equal(compare_family(family, 16, &rule, recompare, &s), 0);
                for (size_t i = 0; i < 16; i++) {
                        bool differs = c[i].verdict == VERDICT_LOWER || c[i].verdict == VERDICT_HIGHER;
                        assert_true(differs == (c[i].lo > 1 || c[i].hi < 1));
                        assert_true(differs == (c[i].p_adjusted < rule.alpha));
                        assert_true(c[i].lo <= alone[i].lo && c[i].hi >= alone[i].hi);
                        assert_true(c[i].p == alone[i].p && c[i].p_adjusted >= c[i].p);
                }
        }
}

/* Two runs' medians: t = log(1.1) / (0.02 sqrt 2) = 3.37 with 10 degrees of freedom. */
static void test_run_medians(void **state) {
        (void) state;
        Comparison c;
        assert_int_equal(compare_run_medians(100, 110, 0.02, 10, &rule_01, &c), 0);
        assert_float_equal(c.ratio, 1.1, 1e-12);
        assert_float_equal(c.p, student_p(log(1.1) / (0.02 * M_SQRT2), 10), 1e-12);
        assert_true(c.p > 0.005 && c.p < 0.01);
        double reach = student_quantile(0.01, 10) * 0.02 * M_SQRT2;
        assert_float_equal(c.lo, 1.1 * exp(-reach), 1e-12);
        assert_true((c.p < 0.01) == (c.lo > 1));
        assert_string_equal(comparison_test(&c), "runs-t");
        assert_int_equal(compare_run_medians(0, 110, 0.02, 10, &rule_01, &c), -EINVAL);
        /* Student's t against table values. */
        assert_float_equal(student_quantile(0.05, 10), 2.228139, 1e-5);
        assert_float_equal(student_quantile(0.01, 6), 3.707428, 1e-5);
        assert_float_equal(student_p(2.228139, 10), 0.05, 1e-6);
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
        assert_int_equal(compare_outliers(flat, 4, flags), 1); /* MAD 0: what differs by 0.1% stands out */
        assert_true(flags[3]);
        double counted[] = { 29225075, 29225075, 29225062, 29225075, 29225075 }; /* instructions */
        assert_int_equal(compare_outliers(counted, 5, flags), 0);
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
        /* A cell without a bound leaves the mean without one; a cell without a test, none. */
        Comparison open = { .ratio = 1.2, .lo = 0, .hi = INFINITY };
        const Comparison *with_open[] = { &a, &open };
        assert_int_equal(compare_geomean(with_open, 2, 0.95, &mean, &lo, &hi), 0);
        assert_true(lo == 0 && isinf(hi));
        Comparison none = { .ratio = 1.2, .lo = NAN, .hi = NAN, .test = COMPARE_TEST_NONE };
        const Comparison *with_none[] = { &a, &none };
        assert_int_equal(compare_geomean(with_none, 2, 0.95, &mean, &lo, &hi), 0);
        assert_true(isnan(lo) && isnan(hi));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rank_null),      cmocka_unit_test(test_hodges_lehmann),
                cmocka_unit_test(test_exact_ratio),    cmocka_unit_test(test_decidable_grid),
                cmocka_unit_test(test_four_verdicts),  cmocka_unit_test(test_paired),
                cmocka_unit_test(test_corrections),    cmocka_unit_test(test_family_agrees),
                cmocka_unit_test(test_run_medians),    cmocka_unit_test(test_outliers),
                cmocka_unit_test(test_order_interval), cmocka_unit_test(test_geomean),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
