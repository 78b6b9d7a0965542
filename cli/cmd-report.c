/* SPDX-License-Identifier: MIT */
/*
 * `alloclab report RUN -o report.html`: a run's page (cli/report-page.h) written to a file.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/report-page.h"
#include "util/cleanup.h"
#include "util/io.h"

static const char report_usage[] =
        "Usage: alloclab report [RUN|latest] -o FILE [--compare OLD_RUN] [--history] [--db PATH]\n"
        "\n"
        "Writes one self-contained HTML page (inline SVG, no scripts, no network): the result table,\n"
        "every sample per cell, the ratios to the baseline with their intervals and verdicts, time\n"
        "against peak RSS with the Pareto front, the run's host, spec, allocators and smoke-phase\n"
        "findings; with --compare the change from OLD_RUN to RUN (ratios RUN / OLD_RUN, new over old\n"
        "as pyperf and asv show them), with --history the experiment's timeline of medians.\n"
        "alloclab publish writes such a page for every run, in a site.\n";

int cmd_report(int argc, char **argv) {
        if (cli_wants_help(argc, argv, report_usage))
                return EXIT_OK;
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },
                { "output", required_argument, NULL, 'o' },
                { "compare", required_argument, NULL, 'c' },
                { "history", no_argument, NULL, 'H' },
                {},
        };
        const char *db_path = NULL, *output = NULL;
        unsigned long long other = 0;
        ReportPageOptions page = {};
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "d:o:c:H", options, NULL)) >= 0;) {
                if (c == 'd')
                        db_path = optarg;
                else if (c == 'o')
                        output = optarg;
                else if (c == 'H')
                        page.history = true;
                else if (c == 'c' && cli_parse_uint(optarg, INT64_MAX, &other) == 0)
                        continue;
                else {
                        if (c == 'c')
                                cli_error("report", "--compare takes a run id, got '%s'", optarg);
                        return EXIT_USAGE;
                }
        }
        if (!output || argc - optind > 1) {
                cli_error("report", "give the output file with -o FILE (and at most one RUN)");
                return EXIT_USAGE;
        }
        page.compare_to = (int64_t) other;
        _cleanup_(store_freep) Store *store = NULL;
        int e = cli_open_for_reading("report", db_path, &store);
        if (e != EXIT_OK)
                return e;
        int64_t run_id, missing;
        if ((e = cli_resolve_run("report", store, optind < argc ? argv[optind] : NULL, &run_id)) != EXIT_OK)
                return e;
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f) {
                cli_error("report", "out of memory");
                return EXIT_ENVIRONMENT;
        }
        int r = report_page_write(f, store, run_id, &page, &missing);
        if (!memstream_text(f, &text) && r >= 0)
                r = -ENOMEM;
        if (r < 0 && r != -ENOMEM && r != -EIO)
                return cli_query_failed("report", store, missing, r);
        if (r >= 0)
                r = write_file_replacing(output, text, size, NULL);
        if (r < 0) {
                cli_error("report", "cannot write %s: %s", output, strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        return EXIT_OK;
}
