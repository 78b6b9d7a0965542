/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "configs/diag.h"
#include "db/session.h"
#include "runner/host.h"
#include "util/cleanup.h"
#include "util/rng.h"

static int fail(Session *s, SessionFailure failure, int error) {
        s->failure = failure;
        s->error = error;
        return error;
}

/* Whether run_id may be resumed here, into *info (resume_info_done()). */
static int check_resumable(Session *s, Store *store, int64_t run_id, ResumeInfo *info) {
        int r = query_resume_info(store, run_id, info);
        if (r < 0)
                return fail(s, r == -ENOENT ? SESSION_NO_SUCH_RUN : SESSION_STORE_FAILED, r);
        if (strcmp(info->status, "interrupted") != 0) {
                s->message = strdup(info->status);
                return fail(s, SESSION_NOT_INTERRUPTED, -EBUSY);
        }
        r = resume_info_check_here(info, &s->message);
        return r < 0 ? fail(s, r == -EXDEV ? SESSION_ELSEWHERE : SESSION_STORE_FAILED, r) : 0;
}

static int load_stored_spec(Session *s, const ResumeInfo *info) {
        Diagnostics d = {};
        int r = spec_load_buffer(info->spec_path, info->spec_yaml, strlen(info->spec_yaml), &d,
                                 &s->stored_spec);
        if (r < 0 && d.n_items)
                s->message = diag_format(&d, 0);
        diag_clear(&d);
        return r < 0 ? fail(s, SESSION_SPEC_INVALID, r) : 0;
}

/* A resumption continues with the seed and counts it started with (under samples: auto the
 * count is the most, and the cells judge their precision again from what is stored); a new run
 * takes the spec's seed or a fresh one. */
static int fix_options(Session *s, const SessionRequest *rq, PlanOptions *o) {
        if (rq->resume_run <= 0) {
                o->seed = rq->spec->has_seed ? rq->spec->seed : rng_seed();
                return 0;
        }
        _cleanup_(resume_info_done) ResumeInfo info = {};
        int r = check_resumable(s, rq->store, rq->resume_run, &info);
        if (r >= 0 && !rq->spec)
                r = load_stored_spec(s, &info);
        o->seed = info.seed;
        o->samples = info.samples;
        o->samples_fixed = false;
        o->warmup = info.warmup;
        o->warmup_set = true;
        return r;
}

int session_check(const Spec *spec, const PlanOptions *options, Plan **ret, char **ret_message) {
        PlanOptions o = *options;
        o.seed = spec->has_seed ? spec->seed : 0; /* nothing runs: no fresh seed */
        o.check_only = true;
        return plan_new(spec, &o, ret, ret_message);
}

int session_plan(const SessionRequest *rq, Session *s) {
        *s = (Session){ .resume_run = rq->resume_run };
        PlanOptions options = rq->options;
        int r = fix_options(s, rq, &options);
        if (r < 0)
                return r;
        s->spec = rq->spec ? rq->spec : s->stored_spec;
        if ((r = plan_new(s->spec, &options, &s->plan, &s->message)) < 0 ||
            (r = plan_hash_programs(s->plan)) < 0)
                return fail(s, SESSION_PLAN_FAILED, r);
        return 0;
}

int session_record(Session *s, Store *store, const RecordContext *ctx) {
        int r;
        if (s->resume_run > 0) {
                if ((r = query_prior(store, s->resume_run, s->plan, &s->prior)) < 0 ||
                    (r = record_resume(store, s->plan, s->resume_run, &s->recorder)) < 0)
                        return fail(s, r == -EBADMSG ? SESSION_MISMATCH : SESSION_STORE_FAILED, r);
                return 0;
        }
        _cleanup_(host_done) Host host = {};
        if ((r = host_read(&host)) < 0 || (r = record_begin(store, s->plan, &host, ctx, &s->recorder)) < 0)
                return fail(s, SESSION_STORE_FAILED, r);
        return 0;
}

void session_done(Session *s) {
        record_free(s->recorder);
        run_prior_done(&s->prior);
        plan_free(s->plan);
        spec_free(s->stored_spec);
        free(s->message);
        *s = (Session){};
}
