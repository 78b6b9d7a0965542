/* SPDX-License-Identifier: MIT */
/*
 * `alloclab suite`: the bundled workloads (workloads/, installed under LIBDIR/alloclab/workloads)
 * run one after another under every installed catalog allocator, each an ordinary run stored in
 * the database, then one summary across them (mimalloc-bench's, with verdicts and intervals).
 *
 * A workload file is a spec without params, cwd and allocators: the suite adds the threads and
 * scale axes, the workloads' directory as cwd and one variant per allocator, glibc first as the
 * baseline and reference. A line "# requires: PROGRAM... (HINT)" names programs without which
 * the workload is skipped, saying so.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/measure.h"
#include "cli/suite-compare.h"
#include "cli/suite-summary.h"
#include "cli/render.h"
#include "configs/catalog.h"
#include "configs/spec-text.h"
#include "db/query.h"
#include "runner/allocator.h"
#include "runner/plan.h"
#include "stats/compare.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/paths.h"
#include "util/clock.h"
#include "util/strv.h"

extern char **environ;

static const char suite_usage[] =
        "Usage: alloclab suite [NAME...] [--threads LIST] [--scale PERCENT] [--samples N]\n"
        "                      [--allocators LIST] [--db PATH] [--format table|markdown|json]\n"
        "                      [--compare-to latest|RUN] [--machine NAME] [--quiet] [--print-spec]\n"
        "                      [--list]\n"
        "\n"
        "Runs the bundled workloads (all, or those named) under every installed catalog allocator,\n"
        "one stored run each, and prints one summary: per workload each allocator's ratio to glibc\n"
        "and verdict, then per allocator its wins, verdict counts, geometric mean with its interval\n"
        "and peak RSS. Every workload's comparisons are corrected as one family (the workloads'\n"
        "correction: bh, the false-discovery rate).\n"
        "\n"
        "  --threads LIST    the threads axis (default: 1 and the CPUs alloclab may use)\n"
        "  --scale PERCENT   the amount of work of each workload (default 100)\n"
        "  --samples N       samples per cell and variant (default: each workload's, 5)\n"
        "  --allocators LIST the variants, glibc first (default: every installed catalog allocator)\n"
        "  --compare-to R    afterwards, compare each workload's run with an earlier one as compare\n"
        "                    does: latest (the workload's newest before), or a run of an earlier suite\n"
        "                    (that suite's run of each workload); exit 6 on a regression\n"
        "  --machine NAME    the machine the runs are filed under, as for alloclab run\n"
        "  --print-spec      print each workload's whole spec instead of running it\n"
        "  --list            list the workloads and what each does\n";

#define SUITE_REQUIRES      "# requires:"
#define SUITE_SCRATCH       "# cwd: scratch"
#define SUITE_MAX_WORKLOADS 256

typedef struct SuiteOptions {
        MeasureOptions measure;
        char **names;      /* workloads asked for; NULL: all */
        char **threads;    /* the threads axis */
        unsigned scale;    /* percent */
        char **allocators; /* catalog names or paths, the baseline first */
        bool print_spec, list;
        const char *compare_to; /* "latest" or a run of an earlier suite; NULL: no comparison */
} SuiteOptions;

static void suite_options_done(SuiteOptions *o) {
        strv_free(o->names);
        strv_free(o->threads);
        strv_free(o->allocators);
}

static int parse_suite(int argc, char **argv, SuiteOptions *o) {
        enum {
                OPT_THREADS = 256,
                OPT_SCALE,
                OPT_SAMPLES,
                OPT_ALLOCATORS,
                OPT_DB,
                OPT_FORMAT,
                OPT_QUIET,
                OPT_PRINT,
                OPT_LIST,
                OPT_COMPARE_TO,
                OPT_MACHINE,
        };
        static const struct option options[] = {
                { "threads", required_argument, NULL, OPT_THREADS },
                { "scale", required_argument, NULL, OPT_SCALE },
                { "samples", required_argument, NULL, OPT_SAMPLES },
                { "allocators", required_argument, NULL, OPT_ALLOCATORS },
                { "db", required_argument, NULL, OPT_DB },
                { "format", required_argument, NULL, OPT_FORMAT },
                { "quiet", no_argument, NULL, OPT_QUIET },
                { "print-spec", no_argument, NULL, OPT_PRINT },
                { "list", no_argument, NULL, OPT_LIST },
                { "compare-to", required_argument, NULL, OPT_COMPARE_TO },
                { "machine", required_argument, NULL, OPT_MACHINE },
                {},
        };
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "", options, NULL)) >= 0;) {
                unsigned long long v;
                int r = 0;
                switch (c) {
                case OPT_THREADS:
                        o->threads = strv_free(o->threads); /* the last --threads counts */
                        r = strv_append_list(&o->threads, optarg);
                        for (size_t i = 0; r >= 0 && o->threads && o->threads[i]; i++)
                                if (cli_parse_uint(o->threads[i], 256, &v) < 0 || v == 0) {
                                        cli_error("suite", "--threads takes numbers from 1 to 256, not '%s'",
                                                  o->threads[i]);
                                        return EXIT_USAGE;
                                }
                        break;
                case OPT_SCALE:
                case OPT_SAMPLES:
                        if (cli_parse_uint(optarg, c == OPT_SCALE ? 10000 : SPEC_MAX_SAMPLES, &v) < 0 ||
                            v == 0) {
                                cli_error("suite", "--%s must be between 1 and %d",
                                          c == OPT_SCALE ? "scale" : "samples",
                                          c == OPT_SCALE ? 10000 : SPEC_MAX_SAMPLES);
                                return EXIT_USAGE;
                        }
                        *(c == OPT_SCALE ? &o->scale : &o->measure.samples) = (unsigned) v;
                        break;
                case OPT_ALLOCATORS:
                        o->allocators = strv_free(o->allocators);
                        r = strv_append_list(&o->allocators, optarg);
                        break;
                case OPT_DB:
                        o->measure.db_path = optarg;
                        break;
                case OPT_FORMAT:
                        if (cli_parse_format(optarg, &o->measure.format) < 0 ||
                            o->measure.format == FORMAT_CSV) {
                                cli_error("suite", "unknown format '%s' (table, markdown, json)", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case OPT_QUIET:
                        o->measure.quiet = true;
                        break;
                case OPT_PRINT:
                        o->print_spec = true;
                        break;
                case OPT_LIST:
                        o->list = true;
                        break;
                case OPT_COMPARE_TO:
                        if (strcmp(optarg, "latest") != 0 &&
                            (cli_parse_uint(optarg, INT64_MAX, &v) < 0 || v == 0)) {
                                cli_error("suite", "--compare-to takes 'latest' or a run id, not '%s'",
                                          optarg);
                                return EXIT_USAGE;
                        }
                        o->compare_to = optarg;
                        break;
                case OPT_MACHINE:
                        o->measure.machine = optarg;
                        break;
                default:
                        return EXIT_USAGE;
                }
                if (r < 0) {
                        cli_error("suite", "out of memory");
                        return EXIT_ENVIRONMENT;
                }
        }
        for (int i = optind; i < argc; i++)
                if (strv_append(&o->names, argv[i]) < 0) {
                        cli_error("suite", "out of memory");
                        return EXIT_ENVIRONMENT;
                }
        if ((o->list || o->print_spec) && o->measure.format != FORMAT_TABLE) {
                cli_error("suite", "%s prints %s, in no other format; --format is for the results",
                          o->list ? "--list" : "--print-spec", o->list ? "a list" : "YAML");
                return EXIT_USAGE;
        }
        return EXIT_OK;
}

/* 1 and the number of CPUs this process may run on (once when that is 1). */
static int default_threads(char ***ret) {
        cpu_set_t set;
        int n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
        char count[16];
        snprintf(count, sizeof(count), "%d", n);
        if (strv_append(ret, "1") < 0 || (n > 1 && strv_append(ret, count) < 0))
                return -ENOMEM;
        return 0;
}

/* Every installed catalog allocator, glibc first. */
static int installed_allocators(char ***ret) {
        for (const CatalogEntry *e = catalog_entries(); e->name; e++) {
                _cleanup_free_ char *path = NULL;
                if (e->soname && allocator_find_library(e, NULL, &path) < 0)
                        continue;
                if (strv_append(ret, e->name) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
        return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_workload(const struct dirent *d) {
        size_t n = strlen(d->d_name);
        return n > 5 && d->d_name[0] != '.' && strcmp(d->d_name + n - 5, ".yaml") == 0;
}

/* The workloads' names (file names without .yaml), sorted. */
static int list_workloads(const char *dir, char ***ret) {
        struct dirent **entries = NULL;
        int n = scandir(dir, &entries, is_workload, by_name);
        if (n < 0)
                return -errno;
        int r = 0;
        for (int i = 0; i < n; i++) {
                if (r >= 0)
                        r = strv_consume(ret, strndup(entries[i]->d_name, strlen(entries[i]->d_name) - 5));
                free(entries[i]);
        }
        free(entries);
        return r;
}

/* A "# requires: PROGRAM... (HINT)" line's first program that is not installed, with the
 * hint; NULL when everything is there. */
static char *missing_program(const char *text, char **ret_hint) {
        const char *line = strstr(text, SUITE_REQUIRES);
        *ret_hint = NULL;
        if (!line)
                return NULL;
        line += strlen(SUITE_REQUIRES);
        size_t end = strcspn(line, "\n"), programs = strcspn(line, "(\n");
        _cleanup_free_ char *list = strndup(line, programs);
        char *save = NULL;
        for (char *p = list ? strtok_r(list, " \t", &save) : NULL; p; p = strtok_r(NULL, " \t", &save)) {
                _cleanup_free_ char *exe = NULL;
                if (plan_resolve_exe(p, environ, NULL, &exe) >= 0)
                        continue;
                if (programs < end)
                        *ret_hint = strndup(line + programs, end - programs);
                return strdup(p);
        }
        return NULL;
}

/* Where a workload with a "# cwd: scratch" line runs: a directory of the user's own, kept
 * between runs, where its setup hook makes its input ($XDG_CACHE_HOME/alloclab/suite/NAME, or
 * under ~/.cache): made here. NULL (errno set) when there is none. */
static char *scratch_dir(const char *name) {
        _cleanup_free_ char *sub = NULL, *dir = NULL;
        if (asprintf(&sub, "suite/%s", name) < 0)
                return NULL;
        if (!(dir = paths_cache(environ, sub))) {
                errno = ENOENT; /* neither XDG_CACHE_HOME nor HOME */
                return NULL;
        }
        int r = mkdir_parents(dir, 0700);
        if (r < 0) {
                errno = -r;
                return NULL;
        }
        return TAKE_PTR(dir);
}

/* The workload's text with the suite's axes, its directory and the allocators added. */
static char *workload_spec(const char *name, const char *text, const char *dir, const SuiteOptions *o) {
        _cleanup_free_ char *scratch = NULL;
        if (strstr(text, "\n" SUITE_SCRATCH) && !(scratch = scratch_dir(name))) {
                cli_error("suite", "%s: no directory to make its input in: %m (set XDG_CACHE_HOME or HOME)",
                          name);
                return NULL;
        }
        char *spec = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&spec, &size);
        if (!f)
                return NULL;
        fprintf(f, "%s%s# Added by alloclab suite:\nparams:\n  threads: ", text,
                text[0] && text[strlen(text) - 1] != '\n' ? "\n" : "");
        spec_text_list(f, o->threads);
        fprintf(f, "\n  scale: [%u]\ncwd: ", o->scale);
        spec_text_scalar(f, scratch ? scratch : dir);
        fputs("\nallocators:", f);
        for (size_t i = 0; o->allocators[i]; i++) {
                free(spec_text_variant_open(f, o->allocators[i]));
                fputs("}", f);
        }
        fputc('\n', f);
        return memstream_text(f, &spec);
}

/* The description: line of a workload, for --list. */
static void print_description(const char *name, const char *text) {
        const char *d = strstr(text, "\ndescription:");
        _cleanup_free_ char *line = NULL;
        if (d) {
                d += strlen("\ndescription:");
                d += strspn(d, " \"");
                line = strndup(d, strcspn(d, "\n"));
                if (line && line[0] && line[strlen(line) - 1] == '"')
                        line[strlen(line) - 1] = 0;
        }
        printf("%-14s %s\n", name, line ? line : "");
}

/* The summary; with --compare-to in JSON, compare's documents under "compared_to". */
static int print_summary(FILE *f, const SuiteOptions *o, const SuiteRun *runs, size_t n,
                         json_t *comparisons) {
        OutputFormat format = o->measure.format;
        if (format == FORMAT_JSON) {
                json_auto_t *doc = suite_summary_json(runs, n);
                if (doc && comparisons && json_object_set(doc, "compared_to", comparisons) < 0)
                        return -ENOMEM;
                if (!doc ||
                    json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) < 0)
                        return -ENOMEM;
                fputc('\n', f);
                return ferror(f) ? -EIO : 0;
        }
        fprintf(f, "%sSuite: %zu workloads x threads ", format == FORMAT_MARKDOWN ? "### " : "", n);
        for (size_t i = 0; o->threads[i]; i++)
                fprintf(f, "%s%s", i ? "," : "", o->threads[i]);
        fprintf(f, " at scale %u%%, %lld samples per cell and variant (runs", o->scale,
                (long long) runs[0].rep->samples);
        for (size_t i = 0; i < n; i++)
                fprintf(f, " %lld", (long long) runs[i].rep->run.id);
        fputs(")\n\n", f);
        json_auto_t *table = suite_workload_table(runs, n);
        if (!table)
                return -ENOMEM;
        int r = render_rows(f, format, table);
        if (r < 0)
                return r;
        suite_print_overall(f, runs, n, format == FORMAT_MARKDOWN ? "- " : "  ");
        return ferror(f) ? -EIO : 0;
}

/* --- the command ------------------------------------------------------------------------- */

/* Runs (or prints) one workload. Returns the exit status; *ret_run is its run, 0 for none. */
static int run_workload(const char *dir, const char *name, const SuiteOptions *o, int64_t *ret_run,
                        int64_t *ret_base) {
        *ret_run = *ret_base = 0;
        _cleanup_free_ char *path = NULL, *text = NULL;
        if (asprintf(&path, "%s/%s.yaml", dir, name) < 0)
                return EXIT_ENVIRONMENT;
        int r = read_text_file(path, 1 << 20, &text, NULL);
        if (r < 0) {
                cli_error("suite", "cannot read %s: %s", path, strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        if (o->list) {
                print_description(name, text);
                return EXIT_OK;
        }
        _cleanup_free_ char *hint = NULL, *missing = missing_program(text, &hint);
        if (missing) {
                fprintf(stderr, "alloclab suite: %s: skipped: %s is not installed%s%s\n", name, missing,
                        hint ? " " : "", hint ? hint : "");
                return EXIT_OK;
        }
        _cleanup_free_ char *spec_text = workload_spec(name, text, dir, o);
        if (!spec_text)
                return EXIT_ENVIRONMENT;
        if (o->print_spec) {
                printf("# %s\n%s", path, spec_text);
                return EXIT_OK;
        }
        _cleanup_(spec_freep) Spec *spec = NULL;
        int e = cli_load_spec_text("suite", path, spec_text, &spec);
        if (e != EXIT_OK) {
                fprintf(stderr,
                        "(positions are in the spec alloclab suite made from %s: see it with alloclab suite "
                        "%s --print-spec)\n",
                        path, name);
                return e;
        }
        /* The run to compare with is found before this one exists. */
        if (o->compare_to && (e = suite_base(o->measure.db_path, spec->experiment, o->compare_to,
                                             o->measure.machine, ret_base)) != EXIT_OK)
                return e;
        uint64_t start = now_ns();
        if (!o->measure.quiet)
                fprintf(stderr, "alloclab suite: %s ...\n", name);
        e = cli_measure("suite", spec, &o->measure, ret_run);
        if (!o->measure.quiet && *ret_run)
                fprintf(stderr, "alloclab suite: %s: run %lld, %llu s\n", name, (long long) *ret_run,
                        (unsigned long long) ((now_ns() - start) / 1000000000));
        return e;
}

/* The workloads' own sample count where --samples does not set one (workloads/\*.yaml). */
#define SUITE_WORKLOAD_SAMPLES 5

/* The suite's comparisons share alpha as one family (correct_across): a lone difference needs
 * p below alpha over their number, which few samples cannot give whatever the values; said
 * before anything runs, with the count that can. */
static void warn_family_power(const SuiteOptions *o, char **chosen) {
        size_t variants = strv_length(o->allocators);
        size_t comparisons =
                strv_length(chosen) * strv_length(o->threads) * (variants > 1 ? variants - 1 : 0);
        unsigned samples = o->measure.samples ? o->measure.samples : SUITE_WORKLOAD_SAMPLES;
        CompareRule lone = { .min_effect = SPEC_DEFAULT_MIN_EFFECT,
                             .alpha = SPEC_DEFAULT_ALPHA,
                             .correction = CORRECTION_HOLM, /* a lone difference: alpha / tests */
                             .tests = comparisons };
        if (o->print_spec || o->list || comparisons < 2 || compare_can_decide(samples, true, &lone))
                return;
        fprintf(stderr,
                "alloclab suite: warning: the suite's %zu comparisons share alpha %g (Benjamini-Hochberg): "
                "with %u samples per variant a difference reaches it only when many comparisons differ "
                "at once (alone it needs p < %.2g; the smallest p %u samples can give is %.2g); "
                "--samples %u lets a single one\n",
                comparisons, SPEC_DEFAULT_ALPHA, samples, SPEC_DEFAULT_ALPHA / (double) comparisons, samples,
                compare_smallest_p(samples, compare_pairs(samples, &lone)),
                compare_samples_needed(true, &lone));
}

/* Reads the suite's runs back as stored (as `show` would print them), corrects them as one
 * family, and prints the summary, then with --compare-to each workload against its earlier
 * run. Returns the exit status of that (the gate's, with --compare-to). */
static int report_suite(const SuiteOptions *o, SuiteRun *runs, size_t n) {
        _cleanup_(store_freep) Store *store = NULL;
        int worst = cli_open_store("suite", o->measure.db_path, STORE_READ_ONLY, &store);
        if (worst != EXIT_OK)
                return worst;
        size_t read = n;
        int r = suite_summary_read(store, "suite", runs, &read);
        if (r == -EIO)
                worst = EXIT_ENVIRONMENT;
        _cleanup_free_ char *pairs_text = NULL; /* the comparisons, printed after the summary */
        size_t pairs_size = 0;
        json_auto_t *comparisons = NULL;
        if (r == -ENOMEM) {
                cli_error("suite", "out of memory");
                worst = EXIT_ENVIRONMENT;
        } else if (read > 0) {
                if (o->compare_to) {
                        SuiteBase bases[SUITE_MAX_WORKLOADS];
                        for (size_t i = 0; i < read; i++)
                                bases[i] = (SuiteBase){ runs[i].workload, runs[i].base, runs[i].run };
                        FILE *pairs_out = o->measure.format == FORMAT_JSON
                                                  ? NULL
                                                  : open_memstream(&pairs_text, &pairs_size);
                        int gate = suite_compare(pairs_out ? pairs_out : stdout, o->measure.format, store,
                                                 bases, read, &comparisons);
                        if (pairs_out && fclose(pairs_out) != 0)
                                gate = EXIT_ENVIRONMENT;
                        worst = cli_status_worst(worst, gate);
                }
                if (print_summary(stdout, o, runs, read, comparisons) < 0 ||
                    (pairs_text && fputs(pairs_text, stdout) < 0) || fflush(stdout) != 0) {
                        cli_error("suite", "cannot write the summary");
                        worst = EXIT_ENVIRONMENT;
                }
        }
        suite_summary_free(runs, read);
        return worst;
}

int cmd_suite(int argc, char **argv) {
        if (cli_wants_help(argc, argv, suite_usage))
                return EXIT_OK;
        _cleanup_(suite_options_done)
                SuiteOptions o = { .scale = 100, .measure.format = FORMAT_TABLE, .measure.silent = true };
        int e = parse_suite(argc, argv, &o);
        if (e != EXIT_OK)
                return e;
        _cleanup_free_ char *dir = paths_workloads();
        if (!dir) {
                cli_error("suite", "cannot find the bundled workloads (set ALLOCLAB_WORKLOADS)");
                return EXIT_ENVIRONMENT;
        }
        _cleanup_strv_free_ char **available = NULL;
        if ((!o.threads && default_threads(&o.threads) < 0) ||
            (!o.allocators && installed_allocators(&o.allocators) < 0) ||
            list_workloads(dir, &available) < 0) {
                cli_error("suite", "cannot list %s: %s", dir, strerror(errno));
                return EXIT_ENVIRONMENT;
        }
        for (size_t i = 0; o.names && o.names[i]; i++)
                if (!strv_contains(available, o.names[i])) {
                        cli_error("suite", "no workload '%s' in %s (see alloclab suite --list)", o.names[i],
                                  dir);
                        return EXIT_USAGE;
                }
        char **chosen = o.names ? o.names : available;
        if ((e = suite_check_compare_to(o.measure.db_path, o.compare_to)) != EXIT_OK)
                return e;
        warn_family_power(&o, chosen);
        /* One label for every run of this invocation: --compare-to RUN finds them by it. */
        char label[64], when[32];
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", gmtime(&now.tv_sec));
        snprintf(label, sizeof(label), "suite %s.%03ldZ", when, now.tv_nsec / 1000000);
        o.measure.label = label;

        SuiteRun runs[SUITE_MAX_WORKLOADS] = {};
        size_t n = 0;
        int worst = EXIT_OK;
        for (size_t i = 0; chosen && chosen[i] && n < ELEMENTSOF(runs); i++) {
                int64_t run = 0, base = 0;
                e = run_workload(dir, chosen[i], &o, &run, &base);
                worst = cli_status_worst(e, worst);
                if (e == EXIT_INTERRUPTED || e == EXIT_USAGE)
                        break;
                if (run > 0)
                        runs[n++] = (SuiteRun){ .workload = chosen[i], .run = run, .base = base };
        }
        return n > 0 && worst != EXIT_INTERRUPTED ? cli_status_worst(worst, report_suite(&o, runs, n))
                                                  : worst;
}
