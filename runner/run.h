/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runner/output.h"
#include "runner/plan.h"
#include "stats/compare.h"
#include "runner/probe-report.h"
#include "runner/spawn.h"
#include "stats/stats.h"

/*
 * Executes a Plan: one child at a time, each measured, verified after its clock stopped, and
 * handed to the sink at once. The runner keeps no results beyond the current cell; the sink
 * (db/record.c in practice) is where they live.
 */

typedef enum SampleStatus {
        SAMPLE_OK,
        SAMPLE_MISMATCH, /* output differs from the reference's */
        SAMPLE_EXIT,     /* non-zero exit code */
        SAMPLE_SIGNAL,   /* killed by a signal (a crash, usually) */
        SAMPLE_TIMEOUT,
        SAMPLE_OUTPUT_LIMIT, /* stdout or stderr larger than the spec's output_limit */
        SAMPLE_EXEC_FAILED,
        SAMPLE_BAD_METRICS,         /* malformed or too many lines on ALLOCLAB_METRICS_FD */
        SAMPLE_MISSING_METRIC,      /* metric: reported:NAME, and NAME was not reported */
        SAMPLE_NO_OUTPUT_FILE,      /* verify: file:PATH, and PATH was not written */
        SAMPLE_PRELOAD_INEFFECTIVE, /* the requested allocator does not serve the program's malloc */
        SAMPLE_CONFIG_REJECTED,     /* the allocator complained about its configuration */
        SAMPLE_FORWARD_REFUSED,     /* forward mode: the library lacks core entry points */
        SAMPLE_PROBE_FAILED,        /* the probe's report is unreadable (another layout) */
        SAMPLE_OOM,                 /* the tree hit the spec's memory_max: the kernel killed in it */
        SAMPLE_PIDS_LIMIT,          /* the tree hit the spec's pids_max: a fork or clone failed */
        SAMPLE_SKIPPED_BUSY,        /* quiet: on_busy: skip, and the machine stayed busy: not run */
        SAMPLE_SETUP_FAILED,        /* the spec's setup hook failed: the variant leaves the cell */
        SAMPLE_PREPARE_FAILED,      /* the spec's prepare hook failed: the child was not run */
        _SAMPLE_STATUS_MAX,
} SampleStatus;

const char *sample_status_to_string(SampleStatus s);

typedef struct Sample {
        size_t step_index;
        const PlanStep *step;
        SampleStatus status;
        SpawnResult spawn;
        bool verified;            /* compared with the oracle (false for the oracle itself) */
        Digest output;            /* of stdout, or of the verify file */
        uint64_t mismatch_offset; /* SAMPLE_MISMATCH: first differing byte */
        uint64_t reference_size;  /* SAMPLE_MISMATCH: the oracle's size */
        Metric *metrics;          /* reported by the child, and memory_timeline's figures */
        size_t n_metrics;
        PhaseMark *marks; /* the child's `phase NAME` lines */
        size_t n_marks;
        Timeline *timeline;   /* memory_timeline's readings (measured samples), or NULL */
        char *stderr_excerpt; /* only for failed samples */
        char *detail;         /* why a sample failed, when the status alone does not say */
        ProbeResult *probe;   /* the probe\'s report, for probed runs */
        /* The started process's allocator's statistics at its exit, as it printed them
         * (probe->report.stats_format), or NULL: smoke runs */
        char *allocator_stats;
        /* The quiet-machine guard, for measured samples when the spec has quiet: what it read last
         * before the spawn, how long it waited, and whether the machine was still too busy. */
        int64_t env_offset; /* spec env_offset: the bytes added to the environment, or -1 */
        bool quiet_checked;
        bool noisy;
        double cpu_some_avg10, load1;
        uint64_t quiet_wait_ns;
        /* While the sample ran (runner/quiet.h): other work's CPU time and the hypervisor's. */
        bool other_work_read;
        uint64_t other_cpu_ns, steal_ns;
        /* Taken by another tool (alloclab import): the tree's CPU time and peak memory were not
         * measured, and are stored as unknown (NULL), not as 0 from rusage. */
        bool imported;
} Sample;

typedef struct StatsRow {
        uint32_t cell;
        uint32_t variant;
        const char *metric;
        Stats stats;
} StatsRow;

/* Callbacks; a negative return aborts the run with that error. step_begin is called before the
 * child is spawned (for progress output) and must not block. */
typedef struct RunSink {
        void *userdata;
        void (*step_begin)(void *userdata, const Plan *plan, size_t step_index);
        int (*sample)(void *userdata, const Plan *plan, const Sample *sample);
        int (*exclude)(void *userdata, const Plan *plan, uint32_t cell, uint32_t variant,
                       const char *reason);
        int (*cell_stats)(void *userdata, const Plan *plan, uint32_t cell, const StatsRow *rows,
                          size_t n_rows);
} RunSink;

typedef enum RunEnd {
        RUN_COMPLETED,
        RUN_STOPPED,  /* a failure with on_failure: stop */
        RUN_CANCELED, /* cancel_fd became readable */
} RunEnd;

typedef struct RunResult {
        RunEnd end;
        size_t n_runs;     /* children started */
        size_t n_failures; /* samples of any phase that were not SAMPLE_OK */
        size_t n_excluded; /* (cell, variant) pairs excluded after their smoke run */
} RunResult;

/* A value a previous, interrupted execution of the same plan already measured. */
typedef struct PriorValue {
        uint32_t cell;
        uint32_t variant;
        char metric[OUTPUT_METRIC_NAME_MAX + 1];
        double value;
} PriorValue;

/* What an earlier execution of this plan already recorded, for resuming it. */
typedef struct RunPrior {
        bool *done;         /* per step: recorded already */
        bool *excluded;     /* per cell x variant: excluded already */
        PriorValue *values; /* timed values of the recorded ok samples, for the statistics */
        size_t n_values;
} RunPrior;

void run_prior_done(RunPrior *prior);

/*
 * Runs the plan. cancel_fd (or -1) stops the run when readable: the current child is killed
 * and not recorded. Returns 0 with *ret filled, or the first negative error (a sink's, or a
 * failure of this process such as -EMFILE); samples handed to the sink before stay valid.
 *
 * With prior (NULL for a new run) it resumes an interrupted execution of the same plan (same
 * spec, same seed): steps in prior->done are not run again, except a reference smoke run needed
 * as the oracle of a cell with work left, which runs again without being handed to the sink.
 * Exclusions carry over; every cell's statistics are computed again from prior and new values.
 */
int run_execute(const Plan *plan, const RunPrior *prior, const RunSink *sink, int cancel_fd, RunResult *ret);

/* samples: auto: the sample rounds every cell runs before its precision is judged (the spec's
 * min, else the fewest with which a verdict is possible, at least 3). */
unsigned run_auto_min_rounds(const Plan *p);

/* The verdict rule of the plan's run: its spec's min_effect, alpha and correction over every
 * comparison the run will make (each cell's variants but the baseline). */
CompareRule run_compare_rule(const Plan *p);

/* The value of a built-in or reported metric in a sample; false when the sample lacks it. */
bool run_sample_metric(const Sample *s, const char *metric, double *ret);
