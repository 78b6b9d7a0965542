/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stats/changepoint.h"
#include "stats/stats.h"
#include "util/cleanup.h"

/* Merges ascending a[0..na) and b[0..nb) into ascending to[0..na + nb). */
static void merge(const double *a, size_t na, const double *b, size_t nb, double *to) {
        size_t i = 0, j = 0, k = 0;
        while (i < na && j < nb)
                to[k++] = b[j] < a[i] ? b[j++] : a[i++];
        memcpy(to + k, a + i, (na - i) * sizeof(double));
        memcpy(to + k + (na - i), b + j, (nb - j) * sizeof(double));
}

/*
 * Each run's values are sorted once, and a pool is the merge of its runs' sorted values: the
 * comparison gets both sides sorted and sorts neither again (the order of values does not
 * change an independent comparison).
 */
int changepoint_find(const ChangePointRun *runs, size_t n, ChangePoint *ret) {
        size_t total = 0, widest = 1; /* widest: the most values CHANGEPOINT_WINDOW runs hold */
        for (size_t i = 0, window = 0; i < n; i++) {
                total += runs[i].n;
                window += runs[i].n - (i >= CHANGEPOINT_WINDOW ? runs[i - CHANGEPOINT_WINDOW].n : 0);
                widest = window > widest ? window : widest;
        }
        _cleanup_free_ double *sorted = malloc((total ? total : 1) * sizeof(double));
        _cleanup_free_ size_t *start = malloc((n ? n : 1) * sizeof(size_t)); /* of run i in sorted */
        /* A pool, and the merge that grows it by one run. */
        _cleanup_free_ double *pool = malloc(widest * sizeof(double));
        _cleanup_free_ double *merged = malloc(widest * sizeof(double));
        if (!sorted || !start || !pool || !merged)
                return -ENOMEM;
        for (size_t i = 0, at = 0; i < n; at += runs[i++].n) {
                start[i] = at;
                memcpy(sorted + at, runs[i].values, runs[i].n * sizeof(double));
                stats_sort(sorted + at, runs[i].n);
        }
        size_t since = 0; /* the first run after the last change point or new baseline */
        for (size_t i = 0; i < n; i++) {
                ChangePoint *p = &ret[i];
                *p = (ChangePoint){ .change = VERDICT_SAME };
                const double *values = sorted + start[i];
                p->median = stats_median_sorted(values, runs[i].n);
                compare_median_order_interval(values, runs[i].n, COMPARE_LEVEL, &p->lo, &p->hi);
                if (runs[i].new_baseline) {
                        since = i;
                        continue;
                }
                size_t from = i > since + CHANGEPOINT_WINDOW ? i - CHANGEPOINT_WINDOW : since, n_pool = 0;
                if (from == i)
                        continue;
                for (size_t j = from; j < i; j++) {
                        merge(pool, n_pool, sorted + start[j], runs[j].n, merged);
                        n_pool += runs[j].n;
                        double *t = pool;
                        pool = merged;
                        merged = t;
                }
                int r = compare_screen_to_baseline(pool, n_pool, values, runs[i].n, runs[i].seed,
                                                   runs[i].min_effect, runs[i].alpha, &p->against);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                p->baseline_runs = i - from;
                p->baseline_from = from;
                p->change = p->against.verdict;
                if (p->change != VERDICT_SAME)
                        since = i;
        }
        return 0;
}
