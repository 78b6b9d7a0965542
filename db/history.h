/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"
#include "stats/changepoint.h"

/*
 * An experiment's history: per cell and variant, the median of one metric in each run with its
 * distribution-free interval, and change points found on the series of run medians
 * (stats/changepoint.h): a run out of line with the earlier runs' medians (their spread counted),
 * confirmed by the next run (docs/analysis.md).
 */

#define HISTORY_WINDOW       CHANGEPOINT_WINDOW /* earlier runs a run is checked against */
#define HISTORY_DEFAULT_RUNS 20                 /* runs `alloclab history` and the daemon's check read */

typedef enum HistoryChange {
        HISTORY_STEADY,      /* no change point, or nothing to compare with yet */
        HISTORY_REGRESSION,  /* the values rose: slower, or more memory */
        HISTORY_IMPROVEMENT, /* the values fell */
} HistoryChange;

typedef struct HistoryPoint {
        int64_t run_id;
        char *started_at;
        char *hostname; /* the host it ran on; its series is its machine's */
        char *machine;
        size_t n;              /* measured samples */
        double median, lo, hi; /* the median and its 95% distribution-free interval */
        size_t baseline_runs;  /* earlier runs it was checked against; 0: not checked */
        int64_t baseline_from; /* the first of them (run id) */
        Comparison against;    /* against them, when baseline_runs > 0 (ChangePoint.against) */
        double spread;         /* the between-run spread of a median used (log sd) */
        bool outside;          /* out of line with the earlier runs */
        HistoryChange change;  /* at a change point: confirmed, or tentative (the last run) */
        bool tentative;
        int64_t confirmed_by; /* the run that confirmed the change point, or 0 */
        bool host_changed;    /* the host fingerprint differs from the previous point's: not compared,
                               * and the runs before it are not pooled for later points */
        char *env, *preload;  /* the variant's configuration in this run: env (JSON), allocator name */
        char *command;        /* ... and its command (JSON array) */
        char *config_change;  /* when it differs from the previous point's, what changed (then, as for
                               * host_changed, a new baseline); else NULL */
        char *label, *commit; /* the run's --label and --commit, or NULL */
        /* Built from source (spec build:): the variant's revision, "v2 (97f268e)": a history of
         * a branch runs along its commits. NULL for a variant that preloads a file. */
        char *revision;
        /* Relative (HistoryQuery.relative): the point is the median of the ratios of the
         * variant's value to the baseline variant's in the same round, cell and run (n: such
         * rounds), with its interval; this names that baseline and how it was set up, a change of
         * which is a config_change. Else NULL. */
        char *baseline_setup;
} HistoryPoint;

/* One cell and variant on one machine (runs.machine: its name, chosen with run --machine or
 * the daemon's machine:, else the host name): the runs of other machines interleave in time but
 * never in a series, and never in its change-point baseline. */
typedef struct HistorySeries {
        char *cell;
        char *variant;
        char *machine;
        HistoryPoint *points; /* oldest first; runs without measured samples are absent */
        size_t n_points;
} HistorySeries;

typedef struct History {
        char *experiment;
        char *metric;
        size_t n_runs;      /* runs read */
        size_t n_pruned;    /* of them, runs alloclab prune left their metric's values only (db/prune.h) */
        int64_t latest_run; /* the last of them */
        HistorySeries *series;
        size_t n_series;
        bool many_machines; /* the series are of more than one machine */
        char *relative_to;  /* relative: the latest run's baseline variant; else NULL */
        /* More of the metric is better (the latest run's spec metrics: better: higher): a
         * higher value is then an improvement, a lower one a regression. */
        bool higher_is_better;
        char *unit; /* the unit the spec gives the metric, or NULL for its own */
} History;

typedef struct HistoryQuery {
        const char *experiment;
        char *const *cells;  /* "name=value" filters a cell's parameters must all match; NULL: all */
        const char *variant; /* NULL: all */
        const char *metric;  /* NULL: the latest run's metric */
        size_t last;         /* the last N finished runs */
        int64_t until_run;   /* only runs up to this id (0: all) */
        /* Each point from its run's stored median (the stats table) instead of its samples:
         * what the change points and the spread need, a point's interval then the median
         * alone (compare reads every series this way). */
        bool medians_only;
        /* Each variant's series as its ratio to the baseline variant within each run, round by
         * round (the baseline's own series left out): a ratio of two values measured side by
         * side, which a machine that speeds up or slows down moves far less than a median. */
        bool relative;
} HistoryQuery;

/* Returns 0, -ENOENT when the experiment has no finished run, -EINVAL for a malformed cell
 * filter, -ENOMEM, -EIO. */
int query_history(Store *s, const HistoryQuery *q, History **ret);
History *history_free(History *h);
static inline void history_freep(History **h) {
        history_free(*h);
}

/* How much a run's median varies between runs of the experiment on one host, pooled over its
 * series (stats/changepoint.h, changepoint_pool_spread): the deviations of each series' log
 * medians from their mean between new baselines and confirmed change points. */
typedef struct HistorySpread {
        double spread; /* log sd of a run's median */
        double df;     /* its degrees of freedom, the prior's included */
        size_t runs;   /* runs of the longest series it was estimated from (0: the prior alone) */
} HistorySpread;

/* The spread from h's series on host (medians, or with HistoryQuery.relative the within-run
 * ratios), leaving out the points of run skip_run. Returns 0 or -ENOMEM. */
int history_spread(const History *h, const char *machine, int64_t skip_run, HistorySpread *ret);

/* "regression", "improvement" or NULL. */
const char *history_change_word(HistoryChange c);
