/* SPDX-License-Identifier: MIT */
/*
 * `alloclab runs` and `alloclab show`: read the history. The database is opened for writing
 * when possible so that runs of vanished processes are marked interrupted before they are
 * listed; a read-only file is still readable.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/render.h"
#include "db/query.h"
#include "util/cleanup.h"

static const char runs_usage[] = "Usage: alloclab runs [EXPERIMENT] [--db PATH] [--last N]\n"
                                 "\n"
                                 "Lists stored runs, newest first (default: the last 20).\n";

static const char show_usage[] =
        "Usage: alloclab show [RUN|latest] [--db PATH] [--format table|markdown|csv|json] [--allocators]\n"
        "\n"
        "Prints a stored run's result table (default: the latest run). With --allocators, each\n"
        "variant's allocator instead: file, sha256, package version and what the probe found in its\n"
        "first smoke run (effective allocator, version, effective options, census).\n";

/* Opens for writing when the file is writable (to recover interrupted runs), else read-only. */
static int open_for_reading(const char *command, const char *db_path, Store **ret) {
        _cleanup_free_ char *fallback = db_path ? NULL : store_default_path();
        const char *path = db_path ? db_path : fallback;
        StoreMode mode = path && access(path, W_OK) == 0 ? STORE_READ_WRITE : STORE_READ_ONLY;
        return cli_open_store(command, path, mode, ret);
}

typedef struct ReadOptions {
        const char *db_path;
        OutputFormat format;
        unsigned long long last;
        bool allocators;
        const char *argument;
} ReadOptions;

static int parse_read_options(const char *command, int argc, char **argv, ReadOptions *o) {
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },
                { "format", required_argument, NULL, 'f' },
                { "last", required_argument, NULL, 'n' },
                { "allocators", no_argument, NULL, 'a' },
                {},
        };
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "d:f:n:a", options, NULL)) >= 0;) {
                switch (c) {
                case 'd':
                        o->db_path = optarg;
                        break;
                case 'f':
                        if (cli_parse_format(optarg, &o->format) < 0) {
                                cli_error(command, "unknown format '%s' (table, markdown, csv, json)",
                                          optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'a':
                        o->allocators = true;
                        break;
                case 'n':
                        if (cli_parse_uint(optarg, 1000000, &o->last) < 0 || o->last == 0) {
                                cli_error(command, "--last must be a positive number");
                                return EXIT_USAGE;
                        }
                        break;
                default:
                        return EXIT_USAGE;
                }
        }
        if (argc - optind > 1) {
                cli_error(command, "too many arguments");
                return EXIT_USAGE;
        }
        o->argument = optind < argc ? argv[optind] : NULL;
        return EXIT_OK;
}

int cmd_runs(int argc, char **argv) {
        if (cli_wants_help(argc, argv, runs_usage))
                return EXIT_OK;
        ReadOptions o = { .last = 20 };
        int e = parse_read_options("runs", argc, argv, &o);
        if (e != EXIT_OK)
                return e;
        _cleanup_(store_freep) Store *store = NULL;
        if ((e = open_for_reading("runs", o.db_path, &store)) != EXIT_OK)
                return e;
        RunSummary *runs = NULL;
        size_t n = 0;
        int r = query_runs(store, o.argument, (size_t) o.last, &runs, &n);
        if (r < 0) {
                cli_error("runs", "%s", r == -EIO ? store_error(store) : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        render_runs(stdout, runs, n);
        query_runs_free(runs, n);
        return EXIT_OK;
}

static int show_allocators(Store *store, int64_t run_id) {
        VariantAllocator *list = NULL;
        size_t n = 0;
        int r = query_allocators(store, run_id, &list, &n);
        if (r < 0) {
                cli_error("show", "%s", r == -EIO ? store_error(store) : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        if (n == 0) {
                cli_error("show", "no run %lld (see alloclab runs)", (long long) run_id);
                return EXIT_ENVIRONMENT;
        }
        for (size_t i = 0; i < n; i++) {
                const VariantAllocator *a = &list[i];
                printf("%s%s: %s %s\n  file %s\n  sha256 %s\n", i ? "\n" : "", a->variant, a->allocator,
                       a->version, a->path[0] ? a->path : "(nothing preloaded)", a->sha256);
                json_t *probe = a->probe_report ? json_loads(a->probe_report, 0, NULL) : NULL;
                if (probe)
                        render_probe(stdout, probe);
                else
                        printf("  (no probe report: the run did not use the probe)\n");
                json_decref(probe);
        }
        query_allocators_free(list, n);
        return EXIT_OK;
}

int cmd_show(int argc, char **argv) {
        if (cli_wants_help(argc, argv, show_usage))
                return EXIT_OK;
        ReadOptions o = { .format = FORMAT_TABLE };
        int e = parse_read_options("show", argc, argv, &o);
        if (e != EXIT_OK)
                return e;
        _cleanup_(store_freep) Store *store = NULL;
        if ((e = open_for_reading("show", o.db_path, &store)) != EXIT_OK)
                return e;

        int64_t run_id;
        unsigned long long v;
        if (!o.argument || strcmp(o.argument, "latest") == 0) {
                if (query_latest_run(store, &run_id) < 0) {
                        cli_error("show", "the database holds no runs yet");
                        return EXIT_ENVIRONMENT;
                }
        } else if (cli_parse_uint(o.argument, INT64_MAX, &v) == 0)
                run_id = (int64_t) v;
        else {
                cli_error("show", "RUN must be a run id or 'latest', got '%s'", o.argument);
                return EXIT_USAGE;
        }

        if (o.allocators)
                return show_allocators(store, run_id);

        _cleanup_(query_report_freep) Report *rep = NULL;
        int r = query_report(store, run_id, &rep);
        if (r == -ENOENT) {
                cli_error("show", "no run %lld (see alloclab runs)", (long long) run_id);
                return EXIT_ENVIRONMENT;
        }
        if (r < 0) {
                cli_error("show", "%s", r == -EIO ? store_error(store) : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        if (render_for(o.format)(stdout, rep) < 0 || fflush(stdout) != 0) {
                cli_error("show", "cannot write the result");
                return EXIT_ENVIRONMENT;
        }
        return EXIT_OK;
}
