/* SPDX-License-Identifier: MIT */
/*
 * Writes a run as it happens. Each sample is its own transaction (WAL + synchronous=FULL), so
 * every sample handed to the sink survives a kill -9 of the process right after. Statements are
 * prepared once per run. JSON columns are produced with jansson.
 */
#include <errno.h>
#include <math.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/record.h"
#include "db/run-field.h"
#include "db/sql.h"
#include "runner/env.h"
#include "runner/probe-json.h"
#include "runner/sample-field.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/proc.h"
#include "util/sha256.h"
#include "util/text.h"

/* run_id, cell_id, variant_id, phase, round, step: the parameters before the fields. */
#define SAMPLE_KEY_COLUMNS 6

struct Recorder {
        Store *store;
        int64_t run_id;
        int64_t *cell_ids;
        int64_t *variant_ids;
        size_t n_cells, n_variants;
        sqlite3_stmt *insert_sample;
        sqlite3_stmt *insert_metric;
        sqlite3_stmt *insert_timeline;
        sqlite3_stmt *insert_exclusion;
        sqlite3_stmt *insert_stats;
        sqlite3_stmt *insert_probe;
        sqlite3_stmt *insert_calibration;
        char *ended_at; /* RecordContext.ended_at, or NULL */
};

Recorder *record_free(Recorder *r) {
        if (!r)
                return NULL;
        sqlite3_finalize(r->insert_sample);
        sqlite3_finalize(r->insert_metric);
        sqlite3_finalize(r->insert_timeline);
        sqlite3_finalize(r->insert_exclusion);
        sqlite3_finalize(r->insert_stats);
        sqlite3_finalize(r->insert_probe);
        sqlite3_finalize(r->insert_calibration);
        free(r->cell_ids);
        free(r->variant_ids);
        free(r->ended_at);
        free(r);
        return NULL;
}

int64_t record_run_id(const Recorder *r) {
        return r->run_id;
}

static sqlite3 *db_of(const Recorder *r) {
        return store_db(r->store);
}

/* INSERT ... ON CONFLICT DO UPDATE SET x=x RETURNING id: the id of a new or existing row. */
#define UPSERT_ID " ON CONFLICT DO UPDATE SET id = id RETURNING id"

static int env_into(json_t *o, char *const *env) {
        for (size_t i = 0; env && env[i]; i++) {
                const char *eq = strchr(env[i], '=');
                if (!eq)
                        continue;
                _cleanup_free_ char *k = strndup(env[i], (size_t) (eq - env[i]));
                if (!k || json_object_set_new(o, k, json_string(eq + 1)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The run's row and the rows it refers to: its host, experiment and spec. */
static int insert_run(Recorder *rec, const Plan *p, const Host *h, const RecordContext *ctx) {
        sqlite3 *db = db_of(rec);
        const Spec *s = p->spec;
        RunSource src = { .plan = p, .host = h, .ctx = ctx };
        char digest[SHA256_HEX_SIZE];
        sha256_hex(s->source, s->source_size, digest);
        int r = sql_exec1(db, &src.host_id,
                          "INSERT INTO hosts (hostname, kernel, cpu_model, cpus, glibc, thp)"
                          " VALUES (?, ?, ?, ?, ?, ?)" UPSERT_ID,
                          "tttitt", h->hostname, h->kernel, h->cpu_model, (int64_t) h->cpus, h->glibc,
                          h->thp);
        if (r >= 0)
                r = sql_exec1(db, &src.experiment_id, "INSERT INTO experiments (name) VALUES (?)" UPSERT_ID,
                              "t", s->experiment);
        if (r >= 0)
                r = sql_exec1(db, &src.spec_id, "INSERT INTO specs (sha256, yaml) VALUES (?, ?)" UPSERT_ID,
                              "tt", digest, s->source);
        if (r >= 0)
                r = run_fields_insert(db, &src, &rec->run_id);
        if (r >= 0 && ctx->ended_at && !(rec->ended_at = strdup(ctx->ended_at)))
                r = -ENOMEM;
        return r;
}

static int insert_variants(Recorder *rec, const Plan *p) {
        sqlite3 *db = db_of(rec);
        const Spec *s = p->spec;
        int r = 0;
        for (size_t v = 0; v < p->n_variants && r >= 0; v++) {
                const SpecVariant *sv = &s->variants[v];
                const Allocator *a = &p->allocators[v];
                int64_t allocator_id;
                bool oom = false;
                _cleanup_free_ char *path = text_storable(a->path ? a->path : "", &oom),
                                    *version = text_storable(a->version, &oom);
                if (oom)
                        return -ENOMEM;
                r = sql_exec1(
                        db, &allocator_id,
                        "INSERT INTO allocators (name, path, sha256, version) VALUES (?, ?, ?, ?)" UPSERT_ID,
                        "tttt", a->name, path, a->sha256, version);
                json_t *env = json_object();
                if (r >= 0 && (env_into(env, s->env) < 0 || env_into(env, sv->env) < 0))
                        r = -ENOMEM;
                _cleanup_free_ char *env_json = json_dumps(env, JSON_COMPACT | JSON_SORT_KEYS);
                _cleanup_free_ char *cmd_json = json_strv_text(sv->command ? sv->command : s->command);
                json_decref(env);
                if (r >= 0 && (!env_json || !cmd_json))
                        r = -ENOMEM;
                const char *program = p->program_sha256 ? p->program_sha256[v] : "unknown";
                const Build *b = p->builds && sv->build.source ? &p->builds[v] : NULL;
                _cleanup_free_ char *build_text = b ? build_json(b) : NULL;
                if (r >= 0 && b && !build_text)
                        r = -ENOMEM;
                if (r >= 0)
                        r = sql_exec1(
                                db, &rec->variant_ids[v],
                                "INSERT INTO variants (run_id, position, name, allocator_id, env, command,"
                                " is_baseline, is_reference, is_aa, program_sha256, build)"
                                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                "iitittiiitt", rec->run_id, (int64_t) v, sv->name, allocator_id, env_json,
                                cmd_json, (int64_t) (v == s->baseline), (int64_t) (v == s->reference),
                                (int64_t) sv->is_aa, program, build_text);
        }
        return r;
}

static int insert_cells(Recorder *rec, const Plan *p) {
        const Spec *s = p->spec;
        int r = 0;
        for (size_t c = 0; c < p->n_cells && r >= 0; c++) {
                bool oom = false;
                _cleanup_free_ char *raw = plan_cell_label(p, c), *cell_label = text_storable(raw, &oom);
                json_t *params = json_object();
                for (size_t i = 0; i < s->n_params; i++)
                        json_object_set_new(params, s->params[i].name,
                                            json_string(plan_cell_value(p, c, i)));
                _cleanup_free_ char *params_json = json_dumps(params, JSON_COMPACT | JSON_PRESERVE_ORDER);
                json_decref(params);
                if (!cell_label || !params_json)
                        return -ENOMEM;
                r = sql_exec1(db_of(rec), &rec->cell_ids[c],
                              "INSERT INTO cells (run_id, position, label, params) VALUES (?, ?, ?, ?)",
                              "iitt", rec->run_id, (int64_t) c, cell_label, params_json);
        }
        return r;
}

/* Everything that describes the run, before its first sample. */
static int insert_rows(Recorder *rec, const Plan *p, const Host *h, const RecordContext *ctx) {
        int r = insert_run(rec, p, h, ctx);
        if (r >= 0)
                r = insert_variants(rec, p);
        if (r >= 0)
                r = insert_cells(rec, p);
        return r;
}

/* INSERT INTO samples: the sample's key, then every stored field of the table. */
static char *sample_insert_sql(void) {
        char *sql = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&sql, &size);
        if (!f)
                return NULL;
        fputs("INSERT INTO samples (run_id, cell_id, variant_id, phase, round, step", f);
        size_t n = SAMPLE_KEY_COLUMNS;
        for (size_t i = 0; i < n_sample_fields; i++)
                if (sample_fields[i].column) {
                        fprintf(f, ", %s", sample_fields[i].column);
                        n++;
                }
        fputs(", recorded_at) VALUES (?", f);
        for (size_t i = 1; i < n; i++)
                fputs(", ?", f);
        fputs(", strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))", f);
        return memstream_text(f, &sql);
}

static int prepare(Recorder *rec) {
        sqlite3 *db = db_of(rec);
        _cleanup_free_ char *insert_sample = sample_insert_sql();
        if (!insert_sample)
                return -ENOMEM;
        const struct {
                sqlite3_stmt **st;
                const char *sql;
        } statements[] = {
                { &rec->insert_sample, insert_sample },
                { &rec->insert_probe, "INSERT INTO probe_reports (sample_id, effective_path, family, "
                                      "version, allocator_copies, report)"
                                      " VALUES (?, ?, ?, ?, ?, ?)" },
                { &rec->insert_calibration, "INSERT INTO calibration (run_id, variant_id, round, step, "
                                            "status, wall_ns, user_us, sys_us,"
                                            " maxrss_kib, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
                                            " strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))" },
                { &rec->insert_metric,
                  "INSERT INTO sample_metrics (sample_id, name, value) VALUES (?, ?, ?)" },
                { &rec->insert_timeline,
                  "INSERT INTO sample_timelines (sample_id, source, period_ns, thinned, points,"
                  " marks) VALUES (?, ?, ?, ?, ?, ?)" },
                { &rec->insert_exclusion, "INSERT OR REPLACE INTO exclusions (run_id, cell_id, variant_id, "
                                          "reason) VALUES (?, ?, ?, ?)" },
                { &rec->insert_stats,
                  "INSERT OR REPLACE INTO stats (run_id, cell_id, variant_id, metric, n, median, mad, mean,"
                  " stddev, min, max) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
        };
        for (size_t i = 0; i < ELEMENTSOF(statements); i++)
                if (sqlite3_prepare_v3(db, statements[i].sql, -1, SQLITE_PREPARE_PERSISTENT,
                                       statements[i].st, NULL) != SQLITE_OK)
                        return -EIO;
        return 0;
}

static int recorder_new(Store *store, const Plan *plan, Recorder **ret) {
        _cleanup_(record_freep) Recorder *rec = calloc(1, sizeof(Recorder));
        if (!rec)
                return -ENOMEM;
        rec->store = store;
        rec->n_cells = plan->n_cells;
        rec->n_variants = plan->n_variants;
        rec->cell_ids = calloc(plan->n_cells, sizeof(int64_t));
        rec->variant_ids = calloc(plan->n_variants, sizeof(int64_t));
        if (!rec->cell_ids || !rec->variant_ids)
                return -ENOMEM;
        int r = prepare(rec);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(rec);
        return 0;
}

/* Fills ids[position] from "SELECT position, id ... WHERE run_id = ?"; every position must be
 * found. */
static int load_ids(sqlite3 *db, const char *sql, int64_t run_id, int64_t *ids, size_t n) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_int64(st, 1, run_id);
        size_t found = 0;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                int64_t pos = sqlite3_column_int64(st, 0);
                if (pos < 0 || (size_t) pos >= n)
                        break;
                ids[pos] = sqlite3_column_int64(st, 1);
                found++;
        }
        sqlite3_finalize(st);
        return rc == SQLITE_DONE && found == n ? 0 : -EBADMSG;
}

int record_resume(Store *store, const Plan *plan, int64_t run_id, Recorder **ret) {
        _cleanup_(record_freep) Recorder *rec = NULL;
        int r = recorder_new(store, plan, &rec);
        if (r < 0)
                return r;
        sqlite3 *db = store_db(store);
        rec->run_id = run_id;
        if ((r = load_ids(db, "SELECT position, id FROM cells WHERE run_id = ?", run_id, rec->cell_ids,
                          plan->n_cells)) < 0 ||
            (r = load_ids(db, "SELECT position, id FROM variants WHERE run_id = ?", run_id, rec->variant_ids,
                          plan->n_variants)) < 0)
                return r;
        uint64_t start = 0;
        (void) proc_start_time(getpid(), &start);
        r = sql_exec1(db, NULL,
                      "UPDATE runs SET status = 'running', pid = ?, pid_start = ?, ended_at = NULL,"
                      " message = 'resumed' WHERE id = ?",
                      "iii", (int64_t) getpid(), (int64_t) start, run_id);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(rec);
        return 0;
}

int record_begin(Store *store, const Plan *plan, const Host *host, const RecordContext *ctx,
                 Recorder **ret) {
        _cleanup_(record_freep) Recorder *rec = NULL;
        int r = recorder_new(store, plan, &rec);
        if (r < 0)
                return r;
        sqlite3 *db = store_db(store);
        if ((r = sql_begin(db)) < 0)
                return r;
        r = sql_commit(db, insert_rows(rec, plan, host, ctx));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(rec);
        return 0;
}

static int64_t tv_us(const struct timeval *tv) {
        return (int64_t) tv->tv_sec * 1000000 + tv->tv_usec;
}

static int insert_probe_report(Recorder *rec, int64_t sample_id, const ProbeResult *probe,
                               const char *allocator_stats) {
        json_t *j = probe_json_from_result(probe, allocator_stats);
        _cleanup_free_ char *text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(j);
        if (!text)
                return -ENOMEM;
        /* Version and copies are NULL where the probe was not asked for them (timed samples). */
        return sql_step(db_of(rec), rec->insert_probe, NULL, probe->census_known ? "itttit" : "itttnt",
                        sample_id, probe->report.effective_path,
                        probe_family_name(probe->report.effective_family),
                        probe->options_known ? probe->report.allocator_version : NULL,
                        (int64_t) probe_allocator_copies(probe), text);
}

/* memory_timeline's readings, little-endian, and the marks as JSON (db/migrations.c, 28 -> 29). */
static int insert_timeline(Recorder *rec, int64_t sample_id, const Timeline *t) {
        bool oom;
        _cleanup_free_ TimelinePoint *le = timeline_points_le(t);
        json_t *marks = timeline_marks_json(t, &oom);
        _cleanup_free_ char *text = marks ? json_dumps(marks, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(marks);
        if (!le || oom || (marks && !text))
                return -ENOMEM;
        return sql_step(db_of(rec), rec->insert_timeline, NULL, "itiibt", sample_id,
                        t->source == TIMELINE_CGROUP ? "cgroup" : "proc", (int64_t) t->period_ns,
                        (int64_t) t->thinned, le, t->n_points * sizeof(TimelinePoint), text);
}

/* A run of the null workload (spec calibrate): one row, committed on its own. */
static int insert_calibration(Recorder *rec, const Sample *s) {
        const struct rusage *u = &s->spawn.usage;
        return sql_step(db_of(rec), rec->insert_calibration, NULL, "iiiitiiii", rec->run_id,
                        rec->variant_ids[s->step->variant], (int64_t) s->step->round,
                        (int64_t) s->step_index, sample_status_to_string(s->status),
                        (int64_t) s->spawn.wall_ns, tv_us(&u->ru_utime), tv_us(&u->ru_stime),
                        (int64_t) u->ru_maxrss);
}

/* Binds field f of s to parameter index (1-based) of the sample insert. */
static int bind_field(sqlite3_stmt *st, int index, const SampleField *f, const Sample *s) {
        if (!sample_field_meaningful(f, s))
                return sqlite3_bind_null(st, index);
        const void *v = sample_field_of(f, s);
        switch (f->type) {
        case SAMPLE_FIELD_BOOL:
                return sqlite3_bind_int64(st, index, *(const bool *) v);
        case SAMPLE_FIELD_INT:
                return sqlite3_bind_int64(st, index, *(const int *) v);
        case SAMPLE_FIELD_U32:
                return sqlite3_bind_int64(st, index, *(const uint32_t *) v);
        case SAMPLE_FIELD_U64:
                return sqlite3_bind_int64(st, index, (int64_t) * (const uint64_t *) v);
        case SAMPLE_FIELD_I64:
                return sqlite3_bind_int64(st, index, *(const int64_t *) v);
        case SAMPLE_FIELD_LONG:
                return sqlite3_bind_int64(st, index, *(const long *) v);
        case SAMPLE_FIELD_DOUBLE: {
                double x = *(const double *) v;
                return isnan(x) ? sqlite3_bind_null(st, index) : sqlite3_bind_double(st, index, x);
        }
        case SAMPLE_FIELD_TEXT:
                return sqlite3_bind_text(st, index, *(char *const *) v, -1, SQLITE_TRANSIENT);
        case SAMPLE_FIELD_USEC:
                return sqlite3_bind_int64(st, index, tv_us(v));
        case SAMPLE_FIELD_DIGEST: {
                const Digest *d = v;
                return d->hex[0] ? sqlite3_bind_text(st, index, d->hex, -1, SQLITE_TRANSIENT)
                                 : sqlite3_bind_null(st, index);
        }
        case SAMPLE_FIELD_SOURCE:
                return sqlite3_bind_text(st, index, *(const bool *) v ? "cgroup" : "rusage", -1,
                                         SQLITE_STATIC);
        case SAMPLE_FIELD_STATUS:
                return sqlite3_bind_text(st, index, sample_status_to_string(*(const SampleStatus *) v), -1,
                                         SQLITE_STATIC);
        case SAMPLE_FIELD_END:
                break;
        }
        return SQLITE_MISUSE; /* a stored field of a type that has no column */
}

/* Binds a sample's key and every stored field to the sample insert. */
static int bind_sample(Recorder *rec, const Sample *s) {
        sqlite3_stmt *st = rec->insert_sample;
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        int rc = SQLITE_OK, index = SAMPLE_KEY_COLUMNS;
        if (sqlite3_bind_int64(st, 1, rec->run_id) != SQLITE_OK ||
            sqlite3_bind_int64(st, 2, rec->cell_ids[s->step->cell]) != SQLITE_OK ||
            sqlite3_bind_int64(st, 3, rec->variant_ids[s->step->variant]) != SQLITE_OK ||
            sqlite3_bind_text(st, 4, phase_to_string(s->step->phase), -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_int64(st, 5, s->step->round) != SQLITE_OK ||
            sqlite3_bind_int64(st, 6, (int64_t) s->step_index) != SQLITE_OK)
                return -EIO;
        for (size_t i = 0; i < n_sample_fields && rc == SQLITE_OK; i++)
                if (sample_fields[i].column)
                        rc = bind_field(st, ++index, &sample_fields[i], s);
        return rc == SQLITE_OK ? 0 : -EIO;
}

static int on_sample(void *userdata, const Plan *p, const Sample *s) {
        Recorder *rec = userdata;
        sqlite3 *db = db_of(rec);
        if (s->step->phase == PHASE_CALIBRATE)
                return insert_calibration(rec, s);
        int64_t sample_id;
        (void) p;

        int r = sql_begin(db);
        if (r < 0)
                return r;
        r = bind_sample(rec, s);
        if (r >= 0)
                r = sql_step_bound(db, rec->insert_sample, &sample_id);
        if (r >= 0 && s->probe)
                r = insert_probe_report(rec, sample_id, s->probe, s->allocator_stats);
        for (size_t i = 0; i < s->n_metrics && r >= 0; i++)
                r = sql_step(db, rec->insert_metric, NULL, "itd", sample_id, s->metrics[i].name,
                             s->metrics[i].value);
        if (r >= 0 && s->timeline && s->timeline->n_points > 0)
                r = insert_timeline(rec, sample_id, s->timeline);
        if (r >= 0)
                r = sql_exec1(
                        db, NULL,
                        "UPDATE runs SET n_runs = n_runs + 1, n_failures = n_failures + ? WHERE id = ?",
                        "ii", (int64_t) (s->status != SAMPLE_OK), rec->run_id);
        return sql_commit(db, r);
}

static int on_exclude(void *userdata, const Plan *p, uint32_t cell, uint32_t variant, const char *reason) {
        Recorder *rec = userdata;
        sqlite3 *db = db_of(rec);
        (void) p;
        int r = sql_begin(db);
        if (r < 0)
                return r;
        r = sql_step(db, rec->insert_exclusion, NULL, "iiit", rec->run_id, rec->cell_ids[cell],
                     rec->variant_ids[variant], reason);
        if (r >= 0)
                r = sql_exec1(db, NULL, "UPDATE runs SET n_excluded = n_excluded + 1 WHERE id = ?", "i",
                              rec->run_id);
        return sql_commit(db, r);
}

static int on_cell_stats(void *userdata, const Plan *p, uint32_t cell, const StatsRow *rows, size_t n) {
        Recorder *rec = userdata;
        sqlite3 *db = db_of(rec);
        (void) p;
        int r = sql_begin(db);
        for (size_t i = 0; i < n && r >= 0; i++) {
                const Stats *st = &rows[i].stats;
                r = sql_step(db, rec->insert_stats, NULL, "iiitidddddd", rec->run_id, rec->cell_ids[cell],
                             rec->variant_ids[rows[i].variant], rows[i].metric, (int64_t) st->n, st->median,
                             st->mad, st->mean, st->stddev, st->min, st->max);
        }
        return r < 0 && r != -EIO ? r : sql_commit(db, r);
}

RunSink record_sink(Recorder *r) {
        return (RunSink){
                .userdata = r,
                .sample = on_sample,
                .exclude = on_exclude,
                .cell_stats = on_cell_stats,
        };
}

int record_finish(Recorder *rec, const RunResult *result, int error, const char *message) {
        const char *status = error < 0                     ? "failed"
                             : result->end == RUN_CANCELED ? "interrupted"
                             : result->end == RUN_STOPPED  ? "failed"
                                                           : "done";
        sqlite3 *db = db_of(rec);
        int r = sql_begin(db);
        if (r < 0)
                return r;
        r = sql_exec1(
                db, NULL,
                "UPDATE runs SET status = ?,"
                " ended_at = coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), message = ? WHERE id = ?",
                "ttti", status, rec->ended_at, message, rec->run_id);
        r = sql_commit(db, r);
        if (r >= 0)
                store_checkpoint(rec->store);
        return r;
}
