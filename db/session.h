/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "db/query.h"
#include "db/record.h"
#include "db/store.h"
#include "runner/plan.h"

/*
 * A run's start and its continuation as `alloclab run` and `resume` and the daemon's jobs make
 * them: one place decides whether a run may be resumed, which plan options a resumption fixes,
 * and how the run is recorded, new or continued.
 */

/* Whether run_id may be resumed here. Returns 0 with *ret filled (resume_info_done()), -ENOENT
 * (no such run), -EBUSY (not interrupted: ret->status says what it is, *ret kept for it), -EXDEV
 * (another machine, or this one set up differently: *ret_message says how; nothing kept),
 * -ENOMEM, -EIO. */
int session_check_resumable(Store *store, int64_t run_id, ResumeInfo *ret, char **ret_message);

/* What a new run fixes in *o: its seed, the spec's or a fresh one. */
void session_new_options(const Spec *spec, PlanOptions *o);

/* What a resumption fixes in *o: the seed and the counts it started with (under samples: auto
 * the count is the most, and the cells judge their precision again from what is stored). */
void session_resume_options(const ResumeInfo *info, PlanOptions *o);

/* Records plan's run: the continuation of resume_run (> 0), with what it recorded before in
 * *ret_prior, or a new run (the host's facts read here; ctx says who started it). Returns 0,
 * -EIO (store_error() says why), -EBADMSG (the stored run no longer fits the plan), -ENOMEM. */
int session_record(Store *store, const Plan *plan, const RecordContext *ctx, int64_t resume_run,
                   Recorder **ret, RunPrior *ret_prior);
