/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/*
 * Descriptive statistics of one (cell, variant, metric) series. Pure functions.
 */

typedef struct Stats {
        size_t n;
        double median;
        double mad; /* median absolute deviation from the median, unscaled */
        double mean;
        double stddev; /* sample standard deviation (n - 1); 0 when n < 2 */
        double min;
        double max;
} Stats;

/*
 * Computes the statistics of values[0..n). The array is sorted in place. n == 0 yields
 * n = 0 and zeros. Returns 0 or -ENOMEM.
 */
int stats_compute(double *values, size_t n, Stats *ret);

/* values[0..n) in ascending order. */
void stats_sort(double *values, size_t n);

/* Median of an already sorted array (n > 0). */
double stats_median_sorted(const double *sorted, size_t n);

/* The standard error of the median of n values whose median absolute deviation is mad, in their
 * unit: 1.2533 sqrt(pi / 2) times the normal sigma 1.4826 mad over sqrt(n); 0 when n is 0. A
 * robust figure of how far a run's median could lie from its truth. */
double stats_median_se(double mad, size_t n);
