/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "db/store.h"

/*
 * `alloclab publish DIR`: a static site of a database (docs/site.md). Pages, linked to each
 * other by relative links (it opens from file:// and from any web server):
 *
 *   index.html                  experiments x machines: each one's latest run and its verdicts;
 *                               the suite invocations
 *   experiment/NAME.html        per machine, a timeline per cell and variant
 *   fleet/NAME.html             the latest run of every machine: its ratios, its hardware class
 *   suite/TIME-MACHINE.html     a suite invocation: ratios to the baseline in its metrics and peak RSS
 *   run/ID.html                 a run's report (alloclab report)
 *
 * Incremental: each page has a key made of what it shows (its runs' identities and states); a
 * page whose key is unchanged and whose file is still there is not written again, and a page
 * whose content came out the same is not replaced. DIR/.alloclab-site keeps the keys.
 */

typedef struct SiteResult {
        size_t pages;   /* the site's pages */
        size_t written; /* of them, written by this publish (new or changed) */
        size_t removed; /* pages of runs or experiments no longer in the database */
} SiteResult;

/* Writes or updates the site of store in dir (made if missing). Returns 0, or a negative errno
 * with *ret_message (caller frees) saying what failed. */
int publish_site(Store *store, const char *dir, SiteResult *ret, char **ret_message);
