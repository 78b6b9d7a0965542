/* SPDX-License-Identifier: MIT */
/*
 * What the site shows (cli/site.h): the database's runs, experiments, machines and suite
 * invocations, and where each one's page is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/site.h"
#include "util/cleanup.h"
#include "util/sha256.h"
#include "util/strv.h"

#define SUITE_LABEL "suite "

/* A run of `alloclab suite`: a workload's experiment, labelled "suite TIME" (one label per
 * invocation), not a run someone labelled so. */
static bool is_suite_run(const RunSummary *run) {
        return run->label && strncmp(run->label, SUITE_LABEL, strlen(SUITE_LABEL)) == 0 &&
               strncmp(run->experiment, SITE_SUITE_EXPERIMENT, strlen(SITE_SUITE_EXPERIMENT)) == 0;
}

static int compare_strings(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* A name as a file name: letters, digits, '.', '-' and '_' kept, anything else '_', and then,
 * so that two names never meet in one file, the start of the name's sha256. */
static const char *slug(const char *name, char *buf, size_t size) {
        size_t n = 0;
        bool changed = name[0] == '.' || !name[0];
        for (const char *c = name; *c && n + 1 < size && n < 100; c++) {
                bool keep = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                            (*c >= '0' && *c <= '9') || *c == '.' || *c == '-' || *c == '_';
                buf[n++] = keep ? *c : '_';
                changed |= !keep;
        }
        changed |= strlen(name) > 100;
        buf[n] = 0;
        if (changed) {
                char hex[SHA256_HEX_SIZE];
                sha256_hex(name, strlen(name), hex);
                snprintf(buf + n, size - n, "-%.8s", hex);
        }
        return buf;
}

const char *site_run_path(int64_t run, char *buf, size_t size) {
        snprintf(buf, size, "run/%lld.html", (long long) run);
        return buf;
}

const char *site_experiment_path(const char *experiment, char *buf, size_t size) {
        char name[160];
        snprintf(buf, size, "experiment/%s.html", slug(experiment, name, sizeof(name)));
        return buf;
}

const char *site_fleet_path(const char *experiment, char *buf, size_t size) {
        char name[160];
        snprintf(buf, size, "fleet/%s.html", slug(experiment, name, sizeof(name)));
        return buf;
}

const char *site_suite_path(const SiteSuite *suite, char *buf, size_t size) {
        char when[160], machine[160];
        slug(suite->label + strlen(SUITE_LABEL), when, sizeof(when));
        snprintf(buf, size, "suite/%s-%s.html", when, slug(suite->machine, machine, sizeof(machine)));
        return buf;
}

const RunSummary *site_latest(const Site *site, const char *experiment, const char *machine) {
        for (size_t i = 0; i < site->n_runs; i++)
                if (strcmp(site->runs[i].experiment, experiment) == 0 &&
                    strcmp(site->runs[i].machine, machine) == 0)
                        return &site->runs[i];
        return NULL;
}

void site_done(Site *site) {
        query_runs_free(site->runs, site->n_runs);
        strv_free(site->experiments);
        strv_free(site->machines);
        for (size_t i = 0; i < site->n_suites; i++)
                free(site->suites[i].runs);
        free(site->suites);
}

/* The suite of label on machine, added when new. */
static SiteSuite *suite_of(Site *site, const RunSummary *run) {
        for (size_t i = 0; i < site->n_suites; i++)
                if (strcmp(site->suites[i].label, run->label) == 0 &&
                    strcmp(site->suites[i].machine, run->machine) == 0)
                        return &site->suites[i];
        SiteSuite *more = reallocarray(site->suites, site->n_suites + 1, sizeof(SiteSuite));
        if (!more)
                return NULL;
        site->suites = more;
        site->suites[site->n_suites] = (SiteSuite){ .label = run->label, .machine = run->machine };
        return &site->suites[site->n_suites++];
}

int site_load(Store *store, Site *site) {
        *site = (Site){ .store = store };
        int r = query_runs(store, NULL, SIZE_MAX, &site->runs, &site->n_runs);
        if (r < 0)
                return r;
        for (size_t i = 0; i < site->n_runs; i++) {
                const RunSummary *run = &site->runs[i];
                if ((!strv_contains(site->experiments, run->experiment) &&
                     strv_append(&site->experiments, run->experiment) < 0) ||
                    (!strv_contains(site->machines, run->machine) &&
                     strv_append(&site->machines, run->machine) < 0))
                        return -ENOMEM;
                if (!is_suite_run(run))
                        continue;
                SiteSuite *suite = suite_of(site, run);
                const RunSummary **more =
                        suite ? reallocarray(suite->runs, suite->n_runs + 1, sizeof(*more)) : NULL;
                if (!more)
                        return -ENOMEM;
                suite->runs = more;
                suite->runs[suite->n_runs++] = run;
        }
        /* The runs are newest first: a suite's, in the order they ran. */
        for (size_t i = 0; i < site->n_suites; i++)
                for (size_t a = 0, b = site->suites[i].n_runs; a + 1 < b; a++, b--) {
                        const RunSummary *t = site->suites[i].runs[a];
                        site->suites[i].runs[a] = site->suites[i].runs[b - 1];
                        site->suites[i].runs[b - 1] = t;
                }
        if (site->experiments)
                qsort(site->experiments, strv_length(site->experiments), sizeof(char *), compare_strings);
        if (site->machines)
                qsort(site->machines, strv_length(site->machines), sizeof(char *), compare_strings);
        return 0;
}
