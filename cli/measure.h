/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cli/cli.h"
#include "configs/spec.h"

/* What a command that measures (run, quick, suite) asks of it. */
typedef struct MeasureOptions {
        const char *db_path; /* NULL: the default database */
        unsigned samples;    /* 0: the spec's */
        OutputFormat format;
        bool quiet;                  /* no progress line */
        bool silent;                 /* no result printed (suite prints its own summary) */
        const char *compare_to;      /* "latest" or a run id; NULL: no comparison */
        bool compare_relative;       /* --relative: compare_to by the within-run ratios */
        bool allow_missing_baseline; /* --compare-to latest without an earlier run passes */
        const char *label, *commit;
        const char *machine; /* --machine: the machine name runs are filed under; NULL: cli_machine() */
} MeasureOptions;

/* Plans spec, runs it into the database, prints the stored result (and the comparison with
 * o->compare_to). Returns the command's exit status, with the new run's id in *ret_run (0 when
 * none was recorded; ret_run may be NULL). */
int cli_measure(const char *command, const Spec *spec, const MeasureOptions *o, int64_t *ret_run);

/* Continues interrupted run `run` as it started, into the database, and prints it as
 * cli_measure() does. Returns the command's exit status. */
int cli_resume(int64_t run, const MeasureOptions *o);
