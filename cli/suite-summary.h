/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "db/query.h"

/*
 * A suite invocation's summary (`alloclab suite`, and the suite pages of `alloclab publish`): per
 * workload each allocator's ratio to the baseline in the run's metric and in peak RSS, with
 * intervals and verdicts, and per allocator its wins and geometric means. Every workload's
 * comparisons are one family (one per measure): a suite of 20 workloads does not make 20 times
 * the false verdicts.
 */

typedef struct SuiteRun {
        const char *workload;
        int64_t run;
        int64_t base; /* --compare-to's earlier run of the workload, or 0 */
        Report *rep;  /* the run read for its metric */
        Report *rss;  /* ... and for peak RSS (maxrss) */
} SuiteRun;

/* Reads each run (runs[i].run) for its metric and for peak RSS and corrects each measure as one
 * family. Runs that cannot be read are dropped, each said (cli_error() of command);
 * *n becomes the runs kept. Returns 0, -ENOMEM, or -EIO when a run could not be read. */
int suite_summary_read(Store *s, const char *command, SuiteRun *runs, size_t *n);
void suite_summary_free(SuiteRun *runs, size_t n);

/* One row per workload: its metric, the baseline's value, every other variant's ratio and
 * verdict (and mark). */
json_t *suite_workload_table(const SuiteRun *runs, size_t n);

/* Per allocator: its wins, verdict counts and geometric means, as lines after bullet. */
void suite_print_overall(FILE *f, const SuiteRun *runs, size_t n, const char *bullet);

/* The summary as `suite --format json` prints it. */
json_t *suite_summary_json(const SuiteRun *runs, size_t n);
