/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/history-internal.h"
#include "db/history.h"
#include "db/query.h"
#include "db/sql.h"
#include "stats/changepoint.h"
#include "stats/sampleset.h"
#include "stats/stats.h"
#include "util/cleanup.h"

typedef struct RunInfo {
        int64_t id;
        char *started_at, *hostname, *metric;
        char *machine; /* what its series are filed under (runs.machine, else the host name) */
        /* The host's setup (its fingerprint's facts but the machine-id: a machine accepted as the
         * same with another machine-id goes on in its series); NULL for runs older than the host
         * fingerprint */
        char *fingerprint;
        char *label, *commit; /* run --label, --commit; or NULL */
        double min_effect, alpha;
} RunInfo;

/* The values of one point while its series is read. */
typedef struct Values {
        double *v;
        size_t n, capacity;
} Values;

typedef struct Builder {
        History *h;
        int64_t experiment_id;
        RunInfo *runs;
        size_t n_runs;
        bool relative; /* HistoryQuery.relative, read from samples (not medians_only) */
} Builder;

static void builder_done(Builder *b) {
        for (size_t i = 0; i < b->n_runs; i++) {
                free(b->runs[i].started_at);
                free(b->runs[i].label);
                free(b->runs[i].commit);
                free(b->runs[i].hostname);
                free(b->runs[i].machine);
                free(b->runs[i].metric);
                free(b->runs[i].fingerprint);
        }
        free(b->runs);
}

static const RunInfo *run_info(const Builder *b, int64_t id) {
        for (size_t i = 0; i < b->n_runs; i++)
                if (b->runs[i].id == id)
                        return &b->runs[i];
        return NULL;
}

/* The last q->last finished runs of the experiment in the order they ran (started_at; the
 * local id, which is the order they arrived here in, only breaks ties), oldest first: from the
 * runs_history index alone, read backwards from the experiment's latest run (a join with
 * experiments would make SQLite read all of them and sort). */
static int read_runs(Store *s, const HistoryQuery *q, Builder *b) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(
                    store_db(s),
                    "SELECT r.id, r.started_at, h.hostname, r.metric, r.min_effect, r.alpha,"
                    " CASE WHEN r.host_fingerprint IS NOT NULL THEN h.kernel || char(10) || h.cpu_model"
                    " || char(10) || h.cpus || char(10) || h.glibc || char(10) || h.thp || char(10)"
                    " || json_remove(r.host_facts, '$.machine_id') END,"
                    " r.label, r.commit_id, r.experiment_id,"
                    " " STORE_SQL_MACHINE(
                            "r", "h") " FROM runs r INDEXED BY runs_history CROSS JOIN hosts h"
                                      " WHERE r.experiment_id = (SELECT id FROM experiments WHERE name = ?1)"
                                      " AND h.id = r.host_id"
                                      " AND r.status IN ('done', 'interrupted')"
                                      " AND (?2 = 0 OR (r.started_at, r.id) <="
                                      " (SELECT started_at, id FROM runs WHERE id = ?2))"
                                      " ORDER BY r.started_at DESC, r.id DESC LIMIT ?3",
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
                                .fingerprint = sql_text_or_null(st, 6),
                                .label = sql_text_or_null(st, 7),
                                .commit = sql_text_or_null(st, 8),
                                .machine = sql_text(st, 10) };
                b->experiment_id = sqlite3_column_int64(st, 9);
                if (!x->started_at || !x->hostname || !x->metric || !x->machine)
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

/* SELECT run, cell label, variant name, machine name, the variant's env and preload, cell id,
 * variant id, whether it is the baseline, its command and its revision (built) of every (run, cell, variant)
 * of the runs read, one series (cell, variant, host) after another, each in run order: a few hundred rows
 * where the samples are many thousand, so sorting them here is cheap. The CROSS JOINs fix the loops' order:
 * the runs read (their host from the runs_history index, not from the runs' fat rows), then the rows that
 * belong to them by key (left to itself, SQLite scanned allocators and hosts outermost). NULL on ENOMEM;
 * caller frees with sqlite3_free.
 */
/* The ids of the runs read, "1, 2, 3", or NULL on ENOMEM; caller frees with sqlite3_free. */
static char *run_ids(const Builder *b) {
        char *ids = sqlite3_mprintf("%lld", (long long) b->runs[0].id);
        for (size_t i = 1; i < b->n_runs && ids; i++)
                ids = sqlite3_mprintf("%z, %lld", ids, (long long) b->runs[i].id); /* %z frees ids */
        return ids;
}

static char *points_sql(const HistoryQuery *q, const Builder *b) {
        char *ids = run_ids(b);
        char *sql = ids ? sqlite3_mprintf(
                                  "SELECT r.id, c.label, v.name, " STORE_SQL_MACHINE(
                                          "r", "h") ", v.env,"
                                                    " a.name, c.id, v.id,"
                                                    " v.is_baseline, v.command,"
                                                    " json_extract(v.build, '$.describe') || ' (' ||"
                                                    " substr(json_extract(v.build, '$.commit'), 1, 7) || ')'"
                                                    " FROM runs r INDEXED BY runs_history CROSS JOIN cells c"
                                                    " CROSS JOIN variants v CROSS JOIN allocators a CROSS "
                                                    "JOIN hosts h"
                                                    " WHERE r.experiment_id = %lld AND r.id IN (%s) AND "
                                                    "c.run_id = r.id"
                                                    " AND v.run_id = r.id AND a.id = v.allocator_id AND "
                                                    "h.id = r.host_id",
                                  (long long) b->experiment_id, ids)
                        : NULL;
        sqlite3_free(ids);
        /* Relative: a run without rounds measured side by side has no within-run ratios. */
        if (sql && b->relative)
                sql = sqlite3_mprintf("%z AND r.order_mode IN ('interleaved', 'randomized')", sql);
        if (sql && q->variant) /* relative, with the baseline it is divided by */
                sql = sqlite3_mprintf(b->relative ? "%z AND (v.name = %Q OR v.is_baseline)"
                                                  : "%z AND v.name = %Q",
                                      sql, q->variant);
        for (char *const *c = q->cells; sql && c && *c; c++) {
                const char *eq = strchr(*c, '='); /* checked by valid_cell_filter() */
                char *path = sqlite3_mprintf("$.\"%.*s\"", (int) (eq - *c), *c);
                sql = path ? sqlite3_mprintf("%z AND CAST(json_extract(c.params, %Q) AS TEXT) = %Q", sql,
                                             path, eq + 1)
                           : NULL;
                sqlite3_free(path);
        }
        /* Relative: a run's baseline point before the other variants', whose ratios need it. */
        return sql ? sqlite3_mprintf(
                             b->relative ? "%z ORDER BY c.label, 4, r.started_at, r.id, v.is_baseline DESC,"
                                           " v.name"
                                         : "%z ORDER BY c.label, v.name, 4, r.started_at, r.id",
                             sql)
                   : NULL;
}

/* SELECT the metric's value of every measured sample of one (run ?1, cell ?2, variant ?3): for
 * wall time read from the samples_run index alone; relative, in round order with its round (col 1) for
 * point_ratios() to pair with the baseline's, read once per run and cell (in SQL, a join of the
 * two sides built temporary tables for every point: 109 ms for 240 points). NULL on ENOMEM;
 * caller frees with sqlite3_free. */
static char *values_sql(const char *metric, bool relative) {
        const char *expression = query_builtin_metric_sql(metric);
        const char *where = " WHERE s.run_id = ?1 AND s.cell_id = ?2 AND s.variant_id = ?3"
                            " AND s.phase = 'sample' AND s.status = 'ok'";
        const char *order = relative ? " ORDER BY 2" : "";
        /* a pruned run's values (db/prune.h), which a run with samples has none of */
        _cleanup_(sqlite3_freep) char *pruned =
                query_pruned_values_sql(metric, "", " AND s.cell_id = ?2 AND s.variant_id = ?3");
        if (!pruned)
                return NULL;
        return expression ? sqlite3_mprintf(
                                    "SELECT %s, s.round FROM samples s%s AND %s IS NOT NULL UNION ALL %s%s",
                                    expression, where, expression, pruned, order)
                          : sqlite3_mprintf("SELECT m.value, s.round FROM samples s"
                                            " JOIN sample_metrics m ON m.sample_id = s.id AND m.name = %Q%s"
                                            " UNION ALL %s%s",
                                            strncmp(metric, "reported:", 9) == 0 ? metric + 9 : metric,
                                            where, pruned, order);
}

/* The same from the stats table: the point's stored median, one value. */
static char *medians_sql(const char *metric) {
        return sqlite3_mprintf(
                "SELECT median FROM stats WHERE cell_id = ?2 AND variant_id = ?3 AND metric = %Q"
                " AND run_id = ?1",
                strncmp(metric, "reported:", 9) == 0 ? metric + 9 : metric);
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

/* Sets p->config_change when the variant's env or preload, or (relative) its baseline, differs
 * from the point before's: "preload jemalloc -> mimalloc", "env {...} -> {...}", "baseline ...". */
static int describe_change(const HistoryPoint *before, HistoryPoint *p) {
        const char *what = NULL, *from = NULL, *to = NULL;
        if (strcmp(before->preload, p->preload) != 0)
                what = "preload", from = before->preload, to = p->preload;
        else if (strcmp(before->env, p->env) != 0)
                what = "env", from = before->env, to = p->env;
        else if (strcmp(before->command, p->command) != 0)
                what = "command", from = before->command, to = p->command;
        else if (before->baseline_setup && p->baseline_setup &&
                 strcmp(before->baseline_setup, p->baseline_setup) != 0)
                what = "baseline", from = before->baseline_setup, to = p->baseline_setup;
        return what && asprintf(&p->config_change, "%s %s -> %s", what, from, to) < 0 ? -ENOMEM : 0;
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

/* The change points of a series of summarised points (stats/changepoint.h). */
static int analyse_series(Builder *b, HistorySeries *s) {
        _cleanup_free_ ChangePointRun *runs = calloc(s->n_points ? s->n_points : 1, sizeof(ChangePointRun));
        _cleanup_free_ ChangePoint *found = calloc(s->n_points ? s->n_points : 1, sizeof(ChangePoint));
        if (!runs || !found)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_points; i++) {
                const RunInfo *run = run_info(b, s->points[i].run_id);
                if (!run)
                        return -EBADMSG; /* every point's run was read first */
                runs[i] = (ChangePointRun){ .median = s->points[i].median,
                                            .min_effect = run->min_effect,
                                            .alpha = run->alpha };
        }
        int r = mark_new_baselines(b, s, runs);
        if (r < 0 || (r = changepoint_find(runs, s->n_points, found)) < 0)
                return r;
        for (size_t i = 0; i < s->n_points; i++) {
                HistoryPoint *p = &s->points[i];
                const ChangePoint *c = &found[i];
                p->against = c->against;
                p->spread = c->spread;
                p->outside = c->outside;
                p->tentative = c->tentative;
                p->confirmed_by = c->confirmed_by ? s->points[c->confirmed_by].run_id : 0;
                p->baseline_runs = c->baseline_runs;
                p->baseline_from = c->baseline_runs ? s->points[c->baseline_from].run_id : 0;
                Verdict worse = b->h->higher_is_better ? VERDICT_LOWER : VERDICT_HIGHER;
                p->change = c->change == worse                                          ? HISTORY_REGRESSION
                            : c->change == VERDICT_LOWER || c->change == VERDICT_HIGHER ? HISTORY_IMPROVEMENT
                                                                                        : HISTORY_STEADY;
        }
        return 0;
}

/* Appends a point for run_id to the series, its variant's setup from the points row (env,
 * preload, command). NULL on ENOMEM. */
static HistoryPoint *new_point(Builder *b, HistorySeries *s, int64_t run_id, sqlite3_stmt *row) {
        const char *env = (const char *) sqlite3_column_text(row, 4),
                   *preload = (const char *) sqlite3_column_text(row, 5),
                   *command = (const char *) sqlite3_column_text(row, 9),
                   *revision = (const char *) sqlite3_column_text(row, 10);
        const RunInfo *run = run_info(b, run_id); /* the SQL only selects these runs */
        HistoryPoint *points = realloc(s->points, (s->n_points + 1) * sizeof(HistoryPoint));
        if (!points)
                return NULL;
        s->points = points;
        if (!run)
                return NULL;
        HistoryPoint *p = &points[s->n_points++];
        *p = (HistoryPoint){ .run_id = run_id,
                             .started_at = strdup(run->started_at),
                             .hostname = strdup(run->hostname),
                             .machine = strdup(run->machine),
                             .env = strdup(env ? env : ""),
                             .preload = strdup(preload ? preload : ""),
                             .command = strdup(command ? command : ""),
                             .label = run->label ? strdup(run->label) : NULL,
                             .commit = run->commit ? strdup(run->commit) : NULL,
                             .revision = revision ? strdup(revision) : NULL };
        return p->started_at && p->hostname && p->machine && p->env && p->preload && p->command &&
                               (p->label || !run->label) && (p->commit || !run->commit) &&
                               (p->revision || !revision)
                       ? p
                       : NULL;
}

/* The series of (cell, variant, machine), or NULL. */
static HistorySeries *find_series(History *h, const char *cell, const char *variant, const char *machine) {
        for (size_t i = h->n_series; i-- > 0;) {
                HistorySeries *s = &h->series[i];
                if (strcmp(s->cell, cell) == 0 && strcmp(s->variant, variant) == 0 &&
                    strcmp(s->machine, machine) == 0)
                        return s;
        }
        return NULL;
}

static HistorySeries *new_series(History *h, const char *cell, const char *variant, const char *machine) {
        HistorySeries *series = realloc(h->series, (h->n_series + 1) * sizeof(HistorySeries));
        if (!series)
                return NULL;
        h->series = series;
        HistorySeries *s = &series[h->n_series++];
        *s = (HistorySeries){ .cell = strdup(cell), .variant = strdup(variant), .machine = strdup(machine) };
        if (h->n_series > 1 && strcmp(series[0].machine, machine) != 0)
                h->many_machines = true;
        return s->cell && s->variant && s->machine ? s : NULL;
}

/* The values statement, reset, for one point. */
static void bind_point(sqlite3_stmt *values, int64_t run_id, int64_t cell_id, int64_t variant_id) {
        sqlite3_reset(values);
        sqlite3_bind_int64(values, 1, run_id);
        sqlite3_bind_int64(values, 2, cell_id);
        sqlite3_bind_int64(values, 3, variant_id);
}

/* One point's values into v (emptied first). */
static int read_point_values(sqlite3_stmt *values, int64_t run_id, int64_t cell_id, int64_t variant_id,
                             Values *v) {
        bind_point(values, run_id, cell_id, variant_id);
        v->n = 0;
        int rc, r = 0;
        while (r >= 0 && (rc = sqlite3_step(values)) == SQLITE_ROW)
                r = add_value(v, sqlite3_column_double(values, 0));
        return r < 0 ? r : rc == SQLITE_DONE ? 0 : -EIO;
}

/* Relative: a point's samples in round order, with their rounds, and whose they are. */
typedef struct Rounds {
        double *values;
        int64_t *rounds;
        size_t n, capacity;
        int64_t run_id, cell_id;
} Rounds;

static int read_rounds(sqlite3_stmt *values, int64_t run_id, int64_t cell_id, int64_t variant_id,
                       Rounds *x) {
        bind_point(values, run_id, cell_id, variant_id);
        x->n = 0;
        x->run_id = run_id;
        x->cell_id = cell_id;
        int rc;
        while ((rc = sqlite3_step(values)) == SQLITE_ROW) {
                if (x->n == x->capacity) {
                        size_t capacity = x->capacity ? 2 * x->capacity : 128;
                        double *v = realloc(x->values, capacity * sizeof(double));
                        if (v)
                                x->values = v;
                        int64_t *r = v ? realloc(x->rounds, capacity * sizeof(int64_t)) : NULL;
                        if (!r)
                                return -ENOMEM;
                        x->rounds = r;
                        x->capacity = capacity;
                }
                x->values[x->n] = sqlite3_column_double(values, 0);
                x->rounds[x->n++] = sqlite3_column_int64(values, 1);
        }
        return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Relative, the baseline's points row just read, with its samples of its run and cell in base:
 * how it was set up, into *setup, which its run's other points carry (a change of it starts a
 * new segment); and h->relative_to, the baseline of the latest run (*latest) that measured one. */
static int baseline_read(History *h, sqlite3_stmt *row, const Rounds *base, int64_t *latest, char **setup) {
        const char *variant = (const char *) sqlite3_column_text(row, 2),
                   *env = (const char *) sqlite3_column_text(row, 4),
                   *preload = (const char *) sqlite3_column_text(row, 5);
        free(*setup);
        if (asprintf(setup, "%s (preload %s, env %s)", variant, preload ? preload : "", env ? env : "") <
            0) {
                *setup = NULL;
                return -ENOMEM;
        }
        if (base->n > 0 && base->run_id > *latest) {
                *latest = base->run_id;
                free(h->relative_to);
                if (!(h->relative_to = strdup(variant)))
                        return -ENOMEM;
        }
        return 0;
}

/* Relative: one point's values into v (emptied first): of each round measured for both the
 * variant (mine) and its run's baseline (base, of the same run and cell), the variant's value
 * over the baseline's (sampleset_round_ratios, as compare --relative pairs them); the baseline's
 * own point gets a 1 for each of its samples, which drop_baselines() drops. */
static int point_ratios(const Rounds *mine, const Rounds *base, bool baseline, Values *v) {
        v->n = 0;
        int r = 0;
        for (size_t i = 0; r >= 0 && i < mine->n; i++) /* room for them, and the baseline's ones */
                r = add_value(v, 1);
        if (r < 0 || baseline)
                return r;
        if (base->run_id != mine->run_id || base->cell_id != mine->cell_id) {
                v->n = 0; /* no baseline measured in this run and cell */
                return 0;
        }
        SampleSet b = { base->values, base->rounds, base->n }, x = { mine->values, mine->rounds, mine->n };
        v->n = sampleset_round_ratios(&b, &x, v->v);
        return 0;
}

/* A point's median of its values (sorted here) and its interval. */
static void summarise(Values *v, HistoryPoint *p) {
        stats_sort(v->v, v->n);
        p->n = v->n;
        p->median = stats_median_sorted(v->v, v->n);
        compare_median_order_interval(v->v, v->n, COMPARE_LEVEL, &p->lo, &p->hi);
}

/* Reads the points in series order, each summarised by its values. A point without a measured
 * sample is left out, and a series without points. */
static int read_series(Store *st, const char *points_sql, const char *values_sql, Builder *b) {
        sqlite3_stmt *points = NULL, *values = NULL;
        if (sqlite3_prepare_v2(store_db(st), points_sql, -1, &points, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(store_db(st), values_sql, -1, &values, NULL) != SQLITE_OK) {
                sqlite3_finalize(points);
                return -EIO;
        }
        History *h = b->h;
        HistorySeries *s = NULL;
        Values read = {};
        Rounds base = { .run_id = -1 }, mine = {};
        _cleanup_free_ char *base_setup = NULL; /* relative: how the baseline in base was set up */
        int64_t latest_base = 0;
        int rc, r = 0;
        while (r >= 0 && (rc = sqlite3_step(points)) == SQLITE_ROW) {
                int64_t run_id = sqlite3_column_int64(points, 0);
                const char *cell = (const char *) sqlite3_column_text(points, 1);
                const char *variant = (const char *) sqlite3_column_text(points, 2);
                const char *machine = (const char *) sqlite3_column_text(points, 3);
                int64_t cell_id = sqlite3_column_int64(points, 6),
                        variant_id = sqlite3_column_int64(points, 7);
                bool baseline = sqlite3_column_int(points, 8) != 0;
                if (b->relative) {
                        Rounds *into = baseline ? &base : &mine;
                        if ((r = read_rounds(values, run_id, cell_id, variant_id, into)) >= 0 && baseline)
                                r = baseline_read(h, points, &base, &latest_base, &base_setup);
                        if (r >= 0)
                                r = point_ratios(into, &base, baseline, &read);
                } else
                        r = read_point_values(values, run_id, cell_id, variant_id, &read);
                if (r < 0 || read.n == 0)
                        continue;
                /* Relative reads a run's variants one after the other: their series interleave. */
                if (b->relative)
                        s = find_series(h, cell, variant, machine);
                if ((!s || strcmp(s->cell, cell) != 0 || strcmp(s->variant, variant) != 0 ||
                     strcmp(s->machine, machine) != 0) &&
                    !(s = new_series(h, cell, variant, machine))) {
                        r = -ENOMEM;
                        break;
                }
                HistoryPoint *p = new_point(b, s, run_id, points);
                if (!p) {
                        r = -ENOMEM;
                        break;
                }
                if (b->relative && !baseline && !(p->baseline_setup = strdup(base_setup))) {
                        r = -ENOMEM;
                        break;
                }
                summarise(&read, p);
        }
        free(read.v);
        free(base.values);
        free(base.rounds);
        free(mine.values);
        free(mine.rounds);
        if (r >= 0 && rc != SQLITE_DONE)
                r = -EIO;
        sqlite3_finalize(points);
        sqlite3_finalize(values);
        return r;
}

static int row_metric_defs(sqlite3_stmt *st, void *userdata) {
        bool null = sqlite3_column_type(st, 0) == SQLITE_NULL;
        return null || (*(char **) userdata = sql_text_or_null(st, 0)) ? 0 : -ENOMEM;
}

static int read_history(Store *s, const HistoryQuery *q, History **ret) {
        for (char *const *c = q->cells; c && *c; c++)
                if (!valid_cell_filter(*c))
                        return -EINVAL;
        _cleanup_(history_freep) History *h = calloc(1, sizeof(History));
        _cleanup_(builder_done) Builder b = { .h = h, .relative = q->relative && !q->medians_only };
        if (!h || !(h->experiment = strdup(q->experiment)))
                return -ENOMEM;
        int r = read_runs(s, q, &b);
        if (r < 0)
                return r;
        if (b.n_runs == 0)
                return -ENOENT;
        h->n_runs = b.n_runs;
        h->latest_run = b.runs[b.n_runs - 1].id;
        if (!(h->metric = strdup(q->metric ? q->metric : b.runs[b.n_runs - 1].metric)))
                return -ENOMEM;
        /* The metric's direction and unit, as the latest run's spec defines them. */
        _cleanup_free_ char *defs = NULL;
        r = sql_each_row(store_db(s), "SELECT metric_defs FROM runs WHERE id = ?1", h->latest_run,
                         row_metric_defs, &defs);
        if (r < 0 || (r = query_metric_def(defs, h->metric, &h->higher_is_better, &h->unit)) < 0)
                return r;
        /* Pruned runs, from the pruned_values index alone (the runs' rows are fat). */
        _cleanup_(sqlite3_freep) char *ids = run_ids(&b);
        int64_t pruned = 0;
        if (!ids || (r = sql_queryf(store_db(s), &pruned, NULL,
                                    "SELECT count(DISTINCT run_id) FROM pruned_values WHERE run_id IN (%s)",
                                    ids)) < 0)
                return ids ? r : -ENOMEM;
        h->n_pruned = (size_t) pruned;
        char *points = points_sql(q, &b),
             *values = q->medians_only ? medians_sql(h->metric) : values_sql(h->metric, b.relative);
        r = points && values ? read_series(s, points, values, &b) : -ENOMEM;
        sqlite3_free(points);
        sqlite3_free(values);
        if (r >= 0 && b.relative)
                history_drop_baselines(h);
        for (size_t i = 0; r >= 0 && i < h->n_series; i++)
                r = analyse_series(&b, &h->series[i]);
        if (r < 0)
                return r;
        if (h->n_series > 1) /* qsort wants an array, even of none */
                history_sort_series(h);
        *ret = TAKE_PTR(h);
        return 0;
}

/* History streams through the samples index, reading each leaf once: with a page cache this
 * small SQLite reuses its buffers instead of taking fresh memory for every page read, each a
 * page fault (about 12 us on the development VM): 200 runs of one series, 376 pages read,
 * 22 -> 15 ms. The connection's own size is put back: the daemon keeps its connection. */
#define HISTORY_CACHE_PAGES 64

int query_history(Store *s, const HistoryQuery *q, History **ret) {
        int previous;
        bool small = store_cache_size(s, HISTORY_CACHE_PAGES, &previous) == 0; /* else only slower */
        int r = read_history(s, q, ret);
        if (small)
                (void) store_cache_size(s, previous, &(int){ 0 });
        return r;
}
