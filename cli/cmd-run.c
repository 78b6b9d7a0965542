/* SPDX-License-Identifier: MIT */
/*
 * `alloclab run`, `resume` and `check`: their options, usage and operands. What they do is
 * cli/measure.c's (a run session measured in this process) and cli/check.c's.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/check.h"
#include "cli/commands.h"
#include "cli/measure.h"
#include "util/cleanup.h"
#include "util/text.h"

extern char **environ;

static const char run_usage[] =
        "Usage: alloclab run SPEC [--db PATH] [--samples N] [--format table|markdown|csv|json] [--quiet]\n"
        "                         [--compare-to latest|RUN [--relative] [--allow-missing-baseline]]\n"
        "                         [--label TEXT] [--commit REV] [--machine NAME]\n"
        "\n"
        "Runs the experiment in SPEC in this process and stores every sample in the database.\n"
        "\n"
        "  --db PATH       database file (default: $ALLOCLAB_DB, else $XDG_DATA_HOME/alloclab/results.db)\n"
        "  --samples N     override the spec's samples per cell and variant\n"
        "  --format F      result format on stdout: table (default), markdown, csv, json\n"
        "  --quiet         no progress line on stderr\n"
        "  --compare-to R  afterwards, compare the new run with run R (latest: the newest finished\n"
        "                  run of this experiment before it) as `compare --fail-on regression` does\n"
        "  --relative      ... by each variant's ratio to the baseline variant within each run\n"
        "  --allow-missing-baseline  with --compare-to latest, a first run (no earlier one) passes;\n"
        "                  without it, that is exit 8 before anything is measured\n"
        "  --label TEXT    what this run measured, in your words (shown by runs, show, report)\n"
        "  --commit REV    the version of what it measured (a git commit)\n"
        "  --machine NAME  the machine the run is filed under, which history and fleet group by\n"
        "                  (default: $ALLOCLAB_MACHINE, else the host name; docs/fleet.md)\n"
        "\n"
        "Exit status: 0 all samples ok; 1 some samples failed; 9 a variant was excluded (with\n"
        "--compare-to, also: a change worse by min_effect the gate cannot tell from noise); 2 usage;\n"
        "3 invalid spec; 4 environment or database error; 5 interrupted; with --compare-to, 6 a\n"
        "regression, 7 the runs are not comparable, 8 no earlier run (when several, the later in\n"
        "the order 0 1 9 2 3 4 5 6 7 8).\n";

static const char check_usage[] =
        "Usage: alloclab check SPEC\n"
        "\n"
        "Validates SPEC (FILE:LINE:COL: message for every problem) and checks that its allocators\n"
        "and programs exist on this machine. Writes nothing. SPEC may be - (standard input) or a\n"
        "pipe: alloclab check <(generate-spec).\n"
        "Exit status: 0 valid; 2 usage; 3 invalid spec; 4 allocator or program missing.\n";

/* The options of run and resume into *o, and their one operand into *ret_operand. */
static int parse_run_options(int argc, char **argv, MeasureOptions *o, const char **ret_operand) {
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },
                { "samples", required_argument, NULL, 's' },
                { "format", required_argument, NULL, 'f' },
                { "quiet", no_argument, NULL, 'q' },
                { "compare-to", required_argument, NULL, 'c' },
                { "label", required_argument, NULL, 'l' },
                { "commit", required_argument, NULL, 'C' },
                { "machine", required_argument, NULL, 'm' },
                { "relative", no_argument, NULL, 'R' },
                { "allow-missing-baseline", no_argument, NULL, 'M' },
                {},
        };
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "d:s:f:q", options, NULL)) >= 0;) {
                unsigned long long v;
                switch (c) {
                case 'd':
                        o->db_path = optarg;
                        break;
                case 's':
                        if (cli_parse_uint(optarg, SPEC_MAX_SAMPLES, &v) < 0 || v == 0) {
                                cli_error("run", "--samples must be between 1 and %d", SPEC_MAX_SAMPLES);
                                return EXIT_USAGE;
                        }
                        o->samples = (unsigned) v;
                        break;
                case 'f':
                        if (cli_format_option("run", optarg, &o->format) != EXIT_OK)
                                return EXIT_USAGE;
                        break;
                case 'q':
                        o->quiet = true;
                        break;
                case 'c':
                        if (strcmp(optarg, "latest") != 0 && cli_parse_uint(optarg, INT64_MAX, &v) < 0) {
                                cli_error("run", "--compare-to takes 'latest' or a run id, not '%s'",
                                          optarg);
                                return EXIT_USAGE;
                        }
                        o->compare_to = optarg;
                        break;
                case 'l':
                case 'C':
                        *(c == 'l' ? &o->label : &o->commit) = optarg;
                        break;
                case 'm':
                        o->machine = optarg;
                        break;
                case 'R':
                        o->compare_relative = true;
                        break;
                case 'M':
                        o->allow_missing_baseline = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        }
        if (optind + 1 != argc) {
                cli_error("run", "expected exactly one SPEC argument (see alloclab run --help)");
                return EXIT_USAGE;
        }
        if (o->compare_to && o->format == FORMAT_CSV) {
                cli_error(
                        "run",
                        "--format csv with --compare-to would print two tables of different columns in one "
                        "stream: use --format json (one document, the run and the comparison), or compare "
                        "the runs afterwards with alloclab compare --format csv");
                return EXIT_USAGE;
        }
        if ((o->compare_relative || o->allow_missing_baseline) && !o->compare_to) {
                cli_error("run", "%s is about --compare-to's run; give --compare-to too",
                          o->compare_relative ? "--relative" : "--allow-missing-baseline");
                return EXIT_USAGE;
        }
        *ret_operand = argv[optind];
        return EXIT_OK;
}

int cmd_run(int argc, char **argv) {
        if (cli_wants_help(argc, argv, run_usage))
                return EXIT_OK;
        MeasureOptions o = { .format = FORMAT_TABLE };
        const char *spec_path;
        int e = parse_run_options(argc, argv, &o, &spec_path);
        if (e != EXIT_OK)
                return e;
        _cleanup_(spec_freep) Spec *spec = NULL;
        if ((e = cli_load_spec("run", spec_path, &spec)) != EXIT_OK)
                return e;
        return cli_measure("run", spec, &o, NULL);
}

int cmd_check(int argc, char **argv) {
        if (cli_wants_help(argc, argv, check_usage))
                return EXIT_OK;
        for (int i = 1; i < argc; i++)
                if (argv[i][0] == '-' && argv[i][1]) {
                        cli_error("check",
                                  "unknown option '%s': check takes one SPEC (a file, a pipe, or - for "
                                  "standard input) and no options",
                                  argv[i]);
                        return EXIT_USAGE;
                }
        if (argc != 2) {
                cli_error("check", "expected exactly one SPEC argument (see alloclab check --help)");
                return EXIT_USAGE;
        }
        /* check writes nothing and runs nothing, so a spec may come from a pipe: `check -`,
         * `check <(generate)`. run and the daemon read files, whose text cannot change under them. */
        struct stat st;
        bool stream = strcmp(argv[1], "-") == 0 ||
                      (stat(argv[1], &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)));
        _cleanup_(spec_freep) Spec *spec = NULL;
        int e = stream ? cli_load_spec_stream("check", argv[1], &spec)
                       : cli_load_spec("check", argv[1], &spec);
        if (e != EXIT_OK)
                return e;
        _cleanup_(plan_freep) Plan *plan = NULL;
        if ((e = cli_check_plan("check", spec, &plan)) != EXIT_OK)
                return e;
        _cleanup_free_ char *shown = text_shown_as(argv[1], 0); /* one line, whatever its name */
        printf("%s: ok: experiment %s, %zu cells x %zu variants, %zu child runs\n", shown ? shown : argv[1],
               spec->experiment, plan->n_cells, plan->n_variants, plan->n_steps);
        cli_warn_powerless("check", plan);
        cli_warn_own_layer("check", plan);
        cli_warn_script("check", plan);
        cli_warn_undefined_metric("check", spec);
        return EXIT_OK;
}

static const char resume_usage[] =
        "Usage: alloclab resume RUN [--db PATH] [--format table|markdown|csv|json] [--quiet]\n"
        "\n"
        "Continues an interrupted run with the samples still missing: the stored spec, seed and\n"
        "sample counts give the same plan and order; steps already recorded are not run again (a\n"
        "reference smoke run may be repeated, unrecorded, to verify the rest of its cell).\n";

int cmd_resume(int argc, char **argv) {
        if (cli_wants_help(argc, argv, resume_usage))
                return EXIT_OK;
        MeasureOptions o = { .format = FORMAT_TABLE };
        const char *operand;
        int e = parse_run_options(argc, argv, &o, &operand);
        if (e != EXIT_OK)
                return e;
        unsigned long long run;
        if (o.samples || cli_parse_uint(operand, INT64_MAX, &run) < 0) {
                cli_error("resume", "expected a RUN number (and no --samples: a run resumes as it started)");
                return EXIT_USAGE;
        }
        return cli_resume((int64_t) run, &o);
}
