/* SPDX-License-Identifier: MIT */
/*
 * Reading a run's report: its recorded fields (db/run-field.h), cells, variants, statistics,
 * samples and failures, each by a query whose rows fill the Report; query-verdicts.c then
 * decides the comparisons. Read defensively, as query-runs.c is.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/query-internal.h"
#include "db/run-field.h"
#include "db/sql.h"
#include "runner/options.h"
#include "util/cleanup.h"

Report *query_report_free(Report *r) {
        if (!r)
                return NULL;
        run_fields_free(r, false);
        for (size_t i = 0; r->startup && i < r->n_variants; i++)
                free(r->startup[i].values);
        free(r->startup);
        free(r->timeline_source);
        /* The arrays of a report that failed to be read may be missing, each on its own. */
        for (size_t i = 0; r->cell_labels && i < r->n_cells; i++)
                free(r->cell_labels[i]);
        free(r->cell_labels);
        for (size_t i = 0; i < r->n_variants; i++) {
                free(r->variant_names ? r->variant_names[i] : NULL);
                free(r->allocator_names ? r->allocator_names[i] : NULL);
                free(r->allocator_versions ? r->allocator_versions[i] : NULL);
        }
        free(r->variant_names);
        free(r->allocator_names);
        free(r->allocator_versions);
        for (size_t i = 0; r->entries && i < r->n_cells * r->n_variants; i++) {
                free(r->entries[i].first_failure);
                free(r->entries[i].excluded_reason);
                free(r->entries[i].own_layer_program);
                for (size_t k = 0; k < r->entries[i].n_memory_figures; k++)
                        free(r->entries[i].memory_figures[k].metric);
                free(r->entries[i].memory_figures);
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
        int r = run_fields_read(st, 0, false, rep);
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
        /* Under callgrind the samples' time and peak RSS are valgrind's: no trade-off of the
         * program's. */
        e->has_tradeoff = !rep->timed_under;
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
 * value, round), or of a pruned run the values kept. Caller frees. */
static char *sample_values_sql(const char *metric) {
        const char *expression = query_builtin_metric_sql(metric);
        const char *name = strncmp(metric, "reported:", 9) == 0 ? metric + 9 : metric;
        _cleanup_(sqlite3_freep) char *pruned =
                query_pruned_values_sql(metric, "c.position, v.position", "");
        char *sql =
                !pruned ? NULL
                : expression
                        ? sqlite3_mprintf("SELECT c.position, v.position, %s, s.round" MEASURED_SAMPLES
                                          " AND %s IS NOT NULL UNION ALL %s ORDER BY 4",
                                          expression, expression, pruned)
                        : sqlite3_mprintf("SELECT c.position, v.position, m.value, s.round" MEASURED_METRICS
                                          " AND m.name = %Q UNION ALL %s ORDER BY 4",
                                          name, pruned);
        char *copy = sql ? strdup(sql) : NULL;
        sqlite3_free(sql);
        return copy;
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
        e->smoke_large_processes = sqlite3_column_int64(st, 10);
        e->smoke_allocating_processes = sqlite3_column_int64(st, 11);
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

static int row_exit_memory(Report *rep, sqlite3_stmt *st) {
        ReportEntry *e = entry_at(rep, st);
        if (!e)
                return -EBADMSG;
        e->has_exit_memory = true;
        e->exit_rss_bytes = sqlite3_column_int64(st, 2);
        e->exit_pss_anon_bytes = sqlite3_column_int64(st, 3);
        e->exit_anon_huge_bytes = sqlite3_column_int64(st, 4);
        e->exit_memory_processes = sqlite3_column_int64(st, 5);
        e->exit_tree_processes = sqlite3_column_int64(st, 6);
        return 0;
}

static int row_allocator_figures(Report *rep, sqlite3_stmt *st) {
        ReportEntry *e = entry_at(rep, st);
        if (!e)
                return -EBADMSG;
        json_t *figures = json_loads((const char *) sqlite3_column_text(st, 2), 0, NULL);
        if (!json_is_object(figures)) {
                json_decref(figures);
                return -EBADMSG;
        }
        allocator_figures_from_json(figures, &e->allocator_figures);
        json_decref(figures);
        e->has_allocator_figures = true;
        return 0;
}

static int row_memory_figure(Report *rep, sqlite3_stmt *st) {
        ReportEntry *e = entry_at(rep, st);
        if (!e)
                return -EBADMSG;
        ReportFigure *grown = realloc(e->memory_figures, (e->n_memory_figures + 1) * sizeof(ReportFigure));
        if (!grown)
                return -ENOMEM;
        e->memory_figures = grown;
        ReportFigure *f = &grown[e->n_memory_figures];
        if (!(f->metric = sql_text(st, 2)))
                return -ENOMEM;
        f->median = sqlite3_column_double(st, 3);
        f->n = sqlite3_column_int64(st, 4);
        e->n_memory_figures++;
        return 0;
}

static int row_timeline_source(Report *rep, sqlite3_stmt *st) {
        free(rep->timeline_source);
        if (!(rep->timeline_source = sql_text(st, 0)))
                return -ENOMEM;
        rep->timeline_period_min_ns = (uint64_t) sqlite3_column_int64(st, 1);
        rep->timeline_period_max_ns = (uint64_t) sqlite3_column_int64(st, 2);
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

/* The report's queries (?1 = the run's id) whose rows do not depend on the metric shown, each
 * with the function that takes its rows. */
static const struct {
        const char *sql;
        int (*row)(Report *rep, sqlite3_stmt *st);
} report_queries[] = {
        { "SELECT position, label FROM cells WHERE run_id = ?1", row_cell },
        { "SELECT v.position, v.name, a.name, a.version, v.is_baseline, v.is_aa FROM variants v"
          " JOIN allocators a ON a.id = v.allocator_id WHERE v.run_id = ?1",
          row_variant },
        { "SELECT c.position, v.position, count(s.noisy), total(s.noisy),"
          " total(s.noisy AND s.steal_ns > s.other_cpu_ns),"
          " total(s.noisy AND s.other_cpu_ns >= s.steal_ns AND s.other_cpu_ns * 4 > s.wall_ns),"
          " total(s.status = 'skipped-busy') FROM samples s"
          " JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id"
          " WHERE s.run_id = ?1 AND s.phase = 'sample' AND s.noisy IS NOT NULL"
          " GROUP BY s.cell_id, s.variant_id",
          row_noisy },
        { "SELECT c.position, v.position, t.median, m.median FROM stats t"
          " JOIN stats m ON m.cell_id = t.cell_id AND m.variant_id = t.variant_id"
          " AND m.metric = 'maxrss' JOIN cells c ON c.id = t.cell_id"
          " JOIN variants v ON v.id = t.variant_id WHERE t.run_id = ?1 AND t.metric = 'wall'",
          row_tradeoff },
        { "SELECT c.position, v.position, count(*),"
          " (SELECT s2.status || CASE WHEN s2.status = 'signal' THEN ' ' || s2.signal"
          "   WHEN s2.status = 'exit' THEN ' ' || s2.exit_code ELSE '' END"
          "  FROM samples s2 WHERE s2.cell_id = s.cell_id AND s2.variant_id = s.variant_id"
          "  AND s2.status <> 'ok' ORDER BY s2.id LIMIT 1), sum(s.phase = 'sample')"
          " FROM samples s JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = "
          "s.variant_id"
          " WHERE s.run_id = ?1 AND s.status <> 'ok' GROUP BY s.cell_id, s.variant_id",
          row_failure_count },
        { "SELECT c.position, v.position,"
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
          "  WHERE json_type(t.value, '$.exec_without_probe') = 'object' LIMIT 1),"
          " (SELECT count(*) FROM json_each(p.report, '$.processes') t"
          "  WHERE json_extract(t.value, '$.memory_at_exit.rss_bytes') * 4 >="
          "  max(json_extract(p.report, '$.counters.peak_live_requested_bytes'), 16 << 20)),"
          " (SELECT count(DISTINCT json_extract(t.value, '$.pid')) FROM json_each(p.report, '$.processes') t"
          "  WHERE json_extract(t.value, '$.calls') > 0)"
          " FROM samples s JOIN probe_reports p ON p.sample_id = s.id"
          " JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id"
          " WHERE s.run_id = ?1 AND s.phase = 'smoke' AND s.status = 'ok'",
          row_smoke_peaks },
        { "SELECT c.position, v.position, json_extract(p.report, '$.memory_at_exit.rss_bytes'),"
          " json_extract(p.report, '$.memory_at_exit.pss_anon_bytes'),"
          " json_extract(p.report, '$.memory_at_exit.anon_huge_bytes'), json_extract(p.report, "
          "'$.memory_processes'),"
          " (SELECT count(DISTINCT json_extract(t.value, '$.pid')) FROM json_each(p.report, '$.processes') "
          "t)"
          " FROM samples s JOIN probe_reports p ON p.sample_id = s.id"
          " JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id"
          " WHERE s.run_id = ?1 AND s.phase = 'smoke' AND s.status = 'ok'"
          " AND json_type(p.report, '$.memory_at_exit') = 'object'",
          row_exit_memory },
        { "SELECT c.position, v.position,"
          " json_extract(p.report, '$.allocator_stats.figures')"
          " FROM samples s JOIN probe_reports p ON p.sample_id = s.id"
          " JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id"
          " WHERE s.run_id = ?1 AND s.phase = 'smoke' AND s.status = 'ok'"
          " AND json_type(p.report, '$.allocator_stats.figures') = 'object'",
          row_allocator_figures },
        /* The phases in the order the program marked them (their first reading in the first
         * sample that has them). */
        { "SELECT c.position, v.position, t.metric, t.median, t.n FROM stats t"
          " JOIN cells c ON c.id = t.cell_id JOIN variants v ON v.id = t.variant_id"
          " WHERE t.run_id = ?1 AND t.metric GLOB 'mem_*_bytes'"
          " ORDER BY c.position, v.position, CASE t.metric WHEN 'mem_peak_bytes' THEN -3"
          " WHEN 'mem_mean_bytes' THEN -2 WHEN 'mem_last_bytes' THEN -1 ELSE"
          " (SELECT min(json_extract(m.value, '$.t_ms')) FROM samples s"
          "  JOIN sample_timelines tl ON tl.sample_id = s.id, json_each(tl.marks) m"
          "  WHERE s.run_id = ?1 AND s.cell_id = t.cell_id AND s.variant_id = t.variant_id"
          "  AND 'mem_at_' || json_extract(m.value, '$.name') || '_bytes' = t.metric) END",
          row_memory_figure },
        { "SELECT group_concat(source, ' and '), min(lo), max(hi) FROM (SELECT tl.source,"
          " min(tl.period_ns >> tl.thinned) lo, max(tl.period_ns) hi FROM sample_timelines tl"
          " JOIN samples s ON s.id = tl.sample_id WHERE s.run_id = ?1 GROUP BY tl.source) HAVING count(*) > "
          "0",
          row_timeline_source },
        { "SELECT count(*) FROM (SELECT s.cell_id FROM samples s JOIN runs r ON r.id = s.run_id"
          " WHERE s.run_id = ?1 AND s.status = 'ok' AND r.verify <> 'none'"
          " GROUP BY s.cell_id HAVING max(coalesce(s.output_size, 1)) = 0)",
          row_nothing_verified },
        { "SELECT c.position, v.position, e.reason FROM exclusions e"
          " JOIN cells c ON c.id = e.cell_id JOIN variants v ON v.id = e.variant_id"
          " WHERE e.run_id = ?1",
          row_exclusion },
        { "SELECT c.label, v.name, s.phase, s.round, s.status, s.exit_code, s.signal,"
          " s.mismatch_offset, s.output_size, s.reference_size, s.wall_ns, s.exec_errno,"
          " s.stderr_excerpt, s.detail FROM samples s JOIN cells c ON c.id = s.cell_id"
          " JOIN variants v ON v.id = s.variant_id"
          " WHERE s.run_id = ?1 AND s.status <> 'ok' ORDER BY s.id",
          row_failure },
};

/* The run's recorded fields; with metric_override another metric than the primary one, with
 * its own direction and unit. Returns 0, -ENOENT (no such run), -ENOMEM, -EIO. */
static int read_header(Store *s, int64_t run_id, const char *metric_override, Report *rep) {
        _cleanup_free_ char *columns = run_fields_select(false), *header_sql = NULL;
        if (!columns || asprintf(&header_sql, "SELECT %s" RUN_FROM " WHERE runs.id = ?1", columns) < 0)
                return -ENOMEM;
        int r = for_each_row(s, run_id, header_sql, rep, row_header);
        if (r < 0)
                return r;
        if (!rep->run.status)
                return -ENOENT;
        if (!metric_override || strcmp(metric_override, rep->run.metric) == 0)
                return 0;
        char *copy = strdup(metric_override);
        if (!copy)
                return -ENOMEM;
        free(rep->run.metric);
        rep->run.metric = copy;
        free(rep->run.metric_unit);
        rep->run.metric_unit = NULL;
        return query_metric_def(rep->metric_defs, copy, &rep->run.higher_is_better, &rep->run.metric_unit);
}

static int allocate_rows(Report *rep) {
        size_t nc = rep->n_cells, nv = rep->n_variants;
        rep->cell_labels = calloc(nc + 1, sizeof(char *));
        rep->variant_names = calloc(nv + 1, sizeof(char *));
        rep->allocator_names = calloc(nv + 1, sizeof(char *));
        rep->allocator_versions = calloc(nv + 1, sizeof(char *));
        rep->entries = calloc(nc * nv + 1, sizeof(ReportEntry));
        rep->failures = calloc(QUERY_MAX_FAILURES, sizeof(ReportFailure));
        return rep->cell_labels && rep->variant_names && rep->allocator_names && rep->allocator_versions &&
                               rep->entries && rep->failures
                       ? 0
                       : -ENOMEM;
}

/* The statistics of the metric shown: "reported:NAME" is stored as NAME. */
static char *stats_sql(const char *metric) {
        if (strncmp(metric, "reported:", 9) == 0)
                metric += 9;
        char *quoted = sqlite3_mprintf("%Q", metric), *sql = NULL;
        if (quoted &&
            asprintf(&sql,
                     "SELECT c.position, v.position, s.n, s.median, s.mad, s.mean, s.stddev, s.min, s.max"
                     " FROM stats s JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id"
                     " WHERE s.run_id = ?1 AND s.metric = %s",
                     quoted) < 0)
                sql = NULL;
        sqlite3_free(quoted);
        return sql;
}

/* Every query's rows into rep, then what they say (query-verdicts.c). */
static int read_rows(Store *s, int64_t run_id, bool compare_variants, Report *rep) {
        int r = 0;
        for (size_t i = 0; i < ELEMENTSOF(report_queries) && r >= 0; i++)
                r = for_each_row(s, run_id, report_queries[i].sql, rep, report_queries[i].row);
        _cleanup_free_ char *stats = stats_sql(rep->run.metric),
                            *values = sample_values_sql(rep->run.metric);
        if (r >= 0 && (!stats || !values))
                r = -ENOMEM;
        if (r < 0 || (r = for_each_row(s, run_id, stats, rep, row_stats)) < 0 ||
            (r = for_each_row(s, run_id, values, rep, row_value)) < 0 ||
            (r = query_analyse_entries(rep, compare_variants)) < 0 ||
            (r = query_startup(s, run_id, rep)) < 0)
                return r;
        return query_mark_pareto_front(rep);
}

static int read_report(Store *s, int64_t run_id, const char *metric_override, bool compare_variants,
                       Report **ret) {
        _cleanup_(query_report_freep) Report *rep = calloc(1, sizeof(Report));
        if (!rep)
                return -ENOMEM;
        rep->aa_variant = SIZE_MAX;
        int r = read_header(s, run_id, metric_override, rep);
        if (r < 0 || (r = allocate_rows(rep)) < 0 || (r = read_rows(s, run_id, compare_variants, rep)) < 0)
                return r;
        size_t nc = rep->n_cells, nv = rep->n_variants;
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

void query_timelines_free(CellTimeline *list, size_t n) {
        for (size_t i = 0; i < n; i++)
                timeline_done(&list[i].timeline);
        free(list);
}

typedef struct TimelineRows {
        CellTimeline *list;
        size_t n;
} TimelineRows;

static int row_cell_timeline(sqlite3_stmt *st, void *userdata) {
        TimelineRows *rows = userdata;
        CellTimeline *grown = realloc(rows->list, (rows->n + 1) * sizeof(CellTimeline));
        if (!grown)
                return -ENOMEM;
        rows->list = grown;
        CellTimeline *c = &grown[rows->n];
        *c = (CellTimeline){ .cell = (size_t) sqlite3_column_int64(st, 0),
                             .variant = (size_t) sqlite3_column_int64(st, 1) };
        int r = timeline_decode(sqlite3_column_blob(st, 2), (size_t) sqlite3_column_bytes(st, 2),
                                (const char *) sqlite3_column_text(st, 3), &c->timeline);
        if (r >= 0)
                rows->n++;
        return r;
}

int query_timelines(Store *s, int64_t run_id, CellTimeline **ret, size_t *ret_n) {
        TimelineRows rows = {};
        int r = sql_each_row(
                store_db(s),
                "SELECT c.position, v.position, tl.points, tl.marks FROM (SELECT s.id, s.cell_id, "
                "s.variant_id,"
                " row_number() OVER w AS k, count(*) OVER (PARTITION BY s.cell_id, s.variant_id) AS n"
                " FROM samples s JOIN sample_metrics m ON m.sample_id = s.id AND m.name = 'mem_mean_bytes'"
                " WHERE s.run_id = ?1 AND s.phase = 'sample' AND s.status = 'ok'"
                " WINDOW w AS (PARTITION BY s.cell_id, s.variant_id ORDER BY m.value, s.id)) t"
                " JOIN sample_timelines tl ON tl.sample_id = t.id JOIN cells c ON c.id = t.cell_id"
                " JOIN variants v ON v.id = t.variant_id WHERE t.k = (t.n + 1) / 2 ORDER BY c.position, "
                "v.position",
                run_id, row_cell_timeline, &rows);
        if (r < 0) {
                query_timelines_free(rows.list, rows.n);
                return r;
        }
        *ret = rows.list;
        *ret_n = rows.n;
        return 0;
}
