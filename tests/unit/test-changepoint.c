/* SPDX-License-Identifier: MIT */
/*
 * Change points of a series (stats/changepoint.c): a level shift is found once, against the runs
 * before it, and becomes the new baseline; the pool is at most CHANGEPOINT_WINDOW runs; a new
 * baseline (another host or configuration) is not compared and cuts the pool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stats/changepoint.h"

#define N 12 /* values per run */

/* Run i's values: level times 1 + a small spread that differs from run to run. */
static void fill(double *v, size_t i, double level) {
        for (size_t k = 0; k < N; k++)
                v[k] = level * (1 + 0.001 * (double) ((k * 7 + i * 3) % 11));
}

static void series(const double *levels, const bool *new_baseline, size_t n, ChangePoint *ret) {
        double values[16][N];
        ChangePointRun runs[16];
        assert_true(n <= 16);
        for (size_t i = 0; i < n; i++) {
                fill(values[i], i, levels[i]);
                runs[i] = (ChangePointRun){ .values = values[i],
                                            .n = N,
                                            .new_baseline = new_baseline && new_baseline[i],
                                            .seed = 42,
                                            .min_effect = 0.02,
                                            .alpha = 0.01 };
        }
        assert_int_equal(changepoint_find(runs, n, ret), 0);
}

static void test_level_shift(void **state) {
        (void) state;
        const double levels[] = { 100, 100, 100, 150, 150, 150 };
        ChangePoint p[6];
        series(levels, NULL, 6, p);
        assert_int_equal(p[0].baseline_runs, 0); /* nothing before it */
        for (size_t i = 1; i < 3; i++)
                assert_int_equal(p[i].change, VERDICT_SAME);
        assert_int_equal(p[3].change, VERDICT_HIGHER);
        assert_int_equal(p[3].baseline_runs, 3);
        assert_int_equal(p[3].baseline_from, 0);
        assert_true(p[3].against.ratio > 1.45 && p[3].against.ratio < 1.55);
        /* the shift is the new baseline: the runs after it are steady against it alone */
        assert_int_equal(p[4].change, VERDICT_SAME);
        assert_int_equal(p[4].baseline_from, 3);
        assert_int_equal(p[5].baseline_runs, 2);
        assert_true(p[4].lo <= p[4].median && p[4].median <= p[4].hi);
        assert_true(p[4].median > 149 && p[4].median < 152);
}

static void test_window_and_new_baseline(void **state) {
        (void) state;
        const double levels[] = { 100, 100, 100, 100, 100, 100, 100, 70, 70 };
        const bool cut[] = { false, false, false, false, false, false, false, true, false };
        ChangePoint p[9];
        series(levels, cut, 9, p);
        assert_int_equal(p[6].baseline_runs, CHANGEPOINT_WINDOW);
        assert_int_equal(p[6].baseline_from, 6 - CHANGEPOINT_WINDOW);
        /* a new baseline is not compared, however different, and the pool restarts there */
        assert_int_equal(p[7].baseline_runs, 0);
        assert_int_equal(p[7].change, VERDICT_SAME);
        assert_int_equal(p[8].baseline_runs, 1);
        assert_int_equal(p[8].baseline_from, 7);
        assert_int_equal(p[8].change, VERDICT_SAME);
}

static void test_improvement(void **state) {
        (void) state;
        const double levels[] = { 100, 100, 80 };
        ChangePoint p[3];
        series(levels, NULL, 3, p);
        assert_int_equal(p[2].change, VERDICT_LOWER);
        assert_int_equal(p[2].baseline_runs, 2);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_level_shift),
                cmocka_unit_test(test_window_and_new_baseline),
                cmocka_unit_test(test_improvement),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
