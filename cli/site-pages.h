/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

#include "cli/site.h"

/*
 * The site's pages but the runs' (those are `alloclab report`'s, cli/report-page.h): the index of
 * experiments x machines and suites, an experiment's timelines, its fleet, a suite invocation.
 */

/* Each returns 0 or a negative errno. */
int site_index_page(FILE *f, const Site *site);
int site_experiment_page(FILE *f, const Site *site, const char *experiment);
int site_fleet_page(FILE *f, const Site *site, const char *experiment);
int site_suite_page(FILE *f, const Site *site, const SiteSuite *suite);
