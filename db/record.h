/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "db/store.h"
#include "runner/host.h"
#include "runner/run.h"

/*
 * Recording a run: the rows that describe it (host, experiment, spec, allocators, variants,
 * cells) are written in one transaction before the first child starts; samples, exclusions
 * and per-cell statistics arrive through the RunSink and are committed one by one.
 */

typedef struct Recorder Recorder;

/* Bytes of a run's label or commit at most (run --label, --commit; import takes no longer). */
#define RUN_MAX_LABEL 200

typedef struct RecordContext {
        const char *trigger;   /* "cli", "import", or a job's: "submit", "schedule", "resume" */
        const char *submitter; /* user name, or NULL */
        /* The environment alloclab was started in (the submitter's, for a job): a run under
         * Slurm records its SLURM_JOB_ID, SLURM_ARRAY_TASK_ID and SLURMD_NODENAME. */
        char *const *origin_env;
        /* The machine name the run is filed under (run --machine, ALLOCLAB_MACHINE, the daemon's
         * machine:), or NULL: the host name. */
        const char *machine;
        const char *label;  /* run --label, or NULL */
        const char *commit; /* run --commit, or NULL */
        /* The order stored instead of the spec's, or NULL: an import records "sequential" (the
         * other tool measured each command's samples after the other's). */
        const char *order;
        /* An import: the sha256 of the file and its CPU times (runs.import_cpu), or NULL. */
        const char *import_sha256, *import_cpu;
        /* When the run was measured, as the other tool recorded it (an import), or NULL: when it
         * is recorded. */
        const char *started_at, *ended_at;
} RecordContext;

/* Creates the run (status 'running'). Returns 0 or -EIO/-ENOMEM. */
int record_begin(Store *store, const Plan *plan, const Host *host, const RecordContext *ctx, Recorder **ret);

/* Continues an interrupted run: its cells and variants must match plan (the same spec and
 * seed); the run is 'running' again. Returns 0, -EBADMSG when the run does not match, -EIO. */
int record_resume(Store *store, const Plan *plan, int64_t run_id, Recorder **ret);

/* The sink that writes into this run. */
RunSink record_sink(Recorder *r);

int64_t record_run_id(const Recorder *r);

/* Closes the run: 'done' when it completed, 'failed' when stopped on failure or aborted by an
 * error, 'interrupted' when canceled. message may be NULL. Returns 0 or -EIO. */
int record_finish(Recorder *r, const RunResult *result, int error, const char *message);

Recorder *record_free(Recorder *r);
static inline void record_freep(Recorder **r) {
        record_free(*r);
}
