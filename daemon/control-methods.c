/* SPDX-License-Identifier: MIT */
/*
 * The control socket's methods (docs/protocol.md), apart from its transport (control.c): a
 * table of each method's parameters and who may call it, checked once before the call; the
 * methods; and submissions, checked and stored in batches as the loop has time.
 */
#include <assert.h>
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "configs/spec.h"
#include "daemon/control-internal.h"
#include "daemon/control.h"
#include "daemon/identity.h"
#include "daemon/log.h"
#include "db/jobs.h"
#include "db/session.h"
#include "runner/cgroup.h"
#include "runner/plan.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "util/text.h"
#include "util/clock.h"

/* Whether the peer may see everything of job j: root, and the job's submitter. */
static bool may_see(const Connection *c, const Job *j) {
        return c->peer.uid == 0 || c->peer.uid == j->uid;
}

/* A job as the peer may see it: another user's job shows only that it exists and its state. */
static json_t *job_json_for(const Connection *c, const Job *j) {
        if (!may_see(c, j))
                return json_pack("{s:I, s:s, s:s, s:s, s:I, s:s, s:s?, s:s?}", "id", (json_int_t) j->id,
                                 "status", job_status_to_string(j->status), "spec_path",
                                 "(another user's job)", "submitter", "-", "run_id", (json_int_t) 0,
                                 "submitted_at", j->submitted_at, "started_at", j->started_at, "ended_at",
                                 j->ended_at);
        return json_pack("{s:I, s:s, s:s, s:I, s:s?, s:s, s:I, s:s, s:s?, s:s?, s:s?}", "id",
                         (json_int_t) j->id, "status", job_status_to_string(j->status), "spec_path",
                         j->spec_path, "uid", (json_int_t) j->uid, "submitter", j->submitter, "trigger",
                         j->trigger, "run_id", (json_int_t) j->run_id, "submitted_at", j->submitted_at,
                         "started_at", j->started_at, "ended_at", j->ended_at, "message", j->message);
}

/* The reply for a spec_path or cwd that cannot be taken, or NULL. Both are shown to others
 * (root's queue, the log): no escape sequence rides along. A relative spec_path is the
 * submitter's, relative to cwd, which must be absolute. */
static json_t *invalid_path(const char *spec_path, const char *cwd) {
        const struct {
                const char *name, *value;
                bool absolute;
        } paths[] = { { "spec_path", spec_path, false }, { "cwd", cwd, true } };
        for (size_t k = 0; k < ELEMENTSOF(paths); k++) {
                const char *why =
                        !paths[k].value[0]                               ? "is empty"
                        : strlen(paths[k].value) > CONTROL_MAX_SPEC_PATH ? "is longer than PATH_MAX"
                        : !text_is_clean(paths[k].value) ? "holds control characters or is not UTF-8"
                        : paths[k].absolute && paths[k].value[0] != '/' ? "must be an absolute path"
                                                                        : NULL;
                if (why)
                        return control_error_reply("io.alloclab.InvalidParameter",
                                                   json_pack("{s:s++}", "message", paths[k].name, " ", why));
        }
        return NULL;
}

/* Parses the spec into *ret; the SpecInvalid reply with its diagnostics when it cannot. */
static json_t *load_spec(const char *spec_path, const char *yaml, Spec **ret) {
        Diagnostics diag = {};
        int r = spec_load_buffer(spec_path, yaml, strlen(yaml), &diag, ret);
        json_t *reply = NULL;
        if (r < 0) {
                json_t *list = json_array();
                for (size_t k = 0; k < diag.n_items; k++) {
                        _cleanup_free_ char *line = diag_format(&diag, k);
                        json_array_append_new(list, json_string(line ? line : "?"));
                }
                reply = control_error_reply("io.alloclab.SpecInvalid",
                                            json_pack("{s:o}", "diagnostics", list));
        }
        diag_clear(&diag);
        return reply;
}

/* Submit: the spec is parsed here; what else `alloclab check` checks, and the storing, is done
 * for every submission of this turn of the loop together (on_submissions). The reply waits
 * until the job is stored, so an answered Submit survives a crash. */
static json_t *method_submit(Connection *c, json_t *params, Job *none) {
        (void) none;
        const char *spec_path = NULL, *yaml = NULL, *cwd = NULL;
        json_t *env = NULL;
        json_int_t umask = JOB_DEFAULT_UMASK; /* older clients do not send theirs */
        /* Their types and the umask's range are checked (the method table). */
        (void) json_unpack(params, "{s:s, s:s, s:s, s:o, s?I}", "spec_path", &spec_path, "spec", &yaml,
                           "cwd", &cwd, "env", &env, "umask", &umask);
        json_t *invalid = invalid_path(spec_path, cwd);
        if (invalid)
                return invalid;
        if (manager_stopping(c->control->ctx.manager))
                return control_error_reply("io.alloclab.ShuttingDown", NULL);

        Spec *spec = NULL;
        json_t *spec_invalid = load_spec(spec_path, yaml, &spec);
        if (spec_invalid)
                return spec_invalid;

        Job job = { .uid = c->peer.uid, .gid = c->peer.gid, .umask = (mode_t) umask };
        size_t i;
        json_t *v;
        json_array_foreach(env, i, v) {
                if (json_is_string(v) && strchr(json_string_value(v), '=') && i < SPEC_MAX_ENV * 4)
                        (void) strv_append(&job.env, json_string_value(v));
        }
        if (!(job.spec_path = strdup(spec_path)) || !(job.spec_yaml = strdup(yaml)) ||
            !(job.cwd = strdup(cwd)) || identity_user_name(c->peer.uid, c->peer.gid, &job.submitter) < 0 ||
            !(job.trigger = strdup("submit"))) {
                job_done(&job);
                spec_free(spec);
                return control_error_reply("io.alloclab.StoreFailed",
                                           json_pack("{s:s}", "message", strerror(ENOMEM)));
        }
        /* This connection's next requests wait for the answer. A connection has one submission
         * pending at most, so the table never overflows. */
        assert(c->control->n_pending < ELEMENTSOF(c->control->pending));
        c->control->pending[c->control->n_pending++] =
                (PendingSubmission){ .connection = c, .job = job, .spec = spec };
        c->submitting = true;
        (void) sd_event_source_set_enabled(c->control->commit, SD_EVENT_ONESHOT);
        return NULL;
}

/* What `alloclab check` checks beyond the spec: the allocators and programs exist for the
 * submitter as the submitter sees them (the caller has taken the submitter's file identity).
 * The plan is freed at once: a burst of large valid specs held one plan each (58 MB for a matrix
 * of 4096 cells), gigabytes in all. */
static void plan_submission(const ControlContext *ctx, PendingSubmission *p, Memo *memo) {
        Plan *plan = NULL;
        p->result = session_check(p->spec,
                                  &(PlanOptions){ .caller_env = p->job.env,
                                                  .probe_path = ctx->probe_path,
                                                  .base_dir = p->job.cwd,
                                                  .defer_cgroup = true,
                                                  .memo = memo },
                                  &plan, &p->message);
        plan_free(plan);
}

/* Only a limit needs the cgroup to be tried now (with the daemon's identity); the job makes its
 * own when it starts. */
static void check_limits(PendingSubmission *p) {
        bool pids_v1 = false;
        if (p->result < 0 || (!p->spec->memory_max && !p->spec->pids_max))
                return;
        p->result = plan_check_limits(p->spec, &pids_v1, &p->message);
        /* A runner joins the v1 pids cgroup around each child, and v1 cannot be handed to a user:
         * only a job that keeps root's identity may use it. */
        if (p->result >= 0 && p->spec->pids_max && pids_v1 && geteuid() == 0 && p->job.uid != 0) {
                p->result = -EPERM;
                p->message = strdup("pids_max: this host has the pids controller only in its cgroup v1 "
                                    "hierarchy, which cannot be handed to a user's job; leave pids_max out, "
                                    "or run the spec as root");
        }
}

/* Plans submissions with their submitters' file identities, taken once per submitter: a burst
 * of one user's submissions switches identity once, and looks for each allocator, program and
 * directory once. Stops once CONTROL_PLAN_BUDGET_USEC have gone (after one at least), so that
 * the loop answers others in between: ret_planned[i] says which were. */
static void plan_submissions(const ControlContext *ctx, PendingSubmission *pending, size_t n,
                             bool ret_planned[]) {
        uint64_t until = now_usec() + CONTROL_PLAN_BUDGET_USEC;
        memset(ret_planned, 0, n * sizeof(bool));
        bool spent = false;
        for (size_t i = 0; i < n && !spent; i++) {
                if (ret_planned[i])
                        continue;
                uid_t uid = pending[i].job.uid;
                gid_t gid = pending[i].job.gid;
                Identity saved;
                Memo memo = {};
                int q = identity_enter(uid, gid, &saved);
                for (size_t j = i; j < n && !spent; j++) {
                        if (ret_planned[j] || pending[j].job.uid != uid || pending[j].job.gid != gid)
                                continue;
                        ret_planned[j] = true;
                        if (q < 0)
                                pending[j].result = q;
                        else
                                plan_submission(ctx, &pending[j], &memo);
                        spent = now_usec() >= until;
                }
                identity_leave(&saved);
                memo_clear(&memo);
        }
        for (size_t i = 0; i < n; i++)
                if (ret_planned[i])
                        check_limits(&pending[i]);
}

/* The answer to a submission checked this turn: its job's number, or why it was not stored
 * (its plan failed, or the store: r < 0). */
static json_t *submission_reply(const PendingSubmission *p, int r, const char *store_failure, int64_t id) {
        if (p->result < 0)
                return control_error_reply(
                        "io.alloclab.PlanFailed",
                        json_pack("{s:s}", "message", p->message ? p->message : strerror(-p->result)));
        if (r < 0)
                return control_error_reply("io.alloclab.StoreFailed",
                                           json_pack("{s:s}", "message", store_failure));
        log_message(LOG_INFO, 0, "job %lld queued by uid %u: %s", (long long) id, (unsigned) p->job.uid,
                    p->job.spec_path);
        return json_pack("{s:{s:I}}", "parameters", "job", (json_int_t) id);
}

/* Checks the submissions that arrived since the last turn, stores the valid ones in one
 * transaction (one sync for a burst) and answers each. */
static int on_submissions(sd_event_source *s, void *userdata) {
        Control *ctl = userdata;
        Store *store = ctl->ctx.store;
        (void) s;
        /* Taken out of the table first: answering a connection reads its next requests, which
         * may park new submissions there. */
        PendingSubmission all[ELEMENTSOF(ctl->pending)], taken[ELEMENTSOF(ctl->pending)];
        bool planned[ELEMENTSOF(ctl->pending)];
        size_t n_all = ctl->n_pending, n = 0;
        memcpy(all, ctl->pending, n_all * sizeof(*all));
        ctl->n_pending = 0;
        plan_submissions(&ctl->ctx, all, n_all, planned);
        /* What the budget left waits for the next turn, in its order, before newer ones. */
        for (size_t i = 0; i < n_all; i++) {
                if (planned[i])
                        taken[n++] = all[i];
                else
                        ctl->pending[ctl->n_pending++] = all[i];
        }
        if (ctl->n_pending > 0)
                (void) sd_event_source_set_enabled(ctl->commit, SD_EVENT_ONESHOT);

        Job jobs[ELEMENTSOF(ctl->pending)];
        int64_t ids[ELEMENTSOF(ctl->pending)] = {};
        size_t n_jobs = 0;
        for (size_t i = 0; i < n; i++)
                if (taken[i].result >= 0)
                        jobs[n_jobs++] = taken[i].job;
        int r = n_jobs ? jobs_add_all(store, jobs, n_jobs, ids) : 0;
        const char *store_failure = r < 0 ? store_error(store) : NULL;
        for (size_t i = 0, k = 0; i < n; i++) {
                PendingSubmission *p = &taken[i];
                json_t *reply = submission_reply(p, r, store_failure, ids[k]);
                if (p->result >= 0)
                        k++;
                job_done(&p->job);
                spec_free(p->spec);
                free(p->message);
                Connection *c = p->connection;
                if (!c) {
                        json_decref(reply);
                        continue;
                }
                c->submitting = false;
                control_queue_reply(c, reply);
                control_process_input(c);
                (void) control_arm_idle(c);
        }
        if (r >= 0 && n_jobs)
                manager_start_soon(ctl->ctx.manager);
        /* A burst of large specs leaves the heap grown by what their plans took: given back,
         * not kept for as long as the daemon idles (137 MB after one). A few ms per batch. */
        if (ctl->n_pending == 0)
                (void) malloc_trim(0);
        return 0;
}

static json_t *method_status(Connection *c, json_t *params, Job *job) {
        const ControlContext *ctx = &c->control->ctx;
        (void) params;
        (void) job;
        Job *queued = NULL;
        size_t n = 0;
        if (jobs_list(ctx->store, true, 1000, &queued, &n) < 0)
                return control_error_reply("io.alloclab.StoreFailed",
                                           json_pack("{s:s}", "message", store_error(ctx->store)));
        json_t *running = json_null();
        size_t waiting = 0;
        bool visible = true; /* the progress line names the running job's experiment and cell */
        for (size_t i = 0; i < n; i++) {
                if (queued[i].status == JOB_RUNNING) {
                        json_decref(running);
                        running = job_json_for(c, &queued[i]);
                        visible = may_see(c, &queued[i]);
                } else
                        waiting++;
        }
        jobs_list_free(queued, n);
        /* Idle, the text is made now: what was published last may be a job's that has ended. */
        if (!manager_running_job(ctx->manager))
                manager_update_status(ctx->manager, NULL);
        return json_pack("{s:{s:s, s:o, s:I, s:s, s:s, s:s}}", "parameters", "state",
                         manager_running_job(ctx->manager) ? "running" : "idle", "running", running,
                         "queued", (json_int_t) waiting, "database", ctx->db_path, "version",
                         ALLOCLAB_VERSION, "progress",
                         visible ? manager_status(ctx->manager) : "running another user's job");
}

static json_t *method_queue(Connection *c, json_t *params, Job *job) {
        (void) job;
        json_int_t limit = 50;
        (void) json_unpack(params, "{s?I}", "limit", &limit);
        Job *jobs = NULL;
        size_t n = 0;
        if (jobs_list(c->control->ctx.store, false, (size_t) limit, &jobs, &n) < 0)
                return control_error_reply("io.alloclab.StoreFailed", NULL);
        json_t *list = json_array();
        size_t bytes = 0, i = 0;
        /* The newest first, as many as fit in one reply (a job is at most a few KiB). */
        for (; i < n && bytes < CONTROL_MAX_REPLY - 16 * 1024; i++) {
                json_t *j = job_json_for(c, &jobs[i]);
                char *text = json_dumps(j, JSON_COMPACT);
                bytes += text ? strlen(text) + 1 : 0;
                free(text);
                json_array_append_new(list, j);
        }
        bool truncated = i < n;
        jobs_list_free(jobs, n);
        return json_pack("{s:{s:o, s:b}}", "parameters", "jobs", list, "truncated", truncated);
}

/* Only the submitter or root may cancel a job (the method table says so). */
static json_t *method_cancel(Connection *c, json_t *params, Job *job) {
        const ControlContext *ctx = &c->control->ctx;
        (void) params;
        int64_t id = job->id;
        if (job->status == JOB_QUEUED) {
                if (jobs_finish(ctx->store, id, JOB_CANCELED, "canceled before it started") < 0)
                        return control_error_reply("io.alloclab.StoreFailed", NULL);
                control_job_finished(c->control, id);
        } else if (job->status != JOB_RUNNING || manager_cancel(ctx->manager, id) < 0)
                return control_error_reply("io.alloclab.JobFinished",
                                           json_pack("{s:I, s:s}", "job", (json_int_t) id, "status",
                                                     job_status_to_string(job->status)));
        log_message(LOG_INFO, 0, "job %lld canceled by uid %u", (long long) id, (unsigned) c->peer.uid);
        return json_pack("{s:{}}", "parameters");
}

/* The reply to Wait: the job as the peer may see it, and for its submitter (or root) how its run
 * ended (failures, excluded), which a submitter who cannot read the database needs for its exit
 * status. */
static json_t *ended_job_reply(Connection *c, const Job *job) {
        json_t *j = job_json_for(c, job);
        int64_t failures = 0, excluded = 0;
        if (may_see(c, job) && job->run_id > 0 &&
            jobs_run_outcome(c->control->ctx.store, job->run_id, &failures, &excluded) == 0) {
                json_object_set_new(j, "failures", json_integer(failures));
                json_object_set_new(j, "excluded", json_integer(excluded));
        }
        return json_pack("{s:o}", "parameters", j);
}

/* Wait: replies when the job has ended (at once if it already has). */
static json_t *method_wait(Connection *c, json_t *params, Job *job) {
        (void) params;
        if (job->status == JOB_QUEUED || job->status == JOB_RUNNING) {
                c->waiting_for = job->id;
                return NULL;
        }
        return ended_job_reply(c, job);
}

static json_t *method_ping(Connection *c, json_t *params, Job *job) {
        (void) job;
        (void) c;
        (void) params;
        return json_pack("{s:{s:s}}", "parameters", "version", ALLOCLAB_VERSION);
}

static json_t *method_schedules(Connection *c, json_t *params, Job *job) {
        (void) job;
        (void) params;
        return json_pack("{s:{s:o}}", "parameters", "schedules", scheduler_list(c->control->ctx.scheduler));
}

/* A parameter of a method: its JSON type (an array's elements are strings), whether it may be
 * left out (or given as null), an integer's range, and what it must be, in words. */
typedef struct MethodParam {
        const char *name;
        json_type type; /* JSON_STRING, JSON_INTEGER or JSON_ARRAY */
        bool optional;
        json_int_t min, max;
        const char *expected;
} MethodParam;

/* Who may call a method: anyone connected, or (for a method of a job) its submitter or root. */
typedef enum MethodCaller {
        CALLER_ANYONE,
        CALLER_SUBMITTER,
} MethodCaller;

#define METHOD_MAX_PARAMS 5

/* A method: its parameters, checked before it is called (InvalidParameter saying which one does
 * not fit, and what it must be), who may call it, and the call: its reply, or NULL when the reply
 * comes later (Submit, Wait). A method with a "job" parameter is called with that job (NoSuchJob
 * without one); the others with NULL. */
typedef struct ControlMethod {
        const char *name;
        MethodParam params[METHOD_MAX_PARAMS]; /* up to the first without a name */
        MethodCaller caller;
        json_t *(*call)(Connection *c, json_t *params, Job *job);
} ControlMethod;

#define TEXT_PARAM(name)                                                                                    \
        { name, JSON_STRING, false, 0, 0, "a string" }
#define JOB_PARAM                                                                                           \
        { "job", JSON_INTEGER, false, INT64_MIN, INT64_MAX, "a job's number" }

static const ControlMethod methods[] = {
        { "io.alloclab.Ping", {}, CALLER_ANYONE, method_ping },
        { "io.alloclab.Submit",
          { TEXT_PARAM("spec_path"),
            TEXT_PARAM("spec"),
            TEXT_PARAM("cwd"),
            { "env", JSON_ARRAY, false, 0, 0, "an array of KEY=VALUE strings" },
            { "umask", JSON_INTEGER, true, 0, 0777, "an integer from 0 to 0777" } },
          CALLER_ANYONE,
          method_submit },
        { "io.alloclab.Status", {}, CALLER_ANYONE, method_status },
        { "io.alloclab.Queue",
          { { "limit", JSON_INTEGER, true, 1, 10000, "an integer from 1 to 10000" } },
          CALLER_ANYONE,
          method_queue },
        { "io.alloclab.Cancel", { JOB_PARAM }, CALLER_SUBMITTER, method_cancel },
        { "io.alloclab.Schedules", {}, CALLER_ANYONE, method_schedules },
        { "io.alloclab.Wait", { JOB_PARAM }, CALLER_ANYONE, method_wait },
};

static bool strings_only(json_t *array) {
        size_t i;
        json_t *v;
        json_array_foreach(array, i, v) {
                if (!json_is_string(v))
                        return false;
        }
        return true;
}

/* Checks params (NULL for none) against m's parameters; an optional one given as null is taken
 * out, as if left out. Returns NULL, or the InvalidParameter reply naming the first that does
 * not fit. */
static json_t *check_params(const ControlMethod *m, json_t *params) {
        if (params && !json_is_object(params))
                return control_error_reply("io.alloclab.InvalidParameter",
                                           json_pack("{s:s}", "message", "parameters must be an object"));
        for (size_t i = 0; i < METHOD_MAX_PARAMS && m->params[i].name; i++) {
                const MethodParam *p = &m->params[i];
                json_t *v = json_object_get(params, p->name);
                if (p->optional && json_is_null(v)) {
                        json_object_del(params, p->name);
                        continue;
                }
                if (!v && p->optional)
                        continue;
                bool fits = v && json_typeof(v) == p->type &&
                            (p->type != JSON_INTEGER ||
                             (json_integer_value(v) >= p->min && json_integer_value(v) <= p->max)) &&
                            (p->type != JSON_ARRAY || strings_only(v));
                if (!fits)
                        return control_error_reply(
                                "io.alloclab.InvalidParameter",
                                json_pack("{s:s++}", "message", p->name,
                                          v ? " must be " : " is missing: ", p->expected));
        }
        return NULL;
}

static bool has_job_param(const ControlMethod *m) {
        return m->params[0].name && strcmp(m->params[0].name, "job") == 0;
}

/* The reply to method `name` with params (NULL for none), NULL when the reply comes later. */
static json_t *call(Connection *c, const char *name, json_t *params) {
        const ControlMethod *m = NULL;
        for (size_t i = 0; i < ELEMENTSOF(methods) && !m; i++)
                if (strcmp(methods[i].name, name) == 0)
                        m = &methods[i];
        if (!m)
                return control_error_reply("io.alloclab.MethodNotFound", json_pack("{s:s}", "method", name));
        json_auto_t *given = json_is_object(params) ? json_copy(params)
                             : params               ? json_incref(params)
                                                    : json_object();
        json_t *invalid = check_params(m, given);
        if (invalid)
                return invalid;
        if (!has_job_param(m))
                return m->call(c, given, NULL);
        json_int_t id = json_integer_value(json_object_get(given, "job"));
        Job job;
        if (jobs_get(c->control->ctx.store, id, &job) < 0)
                return control_error_reply("io.alloclab.NoSuchJob", json_pack("{s:I}", "job", id));
        json_t *reply = m->caller == CALLER_SUBMITTER && !may_see(c, &job)
                                ? control_error_reply("io.alloclab.PermissionDenied", NULL)
                                : m->call(c, given, &job);
        job_done(&job);
        return reply;
}

void control_job_finished(Control *ctl, int64_t job_id) {
        for (Connection *c = ctl->connections; c; c = c->next) {
                if (c->waiting_for != job_id)
                        continue;
                Job job;
                c->waiting_for = 0;
                if (jobs_get(ctl->ctx.store, job_id, &job) == 0) {
                        control_queue_reply(c, ended_job_reply(c, &job));
                        job_done(&job);
                } else
                        control_queue_reply(c, control_error_reply("io.alloclab.NoSuchJob", NULL));
                (void) control_arm_idle(c);
        }
}

int control_new(const ControlContext *ctx, int listen_fd, Control **ret) {
        static const ControlMethods methods_served = { .call = call, .on_submissions = on_submissions };
        return control_transport_new(ctx, &methods_served, listen_fd, ret);
}
