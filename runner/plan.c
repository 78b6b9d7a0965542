/* SPDX-License-Identifier: MIT */
/*
 * Spec -> Plan. Cells enumerate the parameter matrix in mixed radix (last parameter varies
 * fastest). Within a cell the steps are: one smoke run per variant, reference first (its output
 * becomes the oracle); then warmups and timed rounds in the spec's order. Blocked order keeps
 * each variant's warmups next to its samples; interleaved and randomized put all warmup rounds
 * first so every variant is warm before the first timed round.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "probe/report.h"
#include "runner/counters.h"
#include "runner/env.h"
#include "runner/metric.h"
#include "runner/plan.h"
#include "util/io.h"
#include "util/paths.h"
#include "util/rng.h"
#include "util/sha256.h"
#include "util/strv.h"
#include "util/template.h"
#include "util/text.h"

const char *phase_to_string(Phase p) {
        static const char *const names[] = { "smoke", "warmup", "sample", "calibrate" };
        return (unsigned) p < ELEMENTSOF(names) ? names[p] : "?";
}

const char *plan_cell_value(const Plan *p, size_t cell, size_t param) {
        const Spec *s = p->spec;
        size_t stride = 1;
        for (size_t i = s->n_params; i-- > param + 1;)
                stride *= s->params[i].n_values;
        return s->params[param].values[(cell / stride) % s->params[param].n_values];
}

char *plan_cell_label(const Plan *p, size_t cell) {
        const Spec *s = p->spec;
        if (s->n_params == 0)
                return strdup("-");
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);
        if (!f)
                return NULL;
        for (size_t i = 0; i < s->n_params; i++) {
                fprintf(f, "%s%s=", i ? " " : "", s->params[i].name);
                text_put_shown(f, plan_cell_value(p, cell, i));
        }
        return memstream_text(f, &out);
}

Plan *plan_free(Plan *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; p->allocators && i < p->n_variants; i++)
                allocator_done(&p->allocators[i]);
        free(p->allocators);
        for (size_t i = 0; p->builds && i < p->n_variants; i++)
                build_done(&p->builds[i]);
        free(p->builds);
        for (size_t i = 0; p->jobs && i < p->n_cells * p->n_variants; i++) {
                PlanJob *j = &p->jobs[i];
                free(j->exe);
                strv_free(j->argv);
                strv_free(j->envp);
                strv_free(j->probe_envp);
                free(j->cwd);
                free(j->verify_path);
                free(j->stdin_path);
                for (size_t h = 0; h < _SPEC_HOOK_MAX; h++) {
                        free(j->hooks[h].exe);
                        strv_free(j->hooks[h].argv);
                }
        }
        free(p->jobs);
        free(p->steps);
        free(p->probe_path);
        callgrind_free(p->callgrind);
        free(p->calibrate_exe);
        strv_free(p->calibrate_argv);
        free(p->program_sha256);
        if (p->cgroup)
                cgroup_run_close(p->cgroup);
        free(p->cgroup);
        free(p);
        return NULL;
}

int64_t plan_env_offset(const Plan *p, const PlanStep *step) {
        if (!p->spec->env_offset_random || (step->phase != PHASE_WARMUP && step->phase != PHASE_SAMPLE))
                return -1;
        uint64_t state = p->seed ^ ((uint64_t) step->phase << 32 | step->round);
        return (int64_t) (rng_next(&state) % ENV_OFFSET_MAX);
}

unsigned plan_phase_rounds(const Plan *p, Phase phase) {
        switch (phase) {
        case PHASE_SAMPLE:
        case PHASE_CALIBRATE:
                return p->samples;
        case PHASE_WARMUP:
                return p->warmup;
        default:
                return 1;
        }
}

bool plan_step_probed(const Plan *p, const PlanStep *step) {
        if (!p->probe_path)
                return false;
        if (step->phase == PHASE_CALIBRATE)
                return false; /* a forward-mode variant's environment carries its bridge anyway */
        return step->phase == PHASE_SMOKE || p->spec->probe == SPEC_PROBE_ALWAYS ||
               p->spec->probe == SPEC_PROBE_COUNTERS || p->spec->variants[step->variant].forward_prefix;
}

uint32_t plan_step_probe_requests(const Plan *p, const PlanStep *step) {
        if (step->phase == PHASE_SMOKE)
                return PROBE_REQUEST_SMOKE;
        /* probe: counters already trades time for figures: each sample's memory at exit and its
         * allocator's statistics too */
        return p->spec->probe == SPEC_PROBE_COUNTERS
                       ? PROBE_REQUEST_COUNTERS | PROBE_REQUEST_MEMORY | PROBE_REQUEST_STATS
                       : 0;
}

/* The probed environment: the probe first in LD_PRELOAD, then the allocator (a forward-mode
 * library is not preloaded: the probe loads it privately). */
static int probe_env(const Plan *p, size_t variant, char *const *caller_env, char *const *spec_env,
                     char *const *variant_env, char ***ret) {
        const SpecVariant *v = &p->spec->variants[variant];
        const char *allocator = v->forward_prefix ? NULL : p->allocators[variant].path;
        _cleanup_free_ char *preload = NULL;
        if (asprintf(&preload, "%s%s%s", p->probe_path, allocator ? ":" : "", allocator ? allocator : "") <
            0)
                return -ENOMEM;
        _cleanup_strv_free_ char **env = NULL;
        char fd[16];
        snprintf(fd, sizeof(fd), "%d", PROBE_REPORT_FD);
        int r = env_build(caller_env, spec_env, variant_env, preload, &env);
        if (r >= 0)
                r = strv_env_set(&env, PROBE_ENV_FD, fd);
        /* The library as the spec names it, or as built (runner/build.h). */
        if (r >= 0 && v->forward_prefix)
                r = strv_env_set(&env, PROBE_ENV_FORWARD_LIBRARY,
                                 v->forward_library ? v->forward_library : p->allocators[variant].path);
        if (r >= 0 && v->forward_prefix)
                r = strv_env_set(&env, PROBE_ENV_FORWARD_PREFIX, v->forward_prefix);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(env);
        return 0;
}

/* The message as one line (whatever the paths and values in it hold), prefixed with the spec's
 * "FILE:LINE:COL: " when `at` names where the spec says what failed, as the spec's own
 * diagnostics are, and with "variant NAME: " when a variant (owner) sets it itself. NULL when out
 * of memory. */
static char *message_at(const Spec *spec, SpecPosition at, const SpecVariant *owner, const char *what) {
        _cleanup_free_ char *text = NULL;
        if (asprintf(&text, "%s%s%s%s", owner ? "variant " : "", owner ? owner->name : "", owner ? ": " : "",
                     what) < 0)
                return NULL;
        if (at.line > 0) {
                char *placed = NULL;
                if (asprintf(&placed, "%s:%u:%u: %s", spec->path, at.line, at.column, text) < 0)
                        return NULL;
                free(text);
                text = placed;
        }
        return text_shown_as(text, 0);
}

static int fail(char **ret_message, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char **ret_message, int r, const char *fmt, ...) {
        _cleanup_free_ char *what = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&what, fmt, ap);
        va_end(ap);
        if (ret_message)
                *ret_message = n < 0 ? NULL : message_at(NULL, (SpecPosition){}, NULL, what);
        return r;
}

/* What plan_new found wrong with the files a spec names, each problem once, so that a user
 * fixes a spec in one pass. The first problem's error is the plan's. */
#define PLAN_MAX_PROBLEMS 10
typedef struct Problems {
        char *text; /* one problem per line */
        size_t n;
        bool more; /* past PLAN_MAX_PROBLEMS */
        int first;
} Problems;

/* Adds a problem, unless it is listed already; one with what a variant sets itself (owner) says
 * "variant NAME: ", one with what the experiment sets for all is said once, not per variant.
 * Returns 0, or -ENOMEM. */
static int problem_at(Problems *pr, int r, const Spec *spec, SpecPosition at, const SpecVariant *owner,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int problem_at(Problems *pr, int r, const Spec *spec, SpecPosition at, const SpecVariant *owner,
                      const char *fmt, ...) {
        _cleanup_free_ char *what = NULL, *m = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&what, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        if (!(m = message_at(spec, at, owner, what)))
                return -ENOMEM;
        if (pr->n == 0)
                pr->first = r;
        size_t len = strlen(m);
        for (const char *s = pr->text; s && (s = strstr(s, m)); s += len)
                if ((s == pr->text || s[-1] == '\n') && (s[len] == '\n' || !s[len]))
                        return 0;
        if (pr->n >= PLAN_MAX_PROBLEMS) {
                pr->more = true;
                return 0;
        }
        char *joined = NULL;
        if (asprintf(&joined, "%s%s%s", pr->text ? pr->text : "", pr->text ? "\n" : "", m) < 0)
                return -ENOMEM;
        free(pr->text);
        pr->text = joined;
        pr->n++;
        return 0;
}

static void problems_done(Problems *pr) {
        free(pr->text);
}

/* Hands the problems to the caller as plan_new's message; returns the first one's error. */
static int problems_report(Problems *pr, char **ret_message) {
        _cleanup_free_ char *text = TAKE_PTR(pr->text);
        if (pr->more) {
                char *more = NULL;
                if (asprintf(&more, "%s\n(more problems not shown: fix these and check again)", text) < 0)
                        return -ENOMEM;
                free(text);
                text = more;
        }
        if (ret_message)
                *ret_message = TAKE_PTR(text);
        return pr->first;
}

typedef struct CellVars {
        const char *names[SPEC_MAX_PARAMS];
        const char *values[SPEC_MAX_PARAMS];
        size_t n;
} CellVars;

static int expand(const CellVars *v, const char *tmpl, char **ret) {
        return template_expand(tmpl, v->names, v->values, v->n, ret, NULL);
}

static int expand_strv(const CellVars *v, char *const *l, char ***ret) {
        _cleanup_strv_free_ char **out = calloc(strv_length(l) + 1, sizeof(char *));
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; l && l[i]; i++) {
                int r = expand(v, l[i], &out[i]);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(out);
        return 0;
}

int plan_path_in(const char *dir, const char *name, char **ret) {
        if (name[0] == '/' || !dir)
                return (*ret = strdup(name)) ? 0 : -ENOMEM;
        return asprintf(ret, "%s/%s", dir, name) < 0 ? -ENOMEM : 0;
}

int plan_resolve_exe(const char *name, char *const *envp, const char *cwd, char **ret) {
        if (strchr(name, '/')) {
                _cleanup_free_ char *full = NULL;
                if (plan_path_in(cwd, name, &full) < 0)
                        return -ENOMEM;
                struct stat st;
                if (stat(full, &st) < 0 || faccessat(AT_FDCWD, full, X_OK, AT_EACCESS) < 0)
                        return negative_errno();
                if (S_ISDIR(st.st_mode))
                        return -EISDIR; /* searchable, but not a program */
                *ret = strdup(name);    /* posix_spawn resolves it after chdir */
                return *ret ? 0 : -ENOMEM;
        }
        const char *path = env_get(envp, "PATH");
        for (const char *p = path; p && *p;) {
                size_t len = strcspn(p, ":");
                _cleanup_free_ char *full = NULL;
                if (len > 0 && asprintf(&full, "%.*s/%s", (int) len, p, name) < 0)
                        return -ENOMEM;
                struct stat st;
                if (full && full[0] == '/' && stat(full, &st) == 0 && S_ISREG(st.st_mode) &&
                    faccessat(AT_FDCWD, full, X_OK, AT_EACCESS) == 0) {
                        *ret = TAKE_PTR(full);
                        return 0;
                }
                p += len + (p[len] == ':');
        }
        return -ENOENT;
}

typedef struct ExeQuery {
        const char *name;
        char *const *envp;
        const char *cwd;
} ExeQuery;

static int resolve_exe(const void *userdata, char **ret) {
        const ExeQuery *q = userdata;
        return plan_resolve_exe(q->name, q->envp, q->cwd, ret);
}

/* A directory the child can enter, as the caller (the daemon: as the submitter) may. */
static int check_directory(const void *userdata, char **ret) {
        struct stat st;
        *ret = NULL;
        if (stat(userdata, &st) < 0)
                return negative_errno();
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        return faccessat(AT_FDCWD, userdata, X_OK, AT_EACCESS) < 0 ? negative_errno() : 0;
}

static int check_readable(const void *userdata, char **ret) {
        *ret = NULL;
        return faccessat(AT_FDCWD, userdata, R_OK, AT_EACCESS) < 0 ? negative_errno() : 0;
}

/* A lookup through o's memo: KIND names it in the key, with the strings it depends on. */
static int lookup(const PlanOptions *o, const char *kind, const char *a, const char *b, const char *c,
                  MemoLookup f, const void *userdata, char **ret) {
        _cleanup_free_ char *key = NULL;
        if (o->memo && asprintf(&key, "%s %s\n%s\n%s", kind, a, b ? b : "", c ? c : "") < 0)
                return -ENOMEM;
        return memo_lookup(o->memo, key, f, userdata, ret);
}

static bool same_string(const char *a, const char *b) { /* NULL equals only NULL */
        return a == b || (a && b && strcmp(a, b) == 0);
}

/* The job's hooks and stdin, once its environment and cwd are known. */
static int prepare_hooks(const Spec *s, const CellVars *vars, const PlanOptions *o, PlanJob *job,
                         Problems *pr) {
        const char *path = env_get(job->envp, "PATH");
        int r;
        for (SpecHook h = 0; h < _SPEC_HOOK_MAX; h++) {
                PlanHook *hook = &job->hooks[h];
                if (!s->hooks[h])
                        continue;
                if ((r = expand_strv(vars, s->hooks[h], &hook->argv)) < 0)
                        return r;
                r = lookup(o, "program", hook->argv[0], path, job->cwd, resolve_exe,
                           &(ExeQuery){ .name = hook->argv[0], .envp = job->envp, .cwd = job->cwd },
                           &hook->exe);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && (r = problem_at(pr, r, s, s->hook_at[h], NULL, "%s: cannot run '%s': %s",
                                             spec_hook_to_string(h), hook->argv[0], strerror(-r))) < 0)
                        return r;
        }
        if (!s->stdin_path)
                return 0;
        if ((r = expand(vars, s->stdin_path, &job->stdin_path)) < 0)
                return r;
        /* A setup or prepare hook may make the file: then it is for the run to find. */
        if (s->hooks[SPEC_HOOK_SETUP] || s->hooks[SPEC_HOOK_PREPARE])
                return 0;
        _cleanup_free_ char *full = NULL;
        if (plan_path_in(job->cwd, job->stdin_path, &full) < 0)
                return -ENOMEM;
        r = lookup(o, "readable", full, NULL, NULL, check_readable, full, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return problem_at(pr, r, s, s->stdin_at, NULL, "stdin: cannot read '%s': %s", full,
                                  strerror(-r));
        return 0;
}

/* Prepares one job; what is wrong with the files it names goes to pr, and leaves the job
 * unfinished. Returns 0, or -ENOMEM. */
static int prepare_job(const Plan *p, size_t cell, size_t variant, const PlanOptions *o, PlanJob *job,
                       Problems *pr) {
        char *const *caller_env = o->caller_env;
        const Spec *s = p->spec;
        const SpecVariant *v = &s->variants[variant];
        CellVars vars = { .n = s->n_params };
        for (size_t i = 0; i < s->n_params; i++) {
                vars.names[i] = s->params[i].name;
                vars.values[i] = plan_cell_value(p, cell, i);
        }
        _cleanup_strv_free_ char **spec_env = NULL, **variant_env = NULL;
        int r;
        if ((r = expand_strv(&vars, v->command ? v->command : s->command, &job->argv)) < 0 ||
            (r = expand_strv(&vars, s->env, &spec_env)) < 0 ||
            (r = expand_strv(&vars, v->env, &variant_env)) < 0)
                return r;
        const char *cwd = v->cwd ? v->cwd : s->cwd;
        if (cwd && (r = expand(&vars, cwd, &job->cwd)) < 0)
                return r;
        if (o->base_dir && (!job->cwd || job->cwd[0] != '/')) {
                char *absolute = NULL;
                if (asprintf(&absolute, "%s%s%s", o->base_dir, job->cwd ? "/" : "",
                             job->cwd ? job->cwd : "") < 0)
                        return -ENOMEM;
                free(job->cwd);
                job->cwd = absolute;
        }
        if (s->verify == SPEC_VERIFY_FILE && (r = expand(&vars, s->verify_path, &job->verify_path)) < 0)
                return r;
        /* Jobs are prepared in order, and a matrix rarely changes the cwd or the program:
         * what the job before (or this variant's in the cell before) had checked is not
         * checked again. A PATH search and a stat per job were most of the time a large
         * matrix, or a burst of submissions, took to plan. */
        const PlanJob *before[] = { job > p->jobs ? job - 1 : NULL,
                                    cell > 0 ? plan_job(p, cell - 1, variant) : NULL };
        if (job->cwd && !(before[0] && same_string(before[0]->cwd, job->cwd))) {
                r = lookup(o, "directory", job->cwd, NULL, NULL, check_directory, job->cwd, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) /* nothing else of the job can be checked without it */
                        return problem_at(pr, -ENOENT, s, v->cwd_at, v->cwd ? v : NULL, "cwd '%s' %s",
                                          job->cwd,
                                          r == -ENOTDIR || r == -ENOENT ? "is not a directory"
                                          : r == -EACCES ? "cannot be entered (permission denied)"
                                                         : strerror(-r));
        }
        r = env_build(caller_env, spec_env, variant_env,
                      v->forward_prefix ? NULL : p->allocators[variant].path, &job->envp);
        /* A check runs nothing: the probe's environments are not needed. */
        if (r >= 0 && p->probe_path && !o->check_only)
                r = probe_env(p, variant, caller_env, spec_env, variant_env, &job->probe_envp);
        if (r < 0)
                return r;
        /* A forward-mode variant always runs through the probe. */
        if (v->forward_prefix && job->probe_envp) {
                strv_free(job->envp);
                job->envp = strv_copy(job->probe_envp);
                if (!job->envp)
                        return -ENOMEM;
        }
        const char *path = env_get(job->envp, "PATH");
        for (size_t i = 0; i < ELEMENTSOF(before) && !job->exe; i++)
                if (before[i] && before[i]->exe && same_string(before[i]->argv[0], job->argv[0]) &&
                    same_string(env_get(before[i]->envp, "PATH"), path) &&
                    same_string(before[i]->cwd, job->cwd) && !(job->exe = strdup(before[i]->exe)))
                        return -ENOMEM;
        r = job->exe ? 0
                     : lookup(o, "program", job->argv[0], path, job->cwd, resolve_exe,
                              &(ExeQuery){ .name = job->argv[0], .envp = job->envp, .cwd = job->cwd },
                              &job->exe);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && (r = problem_at(pr, r, s, v->command_at, v->command ? v : NULL, "cannot run '%s': %s",
                                     job->argv[0], strerror(-r))) < 0)
                return r;
        return prepare_hooks(s, &vars, o, job, pr);
}

/* Every job's environment to one size, and every probed one to another (docs/spec.md). */
static int pad_environments(Plan *p) {
        size_t n = p->n_cells * p->n_variants;
        _cleanup_free_ char ****plain = calloc(n + 1, sizeof(char ***));
        _cleanup_free_ char ****probed = calloc(n + 1, sizeof(char ***));
        if (!plain || !probed)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                plain[i] = &p->jobs[i].envp;
                probed[i] = &p->jobs[i].probe_envp;
        }
        int r = env_pad(plain, n);
        return r < 0 ? r : env_pad(probed, n);
}

static int append_step(Plan *p, size_t cap, uint32_t cell, uint32_t variant, uint32_t round, Phase phase) {
        if (p->n_steps >= cap)
                return -E2BIG;
        p->steps[p->n_steps++] =
                (PlanStep){ .cell = cell, .variant = variant, .round = round, .phase = phase };
        return 0;
}

/* Appends the rounds [0, count) of one phase for one cell in the spec's order. */
static int append_rounds(Plan *p, size_t cap, uint32_t cell, Phase phase, unsigned count, uint64_t *rng) {
        uint32_t order[SPEC_MAX_VARIANTS];
        int r;
        for (unsigned round = 0; round < count; round++) {
                for (uint32_t v = 0; v < p->n_variants; v++)
                        order[v] = v;
                if (p->spec->order == SPEC_ORDER_RANDOMIZED)
                        for (size_t i = p->n_variants; i > 1; i--) { /* Fisher-Yates */
                                size_t j = rng_next(rng) % i;
                                uint32_t t = order[i - 1];
                                order[i - 1] = order[j];
                                order[j] = t;
                        }
                for (size_t i = 0; i < p->n_variants; i++)
                        if ((r = append_step(p, cap, cell, order[i], round, phase)) < 0)
                                return r;
        }
        return 0;
}

static int build_steps(Plan *p) {
        const Spec *s = p->spec;
        size_t per_cell = p->n_variants * (1 + (size_t) p->warmup + p->samples);
        size_t calibration = s->calibrate ? p->n_variants * (size_t) p->samples : 0;
        if (per_cell > PLAN_MAX_STEPS || p->n_cells > (PLAN_MAX_STEPS - calibration) / per_cell)
                return -E2BIG;
        size_t cap = per_cell * p->n_cells + calibration;
        p->steps = calloc(cap, sizeof(PlanStep));
        if (!p->steps)
                return -ENOMEM;
        uint64_t rng = p->seed;
        int r;
        /* The null workload first, round after round across the variants, in cell 0's group. */
        for (unsigned k = 0; s->calibrate && k < p->samples; k++)
                for (uint32_t v = 0; v < p->n_variants; v++)
                        if ((r = append_step(p, cap, 0, v, k, PHASE_CALIBRATE)) < 0)
                                return r;
        for (uint32_t c = 0; c < p->n_cells; c++) {
                if ((r = append_step(p, cap, c, (uint32_t) s->reference, 0, PHASE_SMOKE)) < 0)
                        return r;
                for (uint32_t v = 0; v < p->n_variants; v++)
                        if (v != s->reference && (r = append_step(p, cap, c, v, 0, PHASE_SMOKE)) < 0)
                                return r;
                if (s->order == SPEC_ORDER_BLOCKED) {
                        for (uint32_t v = 0; v < p->n_variants; v++) {
                                for (unsigned k = 0; k < p->warmup; k++)
                                        if ((r = append_step(p, cap, c, v, k, PHASE_WARMUP)) < 0)
                                                return r;
                                for (unsigned k = 0; k < p->samples; k++)
                                        if ((r = append_step(p, cap, c, v, k, PHASE_SAMPLE)) < 0)
                                                return r;
                        }
                        continue;
                }
                if ((r = append_rounds(p, cap, c, PHASE_WARMUP, p->warmup, &rng)) < 0 ||
                    (r = append_rounds(p, cap, c, PHASE_SAMPLE, p->samples, &rng)) < 0)
                        return r;
        }
        return 0;
}

static bool strv_has_template(char *const *l) {
        for (size_t i = 0; l && l[i]; i++)
                if (strchr(l[i], '{'))
                        return true;
        return false;
}

/* Whether a variant's job can differ from cell to cell: its command, environment, cwd, verify
 * file, stdin or hooks name a parameter ({name}). */
static bool variant_varies(const Spec *s, size_t variant) {
        const SpecVariant *v = &s->variants[variant];
        const char *cwd = v->cwd ? v->cwd : s->cwd;
        return strv_has_template(v->command ? v->command : s->command) || strv_has_template(s->env) ||
               strv_has_template(v->env) || (cwd && strchr(cwd, '{')) ||
               (s->verify == SPEC_VERIFY_FILE && strchr(s->verify_path, '{')) ||
               (s->stdin_path && strchr(s->stdin_path, '{')) ||
               strv_has_template(s->hooks[SPEC_HOOK_SETUP]) ||
               strv_has_template(s->hooks[SPEC_HOOK_PREPARE]) ||
               strv_has_template(s->hooks[SPEC_HOOK_CLEANUP]);
}

/* The allocator a build made: its file, named after its family (else the file), with the
 * revision as its version. A failed build has no file, and its variant never runs. A file gone
 * from the cache since is a problem of the plan. */
static int built_allocator(const Plan *p, size_t v, const PlanOptions *o, Problems *pr) {
        const SpecVariant *sv = &p->spec->variants[v];
        const Build *b = &p->builds[v];
        Allocator *ret = &p->allocators[v];
        int r = b->path ? allocator_resolve_as(b->path, !o->check_only, o->memo, ret) : 0;
        if (r < 0 && r != -ENOMEM)
                return problem_at(pr, r, p->spec, sv->build.at, sv, "build: cannot preload %s: %s", b->path,
                                  strerror(-r));
        if (r < 0)
                return r;
        const char *file = b->output ? strrchr(b->output, '/') : NULL;
        free(ret->name);
        free(ret->version);
        ret->name = strdup(sv->build.family ? sv->build.family
                           : file           ? file + 1
                           : b->output      ? b->output
                                            : "not built");
        ret->version = strdup(build_label(b));
        if (b->path)
                strcpy(ret->sha256, b->sha256);
        else
                strcpy(ret->sha256, "unknown");
        return ret->name && ret->version ? 0 : -ENOMEM;
}

/* The builds another process made (PlanOptions.built), moved into the plan. */
static int take_builds(Plan *p, const PlanOptions *o, Problems *pr) {
        const Spec *spec = p->spec;
        /* Where a tree or revision was at fault, the builder built nothing: that is all to say. */
        bool problems = false;
        for (size_t v = 0; v < p->n_variants; v++)
                problems |= spec->variants[v].build.source && o->built[v].problem;
        for (size_t v = 0; v < p->n_variants; v++) {
                const SpecVariant *sv = &spec->variants[v];
                BuildOutcome *out = &o->built[v];
                int r = 0;
                if (!sv->build.source || (problems && !out->problem))
                        continue;
                if (out->problem)
                        r = problem_at(pr, out->problem_rev ? -EINVAL : -ENOENT, spec,
                                       out->problem_rev ? sv->build.rev_at : sv->build.source_at, sv, "%s",
                                       out->problem);
                else if (!out->build.source)
                        r = problem_at(pr, -EIO, spec, sv->build.at, sv,
                                       "build: the builder reported nothing");
                else {
                        p->builds[v] = out->build;
                        out->build = (Build){};
                        r = built_allocator(p, v, o, pr);
                }
                if (r == -ENOMEM)
                        return r;
        }
        return 0;
}

/* Resolves (and unless checking, builds) what variants build from source, before their
 * allocators are resolved: a build runs as a child does, in the run's cgroup under its timeout.
 * Returns 0, or < 0 as plan_new() (a problem said in pr is reported by the caller). */
static int build_variants(Plan *p, const PlanOptions *o, Problems *pr, char **ret_message) {
        const Spec *spec = p->spec;
        if (!spec_builds(spec))
                return 0;
        if (!(p->builds = calloc(p->n_variants, sizeof(Build))))
                return -ENOMEM;
        if (o->built)
                return take_builds(p, o, pr);
        BuildRequest rq = { .base_dir = o->base_dir,
                            .caller_env = o->caller_env,
                            .timeout_ns = spec->timeout_ns,
                            .cgroup_required = spec->memory_max || spec->pids_max,
                            .cancel_fd = -1 };
        int r;
        for (size_t v = 0; v < p->n_variants; v++) {
                const SpecVariant *sv = &spec->variants[v];
                if (!sv->build.source)
                        continue;
                rq.build = &sv->build;
                _cleanup_free_ char *why = NULL;
                /* Not even git runs where builds are not this caller's to make: the daemon's
                 * check of a submission leaves them to the job's builder (daemon/builder.h). */
                if (!o->build && o->check_only)
                        r = built_allocator(p, v, o, pr);
                else if (!o->build)
                        r = problem_at(pr, -EOPNOTSUPP, spec, sv->build.at, sv,
                                       "this plan cannot build from source (no builder's results)");
                else if ((r = build_resolve(&rq, &p->builds[v], &why)) < 0 && r != -ENOMEM && why)
                        r = problem_at(pr, r, spec, r == -EINVAL ? sv->build.rev_at : sv->build.source_at,
                                       sv, "%s", why);
                if (r == -ENOMEM)
                        return r;
        }
        /* Nothing is built before every build is known to be possible. */
        if (pr->n > 0 || !o->build)
                return 0;
        if (!o->check_only && !o->defer_cgroup && (r = plan_open_cgroup(p, ret_message)) < 0)
                return r;
        rq.cgroup = p->cgroup;
        for (size_t v = 0; v < p->n_variants; v++) {
                const SpecVariant *sv = &spec->variants[v];
                Build *b = &p->builds[v];
                if (!sv->build.source)
                        continue;
                rq.build = &sv->build;
                if (!o->check_only) {
                        if (o->on_build)
                                o->on_build(o->userdata, sv, b, false);
                        if ((r = build_make(&rq, b)) < 0)
                                return fail(ret_message, r, "cannot build %s: %s", sv->name, strerror(-r));
                        if (o->on_build)
                                o->on_build(o->userdata, sv, b, true);
                }
                if ((r = built_allocator(p, v, o, pr)) == -ENOMEM)
                        return r;
        }
        return 0;
}

/* A counter as the spec's metric: counted by the kernel, or instructions by callgrind where the
 * machine has no PMU (p->callgrind; runner/callgrind.h), or refused at the metric's place. */
static int plan_counters(Plan *p, const Spec *spec, const PlanOptions *o, char **ret_message) {
        const BuiltinMetric *metric = builtin_metric(spec_metric_to_string(spec->metric));
        const char *why = NULL;
        if (!metric || metric->counter < 0 || counters_can_open((Counter) metric->counter, &why))
                return 0;
        _cleanup_free_ char *valgrind = NULL, *what = NULL;
        if (metric->counter == COUNTER_INSTRUCTIONS) {
                extern char **environ;
                int r = plan_resolve_exe("valgrind", environ, NULL, &valgrind);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0 && spec->memory_timeline_ns) {
                        /* Under callgrind the memory read would be valgrind's, not the program's. */
                        if (ret_message)
                                *ret_message = message_at(
                                        spec, spec->metric_at, NULL,
                                        "metric instructions is counted by callgrind here (no PMU), and "
                                        "memory_timeline would read valgrind's memory, not the program's: "
                                        "read the memory in a run of its own");
                        return -EOPNOTSUPP;
                }
                if (r >= 0)
                        return o->check_only ? 0 : callgrind_new(valgrind, &p->callgrind);
        }
        if (asprintf(&what, "metric %s cannot be counted: %s%s", counter_names[metric->counter], why,
                     metric->counter == COUNTER_INSTRUCTIONS
                             ? "; valgrind's callgrind would count them, but valgrind is not installed "
                               "(apt-get install valgrind)"
                             : "") < 0)
                return -ENOMEM;
        if (ret_message)
                *ret_message = message_at(spec, spec->metric_at, NULL, what);
        return -EOPNOTSUPP;
}

int plan_new(const Spec *spec, const PlanOptions *o, Plan **ret, char **ret_message) {
        const char *probe_path = o->probe_path;
        _cleanup_(plan_freep) Plan *p = calloc(1, sizeof(Plan));
        if (!p)
                return -ENOMEM;
        _cleanup_free_ char *spawner = paths_spawner();
        if (!spawner)
                return fail(ret_message, -ENOENT,
                            "cannot find alloclab-spawner, which starts every child (set ALLOCLAB_SPAWNER)");
        bool needs_probe = spec->probe != SPEC_PROBE_NEVER;
        for (size_t v = 0; v < spec->n_variants; v++)
                needs_probe |= spec->variants[v].forward_prefix != NULL;
        if (needs_probe) {
                int r = probe_path ? lookup(o, "readable", probe_path, NULL, NULL, check_readable,
                                            probe_path, NULL)
                                   : -ENOENT;
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return fail(
                                ret_message, -ENOENT,
                                "cannot find liballoclab-probe.so (set ALLOCLAB_PROBE, or probe: never)");
                if (!(p->probe_path = strdup(probe_path)))
                        return -ENOMEM;
        }
        int q = plan_counters(p, spec, o, ret_message);
        if (q < 0)
                return q;
        p->spec = spec;
        p->seed = o->seed;
        p->samples = o->samples ? o->samples : spec->samples;
        p->samples_auto = spec->samples_auto && !o->samples_fixed;
        p->warmup = o->warmup_set ? o->warmup : spec->warmup;
        q = cpus_place(spec, &p->cpus, ret_message);
        if (q < 0)
                return q;
        p->n_cells = spec_n_cells(spec);
        p->n_variants = spec->n_variants;
        if (p->n_cells * p->n_variants > PLAN_MAX_JOBS)
                return fail(ret_message, -E2BIG, "%zu cells x %zu variants is more than %d jobs", p->n_cells,
                            p->n_variants, PLAN_MAX_JOBS);

        p->allocators = calloc(p->n_variants, sizeof(Allocator));
        if (!p->allocators)
                return -ENOMEM;
        _cleanup_(problems_done) Problems pr = {};
        int b = build_variants(p, o, &pr, ret_message);
        if (b != 0)
                return b;
        for (size_t v = 0; v < p->n_variants; v++) {
                const SpecVariant *sv = &spec->variants[v];
                if (sv->build.source)
                        continue; /* build_variants() found it */
                int r = allocator_resolve_as(sv->forward_library ? sv->forward_library : sv->preload,
                                             !o->check_only, o->memo, &p->allocators[v]);
                if (r < 0 && r != -ENOMEM && p->allocators[v].entry)
                        r = problem_at(&pr, r, spec, sv->preload_at, sv,
                                       "allocator %s is not installed: apt-get install %s", sv->preload,
                                       p->allocators[v].entry->package);
                else if (r < 0 && r != -ENOMEM)
                        r = problem_at(&pr, r, spec, sv->forward_library ? sv->forward_at : sv->preload_at,
                                       sv, "cannot %s %s: %s%s",
                                       sv->forward_library ? "forward to" : "preload",
                                       sv->forward_library ? sv->forward_library : sv->preload, strerror(-r),
                                       r == -EISDIR ? " (to build an allocator from it: build: {source: "
                                                      "...}, or quick -a "
                                                      "NAME=DIR@REV)"
                                                    : "");
                if (r < 0)
                        return r;
        }

        p->jobs = calloc(p->n_cells * p->n_variants, sizeof(PlanJob));
        if (!p->jobs)
                return -ENOMEM;
        for (size_t c = 0; c < p->n_cells; c++)
                for (size_t v = 0; v < p->n_variants; v++) {
                        /* A check needs a variant's later cells only where they differ from its
                         * first (those are left empty). A burst of submissions is checked
                         * several times faster so. */
                        if (o->check_only && c > 0 && !variant_varies(spec, v))
                                continue;
                        int r = prepare_job(p, c, v, o, &p->jobs[c * p->n_variants + v], &pr);
                        if (r < 0)
                                return r;
                }
        int r;
        /* (Unless the first job's cwd is missing: the null workload runs there.) */
        if (spec->calibrate && plan_job(p, 0, 0)->envp) {
                static char *const null_workload[] = { (char *) "true", NULL };
                const PlanJob *first = plan_job(p, 0, 0);
                if (!(p->calibrate_argv =
                              strv_copy(spec->calibrate_command ? spec->calibrate_command : null_workload)))
                        return -ENOMEM;
                r = plan_resolve_exe(p->calibrate_argv[0], first->envp, first->cwd, &p->calibrate_exe);
                if (r < 0 && r != -ENOMEM)
                        r = problem_at(&pr, r, NULL, (SpecPosition){}, NULL,
                                       "calibrate: cannot run '%s': %s", p->calibrate_argv[0], strerror(-r));
                if (r < 0)
                        return r;
        }
        if (pr.n > 0)
                return problems_report(&pr, ret_message);
        if (!o->check_only && (r = pad_environments(p)) < 0)
                return r;

        r = build_steps(p);
        if (r == -E2BIG)
                return fail(ret_message, r, "the plan has more than %d child runs", PLAN_MAX_STEPS);
        if (r < 0)
                return r;
        if (!o->defer_cgroup && !p->cgroup && (r = plan_open_cgroup(p, ret_message)) < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

/* Makes cg for the children of a run of spec, with the spec's limits set, or says why a limit
 * cannot be enforced. */
static int open_limited(const Spec *spec, CgroupRun *cg, char **ret_message) {
        int r;
        if ((r = cgroup_run_open(cg)) < 0)
                return r;
        /* A limit is enforced or the run does not start: never an unlimited run that says otherwise. */
        if (spec->pids_max)
                (void) cgroup_run_pids_v1(cg);
        const char *missing = spec->memory_max && !cg->memory ? "memory_max"
                              : spec->pids_max && !cg->pids   ? "pids_max"
                                                              : NULL;
        if (missing && !cg->path)
                return fail(ret_message, -EOPNOTSUPP,
                            "%s needs a cgroup for the children, and there is none: %s", missing,
                            cg->why_not);
        if (missing)
                return fail(ret_message, -EOPNOTSUPP,
                            "%s needs the cgroup v2 %s controller, which %s does not get from its parent "
                            "(cgroup.subtree_control; under systemd, Delegate=yes)%s",
                            missing, spec->memory_max && !cg->memory ? "memory" : "pids", cg->path,
                            spec->memory_max && !cg->memory ? "" : ", nor from a cgroup v1 pids hierarchy");
        if ((r = cgroup_run_limit(cg, spec->memory_max, spec->pids_max)) < 0)
                return fail(ret_message, r, "cannot set the children's limits in %s: %s", cg->path,
                            strerror(-r));
        return 0;
}

int plan_open_cgroup(Plan *p, char **ret_message) {
        assert(!p->cgroup);
        if (!(p->cgroup = calloc(1, sizeof(CgroupRun))))
                return -ENOMEM;
        return open_limited(p->spec, p->cgroup, ret_message);
}

int plan_cgroup_for(const Spec *spec, CgroupRun *ret, char **ret_message) {
        return open_limited(spec, ret, ret_message);
}

int plan_check_limits(const Spec *spec, bool *ret_pids_v1, char **ret_message) {
        CgroupRun cg;
        int r = open_limited(spec, &cg, ret_message);
        *ret_pids_v1 = cg.pids_v1_fd >= 0;
        cgroup_run_close(&cg);
        return r;
}

int plan_hash_programs(Plan *p) {
        free(p->program_sha256);
        if (!(p->program_sha256 = calloc(p->n_variants, sizeof(*p->program_sha256))))
                return -ENOMEM;
        for (size_t v = 0; v < p->n_variants; v++) {
                /* The program the variant runs (its first cell's; a matrix does not change it), as
                 * the child will find it: relative to its cwd. */
                const PlanJob *job = plan_job(p, 0, v);
                _cleanup_free_ char *full = NULL;
                if (plan_path_in(job->cwd, job->exe, &full) < 0)
                        return -ENOMEM;
                if (sha256_file_hex(full, p->program_sha256[v]) < 0)
                        strcpy(p->program_sha256[v], "unknown");
        }
        return 0;
}
