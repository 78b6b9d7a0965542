/* SPDX-License-Identifier: MIT */
/*
 * Machines as the unit (stats/pool.c): the geometric mean and its t interval over machines, and
 * Cochran's Q with its p, against values worked by hand.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stats/pool.h"

/* A machine whose log ratio is log_ratio with standard error se (a 95% interval of +-1.96 se). */
static MachineRatio machine(double log_ratio, double se) {
        return (MachineRatio){ .ratio = exp(log_ratio),
                               .lo = exp(log_ratio - 1.959964 * se),
                               .hi = exp(log_ratio + 1.959964 * se),
                               .level = 0.95 };
}

static void test_disagree(void **state) {
        (void) state;
        /* 1.00 and 1.20, each +-2%: the t interval over two machines (t 12.706) is wide, and Q
         * = 2 (ln 1.2 / 2)^2 / se^2 says they disagree. */
        MachineRatio m[] = { machine(0, 0.0102), machine(log(1.2), 0.0102) };
        PooledRatio p;
        assert_int_equal(pool_machine_ratios(m, 2, 0.95, &p), 0);
        assert_int_equal(p.k, 2);
        assert_true(fabs(p.geomean - sqrt(1.2)) < 1e-12);
        double half = 12.7062047 * (log(1.2) / 2);
        assert_true(fabs(p.lo - exp(log(1.2) / 2 - half)) < 1e-6);
        assert_true(fabs(p.hi - exp(log(1.2) / 2 + half)) < 1e-5);
        double q = 2 * pow(log(1.2) / 2, 2) / pow(0.0102, 2);
        assert_true(fabs(p.q - q) / q < 1e-6);
        assert_true(p.p < 1e-6);
        assert_true(fabs(p.i_squared - (q - 1) / q) < 1e-9);
}

static void test_agree(void **state) {
        (void) state;
        MachineRatio m[] = { machine(log(1.10), 0.02), machine(log(1.11), 0.02), machine(log(1.09), 0.02) };
        PooledRatio p;
        assert_int_equal(pool_machine_ratios(m, 3, 0.95, &p), 0);
        assert_true(p.p > 0.5);
        assert_true(p.i_squared == 0);
        assert_true(p.lo < 1.10 && p.hi > 1.10);
}

/* Chi-square's upper tail at its 5% points: Q = 3.841 with 1 df, 5.991 with 2. */
static void test_chi_square(void **state) {
        (void) state;
        double d = sqrt(3.841459 * 2) * 0.01;
        MachineRatio two[] = { machine(0, 0.01), machine(d, 0.01) };
        PooledRatio p;
        assert_int_equal(pool_machine_ratios(two, 2, 0.95, &p), 0);
        assert_true(fabs(p.q - 3.841459) < 1e-3);
        assert_true(fabs(p.p - 0.05) < 0.005);
        /* three machines at -a, 0, +a: Q = 2 a^2 / se^2 = 5.991 */
        double a = sqrt(5.991465 / 2) * 0.01;
        MachineRatio three[] = { machine(-a, 0.01), machine(0, 0.01), machine(a, 0.01) };
        assert_int_equal(pool_machine_ratios(three, 3, 0.95, &p), 0);
        assert_true(fabs(p.q - 5.991465) < 1e-3);
        assert_true(fabs(p.p - 0.05) < 0.005);
}

static void test_edges(void **state) {
        (void) state;
        MachineRatio one[] = { machine(log(1.3), 0.01) };
        PooledRatio p;
        assert_int_equal(pool_machine_ratios(one, 1, 0.95, &p), 0);
        assert_true(fabs(p.geomean - 1.3) < 1e-12);
        assert_true(isnan(p.lo) && isnan(p.q));
        /* intervals of width 0 (every sample equal): equal ratios agree, others disagree */
        MachineRatio flat[] = { { 1.2, 1.2, 1.2, 0.95 }, { 1.2, 1.2, 1.2, 0.95 } };
        assert_int_equal(pool_machine_ratios(flat, 2, 0.95, &p), 0);
        assert_true(p.q == 0 && p.p == 1);
        flat[1] = (MachineRatio){ 1.0, 1.0, 1.0, 0.95 };
        assert_int_equal(pool_machine_ratios(flat, 2, 0.95, &p), 0);
        assert_true(p.p < 1e-6);
        MachineRatio bad[] = { { 0, 0, 1, 0.95 } };
        assert_int_equal(pool_machine_ratios(bad, 1, 0.95, &p), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_disagree),
                cmocka_unit_test(test_agree),
                cmocka_unit_test(test_chi_square),
                cmocka_unit_test(test_edges),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
