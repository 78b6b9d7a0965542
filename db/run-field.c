/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/run-field.h"
#include "db/sql.h"
#include "runner/env.h"
#include "stats/sampleset.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/proc.h"
#include "util/text.h"

char *json_strv_text(char *const *l) {
        json_t *a = json_array();
        for (size_t i = 0; l && l[i]; i++)
                json_array_append_new(a, json_string(l[i]));
        char *s = json_dumps(a, JSON_COMPACT);
        json_decref(a);
        return s;
}

/* How a new run's values are obtained: each sets *ret and returns 0 or -ENOMEM. */

static int text(RunValue *ret, const char *s) {
        *ret = (RunValue){ .null = !s, .text = s };
        return 0;
}

static int owned_text(RunValue *ret, char *s) {
        *ret = (RunValue){ .text = s, .owned = s };
        return s ? 0 : -ENOMEM;
}

static int integer(RunValue *ret, int64_t i) {
        *ret = (RunValue){ .i = i };
        return 0;
}

static int real(RunValue *ret, double d) {
        *ret = (RunValue){ .d = d };
        return 0;
}

static int obtain_label(const RunSource *src, RunValue *ret) {
        return text(ret, src->ctx->label);
}

static int obtain_commit(const RunSource *src, RunValue *ret) {
        return text(ret, src->ctx->commit);
}

static int obtain_status(const RunSource *src, RunValue *ret) {
        (void) src;
        return text(ret, "running");
}

/* What the other tool recorded for an import, else NULL: now (the INSERT's coalesce). */
static int obtain_started_at(const RunSource *src, RunValue *ret) {
        return text(ret, src->ctx->started_at);
}

static int obtain_metric(const RunSource *src, RunValue *ret) {
        const Spec *s = src->plan->spec;
        char *metric = NULL;
        if (asprintf(&metric, "%s%s%s", spec_metric_to_string(s->metric),
                     s->metric == SPEC_METRIC_REPORTED ? ":" : "",
                     s->metric == SPEC_METRIC_REPORTED ? s->metric_name : "") < 0)
                metric = NULL;
        return owned_text(ret, metric);
}

static int obtain_samples(const RunSource *src, RunValue *ret) {
        return integer(ret, src->plan->samples);
}

static int obtain_warmup(const RunSource *src, RunValue *ret) {
        return integer(ret, src->plan->warmup);
}

static int obtain_order(const RunSource *src, RunValue *ret) {
        return text(ret, src->ctx->order ? src->ctx->order : spec_order_to_string(src->plan->spec->order));
}

static int obtain_seed(const RunSource *src, RunValue *ret) {
        return integer(ret, (int64_t) src->plan->seed);
}

static int obtain_verify(const RunSource *src, RunValue *ret) {
        return text(ret, spec_verify_to_string(src->plan->spec->verify));
}

static int obtain_verify_ignore(const RunSource *src, RunValue *ret) {
        char *const *ignore = src->plan->spec->verify_ignore;
        return ignore ? owned_text(ret, json_strv_text(ignore)) : text(ret, NULL);
}

static int obtain_min_effect(const RunSource *src, RunValue *ret) {
        return real(ret, src->plan->spec->min_effect);
}

static int obtain_alpha(const RunSource *src, RunValue *ret) {
        return real(ret, src->plan->spec->alpha);
}

static int obtain_correction(const RunSource *src, RunValue *ret) {
        return text(ret, spec_correction_to_string(src->plan->spec->correction));
}

static int obtain_child_cpus(const RunSource *src, RunValue *ret) {
        const CpuPlacement *c = &src->plan->cpus;
        return c->pinned ? owned_text(ret, cpus_format(&c->child)) : text(ret, NULL);
}

static int obtain_runner_cpus(const RunSource *src, RunValue *ret) {
        const CpuPlacement *c = &src->plan->cpus;
        return c->pinned ? owned_text(ret, cpus_format(&c->runner)) : text(ret, NULL);
}

static int obtain_cgroup(const RunSource *src, RunValue *ret) {
        return text(ret, src->plan->cgroup ? src->plan->cgroup->path : NULL);
}

static int obtain_cgroup_fallback(const RunSource *src, RunValue *ret) {
        return text(ret, src->plan->cgroup ? src->plan->cgroup->why_not : NULL);
}

static int obtain_calibrate_command(const RunSource *src, RunValue *ret) {
        char *const *argv = src->plan->calibrate_argv;
        return argv ? owned_text(ret, json_strv_text(argv)) : text(ret, NULL);
}

static int obtain_spec_path(const RunSource *src, RunValue *ret) {
        return text(ret, src->plan->spec->path);
}

static int obtain_samples_min(const RunSource *src, RunValue *ret) {
        if (!src->plan->samples_auto)
                return text(ret, NULL);
        return integer(ret, run_auto_min_rounds(src->plan));
}

static int obtain_outliers(const RunSource *src, RunValue *ret) {
        return text(ret, spec_outliers_to_string(src->plan->spec->outliers));
}

/* {NAME: {"better", "unit"}} of the spec's metrics:, or NULL without any. */
static int obtain_metric_defs(const RunSource *src, RunValue *ret) {
        const Spec *s = src->plan->spec;
        if (!s->n_metric_defs)
                return text(ret, NULL);
        json_t *defs = json_object();
        for (size_t i = 0; defs && i < s->n_metric_defs; i++) {
                const SpecMetricDef *d = &s->metric_defs[i];
                json_t *def = json_pack("{s:s}", "better", d->higher_is_better ? "higher" : "lower");
                if (def && d->unit)
                        json_object_set_new(def, "unit", json_string(d->unit));
                if (!def || json_object_set_new(defs, d->name, def) < 0) {
                        json_decref(defs);
                        return -ENOMEM;
                }
        }
        char *json = defs ? json_dumps(defs, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref(defs);
        return owned_text(ret, json);
}

static int obtain_experiment_id(const RunSource *src, RunValue *ret) {
        return integer(ret, src->experiment_id);
}

static int obtain_spec_id(const RunSource *src, RunValue *ret) {
        return integer(ret, src->spec_id);
}

static int obtain_host_id(const RunSource *src, RunValue *ret) {
        return integer(ret, src->host_id);
}

static int obtain_trigger(const RunSource *src, RunValue *ret) {
        return text(ret, src->ctx->trigger);
}

static int obtain_submitter(const RunSource *src, RunValue *ret) {
        return text(ret, src->ctx->submitter);
}

static int obtain_pid(const RunSource *src, RunValue *ret) {
        (void) src;
        return integer(ret, getpid());
}

/* With the pid, tells this process from a later one that got the same pid (db/store.c). */
static int obtain_pid_start(const RunSource *src, RunValue *ret) {
        (void) src;
        uint64_t start = 0;
        (void) proc_start_time(getpid(), &start);
        return integer(ret, (int64_t) start);
}

static int obtain_timeout(const RunSource *src, RunValue *ret) {
        return integer(ret, (int64_t) src->plan->spec->timeout_ns);
}

static int obtain_on_failure(const RunSource *src, RunValue *ret) {
        return text(ret, spec_on_failure_to_string(src->plan->spec->on_failure));
}

static int obtain_probe(const RunSource *src, RunValue *ret) {
        return text(ret, src->plan->probe_path ? spec_probe_to_string(src->plan->spec->probe) : "never");
}

static int obtain_host_facts(const RunSource *src, RunValue *ret) {
        json_t *facts = json_object();
        for (int f = 0; facts && f < _HOST_FACT_MAX; f++)
                json_object_set_new(facts, host_fact_names[f], json_string(src->host->facts[f]));
        char *json = facts ? json_dumps(facts, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(facts);
        return owned_text(ret, json);
}

static int obtain_host_fingerprint(const RunSource *src, RunValue *ret) {
        return text(ret, src->host->fingerprint);
}

static int obtain_env_offset(const RunSource *src, RunValue *ret) {
        return text(ret, src->plan->spec->env_offset_random ? "random" : "none");
}

/* A run under Slurm records the job, task and node it ran as. */
static int obtain_slurm_job(const RunSource *src, RunValue *ret) {
        return text(ret, env_get(src->ctx->origin_env, "SLURM_JOB_ID"));
}

static int obtain_slurm_task(const RunSource *src, RunValue *ret) {
        return text(ret, env_get(src->ctx->origin_env, "SLURM_ARRAY_TASK_ID"));
}

static int obtain_slurm_node(const RunSource *src, RunValue *ret) {
        return text(ret, env_get(src->ctx->origin_env, "SLURMD_NODENAME"));
}

static int obtain_import_sha256(const RunSource *src, RunValue *ret) {
        return text(ret, src->ctx->import_sha256);
}

static int obtain_import_cpu(const RunSource *src, RunValue *ret) {
        return text(ret, src->ctx->import_sha256 ? src->ctx->import_cpu : NULL);
}

/* How the JSON header shows a field other than by its type. */

static json_t *json_better(const Report *rep, const RunField *f) {
        return json_string(*(const bool *) run_field_of(f, rep) ? "higher" : "lower");
}

/* An import has no seed of alloclab's. */
static json_t *json_seed(const Report *rep, const RunField *f) {
        if (sampleset_design(rep->order) == SAMPLE_INDEPENDENT)
                return json_null();
        return json_integer((json_int_t) * (const uint64_t *) run_field_of(f, rep));
}

/* A list that is not recorded is empty. */
static json_t *json_list(const Report *rep, const RunField *f) {
        const char *t = *(char *const *) run_field_of(f, rep);
        json_t *list = t ? json_loads(t, 0, NULL) : NULL;
        return list ? list : json_array();
}

/* The metric's direction and unit from the run's metric_defs, as SQL. */
#define METRIC_DEF_SQL(field)                                                                               \
        "json_extract(runs.metric_defs, '$.\"' || substr(runs.metric, 10) || '\"." field "')"

#define NO_MEMBER RUN_FIELD_NO_MEMBER

/* A field read into Report.member, and one recorded for other readers. */
#define FIELD(column_, type_, member, ...)                                                                  \
        { .column = column_, .type = RUN_FIELD_##type_, .offset = offsetof(Report, member), __VA_ARGS__ }
#define RECORDED(column_, type_, ...)                                                                       \
        { .column = column_, .type = RUN_FIELD_##type_, .offset = NO_MEMBER, __VA_ARGS__ }

/* The JSON header's fields come first, in its order; cli/render-json.c places the keys that are
 * not a recorded field between them. */
const RunField run_fields[] = {
        FIELD("id", INT, run.id, .json_key = "run_id"),
        FIELD("uuid", TEXT, run.uuid, .insert_sql = STORE_SQL_UUID, .json_key = "uuid"),
        FIELD("label", TEXT_OR_NULL, run.label, .obtain = obtain_label, .json_key = "label",
              .label = "label", .label_rank = 10),
        FIELD("commit_id", TEXT_OR_NULL, run.commit, .obtain = obtain_commit, .json_key = "commit",
              .label = "commit", .label_rank = 11),
        FIELD(NULL, TEXT, run.experiment, .select = "experiments.name", .json_key = "experiment"),
        /* as the reader may see it: a run of this host left 'running' by a dead process is not */
        FIELD("status", TEXT, run.status, .select = "alloclab_run_status(runs.status, hosts.hostname)",
              .obtain = obtain_status, .json_key = "status", .label = "status", .label_rank = 7),
        FIELD("started_at", TEXT, run.started_at, .obtain = obtain_started_at,
              .insert_sql = "coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))", .json_key = "started_at",
              .label = "started", .label_rank = 6),
        FIELD("ended_at", TEXT_OR_NULL, run.ended_at, .json_key = "ended_at"),
        FIELD(NULL, TEXT, run.hostname, .select = "hosts.hostname", .json_key = "host.hostname",
              .label = "host", .label_rank = 1),
        FIELD(NULL, TEXT, cpu_model, .select = "hosts.cpu_model", .json_key = "host.cpu_model",
              .label = "CPU", .label_rank = 2),
        FIELD(NULL, TEXT, kernel, .select = "hosts.kernel", .json_key = "host.kernel", .label = "kernel",
              .label_rank = 3),
        FIELD(NULL, INT, cpus, .select = "hosts.cpus", .json_key = "host.cpus"),
        FIELD(NULL, TEXT, glibc, .select = "hosts.glibc", .json_key = "host.glibc", .label = "glibc",
              .label_rank = 4),
        FIELD(NULL, TEXT, thp, .select = "hosts.thp", .json_key = "host.thp", .label = "THP",
              .label_rank = 5),
        FIELD("metric", TEXT, run.metric, .obtain = obtain_metric, .json_key = "metric"),
        FIELD(NULL, TEXT_OR_NULL, run.metric_unit, .select = METRIC_DEF_SQL("unit"),
              .json_key = "metric_unit"),
        FIELD(NULL, BOOL, run.higher_is_better, .select = METRIC_DEF_SQL("better") " IS 'higher'",
              .json_key = "metric_better", .json = json_better),
        FIELD("samples", INT, samples, .obtain = obtain_samples, .json_key = "samples"),
        FIELD("warmup", INT, warmup, .obtain = obtain_warmup, .json_key = "warmup"),
        FIELD("order_mode", TEXT, order, .obtain = obtain_order, .json_key = "order", .label = "order",
              .label_rank = 8),
        FIELD("seed", U64, seed, .obtain = obtain_seed, .json_key = "seed", .json = json_seed),
        FIELD("verify", TEXT, verify, .obtain = obtain_verify, .json_key = "verify", .label = "verify",
              .label_rank = 9),
        FIELD("verify_ignore", JSON, verify_ignore, .obtain = obtain_verify_ignore,
              .json_key = "verify_ignore", .json = json_list),
        FIELD("min_effect", REAL, min_effect, .obtain = obtain_min_effect, .json_key = "min_effect"),
        FIELD("alpha", REAL, alpha, .obtain = obtain_alpha, .json_key = "alpha"),
        FIELD("correction", CORRECTION, correction, .obtain = obtain_correction, .json_key = "correction"),
        FIELD("cpus", TEXT_OR_NULL, child_cpus, .obtain = obtain_child_cpus, .json_key = "cpus"),
        FIELD("runner_cpus", TEXT_OR_NULL, runner_cpus, .obtain = obtain_runner_cpus,
              .json_key = "runner_cpus"),
        FIELD("cgroup", TEXT_OR_NULL, cgroup, .obtain = obtain_cgroup, .json_key = "cgroup"),
        FIELD("cgroup_fallback", TEXT_OR_NULL, cgroup_fallback, .obtain = obtain_cgroup_fallback,
              .json_key = "cgroup_fallback"),
        FIELD("calibrate_command", JSON, calibrate_command, .obtain = obtain_calibrate_command,
              .json_key = "calibrate_command"),
        FIELD("n_failures", INT, run.n_failures, .json_key = "n_failures"),

        /* Read, not in the JSON header. */
        FIELD("spec_path", TEXT, spec_path, .obtain = obtain_spec_path),
        FIELD("message", TEXT_OR_NULL, message),
        FIELD("samples_min", INT, samples_min, .obtain = obtain_samples_min),
        FIELD("outliers", IS, exclude_outliers, .obtain = obtain_outliers, .is = "exclude"),
        FIELD("metric_defs", JSON, metric_defs, .obtain = obtain_metric_defs),
        FIELD("n_runs", INT, run.n_runs),
        FIELD("n_excluded", INT, run.n_excluded),
        FIELD(NULL, INT, run.n_cells, .select = "(SELECT count(*) FROM cells WHERE cells.run_id = runs.id)"),
        FIELD(NULL, INT, run.n_variants,
              .select = "(SELECT count(*) FROM variants WHERE variants.run_id = runs.id)"),

        /* Recorded for other readers (history, fleet, recovery, import), not read here. */
        RECORDED("experiment_id", INT, .obtain = obtain_experiment_id),
        RECORDED("spec_id", INT, .obtain = obtain_spec_id),
        RECORDED("host_id", INT, .obtain = obtain_host_id),
        RECORDED("trigger", TEXT, .obtain = obtain_trigger),
        RECORDED("submitter", TEXT_OR_NULL, .obtain = obtain_submitter),
        RECORDED("pid", INT, .obtain = obtain_pid),
        RECORDED("pid_start", INT, .obtain = obtain_pid_start),
        RECORDED("timeout_ns", INT, .obtain = obtain_timeout),
        RECORDED("on_failure", TEXT, .obtain = obtain_on_failure),
        RECORDED("probe", TEXT, .obtain = obtain_probe),
        RECORDED("host_facts", JSON, .obtain = obtain_host_facts),
        RECORDED("host_fingerprint", TEXT_OR_NULL, .obtain = obtain_host_fingerprint),
        RECORDED("env_offset", TEXT, .obtain = obtain_env_offset),
        RECORDED("slurm_job_id", TEXT_OR_NULL, .obtain = obtain_slurm_job),
        RECORDED("slurm_array_task_id", TEXT_OR_NULL, .obtain = obtain_slurm_task),
        RECORDED("slurm_node", TEXT_OR_NULL, .obtain = obtain_slurm_node),
        RECORDED("import_sha256", TEXT_OR_NULL, .obtain = obtain_import_sha256),
        RECORDED("import_cpu", JSON, .obtain = obtain_import_cpu),
};

const size_t n_run_fields = sizeof(run_fields) / sizeof(run_fields[0]);

static const RunField *find(const char *column, const char *json_key) {
        for (size_t i = 0; i < n_run_fields; i++) {
                const RunField *f = &run_fields[i];
                if ((column && f->column && strcmp(f->column, column) == 0) ||
                    (json_key && f->json_key && strcmp(f->json_key, json_key) == 0))
                        return f;
        }
        return NULL;
}

const RunField *run_field_by_column(const char *column) {
        return find(column, NULL);
}

const RunField *run_field_by_json_key(const char *key) {
        return find(NULL, key);
}

static bool is_read(const RunField *f, bool summary_only) {
        return f->offset != NO_MEMBER && (!summary_only || run_field_in_summary(f));
}

/* The member of f in object: a Report, or with summary_only the RunSummary of one. */
static void *member(const RunField *f, void *object, bool summary_only) {
        return (char *) object + f->offset - (summary_only ? offsetof(Report, run) : 0);
}

char *run_fields_select(bool summary_only) {
        char *sql = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&sql, &size);
        if (!out)
                return NULL;
        const char *comma = "";
        for (size_t i = 0; i < n_run_fields; i++) {
                const RunField *f = &run_fields[i];
                if (!is_read(f, summary_only))
                        continue;
                if (f->select)
                        fprintf(out, "%s%s", comma, f->select);
                else
                        fprintf(out, "%sruns.%s", comma, f->column);
                comma = ", ";
        }
        return memstream_text(out, &sql);
}

static bool is_text(const RunField *f) {
        return f->type == RUN_FIELD_TEXT || f->type == RUN_FIELD_TEXT_OR_NULL || f->type == RUN_FIELD_JSON;
}

int run_fields_read(sqlite3_stmt *st, int first, bool summary_only, void *object) {
        int col = first;
        for (size_t i = 0; i < n_run_fields; i++) {
                const RunField *f = &run_fields[i];
                if (!is_read(f, summary_only))
                        continue;
                void *m = member(f, object, summary_only);
                const char *t = (const char *) sqlite3_column_text(st, col);
                switch (f->type) {
                case RUN_FIELD_TEXT:
                        if (!(*(char **) m = sql_text(st, col)))
                                return -ENOMEM;
                        break;
                case RUN_FIELD_TEXT_OR_NULL:
                case RUN_FIELD_JSON:
                        *(char **) m = sql_text_or_null(st, col);
                        if (!*(char **) m && sqlite3_column_type(st, col) != SQLITE_NULL)
                                return -ENOMEM;
                        break;
                case RUN_FIELD_INT:
                        *(int64_t *) m = sqlite3_column_int64(st, col);
                        break;
                case RUN_FIELD_U64:
                        *(uint64_t *) m = (uint64_t) sqlite3_column_int64(st, col);
                        break;
                case RUN_FIELD_REAL:
                        *(double *) m = sqlite3_column_double(st, col);
                        break;
                case RUN_FIELD_BOOL:
                        *(bool *) m = sqlite3_column_int(st, col) != 0;
                        break;
                case RUN_FIELD_IS:
                        *(bool *) m = t && strcmp(t, f->is) == 0;
                        break;
                case RUN_FIELD_CORRECTION: {
                        int c = t ? correction_from_string(t) : -1;
                        *(Correction *) m = c >= 0 ? (Correction) c : CORRECTION_HOLM;
                        break;
                }
                }
                col++;
        }
        return 0;
}

void run_fields_free(void *object, bool summary_only) {
        for (size_t i = 0; i < n_run_fields; i++) {
                const RunField *f = &run_fields[i];
                if (is_read(f, summary_only) && is_text(f)) {
                        char **m = member(f, object, summary_only);
                        free(*m);
                        *m = NULL;
                }
        }
}

json_t *run_field_json(const RunField *f, const Report *rep) {
        if (f->json)
                return f->json(rep, f);
        const void *m = run_field_of(f, rep);
        const char *t = is_text(f) ? *(char *const *) m : NULL;
        switch (f->type) {
        case RUN_FIELD_TEXT:
        case RUN_FIELD_TEXT_OR_NULL:
                return t ? json_string(t) : json_null();
        case RUN_FIELD_JSON: {
                json_t *parsed = t ? json_loads(t, 0, NULL) : NULL;
                return parsed ? parsed : json_null();
        }
        case RUN_FIELD_INT:
                return json_integer((json_int_t) * (const int64_t *) m);
        case RUN_FIELD_U64:
                return json_integer((json_int_t) * (const uint64_t *) m);
        case RUN_FIELD_REAL:
                return json_real(*(const double *) m);
        case RUN_FIELD_BOOL:
        case RUN_FIELD_IS:
                return json_boolean(*(const bool *) m);
        case RUN_FIELD_CORRECTION:
                return json_string(correction_to_string(*(const Correction *) m));
        }
        return json_null();
}

const char *run_field_text(const RunField *f, const Report *rep, char *buf, size_t size) {
        const void *m = run_field_of(f, rep);
        switch (f->type) {
        case RUN_FIELD_TEXT:
        case RUN_FIELD_TEXT_OR_NULL:
        case RUN_FIELD_JSON:
                return *(char *const *) m;
        case RUN_FIELD_INT:
                snprintf(buf, size, "%lld", (long long) *(const int64_t *) m);
                break;
        case RUN_FIELD_U64:
                snprintf(buf, size, "%llu", (unsigned long long) *(const uint64_t *) m);
                break;
        case RUN_FIELD_REAL:
                snprintf(buf, size, "%g", *(const double *) m);
                break;
        case RUN_FIELD_BOOL:
        case RUN_FIELD_IS:
                snprintf(buf, size, "%s", *(const bool *) m ? "yes" : "no");
                break;
        case RUN_FIELD_CORRECTION:
                snprintf(buf, size, "%s", correction_to_string(*(const Correction *) m));
                break;
        }
        return buf;
}

static bool is_inserted(const RunField *f) {
        return f->column && (f->obtain || f->insert_sql);
}

static char *insert_sql(void) {
        char *sql = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&sql, &size);
        if (!out)
                return NULL;
        fputs("INSERT INTO runs (", out);
        const char *comma = "";
        for (size_t i = 0; i < n_run_fields; i++)
                if (is_inserted(&run_fields[i])) {
                        fprintf(out, "%s%s", comma, run_fields[i].column);
                        comma = ", ";
                }
        fputs(") VALUES (", out);
        comma = "";
        for (size_t i = 0; i < n_run_fields; i++)
                if (is_inserted(&run_fields[i])) {
                        fprintf(out, "%s%s", comma, run_fields[i].insert_sql ?: "?");
                        comma = ", ";
                }
        fputs(")", out);
        return memstream_text(out, &sql);
}

/* Binds f's value for src as parameter i of st. Text from outside (a file name, a label, a
 * variable) is stored as text_storable() keeps it. */
static int bind(sqlite3_stmt *st, int i, const RunField *f, const RunSource *src) {
        RunValue v = {};
        int r = f->obtain(src, &v);
        _cleanup_free_ char *owned = v.owned;
        if (r < 0)
                return r;
        if (v.null)
                return sqlite3_bind_null(st, i) == SQLITE_OK ? 0 : -ENOMEM;
        bool oom = false;
        _cleanup_free_ char *stored = is_text(f) ? text_storable(v.text, &oom) : NULL;
        if (oom)
                return -ENOMEM;
        switch (f->type) {
        case RUN_FIELD_INT:
        case RUN_FIELD_U64:
        case RUN_FIELD_BOOL:
                r = sqlite3_bind_int64(st, i, v.i);
                break;
        case RUN_FIELD_REAL:
                r = sqlite3_bind_double(st, i, v.d);
                break;
        default:
                r = sqlite3_bind_text(st, i, stored ? stored : v.text, -1, SQLITE_TRANSIENT);
        }
        return r == SQLITE_OK ? 0 : -ENOMEM;
}

int run_fields_insert(sqlite3 *db, const RunSource *src, int64_t *ret_id) {
        _cleanup_free_ char *sql = insert_sql();
        if (!sql)
                return -ENOMEM;
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                return sql_failed(db);
        int r = 0, i = 1;
        for (size_t k = 0; k < n_run_fields && r >= 0; k++) {
                const RunField *f = &run_fields[k];
                if (is_inserted(f) && f->obtain)
                        r = bind(st, i++, f, src);
        }
        if (r >= 0)
                r = sql_step_bound(db, st, ret_id);
        sqlite3_finalize(st);
        return r;
}
