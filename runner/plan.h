/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "configs/spec.h"
#include "runner/cgroup.h"
#include "runner/cpus.h"
#include "runner/allocator.h"
#include "runner/build.h"
#include "runner/callgrind.h"

/*
 * A Plan is a Spec made concrete for this machine: allocators resolved to files, every
 * (cell, variant) job prepared down to its argv, envp and cwd, and the ordered list of steps
 * (smoke, warmup and timed runs). Building it does all the work that can fail before the first
 * child starts; executing it (runner/run.c) only spawns and measures.
 */

#define PLAN_MAX_JOBS  65536   /* cells x variants */
#define PLAN_MAX_STEPS 1000000 /* child processes in one run */

typedef enum Phase {
        PHASE_SMOKE,  /* once per (cell, variant) before anything is timed; yields the oracle */
        PHASE_WARMUP, /* timed and verified, not part of the statistics */
        PHASE_SAMPLE,
        PHASE_CALIBRATE, /* spec calibrate: the null workload under a variant, before cell 0 */
        _PHASE_MAX,
} Phase;

const char *phase_to_string(Phase p);

/* A spec hook made concrete for one job: argv expanded, argv[0] resolved like the command's. */
typedef struct PlanHook {
        char *exe; /* NULL: the spec has no such hook */
        char **argv;
} PlanHook;

typedef struct PlanJob {
        char *exe; /* argv[0] resolved against the child's PATH */
        char **argv;
        char **envp;       /* for runs without the probe */
        char **probe_envp; /* the same with the probe preloaded first; NULL without a probe */
        char *cwd;         /* NULL: alloclab's cwd */
        char *verify_path; /* SPEC_VERIFY_FILE: output file, relative to cwd */
        char *stdin_path;  /* spec stdin: the children's fd 0, relative to cwd; NULL: /dev/null */
        PlanHook hooks[_SPEC_HOOK_MAX];
} PlanJob;

typedef struct PlanStep {
        uint32_t cell;
        uint32_t variant;
        uint32_t round; /* 0-based, within its phase */
        Phase phase;
} PlanStep;

typedef struct Plan {
        const Spec *spec; /* borrowed; must outlive the plan */
        size_t n_cells;
        size_t n_variants;
        Allocator *allocators; /* per variant */
        PlanJob *jobs;         /* n_cells x n_variants, cell-major */
        PlanStep *steps;       /* grouped by cell, in execution order */
        size_t n_steps;
        uint64_t seed; /* shuffles of SPEC_ORDER_RANDOMIZED */
        /* The counts this run uses: the spec's, or PlanOptions' (a loaded Spec is never written).
         * With samples_auto, samples is the most per cell and variant (spec samples: auto). */
        unsigned samples, warmup;
        bool samples_auto;
        char *probe_path;  /* liballoclab-probe.so, or NULL when the spec says probe: never */
        CpuPlacement cpus; /* spec cpus */
        /* metric instructions without a PMU: timed children run under callgrind (runner/callgrind.h);
         * else NULL. Freed by plan_free(). */
        Callgrind *callgrind;
        CgroupRun *cgroup;   /* where children are created (changes as it runs); removed by plan_free() */
        char *calibrate_exe; /* spec calibrate: the null workload, resolved like a command */
        char **calibrate_argv;
        char (*program_sha256)[SHA256_HEX_SIZE]; /* per variant, by plan_hash_programs(); or NULL */
        /* Per variant, what was built from source (runner/build.h; source NULL where nothing
         * was); NULL when no variant builds. A variant whose build failed is excluded from every
         * cell before its smoke run, with "build-failed: " and the failure. */
        Build *builds;
} Plan;

typedef struct PlanOptions {
        char *const *caller_env; /* children inherit their whitelisted variables from it */
        uint64_t seed;
        /* The counts instead of the spec's: samples (0: the spec's; with samples_fixed a fixed
         * count even for samples: auto, as `run --samples N` asks, else the most under auto, as
         * a resumed run stored it) and warmup (when warmup_set). */
        unsigned samples, warmup;
        bool samples_fixed, warmup_set;
        const char *probe_path; /* liballoclab-probe.so; needed unless the spec says probe: never */
        /* The directory a relative command, cwd or verify file is relative to; NULL: this
         * process's cwd. The daemon plans in the submitter's directory, not its own. */
        const char *base_dir;
        /* Leave the children's cgroup to plan_open_cgroup(): the daemon plans with the submitter's
         * file permissions, and makes the cgroup with its own. */
        bool defer_cgroup;
        /* A check only: allocators are found but not identified (no sha256, no version), and
         * a variant's jobs after the first cell are prepared only where the matrix changes
         * them (the others are left zero). */
        bool check_only;
        /* Build what variants build from source (runner/build.h), telling on_build before and
         * after each (may be NULL); with check_only, find their trees and revisions only.
         * Without it such a variant is a problem of the plan: the daemon does not build yet. */
        bool build;
        void (*on_build)(void *userdata, const SpecVariant *v, const Build *b, bool done);
        void *userdata;
        /* Per variant, its build as the daemon's builder made it (moved into the plan), instead
         * of building here; NULL: none. */
        BuildOutcome *built;
        /* Lookups (allocators, programs, directories, the probe) made for plans just before
         * with the same file identity, to answer from and add to; NULL: none. */
        Memo *memo;
} PlanOptions;

/*
 * Builds a plan. Returns 0; -ENOENT when an allocator, a command or the probe is missing,
 * -E2BIG past a PLAN_MAX_* limit, -ENOMEM; on failure *ret_message (if non-NULL) explains it:
 * every problem found with the allocators, programs, directories and files the spec names, one
 * per line (the error returned is the first one's).
 */
int plan_new(const Spec *spec, const PlanOptions *o, Plan **ret, char **ret_message);

/* Makes the run's cgroup for the children and sets the spec's limits there (plan_new() does it
 * unless told to defer). Returns 0, -EOPNOTSUPP when a limit cannot be enforced (with
 * *ret_message), -errno. */
int plan_open_cgroup(Plan *p, char **ret_message);

/* A cgroup for what runs before a plan (the daemon's builds from source) with spec's limits,
 * as plan_open_cgroup() makes the run's: *ret to close with cgroup_run_close(). Returns as
 * plan_open_cgroup(). */
int plan_cgroup_for(const Spec *spec, CgroupRun *ret, char **ret_message);

/* The same check without a plan, for a spec that is not run yet (a submission): a run's cgroup is
 * made, its limits set and removed. *ret_pids_v1 says whether pids_max needs the v1 hierarchy.
 * Returns as plan_open_cgroup(). */
int plan_check_limits(const Spec *spec, bool *ret_pids_v1, char **ret_message);

/* The sha256 of each variant's program, into p->program_sha256 ("unknown" where it cannot be
 * read). Reads the files with this process's file permissions. Returns 0 or -ENOMEM. */
int plan_hash_programs(Plan *p);

/* Whether a step runs with the probe: smoke runs unless probe: never, every run with probe:
 * always or counters, and every run of a forward-mode variant (the probe is its bridge). */
bool plan_step_probed(const Plan *p, const PlanStep *step);

/* What a probed step asks of the probe (PROBE_REQUEST_*): everything in a smoke run, counters in
 * every run with probe: counters, nothing else in a timed run (its report still names the
 * allocator and the process tree). */
uint32_t plan_step_probe_requests(const Plan *p, const PlanStep *step);

/* spec env_offset: random: the bytes added to every environment in this step's round (the same
 * for every variant and cell of a round of a timed phase, drawn from the run's seed), or -1. */
int64_t plan_env_offset(const Plan *p, const PlanStep *step);

/* How many rounds a phase has for each (cell, variant): for progress lines ("sample 3/10"). */
unsigned plan_phase_rounds(const Plan *p, Phase phase);

Plan *plan_free(Plan *p);
static inline void plan_freep(Plan **p) {
        plan_free(*p);
}

static inline const PlanJob *plan_job(const Plan *p, size_t cell, size_t variant) {
        return &p->jobs[cell * p->n_variants + variant];
}

/* Value of parameter `param` in cell `cell` (cells enumerate the matrix, last parameter fastest). */
const char *plan_cell_value(const Plan *p, size_t cell, size_t param);

/* "n=100000 width=8" (or "-" without parameters), with control characters, bidirectional
 * controls and backslashes in values escaped (\x1b, \u{202e}, \\): a label is shown on
 * terminals and in pages. Returns a new string or NULL. */
char *plan_cell_label(const Plan *p, size_t cell);

/* The executable a child will run: a name with '/' is taken as is (relative to cwd, checked
 * there), otherwise searched in envp's PATH, like execvp() would, but ahead of time. Returns 0
 * and a new string, -ENOENT or another -errno, -ENOMEM. */
int plan_resolve_exe(const char *name, char *const *envp, const char *cwd, char **ret);

/* name as a child in dir sees it: name itself when absolute or without dir, else dir/name.
 * Returns 0 and a new string or -ENOMEM. */
int plan_path_in(const char *dir, const char *name, char **ret);
