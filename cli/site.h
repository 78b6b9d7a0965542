/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

#include "db/query.h"

/*
 * What a site (cli/publish.h) shows: the database's runs, experiments, machines and suite
 * invocations, and the paths of their pages.
 */

/* A suite workload's experiment: "suite-NAME" (workloads/NAME.yaml). */
#define SITE_SUITE_EXPERIMENT "suite-"

/* A suite invocation: the runs one `alloclab suite` made on one machine (one label). */
typedef struct SiteSuite {
        const char *label; /* "suite 2026-12-04T19:30:00.123Z" */
        const char *machine;
        const RunSummary **runs; /* in the order they ran */
        size_t n_runs;
} SiteSuite;

/* What the site shows: the database's runs, experiments, machines and suites. */
typedef struct Site {
        Store *store;
        RunSummary *runs; /* newest first by start time */
        size_t n_runs;
        char **experiments; /* strv, sorted */
        char **machines;    /* strv, sorted */
        SiteSuite *suites;  /* newest first */
        size_t n_suites;
} Site;

/* Reads what the site shows from store. Returns 0, -ENOMEM, -EIO; site_done() either way. */
int site_load(Store *store, Site *site);
void site_done(Site *site);

/* The latest run of experiment on machine (by start time), or NULL. */
const RunSummary *site_latest(const Site *site, const char *experiment, const char *machine);

/* Page paths, relative to the site's root, into buf. */
const char *site_run_path(int64_t run, char *buf, size_t size);
const char *site_experiment_path(const char *experiment, char *buf, size_t size);
const char *site_fleet_path(const char *experiment, char *buf, size_t size);
const char *site_suite_path(const SiteSuite *suite, char *buf, size_t size);
