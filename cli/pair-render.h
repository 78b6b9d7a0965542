/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/cli.h" /* OutputFormat */

/* A comparison of two runs (db/pair.h) in a format, as `compare` and
 * `run --compare-to` print it; and how many of its changes are regressions (run B
 * significantly higher: slower, or more of the metric, by at least the minimum effect). */
typedef struct RunPair RunPair;
int pair_render(FILE *f, OutputFormat format, const RunPair *p);
size_t pair_regressions(const RunPair *p);

/* How many of its cells and variants were not compared: excluded, or not measured, in a run. */
size_t pair_uncompared(const RunPair *p);

/* How many of its changes are worse by at least the minimum effect but not significantly: the
 * gate cannot tell them from noise. */
size_t pair_unresolved(const RunPair *p);

/* The exit status of a comparison: EXIT_NOT_COMPARABLE when the runs differ in what they
 * measured, else with fail_on_regression EXIT_REGRESSION when some change is a regression, else
 * EXIT_EXCLUDED when some cell and variant could not be compared or a change could not be told
 * from noise (pair_unresolved), else EXIT_OK. */
int pair_exit_status(const RunPair *p, bool fail_on_regression);

/* EXIT_OK, or EXIT_USAGE saying why: a run against itself, --relative with nothing but the
 * baseline to compare, or --relative on a blocked run. */
int pair_usable(const char *command, const RunPair *p);
