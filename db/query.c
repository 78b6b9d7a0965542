/* SPDX-License-Identifier: MIT */
/*
 * Read-side queries. Every column is read defensively: a NULL or unexpected value from an old
 * or hand-edited database becomes an empty string or zero, never a crash.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/query.h"
#include "db/sql.h"
#include "runner/host.h"
#include "runner/options.h"
#include "stats/sampleset.h"
#include "util/cleanup.h"
#include "util/strv.h"

/* The built-in metrics as stored per sample, as SQL over `samples s` in the units
 * run_sample_metric() uses: X(name, expression). */
#define BUILTIN_METRICS(X)                                                                                  \
        X(RUN_METRIC_WALL, "s.wall_ns / 1e9")                                                               \
        X(RUN_METRIC_USER, "s.user_us / 1e6")                                                               \
        X(RUN_METRIC_SYS, "s.sys_us / 1e6")                                                                 \
        X(RUN_METRIC_MAXRSS, "s.maxrss_kib * 1024.0")

/* The measured samples of run ?1 (phase 'sample', status 'ok') with their cell `c` and variant
 * `v`, as `samples s`, or as `sample_metrics m` of those samples. */
#define MEASURED_JOINS                                                                                      \
        " JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id"                          \
        " WHERE s.run_id = ?1 AND s.phase = 'sample' AND s.status = 'ok'"
#define MEASURED_SAMPLES " FROM samples s" MEASURED_JOINS
#define MEASURED_METRICS " FROM sample_metrics m JOIN samples s ON s.id = m.sample_id" MEASURED_JOINS

static void run_summary_done(RunSummary *r) {
        free(r->experiment);
        free(r->status);
        free(r->started_at);
        free(r->ended_at);
        free(r->metric_unit);
        free(r->hostname);
        free(r->metric);
        free(r->uuid);
        free(r->label);
        free(r->commit);
}

void query_runs_free(RunSummary *runs, size_t n) {
        for (size_t i = 0; i < n; i++)
                run_summary_done(&runs[i]);
        free(runs);
}

/* A field of a reported metric's definition (runs.metric_defs) in SQL; NULL for any other. */
#define METRIC_DEF_SQL(defs, metric, field)                                                                 \
        "json_extract(" defs ", '$.\"' || substr(" metric ", 10) || '\"." field "')"

#define SUMMARY_COLUMNS                                                                                     \
        "runs.id, experiments.name, alloclab_run_status(runs.status, hosts.hostname), runs.started_at, "    \
        "runs.ended_at, hosts.hostname,"                                                                    \
        " runs.metric, runs.n_runs, runs.n_failures, runs.n_excluded,"                                      \
        " (SELECT count(*) FROM cells WHERE cells.run_id = runs.id),"                                       \
        " (SELECT count(*) FROM variants WHERE variants.run_id = runs.id), runs.uuid, runs.label,"          \
        " runs.commit_id, " METRIC_DEF_SQL("runs.metric_defs", "runs.metric",                               \
                                           "better") " IS 'higher',"                                        \
                                                     " " METRIC_DEF_SQL("runs.metric_defs", "runs.metric",  \
                                                                        "unit")
#define SUMMARY_N_COLUMNS 17 /* the columns after them start at this index */
#define SUMMARY_FROM                                                                                        \
        " FROM runs JOIN experiments ON experiments.id = runs.experiment_id"                                \
        " JOIN hosts ON hosts.id = runs.host_id"

static int read_summary(sqlite3_stmt *st, RunSummary *r) {
        *r = (RunSummary){
                .id = sqlite3_column_int64(st, 0),
                .experiment = sql_text(st, 1),
                .status = sql_text(st, 2),
                .started_at = sql_text(st, 3),
                .ended_at = sql_text_or_null(st, 4),
                .hostname = sql_text(st, 5),
                .metric = sql_text(st, 6),
                .n_runs = sqlite3_column_int64(st, 7),
                .n_failures = sqlite3_column_int64(st, 8),
                .n_excluded = sqlite3_column_int64(st, 9),
                .n_cells = sqlite3_column_int64(st, 10),
                .n_variants = sqlite3_column_int64(st, 11),
                .uuid = sql_text(st, 12),
                .label = sql_text_or_null(st, 13),
                .commit = sql_text_or_null(st, 14),
                .higher_is_better = sqlite3_column_int(st, 15) != 0,
                .metric_unit = sql_text_or_null(st, 16),
        };
        return r->experiment && r->status && r->started_at && r->hostname && r->metric && r->uuid ? 0
                                                                                                  : -ENOMEM;
}

static int read_summary_row(sqlite3_stmt *st, void *element) {
        return read_summary(st, element);
}

static void clear_summary(void *element) {
        run_summary_done(element);
}

int query_runs(Store *s, const char *experiment, size_t limit, RunSummary **ret, size_t *ret_n) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(s),
                               "SELECT " SUMMARY_COLUMNS SUMMARY_FROM
                               " WHERE ?1 IS NULL OR experiments.name = ?1 ORDER BY runs.id DESC LIMIT ?2",
                               -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_text(st, 1, experiment, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, (sqlite3_int64) limit);
        void *list = NULL;
        int r = sql_collect(st, sizeof(RunSummary), read_summary_row, clear_summary, &list, ret_n);
        if (r >= 0)
                *ret = list;
        return r;
}

/* The run id a one-value SELECT finds, with ?1 bound to text (if not NULL) and ?2 to id (where
 * the statement has them); -ENOENT when it finds none. */
static int query_run_id(Store *s, const char *sql, const char *text, int64_t id, int64_t *ret) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        if (text)
                sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, id);
        int r = -ENOENT;
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
                *ret = sqlite3_column_int64(st, 0);
                r = 0;
        }
        sqlite3_finalize(st);
        return r;
}

int query_latest_run(Store *s, int64_t *ret) {
        return query_run_id(s, "SELECT max(id) FROM runs", NULL, 0, ret);
}

int query_latest_done_run(Store *s, const char *experiment, int64_t *ret) {
        return query_run_id(s,
                            "SELECT max(r.id) FROM runs r JOIN experiments x ON x.id = r.experiment_id"
                            " WHERE x.name = ?1 AND r.status = 'done'",
                            experiment, 0, ret);
}

int query_imported_run(Store *s, const char *sha256, int64_t *ret) {
        return query_run_id(s, "SELECT min(id) FROM runs WHERE import_sha256 = ?1 AND status = 'done'",
                            sha256, 0, ret);
}

int query_run_exists(Store *s, int64_t run_id) {
        int64_t found;
        return query_run_id(s, "SELECT id FROM runs WHERE id = ?2", NULL, run_id, &found);
}

int query_run_of_experiment(Store *s, int64_t run_id, const char *experiment) {
        int64_t found;
        int r = query_run_exists(s, run_id);
        if (r < 0)
                return r;
        r = query_run_id(s,
                         "SELECT r.id FROM runs r JOIN experiments e ON e.id = r.experiment_id"
                         " WHERE r.id = ?2 AND e.name = ?1",
                         experiment, run_id, &found);
        return r == -ENOENT ? -EXDEV : r;
}

Report *query_report_free(Report *r) {
        if (!r)
                return NULL;
        run_summary_done(&r->run);
        free(r->spec_path);
        free(r->order);
        free(r->verify);
        free(r->verify_ignore);
        free(r->metric_defs);
        free(r->message);
        free(r->kernel);
        free(r->cpu_model);
        free(r->glibc);
        free(r->thp);
        free(r->child_cpus);
        free(r->runner_cpus);
        free(r->cgroup);
        free(r->cgroup_fallback);
        free(r->calibrate_command);
        for (size_t i = 0; r->startup && i < r->n_variants; i++)
                free(r->startup[i].values);
        free(r->startup);
        for (size_t i = 0; i < r->n_cells; i++)
                free(r->cell_labels[i]);
        free(r->cell_labels);
        for (size_t i = 0; i < r->n_variants; i++) {
                free(r->variant_names[i]);
                free(r->allocator_names[i]);
                free(r->allocator_versions[i]);
        }
        free(r->variant_names);
        free(r->allocator_names);
        free(r->allocator_versions);
        for (size_t i = 0; r->entries && i < r->n_cells * r->n_variants; i++) {
                free(r->entries[i].first_failure);
                free(r->entries[i].excluded_reason);
                free(r->entries[i].own_layer_program);
                free(r->entries[i].smoke_unprobed);
                free(r->entries[i].values);
                free(r->entries[i].rounds);
        }
        free(r->entries);
        for (size_t i = 0; i < r->n_failures_listed; i++) {
                ReportFailure *f = &r->failures[i];
                free(f->cell);
                free(f->variant);
                free(f->phase);
                free(f->status);
                free(f->detail);
                free(f->stderr_excerpt);
        }
        free(r->failures);
        free(r);
        return NULL;
}

typedef struct ReportRow {
        Report *rep;
        int (*row)(Report *rep, sqlite3_stmt *st);
} ReportRow;

static int report_row(sqlite3_stmt *st, void *userdata) {
        ReportRow *r = userdata;
        return r->row(r->rep, st);
}

/* Runs sql with ?1 = run id and calls row() for each result row. */
static int for_each_row(Store *s, int64_t run_id, const char *sql, Report *rep,
                        int (*row)(Report *rep, sqlite3_stmt *st)) {
        return sql_each_row(store_db(s), sql, run_id, report_row, &(ReportRow){ rep, row });
}

static int row_header(Report *rep, sqlite3_stmt *st) {
        int r = read_summary(st, &rep->run);
        rep->spec_path = sql_text(st, SUMMARY_N_COLUMNS + 0);
        rep->order = sql_text(st, SUMMARY_N_COLUMNS + 1);
        rep->samples = sqlite3_column_int64(st, SUMMARY_N_COLUMNS + 2);
        rep->warmup = sqlite3_column_int64(st, SUMMARY_N_COLUMNS + 3);
        rep->seed = (uint64_t) sqlite3_column_int64(st, SUMMARY_N_COLUMNS + 4);
        rep->verify = sql_text(st, SUMMARY_N_COLUMNS + 5);
        rep->message = sql_text_or_null(st, SUMMARY_N_COLUMNS + 6);
        rep->kernel = sql_text(st, SUMMARY_N_COLUMNS + 7);
        rep->cpu_model = sql_text(st, SUMMARY_N_COLUMNS + 8);
        rep->glibc = sql_text(st, SUMMARY_N_COLUMNS + 9);
        rep->thp = sql_text(st, SUMMARY_N_COLUMNS + 10);
        rep->cpus = sqlite3_column_int64(st, SUMMARY_N_COLUMNS + 11);
        rep->min_effect = sqlite3_column_double(st, SUMMARY_N_COLUMNS + 12);
        rep->alpha = sqlite3_column_double(st, SUMMARY_N_COLUMNS + 13);
        rep->exclude_outliers =
                strcmp((const char *) sqlite3_column_text(st, SUMMARY_N_COLUMNS + 14), "exclude") == 0;
        rep->child_cpus = sql_text_or_null(st, SUMMARY_N_COLUMNS + 15);
        rep->runner_cpus = sql_text_or_null(st, SUMMARY_N_COLUMNS + 16);
        rep->cgroup = sql_text_or_null(st, SUMMARY_N_COLUMNS + 17);
        rep->cgroup_fallback = sql_text_or_null(st, SUMMARY_N_COLUMNS + 18);
        rep->calibrate_command = sql_text_or_null(st, SUMMARY_N_COLUMNS + 19);
        rep->samples_min = sqlite3_column_int64(st, SUMMARY_N_COLUMNS + 20);
        int correction =
                correction_from_string((const char *) sqlite3_column_text(st, SUMMARY_N_COLUMNS + 21));
        rep->correction = correction >= 0 ? (Correction) correction : CORRECTION_HOLM;
        rep->verify_ignore = sql_text_or_null(st, SUMMARY_N_COLUMNS + 22);
        rep->metric_defs = sql_text_or_null(st, SUMMARY_N_COLUMNS + 23);
        rep->n_cells = (size_t) rep->run.n_cells;
        rep->n_variants = (size_t) rep->run.n_variants;
        return r;
}

static int row_cell(Report *rep, sqlite3_stmt *st) {
        int64_t pos = sqlite3_column_int64(st, 0);
        if (pos < 0 || (size_t) pos >= rep->n_cells)
                return -EBADMSG;
        free(rep->cell_labels[pos]);
        return (rep->cell_labels[pos] = sql_text(st, 1)) ? 0 : -ENOMEM;
}

static int row_variant(Report *rep, sqlite3_stmt *st) {
        int64_t pos = sqlite3_column_int64(st, 0);
        if (pos < 0 || (size_t) pos >= rep->n_variants)
                return -EBADMSG;
        rep->variant_names[pos] = sql_text(st, 1);
        rep->allocator_names[pos] = sql_text(st, 2);
        rep->allocator_versions[pos] = sql_text(st, 3);
        if (sqlite3_column_int(st, 4))
                rep->baseline = (size_t) pos;
        if (sqlite3_column_int(st, 5))
                rep->aa_variant = (size_t) pos;
        return rep->variant_names[pos] && rep->allocator_names[pos] && rep->allocator_versions[pos]
                       ? 0
                       : -ENOMEM;
}

static ReportEntry *entry_at(Report *rep, sqlite3_stmt *st) {
        int64_t c = sqlite3_column_int64(st, 0), v = sqlite3_column_int64(st, 1);
        if (c < 0 || v < 0 || (size_t) c >= rep->n_cells || (size_t) v >= rep->n_variants)
                return NULL;
        return &rep->entries[(size_t) c * rep->n_variants + (size_t) v];
}

static int row_stats(Report *rep, sqlite3_stmt *st) {
        ReportEntry *e = entry_at(rep, st);
        if (!e)
                return -EBADMSG;
        e->has_stats = true;
        e->stats = (Stats){
                .n = (size_t) sqlite3_column_int64(st, 2),
                .median = sqlite3_column_double(st, 3),
                .mad = sqlite3_column_double(st, 4),
                .mean = sqlite3_column_double(st, 5),
                .stddev = sqlite3_column_double(st, 6),
                .min = sqlite3_column_double(st, 7),
                .max = sqlite3_column_double(st, 8),
        };
        return 0;
}

static int row_noisy(Report *rep, sqlite3_stmt *st) {
        ReportEntry *e = entry_at(rep, st);
        if (!e)
                return -EBADMSG;
        e->n_quiet_checked = sqlite3_column_int64(st, 2);
        e->n_noisy = (int64_t) sqlite3_column_double(st, 3);
        e->n_noisy_steal = (int64_t) sqlite3_column_double(st, 4);
        e->n_noisy_others = (int64_t) sqlite3_column_double(st, 5);
        e->n_skipped_busy = (int64_t) sqlite3_column_double(st, 6);
        return 0;
}

static int row_startup(Report *rep, sqlite3_stmt *st) {
        int64_t v = sqlite3_column_int64(st, 0);
        if (v < 0 || (size_t) v >= rep->n_variants)
                return -EBADMSG;
        ReportStartup *u = &rep->startup[v];
        double *grown = realloc(u->values, (u->n + 1) * sizeof(double));
        if (!grown)
                return -ENOMEM;
        u->values = grown;
        u->values[u->n++] = (double) sqlite3_column_int64(st, 1) / 1e9;
        return 0;
}

/* Start-up medians of a calibrated run (ok runs of the null workload, sorted by the query). */
static int query_startup(Store *s, int64_t run_id, Report *rep) {
        if (!rep->calibrate_command)
                return 0;
        if (!(rep->startup = calloc(rep->n_variants, sizeof(ReportStartup))))
                return -ENOMEM;
        int r = for_each_row(
                s, run_id,
                "SELECT v.position, c.wall_ns FROM calibration c JOIN variants v ON v.id = c.variant_id"
                " WHERE c.run_id = ?1 AND c.status = 'ok' ORDER BY v.position, c.wall_ns",
                rep, row_startup);
        for (size_t v = 0; r >= 0 && v < rep->n_variants; v++) {
                ReportStartup *u = &rep->startup[v];
                u->median = u->lo = u->hi = NAN;
                if (u->n == 0)
                        continue;
                u->median = stats_median_sorted(u->values, u->n);
                compare_median_order_interval(u->values, u->n, 0.95, &u->lo, &u->hi);
        }
        return r;
}

int query_metric_def(const char *defs, const char *metric, bool *ret_higher_is_better, char **ret_unit) {
        *ret_higher_is_better = false;
        *ret_unit = NULL;
        if (!defs || strncmp(metric, "reported:", 9) != 0)
                return 0;
        json_t *all = json_loads(defs, 0, NULL);
        const json_t *def = json_object_get(all, metric + 9);
        const char *better = json_string_value(json_object_get(def, "better")),
                   *unit = json_string_value(json_object_get(def, "unit"));
        *ret_higher_is_better = better && strcmp(better, "higher") == 0;
        *ret_unit = unit ? strdup(unit) : NULL;
        json_decref(all);
        return unit && !*ret_unit ? -ENOMEM : 0;
}

static int row_tradeoff(Report *rep, sqlite3_stmt *st) {
        ReportEntry *e = entry_at(rep, st);
        if (!e)
                return -EBADMSG;
        e->wall_median = sqlite3_column_double(st, 2);
        e->maxrss_median = sqlite3_column_double(st, 3);
        e->has_tradeoff = true;
        return 0;
}

/* Per cell, the measured variants that no other one beats in both the metric (or wall time) and
 * memory. */
static int mark_pareto_front(Report *rep) {
        rep->front_by_metric =
                strcmp(rep->run.metric, "wall") != 0 && strcmp(rep->run.metric, "maxrss") != 0;
        size_t n = rep->n_variants;
        _cleanup_free_ double *cost = calloc(n ? n : 1, sizeof(double)),
                              *rss = calloc(n ? n : 1, sizeof(double));
        _cleanup_free_ bool *eligible = calloc(n ? n : 1, sizeof(bool)),
                            *front = calloc(n ? n : 1, sizeof(bool));
        if (!cost || !rss || !eligible || !front)
                return -ENOMEM;
        for (size_t c = 0; c < rep->n_cells; c++) {
                ReportEntry *cell = &rep->entries[c * n];
                for (size_t v = 0; v < n; v++) {
                        const ReportEntry *e = &cell[v];
                        eligible[v] = e->has_tradeoff && !e->excluded_reason &&
                                      (!rep->front_by_metric || (e->has_stats && e->stats.n > 0));
                        cost[v] = !rep->front_by_metric       ? e->wall_median
                                  : rep->run.higher_is_better ? -e->stats.median /* less is worse */
                                                              : e->stats.median;
                        rss[v] = cell[v].maxrss_median;
                }
                sampleset_pareto_front(cost, rss, eligible, n, front);
                for (size_t v = 0; v < n; v++)
                        cell[v].pareto = front[v];
        }
        return 0;
}

static int row_value(Report *rep, sqlite3_stmt *st) {
        ReportEntry *e = entry_at(rep, st);
        if (!e)
                return -EBADMSG;
        if ((e->n_values & (e->n_values - 1)) == 0) { /* grow at powers of two */
                size_t capacity = e->n_values ? 2 * e->n_values : 8;
                double *values = realloc(e->values, capacity * sizeof(double));
                if (values)
                        e->values = values;
                int64_t *rounds = realloc(e->rounds, capacity * sizeof(int64_t));
                if (rounds)
                        e->rounds = rounds;
                if (!values || !rounds)
                        return -ENOMEM;
        }
        e->values[e->n_values] = sqlite3_column_double(st, 2);
        e->rounds[e->n_values++] = sqlite3_column_int64(st, 3);
        return 0;
}

/* SQL reading every measured sample's value of metric as (cell position, variant position,
 * value, round). Caller frees. */
static char *sample_values_sql(const char *metric) {
        const char *expression = query_builtin_metric_sql(metric);
        const char *name = strncmp(metric, "reported:", 9) == 0 ? metric + 9 : metric;
        char *sql =
                expression
                        ? sqlite3_mprintf("SELECT c.position, v.position, %s, s.round" MEASURED_SAMPLES
                                          " ORDER BY s.round",
                                          expression)
                        : sqlite3_mprintf("SELECT c.position, v.position, m.value, s.round" MEASURED_METRICS
                                          " AND m.name = %Q ORDER BY s.round",
                                          name);
        char *copy = sql ? strdup(sql) : NULL;
        sqlite3_free(sql);
        return copy;
}

static SampleSet entry_samples(ReportEntry *e) {
        return (SampleSet){ .values = e->values, .rounds = e->rounds, .n = e->n_values };
}

/* Whether variant v of cell c is compared with its cell's baseline: both measured. */
static bool compared(const Report *rep, size_t c, size_t v) {
        const ReportEntry *base = &rep->entries[c * rep->n_variants + rep->baseline];
        const ReportEntry *e = &rep->entries[c * rep->n_variants + v];
        return v != rep->baseline && !e->excluded_reason && !base->excluded_reason && e->n_values > 0 &&
               base->n_values > 0;
}

/* The comparisons of a run, for compare_family(): each entry and its cell's baseline. */
/* One comparison of a family: a variant's entry, its cell's baseline, and the run's report. */
typedef struct FamilyMember {
        ReportEntry *entry, *base;
        const Report *rep;
} FamilyMember;

/* Member i of the FamilyMember array userdata against its baseline under rule, by the design its
 * run chose: pairing follows the run's own number of comparisons (rep->n_tests), whatever family
 * the member is decided in. */
static int compare_member(void *userdata, size_t i, const CompareRule *rule, Comparison *ret) {
        const FamilyMember *m = &((const FamilyMember *) userdata)[i];
        CompareRule own = *rule;
        own.tests = m->rep->n_tests;
        SampleSet b = entry_samples(m->base), x = entry_samples(m->entry);
        return sampleset_compare(&b, &x, sampleset_design(m->rep->order), &own, ret);
}

int query_decide_family(Report *const *reports, size_t n) {
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
                total += reports[i]->n_cells * reports[i]->n_variants;
        _cleanup_free_ FamilyMember *members = calloc(total + 1, sizeof(FamilyMember));
        _cleanup_free_ Comparison **comparisons = calloc(total + 1, sizeof(Comparison *));
        if (!members || !comparisons)
                return -ENOMEM;
        size_t k = 0, tested = 0;
        for (size_t i = 0; i < n; i++) {
                Report *rep = reports[i];
                for (size_t c = 0; c < rep->n_cells; c++)
                        for (size_t v = 0; v < rep->n_variants; v++) {
                                ReportEntry *e = &rep->entries[c * rep->n_variants + v];
                                if (!e->has_comparison)
                                        continue;
                                members[k] = (FamilyMember){
                                        e, &rep->entries[c * rep->n_variants + rep->baseline], rep
                                };
                                comparisons[k++] = &e->comparison;
                                tested += e->comparison.test != COMPARE_TEST_NONE; /* blocked: no test */
                        }
        }
        const Report *first = reports[0];
        CompareRule rule = { .min_effect = first->min_effect,
                             .alpha = first->alpha,
                             .correction = first->correction,
                             .tests = tested };
        int r = compare_family(comparisons, k, &rule, compare_member, members);
        for (size_t i = 0; i < n; i++) { /* after: the members' designs read each run's own */
                reports[i]->n_tests = tested;
                reports[i]->interval_alpha = rule.interval_alpha;
        }
        return r;
}

/* Each measured variant against its cell's measured baseline (stats/sampleset.h), every
 * comparison of the run one family whose verdicts share alpha by the run's correction. */
static int compare_entries(Report *rep) {
        size_t n = 0;
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++)
                        n += compared(rep, c, v);
        /* The family's size sets the level each test must reach, and with it the design. */
        rep->n_tests = n;
        CompareRule rule = { .min_effect = rep->min_effect,
                             .alpha = rep->alpha,
                             .correction = rep->correction };
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++) {
                        if (!compared(rep, c, v))
                                continue;
                        FamilyMember m = { &rep->entries[c * rep->n_variants + v],
                                           &rep->entries[c * rep->n_variants + rep->baseline], rep };
                        int r = compare_member(&m, 0, &rule, &m.entry->comparison);
                        if (r == -ENOMEM)
                                return r;
                        m.entry->has_comparison = r == 0;
                }
        return query_decide_family(&rep, 1);
}

/* Outliers of every entry, then (compare_variants) each measured variant against its cell's measured
 * baseline (compare_entries). Nothing in it is random: showing a run twice gives the same figures. */
static int analyse_entries(Report *rep, bool compare_variants) {
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++) {
                ReportEntry *e = &rep->entries[i];
                /* Statistics never stored (the run failed before the cell's end, on a full disk
                 * say): computed from its samples, as the recorder does, rather than shown as
                 * none while its samples count in the verdicts. */
                if (!e->has_stats && e->n_values > 0) {
                        _cleanup_free_ double *copy = malloc(e->n_values * sizeof(double));
                        if (!copy)
                                return -ENOMEM;
                        memcpy(copy, e->values, e->n_values * sizeof(double));
                        if (stats_compute(copy, e->n_values, &e->stats) < 0)
                                return -ENOMEM;
                        e->has_stats = true;
                }
                SampleSet set = entry_samples(e);
                int n = sampleset_outliers(&set, rep->exclude_outliers, &e->stats);
                if (n < 0)
                        return n;
                e->n_outliers = (size_t) n;
                e->n_values = set.n;
                if (e->n_values > 0) {
                        int r = sampleset_median_interval(&set, &e->median_lo, &e->median_hi);
                        if (r < 0)
                                return r;
                        e->has_median_ci = true;
                }
        }
        if (compare_variants)
                return compare_entries(rep);
        return 0;
}

static int row_failure_count(Report *rep, sqlite3_stmt *st) {
        ReportEntry *e = entry_at(rep, st);
        if (!e)
                return -EBADMSG;
        e->n_failed = sqlite3_column_int64(st, 2);
        e->first_failure = sql_text(st, 3);
        e->n_failed_samples = sqlite3_column_int64(st, 4);
        return e->first_failure ? 0 : -ENOMEM;
}

static int row_smoke_peaks(Report *rep, sqlite3_stmt *st) {
        ReportEntry *e = entry_at(rep, st);
        if (!e)
                return -EBADMSG;
        if (sqlite3_column_type(st, 3) == SQLITE_NULL)
                return 0; /* not measured (probe: never) */
        /* Part of the tree ran without the probe: its counts are of the rest alone. */
        if (sqlite3_column_type(st, 9) != SQLITE_NULL) {
                e->smoke_unprobed = sql_text_or_null(st, 9);
                return e->smoke_unprobed ? 0 : -ENOMEM;
        }
        e->has_smoke_peaks = true;
        e->smoke_peak_live_bytes = sqlite3_column_int64(st, 3);
        e->smoke_peak_requested =
                sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 2);
        /* The tree's programs, one per line, against the variant's PYTHONMALLOC. */
        const char *programs = (const char *) sqlite3_column_text(st, 4);
        const char *pythonmalloc = (const char *) sqlite3_column_text(st, 5);
        for (const char *line = programs; line && *line && !e->own_layer_program;) {
                size_t len = strcspn(line, "\n");
                _cleanup_free_ char *program = strndup(line, len);
                if (!program)
                        return -ENOMEM;
                if (options_own_layer(program, pythonmalloc))
                        e->own_layer_program = TAKE_PTR(program);
                line += len + (line[len] == '\n');
        }
        /* Past the probe's listed processes (a pyenv shim's bash tree), only a bit says so. */
        if (!e->own_layer_program && sqlite3_column_int(st, 6) && !(e->own_layer_program = strdup("python")))
                return -ENOMEM;
        if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
                e->has_smoke_calls = true;
                e->smoke_calls = sqlite3_column_int64(st, 7);
                e->smoke_wall_s = (double) sqlite3_column_int64(st, 8) / 1e9;
        }
        return 0;
}

static int row_nothing_verified(Report *rep, sqlite3_stmt *st) {
        rep->n_cells_nothing_verified = (size_t) sqlite3_column_int64(st, 0);
        return 0;
}

static int row_exclusion(Report *rep, sqlite3_stmt *st) {
        ReportEntry *e = entry_at(rep, st);
        if (!e)
                return -EBADMSG;
        free(e->excluded_reason);
        e->excluded_reason = sql_text(st, 2);
        return e->excluded_reason ? 0 : -ENOMEM;
}

static char *failure_detail(sqlite3_stmt *st) {
        const char *status = (const char *) sqlite3_column_text(st, 4);
        char *d = NULL;
        int r;
        if (!status)
                return strdup("");
        if (sqlite3_column_type(st, 13) != SQLITE_NULL)
                return sql_text(st, 13);
        if (strcmp(status, "signal") == 0) {
                int sig = sqlite3_column_int(st, 6);
                r = asprintf(&d, "killed by signal %d (%s)", sig, strsignal(sig));
        } else if (strcmp(status, "exit") == 0)
                r = asprintf(&d, "exit code %d", sqlite3_column_int(st, 5));
        else if (strcmp(status, "mismatch") == 0)
                r = asprintf(
                        &d, "output differs from the reference at byte %lld (%lld bytes, reference %lld)",
                        (long long) sqlite3_column_int64(st, 7), (long long) sqlite3_column_int64(st, 8),
                        (long long) sqlite3_column_int64(st, 9));
        else if (strcmp(status, "timeout") == 0)
                r = asprintf(&d, "killed at the timeout after %.3f s",
                             (double) sqlite3_column_int64(st, 10) / 1e9);
        else if (strcmp(status, "exec-failed") == 0)
                r = asprintf(&d, "cannot execute: %s", strerror(sqlite3_column_int(st, 11)));
        else
                r = asprintf(&d, "%s", status);
        return r < 0 ? NULL : d;
}

static int row_failure(Report *rep, sqlite3_stmt *st) {
        if (rep->n_failures_listed >= QUERY_MAX_FAILURES)
                return 0;
        ReportFailure *f = &rep->failures[rep->n_failures_listed++];
        *f = (ReportFailure){
                .cell = sql_text(st, 0),
                .variant = sql_text(st, 1),
                .phase = sql_text(st, 2),
                .round = sqlite3_column_int64(st, 3),
                .status = sql_text(st, 4),
                .detail = failure_detail(st),
                .stderr_excerpt = sql_text_or_null(st, 12),
        };
        return f->cell && f->variant && f->phase && f->status && f->detail ? 0 : -ENOMEM;
}

double query_noise_floor(const Report *rep, size_t c) {
        if (rep->aa_variant == SIZE_MAX)
                return NAN;
        const ReportEntry *e = &rep->entries[c * rep->n_variants + rep->aa_variant];
        if (!e->has_comparison)
                return NAN;
        return fmax(e->comparison.hi - 1, 1 - e->comparison.lo);
}

const char *query_builtin_metric_sql(const char *metric) {
#define BUILTIN_ENTRY(name, expression) { name, expression },
        static const struct {
                const char *name, *expression;
        } builtin[] = { BUILTIN_METRICS(BUILTIN_ENTRY) };
#undef BUILTIN_ENTRY
        for (size_t i = 0; i < ELEMENTSOF(builtin); i++)
                if (strcmp(metric, builtin[i].name) == 0)
                        return builtin[i].expression;
        return NULL;
}

static bool is_builtin_metric(const char *name) {
        return query_builtin_metric_sql(name) != NULL;
}

static int row_metric_name(sqlite3_stmt *st, void *userdata) {
        char ***names = userdata;
        const char *name = (const char *) sqlite3_column_text(st, 0);
        char *metric = NULL;
        if (asprintf(&metric, "%s%s", is_builtin_metric(name) ? "" : "reported:", name) < 0)
                return -ENOMEM;
        int r = strv_consume(names, metric);
        if (r < 0)
                free(metric);
        return r;
}

int query_run_metrics(Store *s, int64_t run_id, char ***ret) {
        _cleanup_strv_free_ char **names = calloc(1, sizeof(char *));
        if (!names)
                return -ENOMEM;
        /* The primary metric sorts first; the stats table stores "reported:NAME" as NAME. */
        int r = sql_each_row(store_db(s),
                             "SELECT DISTINCT st.metric, st.metric = r.metric OR 'reported:' || st.metric = "
                             "r.metric AS is_primary"
                             " FROM stats st JOIN runs r ON r.id = st.run_id WHERE st.run_id = ?1"
                             " ORDER BY is_primary DESC, st.metric",
                             run_id, row_metric_name, &names);
        if (r >= 0)
                *ret = TAKE_PTR(names);
        return r;
}

static int read_report(Store *s, int64_t run_id, const char *metric_override, bool compare_variants,
                       Report **ret) {
        _cleanup_(query_report_freep) Report *rep = calloc(1, sizeof(Report));
        if (!rep)
                return -ENOMEM;
        rep->aa_variant = SIZE_MAX;
        int r = for_each_row(s, run_id,
                             "SELECT " SUMMARY_COLUMNS ", runs.spec_path, runs.order_mode, runs.samples,"
                             " runs.warmup, runs.seed, runs.verify, runs.message, hosts.kernel,"
                             " hosts.cpu_model, hosts.glibc, hosts.thp, hosts.cpus, runs.min_effect, "
                             "runs.alpha, runs.outliers, runs.cpus, runs.runner_cpus, runs.cgroup,"
                             " runs.cgroup_fallback, runs.calibrate_command, runs.samples_min, "
                             "runs.correction, runs.verify_ignore, runs.metric_defs" SUMMARY_FROM
                             " WHERE runs.id = ?1",
                             rep, row_header);
        if (r < 0)
                return r;
        if (!rep->run.status)
                return -ENOENT;
        if (metric_override && strcmp(metric_override, rep->run.metric) != 0) {
                char *copy = strdup(metric_override);
                if (!copy)
                        return -ENOMEM;
                free(rep->run.metric);
                rep->run.metric = copy;
                /* Another metric than the primary: its own direction and unit. */
                free(rep->run.metric_unit);
                rep->run.metric_unit = NULL;
                if ((r = query_metric_def(rep->metric_defs, copy, &rep->run.higher_is_better,
                                          &rep->run.metric_unit)) < 0)
                        return r;
        }

        size_t nc = rep->n_cells, nv = rep->n_variants;
        rep->cell_labels = calloc(nc + 1, sizeof(char *));
        rep->variant_names = calloc(nv + 1, sizeof(char *));
        rep->allocator_names = calloc(nv + 1, sizeof(char *));
        rep->allocator_versions = calloc(nv + 1, sizeof(char *));
        rep->entries = calloc(nc * nv + 1, sizeof(ReportEntry));
        rep->failures = calloc(QUERY_MAX_FAILURES, sizeof(ReportFailure));
        if (!rep->cell_labels || !rep->variant_names || !rep->allocator_names || !rep->allocator_versions ||
            !rep->entries || !rep->failures)
                return -ENOMEM;

        /* The primary metric's name in the stats table: "reported:NAME" is stored as NAME. */
        const char *metric = rep->run.metric;
        if (strncmp(metric, "reported:", 9) == 0)
                metric += 9;
        _cleanup_free_ char *stats_sql = NULL;
        char *quoted = sqlite3_mprintf("%Q", metric);
        if (!quoted)
                return -ENOMEM;
        r = asprintf(&stats_sql,
                     "SELECT c.position, v.position, s.n, s.median, s.mad, s.mean, s.stddev, s.min, s.max"
                     " FROM stats s JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id"
                     " WHERE s.run_id = ?1 AND s.metric = %s",
                     quoted);
        sqlite3_free(quoted);
        if (r < 0)
                return -ENOMEM;

        if ((r = for_each_row(s, run_id, "SELECT position, label FROM cells WHERE run_id = ?1", rep,
                              row_cell)) < 0 ||
            (r = for_each_row(
                     s, run_id,
                     "SELECT v.position, v.name, a.name, a.version, v.is_baseline, v.is_aa FROM variants v"
                     " JOIN allocators a ON a.id = v.allocator_id WHERE v.run_id = ?1",
                     rep, row_variant)) < 0 ||
            (r = for_each_row(s, run_id, stats_sql, rep, row_stats)) < 0 ||
            (r = for_each_row(
                     s, run_id,
                     "SELECT c.position, v.position, count(s.noisy), total(s.noisy),"
                     " total(s.noisy AND s.steal_ns > s.other_cpu_ns),"
                     " total(s.noisy AND s.other_cpu_ns >= s.steal_ns AND s.other_cpu_ns * 4 > s.wall_ns),"
                     " total(s.status = 'skipped-busy') FROM samples s"
                     " JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id"
                     " WHERE s.run_id = ?1 AND s.phase = 'sample' AND s.noisy IS NOT NULL"
                     " GROUP BY s.cell_id, s.variant_id",
                     rep, row_noisy)) < 0 ||
            (r = for_each_row(
                     s, run_id,
                     "SELECT c.position, v.position, t.median, m.median FROM stats t"
                     " JOIN stats m ON m.cell_id = t.cell_id AND m.variant_id = t.variant_id"
                     " AND m.metric = 'maxrss' JOIN cells c ON c.id = t.cell_id"
                     " JOIN variants v ON v.id = t.variant_id WHERE t.run_id = ?1 AND t.metric = 'wall'",
                     rep, row_tradeoff)) < 0 ||
            (r = for_each_row(
                     s, run_id,
                     "SELECT c.position, v.position, count(*),"
                     " (SELECT s2.status || CASE WHEN s2.status = 'signal' THEN ' ' || s2.signal"
                     "   WHEN s2.status = 'exit' THEN ' ' || s2.exit_code ELSE '' END"
                     "  FROM samples s2 WHERE s2.cell_id = s.cell_id AND s2.variant_id = s.variant_id"
                     "  AND s2.status <> 'ok' ORDER BY s2.id LIMIT 1), sum(s.phase = 'sample')"
                     " FROM samples s JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = "
                     "s.variant_id"
                     " WHERE s.run_id = ?1 AND s.status <> 'ok' GROUP BY s.cell_id, s.variant_id",
                     rep, row_failure_count)) < 0 ||
            (r = for_each_row(s, run_id,
                              "SELECT c.position, v.position,"
                              " json_extract(p.report, '$.counters.peak_live_requested_bytes'),"
                              " json_extract(p.report, '$.counters.peak_live_bytes'),"
                              " (SELECT group_concat(json_extract(t.value, '$.program'), char(10))"
                              "  FROM json_each(p.report, '$.processes') t),"
                              " json_extract(v.env, '$.PYTHONMALLOC'),"
                              " json_extract(p.report, '$.unlisted_pymalloc'),"
                              " (SELECT sum(t.value) FROM json_each(p.report, '$.counters.calls') t),"
                              " s.wall_ns,"
                              " (SELECT json_extract(t.value, '$.exec_without_probe.program')"
                              "  FROM json_each(p.report, '$.processes') t"
                              "  WHERE json_type(t.value, '$.exec_without_probe') = 'object' LIMIT 1)"
                              " FROM samples s JOIN probe_reports p ON p.sample_id = s.id"
                              " JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id"
                              " WHERE s.run_id = ?1 AND s.phase = 'smoke' AND s.status = 'ok'",
                              rep, row_smoke_peaks)) < 0 ||
            (r = for_each_row(
                     s, run_id,
                     "SELECT count(*) FROM (SELECT s.cell_id FROM samples s JOIN runs r ON r.id = s.run_id"
                     " WHERE s.run_id = ?1 AND s.status = 'ok' AND r.verify <> 'none'"
                     " GROUP BY s.cell_id HAVING max(coalesce(s.output_size, 1)) = 0)",
                     rep, row_nothing_verified)) < 0 ||
            (r = for_each_row(s, run_id,
                              "SELECT c.position, v.position, e.reason FROM exclusions e"
                              " JOIN cells c ON c.id = e.cell_id JOIN variants v ON v.id = e.variant_id"
                              " WHERE e.run_id = ?1",
                              rep, row_exclusion)) < 0 ||
            (r = for_each_row(s, run_id,
                              "SELECT c.label, v.name, s.phase, s.round, s.status, s.exit_code, s.signal,"
                              " s.mismatch_offset, s.output_size, s.reference_size, s.wall_ns, s.exec_errno,"
                              " s.stderr_excerpt, s.detail FROM samples s JOIN cells c ON c.id = s.cell_id"
                              " JOIN variants v ON v.id = s.variant_id"
                              " WHERE s.run_id = ?1 AND s.status <> 'ok' ORDER BY s.id",
                              rep, row_failure)) < 0)
                return r;
        _cleanup_free_ char *values_sql = sample_values_sql(rep->run.metric);
        if (!values_sql)
                return -ENOMEM;
        if ((r = for_each_row(s, run_id, values_sql, rep, row_value)) < 0 ||
            (r = analyse_entries(rep, compare_variants)) < 0 || (r = query_startup(s, run_id, rep)) < 0 ||
            (r = mark_pareto_front(rep)) < 0)
                return r;
        for (size_t i = 0; i < nc; i++)
                if (!rep->cell_labels[i] && !(rep->cell_labels[i] = strdup("?")))
                        return -ENOMEM;
        for (size_t i = 0; i < nv; i++)
                if (!rep->variant_names[i])
                        return -EBADMSG;
        /* The failures counted are the rows listed (an imported run's counter could say
         * otherwise: "Failed samples (0)" above a failed sample). */
        rep->run.n_failures = 0;
        for (size_t i = 0; i < nc * nv; i++)
                rep->run.n_failures += rep->entries[i].n_failed;
        *ret = TAKE_PTR(rep);
        return 0;
}

int query_report(Store *s, int64_t run_id, const char *metric, Report **ret) {
        return read_report(s, run_id, metric, true, ret);
}

int query_report_values(Store *s, int64_t run_id, const char *metric, Report **ret) {
        return read_report(s, run_id, metric, false, ret);
}

static void clear_allocator(void *element) {
        VariantAllocator *a = element;
        free(a->variant);
        free(a->allocator);
        free(a->path);
        free(a->sha256);
        free(a->version);
        free(a->probe_report);
}

static int read_allocator(sqlite3_stmt *st, void *element) {
        VariantAllocator *a = element;
        *a = (VariantAllocator){
                .variant = sql_text(st, 0),
                .allocator = sql_text(st, 1),
                .path = sql_text(st, 2),
                .sha256 = sql_text(st, 3),
                .version = sql_text(st, 4),
                .probe_report = sql_text_or_null(st, 5),
        };
        return a->variant && a->allocator && a->path && a->sha256 && a->version ? 0 : -ENOMEM;
}

void query_allocators_free(VariantAllocator *list, size_t n) {
        for (size_t i = 0; i < n; i++)
                clear_allocator(&list[i]);
        free(list);
}

int query_allocators(Store *s, int64_t run_id, VariantAllocator **ret, size_t *ret_n) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(
                    store_db(s),
                    "SELECT v.name, a.name, a.path, a.sha256, a.version,"
                    " (SELECT pr.report FROM probe_reports pr JOIN samples x ON x.id = pr.sample_id"
                    "  WHERE x.variant_id = v.id AND x.phase = 'smoke' ORDER BY x.id LIMIT 1)"
                    " FROM variants v JOIN allocators a ON a.id = v.allocator_id"
                    " WHERE v.run_id = ? ORDER BY v.position",
                    -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_int64(st, 1, run_id);
        void *list = NULL;
        int r = sql_collect(st, sizeof(VariantAllocator), read_allocator, clear_allocator, &list, ret_n);
        if (r >= 0)
                *ret = list;
        return r;
}

void resume_info_done(ResumeInfo *r) {
        free(r->spec_path);
        free(r->spec_yaml);
        free(r->status);
        free(r->hostname);
        free(r->host_fingerprint);
        *r = (ResumeInfo){};
}

int resume_info_check_here(const ResumeInfo *info, char **ret_message) {
        _cleanup_(host_done) Host host = {};
        int r = host_read(&host);
        if (r < 0)
                return r;
        /* Runs of schema 9 and before have no fingerprint: their host name must do. */
        if (info->host_fingerprint ? strcmp(info->host_fingerprint, host.fingerprint) == 0
                                   : strcmp(info->hostname, host.hostname) == 0)
                return 0;
        if (asprintf(ret_message,
                     "it was measured on %s (fingerprint %.12s), and this is %s (%.12s): a run continues "
                     "only on the machine it started on",
                     info->hostname, info->host_fingerprint ? info->host_fingerprint : "unknown",
                     host.hostname, host.fingerprint) < 0)
                *ret_message = NULL;
        return -EXDEV;
}

int query_resume_info(Store *s, int64_t run_id, ResumeInfo *ret) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(
                    store_db(s),
                    "SELECT r.spec_path, sp.yaml, r.status, r.seed, r.samples, r.warmup, h.hostname,"
                    " r.host_fingerprint FROM runs r JOIN specs sp ON sp.id = r.spec_id"
                    " JOIN hosts h ON h.id = r.host_id WHERE r.id = ?",
                    -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_int64(st, 1, run_id);
        int r = -ENOENT;
        if (sqlite3_step(st) == SQLITE_ROW) {
                *ret = (ResumeInfo){ .spec_path = sql_text(st, 0),
                                     .spec_yaml = sql_text(st, 1),
                                     .status = sql_text(st, 2),
                                     .seed = (uint64_t) sqlite3_column_int64(st, 3),
                                     .samples = (unsigned) sqlite3_column_int64(st, 4),
                                     .warmup = (unsigned) sqlite3_column_int64(st, 5),
                                     .hostname = sql_text(st, 6),
                                     .host_fingerprint = sql_text_or_null(st, 7) };
                r = ret->spec_path && ret->spec_yaml && ret->status && ret->hostname ? 0 : -ENOMEM;
        }
        sqlite3_finalize(st);
        return r;
}

/* Runs sql (?1 = run id) and hands each row to row(). */
static int each_prior_row(Store *s, const char *sql, int64_t run_id, const Plan *plan, RunPrior *prior,
                          int (*row)(sqlite3_stmt *st, const Plan *plan, RunPrior *prior)) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_int64(st, 1, run_id);
        int rc, r = 0;
        while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
                r = row(st, plan, prior);
        if (r >= 0 && rc != SQLITE_DONE)
                r = -EIO;
        sqlite3_finalize(st);
        return r;
}

static int row_done(sqlite3_stmt *st, const Plan *plan, RunPrior *prior) {
        int64_t step = sqlite3_column_int64(st, 0);
        if (step < 0 || (size_t) step >= plan->n_steps)
                return -EBADMSG;
        prior->done[step] = true;
        return 0;
}

static int row_excluded(sqlite3_stmt *st, const Plan *plan, RunPrior *prior) {
        int64_t c = sqlite3_column_int64(st, 0), v = sqlite3_column_int64(st, 1);
        if (c < 0 || v < 0 || (size_t) c >= plan->n_cells || (size_t) v >= plan->n_variants)
                return -EBADMSG;
        prior->excluded[(size_t) c * plan->n_variants + (size_t) v] = true;
        return 0;
}

static int add_value(RunPrior *prior, int64_t cell, int64_t variant, const char *metric, double value) {
        PriorValue *grown = realloc(prior->values, (prior->n_values + 1) * sizeof(PriorValue));
        if (!grown)
                return -ENOMEM;
        prior->values = grown;
        PriorValue *pv = &prior->values[prior->n_values++];
        *pv = (PriorValue){ .cell = (uint32_t) cell, .variant = (uint32_t) variant, .value = value };
        snprintf(pv->metric, sizeof(pv->metric), "%s", metric);
        return 0;
}

/* Columns 2... are BUILTIN_METRICS in order. */
static int row_builtin(sqlite3_stmt *st, const Plan *plan, RunPrior *prior) {
        int64_t c = sqlite3_column_int64(st, 0), v = sqlite3_column_int64(st, 1);
        if (c < 0 || v < 0 || (size_t) c >= plan->n_cells || (size_t) v >= plan->n_variants)
                return -EBADMSG;
#define BUILTIN_NAME(name, expression) name,
        static const char *const names[] = { BUILTIN_METRICS(BUILTIN_NAME) };
#undef BUILTIN_NAME
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                int r = add_value(prior, c, v, names[i], sqlite3_column_double(st, 2 + (int) i));
                if (r < 0)
                        return r;
        }
        return 0;
}

static int row_reported(sqlite3_stmt *st, const Plan *plan, RunPrior *prior) {
        int64_t c = sqlite3_column_int64(st, 0), v = sqlite3_column_int64(st, 1);
        const char *name = (const char *) sqlite3_column_text(st, 2);
        if (c < 0 || v < 0 || (size_t) c >= plan->n_cells || (size_t) v >= plan->n_variants || !name ||
            strlen(name) > OUTPUT_METRIC_NAME_MAX)
                return -EBADMSG;
        return add_value(prior, c, v, name, sqlite3_column_double(st, 3));
}

int query_prior(Store *s, int64_t run_id, const Plan *plan, RunPrior *prior) {
        *prior = (RunPrior){};
        prior->done = calloc(plan->n_steps ? plan->n_steps : 1, sizeof(bool));
        prior->excluded = calloc(plan->n_cells * plan->n_variants, sizeof(bool));
        if (!prior->done || !prior->excluded) {
                run_prior_done(prior);
                return -ENOMEM;
        }
#define BUILTIN_COLUMN(name, expression) ", " expression
        int r;
        if ((r = each_prior_row(s,
                                "SELECT step FROM samples WHERE run_id = ?1"
                                " UNION ALL SELECT step FROM calibration WHERE run_id = ?1",
                                run_id, plan, prior, row_done)) < 0 ||
            (r = each_prior_row(
                     s,
                     "SELECT c.position, v.position FROM exclusions e JOIN cells c ON c.id = e.cell_id"
                     " JOIN variants v ON v.id = e.variant_id WHERE e.run_id = ?1",
                     run_id, plan, prior, row_excluded)) < 0 ||
            (r = each_prior_row(
                     s, "SELECT c.position, v.position" BUILTIN_METRICS(BUILTIN_COLUMN) MEASURED_SAMPLES,
                     run_id, plan, prior, row_builtin)) < 0 ||
            (r = each_prior_row(s, "SELECT c.position, v.position, m.name, m.value" MEASURED_METRICS, run_id,
                                plan, prior, row_reported)) < 0) {
                run_prior_done(prior);
                return r;
        }
#undef BUILTIN_COLUMN
        return 0;
}
