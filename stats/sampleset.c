/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/sampleset.h"
#include "util/cleanup.h"

int sampleset_outliers(SampleSet *s, bool exclude, Stats *stats) {
        _cleanup_free_ bool *flags = malloc((s->n ? s->n : 1) * sizeof(bool));
        int n = flags ? compare_outliers(s->values, s->n, flags) : -ENOMEM;
        if (n <= 0 || !exclude)
                return n;
        /* The stored statistics keep every sample: this only changes what is shown and compared. */
        size_t kept = 0;
        for (size_t i = 0; i < s->n; i++)
                if (!flags[i]) {
                        s->values[kept] = s->values[i];
                        s->rounds[kept] = s->rounds[i];
                        kept++;
                }
        s->n = kept;
        _cleanup_free_ double *copy = malloc((kept ? kept : 1) * sizeof(double));
        if (!copy)
                return -ENOMEM;
        memcpy(copy, s->values, kept * sizeof(double));
        int r = stats_compute(copy, kept, stats);
        return r < 0 ? r : n;
}

int sampleset_median_interval(const SampleSet *s, double *ret_lo, double *ret_hi) {
        _cleanup_free_ double *sorted = malloc((s->n ? s->n : 1) * sizeof(double));
        if (!sorted)
                return -ENOMEM;
        memcpy(sorted, s->values, s->n * sizeof(double));
        stats_sort(sorted, s->n);
        compare_median_order_interval(sorted, s->n, COMPARE_LEVEL, ret_lo, ret_hi);
        return 0;
}

size_t sampleset_round_ratios(const SampleSet *base, const SampleSet *x, double *ret) {
        size_t n = 0;
        for (size_t i = 0, j = 0; i < base->n && j < x->n;) {
                if (base->rounds[i] < x->rounds[j])
                        i++;
                else if (base->rounds[i] > x->rounds[j])
                        j++;
                else {
                        if (base->values[i] > 0)
                                ret[n++] = x->values[j] / base->values[i];
                        i++, j++;
                }
        }
        return n;
}

int sampleset_round_ratio(const SampleSet *base, const SampleSet *x, double *ret, double *ret_se) {
        _cleanup_free_ double *ratios = malloc((x->n ? x->n : 1) * sizeof(double));
        if (!ratios)
                return -ENOMEM;
        size_t n = sampleset_round_ratios(base, x, ratios);
        if (n == 0)
                return -ENODATA;
        stats_sort(ratios, n);
        *ret = stats_median_sorted(ratios, n);
        Stats logs;
        for (size_t i = 0; i < n; i++)
                ratios[i] = log(ratios[i]);
        if (stats_compute(ratios, n, &logs) < 0)
                return -ENOMEM;
        *ret_se = stats_median_se(logs.mad, n);
        return 0;
}

SampleDesign sampleset_design(const char *order) {
        return strcmp(order, "blocked") == 0      ? SAMPLE_BLOCKS
               : strcmp(order, "sequential") == 0 ? SAMPLE_INDEPENDENT
                                                  : SAMPLE_ROUNDS;
}

bool sampleset_paired(const SampleSet *base, const SampleSet *x, SampleDesign design,
                      const CompareRule *rule) {
        if (design != SAMPLE_ROUNDS || base->n != x->n || !compare_pairs(x->n, rule))
                return false;
        return memcmp(base->rounds, x->rounds, x->n * sizeof(int64_t)) == 0;
}

int sampleset_compare(const SampleSet *base, const SampleSet *x, SampleDesign design,
                      const CompareRule *rule, Comparison *ret) {
        if (design == SAMPLE_BLOCKS)
                return compare_ratio_only(base->values, base->n, x->values, x->n, ret);
        if (sampleset_paired(base, x, design, rule))
                return compare_paired(base->values, x->values, x->n, rule, ret);
        return compare_independent(base->values, base->n, x->values, x->n, rule, ret);
}

void sampleset_pareto_front(const double *cost, const double *rss, const bool *eligible, size_t n,
                            bool *ret_front) {
        for (size_t i = 0; i < n; i++) {
                ret_front[i] = eligible[i];
                for (size_t j = 0; j < n && ret_front[i]; j++) {
                        if (j == i || !eligible[j])
                                continue;
                        bool no_worse = cost[j] <= cost[i] && rss[j] <= rss[i];
                        bool better = cost[j] < cost[i] || rss[j] < rss[i];
                        ret_front[i] = !(no_worse && better);
                }
        }
}
