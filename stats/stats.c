/* SPDX-License-Identifier: MIT */
/*
 * Order statistics on small arrays: sort, pick. The mean and variance use Welford's update so
 * that nanosecond-scale values summed over thousands of samples keep their precision.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stats/stats.h"
#include "util/cleanup.h"

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

void stats_sort(double *values, size_t n) {
        size_t i = 1;
        while (i < n && values[i - 1] <= values[i])
                i++;
        if (i < n) /* sorted input (history's runs, sorted once) costs one pass */
                qsort(values, n, sizeof(double), cmp_double);
}

double stats_median_sorted(const double *sorted, size_t n) {
        return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

double stats_median_se(double mad, size_t n) {
        return n ? 1.2533 * 1.4826 * mad / sqrt((double) n) : 0;
}

int stats_compute(double *values, size_t n, Stats *ret) {
        *ret = (Stats){ .n = n };
        if (n == 0)
                return 0;
        stats_sort(values, n);
        ret->min = values[0];
        ret->max = values[n - 1];
        ret->median = stats_median_sorted(values, n);

        double mean = 0, m2 = 0;
        for (size_t i = 0; i < n; i++) {
                double d = values[i] - mean;
                mean += d / (double) (i + 1);
                m2 += d * (values[i] - mean);
        }
        ret->mean = mean;
        ret->stddev = n > 1 ? sqrt(m2 / (double) (n - 1)) : 0;

        _cleanup_free_ double *dev = malloc(n * sizeof(double));
        if (!dev)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                dev[i] = fabs(values[i] - ret->median);
        qsort(dev, n, sizeof(double), cmp_double);
        ret->mad = stats_median_sorted(dev, n);
        return 0;
}
