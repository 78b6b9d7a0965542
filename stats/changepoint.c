/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stats/changepoint.h"
#include "stats/sampleset.h"
#include "util/cleanup.h"

int changepoint_find(const ChangePointRun *runs, size_t n, ChangePoint *ret) {
        size_t since = 0; /* the first run after the last change point or new baseline */
        _cleanup_free_ double *pool = NULL;
        for (size_t i = 0; i < n; i++) {
                ChangePoint *p = &ret[i];
                *p = (ChangePoint){ .change = VERDICT_SAME };
                SampleSet set = { .values = (double *) runs[i].values, .n = runs[i].n }; /* only read */
                int r = sampleset_median_interval(&set, &p->median, &p->lo, &p->hi);
                if (r < 0)
                        return r;
                if (runs[i].new_baseline) {
                        since = i;
                        continue;
                }
                size_t from = i > since + CHANGEPOINT_WINDOW ? i - CHANGEPOINT_WINDOW : since, n_pool = 0;
                for (size_t j = from; j < i; j++)
                        n_pool += runs[j].n;
                if (n_pool == 0)
                        continue;
                free(pool);
                if (!(pool = malloc(n_pool * sizeof(double))))
                        return -ENOMEM;
                n_pool = 0;
                for (size_t j = from; j < i; j++) {
                        memcpy(pool + n_pool, runs[j].values, runs[j].n * sizeof(double));
                        n_pool += runs[j].n;
                }
                r = compare_screen_to_baseline(pool, n_pool, runs[i].values, runs[i].n, runs[i].seed,
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
