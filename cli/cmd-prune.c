/* SPDX-License-Identifier: MIT */
/*
 * `alloclab prune`: retention (db/prune.h). Old runs lose their measured samples and keep what
 * their figures and verdicts are computed from; the file shrinks.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "db/prune.h"
#include "db/query.h"
#include "util/cleanup.h"
#include "util/units.h"

static const char prune_usage[] =
        "Usage: alloclab prune [EXPERIMENT] (--keep-last N | --older-than DURATION) [--keep-every N]\n"
        "                      [--dry-run] [--db PATH]\n"
        "\n"
        "Drops the measured samples of old runs (of EXPERIMENT, or of every experiment) and keeps\n"
        "what their figures and verdicts are computed from: every metric's statistics, failed\n"
        "samples, smoke runs and what the probe found, and per cell and variant the values of the\n"
        "run's metric. show, compare, history and fleet print a pruned run as before (show says it\n"
        "was pruned); its other metrics keep their statistics only, and export --what samples and\n"
        "report's per-sample views have nothing of it. Then gives the space back (VACUUM).\n"
        "\n"
        "  --keep-last N    the last N runs of each experiment on each machine keep their samples\n"
        "  --older-than D   only runs started at least D ago (90d, 12h)\n"
        "  --keep-every N   one run in N of each experiment on each machine keeps its samples\n"
        "  --dry-run        say what would be pruned; write nothing\n";

typedef struct PruneOptions {
        const char *db_path;
        PruneQuery query;
        bool keep_last_given, older_than_given;
} PruneOptions;

static int parse_prune_options(int argc, char **argv, PruneOptions *o) {
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },
                { "keep-last", required_argument, NULL, 'k' },
                { "older-than", required_argument, NULL, 'o' },
                { "keep-every", required_argument, NULL, 'e' },
                { "dry-run", no_argument, NULL, 'n' },
                {},
        };
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "d:", options, NULL)) >= 0;) {
                unsigned long long v;
                double ns;
                switch (c) {
                case 'd':
                        o->db_path = optarg;
                        break;
                case 'k':
                case 'e':
                        /* at least 1: what prunes every run is no retention (as the daemon's) */
                        if (cli_parse_uint(optarg, 1000000000, &v) < 0 || v == 0) {
                                cli_error("prune", "--%s takes a number from 1, not '%s'",
                                          c == 'k' ? "keep-last" : "keep-every", optarg);
                                return EXIT_USAGE;
                        }
                        *(c == 'k' ? &o->query.keep_last : &o->query.keep_every) = (size_t) v;
                        o->keep_last_given |= c == 'k';
                        break;
                case 'o':
                        if (units_parse(optarg, units_duration_ns, 0, &ns) < 0 || ns < 1e9) {
                                cli_error("prune",
                                          "--older-than takes a duration of at least 1s with its unit "
                                          "(90d, 12h), not '%s'",
                                          optarg);
                                return EXIT_USAGE;
                        }
                        o->query.older_than_s = (uint64_t) (ns / 1e9);
                        o->older_than_given = true;
                        break;
                case 'n':
                        o->query.dry_run = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        }
        if (argc - optind > 1) {
                cli_error("prune", "expected at most one EXPERIMENT (see alloclab prune --help)");
                return EXIT_USAGE;
        }
        if (!o->keep_last_given && !o->older_than_given) {
                cli_error("prune",
                          "say which runs keep their samples: --keep-last N, --older-than DURATION, "
                          "or both (see alloclab prune --help)");
                return EXIT_USAGE;
        }
        o->query.experiment = optind < argc ? argv[optind] : NULL;
        return EXIT_OK;
}

static double file_mib(const char *path) {
        struct stat st;
        return stat(path, &st) == 0 ? (double) st.st_size / (1024.0 * 1024.0) : 0;
}

int cmd_prune(int argc, char **argv) {
        if (cli_wants_help(argc, argv, prune_usage))
                return EXIT_OK;
        PruneOptions o = {};
        int e = parse_prune_options(argc, argv, &o);
        if (e != EXIT_OK)
                return e;
        /* A database that is not there is an error, not an empty one made to prune; a dry run
         * only reads. */
        _cleanup_(store_freep) Store *store = NULL;
        _cleanup_close_ int lock_fd = -1;
        if ((e = cli_open_for_reading("prune", o.db_path, &store)) != EXIT_OK)
                return e;
        if (!o.query.dry_run) {
                store = store_free(store);
                if ((e = cli_open_store("prune", o.db_path, STORE_READ_WRITE, &store)) != EXIT_OK ||
                    (e = cli_take_measure_lock("prune", store, &lock_fd)) != EXIT_OK)
                        return e;
        }
        if (o.query.experiment) { /* a misspelt name prunes nothing, and says so */
                RunSummary *runs = NULL;
                size_t n = 0;
                if (query_runs(store, o.query.experiment, 1, &runs, &n) < 0)
                        return cli_query_failed("prune", store, 0, -EIO);
                query_runs_free(runs, n);
                if (n == 0) {
                        cli_error("prune", "no runs of experiment '%s' (see alloclab runs)",
                                  o.query.experiment);
                        return EXIT_USAGE;
                }
        }
        double before = file_mib(store_path(store));
        PruneTally tally;
        int r = store_prune(store, &o.query, &tally);
        if (r >= 0 && !o.query.dry_run && tally.runs > 0)
                r = store_vacuum(store);
        if (r < 0) {
                cli_error("prune", "cannot prune: %s; every run is whole or pruned, none half",
                          r == -EIO ? store_error(store) : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        if (o.query.dry_run)
                printf("would prune %zu run%s (%lld samples); nothing written\n", tally.runs,
                       tally.runs == 1 ? "" : "s", (long long) tally.samples);
        else
                printf("pruned %zu run%s: %lld samples dropped, their statistics and the values of their "
                       "metric kept; %s %.1f MiB -> %.1f MiB\n",
                       tally.runs, tally.runs == 1 ? "" : "s", (long long) tally.samples, store_path(store),
                       before, file_mib(store_path(store)));
        return EXIT_OK;
}
