/* SPDX-License-Identifier: MIT */
/*
 * The median sampler (stats/median-sampler.c) against the bootstrap it replaces: for small
 * samples every one of the n^n resamples is enumerated and its median taken, which gives the
 * exact bootstrap distribution of the median. The sampler's table of the lower middle order
 * statistic's position must equal it to rounding, and its draws (seeded: the test is the same
 * every time) must match the whole distribution, the upper middle of even samples and ties
 * included, within five standard errors.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stats/median-sampler.h"
#include "stats/stats.h"

#define MAX_N 7
#define DRAWS 400000

/* The distinct medians of a distribution and their probabilities. */
typedef struct Outcomes {
        double median[MAX_N * MAX_N];
        double p[MAX_N * MAX_N];
        size_t n;
} Outcomes;

static void add(Outcomes *o, double median, double p) {
        for (size_t i = 0; i < o->n; i++)
                if (o->median[i] == median) {
                        o->p[i] += p;
                        return;
                }
        assert_true(o->n < MAX_N * MAX_N);
        o->median[o->n] = median;
        o->p[o->n++] = p;
}

static int cmp_size(const void *a, const void *b) {
        size_t x = *(const size_t *) a, y = *(const size_t *) b;
        return (x > y) - (x < y);
}

/* Every resample of sorted[0..n) (n base-n digits) with its median, and how often the lower
 * middle of the resample sits at each position j = 1..n. */
static void enumerate(const double *sorted, size_t n, Outcomes *ret, double *lower_at) {
        *ret = (Outcomes){};
        size_t total = 1;
        for (size_t i = 0; i < n; i++)
                total *= n;
        memset(lower_at, 0, (n + 1) * sizeof(double));
        for (size_t code = 0; code < total; code++) {
                size_t positions[MAX_N], c = code;
                for (size_t i = 0; i < n; i++, c /= n)
                        positions[i] = c % n;
                qsort(positions, n, sizeof(size_t), cmp_size);
                double resample[MAX_N];
                for (size_t i = 0; i < n; i++)
                        resample[i] = sorted[positions[i]];
                add(ret, stats_median_sorted(resample, n), 1.0 / (double) total);
                lower_at[positions[(n + 1) / 2 - 1] + 1] += 1.0 / (double) total;
        }
}

static MedianSampler sampler(const double *sorted, size_t n) {
        double *copy = malloc(n * sizeof(double));
        assert_non_null(copy);
        memcpy(copy, sorted, n * sizeof(double));
        MedianSampler s;
        assert_int_equal(median_sampler_init(&s, copy, n), 0);
        return s;
}

static void check(const double *sorted, size_t n) {
        Outcomes exact, drawn = {};
        double lower_at[MAX_N + 1];
        enumerate(sorted, n, &exact, lower_at);
        MedianSampler s = sampler(sorted, n);

        /* The table: P(the lower middle at or below j) = 1 - below[j]. */
        double cumulative = 0;
        for (size_t j = 1; j <= n; j++) {
                cumulative += lower_at[j];
                assert_float_equal(1 - s.below[j], cumulative, 1e-12);
                assert_float_equal(s.above[j], cumulative, 1e-12);
        }

        uint64_t rng = 42;
        for (size_t i = 0; i < DRAWS; i++)
                add(&drawn, median_sampler_draw(&s, &rng), 1.0 / DRAWS);
        for (size_t i = 0; i < drawn.n; i++) {
                bool possible = false;
                for (size_t e = 0; e < exact.n; e++)
                        possible |= exact.median[e] == drawn.median[i];
                if (!possible)
                        fail_msg("n=%zu: drew %g, which no resample has as its median", n, drawn.median[i]);
        }
        for (size_t e = 0; e < exact.n; e++) {
                double p = exact.p[e], seen = 0;
                for (size_t i = 0; i < drawn.n; i++)
                        if (drawn.median[i] == exact.median[e])
                                seen = drawn.p[i];
                double error = 5 * sqrt(p * (1 - p) / DRAWS) + 1e-9;
                if (fabs(seen - p) > error)
                        fail_msg("n=%zu: median %g drawn %.5f of the time, the bootstrap's %.5f", n,
                                 exact.median[e], seen, p);
        }
        median_sampler_done(&s);
}

/* Distinct values whose pairwise means are distinct too (powers of two): every pair of middle
 * positions is its own outcome. */
static void test_distinct(void **state) {
        (void) state;
        double sorted[MAX_N];
        for (size_t n = 1; n <= MAX_N; n++) {
                for (size_t i = 0; i < n; i++)
                        sorted[i] = ldexp(1, (int) i);
                check(sorted, n);
        }
}

static void test_ties(void **state) {
        (void) state;
        const double six[] = { 1, 1, 2, 3, 3, 3 }, seven[] = { 5, 5, 5, 5, 6, 7, 7 },
                     same[] = { 4, 4, 4, 4 };
        check(six, 6);
        check(seven, 7);
        check(same, 4);
}

/* A large sample: every draw is one of its values or the mean of two, near the middle. */
static void test_large(void **state) {
        (void) state;
        enum { N = 5000 };
        double *sorted = malloc(N * sizeof(double));
        assert_non_null(sorted);
        for (size_t i = 0; i < N; i++)
                sorted[i] = (double) i;
        MedianSampler s;
        assert_int_equal(median_sampler_init(&s, sorted, N), 0);
        for (size_t j = 1; j <= N; j++) {
                assert_true(s.below[j] <= s.below[j - 1]);
                assert_float_equal(s.below[j] + s.above[j], 1, 1e-12);
        }
        uint64_t rng = 7;
        double sum = 0;
        for (size_t i = 0; i < 20000; i++) {
                double m = median_sampler_draw(&s, &rng);
                assert_true(m >= 0 && m <= N - 1 && m * 2 == floor(m * 2));
                sum += m;
        }
        /* The resampled median's mean is the middle, give or take its spread / sqrt(draws). */
        assert_float_equal(sum / 20000, (N - 1) / 2.0, 2);
        median_sampler_done(&s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_distinct),
                cmocka_unit_test(test_ties),
                cmocka_unit_test(test_large),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
