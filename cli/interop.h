/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "db/store.h"
#include "util/cleanup.h"

/*
 * hyperfine's and pyperf's JSON (cli/interop.c): imported as runs, and a run exported in
 * hyperfine's layout, so that their plotting scripts and dashboards read alloclab's runs.
 */

/* Whether the file starts like JSON, an object or an array (rather than an SQLite bundle). */
bool interop_is_json(const char *path);

/* hyperfine's --export-json or pyperf's JSON file, read and planned as a run. */
typedef struct InteropRun InteropRun;

/* Reads path as a run of `experiment` (NULL: TOOL-FILE), one variant per command or benchmark,
 * before any database is opened. Prints what is wrong; returns the exit status, with the run in
 * *ret on success. */
int interop_read(const char *path, const char *experiment, InteropRun **ret);

/* Records a run read by interop_read() as a new run in store, unless a finished run was
 * imported from the same bytes (*ret_known set, that run in *ret_run). Prints what is wrong;
 * returns the exit status, with the run's number in *ret_run on success. */
int interop_record(Store *store, InteropRun *run, int64_t *ret_run, bool *ret_known);

/* "2 variants (glibc: glibc, mi: mimalloc) in 2 cells of n, order sequential": how the file
 * became a run, into buf. */
const char *interop_layout(const InteropRun *run, char *buf, size_t size);

void interop_run_free(InteropRun *run);
DEFINE_POINTER_CLEANUP(InteropRun, interop_run_free);

/* The samples table of a run (export_samples()) in hyperfine's --export-json layout: one result
 * per cell and variant, its sample phase's times; the mean CPU times from the samples, or for an
 * imported run from cpu (export_import_cpu(), null where the file gave none), and memory only
 * where it was measured. Returns 0, -ENOMEM, -EIO. */
int interop_export_hyperfine(FILE *f, const json_t *samples, const json_t *cpu);
