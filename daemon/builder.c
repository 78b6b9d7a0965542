/* SPDX-License-Identifier: MIT */
/*
 * The builder process (daemon/builder.h). It reports in a memfd the daemon reads after its exit,
 * one JSON document: {"variants": [null | {"build": BUILD} | {"problem": TEXT, "rev": BOOL}]},
 * BUILD as build_json() writes it. Every tree and revision is resolved before anything is
 * built, as `alloclab run` does: a problem in one builds nothing.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/builder.h"
#include "daemon/identity.h"
#include "runner/output.h"
#include "runner/plan.h"
#include "util/cleanup.h"
#include "util/io.h"

#define BUILDER_REPORT_MAX (16 * 1024 * 1024)

struct Builder {
        sd_event_source *child;
        pid_t pid;
        int report_fd;
        CgroupRun cgroup;
        size_t n_variants;
        BuilderDone done;
        void *userdata;
};

/* ---- the builder process ---------------------------------------------------------------- */

/* Resolves every variant's build into builds[]; a problem goes into the report at once. Returns
 * how many problems there were, or -ENOMEM. */
static int resolve_all(const Spec *spec, BuildRequest rq, Build *builds, json_t *report) {
        int problems = 0;
        for (size_t v = 0; v < spec->n_variants; v++) {
                json_t *entry = json_null();
                if (spec->variants[v].build.source) {
                        rq.build = &spec->variants[v].build;
                        _cleanup_free_ char *why = NULL;
                        int r = build_resolve(&rq, &builds[v], &why);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0) {
                                entry = json_pack("{s:s, s:b}", "problem", why ? why : strerror(-r), "rev",
                                                  r == -EINVAL);
                                problems++;
                        }
                }
                if (json_array_append_new(report, entry) < 0)
                        return -ENOMEM;
        }
        return problems;
}

static _Noreturn void builder_main(const Job *job, const Spec *spec, CgroupRun *cgroup, int report_fd) {
        /* The builder must not outlive the daemon, which alone would read its report. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        /* Into a leaf of the cgroup, handed to the submitter, who then makes the children's
         * cgroups (as the runner does, daemon/worker.c); without it, the builds go without. */
        if (geteuid() == 0 && job->uid != 0)
                (void) cgroup_run_delegate(cgroup, job->uid, job->gid);
        int r = identity_become(job->uid, job->gid);
        umask(job->umask);
        if (r < 0 || chdir(job->cwd) < 0)
                _exit(2);
        sigset_t stop;
        sigemptyset(&stop);
        sigaddset(&stop, SIGTERM);
        sigaddset(&stop, SIGINT);
        int cancel_fd =
                signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK); /* SIGTERM is blocked: the daemon's */
        Build *builds = calloc(spec->n_variants, sizeof(Build));
        json_t *variants = json_array();
        if (cancel_fd < 0 || !builds || !variants)
                _exit(2);
        BuildRequest rq = { .base_dir = job->cwd,
                            .caller_env = job->env,
                            .timeout_ns = spec->timeout_ns,
                            .cgroup = cgroup->path ? cgroup : NULL,
                            .cgroup_required = spec->memory_max || spec->pids_max,
                            .cancel_fd = cancel_fd };
        int problems = resolve_all(spec, rq, builds, variants);
        if (problems < 0)
                _exit(2);
        for (size_t v = 0; v < spec->n_variants && problems == 0; v++) {
                if (!spec->variants[v].build.source)
                        continue;
                rq.build = &spec->variants[v].build;
                r = build_make(&rq, &builds[v]);
                if (r == -ECANCELED)
                        _exit(3);
                if (r < 0 && asprintf(&builds[v].failure, "cannot build: %s", strerror(-r)) < 0)
                        _exit(2);
                _cleanup_free_ char *text = build_json(&builds[v]);
                json_t *made = text ? json_loads(text, 0, NULL) : NULL;
                if (!made || json_array_set_new(variants, v, json_pack("{s:o}", "build", made)) < 0)
                        _exit(2);
        }
        _cleanup_free_ char *report = json_dumps(json_pack("{s:o}", "variants", variants), JSON_COMPACT);
        _exit(report && write_full(report_fd, report, strlen(report)) >= 0 ? 0 : 2);
}

/* ---- the daemon's side ---------------------------------------------------------------- */

/* The builder's report into one outcome per variant. */
static int read_report(Builder *b, BuildOutcome **ret) {
        _cleanup_free_ char *text = NULL;
        int r = read_text_fd(b->report_fd, BUILDER_REPORT_MAX, &text, NULL);
        if (r < 0)
                return r;
        json_auto_t *doc = json_loads(text, 0, NULL);
        const json_t *variants = json_object_get(doc, "variants");
        if (json_array_size(variants) != b->n_variants)
                return -EBADMSG;
        BuildOutcome *out = calloc(b->n_variants, sizeof(BuildOutcome));
        if (!out)
                return -ENOMEM;
        for (size_t v = 0; v < b->n_variants && r >= 0; v++) {
                const json_t *e = json_array_get(variants, v), *made = json_object_get(e, "build");
                const char *problem = json_string_value(json_object_get(e, "problem"));
                _cleanup_free_ char *made_text = made ? json_dumps(made, JSON_COMPACT) : NULL;
                if (problem) {
                        out[v].problem_rev = json_is_true(json_object_get(e, "rev"));
                        r = (out[v].problem = strdup(problem)) ? 0 : -ENOMEM;
                } else if (made)
                        r = made_text ? build_from_json(made_text, &out[v].build) : -ENOMEM;
        }
        if (r < 0) {
                for (size_t v = 0; v < b->n_variants; v++)
                        build_outcome_done(&out[v]);
                free(out);
                return r;
        }
        *ret = out;
        return 0;
}

static int on_builder_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Builder *b = userdata;
        (void) s;
        BuildOutcome *outcomes = NULL;
        char why[128] = "";
        int r = 0;
        if (si->si_code == CLD_EXITED && si->si_status == 3)
                r = -ECANCELED;
        else if (si->si_code != CLD_EXITED || si->si_status != 0) {
                snprintf(why, sizeof(why), "the builder process %s %d",
                         si->si_code == CLD_EXITED ? "exited with status" : "was killed by signal",
                         si->si_status);
                r = si->si_code == CLD_EXITED ? -EIO : -ECANCELED;
        } else if ((r = read_report(b, &outcomes)) < 0)
                snprintf(why, sizeof(why), "cannot read the builder's report: %s", strerror(-r));
        cgroup_run_close(&b->cgroup);
        b->done(b->userdata, outcomes, r, why[0] ? why : NULL); /* may free b */
        return 0;
}

int builder_start(sd_event *event, const Job *job, const Spec *spec, BuilderDone done, void *userdata,
                  Builder **ret, char **ret_message) {
        _cleanup_(builder_freep) Builder *b = calloc(1, sizeof(Builder));
        if (!b)
                return -ENOMEM;
        *b = (Builder){
                .report_fd = -1, .n_variants = spec->n_variants, .done = done, .userdata = userdata
        };
        int r = plan_cgroup_for(spec, &b->cgroup, ret_message);
        if (r < 0)
                return r;
        if ((b->report_fd = output_memfd("alloclab-builder")) < 0)
                return b->report_fd;
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                builder_main(job, spec, &b->cgroup, b->report_fd);
        b->pid = pid;
        if ((r = sd_event_add_child(event, &b->child, pid, WEXITED, on_builder_exit, b)) < 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                b->pid = 0;
                return r;
        }
        *ret = TAKE_PTR(b);
        return 0;
}

void builder_cancel(Builder *b) {
        if (b->pid > 0)
                kill(b->pid, SIGTERM);
}

void builder_kill(Builder *b) {
        if (b->pid > 0)
                kill(b->pid, SIGKILL);
}

Builder *builder_free(Builder *b) {
        if (!b)
                return NULL;
        sd_event_source_disable_unref(b->child);
        safe_close(b->report_fd);
        if (b->cgroup.path) /* killed: what it started goes with it */
                cgroup_children_kill(&b->cgroup);
        cgroup_run_close(&b->cgroup);
        free(b);
        return NULL;
}
