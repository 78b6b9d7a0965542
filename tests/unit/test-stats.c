/* SPDX-License-Identifier: MIT */
/*
 * Descriptive statistics against values computed by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stats/stats.h"

static void test_odd(void **state) {
        (void) state;
        /* sorted: 1 2 3 4 100; median 3; |x-3| = 2 1 0 1 97 -> sorted 0 1 1 2 97 -> MAD 1;
         * mean 22; deviations -21 -20 -19 -18 78, squares 441+400+361+324+6084 = 7610,
         * variance 7610/4 = 1902.5, stddev 43.6176... */
        double v[] = { 4, 100, 1, 3, 2 };
        Stats s;
        assert_int_equal(stats_compute(v, 5, &s), 0);
        assert_int_equal(s.n, 5);
        assert_float_equal(s.median, 3, 1e-12);
        assert_float_equal(s.mad, 1, 1e-12);
        assert_float_equal(s.mean, 22, 1e-12);
        assert_float_equal(s.stddev, 43.617656975128, 1e-9);
        assert_float_equal(s.min, 1, 0);
        assert_float_equal(s.max, 100, 0);
}

static void test_even(void **state) {
        (void) state;
        /* sorted 0.1 0.2 0.4 0.8: median 0.3; deviations 0.2 0.1 0.1 0.5 -> 0.1 0.1 0.2 0.5 ->
         * MAD 0.15; mean 0.375 */
        double v[] = { 0.8, 0.1, 0.4, 0.2 };
        Stats s;
        assert_int_equal(stats_compute(v, 4, &s), 0);
        assert_float_equal(s.median, 0.3, 1e-12);
        assert_float_equal(s.mad, 0.15, 1e-12);
        assert_float_equal(s.mean, 0.375, 1e-12);
        assert_float_equal(s.stddev, 0.309569593899, 1e-9);
}

static void test_single_and_empty(void **state) {
        (void) state;
        double one[] = { 7.5 };
        Stats s;
        assert_int_equal(stats_compute(one, 1, &s), 0);
        assert_float_equal(s.median, 7.5, 0);
        assert_float_equal(s.mad, 0, 0);
        assert_float_equal(s.stddev, 0, 0);
        assert_int_equal(stats_compute(NULL, 0, &s), 0);
        assert_int_equal(s.n, 0);
}

static void test_precision(void **state) {
        (void) state;
        /* Large offset, tiny spread: the naive sum-of-squares formula loses this entirely. */
        double v[] = { 1e9 + 1, 1e9 + 2, 1e9 + 3 };
        Stats s;
        assert_int_equal(stats_compute(v, 3, &s), 0);
        assert_float_equal(s.stddev, 1.0, 1e-9);
        assert_float_equal(s.mean, 1e9 + 2, 1e-6);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_odd),
                cmocka_unit_test(test_even),
                cmocka_unit_test(test_single_and_empty),
                cmocka_unit_test(test_precision),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
