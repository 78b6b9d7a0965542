/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>

#include "stats/pool.h"
#include "stats/student.h"

/* The standard normal's upper quantile of p (0.975 -> 1.96): bisection on erfc, enough here. */
static double normal_upper(double p) {
        double lo = -10, hi = 10;
        for (int i = 0; i < 100; i++) {
                double mid = (lo + hi) / 2;
                if (0.5 * erfc(-mid / M_SQRT2) < p)
                        lo = mid;
                else
                        hi = mid;
        }
        return (lo + hi) / 2;
}

/* P(X >= q) for X chi-square with df degrees of freedom, by Wilson and Hilferty's cube root
 * (within 0.01 of the exact p for df >= 1 where it matters, near 0.05 and below). */
static double chi_square_upper(double q, double df) {
        if (q <= 0)
                return 1;
        double v = 2 / (9 * df), z = (cbrt(q / df) - (1 - v)) / sqrt(v);
        return 0.5 * erfc(z / M_SQRT2);
}

/* A machine's weight: 1 / its log ratio's variance, the standard error read off its own
 * interval; one of width 0 is given a floor of 1e-6 (0.0001%): machines that measured without
 * any spread and differ disagree. */
static double weight(const MachineRatio *m) {
        double se = (log(m->hi) - log(m->lo)) / (2 * normal_upper(1 - (1 - m->level) / 2));
        return 1 / pow(fmax(se, 1e-6), 2);
}

int pool_machine_ratios(const MachineRatio *m, size_t k, double level, PooledRatio *ret) {
        *ret = (PooledRatio){
                .k = k, .geomean = NAN, .lo = NAN, .hi = NAN, .q = NAN, .p = NAN, .i_squared = NAN
        };
        double sum = 0;
        for (size_t i = 0; i < k; i++) {
                if (!(m[i].ratio > 0) || !isfinite(m[i].ratio) || !(m[i].lo > 0) || !isfinite(m[i].hi) ||
                    !(m[i].level > 0 && m[i].level < 1))
                        return -EINVAL;
                sum += log(m[i].ratio);
        }
        if (k == 0)
                return 0;
        double mean = sum / (double) k;
        ret->geomean = exp(mean);
        if (k < 2)
                return 0;
        double ss = 0;
        for (size_t i = 0; i < k; i++)
                ss += (log(m[i].ratio) - mean) * (log(m[i].ratio) - mean);
        double half =
                student_quantile(1 - level, (double) (k - 1)) * sqrt(ss / (double) (k - 1) / (double) k);
        ret->lo = exp(mean - half);
        ret->hi = exp(mean + half);
        double w_sum = 0, wy_sum = 0;
        for (size_t i = 0; i < k; i++) {
                w_sum += weight(&m[i]);
                wy_sum += weight(&m[i]) * log(m[i].ratio);
        }
        double pooled = wy_sum / w_sum, q = 0;
        for (size_t i = 0; i < k; i++)
                q += weight(&m[i]) * (log(m[i].ratio) - pooled) * (log(m[i].ratio) - pooled);
        double df = (double) (k - 1);
        ret->q = q;
        ret->p = chi_square_upper(q, df);
        ret->i_squared = q > df ? (q - df) / q : 0;
        return 0;
}
