/* SPDX-License-Identifier: MIT */
/*
 * The executor. For each cell: run the smoke steps (the reference's output becomes the cell's
 * oracle; a variant whose smoke run fails is excluded from the cell with a reason), then the
 * warmup and timed steps, then hand the cell's statistics to the sink and forget the cell.
 *
 * Between spawn and reap this process does nothing but wait (runner/spawn.c). Capture files,
 * hashing, metric parsing and the sink's writes all happen outside that window.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "runner/allocator-stats.h"
#include "runner/env.h"
#include "runner/hook.h"
#include "runner/options.h"
#include "runner/preflight.h"
#include "runner/quiet.h"
#include "runner/metric.h"
#include "runner/run.h"
#include "stats/compare.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "util/text.h"

const char *sample_status_to_string(SampleStatus s) {
        static const char *const names[] = {
                [SAMPLE_OK] = "ok",
                [SAMPLE_MISMATCH] = "mismatch",
                [SAMPLE_EXIT] = "exit",
                [SAMPLE_SIGNAL] = "signal",
                [SAMPLE_TIMEOUT] = "timeout",
                [SAMPLE_OUTPUT_LIMIT] = "output-limit",
                [SAMPLE_EXEC_FAILED] = "exec-failed",
                [SAMPLE_BAD_METRICS] = "bad-metrics",
                [SAMPLE_MISSING_METRIC] = "missing-metric",
                [SAMPLE_NO_OUTPUT_FILE] = "no-output-file",
                [SAMPLE_PRELOAD_INEFFECTIVE] = "preload-ineffective",
                [SAMPLE_CONFIG_REJECTED] = "config-rejected",
                [SAMPLE_FORWARD_REFUSED] = "forward-refused",
                [SAMPLE_PROBE_FAILED] = "probe-failed",
                [SAMPLE_OOM] = "oom",
                [SAMPLE_PIDS_LIMIT] = "pids-limit",
                [SAMPLE_SKIPPED_BUSY] = "skipped-busy",
                [SAMPLE_SETUP_FAILED] = "setup-failed",
                [SAMPLE_PREPARE_FAILED] = "prepare-failed",
        };
        return (unsigned) s < ELEMENTSOF(names) ? names[s] : "?";
}

bool run_sample_metric(const Sample *s, const char *metric, double *ret) {
        const BuiltinMetric *m = builtin_metric(metric);
        if (m) {
                *ret = m->of(s);
                return builtin_metric_measured(m, s);
        }
        for (size_t i = 0; i < s->n_metrics; i++)
                if (strcmp(s->metrics[i].name, metric) == 0) {
                        *ret = s->metrics[i].value;
                        return true;
                }
        return false;
}

/* One metric's values for one variant in the current cell. */
typedef struct Series {
        char name[OUTPUT_METRIC_NAME_MAX + 1];
        double *values;
        size_t n;
} Series;

typedef struct CellState {
        int oracle_fd;
        bool excluded[SPEC_MAX_VARIANTS];
        bool set_up[SPEC_MAX_VARIANTS]; /* ran (after its setup hook, if any): cleanup is due */
        bool precise;                   /* samples: auto, and every ratio is known well enough */
        unsigned judged;                /* samples: auto: sample rounds up to here were judged */
        Series *series[SPEC_MAX_VARIANTS];
        size_t n_series[SPEC_MAX_VARIANTS];
} CellState;

static void cell_state_reset(CellState *c) {
        safe_close(c->oracle_fd);
        for (size_t v = 0; v < SPEC_MAX_VARIANTS; v++) {
                for (size_t i = 0; i < c->n_series[v]; i++)
                        free(c->series[v][i].values);
                free(c->series[v]);
        }
        *c = (CellState){ .oracle_fd = -1 };
}

/* The values of a variant's metric in the current cell, or NULL. */
static const Series *find_series(const CellState *c, uint32_t variant, const char *name) {
        for (size_t i = 0; i < c->n_series[variant]; i++)
                if (strcmp(c->series[variant][i].name, name) == 0)
                        return &c->series[variant][i];
        return NULL;
}

static int series_add(CellState *c, uint32_t variant, const char *name, double value) {
        Series *s = (Series *) find_series(c, variant, name);
        if (!s) {
                Series *grown = realloc(c->series[variant], (c->n_series[variant] + 1) * sizeof(Series));
                if (!grown)
                        return -ENOMEM;
                c->series[variant] = grown;
                s = &grown[c->n_series[variant]++];
                *s = (Series){};
                snprintf(s->name, sizeof(s->name), "%s", name);
        }
        double *values = realloc(s->values, (s->n + 1) * sizeof(double));
        if (!values)
                return -ENOMEM;
        s->values = values;
        s->values[s->n++] = value;
        return 0;
}

static int collect(CellState *c, const Sample *s) {
        int r;
        for (size_t i = 0; i < N_BUILTIN_METRICS; i++) {
                const BuiltinMetric *m = &builtin_metrics[i];
                if (builtin_metric_measured(m, s) &&
                    (r = series_add(c, s->step->variant, builtin_metric_name(m), m->of(s))) < 0)
                        return r;
        }
        for (size_t i = 0; i < s->n_metrics; i++)
                if ((r = series_add(c, s->step->variant, s->metrics[i].name, s->metrics[i].value)) < 0)
                        return r;
        return 0;
}

CompareRule run_compare_rule(const Plan *p) {
        const Spec *s = p->spec;
        static const Correction corrections[_SPEC_CORRECTION_MAX] = {
                [SPEC_CORRECTION_HOLM] = CORRECTION_HOLM,
                [SPEC_CORRECTION_BH] = CORRECTION_BH,
                [SPEC_CORRECTION_NONE] = CORRECTION_NONE,
        };
        size_t tests = p->n_cells * (p->n_variants > 1 ? p->n_variants - 1 : 0);
        return (CompareRule){ .min_effect = s->min_effect,
                              .alpha = s->alpha,
                              .correction = corrections[s->correction],
                              .tests = tests ? tests : 1 };
}

unsigned run_auto_min_rounds(const Plan *p) {
        const Spec *s = p->spec;
        CompareRule rule = run_compare_rule(p);
        unsigned needed = s->samples_min ? s->samples_min : compare_samples_needed(true, &rule);
        return needed < 3 ? 3 : needed > p->samples ? p->samples : needed;
}

/* samples: auto: whether every measured variant's ratio to the baseline on the primary metric
 * is known within min_effect (the half-width of its interval at 1 - alpha, as show computes it
 * for rounds that do not pair), so that more rounds would not change what the cell says. Costs
 * a few linear passes per variant, between children. */
static bool precise_enough(const Plan *p, const CellState *c) {
        const Spec *s = p->spec;
        /* The built-in metrics' series carry the spec's names for them (runner/metric.h). */
        const char *metric =
                s->metric == SPEC_METRIC_REPORTED ? s->metric_name : spec_metric_to_string(s->metric);
        const Series *base =
                c->excluded[s->baseline] ? NULL : find_series(c, (uint32_t) s->baseline, metric);
        if (!base || base->n < 2)
                return false;
        CompareRule rule = run_compare_rule(p);
        for (uint32_t v = 0; v < p->n_variants; v++) {
                if (v == s->baseline || c->excluded[v])
                        continue;
                const Series *x = find_series(c, v, metric);
                Comparison k;
                if (!x || x->n < 2 ||
                    compare_independent(base->values, base->n, x->values, x->n, &rule, &k) < 0 ||
                    !isfinite(k.lo) || !isfinite(k.hi) || (k.hi - k.lo) / 2 > s->min_effect)
                        return false;
        }
        return true;
}

static int emit_cell_stats(const Plan *p, const RunSink *sink, uint32_t cell, CellState *c) {
        size_t total = 0;
        for (size_t v = 0; v < p->n_variants; v++)
                total += c->n_series[v];
        if (total == 0 || !sink->cell_stats)
                return 0;
        _cleanup_free_ StatsRow *rows = calloc(total, sizeof(StatsRow));
        if (!rows)
                return -ENOMEM;
        size_t n = 0;
        for (uint32_t v = 0; v < p->n_variants; v++)
                for (size_t i = 0; i < c->n_series[v]; i++) {
                        Series *s = &c->series[v][i];
                        rows[n] = (StatsRow){ .cell = cell, .variant = v, .metric = s->name };
                        int r = stats_compute(s->values, s->n, &rows[n].stats);
                        if (r < 0)
                                return r;
                        n++;
                }
        return sink->cell_stats(sink->userdata, p, cell, rows, n);
}

static SampleStatus status_of(const SpawnResult *r) {
        /* A limit the tree hit explains whatever else happened to it. */
        if (r->oom_killed)
                return SAMPLE_OOM;
        if (r->pids_limited)
                return SAMPLE_PIDS_LIMIT;
        switch (r->end) {
        case SPAWN_EXITED:
                return r->exit_code == 0 ? SAMPLE_OK : SAMPLE_EXIT;
        case SPAWN_SIGNALED:
                return SAMPLE_SIGNAL;
        case SPAWN_TIMEOUT:
                return SAMPLE_TIMEOUT;
        case SPAWN_EXEC_FAILED:
                return SAMPLE_EXEC_FAILED;
        case SPAWN_CANCELED:
                break;
        }
        return SAMPLE_OK; /* not reached for canceled runs: the caller drops them */
}

/* The first line of stderr that carries a configuration complaint, or NULL. */
static char *find_complaint(int err, char *const *envp) {
        _cleanup_free_ char *text = output_excerpt_all(err);
        return options_complaint(text, envp);
}

static int set_detail(Sample *s, SampleStatus status, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int set_detail(Sample *s, SampleStatus status, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        free(s->detail);
        int r = vasprintf(&s->detail, fmt, ap);
        va_end(ap);
        if (r < 0) {
                s->detail = NULL;
                return -ENOMEM;
        }
        s->status = status;
        return 0;
}

static bool same_file(const char *a, const char *b) {
        _cleanup_free_ char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
        return ra && rb && strcmp(ra, rb) == 0;
}

/* Whether the object at path (of the given families) is allocator a. */
static bool serves(const Allocator *a, const char *path, uint32_t families) {
        return a->path ? same_file(path, a->path) : (families & PROBE_FAMILY_GLIBC) != 0;
}

/* Whether the spec says program's allocator does not matter (preload_ignore). */
static bool ignored(const Spec *spec, const char *program, bool started) {
        const char *base = basename(program);
        return strv_contains(spec->preload_ignore, base) ||
               (!started && strv_contains(spec->preload_ignore, "*"));
}

/* Whether program, executed without the probe, still took the variant's allocator a, seen from
 * the files: for glibc with LD_PRELOAD unset or empty (the probe's "(unset)"), else with the
 * variant's allocator first in LD_PRELOAD; and a program, found as the plan finds a command (the
 * job's PATH and cwd), that is dynamically linked and defines no malloc of its own
 * (runner/preflight.h). */
static bool unprobed_under_variant(const PlanJob *job, const Allocator *a, const char *program,
                                   const char *preload) {
        size_t first = strcspn(preload, ": ");
        bool unset = !preload[0] || strcmp(preload, "(unset)") == 0;
        if (a->path ? strlen(a->path) != first || strncmp(preload, a->path, first) != 0 : !unset)
                return false;
        _cleanup_free_ char *found = NULL, *full = NULL, *reason = NULL;
        return plan_resolve_exe(program, job->envp, job->cwd, &found) >= 0 &&
               plan_path_in(job->cwd, found, &full) >= 0 && preflight_check(full, a->path, &reason) == 0;
}

/* What an unprobed program ran under, as far as its LD_PRELOAD tells: the allocator its first
 * entry is ("under /x/libmimalloc.so.2 (mimalloc), not under glibc"), else that it lacked the
 * variant's ("without the variant's /x/libjemalloc.so.2"), else for glibc that its malloc was
 * not seen. Into buf; returns buf. */
static const char *unprobed_allocator(const char *preload, const char *wanted, char *buf, size_t size) {
        char first[PROBE_PATH_MAX];
        snprintf(first, sizeof(first), "%.*s", (int) strcspn(preload, ": "), preload);
        const CatalogEntry *e = first[0] ? catalog_find_file(first) : NULL;
        if (e && e->soname)
                snprintf(buf, size, "under %s (%s), not under %s", first, e->name, wanted);
        else if (strcmp(wanted, "glibc") != 0)
                snprintf(buf, size, "without the variant's %s", wanted);
        else
                snprintf(buf, size, "its malloc not seen, so not shown to be glibc's");
        return buf;
}

/* The whole tree: every process ran with the variant's LD_PRELOAD and under its allocator (if it
 * called malloc); a program executed without the probe ran unmeasured. Past the probe's table
 * only a flag says whether a process ran with another LD_PRELOAD or dropped the probe.
 * Any process that did not makes the variant preload-ineffective, unless preload_ignore names its
 * program. */
static int check_tree(const Plan *p, Sample *s, const char *given) {
        const Allocator *a = &p->allocators[s->step->variant];
        const ProbeReport *pr = &s->probe->report;
        const Spec *spec = p->spec;
        const char *wanted = a->path ? a->path : "glibc";
        const PlanJob *job = plan_job(p, s->step->cell, s->step->variant);
        char why[PROBE_PATH_MAX + 128];
        static const char hint[] = " (if it does not matter, spec key preload_ignore names it)";
        uint64_t total = 0;
        for (uint32_t i = 0; i < s->probe->n_processes; i++)
                total += s->probe->process_calls[i];
        for (uint32_t i = 0; i < s->probe->n_processes; i++) {
                const ProbeProcess *proc = &pr->processes[i];
                bool started = proc->how == PROBE_PROCESS_STARTED ||
                               (proc->how == PROBE_PROCESS_EXECUTED && proc->parent == 0);
                uint64_t calls = s->probe->process_calls[i];
                if (proc->unprobed_exec[0] && !ignored(spec, proc->unprobed_exec, false) &&
                    !unprobed_under_variant(job, a, proc->unprobed_exec, proc->unprobed_preload))
                        return set_detail(
                                s, SAMPLE_PRELOAD_INEFFECTIVE,
                                "%s (pid %d) executed %s with LD_PRELOAD=%s, without the probe: "
                                "it ran unmeasured, %s%s",
                                proc->program, (int) proc->pid, proc->unprobed_exec, proc->unprobed_preload,
                                unprobed_allocator(proc->unprobed_preload, wanted, why, sizeof(why)), hint);
                if (ignored(spec, proc->program, started))
                        continue;
                if (given && strcmp(proc->preload, given) != 0)
                        return set_detail(s, SAMPLE_PRELOAD_INEFFECTIVE,
                                          "%s (pid %d) ran with LD_PRELOAD=%s, not the variant's %s: "
                                          "malloc was served by %s (%s)%s",
                                          proc->program, (int) proc->pid,
                                          proc->preload[0] ? proc->preload : "(unset)", given,
                                          proc->effective_path, probe_family_name(proc->family), hint);
                if (calls > 0 && !serves(a, proc->effective_path, proc->family))
                        return set_detail(
                                s, SAMPLE_PRELOAD_INEFFECTIVE,
                                "malloc of %s (pid %d) was served by %s (%s), not by %s: %.0f%% of "
                                "the process tree's malloc calls%s",
                                proc->program, (int) proc->pid, proc->effective_path,
                                probe_family_name(proc->family), wanted,
                                total ? 100.0 * (double) calls / (double) total : 0.0, hint);
        }
        if ((pr->state & PROBE_STATE_UNLISTED_FOREIGN) && !strv_contains(spec->preload_ignore, "*"))
                return set_detail(
                        s, SAMPLE_PRELOAD_INEFFECTIVE,
                        "of the %u processes of the tree past the %d the probe lists, one ran with "
                        "another LD_PRELOAD than the started program or executed a program "
                        "without the probe (spec key preload_ignore: [\"*\"] proves the started "
                        "program alone)",
                        (unsigned) pr->n_processes - PROBE_MAX_PROCESSES, PROBE_MAX_PROCESSES);
        return 0;
}

/* Smoke-run checks of the probe's report: did the requested allocator serve malloc (in the
 * started program, and in its whole process tree: check_tree()), and did it accept its
 * configuration? Only a run that otherwise succeeded is judged here. */
static int check_probe(const Plan *p, Sample *s, int err) {
        const Allocator *a = &p->allocators[s->step->variant];
        const ProbeReport *pr = &s->probe->report;
        if (s->status != SAMPLE_OK && s->status != SAMPLE_EXIT && s->status != SAMPLE_SIGNAL)
                return 0;
        /* A library whose thread-locals are initial-exec cannot be loaded once the program runs:
         * jemalloc's default, which --disable-initial-exec-tls changes. */
        if (s->probe->forward_failed)
                return set_detail(
                        s, SAMPLE_FORWARD_REFUSED, "forward mode refused %s: %s%s", pr->forward_library,
                        pr->error,
                        strstr(pr->error, "static TLS block")
                                ? " (its thread-locals are initial-exec, which a library loaded after "
                                  "the start cannot have; build it without: jemalloc's "
                                  "--disable-initial-exec-tls)"
                                : "");
        if (s->status == SAMPLE_SIGNAL) { /* jemalloc's abort_conf:true aborts on what it rejects */
                _cleanup_free_ char *complaint =
                        find_complaint(err, plan_job(p, s->step->cell, s->step->variant)->envp);
                if (complaint)
                        return set_detail(s, SAMPLE_CONFIG_REJECTED,
                                          "the allocator rejected its configuration and killed the program "
                                          "(signal %d): %s",
                                          s->spawn.signal, complaint);
        }
        if (s->status != SAMPLE_OK)
                return 0;
        if (!s->probe->loaded) {
                if (!a->path)
                        return 0; /* nothing to prove for glibc: a static program has it built in */
                return set_detail(s, SAMPLE_PRELOAD_INEFFECTIVE,
                                  "the probe did not load, so neither did %s: LD_PRELOAD was ignored "
                                  "(static binary or secure-execution mode)",
                                  a->path);
        }
        /* A program that re-executed itself with another LD_PRELOAD than it was given runs, from
         * then on, under whatever that names: the identity above is its first image's. */
        const char *given = env_get(plan_job(p, s->step->cell, s->step->variant)->probe_envp, "LD_PRELOAD");
        if (s->probe->exec_seen &&
            (!pr->exec_preload_set || !given || strcmp(pr->exec_preload, given) != 0)) {
                /* and who serves malloc in what it executed, when not the variant's allocator */
                char served[PATH_MAX + 64] = "";
                if (!serves(a, pr->effective_path, pr->effective_family))
                        snprintf(served, sizeof(served), "; malloc is served by %s (%s)", pr->effective_path,
                                 probe_family_name(pr->effective_family));
                return set_detail(s, SAMPLE_PRELOAD_INEFFECTIVE,
                                  "the program re-executed %s with LD_PRELOAD=%s (it was given %s): what "
                                  "runs after that is not measured under %s%s",
                                  pr->exec_path, pr->exec_preload_set ? pr->exec_preload : "(unset)",
                                  given ? given : "(unset)", a->path ? a->path : "glibc", served);
        }
        if (!serves(a, pr->effective_path, pr->effective_family))
                return set_detail(s, SAMPLE_PRELOAD_INEFFECTIVE, "malloc is served by %s (%s), not by %s",
                                  pr->effective_path, probe_family_name(pr->effective_family),
                                  a->path ? a->path : "glibc");
        int r = check_tree(p, s, given);
        if (r < 0 || s->status != SAMPLE_OK)
                return r;
        _cleanup_free_ char *complaint =
                find_complaint(err, plan_job(p, s->step->cell, s->step->variant)->envp);
        if (complaint)
                return set_detail(s, SAMPLE_CONFIG_REJECTED, "the allocator rejected its configuration: %s",
                                  complaint);
        return 0;
}

/* Smoke-run check of the variant's allocator options: one its allocator (or the loader, for
 * GLIBC_TUNABLES) would ignore makes the variant config-rejected (runner/options.h). */
static int check_options(const Plan *p, const PlanJob *job, Sample *s) {
        _cleanup_free_ char *message = NULL;
        int r = options_unknown(&p->allocators[s->step->variant], job->envp, &message, NULL);
        return r <= 0 ? r : set_detail(s, SAMPLE_CONFIG_REJECTED, "%s", message);
}

/* The sample fails as no-output-file, with a detail that names the verify file: "<doing> PATH<why>:
 * <error>", or "PATH was not there ..." for ENOENT. Returns 0 or -ENOMEM. */
static int verify_failed(const PlanJob *job, Sample *s, const char *doing, const char *why, int error) {
        _cleanup_free_ char *full = NULL;
        if (plan_path_in(job->cwd, job->verify_path, &full) < 0)
                return -ENOMEM;
        if (error == -ENOENT)
                return set_detail(s, SAMPLE_NO_OUTPUT_FILE, "%s was not there after the child exited", full);
        return set_detail(s, SAMPLE_NO_OUTPUT_FILE, "%s %s%s: %s", doing, full, why, strerror(-error));
}

/* A mismatch's detail: where the outputs part, and that line of each, so that what varies can
 * be seen (and left out with verify_ignore). */
static int describe_mismatch(int oracle, int verified, bool filtered, Sample *s) {
        char want[81], got[81];
        uint64_t line, line_got;
        int r;
        if ((r = output_line_at(oracle, s->mismatch_offset, &line, want, sizeof(want))) < 0 ||
            (r = output_line_at(verified, s->mismatch_offset, &line_got, got, sizeof(got))) < 0)
                return r;
        _cleanup_free_ char *shown_want = text_shown_as(want, TEXT_ESCAPE_BACKSLASH),
                            *shown_got = text_shown_as(got, TEXT_ESCAPE_BACKSLASH);
        if (!shown_want || !shown_got)
                return -ENOMEM;
        /* With verify_ignore the positions are in what it left of the outputs. */
        return set_detail(s, SAMPLE_MISMATCH,
                          "%s at byte %llu (%llu bytes, reference %llu), line "
                          "%llu: the reference has '%s'%s, this run '%s'%s",
                          filtered ? "what verify_ignore left of the output differs from the reference's"
                                   : "output differs from the reference",
                          (unsigned long long) s->mismatch_offset, (unsigned long long) s->output.size,
                          (unsigned long long) s->reference_size, (unsigned long long) line, shown_want,
                          strlen(want) == sizeof(want) - 1 ? "..." : "", shown_got,
                          strlen(got) == sizeof(got) - 1 ? "..." : "");
}

/* The probe's reading of the memory at exit (smoke runs, and every sample of probe: counters) as
 * the sample's metrics, summed over the tree's processes that read it: exit_rss_bytes,
 * exit_pss_anon_bytes, exit_anon_huge_bytes (docs/probe.md). */
static int add_exit_memory(const ProbeResult *p, size_t reported, Sample *s, char **ret_why) {
        const struct {
                const char *name;
                uint64_t kib;
        } figures[] = {
                { "exit_rss_bytes", p->rss_kib },
                { "exit_pss_anon_bytes", p->pss_anon_kib },
                { "exit_anon_huge_bytes", p->anon_huge_kib },
        };
        for (size_t i = 0; i < ELEMENTSOF(figures); i++) {
                int r = output_metric_add_own(&s->metrics, &s->n_metrics, reported, figures[i].name,
                                              (double) figures[i].kib * 1024, "the probe's memory at exit",
                                              ret_why);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The allocator's own figures at the exit (smoke runs, every sample of probe: counters) as the
 * sample's metrics, alloc_allocated_bytes ... where the allocator gives them. */
static int add_allocator_figures(Sample *s, size_t reported, char **ret_why) {
        AllocatorFigures f;
        int r = 0;
        if (s->allocator_stats &&
            allocator_stats_figures(s->probe->report.stats_format, s->allocator_stats, &f) >= 0)
                for (size_t i = 0; i < N_ALLOCATOR_FIGURES && r >= 0; i++) {
                        char name[OUTPUT_METRIC_NAME_MAX + 1];
                        int64_t v = allocator_figure_of(&f, i);
                        snprintf(name, sizeof(name), "alloc_%s_bytes", allocator_figures[i].name);
                        if (v >= 0)
                                r = output_metric_add_own(&s->metrics, &s->n_metrics, reported, name,
                                                          (double) v, "the allocator's statistics", ret_why);
                }
        return r;
}

/* Judges a finished child: output size, metrics, then the digest and the comparison with the
 * oracle. Returns 0, or -errno for failures of this process. *ret_output is the fd holding what
 * was verified, for the caller to keep as the oracle. */
static int judge(const Plan *p, const PlanJob *job, int out, int err, int metrics, int oracle, Sample *s,
                 int *ret_output) {
        const Spec *spec = p->spec;
        int r;

        uint64_t out_size = 0, err_size = 0; /* 0 where fstat fails: the digest reports that */
        (void) output_size(out, &out_size);
        (void) output_size(err, &err_size);
        if (s->status == SAMPLE_OK && (out_size > spec->output_limit || err_size > spec->output_limit))
                s->status = SAMPLE_OUTPUT_LIMIT;
        if (s->probe && s->step->phase == PHASE_SMOKE && (r = check_probe(p, s, err)) < 0)
                return r;
        if (s->status == SAMPLE_OK && s->step->phase == PHASE_SMOKE && (r = check_options(p, job, s)) < 0)
                return r;

        if (s->status == SAMPLE_OK) {
                _cleanup_free_ char *why = NULL;
                r = output_parse_metrics(metrics, &s->metrics, &s->n_metrics, &s->marks, &s->n_marks, &why);
                size_t reported = s->n_metrics;
                for (size_t i = 0; r >= 0 && i < reported; i++)
                        if (spec_timeline_figure(s->metrics[i].name))
                                r = asprintf(&why,
                                             "the program reported %s: names mem_*_bytes are "
                                             "memory_timeline's figures",
                                             s->metrics[i].name) < 0
                                            ? -ENOMEM
                                            : -EEXIST;
                if (r >= 0 && s->timeline)
                        r = timeline_add_metrics(s->timeline, s->marks, s->n_marks, &s->metrics,
                                                 &s->n_metrics, &why);
                if (r >= 0 && s->probe && s->probe->memory_processes > 0)
                        r = add_exit_memory(s->probe, reported, s, &why);
                if (r >= 0 && s->probe)
                        r = add_allocator_figures(s, reported, &why);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && set_detail(s, SAMPLE_BAD_METRICS, "%s", why ? why : strerror(-r)) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 0; s->status == SAMPLE_OK && i < spec->n_metric_defs; i++) {
                const SpecMetricDef *d = &spec->metric_defs[i];
                _cleanup_free_ char *why = NULL;
                double v;
                r = d->pattern ? output_match_metric(d->from_stderr ? err : out, d->pattern, &v, &why) : 0;
                if (r > 0)
                        r = output_metric_set(&s->metrics, &s->n_metrics, d->name, v, &why);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && set_detail(s, SAMPLE_BAD_METRICS, "metric %s: %s", d->name,
                                        why ? why : strerror(-r)) < 0)
                        return -ENOMEM;
        }
        double primary;
        if (s->status == SAMPLE_OK && spec->metric == SPEC_METRIC_REPORTED &&
            !run_sample_metric(s, spec->metric_name, &primary)) {
                const SpecMetricDef *d = spec_metric_def(spec, spec->metric_name);
                char why[256];
                r = spec_timeline_figure(spec->metric_name)
                            ? set_detail(s, SAMPLE_MISSING_METRIC, "metric %s: %s", spec->metric_name,
                                         timeline_missing(s->timeline, s->marks, s->n_marks,
                                                          spec->metric_name, why, sizeof(why)))
                    : spec_probe_figure(spec->metric_name)
                            ? set_detail(
                                      s, SAMPLE_MISSING_METRIC,
                                      "metric %s: the probe did not read it at the exit: the program ended "
                                      "with _exit() or a signal, or its allocator does not give this figure "
                                      "(docs/probe.md)",
                                      spec->metric_name)
                    : d && d->pattern
                            ? set_detail(s, SAMPLE_MISSING_METRIC,
                                         "metric %s: no line of its %s matches '%s'", d->name,
                                         d->from_stderr ? "stderr" : "stdout", d->pattern)
                            : set_detail(
                                      s, SAMPLE_MISSING_METRIC,
                                      "metric %s: the program wrote no '%s VALUE' line to "
                                      "ALLOCLAB_METRICS_FD, and the spec's metrics: gives it no pattern to "
                                      "read from its output",
                                      spec->metric_name, spec->metric_name);
                if (r < 0)
                        return r;
        }

        _cleanup_close_ int verified = -1;
        if (spec->verify == SPEC_VERIFY_FILE) {
                if (s->status == SAMPLE_OK) {
                        verified = output_copy_file(job->verify_path, job->cwd, spec->output_limit);
                        if (verified == -ENOMEM)
                                return verified;
                        if (verified == -EFBIG)
                                s->status = SAMPLE_OUTPUT_LIMIT;
                        else if (verified < 0 && verify_failed(job, s, "cannot read", "", verified) < 0)
                                return -ENOMEM;
                }
        } else if ((verified = fcntl(out, F_DUPFD_CLOEXEC, 0)) < 0)
                return negative_errno();

        /* What varies from run to run (spec verify_ignore) is left out of what is compared. */
        if (verified >= 0 && s->status == SAMPLE_OK && spec->verify_ignore) {
                int kept = output_without_lines(verified, spec->verify_ignore, NULL);
                if (kept < 0)
                        return kept;
                safe_close(verified);
                verified = kept;
        }
        /* Past the limit only the size is kept: hashing it could take the host's memory. */
        if (verified >= 0 && (r = output_digest(verified, spec->output_limit, &s->output)) < 0) {
                if (r != -EFBIG)
                        return r;
                s->status = SAMPLE_OUTPUT_LIMIT;
                verified = safe_close(verified);
        }
        if (s->status == SAMPLE_OK && spec->verify != SPEC_VERIFY_NONE && oracle >= 0) {
                Digest ref;
                if ((r = output_digest(oracle, UINT64_MAX, &ref)) < 0)
                        return r;
                s->verified = true;
                if (strcmp(ref.hex, s->output.hex) != 0 || ref.size != s->output.size) {
                        s->status = SAMPLE_MISMATCH;
                        s->reference_size = ref.size;
                        if ((r = output_first_difference(oracle, verified, &s->mismatch_offset)) < 0 ||
                            (r = describe_mismatch(oracle, verified, spec->verify_ignore != NULL, s)) < 0)
                                return r;
                }
        }
        if (s->status != SAMPLE_OK)
                s->stderr_excerpt = output_excerpt(err);
        *ret_output = TAKE_FD(verified);
        return 0;
}

/* The hooks before a child: setup when the variant has not run in the cell yet (*set_up), then
 * prepare. Returns 0 to go on; 1 when one failed (s says which), -ECANCELED, -errno. */
static int before_child(const Plan *p, const PlanJob *job, bool *set_up, int cancel_fd, Sample *s) {
        static const SampleStatus failed[] = {
                [SPEC_HOOK_SETUP] = SAMPLE_SETUP_FAILED, [SPEC_HOOK_PREPARE] = SAMPLE_PREPARE_FAILED
        };
        for (SpecHook h = SPEC_HOOK_SETUP; h <= SPEC_HOOK_PREPARE; h++) {
                if (h == SPEC_HOOK_SETUP && *set_up)
                        continue;
                _cleanup_free_ char *why = NULL;
                int r = job->hooks[h].exe ? hook_run(p, job, h, cancel_fd, &why, &s->stderr_excerpt) : 0;
                if (r < 0)
                        return r;
                if (r > 0)
                        return set_detail(s, failed[h], "%s", why) < 0 ? -ENOMEM : 1;
                if (h == SPEC_HOOK_SETUP)
                        *set_up = true;
        }
        return 0;
}

/* The child's stdin (spec stdin), opened afresh for each child, into *ret_fd (-1: none). Returns
 * 0; 1 when it cannot be opened (s says why: a setup or prepare hook was to make it); -ENOMEM. */
static int open_stdin(const PlanJob *job, Sample *s, int *ret_fd) {
        *ret_fd = -1;
        if (!job->stdin_path)
                return 0;
        _cleanup_free_ char *full = NULL;
        if (plan_path_in(job->cwd, job->stdin_path, &full) < 0)
                return -ENOMEM;
        if ((*ret_fd = open(full, O_RDONLY | O_CLOEXEC | O_NOCTTY)) >= 0)
                return 0;
        int e = errno;
        return set_detail(s, SAMPLE_EXEC_FAILED, "stdin: cannot open %s: %s", full, strerror(e)) < 0
                       ? -ENOMEM
                       : 1;
}

/* After a child under callgrind: its count is the sample's instructions, and the kernel's counters
 * (of valgrind, not of the program) are not kept. */
static int take_callgrind_count(const Plan *p, Sample *s) {
        uint64_t instructions = 0;
        int r = callgrind_collect(p->callgrind, &instructions);
        s->spawn.counters = (CounterValues){};
        if (r >= 0) {
                s->spawn.counters.value[COUNTER_INSTRUCTIONS] = instructions;
                s->spawn.counters.have = 1u << COUNTER_INSTRUCTIONS;
                return 0;
        }
        if (r == -ENODATA && s->status == SAMPLE_OK)
                return set_detail(s, SAMPLE_MISSING_METRIC,
                                  "metric instructions: callgrind reported no count (valgrind could not run "
                                  "the program; its message is in the sample's stderr)");
        return r == -ENODATA ? 0 : r;
}

/* Runs one step. *set_up says whether the variant has run in this cell (its setup hook ran).
 * Returns 1 when the run was canceled (nothing recorded), 0 otherwise. */
static int run_step(const Plan *p, size_t index, int oracle, bool *set_up, int cancel_fd, Sample *s,
                    int *ret_output) {
        const PlanStep *step = &p->steps[index];
        const PlanJob *job = plan_job(p, step->cell, step->variant);
        /* Initialised before anything can fail: the caller frees *s on every return. */
        *s = (Sample){ .step_index = index, .step = step, .env_offset = -1 };
        _cleanup_close_ int out = output_memfd("alloclab-stdout");
        _cleanup_close_ int err = output_memfd("alloclab-stderr");
        _cleanup_close_ int metrics = output_memfd("alloclab-metrics");
        if (out < 0 || err < 0 || metrics < 0)
                return out < 0 ? out : err < 0 ? err : metrics;
        /* The output file must come from this child, not linger from the previous one: one
         * that cannot be removed (another user's file) fails the sample, and says which. */
        if (job->verify_path) {
                int r = output_remove_file(job->verify_path, job->cwd);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return verify_failed(job, s, "cannot remove", " before the child writes it", r);
        }

        bool calibrating = step->phase == PHASE_CALIBRATE;
        _cleanup_close_ int in = -1;
        if (!calibrating) {
                int r = before_child(p, job, set_up, cancel_fd, s);
                if (r == -ECANCELED)
                        return 1;
                if (r != 0)
                        return r < 0 ? r : 0;
                if ((r = open_stdin(job, s, &in)) != 0)
                        return r < 0 ? r : 0;
        }

        bool probed = plan_step_probed(p, step);
        _cleanup_close_ int report = probed ? probe_report_memfd(plan_step_probe_requests(p, step)) : -1;
        if (probed && report < 0)
                return report;

        _cleanup_strv_free_ char **shifted = NULL;
        int64_t offset = plan_env_offset(p, step);
        if (offset >= 0) {
                int q = env_offset(probed ? job->probe_envp : job->envp, (size_t) offset, &shifted);
                if (q < 0)
                        return q;
        }
        s->env_offset = offset;
        bool guarded = p->spec->quiet.enabled && step->phase == PHASE_SAMPLE;
        if (guarded) {
                QuietReading seen;
                s->quiet_checked = true;
                s->noisy = !quiet_wait(&p->spec->quiet, &seen, &s->quiet_wait_ns);
                s->cpu_some_avg10 = seen.cpu_some_avg10;
                s->load1 = seen.load1;
                if (s->noisy && p->spec->quiet.skip_busy) {
                        char other[48] = ""; /* read only where the spec limits it */
                        if (!isnan(seen.other_cpu))
                                snprintf(other, sizeof(other), ", other work %.2f CPUs", seen.other_cpu);
                        return set_detail(
                                s, SAMPLE_SKIPPED_BUSY,
                                "not run: still busy after %.1f s (CPU pressure %.1f%%, load %.2f%s)",
                                (double) s->quiet_wait_ns / 1e9, seen.cpu_some_avg10, seen.load1, other);
                }
        }
        /* Counting instructions by callgrind: the timed children run under it. */
        bool under_callgrind = p->callgrind && (step->phase == PHASE_WARMUP || step->phase == PHASE_SAMPLE);
        _cleanup_strv_free_ char **valgrind_argv =
                under_callgrind ? callgrind_argv(p->callgrind, job->exe, job->argv) : NULL;
        if (under_callgrind && !valgrind_argv)
                return -ENOMEM;
        /* memory_timeline: every run of the program but under callgrind (valgrind's memory is not its) */
        bool timeline = p->spec->memory_timeline_ns > 0 && !calibrating && !under_callgrind;
        _cleanup_close_ int readings = timeline ? output_memfd("alloclab-timeline") : -1;
        if (timeline && readings < 0)
                return readings;
        SpawnRequest req = {
                .exe = calibrating     ? p->calibrate_exe
                       : valgrind_argv ? p->callgrind->valgrind
                                       : job->exe,
                .argv = calibrating     ? p->calibrate_argv
                        : valgrind_argv ? valgrind_argv
                                        : job->argv,
                .envp = shifted  ? shifted
                        : probed ? job->probe_envp
                                 : job->envp,
                .cwd = job->cwd,
                .timeout_ns = p->spec->timeout_ns,
                .stdin_fd = in,
                .stdout_fd = out,
                .stderr_fd = err,
                .metrics_fd = metrics,
                .probe_fd = report,
                .cancel_fd = cancel_fd,
                .cpus = p->cpus.pinned ? &p->cpus.child : NULL,
                .runner_cpus = p->cpus.pinned ? &p->cpus.runner : NULL,
                .cgroup = p->cgroup,
                .cgroup_required = p->spec->memory_max || p->spec->pids_max,
                .timeline_period_ns = timeline ? p->spec->memory_timeline_ns : 0,
                .timeline_fd = readings,
        };
        if (req.cgroup_required && p->cgroup->children_fd < 0)
                return -EOPNOTSUPP; /* the spec's limits need the children's cgroup */
        MachineTimes before, after;
        if (guarded)
                machine_times_read(&before);
        int r = spawn_run(&req, &s->spawn);
        if (guarded)
                machine_times_read(&after);
        cgroup_children_empty(p->cgroup); /* for the next child: nothing may run into it */
        if (r < 0)
                return r;
        if (guarded) {
                OtherWork w;
                s->other_work_read = other_work_between(&before, &after, s->spawn.tree_cpu_us * 1000, &w);
                s->other_cpu_ns = w.cpu_ns;
                s->steal_ns = w.steal_ns;
                if (s->other_work_read && !other_work_within(&p->spec->quiet, &w))
                        s->noisy = true;
        }
        if (s->spawn.end == SPAWN_CANCELED)
                return 1;
        s->status = status_of(&s->spawn);
        /* The probe that counts every call (and tracks requested sizes under a lock) can make a
         * smoke run several times slower than the samples: a timeout there says so. */
        if (s->status == SAMPLE_TIMEOUT && probed && step->phase == PHASE_SMOKE &&
            (r = set_detail(s, SAMPLE_TIMEOUT,
                            "killed at the timeout after %.3f s in the smoke run, which counts every "
                            "allocator call under the probe and can take several times as long as a "
                            "sample (a threaded program most): a timeout: that fits the samples may not "
                            "fit it",
                            (double) s->spawn.wall_ns / 1e9)) < 0)
                return r;
        if (s->status == SAMPLE_TIMEOUT && under_callgrind &&
            (r = set_detail(s, SAMPLE_TIMEOUT,
                            "killed at the timeout after %.3f s under callgrind (metric: instructions "
                            "without a PMU), which runs a program tens of times slower than it runs: "
                            "raise timeout:",
                            (double) s->spawn.wall_ns / 1e9)) < 0)
                return r;
        if (under_callgrind && (r = take_callgrind_count(p, s)) < 0)
                return r;
        if (timeline) {
                if (!(s->timeline = calloc(1, sizeof(Timeline))))
                        return -ENOMEM;
                if ((r = timeline_read(readings, s->timeline)) < 0)
                        return r;
        }
        if (calibrating)
                return 0; /* the null workload: its output and metrics mean nothing */
        if (probed) {
                if (!(s->probe = calloc(1, sizeof(ProbeResult))))
                        return -ENOMEM;
                r = probe_report_decode(report, s->probe);
                if (r == -EBADMSG && s->status == SAMPLE_OK)
                        r = set_detail(s, SAMPLE_PROBE_FAILED,
                                       "the probe's report has another layout (version)");
                if (r >= 0)
                        r = probe_report_stats(report, s->probe, &s->allocator_stats);
                if (r < 0)
                        return r;
        }
        r = judge(p, job, out, err, metrics, oracle, s, ret_output);
        /* A smoke run's readings gave its figures; they are not kept: its report and the
         * allocator's statistics fill its record already (runner/stream.h's limit). */
        if (step->phase == PHASE_SMOKE)
                s->timeline = timeline_free(s->timeline);
        /* A timed sample keeps its allocator's figures (metrics), not their text (up to 128 KiB). */
        if (step->phase != PHASE_SMOKE) {
                free(s->allocator_stats);
                s->allocator_stats = NULL;
        }
        return r < 0 ? r : 0;
}

static void sample_done(Sample *s) {
        free(s->metrics);
        phase_marks_free(s->marks, s->n_marks);
        timeline_free(s->timeline);
        free(s->stderr_excerpt);
        free(s->detail);
        free(s->probe);
        free(s->allocator_stats);
        *s = (Sample){};
}

static int exclude(const Plan *p, const RunSink *sink, CellState *c, uint32_t cell, uint32_t v,
                   const char *reason, RunResult *res) {
        c->excluded[v] = true;
        res->n_excluded++;
        return sink->exclude ? sink->exclude(sink->userdata, p, cell, v, reason) : 0;
}

/* "<status>: <what happened>": exclusion reasons start with the status they stand for. */
static char *describe_failure(const Sample *s) {
        const char *status = sample_status_to_string(s->status);
        char *m = NULL;
        int r;
        char end[128];
        if (s->detail)
                r = asprintf(&m, "%s: %s", status, s->detail);
        else if (s->status == SAMPLE_SIGNAL || s->status == SAMPLE_EXIT || s->status == SAMPLE_EXEC_FAILED)
                r = asprintf(&m, "%s: %s", status, spawn_describe_end(&s->spawn, end, sizeof(end)));
        else if (s->status == SAMPLE_MISMATCH)
                r = asprintf(&m, "%s: output differs from the reference at byte %llu", status,
                             (unsigned long long) s->mismatch_offset);
        else
                r = asprintf(&m, "%s", status);
        return r < 0 ? NULL : m;
}

/* Excludes a variant from a cell. Without the reference's output nothing else in the cell can
 * be verified, so excluding the reference skips the whole cell (unless verify: none). */
static int exclude_variant(const Plan *p, const RunSink *sink, CellState *c, uint32_t cell, uint32_t v,
                           const char *reason, RunResult *res) {
        const Spec *spec = p->spec;
        int r = exclude(p, sink, c, cell, v, reason, res);
        if (r < 0 || v != spec->reference || spec->verify == SPEC_VERIFY_NONE)
                return r;
        _cleanup_free_ char *why = NULL;
        if (asprintf(&why,
                     "skipped: the reference variant %s is excluded from this cell, so outputs cannot be "
                     "verified",
                     spec->variants[v].name) < 0)
                return -ENOMEM;
        for (uint32_t o = 0; o < p->n_variants; o++)
                if (!c->excluded[o] && (r = exclude(p, sink, c, cell, o, why, res)) < 0)
                        return r;
        return 0;
}

/* After a smoke run: keep the oracle, or exclude what cannot be measured. */
static int after_smoke(const Plan *p, const RunSink *sink, CellState *c, const Sample *s, int *output,
                       RunResult *res) {
        uint32_t cell = s->step->cell, v = s->step->variant;
        _cleanup_free_ char *reason = NULL;
        /* callgrind runs a program's threads one at a time: its count is of another program. */
        if (s->status == SAMPLE_OK && p->callgrind && !p->spec->callgrind_threads_accepted && s->probe &&
            s->probe->counted && s->probe->threads_in_one_process > 1) {
                if (asprintf(
                            &reason,
                            "refused: metric instructions is counted by callgrind here (no PMU), which runs "
                            "threads one at a time, and a process of the smoke run's tree ran %u threads "
                            "that called the allocator: their contention and the allocator's per-thread "
                            "caches would not be measured (callgrind_threads: accept measures it anyway)",
                            s->probe->threads_in_one_process) < 0)
                        return -ENOMEM;
                return exclude_variant(p, sink, c, cell, v, reason, res);
        }
        if (s->status == SAMPLE_OK) {
                if (v == p->spec->reference)
                        c->oracle_fd = TAKE_FD(*output);
                return 0;
        }
        reason = describe_failure(s);
        if (!reason)
                return -ENOMEM;
        return exclude_variant(p, sink, c, cell, v, reason, res);
}

/* Before a smoke run of a variant: was it built, and if it preloads something, can the preload
 * take effect at all? Returns 1 when the variant was excluded. */
static int before_smoke(const Plan *p, const RunSink *sink, CellState *c, const PlanStep *step,
                        RunResult *res) {
        const SpecVariant *v = &p->spec->variants[step->variant];
        const Allocator *a = &p->allocators[step->variant];
        const PlanJob *job = plan_job(p, step->cell, step->variant);
        const Build *b = p->builds ? &p->builds[step->variant] : NULL;
        _cleanup_free_ char *exe = NULL, *why = NULL;
        if (b && b->failure) {
                if (asprintf(&why, "build-failed: %s", b->failure) < 0)
                        return -ENOMEM;
                int r = exclude_variant(p, sink, c, step->cell, step->variant, why, res);
                return r < 0 ? r : 1;
        }
        if (!a->path)
                return 0;
        if (plan_path_in(job->cwd, job->exe, &exe) < 0)
                return -ENOMEM;
        /* A forward-mode library is checked by the probe itself, under its prefix. */
        int r = preflight_check(exe, v->forward_prefix ? NULL : a->path, &why);
        if (r <= 0)
                return r == -ENOMEM ? r : 0; /* an unreadable file is for the smoke run to meet */
        _cleanup_free_ char *reason = NULL;
        if (asprintf(&reason, "preload-ineffective: pre-flight: %s", why) < 0)
                return -ENOMEM;
        r = exclude_variant(p, sink, c, step->cell, step->variant, reason, res);
        return r < 0 ? r : 1;
}

/* The cleanup hook of every variant that ran in the cell. One that fails excludes its variant
 * from the cell (its samples stay recorded): what ran after an unclean teardown is suspect. */
static int clean_up_cell(const Plan *p, const RunSink *sink, CellState *c, uint32_t cell, RunResult *res) {
        for (uint32_t v = 0; v < p->n_variants; v++) {
                const PlanJob *job = plan_job(p, cell, v);
                if (!c->set_up[v] || !job->hooks[SPEC_HOOK_CLEANUP].exe)
                        continue;
                c->set_up[v] = false;
                _cleanup_free_ char *why = NULL, *output = NULL, *reason = NULL;
                int r = hook_run(p, job, SPEC_HOOK_CLEANUP, -1, &why, &output);
                if (r <= 0 || c->excluded[v]) {
                        if (r < 0)
                                return r;
                        continue;
                }
                if (asprintf(&reason, "cleanup-failed: %s%s%.*s", why, output ? ": " : "",
                             output ? (int) strcspn(output, "\n") : 0, output ? output : "") < 0)
                        return -ENOMEM;
                if ((r = exclude(p, sink, c, cell, v, reason, res)) < 0)
                        return r;
        }
        return 0;
}

void run_prior_done(RunPrior *prior) {
        free(prior->done);
        free(prior->excluded);
        free(prior->values);
        *prior = (RunPrior){};
}

/* Starting a cell of a resumed run: its exclusions and already measured values. */
static int enter_cell(const Plan *p, const RunPrior *prior, uint32_t c, CellState *cell) {
        if (!prior)
                return 0;
        for (uint32_t v = 0; v < p->n_variants; v++)
                cell->excluded[v] = prior->excluded[(size_t) c * p->n_variants + v];
        for (size_t i = 0; i < prior->n_values; i++) {
                const PriorValue *pv = &prior->values[i];
                if (pv->cell != c)
                        continue;
                int r = series_add(cell, pv->variant, pv->metric, pv->value);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Whether cell c of a resumed run still has steps to run. */
static bool cell_has_work(const Plan *p, const RunPrior *prior, uint32_t c) {
        for (size_t i = 0; i < p->n_steps; i++)
                if (p->steps[i].cell == c && !prior->done[i] &&
                    !prior->excluded[(size_t) c * p->n_variants + p->steps[i].variant])
                        return true;
        return false;
}

int run_execute(const Plan *p, const RunPrior *prior, const RunSink *sink, int cancel_fd, RunResult *ret) {
        /* Crashing children must not spend seconds writing cores into the measurement. */
        struct rlimit no_core = { 0, 0 };
        setrlimit(RLIMIT_CORE, &no_core);

        RunResult res = { .end = RUN_COMPLETED };
        _cleanup_(cell_state_reset) CellState cell = { .oracle_fd = -1 };
        int r = 0;

        bool cell_work = true;     /* resumed: whether this cell has steps left */
        uint32_t current_cell = 0; /* the cell the loop is in */
        for (size_t i = 0; i < p->n_steps && r >= 0; i++) {
                const PlanStep *step = &p->steps[i];
                if (i > 0 && p->steps[i - 1].cell != step->cell) {
                        uint32_t left = p->steps[i - 1].cell;
                        if ((r = clean_up_cell(p, sink, &cell, left, &res)) < 0 ||
                            (r = emit_cell_stats(p, sink, left, &cell)) < 0)
                                break;
                        cell_state_reset(&cell);
                }
                if (i == 0 || p->steps[i - 1].cell != step->cell) {
                        current_cell = step->cell;
                        if ((r = enter_cell(p, prior, step->cell, &cell)) < 0)
                                break;
                        cell_work = !prior || cell_has_work(p, prior, step->cell);
                }
                /* samples: auto: before each sample round past the minimum, is the cell done? */
                if (step->phase == PHASE_SAMPLE && p->samples_auto && !cell.precise &&
                    step->round >= run_auto_min_rounds(p) && step->round >= cell.judged) {
                        cell.judged = step->round + 1;
                        cell.precise = precise_enough(p, &cell);
                }
                if (cell.excluded[step->variant] || (step->phase == PHASE_SAMPLE && cell.precise))
                        continue;
                /* Resuming: a recorded step is not run again, except the reference's smoke run
                 * when the cell still needs its output as the oracle. */
                bool replay = false;
                if (prior && prior->done[i]) {
                        replay = cell_work && step->phase == PHASE_SMOKE &&
                                 step->variant == p->spec->reference && p->spec->verify != SPEC_VERIFY_NONE;
                        if (!replay)
                                continue;
                }
                if (step->phase == PHASE_SMOKE && !replay) {
                        r = before_smoke(p, sink, &cell, step, &res);
                        if (r < 0)
                                break;
                        if (r > 0) {
                                r = 0;
                                continue;
                        }
                }
                /* A stop request that arrived while we were busy between children: honour it
                 * before starting another one. */
                if (cancel_fd >= 0 &&
                    poll(&(struct pollfd){ .fd = cancel_fd, .events = POLLIN }, 1, 0) > 0) {
                        res.end = RUN_CANCELED;
                        break;
                }

                if (sink->step_begin)
                        sink->step_begin(sink->userdata, p, i);
                Sample s = {};
                _cleanup_close_ int output = -1;
                r = run_step(p, i, cell.oracle_fd, &cell.set_up[step->variant], cancel_fd, &s, &output);
                if (r == 1) {
                        res.end = RUN_CANCELED;
                        sample_done(&s);
                        r = 0;
                        break;
                }
                if (r < 0) {
                        sample_done(&s);
                        break;
                }
                if (replay) {
                        /* Only the oracle is wanted; the sample was recorded the first time. */
                        if (s.status == SAMPLE_OK)
                                cell.oracle_fd = TAKE_FD(output);
                        else
                                r = exclude_variant(
                                        p, sink, &cell, step->cell, step->variant,
                                        "skipped: the reference's output could not be reproduced on resume",
                                        &res);
                        sample_done(&s);
                        continue;
                }
                res.n_runs++;
                if (s.status != SAMPLE_OK)
                        res.n_failures++;
                r = sink->sample ? sink->sample(sink->userdata, p, &s) : 0;
                /* A setup that fails leaves the cell to the others, as a failed smoke run does. */
                if (r >= 0 && (step->phase == PHASE_SMOKE || s.status == SAMPLE_SETUP_FAILED))
                        r = after_smoke(p, sink, &cell, &s, &output, &res);
                if (r >= 0 && step->phase == PHASE_SAMPLE && s.status == SAMPLE_OK)
                        r = collect(&cell, &s);
                bool stop = s.status != SAMPLE_OK && p->spec->on_failure == SPEC_ON_FAILURE_STOP;
                sample_done(&s);
                if (r >= 0 && stop) {
                        res.end = RUN_STOPPED;
                        break;
                }
        }
        /* Whatever ended the run, the cell it was in is cleaned up (a failure of this process
         * keeps its own error). */
        int q = clean_up_cell(p, sink, &cell, current_cell, &res);
        r = r < 0 ? r : q;
        if (r >= 0 && res.end == RUN_COMPLETED && p->n_steps > 0)
                r = emit_cell_stats(p, sink, p->steps[p->n_steps - 1].cell, &cell);
        *ret = res;
        return r < 0 ? r : 0;
}
