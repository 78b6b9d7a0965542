/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/pair-render.h"
#include "cli/suite-compare.h"
#include "db/pair.h"
#include "db/query.h"
#include "util/cleanup.h"

/* The database to look in, read-only; NULL in *ret where it does not exist yet. */
static int open_existing(const char *db_path, Store **ret) {
        _cleanup_free_ char *fallback = db_path ? NULL : store_default_path();
        const char *path = db_path ? db_path : fallback;
        *ret = NULL;
        if (path && access(path, F_OK) < 0 && errno == ENOENT)
                return EXIT_OK;
        return cli_open_store("suite", db_path, STORE_READ_ONLY, ret);
}

static bool latest(const char *compare_to) {
        return strcmp(compare_to, "latest") == 0;
}

int suite_check_compare_to(const char *db_path, const char *compare_to) {
        if (!compare_to || latest(compare_to))
                return EXIT_OK;
        _cleanup_(store_freep) Store *store = NULL;
        int e = open_existing(db_path, &store);
        if (e != EXIT_OK)
                return e;
        unsigned long long run = 0;
        (void) cli_parse_uint(compare_to, INT64_MAX, &run); /* checked with the options */
        int r = store ? query_suite_run(store, (int64_t) run) : -ENOENT;
        if (r == -ENOENT)
                cli_error("suite", "--compare-to %s: there is no run %s (see alloclab runs)", compare_to,
                          compare_to);
        else if (r == -EXDEV)
                cli_error("suite",
                          "--compare-to %s: run %s was not made by alloclab suite; give a run of an earlier "
                          "suite "
                          "(its label says \"suite ...\" in alloclab runs), or latest",
                          compare_to, compare_to);
        else if (r < 0)
                cli_error("suite", "cannot read the runs: %s", store_error(store));
        return r == -ENOENT || r == -EXDEV ? EXIT_USAGE : r < 0 ? EXIT_ENVIRONMENT : EXIT_OK;
}

int suite_base(const char *db_path, const char *experiment, const char *compare_to, const char *machine,
               int64_t *ret) {
        _cleanup_(store_freep) Store *store = NULL;
        *ret = 0;
        int e = open_existing(db_path, &store);
        if (e != EXIT_OK || !store)
                return e;
        unsigned long long run = 0;
        (void) cli_parse_uint(compare_to, INT64_MAX, &run);
        char name[256];
        int r = latest(compare_to)
                        ? query_latest_done_run(store, experiment,
                                                cli_machine_name(machine, name, sizeof(name)), ret)
                        : query_suite_run_of(store, experiment, (int64_t) run, ret);
        if (r == -ENOENT)
                *ret = 0;
        else if (r < 0) {
                cli_error("suite", "cannot read the runs: %s", store_error(store));
                return EXIT_ENVIRONMENT;
        }
        return EXIT_OK;
}

/* compare's JSON document of one pair, parsed. */
static json_t *pair_document(const RunPair *pair) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        int r = pair_render(f, FORMAT_JSON, pair);
        if (fclose(f) != 0 || r < 0)
                return NULL;
        return json_loads(text, 0, NULL);
}

int suite_compare(FILE *f, OutputFormat format, Store *store, const SuiteBase *bases, size_t n,
                  json_t **ret_json) {
        int worst = EXIT_OK;
        size_t worse = 0, compared = 0;
        json_t *documents = format == FORMAT_JSON ? json_array() : NULL;
        bool markdown = format == FORMAT_MARKDOWN;
        if (format != FORMAT_JSON)
                fprintf(f,
                        "\n%sAgainst earlier runs of the same workloads (as alloclab compare; each "
                        "workload's "
                        "comparisons share alpha among themselves, not with the other workloads'):\n",
                        markdown ? "### " : "");
        for (size_t i = 0; i < n; i++) {
                if (bases[i].base == 0) {
                        if (format != FORMAT_JSON)
                                fprintf(f, "\n%s%s: no earlier run to compare with\n",
                                        markdown ? "#### " : "", bases[i].workload);
                        continue;
                }
                _cleanup_(run_pair_freep) RunPair *pair = NULL;
                int64_t missing = 0;
                int r = query_run_pair(store, bases[i].base, bases[i].run, false, &pair, &missing);
                if (r < 0) {
                        worst = cli_status_worst(worst, cli_query_failed("suite", store, missing, r));
                        continue;
                }
                compared++;
                worse += pair_regressions(pair) > 0;
                worst = cli_status_worst(worst, pair_exit_status(pair, true));
                if (format == FORMAT_JSON) {
                        json_t *doc = pair_document(pair);
                        if (!doc ||
                            json_object_set_new(doc, "workload", json_string(bases[i].workload)) < 0 ||
                            json_array_append_new(documents, doc) < 0)
                                worst = cli_status_worst(worst, EXIT_ENVIRONMENT);
                        continue;
                }
                fprintf(f, "\n%s%s:\n%s", markdown ? "#### " : "", bases[i].workload, markdown ? "\n" : "");
                if (pair_render(f, format, pair) < 0)
                        worst = cli_status_worst(worst, EXIT_ENVIRONMENT);
        }
        if (format == FORMAT_JSON)
                *ret_json = documents;
        else if (compared > 0 && worse > 0)
                fprintf(f, "\n%sREGRESSION in %zu of %zu workloads compared with an earlier run\n",
                        markdown ? "- " : "", worse, compared);
        else if (compared > 0)
                fprintf(f, "\n%sno regression in the %zu workloads compared with an earlier run\n",
                        markdown ? "- " : "", compared);
        return worst;
}
