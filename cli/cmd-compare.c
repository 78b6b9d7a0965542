/* SPDX-License-Identifier: MIT */
/*
 * `alloclab compare RUN_A RUN_B`: the same experiment at two times or on two hosts. Per cell and
 * variant, the change of the metric from A to B with its interval and verdict. Whatever keeps
 * the runs from being comparable (host fingerprint, allocator files, spec, matrix) is printed
 * before the changes and after them, and makes the exit status 7 (EXIT_NOT_COMPARABLE).
 */
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/pair-render.h"
#include "db/pair.h"
#include "util/cleanup.h"

static const char compare_usage[] =
        "Usage: alloclab compare RUN_A RUN_B [--db PATH] [--format table|markdown|csv|json]\n"
        "                        [--fail-on regression] [--relative]\n"
        "\n"
        "Compares two stored runs of one experiment, cell by cell and variant by variant: the\n"
        "median of run A's metric in both, the ratio B/A with its interval at 1 - alpha and a\n"
        "verdict (run A's min_effect, alpha and correction). Runs are the unit: the two medians are\n"
        "compared against how much a run's median moves from run to run, measured on the\n"
        "experiment's earlier runs on this host (assumed 2% without them, and said so). Runs on\n"
        "different hosts, with other allocator files or another spec are compared all the same,\n"
        "under a warning that says what differs, and the exit status is 7 (NOT COMPARABLE).\n"
        "\n"
        "--relative compares each variant's ratio to the baseline variant within run B with the\n"
        "same ratio within run A, each the median of the rounds' ratios (the variant's value over\n"
        "the baseline's in the same round): whatever moved the whole machine falls out.\n"
        "On a shared machine, gate this way, with the reference configuration in both runs.\n"
        "\n"
        "--fail-on regression (a CI gate): the exit status is 6 when run B is significantly worse\n"
        "than run A somewhere (slower, a higher value of the metric, or a lower one where the\n"
        "spec says more is better: metrics: {NAME: {better: higher}}) by at least run A's\n"
        "min_effect, 9 when a change is worse by that much but not significantly (the gate cannot\n"
        "tell it from noise) or a cell and variant was not compared, 7 when the runs are not\n"
        "comparable, else 0. --format markdown suits a pull request comment.\n"
        "\n"
        "Exit status: 0 as above; 2 usage (a run that is not in the database); 4 database error;\n"
        "6 a regression (--fail-on); 7 not comparable; 9 cannot tell, or not compared (--fail-on).\n";

int cmd_compare(int argc, char **argv) {
        if (cli_wants_help(argc, argv, compare_usage))
                return EXIT_OK;
        const char *db_path = NULL;
        OutputFormat format = FORMAT_TABLE;
        CompareOptions how = {};
        int e = cli_parse_db_format("compare", argc, argv, &db_path, &format, &how);
        if (e != EXIT_OK)
                return e;
        if (argc - optind != 2) {
                cli_error("compare", "give two runs, ids or 'latest' (see alloclab runs)");
                return EXIT_USAGE;
        }
        _cleanup_(store_freep) Store *store = NULL;
        e = cli_open_for_reading("compare", db_path, &store);
        int64_t a = 0, b = 0;
        if (e == EXIT_OK)
                e = cli_resolve_run("compare", store, argv[optind], &a);
        if (e == EXIT_OK)
                e = cli_resolve_run("compare", store, argv[optind + 1], &b);
        if (e != EXIT_OK)
                return e;

        _cleanup_(run_pair_freep) RunPair *pair = NULL;
        int64_t missing = 0;
        int r = query_run_pair(store, a, b, how.relative, &pair, &missing);
        if (r < 0)
                return cli_query_failed("compare", store, missing, r);
        if ((e = pair_usable("compare", pair)) != EXIT_OK)
                return e;
        if (pair_render(stdout, format, pair) < 0 || fflush(stdout) != 0) {
                cli_error("compare", "cannot write the comparison");
                return EXIT_ENVIRONMENT;
        }
        return pair_exit_status(pair, how.fail_on_regression);
}
