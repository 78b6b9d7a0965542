/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "db/jobs.h"
#include "db/store.h"

/*
 * One running job. The daemon builds the plan, forks a runner process that executes it (as the
 * submitting user when the daemon is root) and streams run events back over a SEQPACKET
 * socketpair; the daemon records them. The runner process does nothing while a child is being
 * measured but wait for it; the daemon stays responsive meanwhile.
 */

typedef struct Worker Worker;

/* What a worker uses and whom it tells (borrowed; they outlive it). */
typedef struct WorkerContext {
        sd_event *event;
        Store *store;
        const char *probe_path;
        const char *machine; /* the machine name runs are filed under, or NULL: the host name */
        void *userdata;
        /* The running job's progress for STATUS= ("experiment: cell 1/4 ..."). */
        void (*progress)(void *userdata, const char *text);
        /* The job ended and is stored as such; the worker may be freed from here. */
        void (*ended)(void *userdata, int64_t job_id);
} WorkerContext;

/* Starts job (taking ownership of its fields). Returns 0, or -errno with the job marked failed
 * and logged; -EIO when even that could not be stored (the job is still queued). */
int worker_start(const WorkerContext *ctx, Job *job, Worker **ret);

/* Asks the runner to stop: its current child is killed and the run ends 'interrupted'; the job
 * ends 'canceled' (or 'interrupted' when the daemon is stopping). */
void worker_cancel(Worker *w, bool daemon_stopping);

/* Last resort at shutdown: SIGKILL the runner and its current child's process group. */
void worker_kill(Worker *w);

int64_t worker_job_id(const Worker *w);
int64_t worker_run_id(const Worker *w);
const char *worker_experiment(const Worker *w);
/* What it does when it reports no progress: its experiment, or that it builds from source. */
const char *worker_activity(const Worker *w);

Worker *worker_free(Worker *w);

static inline void worker_freep(Worker **w) {
        worker_free(*w);
}
