/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "configs/diag.h"
#include "configs/schedule.h"
#include "configs/yamltree.h"

/*
 * The experiment spec: what to run, over which parameters, under which allocators, and how
 * to measure and verify it. A loaded Spec is fully validated; consumers never re-check it, and
 * never write it (what a run changes, such as its sample count, goes to PlanOptions).
 */

/* Hard limits on what a spec may ask for; each has its own error message. */
#define SPEC_MAX_PARAMS                   16
#define SPEC_MAX_PARAM_VALUES             256
#define SPEC_MAX_CELLS                    4096
#define SPEC_MAX_VARIANTS                 64
#define SPEC_MAX_SAMPLES                  10000
#define SPEC_AUTO_MAX_SAMPLES             50 /* samples: auto */
#define SPEC_MAX_WARMUP                   1000
#define SPEC_MAX_ARGS                     4096
#define SPEC_MAX_ENV                      256
/* Arguments and environment variables of every (cell, variant) job together: what a plan holds
 * in memory (the largest matrix with the most variables and arguments was 5.5 GB). */
#define SPEC_MAX_PLAN_WORDS               (1024 * 1024)
#define SPEC_MAX_TIMEOUT_NS               (24ULL * 3600 * 1000000000) /* one day */
#define SPEC_MIN_TIMELINE_PERIOD_NS       1000000ULL                  /* memory_timeline: 1ms */
#define SPEC_MAX_TIMELINE_PERIOD_NS       (60ULL * 1000000000)        /* to 60s */
#define SPEC_DEFAULT_TIMEOUT_NS           (600ULL * 1000000000)
#define SPEC_DEFAULT_OUTPUT_LIMIT         (64ULL * 1024 * 1024)
#define SPEC_MAX_OUTPUT_LIMIT             (1024ULL * 1024 * 1024)
#define SPEC_MIN_MEMORY_MAX               (1024ULL * 1024) /* below, not even ld.so fits */
#define SPEC_MAX_MEMORY_MAX               (1ULL << 50)
#define SPEC_MAX_PIDS_MAX                 4194304 /* the kernel's pid_max limit */
#define SPEC_DEFAULT_REGRESSION_THRESHOLD 0.10
#define SPEC_DEFAULT_MIN_EFFECT           0.02 /* docs/analysis.md */
#define SPEC_DEFAULT_ALPHA                0.01

typedef enum SpecOrder {
        SPEC_ORDER_INTERLEAVED, /* each round visits every variant once, in spec order */
        SPEC_ORDER_RANDOMIZED,  /* each round in a seeded shuffle */
        SPEC_ORDER_BLOCKED,     /* all rounds of one variant, then the next */
        _SPEC_ORDER_MAX,
} SpecOrder;

typedef enum SpecVerify {
        SPEC_VERIFY_STDOUT,
        SPEC_VERIFY_NONE,
        SPEC_VERIFY_FILE,
        _SPEC_VERIFY_MAX,
} SpecVerify;

typedef enum SpecMetric {
        SPEC_METRIC_WALL,
        SPEC_METRIC_USER,
        SPEC_METRIC_SYS,
        SPEC_METRIC_MAXRSS,
        /* the kernel's event counters of the tree (runner/counters.h), in their order */
        SPEC_METRIC_PAGE_FAULTS,
        SPEC_METRIC_CONTEXT_SWITCHES,
        SPEC_METRIC_CPU_MIGRATIONS,
        SPEC_METRIC_CYCLES,
        SPEC_METRIC_INSTRUCTIONS,
        SPEC_METRIC_DTLB_LOAD_MISSES,
        SPEC_METRIC_CACHE_MISSES,
        SPEC_METRIC_REPORTED,
        _SPEC_METRIC_MAX,
} SpecMetric;

typedef enum SpecOnFailure {
        SPEC_ON_FAILURE_CONTINUE, /* record it, exclude the variant where the smoke run fails */
        SPEC_ON_FAILURE_STOP,     /* record it and stop the run cleanly */
        _SPEC_ON_FAILURE_MAX,
} SpecOnFailure;

typedef enum SpecProbe {
        SPEC_PROBE_SMOKE,    /* the probe checks every smoke run; timed runs go without it */
        SPEC_PROBE_ALWAYS,   /* every run carries the probe: each sample names its allocator */
        SPEC_PROBE_NEVER,    /* no probe at all (preloads are not verified) */
        SPEC_PROBE_COUNTERS, /* as always, and every call of every sample is counted */
        _SPEC_PROBE_MAX,
} SpecProbe;

typedef enum SpecOutliers {
        SPEC_OUTLIERS_FLAG,    /* outliers are counted and listed, and kept in every figure */
        SPEC_OUTLIERS_EXCLUDE, /* ... and left out of the statistics and verdicts shown */
        _SPEC_OUTLIERS_MAX,
} SpecOutliers;

/* How many comparisons at once keep their error rate (stats/compare.h has the methods). */
typedef enum SpecCorrection {
        SPEC_CORRECTION_HOLM, /* the chance of any false verdict among a run's is at most alpha */
        SPEC_CORRECTION_BH,   /* Benjamini-Hochberg: false verdicts at most alpha of the verdicts */
        SPEC_CORRECTION_NONE, /* alpha per comparison */
        _SPEC_CORRECTION_MAX,
} SpecCorrection;

#define SPEC_MAX_CPU 1023 /* highest CPU number a spec may name (CPU_SETSIZE - 1) */

typedef enum SpecCpus {
        SPEC_CPUS_NONE, /* children run wherever the scheduler puts them */
        SPEC_CPUS_AUTO, /* one CPU away from CPU 0 (and its SMT siblings) for the children */
        SPEC_CPUS_LIST, /* the CPUs listed */
} SpecCpus;

/* The quiet-machine guard (runner/quiet.h): before each sample, wait (at most max_wait_ns) until
 * the machine is at most this busy; a sample that starts busier, or that other work shared the
 * machine with, is marked noisy. A limit < 0 is not checked. */
typedef struct SpecQuiet {
        bool enabled;
        double max_other_cpu;      /* CPUs of other work: processes not the run's, and steal */
        double max_cpu_some_avg10; /* percent, from /proc/pressure/cpu */
        double max_load1;          /* from /proc/loadavg */
        uint64_t max_wait_ns;
        bool skip_busy; /* on_busy: skip: a sample the machine is still too busy for is not run */
} SpecQuiet;

#define SPEC_DEFAULT_QUIET_WAIT_NS   (10ULL * 1000000000)
/* Without a quiet: key the guard still marks a sample noisy when other work took more than this
 * many CPUs while it ran, but never waits: a default must not stretch runs on a shared machine. */
#define SPEC_DEFAULT_QUIET_OTHER_CPU 0.25

/* Commands run around the measured ones, never timed (spec keys setup, prepare, cleanup). */
typedef enum SpecHook {
        SPEC_HOOK_SETUP,   /* before a variant's first run in a cell */
        SPEC_HOOK_PREPARE, /* before each of its runs */
        SPEC_HOOK_CLEANUP, /* after the cell's last run, for each variant set up */
        _SPEC_HOOK_MAX,
} SpecHook;

typedef struct SpecParam {
        char *name;
        char **values; /* strv */
        size_t n_values;
} SpecParam;

/* Where a value was written (1-based; line 0: nowhere), for messages about what it names. */
typedef struct SpecPosition {
        unsigned line, column;
} SpecPosition;

/* A metric the spec defines (key metrics): how its values are read and judged. */
#define SPEC_MAX_METRIC_DEFS   64
#define SPEC_MAX_VERIFY_IGNORE 16
#define SPEC_MAX_UNIT          32 /* bytes of a unit's text */
typedef struct SpecMetricDef {
        char *name;
        /* A POSIX extended regular expression matched line by line against the child's stdout
         * (or stderr); the value is its first group's text (or the whole match without a group)
         * at the last line that matches. NULL: the child reports it on ALLOCLAB_METRICS_FD. */
        char *pattern;
        bool from_stderr;
        char *unit;            /* shown after its values ("ops/s"), or NULL */
        bool higher_is_better; /* better: higher (throughput); default lower (a cost) */
        SpecPosition pattern_at;
} SpecMetricDef;

/* An allocator built from source (a variant's build key): the tree at a revision, built by
 * commands in alloclab's cache (runner/build.h); the file the build makes is preloaded. */
typedef struct SpecBuild {
        char *source; /* a git repository or a plain directory; relative to the base directory */
        char *rev;    /* commit, tag or branch; NULL: the tree as it is, uncommitted changes too */
        char *family; /* the catalog allocator whose build commands and output are the defaults */
        /* Shell command lines run in order in a copy of the tree (sh -c); NULL: the family's,
         * else what the tree has (CMakeLists.txt, configure, autogen.sh or a Makefile). */
        char **commands;
        /* The built file to preload, relative to the tree; NULL: the family's, else the one
         * shared library the build made. */
        char *output;
        SpecPosition at, source_at, rev_at; /* of the build key's value, its source and rev */
} SpecBuild;

typedef struct SpecVariant {
        char *name;
        char *preload;         /* catalog name or absolute path; NULL: no preload */
        char **env;            /* strv of KEY=VALUE, templates unexpanded */
        char **command;        /* strv or NULL: the experiment's command */
        char *cwd;             /* or NULL: the experiment's cwd */
        char *forward_library; /* forward mode: the probe loads this library privately ... */
        char *forward_prefix;  /* ... and forwards the malloc family to <prefix>malloc etc. */
        SpecBuild build;       /* build.source NULL: nothing is built */
        bool is_aa;            /* the baseline's A/A copy that aa_check adds */
        /* What names a file: the preload (else the variant's name), the forward library, the
         * command and the cwd (the variant's own, else the experiment's); its own env, if any. */
        SpecPosition preload_at, forward_at, command_at, cwd_at, env_at;
        SpecPosition *env_var_at; /* where each of env's variables is written, in env's order */
} SpecVariant;

typedef struct Spec {
        char *path;   /* as given by the user */
        char *source; /* verbatim YAML, stored with every run */
        size_t source_size;

        char *experiment;
        char *description;
        char **command; /* strv, templates unexpanded */
        char *cwd;
        char **hooks[_SPEC_HOOK_MAX]; /* strv each (templates unexpanded), or NULL */
        SpecPosition hook_at[_SPEC_HOOK_MAX];
        char *stdin_path; /* the children's standard input (relative to cwd, templated), or NULL */
        SpecPosition stdin_at;
        SpecParam *params;
        size_t n_params;
        char **env;
        SpecPosition *env_var_at; /* where each of env's variables is written, in env's order */
        SpecVariant *variants;
        size_t n_variants;
        size_t baseline;  /* index into variants */
        size_t reference; /* index into variants */

        unsigned samples; /* with samples_auto: the most per cell and variant */
        /* samples: auto (or {min, max}): a cell's sample rounds stop once every variant's ratio
         * interval is within min_effect, after at least samples_min rounds (0: the fewest that
         * can give a verdict, which the runner knows). */
        bool samples_auto;
        unsigned samples_min;
        unsigned warmup;
        SpecOrder order;
        bool has_seed;
        uint64_t seed;
        uint64_t timeout_ns;
        SpecVerify verify;
        char *verify_path; /* SPEC_VERIFY_FILE */
        /* Lines of the verified output (POSIX EREs, strv) left out of the comparison: what
         * varies from run to run (timestamps, rates); NULL: none. */
        char **verify_ignore;
        SpecMetric metric;
        char *metric_name; /* SPEC_METRIC_REPORTED */
        SpecPosition metric_at;
        SpecMetricDef *metric_defs;
        size_t n_metric_defs;
        SpecOnFailure on_failure;
        uint64_t output_limit;
        SpecProbe probe;
        /* Programs of the measured tree (base names) whose allocator does not matter: the proof
         * that the variant's allocator served malloc leaves them out; "*": the whole tree but the
         * started program. NULL: none. */
        char **preload_ignore;
        bool has_schedule; /* the daemon runs it by itself (daemon issue); `alloclab run` ignores it */
        Schedule schedule;
        char *schedule_text;         /* as written, for display */
        double regression_threshold; /* relative change of a median that a scheduled run reports */
        bool history_ratios;         /* the daemon's check follows within-run ratios (history --relative) */
        double min_effect;           /* smallest relative change a verdict calls a difference */
        double alpha;                /* significance level of the verdicts' rank tests */
        SpecCorrection correction;   /* over a run's comparisons (cells x variants) */
        SpecOutliers outliers;
        bool aa_check; /* the baseline runs twice, the second time as variant "<baseline>-aa" */
        SpecQuiet quiet;
        bool calibrate;           /* time a null workload under each variant: start-up cost */
        char **calibrate_command; /* that workload (strv, literal), or NULL for "true" */
        uint64_t memory_max;      /* cgroup memory.max of each child's tree, bytes; 0: none */
        uint64_t pids_max;        /* cgroup pids.max of each child's tree; 0: none */
        /* memory_timeline: read each sample's tree's memory this often (runner/timeline.h); 0: not */
        uint64_t memory_timeline_ns;
        bool env_offset_random; /* env_offset: random: one random stack shift per round */
        /* callgrind_threads: accept: metric instructions counted by callgrind measures a program
         * that runs several threads (which callgrind runs one at a time) rather than refusing it */
        bool callgrind_threads_accepted;
        SpecCpus cpus;
        uint16_t *cpu_list; /* SPEC_CPUS_LIST: the CPU numbers, n_cpu_list of them */
        size_t n_cpu_list;
        bool resume; /* the daemon continues this spec's run after a crash instead of dropping it */
} Spec;

/* Where the spec writes variable name of variant v's environment: in the variant's own env,
 * else in the experiment's; line 0 when neither sets it (it comes from the caller, say). */
SpecPosition spec_env_var_at(const Spec *s, size_t v, const char *name);

Spec *spec_free(Spec *s);
static inline void spec_freep(Spec **s) {
        spec_free(*s);
}

void spec_build_done(SpecBuild *b);
/* A deep copy into *ret. Returns 0 or -ENOMEM (nothing left to free). */
int spec_build_copy(const SpecBuild *b, SpecBuild *ret);

/* Whether a variant of s is built from source. */
bool spec_builds(const Spec *s);

/* Number of cells: the product of the parameter value counts (1 with no parameters). */
size_t spec_n_cells(const Spec *s);

const char *spec_hook_to_string(SpecHook h);
const char *spec_order_to_string(SpecOrder o);
const char *spec_verify_to_string(SpecVerify v);
const char *spec_metric_to_string(SpecMetric m);

/* The definition of the reported metric name (key metrics), or NULL. */
const SpecMetricDef *spec_metric_def(const Spec *s, const char *name);

/* Figures alloclab adds to a sample's metrics beside the program's own: memory_timeline's
 * (mem_peak_bytes, mem_at_free_bytes: "mem_*_bytes"), and the probe's at the exit: the memory
 * (exit_rss_bytes, exit_pss_anon_bytes, exit_anon_huge_bytes) and the allocator's statistics
 * (alloc_allocated_bytes, ...: "alloc_*_bytes"). */
bool spec_timeline_figure(const char *name);
bool spec_probe_figure(const char *name);
const char *spec_on_failure_to_string(SpecOnFailure f);
const char *spec_probe_to_string(SpecProbe p);
const char *spec_outliers_to_string(SpecOutliers o);
const char *spec_correction_to_string(SpecCorrection c);

/*
 * Loads and validates a spec from memory. path is used for messages only. Returns 0 and a Spec
 * in *ret; -EINVAL when the spec is invalid (every problem is in d, with d->file set to path);
 * -ENOMEM.
 */
int spec_load_buffer(const char *path, const char *data, size_t size, Diagnostics *d, Spec **ret);

/* Whether two values of a spec's top-level key (NULL: the key left out) mean the same, e.g.
 * `warmup: 1` and no warmup, `timeout: 60s` and `timeout: 1m`: 1, 0 when they differ or that
 * cannot be told (strings, names resolved later, values in error), -ENOMEM. */
int spec_same_setting(const char *key, const YamlNode *a, const YamlNode *b);

/* Same for a file. Returns -errno when the file cannot be read (nothing added to d), -EISDIR
 * when it is not a regular file. */
int spec_load_file(const char *path, Diagnostics *d, Spec **ret);

/* Same for a file already open (the caller checked who owns that very file); path is for
 * messages. The descriptor is read from its current offset and left open. */
int spec_load_fd(int fd, const char *path, Diagnostics *d, Spec **ret);
