/* SPDX-License-Identifier: MIT */
/*
 * `alloclab fleet EXPERIMENT`: one experiment on many machines (docs/fleet.md). Per machine, its
 * latest finished run's ratio of each variant to the baseline, measured within that run; then,
 * with machines as the unit, the geometric mean and range of those ratios and on how many
 * machines each verdict holds, over all and per hardware class. Samples of different machines
 * are never pooled: machines differ by more than any allocator does, and only a ratio within one
 * run on one machine is a measurement.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/render.h"
#include "db/fleet.h"
#include "util/cleanup.h"
#include "util/strv.h"

static const char fleet_usage[] =
        "Usage: alloclab fleet EXPERIMENT [--slurm-job [CLUSTER:]JOB] [--expect-machines N]\n"
        "                      [--db PATH] [--format table|markdown|csv|json]\n"
        "\n"
        "The experiment across machines (runs merged with alloclab import): per machine name (run\n"
        "--machine, else the host name) its latest finished run by start time, and per cell and\n"
        "variant that run's ratio to its baseline with its interval and verdict (by that run's rule\n"
        "and correction); then, machines as the unit, the geometric mean and range of the ratios and\n"
        "on how many machines each verdict holds, over all and per hardware class (CPU model, CPUs,\n"
        "kernel, THP). Samples of different machines are never pooled.\n"
        "\n"
        "  --slurm-job J        only the runs of Slurm job J (a fleet job: one run per node)\n"
        "  --expect-machines N  exit 1 when fewer than N machines have a finished run (a node that\n"
        "                       was busy, failed or never started), naming those that do\n";

/* Where a variant of a cell is in a machine's report, or NULL. */
static const ReportEntry *entry_of(const Report *rep, const char *cell, const char *variant) {
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++)
                        if (strcmp(rep->cell_labels[c], cell) == 0 &&
                            strcmp(rep->variant_names[v], variant) == 0)
                                return &rep->entries[c * rep->n_variants + v];
        return NULL;
}

/* The (cell, variant) pairs compared with a baseline on any machine, in the order machines list
 * them. */
static int pairs_of(const Fleet *f, char ***ret_cells, char ***ret_variants) {
        _cleanup_strv_free_ char **cells = NULL, **variants = NULL;
        for (size_t h = 0; h < f->n_machines; h++) {
                const Report *rep = f->machines[h].report;
                for (size_t c = 0; c < rep->n_cells; c++)
                        for (size_t v = 0; v < rep->n_variants; v++) {
                                if (v == rep->baseline || v == rep->aa_variant)
                                        continue;
                                bool seen = false;
                                for (size_t i = 0; cells && cells[i] && !seen; i++)
                                        seen = strcmp(cells[i], rep->cell_labels[c]) == 0 &&
                                               strcmp(variants[i], rep->variant_names[v]) == 0;
                                if (!seen && (strv_append(&cells, rep->cell_labels[c]) < 0 ||
                                              strv_append(&variants, rep->variant_names[v]) < 0))
                                        return -ENOMEM;
                        }
        }
        *ret_cells = TAKE_PTR(cells);
        *ret_variants = TAKE_PTR(variants);
        return 0;
}

/* The machines' hardware classes: the distinct FleetMachine.hardware texts in the order machines
 * list them, and each machine's index among them. */
typedef struct Classes {
        char **hardware;
        size_t *of; /* per machine */
        size_t n;
} Classes;

static void classes_done(Classes *c) {
        strv_free(c->hardware);
        free(c->of);
}

static int classes_of(const Fleet *f, Classes *ret) {
        *ret = (Classes){ .of = calloc(f->n_machines, sizeof(size_t)) };
        if (!ret->of)
                return -ENOMEM;
        for (size_t h = 0; h < f->n_machines; h++) {
                size_t k = 0;
                while (k < ret->n && strcmp(ret->hardware[k], f->machines[h].hardware) != 0)
                        k++;
                if (k == ret->n && strv_append(&ret->hardware, f->machines[h].hardware) < 0)
                        return -ENOMEM;
                ret->n += k == ret->n;
                ret->of[h] = k;
        }
        return 0;
}

/* "A", "B", ... "Z", "AA", ... */
static void class_name(size_t k, char buf[static 8]) {
        char tmp[8];
        size_t n = 0;
        do {
                tmp[n++] = (char) ('A' + k % 26);
                k = k / 26;
        } while (k-- > 0 && n < 6);
        for (size_t i = 0; i < n; i++)
                buf[i] = tmp[n - 1 - i];
        buf[n] = 0;
}

/* One row per cell, variant and machine: what each machine measured (csv, json). */
static json_t *machines_table(const Fleet *f, const Classes *classes, char **cells, char **variants) {
        static const char *const names[] = {
                "experiment", "cell",     "variant", "machine",      "host",          "class",   "run_id",
                "uuid",       "baseline", "ratio",   "ratio_ci_low", "ratio_ci_high", "p_value", "verdict",
        };
        json_t *table = render_table_new(names, ELEMENTSOF(names));
        for (size_t i = 0; cells && cells[i]; i++)
                for (size_t h = 0; h < f->n_machines; h++) {
                        const Report *rep = f->machines[h].report;
                        const ReportEntry *e = entry_of(rep, cells[i], variants[i]);
                        bool k = e && e->has_comparison;
                        char class[8];
                        class_name(classes->of[h], class);
                        json_t *values[] = {
                                json_string(f->experiment),
                                json_string(cells[i]),
                                json_string(variants[i]),
                                json_string(f->machines[h].machine),
                                json_string(f->machines[h].hostname),
                                json_string(class),
                                json_integer(rep->run.id),
                                json_string(rep->run.uuid),
                                json_string(rep->variant_names[rep->baseline]),
                                k ? json_real(e->comparison.ratio) : json_null(),
                                k ? json_real(e->comparison.lo) : json_null(),
                                k ? json_real(e->comparison.hi) : json_null(),
                                k ? json_real(e->comparison.p) : json_null(),
                                k ? json_string(verdict_word(e->comparison.verdict,
                                                             render_time_metric(rep->run.metric)))
                                  : json_null(),
                        };
                        render_table_add_row(table, values, ELEMENTSOF(values));
                }
        return table;
}

/* Machines as the unit: the geometric mean and range of the machines' ratios and the verdict
 * count, over the machines of one hardware class or (class SIZE_MAX) all. */
typedef struct Summary {
        size_t n;                      /* machines that compared the variant with their baseline */
        double geomean, min, max;      /* of their ratios */
        size_t verdicts[_VERDICT_MAX]; /* machines per verdict */
} Summary;

static Summary summarize(const Fleet *f, const Classes *classes, size_t class, const char *cell,
                         const char *variant) {
        Summary s = { .min = INFINITY, .max = -INFINITY };
        double log_sum = 0;
        for (size_t h = 0; h < f->n_machines; h++) {
                const ReportEntry *e = entry_of(f->machines[h].report, cell, variant);
                if (!e || !e->has_comparison || (class != SIZE_MAX && classes->of[h] != class))
                        continue;
                s.n++;
                log_sum += log(e->comparison.ratio);
                s.min = fmin(s.min, e->comparison.ratio);
                s.max = fmax(s.max, e->comparison.ratio);
                s.verdicts[e->comparison.verdict]++;
        }
        s.geomean = s.n ? exp(log_sum / (double) s.n) : NAN;
        return s;
}

/* "faster on 2 of 2 machines", "slower on 1, inconclusive on 1 of 2 machines". */
static void verdict_count(const Summary *s, bool time, char *buf, size_t size) {
        static const Verdict order[] = { VERDICT_HIGHER, VERDICT_LOWER, VERDICT_SAME, VERDICT_INCONCLUSIVE };
        size_t n = 0;
        buf[0] = 0;
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                if (s->verdicts[order[i]] > 0 && n < size)
                        n += (size_t) snprintf(buf + n, size - n, "%s%s on %zu", n ? ", " : "",
                                               verdict_word(order[i], time), s->verdicts[order[i]]);
        if (n < size)
                snprintf(buf + n, size - n, " of %zu machine%s", s->n, s->n == 1 ? "" : "s");
}

static json_t *summary_json(const Fleet *f, const Classes *classes, size_t class, char **cells,
                            char **variants, bool time) {
        json_t *rows = json_array();
        for (size_t i = 0; cells && cells[i]; i++) {
                Summary s = summarize(f, classes, class, cells[i], variants[i]);
                json_t *verdicts = json_object();
                for (Verdict v = 0; v < _VERDICT_MAX; v++)
                        json_object_set_new(verdicts, verdict_word(v, time),
                                            json_integer((json_int_t) s.verdicts[v]));
                json_array_append_new(
                        rows, json_pack("{s:s, s:s, s:I, s:o, s:o, s:o, s:o}", "cell", cells[i], "variant",
                                        variants[i], "machines", (json_int_t) s.n, "geomean_ratio",
                                        s.n ? json_real(s.geomean) : json_null(), "min_ratio",
                                        s.n ? json_real(s.min) : json_null(), "max_ratio",
                                        s.n ? json_real(s.max) : json_null(), "verdicts", verdicts));
        }
        return rows;
}

/* The summary columns of one row: geometric mean, range, verdict count. */
static void summary_cells(json_t *row, const Summary *s, bool time) {
        char geomean[32] = "-", range[64] = "-", verdict[128];
        if (s->n) {
                snprintf(geomean, sizeof(geomean), "%.2fx", s->geomean);
                snprintf(range, sizeof(range), "%.2f-%.2f", s->min, s->max);
        }
        verdict_count(s, time, verdict, sizeof(verdict));
        json_object_set_new(row, "machines: geomean", json_string(geomean));
        json_object_set_new(row, "range", json_string(range));
        json_object_set_new(row, "verdict", json_string(verdict));
}

/* For people: a column per machine ("0.91x [0.89, 0.93] faster") and the summary columns. */
static json_t *display_table(const Fleet *f, const Classes *classes, char **cells, char **variants,
                             bool time) {
        json_t *columns = json_pack("[s, s]", "cell", "variant");
        for (size_t h = 0; h < f->n_machines; h++)
                json_array_append_new(columns, json_string(f->machines[h].machine));
        json_array_append_new(columns, json_string("machines: geomean"));
        json_array_append_new(columns, json_string("range"));
        json_array_append_new(columns, json_string("verdict"));
        json_t *rows = json_array();
        for (size_t i = 0; cells && cells[i]; i++) {
                json_t *row = json_pack("{s:s, s:s}", "cell", cells[i], "variant", variants[i]);
                for (size_t h = 0; h < f->n_machines; h++) {
                        const ReportEntry *e = entry_of(f->machines[h].report, cells[i], variants[i]);
                        char text[128] = "-", word[64];
                        if (e && e->has_comparison)
                                snprintf(text, sizeof(text), "%.2fx [%.2f, %.2f] %s", e->comparison.ratio,
                                         e->comparison.lo, e->comparison.hi,
                                         render_verdict_text(e->comparison.verdict, e->comparison.detectable,
                                                             time, word, sizeof(word)));
                        json_object_set_new(row, f->machines[h].machine, json_string(text));
                }
                Summary s = summarize(f, classes, SIZE_MAX, cells[i], variants[i]);
                summary_cells(row, &s, time);
                json_array_append_new(rows, row);
        }
        return json_pack("{s:o, s:o}", "columns", columns, "rows", rows);
}

/* Per hardware class, where there are several: the summary columns over its machines. */
static json_t *classes_display(const Fleet *f, const Classes *classes, char **cells, char **variants,
                               bool time) {
        json_t *rows = json_array();
        for (size_t k = 0; k < classes->n; k++)
                for (size_t i = 0; cells && cells[i]; i++) {
                        char class[8];
                        class_name(k, class);
                        json_t *row = json_pack("{s:s, s:s, s:s}", "class", class, "cell", cells[i],
                                                "variant", variants[i]);
                        Summary s = summarize(f, classes, k, cells[i], variants[i]);
                        summary_cells(row, &s, time);
                        json_array_append_new(rows, row);
                }
        return json_pack("{s:[s, s, s, s, s, s], s:o}", "columns", "class", "cell", "variant",
                         "machines: geomean", "range", "verdict", "rows", rows);
}

static int render_json(FILE *f, const Fleet *fleet, const Classes *classes, json_t *per_machine,
                       char **cells, char **variants, bool time) {
        json_auto_t *machines = json_array(), *classes_json = json_array();
        for (size_t h = 0; h < fleet->n_machines; h++) {
                const FleetMachine *x = &fleet->machines[h];
                char class[8];
                class_name(classes->of[h], class);
                json_array_append_new(machines,
                                      json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:s?, s:s?}", "machine",
                                                x->machine, "host", x->hostname, "class", class, "run_id",
                                                (json_int_t) x->report->run.id, "uuid", x->report->run.uuid,
                                                "started_at", x->report->run.started_at, "fingerprint",
                                                x->fingerprint, "slurm", x->slurm));
        }
        for (size_t k = 0; k < classes->n; k++) {
                char class[8];
                class_name(k, class);
                json_array_append_new(classes_json,
                                      json_pack("{s:s, s:s, s:o}", "class", class, "hardware",
                                                classes->hardware[k], "summary",
                                                summary_json(fleet, classes, k, cells, variants, time)));
        }
        json_auto_t *root =
                json_pack("{s:s, s:s, s:O, s:O, s:O, s:o}", "experiment", fleet->experiment, "metric",
                          fleet->machines[0].report->run.metric, "machines", machines, "classes",
                          classes_json, "ratios", json_object_get(per_machine, "rows"), "summary",
                          summary_json(fleet, classes, SIZE_MAX, cells, variants, time));
        int r = root ? json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
        fputc('\n', f);
        return r < 0 || ferror(f) ? -EIO : 0;
}

/* The machines, which run of each, its hardware class and Slurm job. */
static json_t *machines_display(const Fleet *fleet, const Classes *classes) {
        bool slurm = false;
        for (size_t h = 0; h < fleet->n_machines; h++)
                slurm |= fleet->machines[h].slurm != NULL;
        json_t *t = json_pack("{s:[s, s, s, s, s, s, s], s:[]}", "columns", "machine", "host", "class",
                              "run", "uuid", "started", "fingerprint", "rows");
        if (t && slurm)
                json_array_append_new(json_object_get(t, "columns"), json_string("slurm job"));
        for (size_t h = 0; t && h < fleet->n_machines; h++) {
                const FleetMachine *x = &fleet->machines[h];
                char run[32], class[8];
                snprintf(run, sizeof(run), "%lld", (long long) x->report->run.id);
                class_name(classes->of[h], class);
                json_array_append_new(json_object_get(t, "rows"),
                                      json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s%, s:s}", "machine",
                                                x->machine, "host", x->hostname, "class", class, "run", run,
                                                "uuid", x->report->run.uuid, "started",
                                                x->report->run.started_at, "fingerprint",
                                                x->fingerprint ? x->fingerprint : "unknown", (size_t) 12,
                                                "slurm job", x->slurm ? x->slurm : "-"));
        }
        return t;
}

static int render_fleet(FILE *f, OutputFormat format, const Fleet *fleet) {
        _cleanup_strv_free_ char **cells = NULL, **variants = NULL;
        _cleanup_(classes_done) Classes classes = {};
        if (pairs_of(fleet, &cells, &variants) < 0 || classes_of(fleet, &classes) < 0)
                return -ENOMEM;
        const Report *first = fleet->machines[0].report;
        bool time = render_time_metric(first->run.metric);
        json_auto_t *per_machine = machines_table(fleet, &classes, cells, variants);
        if (!per_machine)
                return -ENOMEM;
        if (format == FORMAT_CSV)
                return render_rows(f, format, per_machine);
        if (format == FORMAT_JSON)
                return render_json(f, fleet, &classes, per_machine, cells, variants, time);
        bool markdown = format == FORMAT_MARKDOWN;
        OutputFormat tables = markdown ? FORMAT_MARKDOWN : FORMAT_TABLE;
        fprintf(f, "%s%s on %zu machine%s: the latest finished run of each by start time, metric %s\n\n",
                markdown ? "### fleet: " : "fleet: ", fleet->experiment, fleet->n_machines,
                fleet->n_machines == 1 ? "" : "s", first->run.metric);
        json_auto_t *machines = machines_display(fleet, &classes);
        json_auto_t *display = display_table(fleet, &classes, cells, variants, time);
        int r = machines && display ? render_rows(f, tables, machines) : -ENOMEM;
        for (size_t k = 0; r >= 0 && k < classes.n; k++) {
                char class[8];
                class_name(k, class);
                fprintf(f, "%sclass %s: %s\n",
                        k == 0 ? "\nhardware classes (CPU, CPUs, kernel, THP):\n" : "", class,
                        classes.hardware[k]);
        }
        if (r >= 0) {
                fputc('\n', f);
                r = render_rows(f, tables, display);
        }
        if (r >= 0 && classes.n > 1) {
                json_auto_t *per_class = classes_display(fleet, &classes, cells, variants, time);
                fprintf(f, "\nper hardware class:\n\n");
                r = per_class ? render_rows(f, tables, per_class) : -ENOMEM;
        }
        if (r < 0)
                return r;
        fprintf(f,
                "\nEach machine: the variant / its baseline within that machine's run (the Hodges-Lehmann "
                "estimate),\n"
                "its interval and verdict by the run's rule and correction (docs/analysis.md). Machines: "
                "the\n"
                "geometric mean and range of those ratios, and on how many machines each verdict holds;\n"
                "samples of different machines are never pooled.\n");
        return ferror(f) ? -EIO : 0;
}

typedef struct FleetOptions {
        const char *db_path;
        OutputFormat format;
        FleetQuery query;
        unsigned long long expect_machines; /* 0: any number */
} FleetOptions;

static int parse_fleet_options(int argc, char **argv, FleetOptions *o) {
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },
                { "format", required_argument, NULL, 'f' },
                { "slurm-job", required_argument, NULL, 'j' },
                { "expect-machines", required_argument, NULL, 'n' },
                {},
        };
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "d:f:", options, NULL)) >= 0;) {
                switch (c) {
                case 'd':
                        o->db_path = optarg;
                        break;
                case 'f':
                        if (cli_format_option("fleet", optarg, &o->format) != EXIT_OK)
                                return EXIT_USAGE;
                        break;
                case 'j':
                        o->query.slurm_job = optarg;
                        break;
                case 'n':
                        if (cli_parse_uint(optarg, 100000, &o->expect_machines) < 0 ||
                            o->expect_machines == 0) {
                                cli_error("fleet", "--expect-machines takes a number from 1 to 100000");
                                return EXIT_USAGE;
                        }
                        break;
                default:
                        return EXIT_USAGE;
                }
        }
        if (argc - optind != 1) {
                cli_error("fleet", "expected exactly one EXPERIMENT (see alloclab runs)");
                return EXIT_USAGE;
        }
        o->query.experiment = argv[optind];
        return EXIT_OK;
}

/* What --expect-machines says when fewer machines finished a run than were asked for. */
static int fewer_machines(const FleetOptions *o, const Fleet *fleet) {
        size_t n = fleet ? fleet->n_machines : 0;
        char names[512] = "";
        size_t used = 0;
        for (size_t h = 0; h < n && used < sizeof(names); h++)
                used += (size_t) snprintf(names + used, sizeof(names) - used, "%s%s", h ? ", " : "",
                                          fleet->machines[h].machine);
        cli_error("fleet",
                  "%zu machine%s finished a run of %s%s%s (%s), %llu %s asked for: the others were busy, "
                  "failed or never started (their runs, if any, are not done: alloclab runs)",
                  n, n == 1 ? "" : "s", o->query.experiment, o->query.slurm_job ? " in Slurm job " : "",
                  o->query.slurm_job ? o->query.slurm_job : "", n ? names : "none", o->expect_machines,
                  o->expect_machines == 1 ? "was" : "were");
        return EXIT_FAILURES;
}

int cmd_fleet(int argc, char **argv) {
        if (cli_wants_help(argc, argv, fleet_usage))
                return EXIT_OK;
        FleetOptions o = { .format = FORMAT_TABLE };
        int e = parse_fleet_options(argc, argv, &o);
        if (e != EXIT_OK)
                return e;
        _cleanup_(store_freep) Store *store = NULL;
        e = cli_open_for_reading("fleet", o.db_path, &store);
        if (e != EXIT_OK)
                return e;
        _cleanup_(fleet_freep) Fleet *fleet = NULL;
        int r = query_fleet(store, &o.query, &fleet);
        if (r == -ENOENT && o.expect_machines)
                return fewer_machines(&o, NULL);
        if (r == -ENOENT) {
                cli_error("fleet", "no finished run of experiment '%s'%s%s", o.query.experiment,
                          o.query.slurm_job ? " in Slurm job " : "",
                          o.query.slurm_job ? o.query.slurm_job : "");
                return EXIT_ENVIRONMENT;
        }
        if (r < 0)
                return cli_query_failed("fleet", store, 0, r);
        if (render_fleet(stdout, o.format, fleet) < 0 || fflush(stdout) != 0) {
                cli_error("fleet", "cannot write the table");
                return EXIT_ENVIRONMENT;
        }
        return fleet->n_machines < o.expect_machines ? fewer_machines(&o, fleet) : EXIT_OK;
}
