/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/history.h"
#include "db/query.h"
#include "db/sql.h"
#include "stats/changepoint.h"
#include "util/cleanup.h"

typedef struct RunInfo {
        int64_t id;
        char *started_at, *hostname, *metric;
        char *fingerprint;    /* NULL for runs older than the host fingerprint */
        char *label, *commit; /* run --label, --commit; or NULL */
        double min_effect, alpha;
        uint64_t seed;
} RunInfo;

/* The values of one point while its series is read. */
typedef struct Values {
        double *v;
        size_t n, capacity;
} Values;

typedef struct Builder {
        History *h;
        RunInfo *runs;
        size_t n_runs;
        Values *values; /* parallel to the current series' points */
        size_t values_capacity;
} Builder;

const char *history_change_word(HistoryChange c) {
        return c == HISTORY_REGRESSION ? "regression" : c == HISTORY_IMPROVEMENT ? "improvement" : NULL;
}

static void series_done(HistorySeries *s) {
        for (size_t i = 0; i < s->n_points; i++) {
                free(s->points[i].started_at);
                free(s->points[i].label);
                free(s->points[i].commit);
                free(s->points[i].hostname);
                free(s->points[i].env);
                free(s->points[i].preload);
                free(s->points[i].config_change);
        }
        free(s->points);
        free(s->cell);
        free(s->variant);
        free(s->host);
}

History *history_free(History *h) {
        if (!h)
                return NULL;
        for (size_t i = 0; i < h->n_series; i++)
                series_done(&h->series[i]);
        free(h->series);
        free(h->experiment);
        free(h->metric);
        free(h);
        return NULL;
}

static void builder_done(Builder *b) {
        for (size_t i = 0; i < b->n_runs; i++) {
                free(b->runs[i].started_at);
                free(b->runs[i].label);
                free(b->runs[i].commit);
                free(b->runs[i].hostname);
                free(b->runs[i].metric);
                free(b->runs[i].fingerprint);
        }
        free(b->runs);
        for (size_t i = 0; i < b->values_capacity; i++)
                free(b->values[i].v);
        free(b->values);
}

static const RunInfo *run_info(const Builder *b, int64_t id) {
        for (size_t i = 0; i < b->n_runs; i++)
                if (b->runs[i].id == id)
                        return &b->runs[i];
        return NULL;
}

/* The last q->last finished runs of the experiment, oldest first. */
static int read_runs(Store *s, const HistoryQuery *q, Builder *b) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(
                    store_db(s),
                    "SELECT r.id, r.started_at, h.hostname, r.metric, r.min_effect, r.alpha, r.seed,"
                    " r.host_fingerprint, r.label, r.commit_id"
                    " FROM runs r JOIN experiments x ON x.id = r.experiment_id"
                    " JOIN hosts h ON h.id = r.host_id"
                    " WHERE x.name = ?1 AND r.status IN ('done', 'interrupted')"
                    " AND (?2 = 0 OR r.id <= ?2) ORDER BY r.id DESC LIMIT ?3",
                    -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_text(st, 1, q->experiment, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, q->until_run);
        sqlite3_bind_int64(st, 3, (sqlite3_int64) q->last);
        if (!(b->runs = calloc(q->last + 1, sizeof(RunInfo)))) {
                sqlite3_finalize(st);
                return -ENOMEM;
        }
        int rc, r = 0;
        while (r == 0 && b->n_runs < q->last && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                RunInfo *x = &b->runs[b->n_runs++];
                *x = (RunInfo){ .id = sqlite3_column_int64(st, 0),
                                .started_at = sql_text(st, 1),
                                .hostname = sql_text(st, 2),
                                .metric = sql_text(st, 3),
                                .min_effect = sqlite3_column_double(st, 4),
                                .alpha = sqlite3_column_double(st, 5),
                                .seed = (uint64_t) sqlite3_column_int64(st, 6),
                                .fingerprint = sql_text_or_null(st, 7),
                                .label = sql_text_or_null(st, 8),
                                .commit = sql_text_or_null(st, 9) };
                if (!x->started_at || !x->hostname || !x->metric)
                        r = -ENOMEM;
        }
        if (r == 0 && b->n_runs < q->last && rc != SQLITE_DONE)
                r = -EIO;
        sqlite3_finalize(st);
        for (size_t i = 0; i < b->n_runs / 2; i++) { /* oldest first */
                RunInfo t = b->runs[i];
                b->runs[i] = b->runs[b->n_runs - 1 - i];
                b->runs[b->n_runs - 1 - i] = t;
        }
        return r;
}

/* SELECT run, cell label, variant name, value, host name, the variant's env and preload of
 * every measured sample of the runs read, one series (cell, variant, host) after another, each
 * in run order. NULL on ENOMEM; caller frees with
 * sqlite3_free. */
static char *values_sql(const HistoryQuery *q, const Builder *b, const char *metric) {
        char *ids = sqlite3_mprintf("%lld", (long long) b->runs[0].id);
        for (size_t i = 1; i < b->n_runs && ids; i++)
                ids = sqlite3_mprintf("%z, %lld", ids, (long long) b->runs[i].id); /* %z frees ids */
        const char *expression = query_builtin_metric_sql(metric);
        char *join =
                expression ? sqlite3_mprintf("")
                           : sqlite3_mprintf(" JOIN sample_metrics m ON m.sample_id = s.id AND m.name = %Q",
                                             strncmp(metric, "reported:", 9) == 0 ? metric + 9 : metric);
        /* Runs, then their cells and variants (filtered), then the samples of each pair: the
         * CROSS JOINs keep that order, so the samples are found by the whole samples_run prefix
         * (run, cell, variant) and, for wall time, read from the index alone. */
        char *sql = ids && join
                            ? sqlite3_mprintf(
                                      "SELECT s.run_id, c.label, v.name, %s, h.hostname, v.env, a.name FROM "
                                      "runs r CROSS JOIN cells c CROSS JOIN variants v CROSS JOIN samples s"
                                      " JOIN allocators a ON a.id = v.allocator_id"
                                      " JOIN hosts h ON h.id = r.host_id%s"
                                      " WHERE r.id IN (%s) AND c.run_id = r.id AND v.run_id = r.id"
                                      " AND s.run_id = r.id AND s.cell_id = c.id AND s.variant_id = v.id"
                                      " AND s.phase = 'sample' AND s.status = 'ok'",
                                      expression ? expression : "m.value", join, ids)
                            : NULL;
        sqlite3_free(ids);
        sqlite3_free(join);
        if (sql && q->variant)
                sql = sqlite3_mprintf("%z AND v.name = %Q", sql, q->variant);
        for (char *const *c = q->cells; sql && c && *c; c++) {
                const char *eq = strchr(*c, '='); /* checked by valid_cell_filter() */
                char *path = sqlite3_mprintf("$.\"%.*s\"", (int) (eq - *c), *c);
                sql = path ? sqlite3_mprintf("%z AND CAST(json_extract(c.params, %Q) AS TEXT) = %Q", sql,
                                             path, eq + 1)
                           : NULL;
                sqlite3_free(path);
        }
        return sql ? sqlite3_mprintf("%z ORDER BY c.label, v.name, h.hostname, s.run_id", sql) : NULL;
}

/* NAME=VALUE with a parameter name as specs allow it (letters, digits, '_', '-'). */
static bool valid_cell_filter(const char *filter) {
        const char *eq = strchr(filter, '=');
        if (!eq || eq == filter)
                return false;
        for (const char *p = filter; p < eq; p++)
                if (!(*p == '_' || *p == '-' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9')))
                        return false;
        return true;
}

static Values *point_values(Builder *b, size_t i) {
        if (i >= b->values_capacity) {
                size_t capacity = b->values_capacity ? 2 * b->values_capacity : 16;
                Values *v = realloc(b->values, capacity * sizeof(Values));
                if (!v)
                        return NULL;
                memset(v + b->values_capacity, 0, (capacity - b->values_capacity) * sizeof(Values));
                b->values = v;
                b->values_capacity = capacity;
        }
        return &b->values[i];
}

static int add_value(Values *v, double x) {
        if (v->n == v->capacity) {
                size_t capacity = v->capacity ? 2 * v->capacity : 64;
                double *d = realloc(v->v, capacity * sizeof(double));
                if (!d)
                        return -ENOMEM;
                v->v = d;
                v->capacity = capacity;
        }
        v->v[v->n++] = x;
        return 0;
}

/* Sets p->config_change when the variant's env or preload differs from the point before's:
 * "preload jemalloc -> mimalloc", "env {...} -> {...}". */
static int describe_change(const HistoryPoint *before, HistoryPoint *p) {
        if (strcmp(before->preload, p->preload) != 0)
                return asprintf(&p->config_change, "preload %s -> %s", before->preload, p->preload) < 0
                               ? -ENOMEM
                               : 0;
        if (strcmp(before->env, p->env) != 0)
                return asprintf(&p->config_change, "env %s -> %s", before->env, p->env) < 0 ? -ENOMEM : 0;
        return 0;
}

/* Where a series starts over: another host, or the variant set up differently. */
static int mark_new_baselines(Builder *b, HistorySeries *s, ChangePointRun *runs) {
        for (size_t i = 1; i < s->n_points; i++) {
                HistoryPoint *p = &s->points[i];
                const RunInfo *run = run_info(b, p->run_id),
                              *previous = run_info(b, s->points[i - 1].run_id);
                if (!run || !previous)
                        return -EBADMSG;
                if (previous->fingerprint && run->fingerprint &&
                    strcmp(previous->fingerprint, run->fingerprint) != 0)
                        p->host_changed = true;
                else {
                        int r = describe_change(&s->points[i - 1], p);
                        if (r < 0)
                                return r;
                }
                runs[i].new_baseline = p->host_changed || p->config_change;
        }
        return 0;
}

/* Statistics and change points of a series whose points' values are in b->values
 * (stats/changepoint.h). */
static int analyse_series(Builder *b, HistorySeries *s) {
        _cleanup_free_ ChangePointRun *runs = calloc(s->n_points ? s->n_points : 1, sizeof(ChangePointRun));
        _cleanup_free_ ChangePoint *found = calloc(s->n_points ? s->n_points : 1, sizeof(ChangePoint));
        if (!runs || !found)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_points; i++) {
                const RunInfo *run = run_info(b, s->points[i].run_id);
                if (!run)
                        return -EBADMSG; /* every point's run was read first */
                runs[i] = (ChangePointRun){ .values = b->values[i].v,
                                            .n = b->values[i].n,
                                            .seed = run->seed,
                                            .min_effect = run->min_effect,
                                            .alpha = run->alpha };
        }
        int r = mark_new_baselines(b, s, runs);
        if (r < 0 || (r = changepoint_find(runs, s->n_points, found)) < 0)
                return r;
        for (size_t i = 0; i < s->n_points; i++) {
                HistoryPoint *p = &s->points[i];
                const ChangePoint *c = &found[i];
                p->n = runs[i].n;
                p->median = c->median;
                p->lo = c->lo;
                p->hi = c->hi;
                p->against = c->against;
                p->baseline_runs = c->baseline_runs;
                p->baseline_from = c->baseline_runs ? s->points[c->baseline_from].run_id : 0;
                p->change = c->change == VERDICT_HIGHER  ? HISTORY_REGRESSION
                            : c->change == VERDICT_LOWER ? HISTORY_IMPROVEMENT
                                                         : HISTORY_STEADY;
        }
        return 0;
}

/* Appends a point for run_id to the series, with empty values. NULL on ENOMEM. */
static HistoryPoint *new_point(Builder *b, HistorySeries *s, int64_t run_id, const char *env,
                               const char *preload) {
        const RunInfo *run = run_info(b, run_id); /* the SQL only selects these runs */
        HistoryPoint *points = realloc(s->points, (s->n_points + 1) * sizeof(HistoryPoint));
        if (!points)
                return NULL;
        s->points = points;
        Values *v = point_values(b, s->n_points);
        if (!run || !v)
                return NULL;
        v->n = 0;
        HistoryPoint *p = &points[s->n_points++];
        *p = (HistoryPoint){ .run_id = run_id,
                             .started_at = strdup(run->started_at),
                             .hostname = strdup(run->hostname),
                             .env = strdup(env ? env : ""),
                             .preload = strdup(preload ? preload : ""),
                             .label = run->label ? strdup(run->label) : NULL,
                             .commit = run->commit ? strdup(run->commit) : NULL };
        return p->started_at && p->hostname && p->env && p->preload && (p->label || !run->label) &&
                               (p->commit || !run->commit)
                       ? p
                       : NULL;
}

static HistorySeries *new_series(History *h, const char *cell, const char *variant, const char *host) {
        HistorySeries *series = realloc(h->series, (h->n_series + 1) * sizeof(HistorySeries));
        if (!series)
                return NULL;
        h->series = series;
        HistorySeries *s = &series[h->n_series++];
        *s = (HistorySeries){ .cell = strdup(cell), .variant = strdup(variant), .host = strdup(host) };
        if (h->n_series > 1 && strcmp(series[0].host, host) != 0)
                h->many_hosts = true;
        return s->cell && s->variant && s->host ? s : NULL;
}

static int read_values(Store *st, const char *sql, Builder *b) {
        sqlite3_stmt *stmt;
        if (sqlite3_prepare_v2(store_db(st), sql, -1, &stmt, NULL) != SQLITE_OK)
                return -EIO;
        History *h = b->h;
        HistorySeries *s = NULL;
        int rc, r = 0;
        while (r >= 0 && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
                int64_t run_id = sqlite3_column_int64(stmt, 0);
                const char *cell = (const char *) sqlite3_column_text(stmt, 1);
                const char *variant = (const char *) sqlite3_column_text(stmt, 2);
                const char *host = (const char *) sqlite3_column_text(stmt, 4);
                if (!s || strcmp(s->cell, cell) != 0 || strcmp(s->variant, variant) != 0 ||
                    strcmp(s->host, host) != 0) {
                        if (s && (r = analyse_series(b, s)) < 0)
                                break;
                        if (!(s = new_series(h, cell, variant, host))) {
                                r = -ENOMEM;
                                break;
                        }
                }
                if (s->n_points == 0 || s->points[s->n_points - 1].run_id != run_id)
                        if (!new_point(b, s, run_id, (const char *) sqlite3_column_text(stmt, 5),
                                       (const char *) sqlite3_column_text(stmt, 6))) {
                                r = -ENOMEM;
                                break;
                        }
                r = add_value(&b->values[s->n_points - 1], sqlite3_column_double(stmt, 3));
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = -EIO;
        sqlite3_finalize(stmt);
        if (r >= 0 && s)
                r = analyse_series(b, s);
        return r;
}

/* Strings with their runs of digits compared as numbers: "n=2" before "n=10". */
static int natural_compare(const char *a, const char *b) {
        while (*a && *b) {
                if (isdigit((unsigned char) *a) && isdigit((unsigned char) *b)) {
                        while (*a == '0')
                                a++;
                        while (*b == '0')
                                b++;
                        size_t na = strspn(a, "0123456789"), nb = strspn(b, "0123456789");
                        if (na != nb)
                                return na < nb ? -1 : 1;
                        int c = strncmp(a, b, na);
                        if (c != 0)
                                return c;
                        a += na;
                        b += nb;
                } else if (*a != *b) {
                        return (unsigned char) *a < (unsigned char) *b ? -1 : 1;
                } else {
                        a++;
                        b++;
                }
        }
        return (unsigned char) *a - (unsigned char) *b;
}

/* Series by cell (numbers in parameter values as numbers), variant, then host. */
static int compare_series(const void *x, const void *y) {
        const HistorySeries *a = x, *b = y;
        int c = natural_compare(a->cell, b->cell);
        if (c == 0)
                c = strcmp(a->variant, b->variant);
        return c != 0 ? c : strcmp(a->host, b->host);
}

int query_history(Store *s, const HistoryQuery *q, History **ret) {
        for (char *const *c = q->cells; c && *c; c++)
                if (!valid_cell_filter(*c))
                        return -EINVAL;
        _cleanup_(history_freep) History *h = calloc(1, sizeof(History));
        _cleanup_(builder_done) Builder b = { .h = h };
        if (!h || !(h->experiment = strdup(q->experiment)))
                return -ENOMEM;
        int r = read_runs(s, q, &b);
        if (r < 0)
                return r;
        if (b.n_runs == 0)
                return -ENOENT;
        h->n_runs = b.n_runs;
        if (!(h->metric = strdup(q->metric ? q->metric : b.runs[b.n_runs - 1].metric)))
                return -ENOMEM;
        char *sql = values_sql(q, &b, h->metric);
        if (!sql)
                return -ENOMEM;
        r = read_values(s, sql, &b);
        sqlite3_free(sql);
        if (r < 0)
                return r;
        if (h->n_series > 1) /* qsort wants an array, even of none */
                qsort(h->series, h->n_series, sizeof(HistorySeries), compare_series);
        *ret = TAKE_PTR(h);
        return 0;
}
