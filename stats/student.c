/* SPDX-License-Identifier: MIT */
/*
 * Student's t through the regularized incomplete beta function, evaluated by its continued
 * fraction (Lentz's method): P(|T| > t) = I_{df / (df + t^2)}(df / 2, 1 / 2).
 */
#include <math.h>

#include "stats/student.h"

/* The continued fraction of the regularized incomplete beta function (modified Lentz). */
static double beta_fraction(double a, double b, double x) {
        const double tiny = 1e-300;
        double c = 1, d = 1 - (a + b) * x / (a + 1);
        d = 1 / (fabs(d) < tiny ? tiny : d);
        double h = d;
        for (int m = 1; m <= 300; m++) {
                double even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
                double odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
                for (int step = 0; step < 2; step++) {
                        double coefficient = step ? odd : even;
                        d = 1 + coefficient * d;
                        c = 1 + coefficient / c;
                        d = 1 / (fabs(d) < tiny ? tiny : d);
                        c = fabs(c) < tiny ? tiny : c;
                        h *= d * c;
                }
                if (fabs(d * c - 1) < 1e-15)
                        break;
        }
        return h;
}

/* I_x(a, b). */
static double incomplete_beta(double a, double b, double x) {
        if (x <= 0)
                return 0;
        if (x >= 1)
                return 1;
        double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
        if (x < (a + 1) / (a + b + 2))
                return front * beta_fraction(a, b, x) / a;
        return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double student_p(double t, double df) {
        return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

double student_quantile(double alpha, double df) {
        /* Bracket it by doubling, then bisect to a relative 1e-10: ~40 evaluations, not 200. */
        double lo = 0, hi = 1;
        while (student_p(hi, df) > alpha && hi < 1e12)
                lo = hi, hi *= 2;
        while (hi - lo > 1e-10 * hi) {
                double mid = (lo + hi) / 2;
                if (student_p(mid, df) > alpha)
                        lo = mid;
                else
                        hi = mid;
        }
        return (lo + hi) / 2;
}
