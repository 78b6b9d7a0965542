/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/cli.h"
#include "db/store.h"

/*
 * `suite --compare-to latest|RUN`: each workload's new run against an earlier one of the same
 * workload, as `compare` puts two runs side by side. latest: the workload's newest finished run
 * before this suite; RUN: the run of that workload made by the suite invocation that made RUN
 * (every run of one invocation carries its label, "suite TIME").
 */

typedef struct SuiteBase {
        const char *workload;
        int64_t base; /* the earlier run, or 0: none to compare with */
        int64_t run;  /* the new one */
} SuiteBase;

/* Checks compare_to before anything is measured: "latest", or a run of an earlier suite.
 * Returns EXIT_OK, or the status said (no such run, or not a suite's). A database that does not
 * exist yet has no earlier run: EXIT_OK. */
int suite_check_compare_to(const char *db_path, const char *compare_to);

/* The earlier run of experiment that compare_to names (latest: machine's, cli_machine_name(); 0
 * in *ret when there is none). Returns EXIT_OK or the status said. */
int suite_base(const char *db_path, const char *experiment, const char *compare_to, const char *machine,
               int64_t *ret);

/* Prints each workload's run against its base as `compare` does (JSON: *ret_json gets an array
 * of compare's documents instead, nothing is printed), and a line of how many workloads got
 * worse. Returns the gate's status, the worst of them (compare --fail-on regression). */
int suite_compare(FILE *f, OutputFormat format, Store *store, const SuiteBase *bases, size_t n,
                  json_t **ret_json);
