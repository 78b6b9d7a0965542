/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "db/store.h"
#include "runner/allocator-stats.h"
#include "runner/run.h"
#include "stats/compare.h"
#include "stats/stats.h"

/*
 * Reading history. Everything the CLI shows about a past run comes from here, so a run printed
 * right after it finished and the same run shown a month later look the same.
 */

#define QUERY_MAX_FAILURES 100 /* failed samples listed per run; the rest are counted */

typedef struct RunSummary {
        int64_t id;
        char *experiment;
        char *status;
        char *started_at;
        char *ended_at; /* NULL while running */
        char *hostname;
        char *machine; /* the machine name it is filed under (run --machine; else hostname) */
        /* When alloclab prune dropped its measured samples (db/prune.h), or NULL */
        char *pruned_at;
        char *metric;
        int64_t n_runs, n_failures, n_excluded;
        int64_t n_cells, n_variants;
        char *uuid;           /* the run's name in every database (its id is this one's) */
        char *label, *commit; /* run --label and --commit, or NULL */
        /* The primary metric's direction and unit (spec metrics): more is better (a throughput;
         * else less, a cost); the unit its values are shown in, or NULL for the metric's own. */
        bool higher_is_better;
        char *metric_unit;
} RunSummary;

/* A variant's start-up cost (spec calibrate): wall time of the null workload under it. */
typedef struct ReportStartup {
        double *values; /* seconds, ascending */
        size_t n;
        double median, lo, hi; /* median and its order-statistic 95% interval; NAN when n = 0 */
} ReportStartup;

/* A figure of a cell and variant beside the primary metric: its median over the samples. */
typedef struct ReportFigure {
        char *metric;
        double median;
        int64_t n;
} ReportFigure;

/* One (cell, variant) of a run, for the primary metric. */
typedef struct ReportEntry {
        bool has_stats;
        Stats stats;
        int64_t n_failed;         /* failed runs of any phase (smoke, warmup, sample) */
        int64_t n_failed_samples; /* of them, measured samples */
        char *first_failure;      /* "signal 11", "mismatch", ... of the first failed sample */
        char *excluded_reason;    /* or NULL */
        double *values;           /* the measured samples of the primary metric, in round order */
        int64_t *rounds;          /* the round of each value */
        size_t n_values;
        bool has_median_ci;               /* measured values: the median's interval below */
        double median_lo, median_hi;      /* order-statistic 95% interval of the median */
        int64_t n_quiet_checked, n_noisy; /* measured samples the quiet guard checked / found busy */
        int64_t n_noisy_steal;            /* of those, busy mostly with the hypervisor's steal */
        int64_t n_noisy_others;           /* of those, other processes took a quarter CPU or more */
        int64_t n_skipped_busy;           /* of those, not run (on_busy: skip) */
        size_t n_outliers;                /* values whose modified z-score exceeds COMPARE_OUTLIER_Z: kept in
                                           * values and stats, or with Report.exclude_outliers removed from both */
        bool has_comparison;              /* against the baseline of the cell: both sides measured */
        Comparison comparison;
        /* The time/memory trade-off: median wall time and median peak RSS (whatever the metric),
         * and whether no other measured variant of the cell is at least as good in both and
         * better in one (the Pareto front, of Report.front_by_metric and peak RSS). */
        bool has_tradeoff;
        double wall_median, maxrss_median;
        bool pareto;
        /* From the smoke run under the probe (has_smoke_peaks): the peak of the bytes the program
         * had asked for and not freed (the denominator of the memory overhead, render-figures.h;
         * -1 from a probe too old to track it), and of their usable sizes. */
        bool has_smoke_peaks;
        /* A program of the smoke run's tree that ran without the probe, or NULL: then nothing
         * counted there (peaks, calls) describes the tree, and has_smoke_peaks stays false. */
        char *smoke_unprobed;
        int64_t smoke_peak_requested, smoke_peak_live_bytes;
        /* Processes of the smoke run's tree that held at least a quarter of that peak at their
         * exit: more than one, and a single process's peak RSS is not the tree's */
        int64_t smoke_large_processes;
        /* Processes of that tree that called the allocator */
        int64_t smoke_allocating_processes;
        /* The smoke run's outermost allocator calls (malloc family, C++ new and delete) and its
         * wall time (has_smoke_calls: the probe counted them). */
        bool has_smoke_calls;
        int64_t smoke_calls;
        double smoke_wall_s;
        /* A program of the smoke run's tree that serves allocations from a layer of its own
         * (options_own_layer(): CPython without PYTHONMALLOC=malloc), or NULL. */
        char *own_layer_program;
        /* The smoke run's memory at exit (has_exit_memory): summed over the probed processes that
         * exited normally (exit_memory_processes of them), from each one's smaps_rollup: resident,
         * anonymous (its proportional share) and anonymous in transparent huge pages, bytes. */
        bool has_exit_memory;
        int64_t exit_memory_processes, exit_rss_bytes, exit_pss_anon_bytes, exit_anon_huge_bytes;
        int64_t exit_tree_processes; /* the smoke run's tree had this many (distinct pids) */
        /* The smoke run's allocator statistics at exit (runner/allocator-stats.h), where read */
        bool has_allocator_figures;
        AllocatorFigures allocator_figures;
        /* memory_timeline's figures (runner/timeline.h), medians over the samples in bytes:
         * mem_peak_bytes, mem_mean_bytes, mem_last_bytes, then mem_at_PHASE_bytes in the order of
         * the phases; none without a timeline */
        ReportFigure *memory_figures;
        size_t n_memory_figures;
} ReportEntry;

typedef struct ReportFailure {
        char *cell;
        char *variant;
        char *phase;
        int64_t round;
        char *status;
        char *detail; /* human-readable, e.g. "killed by signal 11 (Segmentation fault)" */
        char *stderr_excerpt;
} ReportFailure;

typedef struct Report {
        RunSummary run;
        char *spec_path;
        char *order;
        int64_t samples, warmup; /* with samples_min > 0 (samples: auto), samples is the most */
        int64_t samples_min;     /* samples: auto: the fewest a cell ran before it could stop; 0: fixed */
        uint64_t seed;
        char *verify;
        char *verify_ignore; /* spec verify_ignore: a JSON array of the patterns, or NULL */
        char *metric_defs;   /* spec metrics: {NAME: {better, unit}} as JSON (runs.metric_defs), or NULL */
        char *message;
        char *kernel, *cpu_model, *glibc, *thp;
        int64_t cpus;
        double min_effect, alpha; /* the verdicts' rule (docs/analysis.md) */
        Correction correction;    /* ... over the run's comparisons */
        size_t n_tests;           /* comparisons that share alpha under the correction */
        /* Cells whose verified output (stdout, or the verify file) was empty in every sample that
         * ran: each matched the reference, but nothing was compared. 0 with verify none. */
        size_t n_cells_nothing_verified;
        double interval_alpha;          /* the comparisons' intervals are at 1 - this (compare_family) */
        bool exclude_outliers;          /* spec outliers: exclude; the entries' figures leave them out */
        char *child_cpus, *runner_cpus; /* spec cpus: where children and alloclab ran, or NULL */
        char *cgroup,
                *cgroup_fallback; /* the run's cgroup, or why its children had none (runner/cgroup.h) */
        /* memory_timeline: where its samples' readings came from ("proc", "cgroup", or
         * "cgroup and proc" where the children's cgroup was not always there), and their period:
         * the spec's (min), and the longest between the readings kept of a long child whose
         * readings were thinned out (max); NULL: none */
        char *timeline_source;
        uint64_t timeline_period_min_ns, timeline_period_max_ns;
        size_t n_cells, n_variants;
        char **cell_labels;
        char **variant_names;
        char **allocator_names;
        char **allocator_versions;
        size_t baseline;
        size_t aa_variant;    /* the baseline's A/A copy (spec aa_check), or SIZE_MAX */
        ReportEntry *entries; /* n_cells x n_variants, cell-major */
        ReportFailure *failures;
        size_t n_failures_listed;
        char *calibrate_command; /* spec calibrate: the null workload as a JSON array, or NULL */
        char *counters; /* the event counters the run could open, and why not the others (runner/counters.h)
                         */
        /* "callgrind": the warm-ups and samples ran under valgrind's callgrind (metric: instructions
         * without a PMU), so their time, peak RSS and counters are valgrind's; else NULL */
        char *timed_under;
        ReportStartup *startup; /* per variant with calibrate_command, else NULL */
        /* The Pareto front's first axis: the report's metric (each entry's median, the better
         * way round: run.higher_is_better), else median wall time (the metric is wall, or peak
         * RSS itself, the front's other axis). */
        bool front_by_metric;
} Report;

/* The entry of a cell and variant. */
static inline const ReportEntry *report_entry(const Report *rep, size_t cell, size_t variant) {
        return &rep->entries[cell * rep->n_variants + variant];
}

/* The entry of the cell and variant so labelled and named, or NULL: where another run (another
 * machine's) has them. */
static inline const ReportEntry *report_entry_named(const Report *rep, const char *cell,
                                                    const char *variant) {
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++)
                        if (strcmp(rep->cell_labels[c], cell) == 0 &&
                            strcmp(rep->variant_names[v], variant) == 0)
                                return report_entry(rep, c, v);
        return NULL;
}

/* Runs, newest first; experiment may be NULL for all. Returns 0 and an array (caller frees
 * with query_runs_free), -EIO. */
int query_runs(Store *s, const char *experiment, size_t limit, RunSummary **ret, size_t *ret_n);
void query_runs_free(RunSummary *runs, size_t n);

/* A metric's direction and unit from a run's metric_defs (JSON, or NULL): more is better only
 * where the spec says so; *ret_unit NULL for the metric's own. Returns 0 or -ENOMEM. */
int query_metric_def(const char *defs, const char *metric, bool *ret_higher_is_better, char **ret_unit);

/* Everything needed to print a run's table, for one metric: NULL for the run's primary metric,
 * else a name query_run_metrics returns. Returns 0, -ENOENT when no such run, -EIO. */
int query_report(Store *s, int64_t run_id, const char *metric, Report **ret);

/* Decides the comparisons of reports[0..n) (each already compared with its baseline) as one
 * family under the first one's rule and correction: the corrected p-values, every interval again
 * at the family's level (compare_family), the verdicts; sets each report's n_tests (the
 * comparisons tested) and interval_alpha. `show` decides a run alone, the suite its runs
 * together. Returns 0 or -ENOMEM. */
int query_decide_family(Report *const *reports, size_t n);

/* query_report without the variants' comparisons with the run's baseline (has_comparison stays
 * false): the values and statistics that comparing two runs' medians (db/pair.c) needs. */
int query_report_values(Store *s, int64_t run_id, const char *metric, Report **ret);

/* The SQL expression of a built-in metric ("wall", "user", "sys", "maxrss") over `samples s`, in
 * the metric's unit (seconds, bytes); NULL for any other name. */
const char *query_builtin_metric_sql(const char *metric);

/* What is kept of run ?1's measured samples where it was pruned (db/prune.h), read as they are:
 * SELECT keys (over the pruned values `s`, with s.run_id, s.cell_id and s.variant_id, its cell
 * `c` and variant `v`), value, round WHERE the condition `where` ("" or " AND ...") holds, for
 * the values of metric. To be joined by UNION ALL to the query of the samples. NULL on ENOMEM;
 * caller frees with sqlite3_free. */
char *query_pruned_values_sql(const char *metric, const char *keys, const char *where);

/* The A/A noise floor of cell c: how far from 1 the interval of the baseline against its own
 * copy reaches, i.e. the smallest change these samples tell from noise; NAN without aa_check,
 * without that comparison (a Report read by query_report_values has none), or when that interval
 * is unbounded (too few samples for its level): no floor was measured. */
double query_noise_floor(const Report *rep, size_t c);

/* The metrics a run has statistics for: the primary first, then the built-in ones ("wall",
 * "user", "sys", "maxrss") and "reported:NAME" for the program's own. Returns 0 and a strv
 * (empty when the run has no statistics), -EIO. */
int query_run_metrics(Store *s, int64_t run_id, char ***ret);
Report *query_report_free(Report *r);
static inline void query_report_freep(Report **r) {
        query_report_free(*r);
}

/* A variant's allocator as recorded, with the probe's report of its first smoke run. */
typedef struct VariantAllocator {
        char *variant;
        char *allocator; /* catalog name or path */
        char *path;      /* preloaded file, "" for glibc */
        char *sha256;
        char *version;      /* package version */
        char *probe_report; /* JSON (runner/probe-json.h), or NULL when the run had no probe */
        char *build;        /* built from source: JSON (runner/build.h build_json()), or NULL */
} VariantAllocator;

/* Variants of a run in order. Returns 0 and an array (free with query_allocators_free), -EIO. */
int query_allocators(Store *s, int64_t run_id, VariantAllocator **ret, size_t *ret_n);

/* A cell and variant's memory_timeline, for the report's chart: the readings of its measured
 * sample whose time-weighted mean is the median of its samples'. */
typedef struct CellTimeline {
        size_t cell, variant;
        Timeline timeline;
} CellTimeline;

/* The run's, in cell and variant order (none without memory_timeline). Returns 0, -ENOMEM, -EIO,
 * -EBADMSG. */
int query_timelines(Store *s, int64_t run_id, CellTimeline **ret, size_t *ret_n);
void query_timelines_free(CellTimeline *list, size_t n);
void query_allocators_free(VariantAllocator *list, size_t n);

/* What a run to be resumed needs: its spec (verbatim), the seed and counts it ran with. */
typedef struct ResumeInfo {
        char *spec_path;
        char *spec_yaml;
        char *status;
        uint64_t seed;
        unsigned samples, warmup;
        char *hostname;
        char *host_fingerprint; /* NULL for runs recorded before fingerprints (schema 10) */
} ResumeInfo;

int query_resume_info(Store *s, int64_t run_id, ResumeInfo *ret);
void resume_info_done(ResumeInfo *r);

/* Whether the run of info may continue on this machine: only on the one it started on (the same
 * host fingerprint). Returns 0, -ENOMEM, or -EXDEV with *ret_message (NULL when out of memory)
 * saying why. */
int resume_info_check_here(const ResumeInfo *info, char **ret_message);

/* Fills prior from what run_id recorded against plan. Returns 0, -EBADMSG for rows that do not
 * fit the plan, -EIO, -ENOMEM. */
int query_prior(Store *s, int64_t run_id, const Plan *plan, RunPrior *prior);

/* When run_id was pruned (db/prune.h) into *ret (NULL: it was not). Returns 0, -EIO, -ENOMEM. */
int query_run_pruned(Store *s, int64_t run_id, char **ret);

/* Id of the run recorded here last (`latest`: the run just made or imported, whenever it ran),
 * or -ENOENT when the database has none. */
int query_latest_run(Store *s, int64_t *ret);

/* Id of the run of experiment on machine (its machine name: runs.machine, else its host name)
 * that started last of those that finished (status done), or -ENOENT. */
int query_latest_done_run(Store *s, const char *experiment, const char *machine, int64_t *ret);

/* Whether run was made by `alloclab suite` (its label "suite TIME", one per invocation): 0,
 * -EXDEV when not, -ENOENT when there is no such run, -EIO. */
int query_suite_run(Store *s, int64_t run);

/* The finished run of experiment made by the same suite invocation as of_run (its label), or
 * -ENOENT. */
int query_suite_run_of(Store *s, const char *experiment, int64_t of_run, int64_t *ret);

/* Id of the first finished run imported from a file with this sha256 (cli/interop.c), or
 * -ENOENT. */
int query_imported_run(Store *s, const char *sha256, int64_t *ret);

/* 0 when run_id exists, -ENOENT when not, -EIO. */
int query_run_exists(Store *s, int64_t run_id);

/* 0 when run_id exists and is of experiment, -EXDEV when it is of another, -ENOENT, -EIO. */
int query_run_of_experiment(Store *s, int64_t run_id, const char *experiment);
