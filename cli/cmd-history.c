/* SPDX-License-Identifier: MIT */
/*
 * `alloclab runs` and `alloclab show`: read the history. The database is opened for writing
 * when possible so that runs of vanished processes are marked interrupted before they are
 * listed; a read-only file is still readable.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/interop.h"
#include "cli/render.h"
#include "db/export.h"
#include "db/history.h"
#include "db/query.h"
#include "util/cleanup.h"
#include "util/strv.h"

static const char runs_usage[] =
        "Usage: alloclab runs [EXPERIMENT] [--db PATH] [--last N] [--format table|markdown|csv|json]\n"
        "\n"
        "Lists stored runs, newest first by when they started (not by when they arrived here: an\n"
        "import keeps when they ran), default the last 20; MACHINE is the name each run is filed\n"
        "under (run --machine, else its host name).\n";

static const char export_usage[] =
        "Usage: alloclab export [RUN|latest] --what samples|stats|hyperfine [--format csv|json|markdown]\n"
        "                       [--db PATH]\n"
        "       alloclab export RUN... --bundle FILE [--db PATH]\n"
        "\n"
        "Writes a stored run as a table with stable, documented columns (docs/export.md):\n"
        "  samples  every sample as stored, one row each, in the database's own units;\n"
        "  stats    per metric, cell and variant: n, median, MAD, mean, stddev, min, max, the ratio\n"
        "           to the baseline with its interval, p-value, test, verdict and outliers;\n"
        "  hyperfine the samples in hyperfine's --export-json layout (JSON), one result per cell and\n"
        "           variant, for the tools that read hyperfine's files.\n"
        "CSV (the default) loads straight into pandas or a spreadsheet; JSON is an array of rows.\n"
        "\n"
        "With --bundle, writes the runs (numbers, latest, or all: every run not still running) with\n"
        "everything they refer to into FILE, an SQLite file that alloclab import merges into another\n"
        "database (docs/fleet.md).\n";

static const char show_usage[] =
        "Usage: alloclab show [RUN|latest] [--db PATH] [--format table|markdown|csv|json] [--allocators]\n"
        "\n"
        "Prints a stored run's result table (default: the latest run). With --allocators, each\n"
        "variant's allocator instead: file, sha256, package version and what the probe found in its\n"
        "first smoke run (effective allocator, version, effective options, census).\n";

typedef struct ReadOptions {
        const char *db_path;
        OutputFormat format;
        bool format_given; /* --format on the command line */
        unsigned long long last;
        bool allocators;
        const char *what; /* export: "samples" or "stats" */
        const char *argument;
} ReadOptions;

static int parse_read_options(const char *command, int argc, char **argv, ReadOptions *o) {
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },   { "format", required_argument, NULL, 'f' },
                { "last", required_argument, NULL, 'n' }, { "allocators", no_argument, NULL, 'a' },
                { "what", required_argument, NULL, 'w' }, {},
        };
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "d:f:n:aw:", options, NULL)) >= 0;) {
                switch (c) {
                case 'd':
                        o->db_path = optarg;
                        break;
                case 'f':
                        if (cli_format_option(command, optarg, &o->format) != EXIT_OK)
                                return EXIT_USAGE;
                        o->format_given = true;
                        break;
                case 'a':
                        o->allocators = true;
                        break;
                case 'w':
                        if (strcmp(optarg, "samples") != 0 && strcmp(optarg, "stats") != 0 &&
                            strcmp(optarg, "hyperfine") != 0) {
                                cli_error(command, "--what is samples, stats or hyperfine, got '%s'",
                                          optarg);
                                return EXIT_USAGE;
                        }
                        o->what = optarg;
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
        ReadOptions o = { .last = 20, .format = FORMAT_TABLE };
        int e = parse_read_options("runs", argc, argv, &o);
        if (e != EXIT_OK)
                return e;
        _cleanup_(store_freep) Store *store = NULL;
        if ((e = cli_open_for_reading("runs", o.db_path, &store)) != EXIT_OK)
                return e;
        RunSummary *runs = NULL;
        size_t n = 0;
        int r = query_runs(store, o.argument, (size_t) o.last, &runs, &n);
        if (r < 0) {
                cli_error("runs", "%s", r == -EIO ? store_error(store) : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        r = render_runs(stdout, o.format, runs, n);
        query_runs_free(runs, n);
        if (r < 0 || fflush(stdout) != 0) {
                cli_error("runs", "cannot write the list");
                return EXIT_ENVIRONMENT;
        }
        return EXIT_OK;
}

/* The store and the run the options name. */
static int open_run(const char *command, const ReadOptions *o, Store **ret_store, int64_t *ret_run) {
        int e = cli_open_for_reading(command, o->db_path, ret_store);
        return e != EXIT_OK ? e : cli_resolve_run(command, *ret_store, o->argument, ret_run);
}

static int read_report(const char *command, Store *store, int64_t run_id, const char *metric, Report **ret) {
        int r = query_report(store, run_id, metric, ret);
        return r < 0 ? cli_query_failed(command, store, run_id, r) : EXIT_OK;
}

/* What built a variant's allocator from source (its build JSON), a few lines under it. */
static void print_build(const char *text) {
        json_auto_t *b = text ? json_loads(text, 0, NULL) : NULL;
        if (!b)
                return;
        const char *commit = json_string_value(json_object_get(b, "commit"));
        printf("  built from %s", json_string_value(json_object_get(b, "source")));
        if (commit)
                printf(" at %s (commit %s%s)", json_string_value(json_object_get(b, "describe")), commit,
                       json_is_true(json_object_get(b, "dirty")) ? ", with uncommitted changes" : "");
        else
                printf(" (a plain directory, tree %.16s)", json_string_value(json_object_get(b, "tree")));
        printf("\n  build commands:");
        size_t i;
        const json_t *line;
        json_array_foreach(json_object_get(b, "commands"), i, line)
                printf("%s %s", i ? ";" : "", json_string_value(line));
        const char *name;
        const json_t *value;
        json_object_foreach(json_object_get(b, "variables"), name, value)
                printf("\n  with %s=%s", name, json_string_value(value));
        printf("\n  output %s, compiler %s, %s %.1f s\n", json_string_value(json_object_get(b, "output")),
               json_string_value(json_object_get(b, "compiler")),
               json_is_true(json_object_get(b, "cached")) ? "from the cache, built earlier in" : "built in",
               json_number_value(json_object_get(b, "build_seconds")));
}

static int show_allocators(Store *store, int64_t run_id, OutputFormat format) {
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
        if (format != FORMAT_TABLE && format != FORMAT_JSON) {
                query_allocators_free(list, n);
                cli_error("show", "--allocators prints a table or JSON (--format json)");
                return EXIT_USAGE;
        }
        if (format == FORMAT_JSON) {
                json_auto_t *variants = json_array();
                for (size_t i = 0; i < n; i++) {
                        const VariantAllocator *a = &list[i];
                        json_t *probe = a->probe_report ? json_loads(a->probe_report, 0, NULL) : NULL;
                        json_t *build = a->build ? json_loads(a->build, 0, NULL) : NULL;
                        json_array_append_new(variants,
                                              json_pack("{s:s, s:s, s:o, s:s, s:s, s:o, s:o}", "variant",
                                                        a->variant, "allocator", a->allocator, "path",
                                                        a->path[0] ? json_string(a->path) : json_null(),
                                                        "sha256", a->sha256, "version", a->version, "build",
                                                        build ? build : json_null(), "probe",
                                                        probe ? probe : json_null()));
                }
                query_allocators_free(list, n);
                r = json_dumpf(variants, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                fputc('\n', stdout);
                return r < 0 || fflush(stdout) != 0 ? EXIT_ENVIRONMENT : EXIT_OK;
        }
        for (size_t i = 0; i < n; i++) {
                const VariantAllocator *a = &list[i];
                /* An import names the allocator from its command: no version, file or hash of it. */
                printf("%s%s: %s%s%s\n  file %s\n  sha256 %s\n", i ? "\n" : "", a->variant, a->allocator,
                       a->version[0] ? " " : "", a->version, a->path[0] ? a->path : "(nothing preloaded)",
                       a->sha256[0] ? a->sha256 : "(not recorded)");
                print_build(a->build);
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
        int64_t run_id;
        if ((e = open_run("show", &o, &store, &run_id)) != EXIT_OK)
                return e;
        if (o.allocators)
                return show_allocators(store, run_id, o.format);

        _cleanup_(query_report_freep) Report *rep = NULL;
        if ((e = read_report("show", store, run_id, NULL, &rep)) != EXIT_OK)
                return e;
        if (render_for(o.format)(stdout, rep) < 0 || fflush(stdout) != 0) {
                cli_error("show", "cannot write the result");
                return EXIT_ENVIRONMENT;
        }
        return EXIT_OK;
}

/* Every metric's statistics, one table: the rows of query_report for each metric in turn. */
static int stats_table(Store *store, int64_t run_id, json_t **ret) {
        _cleanup_strv_free_ char **metrics = NULL;
        int r = query_run_metrics(store, run_id, &metrics);
        if (r < 0)
                return cli_query_failed("export", store, run_id, r);
        json_auto_t *table = NULL;
        for (char **m = metrics; *m; m++) {
                _cleanup_(query_report_freep) Report *rep = NULL;
                int e = read_report("export", store, run_id, *m, &rep);
                if (e != EXIT_OK)
                        return e;
                json_auto_t *part = render_stats_table(rep);
                if (!part)
                        return cli_query_failed("export", store, run_id, -ENOMEM);
                if (!table)
                        table = json_incref(part);
                else
                        json_array_extend(json_object_get(table, "rows"), json_object_get(part, "rows"));
        }
        if (!table) { /* no statistics at all (every sample failed): the primary metric's empty rows */
                _cleanup_(query_report_freep) Report *rep = NULL;
                int e = read_report("export", store, run_id, NULL, &rep);
                if (e != EXIT_OK)
                        return e;
                table = render_stats_table(rep);
        }
        *ret = TAKE_PTR(table);
        return *ret ? EXIT_OK : cli_query_failed("export", store, run_id, -ENOMEM);
}

int cmd_export(int argc, char **argv) {
        if (cli_wants_help(argc, argv, export_usage))
                return EXIT_OK;
        for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "--bundle") == 0)
                        return cmd_export_bundle(argc, argv);
        ReadOptions o = { .format = FORMAT_CSV };
        int e = parse_read_options("export", argc, argv, &o);
        if (e != EXIT_OK)
                return e;
        if (!o.what) {
                cli_error("export", "say what to export: --what samples or --what stats");
                return EXIT_USAGE;
        }
        if (o.format == FORMAT_TABLE) {
                cli_error("export", "export formats are csv, json and markdown");
                return EXIT_USAGE;
        }
        if (strcmp(o.what, "hyperfine") == 0 && o.format_given && o.format != FORMAT_JSON) {
                cli_error("export", "--what hyperfine writes hyperfine's JSON layout, in no other format");
                return EXIT_USAGE;
        }
        _cleanup_(store_freep) Store *store = NULL;
        int64_t run_id;
        if ((e = open_run("export", &o, &store, &run_id)) != EXIT_OK)
                return e;

        json_auto_t *table = NULL;
        if (strcmp(o.what, "samples") == 0 || strcmp(o.what, "hyperfine") == 0) {
                _cleanup_free_ char *pruned = NULL;
                int r = query_run_pruned(store, run_id, &pruned);
                if (r < 0)
                        return cli_query_failed("export", store, run_id, r);
                if (pruned) {
                        cli_error(
                                "export",
                                "run %lld was pruned on %s: its measured samples are gone (alloclab prune); "
                                "--what stats has its statistics, show its figures and verdicts",
                                (long long) run_id, pruned);
                        return EXIT_ENVIRONMENT;
                }
                r = export_samples(store, run_id, &table);
                if (r < 0)
                        return cli_query_failed("export", store, run_id, r);
                json_auto_t *cpu = NULL;
                if (strcmp(o.what, "hyperfine") == 0 && (r = export_import_cpu(store, run_id, &cpu)) < 0)
                        return cli_query_failed("export", store, run_id, r);
                if (strcmp(o.what, "hyperfine") == 0) {
                        if (interop_export_hyperfine(stdout, table, cpu) < 0 || fflush(stdout) != 0) {
                                cli_error("export", "cannot write the results");
                                return EXIT_ENVIRONMENT;
                        }
                        return EXIT_OK;
                }
        } else if ((e = stats_table(store, run_id, &table)) != EXIT_OK)
                return e;
        if (render_rows(stdout, o.format, table) < 0 || fflush(stdout) != 0) {
                cli_error("export", "cannot write the table");
                return EXIT_ENVIRONMENT;
        }
        return EXIT_OK;
}

static const char history_usage[] =
        "Usage: alloclab history EXPERIMENT [--cell NAME=VALUE ...] [--variant V] [--metric M]\n"
        "                        [--relative] [--last N] [--db PATH] [--format table|markdown|csv|json]\n"
        "\n"
        "The timeline of an experiment's medians, per cell, variant and machine, over its last N\n"
        "finished runs (default 20) in the order they ran (their start time, wherever they were\n"
        "imported from): each run's median with its 95% interval, and change points. Runs are the\n"
        "unit: a run is out of line when its median lies outside the prediction interval of the same\n"
        "machine's earlier run medians (since the last change point, at most 10 runs; their spread\n"
        "counted), and a change point - regression or improvement - when the next run is out of line\n"
        "the same way; the last run out of line is a tentative change point.\n"
        "\n"
        "--relative follows each variant's ratio to the baseline variant within each run instead of\n"
        "its median: the median of the rounds' ratios (the variant's value over the baseline's in the\n"
        "same round). A machine that runs faster or slower moves both sides of a ratio alike, so on\n"
        "a shared machine a change of one variant stands out where medians wander; a change that\n"
        "moves every variant alike (the program's own) does not show.\n";

/* One row per point, the same field names as show and compare. */
static json_t *history_table(const History *h) {
        static const char *const names[] = {
                "experiment",
                "cell",
                "variant",
                "metric",
                "run_id",
                "started_at",
                "machine",
                "host",
                "n",
                "median",
                "ci_low",
                "ci_high",
                "change",
                "ratio",
                "ratio_ci_low",
                "ratio_ci_high",
                "p_value",
                "baseline_runs",
                "baseline_from",
                "host_changed",
                "config_change",
                "label",
                "commit",
                "revision",
                "tentative",
                "confirmed_by",
                "out_of_line",
                "between_run_spread",
                "relative_to",
        };
        json_t *table = render_table_new(names, ELEMENTSOF(names));
        for (size_t s = 0; s < h->n_series; s++)
                for (size_t i = 0; i < h->series[s].n_points; i++) {
                        const HistorySeries *x = &h->series[s];
                        const HistoryPoint *p = &x->points[i];
                        bool k = p->baseline_runs > 0;
                        const char *change = history_change_word(p->change);
                        json_t *values[] = {
                                json_string(h->experiment),
                                json_string(x->cell),
                                json_string(x->variant),
                                json_string(h->metric),
                                json_integer(p->run_id),
                                json_string(p->started_at),
                                json_string(p->machine),
                                json_string(p->hostname),
                                json_integer((json_int_t) p->n),
                                json_real(p->median),
                                json_real(p->lo),
                                json_real(p->hi),
                                change ? json_string(change) : json_null(),
                                k ? render_json_number(p->against.ratio) : json_null(),
                                k ? render_json_number(p->against.lo) : json_null(),
                                k ? render_json_number(p->against.hi) : json_null(),
                                k ? render_json_number(p->against.p) : json_null(),
                                json_integer((json_int_t) p->baseline_runs),
                                k ? json_integer(p->baseline_from) : json_null(),
                                json_boolean(p->host_changed),
                                p->config_change ? json_string(p->config_change) : json_null(),
                                p->label ? json_string(p->label) : json_null(),
                                p->commit ? json_string(p->commit) : json_null(),
                                p->revision ? json_string(p->revision) : json_null(),
                                json_boolean(p->tentative),
                                p->confirmed_by ? json_integer(p->confirmed_by) : json_null(),
                                json_boolean(p->outside),
                                k ? render_json_number(p->spread) : json_null(),
                                h->relative_to ? json_string(h->relative_to) : json_null(),
                        };
                        render_table_add_row(table, values, ELEMENTSOF(values));
                }
        return table;
}

/* A series for people: values with units, and the change points spelled out. */
static json_t *series_display(const History *h, const HistorySeries *s) {
        json_t *rows = json_array();
        for (size_t i = 0; i < s->n_points; i++) {
                const HistoryPoint *p = &s->points[i];
                char median[64], lo[64], hi[64], interval[160], change[512] = "";
                if (h->relative_to) { /* a ratio, no unit */
                        snprintf(median, sizeof(median), "%.3f", p->median);
                        snprintf(interval, sizeof(interval), "[%.3f, %.3f]", p->lo, p->hi);
                } else {
                        render_metric_value(h->metric, h->unit, p->median, median, sizeof(median));
                        snprintf(interval, sizeof(interval), "[%s, %s]",
                                 render_metric_value(h->metric, h->unit, p->lo, lo, sizeof(lo)),
                                 render_metric_value(h->metric, h->unit, p->hi, hi, sizeof(hi)));
                }
                if (p->host_changed)
                        snprintf(change, sizeof(change),
                                 "HOST CHANGED (another fingerprint): a new baseline");
                else if (p->config_change)
                        snprintf(change, sizeof(change), "CONFIG CHANGED (%s): a new baseline",
                                 p->config_change);
                else if (p->change != HISTORY_STEADY && p->tentative)
                        snprintf(
                                change, sizeof(change),
                                "%s? %.2fx [%.2f, %.2f] vs %zu runs %lld-%lld, tentative until the next run",
                                p->change == HISTORY_REGRESSION ? "REGRESSION" : "IMPROVEMENT",
                                p->against.ratio, p->against.lo, p->against.hi, p->baseline_runs,
                                (long long) p->baseline_from, (long long) s->points[i - 1].run_id);
                else if (p->change != HISTORY_STEADY)
                        snprintf(change, sizeof(change),
                                 "%s %.2fx [%.2f, %.2f] vs %zu runs %lld-%lld, confirmed by run %lld",
                                 p->change == HISTORY_REGRESSION ? "REGRESSION" : "IMPROVEMENT",
                                 p->against.ratio, p->against.lo, p->against.hi, p->baseline_runs,
                                 (long long) p->baseline_from, (long long) s->points[i - 1].run_id,
                                 (long long) p->confirmed_by);
                else if (p->outside)
                        snprintf(change, sizeof(change), "out of line %.2fx, not confirmed by the next run",
                                 p->against.ratio);
                char run[256];
                snprintf(run, sizeof(run), "%lld%s%s%s", (long long) p->run_id, p->label ? " (" : "",
                         p->label ? p->label : "", p->label ? ")" : "");
                json_array_append_new(
                        rows, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s}", "run", run, "revision",
                                        p->revision ? p->revision : "", "started", p->started_at, "host",
                                        p->hostname, h->relative_to ? "ratio" : "median", median,
                                        "95% interval", interval, "n", (json_int_t) p->n, "change", change));
        }
        /* The revision column where the variant is built from source: the commit axis. */
        bool built = false;
        for (size_t i = 0; i < s->n_points; i++)
                built |= s->points[i].revision != NULL;
        json_t *columns = json_pack("[s, s, s, s, s, s, s]", "run", "started", "host",
                                    h->relative_to ? "ratio" : "median", "95% interval", "n", "change");
        if (built && columns)
                json_array_insert_new(columns, 1, json_string("revision"));
        return json_pack("{s:o, s:o}", "columns", columns, "rows", rows);
}

static int render_history(FILE *f, OutputFormat format, const History *h) {
        if (format == FORMAT_CSV || format == FORMAT_JSON) {
                json_auto_t *table = history_table(h);
                return table ? render_rows(f, format, table) : -ENOMEM;
        }
        bool markdown = format == FORMAT_MARKDOWN;
        fprintf(f, "%shistory of %s, metric %s, last %zu finished runs in the order they ran\n",
                markdown ? "### " : "", h->experiment, h->metric, h->n_runs);
        if (h->n_pruned)
                fprintf(f,
                        "%s%zu of these runs are pruned (alloclab prune): their points come from the values "
                        "kept "
                        "of their own metric, and for another metric they have none\n",
                        markdown ? "\n" : "", h->n_pruned);
        if (h->relative_to)
                fprintf(f,
                        "%seach run's ratio: of each round, the variant's value over the baseline variant's "
                        "(%s in the latest run) in the same cell; their median, with its 95%% interval\n",
                        markdown ? "\n" : "", h->relative_to);
        fprintf(f,
                "%schange points: each run's %s against the prediction interval (1 - alpha) of up to %d "
                "earlier runs' %ss since the last change, their spread pooled with an assumed +-%.0f%% "
                "worth %d runs (so mostly assumed while they are few); confirmed when the next run is out "
                "of line the same way (docs/analysis.md)\n",
                markdown ? "\n" : "", h->relative_to ? "ratio" : "median", HISTORY_WINDOW,
                h->relative_to ? "ratio" : "median", 100 * CHANGEPOINT_PRIOR_SPREAD, CHANGEPOINT_PRIOR_RUNS);
        if (h->n_series == 0)
                fprintf(f, "\nno measured samples match\n");
        for (size_t s = 0; s < h->n_series; s++) {
                fprintf(f, "\n%s[%s] %s%s%s\n%s", markdown ? "#### " : "", h->series[s].cell,
                        h->series[s].variant, h->many_machines ? " on " : "",
                        h->many_machines ? h->series[s].machine : "", markdown ? "\n" : "");
                json_auto_t *display = series_display(h, &h->series[s]);
                int r = display ? render_rows(f, markdown ? FORMAT_MARKDOWN : FORMAT_TABLE, display)
                                : -ENOMEM;
                if (r < 0)
                        return r;
        }
        return ferror(f) ? -EIO : 0;
}

/* items[0..n) as "a, b, c" into buf, cut with "..." where it would not fit. */
static const char *joined(char *const *items, size_t n, char *buf, size_t size) {
        size_t at = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < n && at < size; i++) {
                int w = snprintf(buf + at, size - at, "%s%s", i ? ", " : "", items[i]);
                if (w < 0 || (size_t) w >= size - at) {
                        snprintf(buf + (size > 4 ? size - 4 : 0), size > 4 ? 4 : size, "...");
                        break;
                }
                at += (size_t) w;
        }
        return buf;
}

/* Whether a cell's label ("n=100000 width=64") has every NAME=VALUE of filters as a word. */
static bool label_has_all(const char *label, char *const *filters) {
        for (char *const *f = filters; *f; f++) {
                size_t n = strlen(*f);
                const char *at = label;
                bool found = false;
                while (!found && (at = strstr(at, *f))) {
                        found = (at == label || at[-1] == ' ') && (at[n] == '\0' || at[n] == ' ');
                        at++;
                }
                if (!found)
                        return false;
        }
        return true;
}

/* Nothing matched a --metric or --cell filter: when the latest run has no such metric or no such
 * cell, says so with what it has (EXIT_USAGE); else EXIT_OK (the runs have it, unmeasured). */
static int explain_no_match(Store *store, const HistoryQuery *q, const History *h) {
        _cleanup_strv_free_ char **metrics = NULL;
        _cleanup_(query_report_freep) Report *rep = NULL;
        if (query_run_metrics(store, h->latest_run, &metrics) < 0 ||
            query_report_values(store, h->latest_run, NULL, &rep) < 0)
                return EXIT_OK;
        char list[512];
        if (q->metric && !strv_contains(metrics, q->metric)) {
                cli_error("history", "experiment %s records no metric '%s' (its latest run, %lld, has: %s)",
                          q->experiment, q->metric, (long long) h->latest_run,
                          joined(metrics, strv_length(metrics), list, sizeof(list)));
                return EXIT_USAGE;
        }
        bool known = !q->variant;
        for (size_t v = 0; !known && v < rep->n_variants; v++)
                known = strcmp(rep->variant_names[v], q->variant) == 0;
        if (!known && rep->n_variants > 0) {
                cli_error("history", "experiment %s has no variant '%s' (its latest run, %lld, has: %s)",
                          q->experiment, q->variant, (long long) h->latest_run,
                          joined(rep->variant_names, rep->n_variants, list, sizeof(list)));
                return EXIT_USAGE;
        }
        for (size_t c = 0; q->cells && c < rep->n_cells; c++)
                if (label_has_all(rep->cell_labels[c], q->cells))
                        return EXIT_OK; /* there is such a cell, without measured samples */
        if (q->cells && rep->n_cells > 0) {
                cli_error(
                        "history",
                        "no cell of experiment %s matches the --cell filter (its latest run, %lld, has the "
                        "cells %s)",
                        q->experiment, (long long) h->latest_run,
                        joined(rep->cell_labels, rep->n_cells, list, sizeof(list)));
                return EXIT_USAGE;
        }
        return EXIT_OK;
}

int cmd_history(int argc, char **argv) {
        if (cli_wants_help(argc, argv, history_usage))
                return EXIT_OK;
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },      { "format", required_argument, NULL, 'f' },
                { "last", required_argument, NULL, 'n' },    { "cell", required_argument, NULL, 'c' },
                { "variant", required_argument, NULL, 'v' }, { "metric", required_argument, NULL, 'm' },
                { "relative", no_argument, NULL, 'R' },      {},
        };
        _cleanup_strv_free_ char **cells = NULL;
        HistoryQuery q = { .last = HISTORY_DEFAULT_RUNS };
        const char *db_path = NULL;
        OutputFormat format = FORMAT_TABLE;
        unsigned long long last;
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "d:f:n:c:v:m:R", options, NULL)) >= 0;) {
                switch (c) {
                case 'd':
                        db_path = optarg;
                        break;
                case 'f':
                        if (cli_format_option("history", optarg, &format) != EXIT_OK)
                                return EXIT_USAGE;
                        break;
                case 'n':
                        if (cli_parse_uint(optarg, 100000, &last) < 0 || last == 0) {
                                cli_error("history", "--last must be a positive number");
                                return EXIT_USAGE;
                        }
                        q.last = (size_t) last;
                        break;
                case 'c':
                        if (strv_append(&cells, optarg) < 0)
                                return EXIT_ENVIRONMENT;
                        break;
                case 'v':
                        q.variant = optarg;
                        break;
                case 'm':
                        q.metric = optarg;
                        break;
                case 'R':
                        q.relative = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        }
        if (argc - optind != 1) {
                cli_error("history", "give one experiment name (see alloclab runs)");
                return EXIT_USAGE;
        }
        q.experiment = argv[optind];
        q.cells = cells;
        _cleanup_(store_freep) Store *store = NULL;
        int e = cli_open_for_reading("history", db_path, &store);
        if (e != EXIT_OK)
                return e;
        _cleanup_(history_freep) History *h = NULL;
        int r = query_history(store, &q, &h);
        if (r == -EINVAL) {
                cli_error("history", "--cell takes NAME=VALUE, NAME a parameter of the matrix");
                return EXIT_USAGE;
        }
        if (r == -ENOENT) {
                cli_error("history", "no finished run of experiment '%s' (see alloclab runs)", q.experiment);
                return EXIT_USAGE; /* the command line named it, as a run id that is not there */
        }
        if (r < 0) {
                cli_error("history", "%s", r == -EIO ? store_error(store) : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        if (h->n_series == 0 && (q.metric || q.cells || q.variant) &&
            (e = explain_no_match(store, &q, h)) != EXIT_OK)
                return e;
        if (q.relative && h->n_series == 0) {
                cli_error("history",
                          "--relative divides each variant by its run's baseline variant in the same round: "
                          "no variant besides the baseline has measured samples in these runs' rounds (runs "
                          "in blocked order and imports, which have none, are left out)%s",
                          q.variant ? " (does --variant name the baseline?)" : "");
                return EXIT_USAGE;
        }
        if (render_history(stdout, format, h) < 0 || fflush(stdout) != 0) {
                cli_error("history", "cannot write the history");
                return EXIT_ENVIRONMENT;
        }
        return EXIT_OK;
}
