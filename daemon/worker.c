/* SPDX-License-Identifier: MIT */
/*
 * A job's runner process and the daemon's side of it.
 *
 * The daemon loads the spec and builds the plan, creates the run in the database, then forks:
 * the child inherits the very same Plan (no second resolution that could differ), drops to the
 * submitter's identity when the daemon is root, changes to the submitter's directory and calls
 * run_execute() with a sink that encodes every event (runner/stream.c) onto a SEQPACKET
 * socketpair. The daemon replays those messages into its recorder. A SIGTERM to the runner is
 * its cancel signal: run_execute() kills the current child and returns.
 *
 * The runner process never touches the database or the event loop it inherited.
 */
#include <errno.h>
#include <grp.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon/builder.h"
#include "daemon/identity.h"
#include "daemon/log.h"
#include "daemon/worker.h"
#include "db/history.h"
#include "db/query.h"
#include "db/record.h"
#include "db/session.h"
#include "runner/stream.h"
#include "util/cleanup.h"

struct Worker {
        WorkerContext ctx;
        Job job;
        Spec *spec;
        Session session; /* its plan, recorder and (resumed) what the run recorded before */
        pid_t pid;
        int fd;
        sd_event_source *io;
        sd_event_source *child;
        bool ended;
        RunResult result;
        int error;
        bool protocol_error;
        bool discarding; /* recording failed: what the runner still sends is read and dropped */
        char record_error[256];
        bool cancel_requested;
        bool daemon_stopping;
        uint8_t *buffer;
        Builder *builder;    /* building from source, before the plan; or NULL */
        char activity[256];  /* ... said so (worker_activity) */
        BuildOutcome *built; /* per variant, what it made (moved into the plan), or NULL */
};

int64_t worker_job_id(const Worker *w) {
        return w->job.id;
}

int64_t worker_run_id(const Worker *w) {
        return w->session.recorder ? record_run_id(w->session.recorder) : 0;
}

const char *worker_experiment(const Worker *w) {
        return w->spec ? w->spec->experiment : "?";
}

const char *worker_activity(const Worker *w) {
        return w->builder ? w->activity : worker_experiment(w);
}

Worker *worker_free(Worker *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->io);
        sd_event_source_disable_unref(w->child);
        safe_close(w->fd);
        builder_free(w->builder);
        for (size_t v = 0; w->built && v < w->spec->n_variants; v++)
                build_outcome_done(&w->built[v]);
        free(w->built);
        session_done(&w->session); /* before the spec it plans */
        spec_free(w->spec);
        job_done(&w->job);
        free(w->buffer);
        free(w);
        return NULL;
}

/* ---- the runner process ---------------------------------------------------------------- */

typedef struct ChildSink {
        int fd;
} ChildSink;

static int send_message(int fd, WireWriter *w) {
        if (w->failed)
                return -ENOMEM;
        if (w->size > STREAM_MAX_MESSAGE)
                return -EMSGSIZE;
        while (send(fd, w->data, w->size, MSG_NOSIGNAL) < 0)
                if (errno != EINTR)
                        return negative_errno();
        return 0;
}

static void child_step(void *u, const Plan *p, size_t index) {
        ChildSink *c = u;
        _cleanup_(wire_writer_done) WireWriter w = {};
        (void) p;
        stream_encode_step(&w, index);
        (void) send_message(c->fd, &w); /* progress only: a lost one is harmless */
}

static int child_sample(void *u, const Plan *p, const Sample *s) {
        ChildSink *c = u;
        _cleanup_(wire_writer_done) WireWriter w = {};
        (void) p;
        stream_encode_sample(&w, s);
        return send_message(c->fd, &w);
}

static int child_exclude(void *u, const Plan *p, uint32_t cell, uint32_t variant, const char *reason) {
        ChildSink *c = u;
        _cleanup_(wire_writer_done) WireWriter w = {};
        (void) p;
        stream_encode_exclude(&w, cell, variant, reason);
        return send_message(c->fd, &w);
}

static int child_stats(void *u, const Plan *p, uint32_t cell, const StatsRow *rows, size_t n) {
        ChildSink *c = u;
        _cleanup_(wire_writer_done) WireWriter w = {};
        (void) p;
        stream_encode_cell_stats(&w, cell, rows, n);
        return send_message(c->fd, &w);
}

/* Takes the submitter's identity (uid, gid, supplementary groups) when running as root, after
 * handing it the run's cgroup: the runner moves into a leaf of it, and the submitter may then
 * create and fill the children's cgroups (runner/cgroup.h). */
static int drop_privileges(const Job *j, const Plan *plan) {
        if (geteuid() != 0 || j->uid == 0)
                return 0;
        if (cgroup_run_delegate(plan->cgroup, j->uid, j->gid) < 0)
                log_message(LOG_WARNING, 0,
                            "job %lld: cannot hand the run's cgroup %s to uid %u: its children go without",
                            (long long) j->id, plan->cgroup->path, (unsigned) j->uid);
        return identity_become(j->uid, j->gid);
}

static _Noreturn void runner_main(Worker *w, int fd) {
        /* The runner must not outlive the daemon: a lost daemon means a lost recorder. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        /* Here, not in the daemon's loop: it may wait for what dead runs left to leave. */
        cgroup_remove_stale();
        int r = drop_privileges(&w->job, w->session.plan);
        /* The submitter's, not the daemon's (0027): hooks and children make the user's files. */
        umask(w->job.umask);
        if (r >= 0 && chdir(w->job.cwd) < 0)
                r = negative_errno();
        sigset_t stop;
        sigemptyset(&stop);
        sigaddset(&stop, SIGTERM);
        sigaddset(&stop, SIGINT);
        /* SIGTERM stays blocked (the daemon blocked it for its event loop): read it here. */
        _cleanup_close_ int cancel_fd = r >= 0 ? signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK) : -1;
        if (r >= 0 && cancel_fd < 0)
                r = negative_errno();
        RunResult result = {};
        if (r >= 0) {
                ChildSink c = { .fd = fd };
                RunSink sink = {
                        .userdata = &c,
                        .step_begin = child_step,
                        .sample = child_sample,
                        .exclude = child_exclude,
                        .cell_stats = child_stats,
                };
                r = run_execute(w->session.plan, w->session.prior.done ? &w->session.prior : NULL, &sink,
                                cancel_fd, &result);
        }
        _cleanup_(wire_writer_done) WireWriter end = {};
        stream_encode_end(&end, &result, r < 0 ? r : 0);
        _exit(send_message(fd, &end) < 0 ? 1 : 0);
}

/* ---- the daemon's side ----------------------------------------------------------------- */

static void progress(void *u, const Plan *p, size_t index) {
        Worker *w = u;
        const PlanStep *st = &p->steps[index];
        unsigned total = plan_phase_rounds(p, st->phase);
        char text[256];
        snprintf(text, sizeof(text), "%s: cell %u/%zu %s %s %u/%u", p->spec->experiment, st->cell + 1,
                 p->n_cells, p->spec->variants[st->variant].name, phase_to_string(st->phase), st->round + 1,
                 total);
        w->ctx.progress(w->ctx.userdata, text);
}

static void read_messages(Worker *w) {
        RunSink recorder = record_sink(w->session.recorder);
        recorder.userdata = w->session.recorder;
        RunSink sink = recorder;
        sink.step_begin = NULL;
        while (!w->protocol_error) {
                ssize_t n = recv(w->fd, w->buffer, STREAM_MAX_MESSAGE, MSG_DONTWAIT | MSG_TRUNC);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n == 0) {
                        /* The runner closed its end: the socket stays readable forever, so stop
                         * watching it, or the loop would spin and never see the exit. */
                        (void) sd_event_source_set_enabled(w->io, SD_EVENT_OFF);
                        return;
                }
                if (n < 0)
                        return; /* EAGAIN */
                /* Keep the runner's sends flowing, so that it reaches its stop signal instead of
                 * blocking forever on a full socket. */
                if (w->discarding)
                        continue;
                int r;
                if ((size_t) n > STREAM_MAX_MESSAGE)
                        r = -EMSGSIZE;
                else if (w->buffer[0] == STREAM_STEP) {
                        RunSink status = { .userdata = w, .step_begin = progress };
                        r = stream_dispatch(w->buffer, (size_t) n, w->session.plan, &status, &w->ended,
                                            &w->result, &w->error);
                } else
                        r = stream_dispatch(w->buffer, (size_t) n, w->session.plan, &sink, &w->ended,
                                            &w->result, &w->error);
                if (r == -EBADMSG || r == -EMSGSIZE) {
                        log_message(LOG_ERR, worker_run_id(w),
                                    "job %lld: malformed message from its runner: %s", (long long) w->job.id,
                                    strerror(-r));
                        w->protocol_error = true;
                        /* Nothing more is read: stop watching, or the pending data would wake
                         * the loop again and again until the exit. */
                        (void) sd_event_source_set_enabled(w->io, SD_EVENT_OFF);
                        kill(w->pid, SIGKILL);
                } else if (r < 0) {
                        snprintf(w->record_error, sizeof(w->record_error), "cannot record: %s",
                                 r == -EIO ? store_error(w->ctx.store) : strerror(-r));
                        log_message(LOG_ERR, worker_run_id(w), "job %lld: %s", (long long) w->job.id,
                                    w->record_error);
                        w->error = r;
                        w->discarding = true;
                        /* Room for the writes that end the job (a full disk is the likely cause). */
                        store_release_reserve(w->ctx.store);
                        kill(w->pid, SIGTERM);
                }
        }
}

static int on_runner_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Worker *w = userdata;
        (void) s;
        (void) fd;
        (void) revents;
        read_messages(w);
        return 0;
}

static JobStatus final_status(const Worker *w) {
        if (w->daemon_stopping)
                return JOB_INTERRUPTED;
        if (w->cancel_requested)
                return JOB_CANCELED;
        if (!w->ended || w->error < 0 || w->protocol_error || w->discarding || w->result.end == RUN_STOPPED)
                return JOB_FAILED;
        return JOB_DONE;
}

/* After a scheduled run: the change points in the experiment's history (the check `alloclab
 * history` shows, or with the spec's `history: ratios` `history --relative`) that this run
 * confirmed, and a tentative one at this run, that moved by more
 * than the spec's regression_threshold, each as a structured journal message. */
static void report_changes(Worker *w) {
        int64_t run = worker_run_id(w);
        _cleanup_(history_freep) History *h = NULL;
        HistoryQuery q = { .experiment = w->spec->experiment,
                           .last = HISTORY_DEFAULT_RUNS,
                           .until_run = run,
                           .relative = w->spec->history_ratios };
        int r = query_history(w->ctx.store, &q, &h);
        if (r < 0) {
                if (r != -ENOENT)
                        log_message(LOG_ERR, run, "cannot read the history of run %lld: %s", (long long) run,
                                    strerror(-r));
                return;
        }
        for (size_t s = 0; s < h->n_series; s++) {
                const HistorySeries *series = &h->series[s];
                for (size_t i = series->n_points >= 2 ? series->n_points - 2 : 0; i < series->n_points;
                     i++) {
                        const HistoryPoint *p = &series->points[i];
                        bool news = p->tentative ? p->run_id == run : p->confirmed_by == run;
                        if (news && p->change != HISTORY_STEADY &&
                            fabs(p->against.ratio - 1) > w->spec->regression_threshold)
                                log_change_point(h->experiment, h->metric, h->relative_to, series, p);
                }
        }
}

static int on_runner_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Worker *w = userdata;
        Store *store = w->ctx.store;
        (void) s;
        read_messages(w); /* whatever it sent before it exited */

        char note[256] = "";
        int error = w->error;
        if (w->record_error[0]) /* first: the runner was stopped because of it */
                snprintf(note, sizeof(note), "%s", w->record_error);
        else if (!w->ended && !w->protocol_error) {
                snprintf(note, sizeof(note), "the runner process %s %d without finishing",
                         si->si_code == CLD_EXITED ? "exited with status" : "was killed by signal",
                         si->si_status);
                error = -EPIPE;
        } else if (w->protocol_error)
                snprintf(note, sizeof(note), "the runner process sent a malformed message");
        else if (w->error < 0)
                snprintf(note, sizeof(note), "%s", strerror(-w->error));
        else if (w->result.end == RUN_CANCELED)
                snprintf(note, sizeof(note), "%s", w->daemon_stopping ? "the daemon stopped" : "canceled");
        else if (w->result.end == RUN_STOPPED)
                snprintf(note, sizeof(note), "stopped at the first failure (on_failure: stop)");
        RunResult result = w->result;
        if (w->cancel_requested || w->daemon_stopping)
                result.end = RUN_CANCELED;
        if (record_finish(w->session.recorder, &result, error, note[0] ? note : NULL) < 0)
                log_message(LOG_ERR, worker_run_id(w), "job %lld: cannot close its run: %s",
                            (long long) w->job.id, store_error(store));
        JobStatus status = final_status(w);
        if (jobs_finish(store, w->job.id, status, note[0] ? note : NULL) < 0)
                log_message(LOG_ERR, worker_run_id(w), "job %lld: cannot update: %s", (long long) w->job.id,
                            store_error(store));
        LogContext finished = { .message_id = LOG_MESSAGE_JOB_FINISHED,
                                .run_id = worker_run_id(w),
                                .job_id = w->job.id,
                                .experiment = w->spec->experiment };
        log_context(status == JOB_DONE ? LOG_INFO : LOG_WARNING, &finished, "job %lld (%s, run %lld) %s%s%s",
                    (long long) w->job.id, w->spec->experiment, (long long) worker_run_id(w),
                    job_status_to_string(status), note[0] ? ": " : "", note);
        if (status == JOB_DONE && w->job.trigger && strcmp(w->job.trigger, "schedule") == 0)
                report_changes(w);
        w->ctx.ended(w->ctx.userdata, w->job.id); /* may free w */
        return 0;
}

static int fail_job(Store *store, Job *job, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_job(Store *store, Job *job, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char message[512];
        vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);
        log_message(LOG_ERR, 0, "job %lld failed to start: %s", (long long) job->id, message);
        if (jobs_finish(store, job->id, JOB_FAILED, message) < 0) {
                log_message(LOG_ERR, 0, "job %lld: cannot mark it failed: %s", (long long) job->id,
                            store_error(store));
                return -EIO; /* still queued: the caller must not take it again at once */
        }
        return -EINVAL;
}

/* Forks the runner process that executes w's run and listens to it. */
static int start_runner(Worker *w) {
        int r;
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return negative_errno();
        /* The kernel's default buffers hold a few dozen messages; a run's messages are small
         * except probed samples, so give the pair room for a whole cell of them. */
        int size = 4 * 1024 * 1024;
        (void) setsockopt(pair[0], SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
        pid_t pid = fork();
        if (pid < 0) {
                r = negative_errno();
                safe_close(pair[0]);
                safe_close(pair[1]);
                return r;
        }
        if (pid == 0) {
                safe_close(pair[0]);
                runner_main(w, pair[1]);
        }
        safe_close(pair[1]);
        w->pid = pid;
        w->fd = pair[0];
        if ((r = sd_event_add_io(w->ctx.event, &w->io, w->fd, EPOLLIN, on_runner_io, w)) < 0 ||
            (r = sd_event_add_child(w->ctx.event, &w->child, pid, WEXITED, on_runner_exit, w)) < 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                return r;
        }
        /* Messages before the exit notification: read the pipe first. */
        (void) sd_event_source_set_priority(w->child, SD_EVENT_PRIORITY_IDLE);
        return 0;
}

/* The job's spec, as it was submitted (a resumed run's too). */
static int load_job_spec(Store *store, Worker *w) {
        Diagnostics diag = {};
        int r = spec_load_buffer(w->job.spec_path, w->job.spec_yaml, strlen(w->job.spec_yaml), &diag,
                                 &w->spec);
        _cleanup_free_ char *first = r < 0 && diag.n_items ? diag_format(&diag, 0) : NULL;
        diag_clear(&diag);
        return r < 0 ? fail_job(store, &w->job, "%s", first ? first : strerror(-r)) : 0;
}

/* Fails the job with what its session says: a resumption refused, a run that could not be
 * recorded (a resumed one that no longer fits its spec), or a plan that failed. */
static int fail_session(Store *store, Job *job, const Session *s, int r) {
        long long run = (long long) job->run_id;
        bool recording = s->failure == SESSION_MISMATCH || (s->failure == SESSION_STORE_FAILED && s->plan);
        if (s->failure == SESSION_ELSEWHERE)
                return fail_job(store, job, "run %lld cannot be resumed here: %s", run,
                                s->message ? s->message : strerror(-r));
        if (recording && s->resume_run > 0)
                return fail_job(store, job, "run %lld no longer matches its spec: %s", run, strerror(-r));
        if (recording)
                return fail_job(store, job, "cannot record the run: %s",
                                r == -EIO ? store_error(store) : strerror(-r));
        if (s->failure == SESSION_NO_SUCH_RUN || s->failure == SESSION_NOT_INTERRUPTED ||
            s->failure == SESSION_STORE_FAILED)
                return fail_job(store, job, "run %lld cannot be resumed", run);
        return fail_job(store, job, "%s", s->message ? s->message : strerror(-r));
}

/* Plans w's run (with what its builder made, if anything), records it and starts its runner.
 * Returns 0, or < 0 with the job marked failed (-EIO: it could not be). */
static int begin_run(Worker *w) {
        Store *store = w->ctx.store;
        bool resuming = w->job.trigger && strcmp(w->job.trigger, "resume") == 0 && w->job.run_id > 0;
        SessionRequest request = { .spec = w->spec,
                                   .resume_run = resuming ? w->job.run_id : 0,
                                   .store = store,
                                   .options = { .caller_env = w->job.env,
                                                .probe_path = w->ctx.probe_path,
                                                .base_dir = w->job.cwd,
                                                .defer_cgroup = true,
                                                .built = w->built } };
        /* Everything the job names is found and hashed with the submitter's file permissions;
         * only the cgroup is made with the daemon's. */
        Identity saved;
        int r = identity_enter(w->job.uid, w->job.gid, &saved);
        if (r < 0)
                return fail_job(store, &w->job, "cannot take uid %u's file permissions: %s",
                                (unsigned) w->job.uid, strerror(-r));
        r = session_plan(&request, &w->session);
        identity_leave(&saved);
        if (r >= 0)
                r = plan_open_cgroup(w->session.plan, &w->session.message);
        if (r < 0)
                return fail_session(store, &w->job, &w->session, r);
        RecordContext origin = { .trigger = w->job.trigger,
                                 .submitter = w->job.submitter,
                                 .origin_env = w->job.env,
                                 .machine = w->ctx.machine };
        if ((r = session_record(&w->session, store, &origin)) < 0)
                return fail_session(store, &w->job, &w->session, r);
        if ((r = jobs_start(store, w->job.id, record_run_id(w->session.recorder))) < 0)
                return fail_job(store, &w->job, "cannot update the job: %s", store_error(store));

        if ((r = start_runner(w)) < 0)
                return r;
        LogContext started = { .message_id = LOG_MESSAGE_JOB_STARTED,
                               .run_id = record_run_id(w->session.recorder),
                               .job_id = w->job.id,
                               .experiment = w->spec->experiment };
        log_context(LOG_INFO, &started, "job %lld (%s) started as run %lld, runner pid %d",
                    (long long) w->job.id, w->spec->experiment,
                    (long long) record_run_id(w->session.recorder), (int) w->pid);
        return 0;
}

/* The builder has exited: the run begins with what it made, or the job ends. */
static void on_built(void *userdata, BuildOutcome *outcomes, int error, const char *message) {
        Worker *w = userdata;
        Store *store = w->ctx.store;
        w->builder = builder_free(w->builder);
        w->built = outcomes;
        int r = 0;
        if (w->cancel_requested || w->daemon_stopping) {
                JobStatus status = w->daemon_stopping ? JOB_INTERRUPTED : JOB_CANCELED;
                const char *note =
                        w->daemon_stopping ? "the daemon stopped while building" : "canceled while building";
                if (jobs_finish(store, w->job.id, status, note) < 0)
                        log_message(LOG_ERR, 0, "job %lld: cannot update: %s", (long long) w->job.id,
                                    store_error(store));
                log_message(LOG_WARNING, 0, "job %lld (%s) %s: %s", (long long) w->job.id,
                            w->spec->experiment, job_status_to_string(status), note);
                r = -ECANCELED;
        } else if (error < 0)
                r = fail_job(store, &w->job, "building from source failed: %s",
                             message ? message : strerror(-error));
        else
                r = begin_run(w);
        if (r < 0)
                w->ctx.ended(w->ctx.userdata, w->job.id); /* frees w */
}

int worker_start(const WorkerContext *ctx, Job *job, Worker **ret) {
        _cleanup_(worker_freep) Worker *w = calloc(1, sizeof(Worker));
        if (!w)
                return -ENOMEM;
        w->ctx = *ctx;
        w->job = *job;
        *job = (Job){};
        w->fd = -1;
        if (!(w->buffer = malloc(STREAM_MAX_MESSAGE)))
                return -ENOMEM;
        int r = load_job_spec(ctx->store, w);
        if (r < 0)
                return r;
        if (!spec_builds(w->spec)) {
                if ((r = begin_run(w)) < 0)
                        return r;
                *ret = TAKE_PTR(w);
                return 0;
        }
        /* Builds from source first, as the submitter, while the loop goes on (daemon/builder.h). */
        _cleanup_free_ char *why = NULL;
        if ((r = builder_start(ctx->event, &w->job, w->spec, on_built, w, &w->builder, &why)) < 0)
                return fail_job(ctx->store, &w->job, "cannot start building from source: %s",
                                why ? why : strerror(-r));
        if (jobs_start(ctx->store, w->job.id, 0) < 0)
                log_message(LOG_ERR, 0, "job %lld: cannot update: %s", (long long) w->job.id,
                            store_error(ctx->store));
        snprintf(w->activity, sizeof(w->activity), "%s: building allocators from source",
                 w->spec->experiment);
        log_message(LOG_INFO, 0, "job %lld (%s) building allocators from source", (long long) w->job.id,
                    w->spec->experiment);
        *ret = TAKE_PTR(w);
        return 0;
}

void worker_cancel(Worker *w, bool daemon_stopping) {
        if (daemon_stopping)
                w->daemon_stopping = true;
        else
                w->cancel_requested = true;
        if (w->builder)
                builder_cancel(w->builder);
        else
                kill(w->pid, SIGTERM);
}

void worker_kill(Worker *w) {
        if (w->builder)
                builder_kill(w->builder);
        else
                kill(w->pid, SIGKILL);
}
