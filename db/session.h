/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "db/query.h"
#include "db/record.h"
#include "db/store.h"
#include "runner/plan.h"

/*
 * A run session: a run's start or its continuation as `alloclab run`, `quick` and `resume` and
 * the daemon's jobs make them. session_plan() decides whether a run may be resumed, loads its
 * stored spec, fixes what a new run or a resumption fixes in the plan options, plans and hashes
 * the programs; session_record() records the run, new or continued. Between the two, the front
 * ends do what is theirs (warnings, the database's lock, the daemon's cgroup); they keep only
 * the wording of failures, identity and exit codes.
 */

typedef struct SessionRequest {
        /* A new run's spec; with resume_run, the spec to continue with, or NULL for the run's
         * stored one. */
        const Spec *spec;
        int64_t resume_run; /* > 0: the run that continues, in store */
        Store *store;       /* with resume_run */
        /* The caller's: environment, probe, base directory, deferred cgroup, and for a new run
         * its sample count; the seed and (resumed) the counts are the session's. */
        PlanOptions options;
} SessionRequest;

/* Why a session could not be planned or recorded (Session.message says more where set). */
typedef enum SessionFailure {
        SESSION_OK,
        SESSION_NO_SUCH_RUN,     /* resume_run is not in the database */
        SESSION_NOT_INTERRUPTED, /* message: the run's status */
        SESSION_ELSEWHERE,       /* another machine, or this one set up differently: message */
        SESSION_STORE_FAILED,    /* the database could not be read or written: error, store_error() */
        SESSION_SPEC_INVALID,    /* the run's stored spec no longer loads: message, its first problem */
        SESSION_PLAN_FAILED,     /* message, or error alone */
        SESSION_MISMATCH,        /* the continued run no longer fits its spec: error */
} SessionFailure;

typedef struct Session {
        const Spec *spec; /* SessionRequest.spec, or the stored one (owned below) */
        Spec *stored_spec;
        Plan *plan;
        int64_t resume_run;
        Recorder *recorder;
        RunPrior prior; /* a continued run's samples so far */
        SessionFailure failure;
        int error; /* the -errno of the failure */
        char *message;
} Session;

/* The plan `alloclab check` and the daemon's Submit make of a spec before any run: files found
 * (not identified), with the caller's options (environment, probe, base directory, a deferred
 * cgroup, the daemon's memo). Returns plan_new()'s result. */
int session_check(const Spec *spec, const PlanOptions *options, Plan **ret, char **ret_message);

/* Plans the request's run into *s (session_done() in any case). Returns 0, or < 0 with
 * s->failure, s->error and s->message saying why. */
int session_plan(const SessionRequest *rq, Session *s);

/* Records s's run in store: the continuation of the resumed run, or a new run (the host's facts
 * read here; ctx says who started it). Returns 0, or < 0 with s->failure and s->error. */
int session_record(Session *s, Store *store, const RecordContext *ctx);

void session_done(Session *s);
