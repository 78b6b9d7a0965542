/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "db/prune.h"
#include "db/query.h"
#include "db/sql.h"
#include "util/cleanup.h"

/* The runs to prune, oldest first: per experiment and machine, numbered from the newest (for
 * keep_last) and from the oldest (for keep_every). */
static const char select_sql[] =
        "WITH series AS (SELECT r.id, r.status, r.pruned_at, r.started_at,"
        "  row_number() OVER (PARTITION BY r.experiment_id, " STORE_SQL_MACHINE(
                "r", "h") "   ORDER BY r.started_at DESC, r.id DESC) AS newest,"
                          "  row_number() OVER (PARTITION BY r.experiment_id, " STORE_SQL_MACHINE(
                                  "r",
                                  "h") "   ORDER BY r.started_at, r.id) AS oldest"
                                       "  FROM runs r JOIN hosts h ON h.id = r.host_id JOIN experiments x "
                                       "ON x.id = r.experiment_id"
                                       "  WHERE ?1 IS NULL OR x.name = ?1)"
                                       " SELECT id, (SELECT count(*) FROM samples s WHERE s.run_id = "
                                       "series.id AND s.status = 'ok'"
                                       "  AND s.phase IN ('sample', 'warmup')) FROM series"
                                       " WHERE status <> 'running' AND pruned_at IS NULL AND newest > ?2"
                                       " AND (?3 = 0 OR started_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', "
                                       "'-' || ?3 || ' seconds'))"
                                       " AND (?4 <= 1 OR (oldest - 1) % ?4 <> 0)"
                                       " ORDER BY started_at, id";

/* Keeps the values of run's metric, then drops its measured and warm-up samples that succeeded
 * (their metrics, probe reports and timelines go with them: ON DELETE CASCADE). */
static int prune_run(sqlite3 *db, int64_t run) {
        _cleanup_free_ char *metric = NULL;
        int r = sql_queryf(db, NULL, &metric, "SELECT metric FROM runs WHERE id = %lld", (long long) run);
        if (r < 0)
                return r;
        if (!metric)
                return -EBADMSG;
        const char *expression = query_builtin_metric_sql(metric);
        const char *name = strncmp(metric, "reported:", 9) == 0 ? metric + 9 : metric;
        _cleanup_(sqlite3_freep) char *values =
                expression ? sqlite3_mprintf(
                                     "SELECT s.cell_id, s.variant_id, %s AS value, s.round FROM samples s"
                                     " WHERE s.run_id = %lld AND s.phase = 'sample' AND s.status = 'ok'"
                                     " AND %s IS NOT NULL",
                                     expression, (long long) run, expression)
                           : sqlite3_mprintf(
                                     "SELECT s.cell_id, s.variant_id, m.value, s.round FROM samples s"
                                     " JOIN sample_metrics m ON m.sample_id = s.id AND m.name = %Q"
                                     " WHERE s.run_id = %lld AND s.phase = 'sample' AND s.status = 'ok'",
                                     name, (long long) run);
        if (!values)
                return -ENOMEM;
        if ((r = sql_begin(db)) < 0)
                return r;
        r = sql_execf(
                db,
                "INSERT INTO pruned_values (run_id, cell_id, variant_id, metric, points)"
                " SELECT %lld, cell_id, variant_id, %Q,"
                "  CASE WHEN min(round) = 0 AND max(round) = count(*) - 1"
                "  AND count(DISTINCT round) = count(*) THEN json_group_array(value)"
                "  ELSE json_group_array(json_array(value, round)) END"
                " FROM (%s ORDER BY 1, 2, 4) GROUP BY cell_id, variant_id;"
                "DELETE FROM samples WHERE run_id = %lld AND status = 'ok' AND phase IN ('sample', "
                "'warmup');"
                "UPDATE runs SET pruned_at = strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', 'now') WHERE id = %lld",
                (long long) run, metric, values, (long long) run, (long long) run);
        return sql_commit(db, r);
}

typedef struct Selected {
        int64_t *runs;
        size_t n;
        int64_t samples;
} Selected;

static int row_selected(sqlite3_stmt *st, void *userdata) {
        Selected *sel = userdata;
        int64_t *runs = realloc(sel->runs, (sel->n + 1) * sizeof(int64_t));
        if (!runs)
                return -ENOMEM;
        sel->runs = runs;
        runs[sel->n++] = sqlite3_column_int64(st, 0);
        sel->samples += sqlite3_column_int64(st, 1);
        return 0;
}

int store_prune(Store *s, const PruneQuery *q, PruneTally *ret) {
        sqlite3 *db = store_db(s);
        *ret = (PruneTally){};
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, select_sql, -1, &st, NULL) != SQLITE_OK)
                return sql_failed(db);
        sqlite3_bind_text(st, 1, q->experiment, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, (sqlite3_int64) q->keep_last);
        sqlite3_bind_int64(st, 3, (sqlite3_int64) q->older_than_s);
        sqlite3_bind_int64(st, 4, (sqlite3_int64) q->keep_every);
        Selected sel = {};
        int rc, r = 0;
        while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
                r = row_selected(st, &sel);
        if (r >= 0 && rc != SQLITE_DONE)
                r = sql_failed(db);
        sqlite3_finalize(st);
        for (size_t i = 0; r >= 0 && !q->dry_run && i < sel.n; i++)
                r = prune_run(db, sel.runs[i]);
        free(sel.runs);
        if (r < 0)
                return r;
        *ret = (PruneTally){ .runs = sel.n, .samples = sel.samples };
        return 0;
}

int store_vacuum(Store *s) {
        sqlite3 *db = store_db(s);
        return sqlite3_exec(db, "VACUUM", NULL, NULL, NULL) == SQLITE_OK ? 0 : sql_failed(db);
}
