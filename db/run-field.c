/* SPDX-License-Identifier: MIT */
/*
 * The run field table (run-field.h): each field of a run, and how a new run's value of it is
 * obtained. What the table drives (the INSERT, the readers, the JSON header, the Run table) is
 * run-field-sql.c.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/run-field.h"
#include "runner/counters.h"
#include "runner/env.h"
#include "stats/sampleset.h"
#include "util/cleanup.h"
#include "util/proc.h"

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

/* Measured here: which counters alloclab-spawner (the same user, on the same machine) opens. */
static int obtain_counters(const RunSource *src, RunValue *ret) {
        if (src->ctx->import_sha256)
                return text(ret, NULL);
        _cleanup_free_ char *described = counters_describe();
        char *all = NULL;
        if (described &&
            asprintf(&all, "%s%s", described,
                     src->plan->callgrind ? "; instructions counted by valgrind's callgrind instead: the "
                                            "warm-ups and samples ran under it, so their times, memory and "
                                            "other counters are valgrind's"
                                          : "") < 0)
                all = NULL;
        return owned_text(ret, all);
}

static int obtain_timed_under(const RunSource *src, RunValue *ret) {
        return text(ret, src->plan->callgrind ? "callgrind" : NULL);
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

/* A job id names a job within its cluster only. */
static int obtain_slurm_cluster(const RunSource *src, RunValue *ret) {
        return text(ret, env_get(src->ctx->origin_env, "SLURM_CLUSTER_NAME"));
}

static int obtain_slurm_partition(const RunSource *src, RunValue *ret) {
        return text(ret, env_get(src->ctx->origin_env, "SLURM_JOB_PARTITION"));
}

/* The machine name the run is filed under: the one chosen (RecordContext.machine), else the
 * host name. */
static int obtain_machine(const RunSource *src, RunValue *ret) {
        return text(ret, src->ctx->machine ? src->ctx->machine : src->host->hostname);
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
        /* a run of an earlier version is filed under its host name */
        FIELD("machine", TEXT, run.machine, .select = STORE_SQL_MACHINE("runs", "hosts"),
              .obtain = obtain_machine, .json_key = "machine", .label = "machine", .label_rank = 13),
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
        FIELD("counters", TEXT_OR_NULL, counters, .obtain = obtain_counters, .json_key = "counters",
              .label = "counters", .label_rank = 12),
        FIELD("timed_under", TEXT_OR_NULL, timed_under, .obtain = obtain_timed_under,
              .json_key = "timed_under"),
        FIELD("n_failures", INT, run.n_failures, .json_key = "n_failures"),
        FIELD("pruned_at", TEXT_OR_NULL, run.pruned_at, .json_key = "pruned_at"),

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
        RECORDED("slurm_cluster", TEXT_OR_NULL, .obtain = obtain_slurm_cluster),
        RECORDED("slurm_partition", TEXT_OR_NULL, .obtain = obtain_slurm_partition),
        RECORDED("import_sha256", TEXT_OR_NULL, .obtain = obtain_import_sha256),
        RECORDED("import_cpu", JSON, .obtain = obtain_import_cpu),
};

const size_t n_run_fields = sizeof(run_fields) / sizeof(run_fields[0]);
