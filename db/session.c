/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "db/session.h"
#include "runner/host.h"
#include "util/cleanup.h"
#include "util/rng.h"

int session_check_resumable(Store *store, int64_t run_id, ResumeInfo *ret, char **ret_message) {
        *ret = (ResumeInfo){};
        int r = query_resume_info(store, run_id, ret);
        if (r < 0) {
                resume_info_done(ret); /* what a failure part of the way filled in */
                return r;
        }
        if (strcmp(ret->status, "interrupted") != 0)
                return -EBUSY;
        r = resume_info_check_here(ret, ret_message);
        if (r < 0)
                resume_info_done(ret);
        return r;
}

void session_new_options(const Spec *spec, PlanOptions *o) {
        o->seed = spec->has_seed ? spec->seed : rng_seed();
}

void session_resume_options(const ResumeInfo *info, PlanOptions *o) {
        o->seed = info->seed;
        o->samples = info->samples;
        o->warmup = info->warmup;
        o->warmup_set = true;
}

int session_record(Store *store, const Plan *plan, const RecordContext *ctx, int64_t resume_run,
                   Recorder **ret, RunPrior *ret_prior) {
        if (resume_run > 0) {
                int r = query_prior(store, resume_run, plan, ret_prior);
                return r < 0 ? r : record_resume(store, plan, resume_run, ret);
        }
        _cleanup_(host_done) Host host = {};
        int r = host_read(&host);
        return r < 0 ? r : record_begin(store, plan, &host, ctx, ret);
}
