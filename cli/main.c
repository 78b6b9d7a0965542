/* SPDX-License-Identifier: MIT */
/*
 * alloclab: the command-line front end. main() only dispatches to the command table.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/render.h"
#include "util/cleanup.h"

static const Command commands[] = {
        { "run", cmd_run,
          "SPEC [--db PATH] [--samples N] [--format F] [--quiet] [--compare-to latest|RUN [--relative] "
          "[--allow-missing-baseline]] [--label T] [--commit REV]",
          "run an experiment and store it (and gate it against an earlier run)" },
        { "quick", cmd_quick, "-a ALLOCATORS [--samples N] [--param N=V,..] [--prepare CMD] -- CMD [ARGS]",
          "measure a command under allocators without a spec file" },
        { "suite", cmd_suite, "[NAME...] [--threads LIST] [--scale PERCENT] [--samples N] [--format F]",
          "run the bundled workloads under every installed allocator and summarize" },
        { "bisect", cmd_bisect, "SPEC --variant NAME --good REV --bad REV|--at REV [--samples N]",
          "find the commit at which an allocator built from source got worse" },
        { "check", cmd_check, "SPEC", "validate a spec without running it" },
        { "resume", cmd_resume, "RUN [--db PATH] [--format F] [--quiet]", "finish an interrupted run" },
        { "runs", cmd_runs, "[EXPERIMENT] [--db PATH] [--last N]", "list stored runs" },
        { "show", cmd_show, "[RUN|latest] [--db PATH] [--format F]", "print a stored run" },
        { "report", cmd_report, "[RUN|latest] -o FILE [--compare RUN_B] [--history] [--db PATH]",
          "write a self-contained HTML report with plots" },
        { "publish", cmd_publish, "DIR [--db PATH] [--quiet]",
          "write a static site: experiments x machines, timelines, suites, fleets and every run" },
        { "history", cmd_history,
          "EXPERIMENT [--cell NAME=VALUE ...] [--variant V] [--metric M] [--relative] [--last N] [--format "
          "F]",
          "an experiment's medians over time, with regressions and improvements flagged" },
        { "compare", cmd_compare, "RUN_A RUN_B [--db PATH] [--format F] [--fail-on regression] [--relative]",
          "compare two runs of an experiment, cell by cell, and say what differs between them" },
        { "fleet", cmd_fleet,
          "EXPERIMENT [--slurm-job [CLUSTER:]JOB] [--expect-machines N] [--db PATH] [--format F]",
          "an experiment across machines: each machine's ratios, and on how many machines each verdict "
          "holds" },
        { "prune", cmd_prune, "[EXPERIMENT] --keep-last N | --older-than D [--keep-every N] [--dry-run]",
          "drop old runs' samples, keeping their statistics and verdicts" },
        { "export", cmd_export,
          "[RUN|latest] --what samples|stats|hyperfine [--format F] | RUN... --bundle FILE",
          "write a stored run's samples or statistics (CSV, JSON, Markdown, hyperfine's JSON), or a "
          "bundle" },
        { "import", cmd_import,
          "FILE... [--db PATH] [--machine-policy refuse|split|accept] [--experiment NAME]",
          "merge runs from bundles, or import hyperfine's or pyperf's JSON, into the database" },
        { "allocators", cmd_allocators, "[--format F | --names]",
          "list the allocator catalog on this machine" },
        { "census", cmd_census, "[--preload A] [--json] -- CMD [ARGS...]",
          "which allocators serve and live in a process" },
        { "submit", cmd_submit, "SPEC [--wait] [--socket PATH]", "queue an experiment with alloclabd" },
        { "status", cmd_status, "[--socket PATH]", "the daemon's state" },
        { "queue", cmd_queue, "[--socket PATH]", "the daemon's jobs" },
        { "cancel", cmd_cancel, "JOB [--socket PATH]", "cancel a queued or running job" },
        { "schedules", cmd_schedules, "[--socket PATH]", "the daemon's scheduled specs" },
};

static void usage(FILE *f) {
        fprintf(f, "Usage: alloclab COMMAND [ARGS]\n\nIsolated allocator experiments.\n\nCommands:\n");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                fprintf(f, "  %-11s %-52s %s\n", commands[i].name, commands[i].usage, commands[i].summary);
        fprintf(f, "\n`alloclab COMMAND --help` describes a command; README.md and docs/ the rest.\n");
}

static int run(int argc, char **argv) {
        if (argc < 2) {
                usage(stderr);
                return EXIT_USAGE;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
                usage(stdout);
                return EXIT_OK;
        }
        if (strcmp(argv[1], "--version") == 0) {
                printf("alloclab %s\n", ALLOCLAB_VERSION);
                return EXIT_OK;
        }
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(argv[1], commands[i].name) == 0)
                        return commands[i].run(argc - 1, argv + 1);
        cli_error(NULL, "unknown command '%s' (see alloclab --help)", argv[1]);
        return EXIT_USAGE;
}

int main(int argc, char **argv) {
        render_use_colour(cli_colour(stdout));
        (void) output_guard(); /* without it (no memory), output is what it was */
        int e = run(argc, argv);
        /* A table that did not reach its file is no result (a full disk, /dev/full). */
        int r = output_flush();
        if (r < 0 && r != -EPIPE) {
                cli_error(NULL, "cannot write the output: %s", strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        return e;
}
