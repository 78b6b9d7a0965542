/* SPDX-License-Identifier: MIT */
/*
 * The queue's one running job at a time. Submissions and schedules put jobs in the store and
 * call manager_start_soon(); a timer of idle priority takes the oldest queued one and starts a
 * worker; the worker's end comes back through its callback, and the next job starts.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <systemd/sd-daemon.h>

#include "configs/spec.h"
#include "daemon/log.h"
#include "daemon/manager.h"
#include "daemon/worker.h"
#include "db/jobs.h"
#include "util/cleanup.h"

struct Manager {
        sd_event *event;
        Store *store;
        const char *probe_path;
        const char *machine;
        ManagerEvents events;
        Worker *worker;           /* the running job, or NULL */
        sd_event_source *start;   /* a timer: starts the next job (manager_start_soon()) */
        sd_event_source *stop;    /* a timer: kills a runner that does not stop (manager_stop()) */
        uint64_t start_requested; /* CLOCK_MONOTONIC usec of the first request not served yet; 0: none */
        bool stopping;            /* no new jobs; the current one ends as interrupted */
        bool held;                /* no job starts (manager_hold()) */
        char status[256];         /* the STATUS= text last published */
};

static void job_finished(Manager *m, int64_t job_id) {
        if (m->events.job_finished)
                m->events.job_finished(m->events.userdata, job_id);
}

void manager_update_status(Manager *m, const char *progress) {
        size_t queued = 0; /* a count, not a list: this runs after every submission */
        (void) jobs_count(m->store, JOB_QUEUED, &queued);
        const char *experiment = NULL;
        time_t next = m->events.next_scheduled ? m->events.next_scheduled(m->events.userdata, &experiment)
                                               : (time_t) -1;
        char when[64] = "";
        struct tm tm;
        if (next != (time_t) -1 && localtime_r(&next, &tm))
                strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
        if (m->worker)
                snprintf(m->status, sizeof(m->status), "%s; %zu queued",
                         progress ? progress : worker_activity(m->worker), queued);
        else if (m->held) /* the next job waits for it */
                snprintf(m->status, sizeof(m->status), "publishing the site; %zu queued", queued);
        else if (when[0])
                snprintf(m->status, sizeof(m->status), "idle; %zu queued; next scheduled %s at %s", queued,
                         experiment, when);
        else
                snprintf(m->status, sizeof(m->status), "idle; %zu queued", queued);
        sd_notifyf(false, "STATUS=%s", m->status);
}

const char *manager_status(const Manager *m) {
        return m->status;
}

static void on_worker_progress(void *userdata, const char *text) {
        manager_update_status(userdata, text);
}

static void on_worker_ended(void *userdata, int64_t job_id) {
        Manager *m = userdata;
        m->worker = worker_free(m->worker);
        (void) malloc_trim(0);          /* what the job's plan took, given back while idle */
        manager_update_status(m, NULL); /* no more the job's progress */
        (void) store_reserve(m->store); /* again, if a storage failure used it; fails while full */
        job_finished(m, job_id);
        if (m->stopping) {
                sd_event_exit(m->event, 0);
                return;
        }
        manager_start_soon(m);
}

/* Starts the oldest queued job when nothing runs. */
static void start_next(Manager *m) {
        WorkerContext ctx = { .event = m->event,
                              .store = m->store,
                              .probe_path = m->probe_path,
                              .machine = m->machine,
                              .userdata = m,
                              .progress = on_worker_progress,
                              .ended = on_worker_ended };
        while (!m->worker && !m->stopping && !m->held) {
                Job job;
                int r = jobs_next_queued(m->store, &job);
                if (r == -ENOENT)
                        break;
                if (r < 0) {
                        log_message(LOG_ERR, 0, "cannot read the queue: %s", store_error(m->store));
                        break;
                }
                int64_t id = job.id;
                r = worker_start(&ctx, &job, &m->worker);
                job_done(&job);
                if (r == -EIO) {
                        /* The store cannot even mark it failed: taking it again would spin. The
                         * queue waits for the next submission, schedule or restart. */
                        log_message(LOG_ERR, 0, "the queue is paused: the database cannot be written");
                        break;
                }
                if (r < 0) /* that job is marked failed: tell its waiters and try the next */
                        job_finished(m, id);
        }
        manager_update_status(m, NULL);
}

static int on_start(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        (void) s;
        (void) usec;
        m->start_requested = 0;
        start_next(m); /* logged; an error must not disable the source */
        return 0;
}

void manager_start_soon(Manager *m) {
        uint64_t now = 0;
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (!m->start_requested)
                m->start_requested = now;
        uint64_t at = now + START_SETTLE_USEC;
        if (at > m->start_requested + START_MAX_DELAY_USEC)
                at = m->start_requested + START_MAX_DELAY_USEC;
        (void) sd_event_source_set_time(m->start, at);
        (void) sd_event_source_set_enabled(m->start, SD_EVENT_ONESHOT);
}

static int on_stop_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        (void) s;
        (void) usec;
        log_message(LOG_WARNING, 0, "the runner did not stop in time; killing it");
        if (m->worker)
                worker_kill(m->worker);
        return 0;
}

void manager_stop(Manager *m) {
        if (m->stopping)
                return;
        m->stopping = true;
        if (!m->worker) {
                sd_event_exit(m->event, 0);
                return;
        }
        worker_cancel(m->worker, true);
        int r = sd_event_add_time_relative(m->event, &m->stop, CLOCK_MONOTONIC, STOP_TIMEOUT_USEC, 0,
                                           on_stop_timeout, m);
        if (r < 0) {
                log_message(LOG_WARNING, 0, "cannot time the runner's stop (%s): killing it", strerror(-r));
                worker_kill(m->worker);
        }
}

void manager_hold(Manager *m, bool hold) {
        bool released = m->held && !hold;
        m->held = hold;
        manager_update_status(m, NULL);
        if (released)
                manager_start_soon(m);
}

bool manager_stopping(const Manager *m) {
        return m->stopping;
}

int64_t manager_running_job(const Manager *m) {
        return m->worker ? worker_job_id(m->worker) : 0;
}

int manager_cancel(Manager *m, int64_t job_id) {
        if (!m->worker || worker_job_id(m->worker) != job_id)
                return -ESRCH;
        worker_cancel(m->worker, false);
        return 0;
}

void manager_recover(Manager *m) {
        Job *jobs = NULL;
        size_t n = 0;
        if (jobs_recover(m->store, &jobs, &n) < 0) {
                log_message(LOG_ERR, 0, "cannot recover interrupted jobs: %s", store_error(m->store));
                return;
        }
        for (size_t i = 0; i < n; i++) {
                Job *j = &jobs[i];
                Diagnostics diag = {};
                Spec *spec = NULL;
                bool resume = spec_load_buffer(j->spec_path, j->spec_yaml, strlen(j->spec_yaml), &diag,
                                               &spec) >= 0 &&
                              spec->resume && j->run_id > 0;
                spec_free(spec);
                diag_clear(&diag);
                log_message(LOG_WARNING, j->run_id,
                            "job %lld was interrupted by the previous daemon's end%s", (long long) j->id,
                            resume ? "; resuming its run" : "");
                if (!resume)
                        continue;
                free(j->trigger);
                j->trigger = strdup("resume");
                int64_t id;
                if (!j->trigger || jobs_add(m->store, j, &id) < 0)
                        log_message(LOG_ERR, j->run_id, "cannot queue the resumption of run %lld",
                                    (long long) j->run_id);
        }
        jobs_list_free(jobs, n);
}

int manager_new(sd_event *event, Store *store, const char *probe_path, const char *machine,
                const ManagerEvents *events, Manager **ret) {
        Manager *m = calloc(1, sizeof(Manager));
        if (!m)
                return -ENOMEM;
        *m = (Manager){ .event = event,
                        .store = store,
                        .probe_path = probe_path,
                        .machine = machine,
                        .events = *events };
        int r = sd_event_add_time(event, &m->start, CLOCK_MONOTONIC, 0, 0, on_start, m);
        /* below the commit of submissions (SD_EVENT_PRIORITY_IDLE): answers first */
        if (r >= 0)
                r = sd_event_source_set_priority(m->start, SD_EVENT_PRIORITY_IDLE + 1);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->start, SD_EVENT_OFF);
        if (r < 0) {
                manager_free(m);
                return r;
        }
        *ret = m;
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        worker_free(m->worker);
        sd_event_source_disable_unref(m->start);
        sd_event_source_disable_unref(m->stop);
        free(m);
        return NULL;
}
