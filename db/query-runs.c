/* SPDX-License-Identifier: MIT */
/*
 * Reading which runs there are: run lists, the ids commands name runs by, a run's metrics and
 * its variants' allocators. Every column is read defensively: a NULL or unexpected value from an
 * old or hand-edited database becomes an empty string or zero, never a crash.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/query-internal.h"
#include "db/run-field.h"
#include "db/sql.h"
#include "runner/metric.h"
#include "util/strv.h"

void query_runs_free(RunSummary *runs, size_t n) {
        for (size_t i = 0; i < n; i++)
                run_fields_free(&runs[i], true);
        free(runs);
}

static int read_summary_row(sqlite3_stmt *st, void *element) {
        return run_fields_read(st, 0, true, element);
}

static void clear_summary(void *element) {
        run_fields_free(element, true);
}

int query_runs(Store *s, const char *experiment, size_t limit, RunSummary **ret, size_t *ret_n) {
        _cleanup_free_ char *columns = run_fields_select(true), *sql = NULL;
        if (!columns || asprintf(&sql,
                                 "SELECT %s" RUN_FROM " WHERE ?1 IS NULL OR experiments.name = ?1"
                                 " ORDER BY runs.started_at DESC, runs.id DESC LIMIT ?2",
                                 columns) < 0)
                return -ENOMEM;
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_text(st, 1, experiment, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, (sqlite3_int64) limit);
        void *list = NULL;
        int r = sql_collect(st, sizeof(RunSummary), read_summary_row, clear_summary, &list, ret_n);
        if (r >= 0)
                *ret = list;
        return r;
}

/* The run id a one-value SELECT finds, with ?1 bound to text (if not NULL), ?2 to id and ?3 to
 * text2 (if not NULL; where the statement has them); -ENOENT when it finds none. */
static int query_run_id2(Store *s, const char *sql, const char *text, int64_t id, const char *text2,
                         int64_t *ret) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        if (text)
                sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, id);
        if (text2)
                sqlite3_bind_text(st, 3, text2, -1, SQLITE_STATIC);
        int r = -ENOENT;
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
                *ret = sqlite3_column_int64(st, 0);
                r = 0;
        }
        sqlite3_finalize(st);
        return r;
}

static int query_run_id(Store *s, const char *sql, const char *text, int64_t id, int64_t *ret) {
        return query_run_id2(s, sql, text, id, NULL, ret);
}

int query_run_pruned(Store *s, int64_t run_id, char **ret) {
        return sql_queryf(store_db(s), NULL, ret, "SELECT pruned_at FROM runs WHERE id = %lld",
                          (long long) run_id);
}

int query_latest_run(Store *s, int64_t *ret) {
        return query_run_id(s, "SELECT max(id) FROM runs", NULL, 0, ret);
}

int query_latest_done_run(Store *s, const char *experiment, const char *machine, int64_t *ret) {
        return query_run_id2(
                s,
                "SELECT r.id FROM runs r JOIN experiments x ON x.id = r.experiment_id"
                " JOIN hosts h ON h.id = r.host_id WHERE x.name = ?1 AND r.status = 'done'"
                " AND " STORE_SQL_MACHINE("r", "h") " = ?3 ORDER BY r.started_at DESC, r.id DESC"
                                                    " LIMIT 1",
                experiment, 0, machine, ret);
}

int query_suite_run(Store *s, int64_t run) {
        int64_t found;
        int r = query_run_exists(s, run);
        if (r < 0)
                return r;
        r = query_run_id(s, "SELECT id FROM runs WHERE id = ?2 AND label LIKE 'suite %'", NULL, run, &found);
        return r == -ENOENT ? -EXDEV : r;
}

int query_suite_run_of(Store *s, const char *experiment, int64_t of_run, int64_t *ret) {
        return query_run_id(s,
                            "SELECT max(r.id) FROM runs r JOIN experiments x ON x.id = r.experiment_id"
                            " WHERE x.name = ?1 AND r.status = 'done'"
                            " AND r.label = (SELECT label FROM runs WHERE id = ?2)",
                            experiment, of_run, ret);
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

const char *query_builtin_metric_sql(const char *metric) {
        const BuiltinMetric *m = builtin_metric(metric);
        return m ? m->sql : NULL;
}

char *query_pruned_values_sql(const char *metric, const char *keys, const char *where) {
        /* A value alone is the value of round p.key (db/migrations.c, 31 -> 32); its type
         * decides, as parsing it again (->>) takes five times as long as reading it. */
        return sqlite3_mprintf(
                "SELECT %s%sCASE p.type WHEN 'array' THEN p.value ->> 0 ELSE p.value END,"
                " CASE p.type WHEN 'array' THEN p.value ->> 1 ELSE p.key END"
                " FROM pruned_values s JOIN cells c ON c.id = s.cell_id"
                " JOIN variants v ON v.id = s.variant_id, json_each(s.points) p"
                " WHERE s.run_id = ?1%s AND s.metric = %Q AND (p.type IN ('integer', 'real')"
                " OR (p.type = 'array' AND json_type(p.value, '$[0]') IN ('integer', 'real')))",
                keys, *keys ? ", " : "", where, metric);
}

static int row_metric_name(sqlite3_stmt *st, void *userdata) {
        char ***names = userdata;
        const char *name = (const char *) sqlite3_column_text(st, 0);
        char *metric = NULL;
        if (asprintf(&metric, "%s%s", builtin_metric(name) ? "" : "reported:", name) < 0)
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

static void clear_allocator(void *element) {
        VariantAllocator *a = element;
        free(a->variant);
        free(a->allocator);
        free(a->path);
        free(a->sha256);
        free(a->version);
        free(a->probe_report);
        free(a->build);
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
                .build = sql_text_or_null(st, 6),
        };
        return a->variant && a->allocator && a->path && a->sha256 && a->version &&
                               (a->build || sqlite3_column_type(st, 6) == SQLITE_NULL)
                       ? 0
                       : -ENOMEM;
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
                    "  WHERE x.variant_id = v.id AND x.phase = 'smoke' ORDER BY x.id LIMIT 1), v.build"
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
