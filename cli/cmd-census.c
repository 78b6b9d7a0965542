/* SPDX-License-Identifier: MIT */
/*
 * `alloclab census -- CMD [ARGS...]`: runs a command once under the probe and reports which
 * allocator serves its malloc, every allocator copy loaded in it, and the probe's counters.
 * The command keeps the caller's environment (it is a diagnosis of the program as the user
 * runs it), minus any LD_PRELOAD, plus the probe and an optional allocator.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "configs/catalog.h"
#include "cli/render.h"
#include "runner/allocator.h"
#include "runner/census.h"
#include "runner/options.h"
#include "runner/probe-json.h"
#include "util/cleanup.h"
#include "util/paths.h"

extern char **environ;

static const char census_usage[] =
        "Usage: alloclab census [--preload NAME|PATH] [--json] -- CMD [ARGS...]\n"
        "\n"
        "Runs CMD once with the alloclab probe preloaded (and the allocator, with --preload) and\n"
        "prints the allocator that serves its malloc, with version and effective options, every\n"
        "allocator implementation loaded in the process, and call counters. CMD's output goes to\n"
        "stderr.\n"
        "\n"
        "Exit status: 0 reported; 1 reported with a warning (more than one allocator copy, the\n"
        "probe did not load, an option the allocator does not know or rejected, a program of the\n"
        "tree run without the probe); 2 usage; 4 environment error.\n";

int cmd_census(int argc, char **argv) {
        static const struct option options[] = {
                { "preload", required_argument, NULL, 'p' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *preload = NULL;
        bool json = false;
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "+p:jh", options, NULL)) >= 0;) {
                switch (c) {
                case 'p':
                        preload = optarg;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'h':
                        printf("%s", census_usage);
                        return EXIT_OK;
                default:
                        return EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                cli_error("census", "expected a command after the options (see alloclab census --help)");
                return EXIT_USAGE;
        }
        char **command = argv + optind;

        _cleanup_free_ char *probe = paths_probe(), *spawner = paths_spawner();
        if (!probe || !spawner) {
                cli_error("census", "cannot find %s (set %s)",
                          probe ? "alloclab-spawner, which starts the command" : "liballoclab-probe.so",
                          probe ? "ALLOCLAB_SPAWNER" : "ALLOCLAB_PROBE");
                return EXIT_ENVIRONMENT;
        }
        _cleanup_(allocator_done) Allocator allocator = {};
        if (preload) {
                int r = allocator_resolve(preload, &allocator);
                if (r < 0) {
                        if (allocator.entry)
                                cli_error("census", "allocator %s is not installed: apt-get install %s",
                                          preload, allocator.entry->package);
                        else if (r == -EINVAL && preload[0] != '/') {
                                _cleanup_free_ char *said = catalog_unknown(preload);
                                cli_error("census", "%s", said ? said : strerror(ENOMEM));
                                return said ? EXIT_USAGE : EXIT_ENVIRONMENT;
                        } else
                                cli_error("census", "cannot preload %s: %s", preload, strerror(-r));
                        return EXIT_ENVIRONMENT;
                }
        }
        /* An option the allocator does not know is ignored without a word: say so before the
         * census shows the allocator as if configured. */
        _cleanup_free_ char *unknown = NULL;
        bool unknown_options = options_unknown(&allocator, environ, &unknown, NULL) > 0;
        if (unknown_options)
                fprintf(stderr, "alloclab census: warning: %s\n", unknown);
        _cleanup_close_ int stop_fd = cli_stop_signals_fd();
        if (stop_fd < 0) {
                cli_error("census", "cannot set up the child: %s", strerror(ENOMEM));
                return EXIT_ENVIRONMENT;
        }
        _cleanup_(census_done) Census census = {};
        int r = census_run(command, environ, probe, allocator.path, stop_fd, &census);
        if (r < 0) {
                cli_error("census", "cannot run '%s': %s", command[0], strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        const SpawnResult *res = &census.spawn;
        if (res->end == SPAWN_CANCELED)
                return EXIT_INTERRUPTED;
        if (census.report_error < 0) {
                cli_error("census", "unreadable probe report: %s", strerror(-census.report_error));
                return EXIT_ENVIRONMENT;
        }
        const ProbeResult *result = &census.probe;
        json_t *j = probe_json_from_result(result, census.allocator_stats);
        if (!j) {
                cli_error("census", "out of memory");
                return EXIT_ENVIRONMENT;
        }
        if (json) {
                json_object_set_new(j, "exit_code",
                                    res->end == SPAWN_EXITED ? json_integer(res->exit_code) : json_null());
                json_object_set_new(j, "signal",
                                    res->end == SPAWN_SIGNALED ? json_integer(res->signal) : json_null());
                json_object_set_new(j, "config_complaint",
                                    census.complaint[0] ? json_string(census.complaint) : json_null());
                json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                fputc('\n', stdout);
        } else {
                printf("command: %s: ", command[0]);
                if (res->end == SPAWN_SIGNALED)
                        printf("killed by signal %d (%s)\n", res->signal, strsignal(res->signal));
                else
                        printf("exit code %d\n", res->exit_code);
                render_probe(stdout, j);
        }
        json_decref(j);
        const char *layer_program = NULL;
        for (uint32_t i = 0; i < result->n_processes && !layer_program; i++)
                if (options_own_layer(result->report.processes[i].program, getenv("PYTHONMALLOC")))
                        layer_program = result->report.processes[i].program;
        if (!layer_program && (result->report.state & PROBE_STATE_UNLISTED_PYMALLOC))
                layer_program = "python (past the processes the probe lists)";
        if (layer_program)
                fprintf(stderr, "alloclab census: note: %s %s\n", layer_program,
                        options_own_layer("python", NULL));
        if (census.complaint[0]) /* after what it shows as effective: the allocator ran without it */
                fprintf(stderr,
                        "alloclab census: warning: the allocator rejected its configuration: %s (the "
                        "effective options are what it ran with)\n",
                        census.complaint);
        /* A program of the tree that ran without the probe ran unmeasured, under whatever its
         * LD_PRELOAD named (run makes such a variant preload-ineffective). */
        bool unfollowed = false;
        for (uint32_t i = 0; i < result->n_processes; i++) {
                const ProbeProcess *p = &result->report.processes[i];
                if (!p->unprobed_exec[0])
                        continue;
                fprintf(stderr,
                        "alloclab census: warning: %s (pid %d) executed %s with LD_PRELOAD=%s, without the "
                        "probe: what that program ran under is not shown above\n",
                        p->program, (int) p->pid, p->unprobed_exec, p->unprobed_preload);
                unfollowed = true;
        }
        bool warn = !result->loaded || probe_allocator_copies(result) > 1 || census.complaint[0] ||
                    unknown_options || unfollowed;
        return warn ? EXIT_FAILURES : EXIT_OK;
}
