/* SPDX-License-Identifier: MIT */
/*
 * `alloclab publish DIR`: the database as a static site (cli/site.h, docs/site.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/publish.h"
#include "util/cleanup.h"

static const char publish_usage[] =
        "Usage: alloclab publish DIR [--db PATH] [--quiet]\n"
        "\n"
        "Writes a static site of the database into DIR (no server needed: open DIR/index.html, or\n"
        "serve DIR with any web server): an index of experiments x machines with each one's latest\n"
        "run and its verdicts; per experiment its timelines (run medians with intervals and change\n"
        "points, per machine, cell and variant) and its fleet (each machine's ratios and hardware);\n"
        "per suite invocation its ratios to the baseline in time and peak RSS; per run its report.\n"
        "Publishing again writes only the pages whose runs changed.\n"
        "\n"
        "  --quiet   print nothing but errors\n";

int cmd_publish(int argc, char **argv) {
        if (cli_wants_help(argc, argv, publish_usage))
                return EXIT_OK;
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },
                { "quiet", no_argument, NULL, 'q' },
                {},
        };
        const char *db_path = NULL;
        bool quiet = false;
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "d:q", options, NULL)) >= 0;) {
                if (c == 'd')
                        db_path = optarg;
                else if (c == 'q')
                        quiet = true;
                else
                        return EXIT_USAGE;
        }
        if (argc - optind != 1 || !argv[optind][0]) {
                if (argc - optind > 1)
                        cli_error("publish", "one directory, got %d operands: alloclab publish DIR",
                                  argc - optind);
                else
                        cli_error("publish", "give the site's directory: alloclab publish DIR");
                return EXIT_USAGE;
        }
        const char *dir = argv[optind];
        _cleanup_(store_freep) Store *store = NULL;
        int e = cli_open_for_reading("publish", db_path, &store);
        if (e != EXIT_OK)
                return e;
        SiteResult result = {};
        _cleanup_free_ char *message = NULL;
        if (publish_site(store, dir, &result, &message) < 0) {
                cli_error("publish", "%s", message ? message : "out of memory");
                return EXIT_ENVIRONMENT;
        }
        if (!quiet)
                printf("%s/index.html: %zu pages, %zu written%s%.0zu%s\n", dir, result.pages, result.written,
                       result.removed ? ", " : "", result.removed, result.removed ? " removed" : "");
        return EXIT_OK;
}
