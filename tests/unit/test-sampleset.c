/* SPDX-License-Identifier: MIT */
/*
 * A measured set (stats/sampleset.c): outliers counted and, when asked, left out with their
 * rounds and the statistics recomputed; the median's interval; pairing by round only when
 * measured side by side with the same rounds and enough of them; the Pareto front.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stats/sampleset.h"

static void test_outliers(void **state) {
        (void) state;
        double values[] = { 10, 10.1, 9.9, 10.05, 50, 9.95, 10.02 };
        int64_t rounds[] = { 0, 1, 2, 3, 4, 5, 6 };
        SampleSet s = { values, rounds, 7 };
        Stats st = {};
        assert_int_equal(sampleset_outliers(&s, false, &st), 1);
        assert_int_equal(s.n, 7); /* counted, kept */
        assert_int_equal(sampleset_outliers(&s, true, &st), 1);
        assert_int_equal(s.n, 6);
        assert_int_equal(s.rounds[4], 5); /* the rounds moved with their values */
        assert_float_equal(s.values[4], 9.95, 0);
        assert_int_equal(st.n, 6);
        assert_true(st.max < 11);
}

static void test_median_interval(void **state) {
        (void) state;
        double few[] = { 3, 1, 2 };
        int64_t r[20] = {};
        SampleSet s = { few, r, 3 };
        double lo, hi;
        assert_int_equal(sampleset_median_interval(&s, &lo, &hi), 0);
        assert_float_equal(lo, 1, 0); /* fewer than 6: [min, max] */
        assert_float_equal(hi, 3, 0);
        assert_float_equal(few[0], 3, 0); /* the set itself is not reordered */
        double many[20];
        for (int i = 0; i < 20; i++)
                many[i] = 20 - i;
        s = (SampleSet){ many, r, 20 };
        assert_int_equal(sampleset_median_interval(&s, &lo, &hi), 0);
        assert_true(lo > 1 && lo <= 10.5 && hi >= 10.5 && hi < 20);
}

static void test_pairing(void **state) {
        (void) state;
        double a[12], b[12];
        int64_t ra[12], rb[12];
        for (int i = 0; i < 12; i++) {
                a[i] = 100 + i;
                b[i] = 90 + i;
                ra[i] = rb[i] = i;
        }
        SampleSet base = { a, ra, 12 }, x = { b, rb, 12 };
        const CompareRule rule = {
                .min_effect = 0.02, .alpha = 0.01, .correction = CORRECTION_NONE, .tests = 1
        };
        assert_true(sampleset_paired(&base, &x, SAMPLE_ROUNDS, &rule));
        assert_false(sampleset_paired(&base, &x, SAMPLE_BLOCKS, &rule)); /* blocked order: nothing pairs */
        /* An import's sequential samples share round numbers that were never rounds. */
        assert_false(sampleset_paired(&base, &x, SAMPLE_INDEPENDENT, &rule));
        rb[11] = 12; /* a gap on one side */
        assert_false(sampleset_paired(&base, &x, SAMPLE_ROUNDS, &rule));
        rb[11] = 11;
        SampleSet short_x = { b, rb, COMPARE_MIN_PAIRS - 1 }, short_base = { a, ra, COMPARE_MIN_PAIRS - 1 };
        assert_false(sampleset_paired(&short_base, &short_x, SAMPLE_ROUNDS, &rule));
        /* 12 rounds shared by 16 comparisons: the signed-rank test could not reach 0.01 / 16 / 4. */
        const CompareRule shared = {
                .min_effect = 0.02, .alpha = 0.01, .correction = CORRECTION_HOLM, .tests = 16
        };
        assert_false(sampleset_paired(&base, &x, SAMPLE_ROUNDS, &shared));

        Comparison c;
        assert_int_equal(sampleset_compare(&base, &x, SAMPLE_ROUNDS, &rule, &c), 0);
        assert_int_equal(c.test, COMPARE_TEST_SIGNED_RANK);
        compare_decide(&c, &rule);
        assert_int_equal(c.verdict, VERDICT_LOWER);
        assert_int_equal(sampleset_compare(&base, &x, SAMPLE_ROUNDS, &shared, &c), 0);
        assert_int_equal(c.test, COMPARE_TEST_RANK_SUM);
        assert_int_equal(sampleset_compare(&base, &x, SAMPLE_INDEPENDENT, &rule, &c), 0);
        assert_int_equal(c.test, COMPARE_TEST_RANK_SUM);
        assert_int_equal(sampleset_compare(&base, &x, SAMPLE_BLOCKS, &rule, &c), 0);
        assert_int_equal(c.test, COMPARE_TEST_NONE);
        assert_int_equal(sampleset_design("interleaved"), SAMPLE_ROUNDS);
        assert_int_equal(sampleset_design("randomized"), SAMPLE_ROUNDS);
        assert_int_equal(sampleset_design("sequential"), SAMPLE_INDEPENDENT);
        assert_int_equal(sampleset_design("blocked"), SAMPLE_BLOCKS);
}

/* The median of the rounds' ratios: only rounds on both sides, a baseline value of 0 skipped, and
 * a machine twice as slow in some rounds (both sides alike) leaves it where it is, while the
 * ratio of the medians moves. */
static void test_round_ratio(void **state) {
        (void) state;
        double base[] = { 10, 20, 20, 20, 0, 10 }, x[] = { 11, 22, 22, 99, 11, 11 };
        int64_t rb[] = { 1, 2, 3, 4, 5, 6 }, rx[] = { 1, 2, 3, 7, 5, 6 };
        SampleSet b = { base, rb, 6 }, v = { x, rx, 6 };
        double ratio, se;
        assert_int_equal(sampleset_round_ratio(&b, &v, &ratio, &se), 0);
        assert_true(se >= 0 && se < 1e-12);     /* the four ratios are equal */
        assert_true(fabs(ratio - 1.1) < 1e-12); /* rounds 1, 2, 3, 6: round 4 and 7 alone, 5 of 0 */
        SampleSet none = { x, (int64_t[]){ 8, 9, 10, 11, 12, 13 }, 6 };
        assert_int_equal(sampleset_round_ratio(&b, &none, &ratio, &se), -ENODATA);
}

static void test_pareto_front(void **state) {
        (void) state;
        /* 0 fast and big, 1 slow and small, 2 beaten by 0 in both, 3 the same as 0, 4 not eligible
         * though best */
        double wall[] = { 1, 3, 2, 1, 0.5 }, rss[] = { 10, 5, 12, 10, 1 };
        bool eligible[] = { true, true, true, true, false }, front[5];
        sampleset_pareto_front(wall, rss, eligible, 5, front);
        assert_true(front[0]);
        assert_true(front[1]);
        assert_false(front[2]);
        assert_true(front[3]); /* equal in both: neither beats the other */
        assert_false(front[4]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_outliers),     cmocka_unit_test(test_median_interval),
                cmocka_unit_test(test_pairing),      cmocka_unit_test(test_round_ratio),
                cmocka_unit_test(test_pareto_front),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
