/* SPDX-License-Identifier: MIT */
/*
 * alloclab export RUN... --bundle FILE and alloclab import FILE...: runs carried between
 * databases as files (db/bundle.h, docs/fleet.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/interop.h"
#include "configs/schema.h"
#include "db/bundle.h"
#include "db/query.h"
#include "util/cleanup.h"
#include "util/text.h"

static const char import_usage[] =
        "Usage: alloclab import FILE... [--db PATH] [--machine-policy refuse|split|accept]\n"
        "                               [--experiment NAME]\n"
        "\n"
        "A FILE that holds JSON is hyperfine's --export-json or pyperf's output: each becomes a new\n"
        "run of experiment NAME (default hyperfine-FILE or pyperf-FILE), its times the samples, in\n"
        "order sequential (each command's after the other's, compared as independent samples); a\n"
        "variant's allocator is the one its command's LD_PRELOAD names, else unknown; parameters\n"
        "that set the environment make variants, the others cells; pyperf's benchmarks are cells\n"
        "of one variant. The same file again adds nothing (docs/export.md).\n"
        "\n"
        "Merges bundles (alloclab export RUN... --bundle FILE) into the database, at most 10 files\n"
        "in one transaction: all of it, or nothing. Each run gets a new local number; runs are known\n"
        "by their UUID, so a run that is here already with the same content adds nothing. Every\n"
        "file is checked before anything is written; the import is refused (exit 4) for what is not\n"
        "a regular file, a damaged file or one that is not a bundle, a schema this alloclab does not\n"
        "read or objects it does not make (views, triggers), a value its column does not take, a\n"
        "name no spec could carry or text with control characters, and a UUID that is here with\n"
        "other content.\n"
        "\n"
        "A run is filed under its machine name (run --machine, else its host name). Where that name\n"
        "is known here with another host fingerprint (another machine-id: another machine under\n"
        "the name; the same one: a kernel, firmware or settings change), --machine-policy says:\n"
        "  refuse   refuse the import (default)\n"
        "  split    file the run under NAME.FINGERPRINT (its first 8 hex digits): a series apart\n"
        "  accept   the same machine: the run joins NAME's series, as a new baseline there\n"
        "(--accept-host-change is --machine-policy accept.)\n";

int cmd_export_bundle(int argc, char **argv) {
        const char *db_path = NULL, *bundle = NULL;
        _cleanup_free_ char **runs = calloc((size_t) argc, sizeof(char *));
        size_t n_runs = 0;
        if (!runs)
                return EXIT_ENVIRONMENT;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--bundle") == 0 && i + 1 < argc)
                        bundle = argv[++i];
                else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
                        db_path = argv[++i];
                else if (argv[i][0] == '-') {
                        cli_error("export", "unknown or incomplete option %s (see alloclab export --help)",
                                  argv[i]);
                        return EXIT_USAGE;
                } else
                        runs[n_runs++] = argv[i];
        }
        if (!bundle || n_runs == 0) {
                cli_error("export", "expected RUN... (numbers, latest or all) and --bundle FILE");
                return EXIT_USAGE;
        }
        _cleanup_(store_freep) Store *store = NULL;
        int e = cli_open_for_reading("export", db_path, &store);
        if (e != EXIT_OK)
                return e;
        /* Every run named, in order; "all": every finished or interrupted run, oldest first. */
        _cleanup_free_ int64_t *ids = NULL;
        size_t n = 0;
        for (size_t i = 0; i < n_runs; i++) {
                RunSummary *all = NULL;
                size_t n_all = 1;
                if (strcmp(runs[i], "all") == 0 && query_runs(store, NULL, SIZE_MAX >> 1, &all, &n_all) < 0)
                        return cli_query_failed("export", store, 0, -EIO);
                int64_t *grown = realloc(ids, (n + n_all) * sizeof(int64_t));
                if (!grown) {
                        query_runs_free(all, n_all);
                        return EXIT_ENVIRONMENT;
                }
                ids = grown;
                if (!all && (e = cli_resolve_run("export", store, runs[i], &ids[n++])) != EXIT_OK)
                        return e;
                for (size_t k = all ? n_all : 0; k > 0; k--)
                        if (strcmp(all[k - 1].status, "running") != 0)
                                ids[n++] = all[k - 1].id;
                query_runs_free(all, all ? n_all : 0);
        }
        if (n == 0) { /* only "all", and every run is running, or there is none */
                cli_error("export", "no run to export: none has finished or was interrupted");
                return EXIT_USAGE;
        }
        _cleanup_free_ char *message = NULL;
        int r = bundle_export(store, ids, n, bundle, &message);
        if (r < 0) {
                cli_error("export", "%s", message ? message : strerror(-r));
                return r == -ENOENT || r == -EBUSY ? EXIT_USAGE : EXIT_ENVIRONMENT;
        }
        /* A bundle of pruned runs says so: they travel without their measured samples. */
        size_t pruned = 0;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *when = NULL;
                if (query_run_pruned(store, ids[i], &when) < 0)
                        return cli_query_failed("export", store, ids[i], -EIO);
                pruned += when != NULL;
        }
        printf("%s: %zu run%s", bundle, n, n == 1 ? "" : "s");
        if (pruned)
                printf(", %zu of them pruned (their statistics and values of their metric, no measured "
                       "samples)",
                       pruned);
        printf("\n");
        return EXIT_OK;
}

int cmd_import(int argc, char **argv) {
        if (cli_wants_help(argc, argv, import_usage))
                return EXIT_OK;
        const char *db_path = NULL, *experiment = NULL;
        BundleOptions o = {};
        bool policy_given = false;
        _cleanup_free_ char **files = calloc((size_t) argc, sizeof(char *));
        size_t n = 0;
        if (!files)
                return EXIT_ENVIRONMENT;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
                        db_path = argv[++i];
                else if (strcmp(argv[i], "--accept-host-change") == 0) {
                        if (policy_given && o.machine_policy != MACHINE_ACCEPT) {
                                cli_error(
                                        "import",
                                        "--accept-host-change is --machine-policy accept: give one policy");
                                return EXIT_USAGE;
                        }
                        o.machine_policy = MACHINE_ACCEPT;
                        policy_given = true;
                } else if (strcmp(argv[i], "--machine-policy") == 0 && i + 1 < argc) {
                        const char *policy = argv[++i];
                        unsigned p = 0;
                        while (p < _MACHINE_POLICY_MAX && strcmp(machine_policy_names[p], policy) != 0)
                                p++;
                        if (p == _MACHINE_POLICY_MAX) {
                                cli_error("import",
                                          "--machine-policy takes refuse, split or accept, not '%s'",
                                          policy);
                                return EXIT_USAGE;
                        }
                        if (policy_given && o.machine_policy != (MachinePolicy) p) {
                                cli_error("import", "two machine policies (%s and %s): give one",
                                          machine_policy_names[o.machine_policy], policy);
                                return EXIT_USAGE;
                        }
                        o.machine_policy = (MachinePolicy) p;
                        policy_given = true;
                } else if (strcmp(argv[i], "--experiment") == 0 && i + 1 < argc)
                        experiment = argv[++i];
                else if (argv[i][0] == '-') {
                        cli_error("import", "unknown or incomplete option %s (see alloclab import --help)",
                                  argv[i]);
                        return EXIT_USAGE;
                } else
                        files[n++] = argv[i];
        }
        if (n == 0) {
                cli_error("import", "expected one or more bundle FILEs (see alloclab import --help)");
                return EXIT_USAGE;
        }
        /* A name given here is checked here, not as a line of the spec an import makes. */
        if (experiment && !schema_is_identifier(experiment, true)) {
                _cleanup_free_ char *shown = text_shown(experiment);
                cli_error("import", "--experiment '%s' must be 1-64 letters, digits, '_', '-' or '.'",
                          shown ? shown : "?");
                return EXIT_USAGE;
        }
        size_t json = 0;
        for (size_t i = 0; i < n; i++)
                json += interop_is_json(files[i]);
        if (json > 0 && json < n) { /* before the database is opened: a usage error makes none */
                cli_error("import", "bundles and JSON files cannot be imported at once");
                return EXIT_USAGE;
        }
        /* Every file is read and checked before the database is opened: a refusal makes none. */
        _cleanup_free_ InteropRun **json_runs = json > 0 ? calloc(json, sizeof(InteropRun *)) : NULL;
        _cleanup_(bundle_files_freep) BundleFiles *bundles = NULL;
        _cleanup_free_ char *message = NULL;
        int e = EXIT_OK;
        if (json > 0 && !json_runs)
                return EXIT_ENVIRONMENT;
        for (size_t i = 0; i < json && e == EXIT_OK; i++)
                e = interop_read(files[i], experiment, &json_runs[i]);
        int r = json > 0 ? 0 : bundle_files_check(files, n, &bundles, &message);
        if (r < 0) {
                cli_error("import", "%s; nothing was imported", message ? message : strerror(-r));
                e = r == -E2BIG ? EXIT_USAGE : EXIT_ENVIRONMENT;
        }
        _cleanup_(store_freep) Store *store = NULL;
        _cleanup_close_ int lock_fd = -1;
        if (e == EXIT_OK && (e = cli_open_store("import", db_path, STORE_READ_WRITE, &store)) == EXIT_OK)
                e = cli_take_measure_lock("import", store, &lock_fd);
        for (size_t i = 0; i < json && e == EXIT_OK; i++) {
                int64_t run = 0;
                bool known = false;
                char layout[1024];
                if ((e = interop_record(store, json_runs[i], &run, &known)) == EXIT_OK && known)
                        printf("%s: imported before as run %lld (the same content); nothing added%s\n",
                               files[i], (long long) run,
                               experiment ? ", and --experiment does not rename it" : "");
                else if (e == EXIT_OK)
                        printf("imported %s as run %lld: %s\n", files[i], (long long) run,
                               interop_layout(json_runs[i], layout, sizeof(layout)));
        }
        for (size_t i = 0; i < json; i++)
                interop_run_free(json_runs[i]);
        if (json > 0 || e != EXIT_OK)
                return e;
        BundleTally tally;
        r = bundle_import(store, bundles, &o, &tally, &message);
        if (r < 0) {
                cli_error("import", "%s; nothing was imported", message ? message : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        printf("imported %zu run%s (%lld samples) from %zu file%s; %zu already here", tally.runs,
               tally.runs == 1 ? "" : "s", (long long) tally.samples, n, n == 1 ? "" : "s", tally.present);
        if (tally.split)
                printf("; %zu filed apart as another machine (%s%s): their machine name is known here with "
                       "another host fingerprint",
                       tally.split, tally.split_as, tally.split > 1 ? ", ..." : "");
        if (tally.accepted)
                printf("; %zu accepted into their machine's series with another host fingerprint (a new "
                       "baseline "
                       "there)",
                       tally.accepted);
        if (tally.pruned)
                printf("; %zu of the runs imported were pruned (statistics and their metric's values, no "
                       "measured "
                       "samples)",
                       tally.pruned);
        printf("\n");
        return EXIT_OK;
}
