/* SPDX-License-Identifier: MIT */
#pragma once

/* Student's t distribution: the two-sided p of a statistic t with df degrees of freedom (df > 0),
 * and the t whose two-sided p is alpha (0 < alpha < 1). */
double student_p(double t, double df);
double student_quantile(double alpha, double df);
