/* SPDX-License-Identifier: MIT */
/*
 * Control connections. Each connection has an input buffer (at most CONTROL_MAX_MESSAGE), an
 * output buffer, an idle timer, and the peer's credentials from SO_PEERCRED. Requests are
 * handled in order as whole NUL-terminated messages; a request that is not a JSON object with a
 * "method" string gets an error reply, a too large one closes the connection. Nothing a client
 * sends can block the loop: reads and writes are non-blocking and bounded.
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
#include "daemon/control.h"
#include "daemon/identity.h"
#include "daemon/log.h"
#include "db/jobs.h"
#include "runner/cgroup.h"
#include "runner/plan.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "util/text.h"
#include "util/clock.h"

typedef struct Connection Connection;

typedef struct PendingSubmission {
        Connection *connection; /* NULL once it closed: stored, not answered */
        Job job;
        Spec *spec;
        /* filled in by plan_submissions() */
        int result; /* 0, or -errno: refused with message (if set) */
        Plan *plan;
        char *message;
} PendingSubmission;

struct Connection {
        Control *control;
        Connection *next;
        int fd;
        struct ucred peer;
        sd_event_source *io;
        sd_event_source *idle;
        char *in; /* grows by doubling up to CONTROL_MAX_MESSAGE: most requests are small */
        size_t in_size, in_allocated;
        char *out;
        size_t out_size, out_sent;
        int64_t waiting_for;   /* job id of a pending io.alloclab.Wait, or 0 */
        bool submitting;       /* its Submit waits for the next commit of submissions */
        uint64_t last_active;  /* CLOCK_MONOTONIC usec of the last byte read or accepted */
        uint64_t last_request; /* ... of the last whole request, or of the accept */
        bool closing;          /* close once the output is flushed */
        bool parked;           /* accepted while the table was full: not read until it has a slot */
};

struct Control {
        ControlContext ctx;
        int fd;
        sd_event_source *accept;
        sd_event_source *accept_retry; /* while connections are parked: tries to give them slots */
        sd_event_source *unpark_soon;  /* a slot freed: the connection parked longest takes it */
        /* Parsed submissions not yet checked and stored: done together when the loop has
         * nothing else to do (one identity switch per submitter, one sync for a burst), and only
         * then answered. */
        PendingSubmission pending[CONTROL_MAX_CONNECTIONS];
        size_t n_pending;
        sd_event_source *commit;
        Connection *connections; /* the table: read and served */
        unsigned n_connections;
        Connection *parked, *parked_last; /* first come, first given a slot */
        unsigned n_parked;
        char scratch[CONTROL_INITIAL_INPUT]; /* see read_whole_requests() */
};

static void connection_free(Connection *c) {
        Control *ctl = c->control;
        for (size_t i = 0; i < ctl->n_pending; i++)
                if (ctl->pending[i].connection == c)
                        ctl->pending[i].connection = NULL;
        Connection **list = c->parked ? &ctl->parked : &ctl->connections, *before = NULL;
        for (Connection **p = list; *p; before = *p, p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        if (c->parked) {
                ctl->n_parked--;
                if (ctl->parked_last == c)
                        ctl->parked_last = before;
        } else
                ctl->n_connections--;
        (void) sd_event_source_set_enabled(ctl->accept, SD_EVENT_ON); /* paused for want of fds */
        /* A slot freed: the connection parked longest takes it, once this turn of the loop is done
         * (a connection is freed in the middle of much). */
        if (!c->parked && ctl->parked)
                (void) sd_event_source_set_enabled(ctl->unpark_soon, SD_EVENT_ONESHOT);
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->idle);
        safe_close(c->fd);
        free(c->in);
        free(c->out);
        free(c);
}

Control *control_free(Control *c) {
        if (!c)
                return NULL;
        while (c->parked)
                connection_free(c->parked);
        while (c->connections)
                connection_free(c->connections);
        sd_event_source_disable_unref(c->accept);
        sd_event_source_disable_unref(c->accept_retry);
        sd_event_source_disable_unref(c->unpark_soon);
        sd_event_source_disable_unref(c->commit);
        for (size_t i = 0; i < c->n_pending; i++) {
                job_done(&c->pending[i].job);
                spec_free(c->pending[i].spec);
        }
        safe_close(c->fd);
        free(c);
        return NULL;
}

static int arm_idle(Connection *c) {
        uint64_t timeout = c->control->ctx.idle_timeout_usec;
        /* A client waiting for its job is not idle. */
        bool busy = c->waiting_for || c->submitting;
        int r = sd_event_source_set_enabled(c->idle, busy ? SD_EVENT_OFF : SD_EVENT_ONESHOT);
        if (r >= 0 && !busy)
                r = sd_event_source_set_time_relative(c->idle, timeout);
        return r;
}

static size_t pending_output(const Connection *c) {
        return c->out_size - c->out_sent;
}

/* A client that does not read its replies is not read from either: its output stays bounded. */
static int update_events(Connection *c) {
        bool readable = !c->closing && pending_output(c) < CONTROL_MAX_PENDING_OUTPUT;
        uint32_t events = (pending_output(c) ? EPOLLOUT : 0) | (readable ? EPOLLIN : 0);
        return sd_event_source_set_io_events(c->io, events);
}

/* Sends what the socket takes of the pending output. Returns 0 or -errno of a broken
 * connection. */
static int send_output(Connection *c) {
        if (!pending_output(c))
                return 0;
        ssize_t n = send(c->fd, c->out + c->out_sent, pending_output(c), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        c->out_sent += (size_t) n;
        if (c->out_sent == c->out_size)
                c->out_sent = c->out_size = 0;
        return 0;
}

static void queue_reply(Connection *c, json_t *reply) {
        char *text = json_dumps(reply, JSON_COMPACT);
        json_decref(reply);
        if (!text) {
                c->closing = true;
                return;
        }
        size_t n = strlen(text) + 1; /* with the NUL terminator */
        if (c->out_sent > 0) {       /* what was sent makes room: the buffer holds only what is pending */
                memmove(c->out, c->out + c->out_sent, pending_output(c));
                c->out_size -= c->out_sent;
                c->out_sent = 0;
        }
        char *out = realloc(c->out, c->out_size + n);
        if (!out) {
                free(text);
                c->closing = true;
                return;
        }
        memcpy(out + c->out_size, text, n);
        c->out = out;
        c->out_size += n;
        free(text);
        /* Most replies fit the socket's buffer at once: no turn of the loop waits for EPOLLOUT. */
        if (send_output(c) < 0) {
                c->out_size = c->out_sent = 0;
                c->closing = true;
        }
        (void) update_events(c);
}

static json_t *error_reply(const char *error, json_t *parameters) {
        return json_pack("{s:s, s:o}", "error", error, "parameters",
                         parameters ? parameters : json_object());
}

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

/* Submit: the spec is parsed here; what else `alloclab check` checks, and the storing, is done
 * for every submission of this turn of the loop together (on_submissions). The reply waits
 * until the job is stored, so an answered Submit survives a crash. */
static json_t *method_submit(Connection *c, json_t *params) {
        const char *spec_path = NULL, *yaml = NULL, *cwd = NULL;
        json_t *env = NULL;
        json_int_t umask = JOB_DEFAULT_UMASK; /* older clients do not send theirs */
        if (json_unpack(params, "{s:s, s:s, s:s, s:o, s?I}", "spec_path", &spec_path, "spec", &yaml, "cwd",
                        &cwd, "env", &env, "umask", &umask) < 0 ||
            !json_is_array(env) || umask < 0 || umask > 0777)
                return error_reply(
                        "io.alloclab.InvalidParameter",
                        json_pack("{s:s}", "message",
                                  "expected spec_path, spec, cwd, env and a umask from 0 to 0777"));
        /* Both are shown to others (root's queue, the log): no escape sequence rides along. */
        /* A relative spec_path is the submitter's, relative to cwd, which must be absolute. */
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
                        return error_reply("io.alloclab.InvalidParameter",
                                           json_pack("{s:s++}", "message", paths[k].name, " ", why));
        }
        if (manager_stopping(c->control->ctx.manager))
                return error_reply("io.alloclab.ShuttingDown", NULL);

        Diagnostics diag = {};
        Spec *spec = NULL;
        int r = spec_load_buffer(spec_path, yaml, strlen(yaml), &diag, &spec);
        if (r < 0) {
                json_t *list = json_array();
                for (size_t k = 0; k < diag.n_items; k++) {
                        _cleanup_free_ char *line = diag_format(&diag, k);
                        json_array_append_new(list, json_string(line ? line : "?"));
                }
                diag_clear(&diag);
                return error_reply("io.alloclab.SpecInvalid", json_pack("{s:o}", "diagnostics", list));
        }
        diag_clear(&diag);

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
                return error_reply("io.alloclab.StoreFailed",
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
        p->result = plan_new(p->spec,
                             &(PlanOptions){ .caller_env = p->job.env,
                                             .probe_path = ctx->probe_path,
                                             .base_dir = p->job.cwd,
                                             .defer_cgroup = true,
                                             .check_only = true,
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

static void process_input(Connection *c);

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
                json_t *reply;
                if (p->result < 0)
                        reply = error_reply("io.alloclab.PlanFailed",
                                            json_pack("{s:s}", "message",
                                                      p->message ? p->message : strerror(-p->result)));
                else if (r < 0)
                        reply = error_reply("io.alloclab.StoreFailed",
                                            json_pack("{s:s}", "message", store_failure));
                else {
                        log_message(LOG_INFO, 0, "job %lld queued by uid %u: %s", (long long) ids[k],
                                    (unsigned) p->job.uid, p->job.spec_path);
                        reply = json_pack("{s:{s:I}}", "parameters", "job", (json_int_t) ids[k]);
                }
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
                queue_reply(c, reply);
                process_input(c);
                (void) arm_idle(c);
        }
        if (r >= 0 && n_jobs)
                manager_start_soon(ctl->ctx.manager);
        /* A burst of large specs leaves the heap grown by what their plans took: given back,
         * not kept for as long as the daemon idles (137 MB after one). A few ms per batch. */
        if (ctl->n_pending == 0)
                (void) malloc_trim(0);
        return 0;
}

static json_t *method_status(Connection *c, json_t *params) {
        const ControlContext *ctx = &c->control->ctx;
        (void) params;
        Job *queued = NULL;
        size_t n = 0;
        if (jobs_list(ctx->store, true, 1000, &queued, &n) < 0)
                return error_reply("io.alloclab.StoreFailed",
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

static json_t *method_queue(Connection *c, json_t *params) {
        json_int_t limit = 50;
        (void) json_unpack(params, "{s?I}", "limit", &limit);
        Job *jobs = NULL;
        size_t n = 0;
        if (limit < 1 || limit > 10000)
                return error_reply(
                        "io.alloclab.InvalidParameter",
                        json_pack("{s:s}", "message", "limit must be an integer from 1 to 10000"));
        if (jobs_list(c->control->ctx.store, false, (size_t) limit, &jobs, &n) < 0)
                return error_reply("io.alloclab.StoreFailed", NULL);
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

/* The job named by {"job": ID}: NULL and *ret filled, or the error reply. */
static json_t *requested_job(Connection *c, json_t *params, Job *ret) {
        json_int_t id;
        if (json_unpack(params, "{s:I}", "job", &id) < 0)
                return error_reply("io.alloclab.InvalidParameter",
                                   json_pack("{s:s}", "message", "expected job, a job's number"));
        if (jobs_get(c->control->ctx.store, id, ret) < 0)
                return error_reply("io.alloclab.NoSuchJob", json_pack("{s:I}", "job", id));
        return NULL;
}

/* Only the submitter or root may cancel a job. */
static json_t *method_cancel(Connection *c, json_t *params) {
        const ControlContext *ctx = &c->control->ctx;
        Job job;
        json_t *error = requested_job(c, params, &job);
        if (error)
                return error;
        int64_t id = job.id;
        JobStatus status = job.status;
        bool allowed = c->peer.uid == 0 || c->peer.uid == job.uid;
        job_done(&job);
        if (!allowed)
                return error_reply("io.alloclab.PermissionDenied", NULL);
        if (status == JOB_QUEUED) {
                if (jobs_finish(ctx->store, id, JOB_CANCELED, "canceled before it started") < 0)
                        return error_reply("io.alloclab.StoreFailed", NULL);
                control_job_finished(c->control, id);
        } else if (status != JOB_RUNNING || manager_cancel(ctx->manager, id) < 0)
                return error_reply("io.alloclab.JobFinished",
                                   json_pack("{s:I, s:s}", "job", (json_int_t) id, "status",
                                             job_status_to_string(status)));
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
static json_t *method_wait(Connection *c, json_t *params) {
        Job job;
        json_t *error = requested_job(c, params, &job);
        if (error)
                return error;
        int64_t id = job.id;
        bool active = job.status == JOB_QUEUED || job.status == JOB_RUNNING;
        json_t *reply = active ? NULL : ended_job_reply(c, &job);
        job_done(&job);
        if (!reply)
                c->waiting_for = id;
        return reply;
}

static json_t *method_ping(Connection *c, json_t *params) {
        (void) c;
        (void) params;
        return json_pack("{s:{s:s}}", "parameters", "version", ALLOCLAB_VERSION);
}

static json_t *method_schedules(Connection *c, json_t *params) {
        (void) params;
        return json_pack("{s:{s:o}}", "parameters", "schedules", scheduler_list(c->control->ctx.scheduler));
}

/* A method's reply, or NULL when the reply comes later (Submit, Wait). */
typedef json_t *(*Method)(Connection *c, json_t *params);

static const struct {
        const char *name;
        Method method;
} methods[] = {
        { "io.alloclab.Ping", method_ping },     { "io.alloclab.Submit", method_submit },
        { "io.alloclab.Status", method_status }, { "io.alloclab.Queue", method_queue },
        { "io.alloclab.Cancel", method_cancel }, { "io.alloclab.Schedules", method_schedules },
        { "io.alloclab.Wait", method_wait },
};

static Method find_method(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(methods); i++)
                if (strcmp(methods[i].name, name) == 0)
                        return methods[i].method;
        return NULL;
}

static void handle_request(Connection *c, const char *text) {
        (void) sd_event_now(c->control->ctx.event, CLOCK_MONOTONIC, &c->last_request);
        json_error_t err;
        json_t *request = json_loads(text, 0, &err);
        const char *name = json_string_value(json_object_get(request, "method"));
        json_t *params = json_object_get(request, "parameters");
        if (!params)
                params = json_object();
        else
                json_incref(params);
        Method method = name ? find_method(name) : NULL;
        json_t *reply;
        if (!json_is_object(request) || !name)
                reply = error_reply(
                        "io.alloclab.InvalidRequest",
                        json_pack("{s:s}", "message", request ? "expected {\"method\": ...}" : err.text));
        else if (!method)
                reply = error_reply("io.alloclab.MethodNotFound", json_pack("{s:s}", "method", name));
        else
                reply = method(c, params);
        json_decref(params);
        json_decref(request);
        if (reply)
                queue_reply(c, reply);
}

void control_job_finished(Control *ctl, int64_t job_id) {
        for (Connection *c = ctl->connections; c; c = c->next) {
                if (c->waiting_for != job_id)
                        continue;
                Job job;
                c->waiting_for = 0;
                if (jobs_get(ctl->ctx.store, job_id, &job) == 0) {
                        queue_reply(c, ended_job_reply(c, &job));
                        job_done(&job);
                } else
                        queue_reply(c, error_reply("io.alloclab.NoSuchJob", NULL));
                (void) arm_idle(c);
        }
}

/* Handles the complete messages at the start of buf, as long as the connection may go on.
 * Returns the number of bytes taken. */
static size_t serve(Connection *c, char *buf, size_t size) {
        size_t start = 0;
        for (;;) {
                char *nul = start < size ? memchr(buf + start, 0, size - start) : NULL;
                if (!nul || c->waiting_for || c->submitting ||
                    pending_output(c) >= CONTROL_MAX_PENDING_OUTPUT)
                        return start;
                handle_request(c, buf + start);
                start = (size_t) (nul - buf) + 1;
        }
}

/* Takes every complete message out of the input buffer. */
static void process_input(Connection *c) {
        if (c->in_size == 0)
                return; /* nothing buffered, maybe no buffer at all */
        size_t start = serve(c, c->in, c->in_size);
        memmove(c->in, c->in + start, c->in_size - start);
        c->in_size -= start;
}

/* Makes room for the next read: a full buffer doubles, up to CONTROL_MAX_MESSAGE. */
static int grow_input(Connection *c) {
        if (c->in_size < c->in_allocated)
                return 0;
        size_t size = c->in_allocated ? 2 * c->in_allocated : CONTROL_INITIAL_INPUT;
        if (size > CONTROL_MAX_MESSAGE)
                size = CONTROL_MAX_MESSAGE;
        char *in = realloc(c->in, size);
        if (!in)
                return -ENOMEM;
        c->in = in;
        c->in_allocated = size;
        return 0;
}

/* With nothing buffered: a request usually arrives whole, so it is read into the control's
 * scratch buffer and served from there; only what is left over (a request cut short, or one
 * that must wait) is copied into the connection's own buffer. A burst of submitters costs no
 * input buffer each. Returns 0, or -errno when the connection is to be closed (end of file). */
static int read_whole_requests(Connection *c) {
        Control *ctl = c->control;
        ssize_t n = read(c->fd, ctl->scratch, sizeof(ctl->scratch));
        if (n == 0)
                return -ECONNRESET;
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        (void) sd_event_now(ctl->ctx.event, CLOCK_MONOTONIC, &c->last_active);
        size_t used = serve(c, ctl->scratch, (size_t) n), left = (size_t) n - used;
        if (left > 0) {
                if (c->in_allocated < left) {
                        char *in = realloc(c->in, CONTROL_INITIAL_INPUT);
                        if (!in)
                                return -ENOMEM;
                        c->in = in;
                        c->in_allocated = CONTROL_INITIAL_INPUT;
                }
                memcpy(c->in, ctl->scratch + used, left);
                c->in_size = left;
        }
        (void) arm_idle(c);
        return 0;
}

static int on_connection(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Connection *c = userdata;
        (void) s;
        if (c->parked) { /* only a hang-up is watched: a client that gave up frees its place */
                if (revents & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
                        connection_free(c);
                return 0;
        }
        if (revents & EPOLLIN) {
                if (c->in_size >= CONTROL_MAX_MESSAGE) {
                        queue_reply(c, error_reply("io.alloclab.MessageTooLarge",
                                                   json_pack("{s:i, s:s}", "limit", CONTROL_MAX_MESSAGE,
                                                             "message", "a request is at most 1 MiB")));
                        c->closing = true;
                } else if (c->in_size == 0) {
                        if (read_whole_requests(c) < 0) {
                                connection_free(c);
                                return 0;
                        }
                } else if (grow_input(c) < 0) {
                        connection_free(c);
                        return 0;
                } else {
                        ssize_t n = read(fd, c->in + c->in_size, c->in_allocated - c->in_size);
                        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                                connection_free(c);
                                return 0;
                        }
                        if (n > 0) {
                                (void) sd_event_now(c->control->ctx.event, CLOCK_MONOTONIC, &c->last_active);
                                c->in_size += (size_t) n;
                                process_input(c);
                                (void) arm_idle(c);
                        }
                }
        }
        if (revents & (EPOLLOUT | EPOLLHUP | EPOLLERR)) { /* a hung-up peer fails the send */
                if (send_output(c) < 0) {
                        connection_free(c);
                        return 0;
                }
                /* Room again: the requests that waited for it. */
                if (pending_output(c) < CONTROL_MAX_PENDING_OUTPUT && !c->closing)
                        process_input(c);
        }
        if (c->closing && c->out_size == 0) {
                connection_free(c);
                return 0;
        }
        (void) update_events(c);
        return 0;
}

static int on_idle(sd_event_source *s, uint64_t usec, void *userdata) {
        Connection *c = userdata;
        (void) s;
        (void) usec;
        connection_free(c);
        return 0;
}

/* Whether a connection may be closed to make room: it has been quiet for
 * CONTROL_EVICT_AFTER_USEC, waits for no job, has no reply on its way and no request bytes that
 * the kernel holds for it (sent, but not read yet). */
static bool is_idle(const Connection *c, uint64_t now) {
        int unread = 0;
        return now >= c->last_active + CONTROL_EVICT_AFTER_USEC && !c->waiting_for && !c->submitting &&
               pending_output(c) == 0 && ioctl(c->fd, FIONREAD, &unread) == 0 && unread == 0;
}

/* Who holds how many connections of a list: the table, or the parked ones. */
typedef struct Tally {
        uid_t uid[CONTROL_MAX_PARKED];
        unsigned held[CONTROL_MAX_PARKED];
        size_t n;
} Tally;
_Static_assert(CONTROL_MAX_PARKED >= CONTROL_MAX_CONNECTIONS, "a Tally holds the table's users too");

static void tally_list(const Connection *list, Tally *t) {
        t->n = 0;
        for (const Connection *c = list; c; c = c->next) {
                size_t i = 0;
                while (i < t->n && t->uid[i] != c->peer.uid)
                        i++;
                if (i == t->n) {
                        if (t->n == ELEMENTSOF(t->uid))
                                continue;
                        t->uid[t->n] = c->peer.uid;
                        t->held[t->n++] = 0;
                }
                t->held[i]++;
        }
}

static unsigned tally_of(const Tally *t, uid_t uid) {
        for (size_t i = 0; i < t->n; i++)
                if (t->uid[i] == uid)
                        return t->held[i];
        return 0;
}

/* The user who holds the most, and how many in *ret_most; uid when nobody holds any. */
static uid_t tally_busiest(const Tally *t, uid_t uid, unsigned *ret_most) {
        unsigned most = 0;
        uid_t busiest = uid;
        for (size_t i = 0; i < t->n; i++)
                if (t->held[i] > most) {
                        most = t->held[i];
                        busiest = t->uid[i];
                }
        *ret_most = most;
        return busiest;
}

/* Whether another user than uid's holds more of list's connections than uid's user: the one who
 * holds the most, in *ret_busiest, with list's tally and the two counts. The rule both the table
 * and the parked list close connections by: only a busier user's, never one's own. */
static bool busier_user(const Connection *list, uid_t uid, Tally *ret_tally, uid_t *ret_busiest,
                        unsigned *ret_most, unsigned *ret_mine) {
        tally_list(list, ret_tally);
        *ret_busiest = tally_busiest(ret_tally, uid, ret_most);
        *ret_mine = tally_of(ret_tally, uid);
        return *ret_busiest != uid && *ret_mine < *ret_most;
}

/* Whether a connection may give its slot to another user's: it has sent no whole request for
 * CONTROL_STALE_USEC (a client trickling a request byte by byte never does; one that has just
 * connected is about to), and is not submitting. */
static bool is_stale(const Connection *c, uint64_t now) {
        return !c->submitting && now >= c->last_request + CONTROL_STALE_USEC;
}

/* The connection to close for one of uid when the table is full: the idle one quiet longest
 * (unless `fifo`: then idle slots go to the connections parked longest, by unpark()); else, when
 * uid holds fewer connections than another user, that user's connection whose last whole
 * request is oldest, if it is stale, or if that user holds more than a fair share of the table
 * (the table divided among its users and uid's): users who keep every slot busy with requests,
 * alone or together, must not lock the others out. Never one that is submitting. NULL: none may
 * be closed. */
static Connection *victim_for(const Control *ctl, uid_t uid, bool fifo) {
        uint64_t now = 0;
        (void) sd_event_now(ctl->ctx.event, CLOCK_MONOTONIC, &now);
        Connection *idle = NULL;
        for (Connection *c = ctl->connections; c && !fifo; c = c->next)
                if (is_idle(c, now) && (!idle || c->last_active < idle->last_active))
                        idle = c;
        if (idle)
                return idle;
        Tally t;
        uid_t busiest;
        unsigned most, mine;
        if (!busier_user(ctl->connections, uid, &t, &busiest, &most, &mine))
                return NULL;
        unsigned share = CONTROL_MAX_CONNECTIONS / (unsigned) (t.n + (mine == 0));
        Connection *oldest = NULL;
        for (Connection *c = ctl->connections; c; c = c->next)
                if (c->peer.uid == busiest && !c->submitting &&
                    (!oldest || c->last_request < oldest->last_request))
                        oldest = c;
        return oldest && (is_stale(oldest, now) || most > share) ? oldest : NULL;
}

/* Moves c from the parked list into the table, where it is read and served, with an idle
 * timer; serves what it has sent already. */
static void activate(Connection *c) {
        Control *ctl = c->control;
        Connection **p = &ctl->parked, *before = NULL;
        while (*p != c) {
                before = *p;
                p = &(*p)->next;
        }
        *p = c->next;
        if (ctl->parked_last == c)
                ctl->parked_last = before;
        ctl->n_parked--;
        c->parked = false;
        c->next = ctl->connections;
        ctl->connections = c;
        ctl->n_connections++;
        (void) sd_event_now(ctl->ctx.event, CLOCK_MONOTONIC, &c->last_active);
        c->last_request = c->last_active;
        if (sd_event_source_set_io_events(c->io, EPOLLIN) < 0 ||
            sd_event_add_time_relative(ctl->ctx.event, &c->idle, CLOCK_MONOTONIC, ctl->ctx.idle_timeout_usec,
                                       0, on_idle, c) < 0) {
                connection_free(c);
                return;
        }
        /* A client sends its request right after connecting: read it now rather than after
         * another turn of the loop (a no-op when nothing is there yet). */
        (void) on_connection(c->io, c->fd, EPOLLIN, c);
}

/* Whether parked connection c gets a slot now, closing a victim_for() it if need be. */
static bool give_slot(Control *ctl, Connection *c, bool fifo) {
        if (ctl->n_connections >= CONTROL_MAX_CONNECTIONS) {
                Connection *victim = victim_for(ctl, c->peer.uid, fifo);
                if (!victim)
                        return false;
                connection_free(victim);
        }
        activate(c);
        return true;
}

/* Gives the connection parked longest the free slots and those that idle connections make, and
 * every parked connection the slots that other users' stale or excess connections make
 * (victim_for()): one user's parked crowd must not keep another user's connection behind it.
 * While some stay parked, or accepting is paused, looks again in CONTROL_EVICT_AFTER_USEC. */
static int unpark(Control *ctl) {
        while (ctl->parked && give_slot(ctl, ctl->parked, false))
                ;
        for (Connection *c = ctl->parked, *next; c; c = next) {
                next = c->next;
                (void) give_slot(ctl, c, true);
        }
        bool paused = sd_event_source_get_enabled(ctl->accept, NULL) <= 0;
        if (!ctl->parked && !paused)
                return sd_event_source_set_enabled(ctl->accept_retry, SD_EVENT_OFF);
        if (sd_event_source_get_enabled(ctl->accept_retry, NULL) > 0)
                return 0;
        int r = sd_event_source_set_time_relative(ctl->accept_retry, CONTROL_EVICT_AFTER_USEC);
        return r < 0 ? r : sd_event_source_set_enabled(ctl->accept_retry, SD_EVENT_ONESHOT);
}

static int on_unpark(sd_event_source *s, void *userdata) {
        (void) s;
        return unpark(userdata);
}

/* Also where accepting resumes after a pause for want of descriptors. */
static int on_unpark_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Control *ctl = userdata;
        (void) s;
        (void) usec;
        (void) sd_event_source_set_enabled(ctl->accept, SD_EVENT_ON);
        return unpark(ctl);
}

/* With CONTROL_MAX_PARKED parked, the parked connection to close for a newcomer of uid: the
 * newest of the user who holds the most of them, unless that is uid's user (or uid holds as
 * many): NULL, the newcomer goes. One user's crowd of connections, however large, then keeps
 * nobody else waiting in the listen backlog (it did past 64 + 768). */
static Connection *parked_victim(const Control *ctl, uid_t uid) {
        Tally t;
        uid_t busiest;
        unsigned most, mine;
        if (!busier_user(ctl->parked, uid, &t, &busiest, &most, &mine))
                return NULL;
        Connection *newest = NULL;
        for (Connection *c = ctl->parked; c; c = c->next)
                if (c->peer.uid == busiest && !c->submitting)
                        newest = c;
        return newest;
}

/* Accepts one connection. It is parked (an fd and a little memory, watched only for a hang-up)
 * behind those parked before it, and gets a slot at once when none are, or when it takes the
 * slot of a stale connection of a user who holds more than its user (victim_for()). With
 * CONTROL_MAX_PARKED parked, it takes the place of a parked_victim(), or is closed. Returns
 * false when there was none to accept, or accepting pauses: the process is out of descriptors
 * (the next ones wait in the listen backlog). */
static bool accept_one(Control *ctl, int fd) {
        _cleanup_close_ int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                        (void) sd_event_source_set_enabled(ctl->accept, SD_EVENT_OFF);
                return false;
        }
        struct ucred peer = {};
        socklen_t len = sizeof(peer);
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &peer, &len) < 0)
                return true;
        if (ctl->n_parked >= CONTROL_MAX_PARKED) {
                Connection *victim = parked_victim(ctl, peer.uid);
                if (!victim)
                        return true; /* closed: its user holds the most */
                connection_free(victim);
        }
        Connection *c = calloc(1, sizeof(Connection));
        if (!c)
                return true;
        *c = (Connection){ .control = ctl, .fd = TAKE_FD(cfd), .parked = true, .peer = peer };
        if (ctl->parked_last)
                ctl->parked_last->next = c;
        else
                ctl->parked = c;
        ctl->parked_last = c;
        ctl->n_parked++;
        if (sd_event_add_io(ctl->ctx.event, &c->io, c->fd, EPOLLRDHUP, on_connection, c) < 0) {
                connection_free(c);
                return true;
        }
        (void) give_slot(ctl, c, ctl->parked != c);
        return true;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Control *ctl = userdata;
        (void) s;
        (void) revents;
        /* A few per turn of the loop: a burst is accepted in fewer turns, and the connections
         * already open still get theirs. */
        for (unsigned k = 0; k < CONTROL_ACCEPT_BATCH && accept_one(ctl, fd); k++)
                ;
        return unpark(ctl);
}

int control_new(const ControlContext *ctx, int listen_fd, Control **ret) {
        Control *c = calloc(1, sizeof(Control));
        if (!c) {
                safe_close(listen_fd);
                return -ENOMEM;
        }
        c->ctx = *ctx;
        c->fd = listen_fd;
        if (fcntl(listen_fd, F_SETFL, O_NONBLOCK) < 0) {
                control_free(c);
                return negative_errno();
        }
        int r = sd_event_add_io(ctx->event, &c->accept, listen_fd, EPOLLIN, on_accept, c);
        /* Submissions are stored when nothing else is pending: a burst shares one commit. */
        if (r >= 0 && (r = sd_event_add_defer(ctx->event, &c->commit, on_submissions, c)) >= 0 &&
            (r = sd_event_source_set_priority(c->commit, SD_EVENT_PRIORITY_IDLE)) >= 0)
                r = sd_event_source_set_enabled(c->commit, SD_EVENT_OFF);
        if (r >= 0 && (r = sd_event_add_defer(ctx->event, &c->unpark_soon, on_unpark, c)) >= 0)
                r = sd_event_source_set_enabled(c->unpark_soon, SD_EVENT_OFF);
        if (r >= 0 && (r = sd_event_add_time_relative(ctx->event, &c->accept_retry, CLOCK_MONOTONIC,
                                                      CONTROL_EVICT_AFTER_USEC, 0, on_unpark_timer, c)) >= 0)
                r = sd_event_source_set_enabled(c->accept_retry, SD_EVENT_OFF);
        if (r < 0) {
                control_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

int control_listen(const char *path, mode_t mode, pid_t *ret_peer) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = 0;
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
        }
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        /* A socket left by a daemon that died is replaced; one a live daemon answers on is not. */
        _cleanup_close_ int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (probe >= 0 && connect(probe, (struct sockaddr *) &sa, sizeof(sa)) == 0) {
                struct ucred peer = {};
                socklen_t len = sizeof(peer);
                *ret_peer = getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 ? peer.pid : 0;
                return -EADDRINUSE;
        }
        (void) unlink(path);
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || chmod(path, mode) < 0 ||
            listen(fd, SOMAXCONN) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}
