/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "db/store.h"

/*
 * A run's page (`alloclab report`, and each run of a site `alloclab publish` writes): results
 * table, samples per cell, ratios to the baseline, time against peak RSS, memory over time,
 * optionally the change from another run and the experiment's history, and the run's metadata.
 */

typedef struct ReportPageOptions {
        int64_t compare_to; /* the run the change is from (ratios this / that); 0: none */
        bool history;       /* the experiment's timeline of medians */
        const char *nav;    /* HTML links back up a site, written above the heading; or NULL */
} ReportPageOptions;

/* Writes the page of run to f. Returns 0, or a negative errno from reading the run (*ret_missing:
 * the run that was not found, for cli_query_failed()) or writing. */
int report_page_write(FILE *f, Store *store, int64_t run, const ReportPageOptions *o, int64_t *ret_missing);
