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
#include "cli/render.h"
#include "db/probejson.h"
#include "runner/allocator.h"
#include "runner/env.h"
#include "runner/output.h"
#include "runner/options.h"
#include "runner/plan.h"
#include "runner/probe-report.h"
#include "runner/spawn.h"
#include "util/cleanup.h"
#include "util/paths.h"
#include "util/strv.h"

extern char **environ;

static const char census_usage[] =
        "Usage: alloclab census [--preload NAME|PATH] [--json] -- CMD [ARGS...]\n"
        "\n"
        "Runs CMD once with the alloclab probe preloaded (and the allocator, with --preload) and\n"
        "prints the allocator that serves its malloc, with version and effective options, every\n"
        "allocator implementation loaded in the process, and call counters. CMD's output goes to\n"
        "stderr.\n"
        "\n"
        "Exit status: 0 reported; 1 reported with a warning (more than one allocator copy, or the\n"
        "probe did not load); 2 usage; 4 environment error.\n";

/* The caller's environment without LD_PRELOAD, then the probe (first) and the allocator. */
static int census_env(const char *probe, const char *allocator, char ***ret) {
        _cleanup_strv_free_ char **env = NULL;
        for (char **e = environ; *e; e++)
                if (strncmp(*e, "LD_PRELOAD=", 11) != 0 &&
                    strncmp(*e, PROBE_ENV_FD "=", strlen(PROBE_ENV_FD) + 1) != 0 &&
                    strv_append(&env, *e) < 0)
                        return -ENOMEM;
        _cleanup_free_ char *preload = NULL;
        char fd[16];
        snprintf(fd, sizeof(fd), "%d", PROBE_REPORT_FD);
        if (asprintf(&preload, "%s%s%s", probe, allocator ? ":" : "", allocator ? allocator : "") < 0 ||
            strv_env_set(&env, "LD_PRELOAD", preload) < 0 || strv_env_set(&env, PROBE_ENV_FD, fd) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(env);
        return 0;
}

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

        _cleanup_free_ char *probe = paths_probe();
        if (!probe) {
                cli_error("census", "cannot find liballoclab-probe.so (set ALLOCLAB_PROBE)");
                return EXIT_ENVIRONMENT;
        }
        Allocator allocator = {};
        if (preload) {
                int r = allocator_resolve(preload, &allocator);
                if (r < 0) {
                        if (allocator.entry)
                                cli_error("census", "allocator %s is not installed: apt-get install %s",
                                          preload, allocator.entry->package);
                        else
                                cli_error("census", "cannot preload %s: %s", preload, strerror(-r));
                        return EXIT_ENVIRONMENT;
                }
        }
        _cleanup_strv_free_ char **env = NULL;
        _cleanup_free_ char *exe = NULL;
        int r = census_env(probe, allocator.path, &env);
        if (r >= 0)
                r = plan_resolve_exe(command[0], env, NULL, &exe);
        /* An option the allocator does not know is ignored without a word: say so before the
         * census shows the allocator as if configured. */
        _cleanup_free_ char *unknown = NULL;
        if (r >= 0 && options_unknown(&allocator, environ, &unknown) > 0)
                fprintf(stderr, "alloclab census: warning: %s\n", unknown);
        allocator_done(&allocator);
        if (r < 0) {
                cli_error("census", "cannot run '%s': %s", command[0], strerror(-r));
                return EXIT_ENVIRONMENT;
        }

        _cleanup_close_ int report_fd = probe_report_memfd(PROBE_REQUEST_SMOKE);
        _cleanup_close_ int metrics = output_memfd("alloclab-metrics");
        _cleanup_close_ int stop_fd = cli_stop_signals_fd();
        if (report_fd < 0 || metrics < 0 || stop_fd < 0) {
                cli_error("census", "cannot set up the child: %s", strerror(ENOMEM));
                return EXIT_ENVIRONMENT;
        }
        SpawnRequest req = {
                .exe = exe,
                .argv = command,
                .envp = env,
                .timeout_ns = SPEC_MAX_TIMEOUT_NS,
                .stdout_fd = STDERR_FILENO,
                .stderr_fd = STDERR_FILENO,
                .metrics_fd = metrics,
                .probe_fd = report_fd,
                .cancel_fd = stop_fd,
        };
        SpawnResult res;
        r = spawn_run(&req, &res);
        if (r < 0 || res.end == SPAWN_EXEC_FAILED) {
                cli_error("census", "cannot run '%s': %s", command[0],
                          strerror(r < 0 ? -r : res.exec_errno));
                return EXIT_ENVIRONMENT;
        }
        if (res.end == SPAWN_CANCELED)
                return EXIT_INTERRUPTED;

        ProbeResult result;
        r = probe_report_decode(report_fd, &result);
        if (r < 0) {
                cli_error("census", "unreadable probe report: %s", strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        json_t *j = probejson_from_result(&result);
        if (!j) {
                cli_error("census", "out of memory");
                return EXIT_ENVIRONMENT;
        }
        if (json) {
                json_object_set_new(j, "exit_code",
                                    res.end == SPAWN_EXITED ? json_integer(res.exit_code) : json_null());
                json_object_set_new(j, "signal",
                                    res.end == SPAWN_SIGNALED ? json_integer(res.signal) : json_null());
                json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                fputc('\n', stdout);
        } else {
                printf("command: %s: ", command[0]);
                if (res.end == SPAWN_SIGNALED)
                        printf("killed by signal %d (%s)\n", res.signal, strsignal(res.signal));
                else
                        printf("exit code %d\n", res.exit_code);
                render_probe(stdout, j);
        }
        json_decref(j);
        bool warn = !result.loaded || probe_allocator_copies(&result) > 1;
        return warn ? EXIT_FAILURES : EXIT_OK;
}
