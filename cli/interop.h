/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "db/store.h"

/*
 * hyperfine's and pyperf's JSON (cli/interop.c): imported as runs, and a run exported in
 * hyperfine's layout, so that their plotting scripts and dashboards read alloclab's runs.
 */

/* Whether the file starts like a JSON object (rather than an SQLite bundle). */
bool interop_is_json(const char *path);

/* Imports hyperfine's --export-json or pyperf's JSON file as a new run of `experiment` (NULL:
 * TOOL-FILE) in store, one variant per command or benchmark. Prints what is wrong; returns the
 * exit status, with the run in *ret_run on success. */
int interop_import(Store *store, const char *path, const char *experiment, int64_t *ret_run);

/* The samples table of a run (export_samples()) in hyperfine's --export-json layout: one result
 * per cell and variant, its sample phase's times. Returns 0, -ENOMEM, -EIO. */
int interop_export_hyperfine(FILE *f, const json_t *samples);
