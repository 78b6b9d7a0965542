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
#include "stats/pool.h"
#include "stats/stats.h"
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
                        const ReportEntry *e = report_entry_named(rep, cells[i], variants[i]);
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

/* The level of the interval over machines, and below which p machines disagree. */
#define FLEET_LEVEL 0.95

/* Whether machine h's comparison of cell and variant could not have told min_effect from noise:
 * inconclusive, and the smallest change its test would detect larger than its rule's. */
static bool too_noisy(const Report *rep, const ReportEntry *e) {
        return e->comparison.verdict == VERDICT_INCONCLUSIVE &&
               !(e->comparison.detectable <= rep->min_effect);
}

/* Machines as the unit, over the machines of one hardware class or (class SIZE_MAX) all: the
 * geometric mean of the machines' ratios with its interval over them and whether they disagree
 * (stats/pool.h), the range, and on how many machines each verdict holds. */
typedef struct Summary {
        size_t n;                      /* machines that compared the variant with their baseline */
        double min, max;               /* of their ratios */
        size_t verdicts[_VERDICT_MAX]; /* machines per verdict */
        size_t too_noisy;              /* of the inconclusive ones, those that could not detect min_effect */
        double min_effect;             /* the first machine's rule (runs of a fleet share one spec) */
        PooledRatio pool;              /* over those with an interval */
} Summary;

static Summary summarize(const Fleet *f, const Classes *classes, size_t class, const char *cell,
                         const char *variant) {
        Summary s = { .min = INFINITY, .max = -INFINITY, .min_effect = NAN };
        _cleanup_free_ MachineRatio *ratios =
                calloc(f->n_machines ? f->n_machines : 1, sizeof(MachineRatio));
        size_t n_ratios = 0;
        for (size_t h = 0; h < f->n_machines; h++) {
                const Report *rep = f->machines[h].report;
                const ReportEntry *e = report_entry_named(rep, cell, variant);
                if (!e || !e->has_comparison || (class != SIZE_MAX && classes->of[h] != class))
                        continue;
                const Comparison *c = &e->comparison;
                s.n++;
                s.min = fmin(s.min, c->ratio);
                s.max = fmax(s.max, c->ratio);
                s.verdicts[c->verdict]++;
                s.too_noisy += too_noisy(rep, e);
                if (isnan(s.min_effect))
                        s.min_effect = rep->min_effect;
                if (c->test != COMPARE_TEST_NONE && c->lo > 0 && isfinite(c->hi))
                        ratios[n_ratios++] = (MachineRatio){ .ratio = c->ratio,
                                                             .lo = c->lo,
                                                             .hi = c->hi,
                                                             .level = render_interval_level(rep) };
        }
        if (!ratios || pool_machine_ratios(ratios, n_ratios, FLEET_LEVEL, &s.pool) < 0)
                s.pool = (PooledRatio){ .geomean = NAN, .lo = NAN, .hi = NAN, .q = NAN, .p = NAN };
        return s;
}

/* "higher on 1, same on 1 of 2 machines; machines disagree (heterogeneity p < 0.001)",
 * "inconclusive on 2 (2 could not detect 5%) of 2 machines: no conclusion" (too noisy, or too
 * few samples: each machine's row says which). */
static void verdict_count(const Summary *s, bool time, char *buf, size_t size) {
        static const Verdict order[] = { VERDICT_HIGHER, VERDICT_LOWER, VERDICT_SAME, VERDICT_INCONCLUSIVE };
        size_t n = 0, decided = 0;
        buf[0] = 0;
        for (size_t i = 0; i < ELEMENTSOF(order); i++) {
                if (s->verdicts[order[i]] > 0 && n < size)
                        n += (size_t) snprintf(buf + n, size - n, "%s%s on %zu", n ? ", " : "",
                                               verdict_word(order[i], time), s->verdicts[order[i]]);
                /* of the inconclusive, those that could not have told min_effect: in parentheses,
                 * so that no machine reads as counted twice */
                if (order[i] == VERDICT_INCONCLUSIVE && s->too_noisy > 0 && n < size)
                        n += (size_t) snprintf(buf + n, size - n, " (%s%zu could not detect %.0f%%)",
                                               s->too_noisy == s->verdicts[order[i]] ? "" : "of them ",
                                               s->too_noisy, 100 * s->min_effect);
        }
        for (size_t i = 0; i < ELEMENTSOF(order) - 1; i++)
                decided += s->verdicts[order[i]];
        if (n < size)
                n += (size_t) snprintf(buf + n, size - n, " of %zu machine%s%s", s->n, s->n == 1 ? "" : "s",
                                       decided == 0 && s->too_noisy == s->n ? ": no conclusion" : "");
        if (s->pool.k >= 2 && s->pool.p < 1 - FLEET_LEVEL && n < size)
                snprintf(buf + n, size - n, "; machines disagree (heterogeneity p %s%.3f)",
                         s->pool.p < 0.001 ? "< " : "", s->pool.p < 0.001 ? 0.001 : s->pool.p);
}

static json_t *number_or_null(double v) {
        return isfinite(v) ? json_real(v) : json_null();
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
                        rows,
                        json_pack("{s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:{s:o, s:o, s:o}}",
                                  "cell", cells[i], "variant", variants[i], "machines", (json_int_t) s.n,
                                  "geomean_ratio", number_or_null(s.pool.geomean), "ratio_ci_low",
                                  number_or_null(s.pool.lo), "ratio_ci_high", number_or_null(s.pool.hi),
                                  "min_ratio", s.n ? json_real(s.min) : json_null(), "max_ratio",
                                  s.n ? json_real(s.max) : json_null(), "verdicts", verdicts, "too_noisy",
                                  (json_int_t) s.too_noisy, "heterogeneity", "q", number_or_null(s.pool.q),
                                  "p", number_or_null(s.pool.p), "i_squared",
                                  number_or_null(s.pool.i_squared)));
        }
        return rows;
}

/* The summary columns of one row: geometric mean with its interval over machines, range,
 * verdict count. */
static void summary_cells(json_t *row, const Summary *s, bool time) {
        char geomean[64] = "-", range[64] = "-", verdict[256];
        if (s->n && isfinite(s->pool.lo))
                snprintf(geomean, sizeof(geomean), "%.2fx [%.2f, %.2f]", s->pool.geomean, s->pool.lo,
                         s->pool.hi);
        else if (s->n && isfinite(s->pool.geomean))
                snprintf(geomean, sizeof(geomean), "%.2fx", s->pool.geomean);
        if (s->n)
                snprintf(range, sizeof(range), "%.2f-%.2f", s->min, s->max);
        verdict_count(s, time, verdict, sizeof(verdict));
        json_object_set_new(row, "machines: geomean [95%]", json_string(geomean));
        json_object_set_new(row, "range", json_string(range));
        json_object_set_new(row, "verdict", json_string(verdict));
}

/* For people: a column per machine ("0.91x [0.89, 0.93] faster") and the summary columns. */
static json_t *display_table(const Fleet *f, const Classes *classes, char **cells, char **variants,
                             bool time) {
        json_t *columns = json_pack("[s, s]", "cell", "variant");
        for (size_t h = 0; h < f->n_machines; h++)
                json_array_append_new(columns, json_string(f->machines[h].machine));
        json_array_append_new(columns, json_string("machines: geomean [95%]"));
        json_array_append_new(columns, json_string("range"));
        json_array_append_new(columns, json_string("verdict"));
        json_t *rows = json_array();
        for (size_t i = 0; cells && cells[i]; i++) {
                json_t *row = json_pack("{s:s, s:s}", "cell", cells[i], "variant", variants[i]);
                for (size_t h = 0; h < f->n_machines; h++) {
                        const ReportEntry *e =
                                report_entry_named(f->machines[h].report, cells[i], variants[i]);
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
                         "machines: geomean [95%]", "range", "verdict", "rows", rows);
}

/* Whether a machine's run measured anything: a sample of some cell and variant. A run whose
 * every cell was excluded or failed finished (status done) without a measurement. */
static bool measured(const FleetMachine *m) {
        for (size_t i = 0; i < m->report->n_cells * m->report->n_variants; i++)
                if (m->report->entries[i].has_stats && m->report->entries[i].stats.n > 0)
                        return true;
        return false;
}

static size_t n_measured(const Fleet *fleet) {
        size_t n = 0;
        for (size_t h = 0; fleet && h < fleet->n_machines; h++)
                n += measured(&fleet->machines[h]);
        return n;
}

/* A machine's noise, as its run measured it: the median over its comparisons of the smallest
 * change each could detect (stats/compare.h), INFINITY when none could detect any, NAN without
 * comparisons. */
static double machine_detects(const Report *rep) {
        size_t n = 0, total = rep->n_cells * rep->n_variants;
        _cleanup_free_ double *d = calloc(total ? total : 1, sizeof(double));
        for (size_t i = 0; d && i < total; i++)
                if (rep->entries[i].has_comparison)
                        d[n++] = rep->entries[i].comparison.detectable;
        if (!d || n == 0)
                return NAN;
        stats_sort(d, n);
        return stats_median_sorted(d, n);
}

/* The machine's A/A noise floor where its run had aa_check (the baseline against its own copy,
 * query_noise_floor): the median over its cells, NAN without. */
static double machine_aa_floor(const Report *rep) {
        size_t n = 0;
        _cleanup_free_ double *d = calloc(rep->n_cells ? rep->n_cells : 1, sizeof(double));
        for (size_t c = 0; d && c < rep->n_cells; c++)
                if (isfinite(query_noise_floor(rep, c)))
                        d[n++] = query_noise_floor(rep, c);
        if (!d || n == 0)
                return NAN;
        stats_sort(d, n);
        return stats_median_sorted(d, n);
}

/* "+-3%", "+-12% (too noisy for 5%)", "nothing (too few samples)", "-" (no comparison); then
 * "; A/A +-2%" where the run measured its noise floor. */
static void detects_text(const Report *rep, char *buf, size_t size) {
        double d = machine_detects(rep), aa = machine_aa_floor(rep);
        int n;
        if (isnan(d))
                n = snprintf(buf, size, "-");
        else if (!isfinite(d))
                n = snprintf(buf, size, "nothing (too few samples)");
        else if (d > rep->min_effect)
                n = snprintf(buf, size, "+-%.0f%% (too noisy for %.0f%%)", 100 * d, 100 * rep->min_effect);
        else
                n = snprintf(buf, size, "+-%.0f%%", 100 * d);
        if (isfinite(aa) && n >= 0 && (size_t) n < size)
                snprintf(buf + n, size - (size_t) n, "; A/A +-%.1f%%", 100 * aa);
        else if (rep->aa_variant != SIZE_MAX && n >= 0 && (size_t) n < size) /* aa_check, no floor */
                snprintf(buf + n, size - (size_t) n, "; A/A: none (too few samples)");
}

static int render_json(FILE *f, const Fleet *fleet, const Classes *classes, json_t *per_machine,
                       char **cells, char **variants, bool time) {
        json_auto_t *machines = json_array(), *classes_json = json_array();
        for (size_t h = 0; h < fleet->n_machines; h++) {
                const FleetMachine *x = &fleet->machines[h];
                char class[8];
                class_name(classes->of[h], class);
                json_array_append_new(machines,
                                      json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:s?, s:s?, s:o, s:f, s:o}",
                                                "machine", x->machine, "host", x->hostname, "class", class,
                                                "run_id", (json_int_t) x->report->run.id, "uuid",
                                                x->report->run.uuid, "started_at", x->report->run.started_at,
                                                "fingerprint", x->fingerprint, "slurm", x->slurm, "detects",
                                                number_or_null(machine_detects(x->report)), "min_effect",
                                                x->report->min_effect, "aa_noise_floor",
                                                number_or_null(machine_aa_floor(x->report))));
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

/* The machines, which run of each, its hardware class, its noise and Slurm job. */
static json_t *machines_display(const Fleet *fleet, const Classes *classes) {
        bool slurm = false;
        for (size_t h = 0; h < fleet->n_machines; h++)
                slurm |= fleet->machines[h].slurm != NULL;
        json_t *t = json_pack("{s:[s, s, s, s, s, s, s, s], s:[]}", "columns", "machine", "host", "class",
                              "run", "uuid", "started", "fingerprint", "detects", "rows");
        if (t && slurm)
                json_array_append_new(json_object_get(t, "columns"), json_string("slurm job"));
        for (size_t h = 0; t && h < fleet->n_machines; h++) {
                const FleetMachine *x = &fleet->machines[h];
                char run[32], class[8], detects[96];
                snprintf(run, sizeof(run), "%lld", (long long) x->report->run.id);
                class_name(classes->of[h], class);
                if (measured(x))
                        detects_text(x->report, detects, sizeof(detects));
                else
                        snprintf(detects, sizeof(detects),
                                 "measured nothing (every cell excluded or failed)");
                json_array_append_new(json_object_get(t, "rows"),
                                      json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s%, s:s, s:s}", "machine",
                                                x->machine, "host", x->hostname, "class", class, "run", run,
                                                "uuid", x->report->run.uuid, "started",
                                                x->report->run.started_at, "fingerprint",
                                                x->fingerprint ? x->fingerprint : "unknown", (size_t) 12,
                                                "detects", detects, "slurm job", x->slurm ? x->slurm : "-"));
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
        _cleanup_strv_free_ char **notes = fleet_notes(fleet);
        for (char **n = notes; r >= 0 && n && *n; n++)
                fprintf(f, "\nnote: %s\n", *n);
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

/* What --expect-machines says when fewer machines measured in a finished run than were asked
 * for: those that did, and those whose run measured nothing. */
static int fewer_machines(const FleetOptions *o, const Fleet *fleet) {
        size_t n = n_measured(fleet);
        char names[512] = "", empty[512] = "";
        size_t used = 0, used_empty = 0;
        for (size_t h = 0; fleet && h < fleet->n_machines; h++) {
                const FleetMachine *m = &fleet->machines[h];
                if (measured(m) && used < sizeof(names))
                        used += (size_t) snprintf(names + used, sizeof(names) - used, "%s%s",
                                                  used ? ", " : "", m->machine);
                else if (!measured(m) && used_empty < sizeof(empty))
                        used_empty +=
                                (size_t) snprintf(empty + used_empty, sizeof(empty) - used_empty, "%s%s",
                                                  used_empty ? ", " : "; measured nothing: ", m->machine);
        }
        cli_error(
                "fleet", "%zu machine%s finished a run of %s%s%s (%s), %llu %s asked for%s%s%s", n,
                n == 1 ? "" : "s", o->query.experiment, o->query.slurm_job ? " in Slurm job " : "",
                o->query.slurm_job ? o->query.slurm_job : "", n ? names : "none", o->expect_machines,
                o->expect_machines == 1 ? "was" : "were", empty,
                used_empty ? " (every cell excluded or failed: alloclab show RUN says why)" : "",
                o->expect_machines > (fleet ? fleet->n_machines : 0)
                        ? "; the others have no finished run: busy, failed or never started (alloclab runs)"
                        : "");
        return EXIT_FAILURES;
}

/* A job id without its cluster that names jobs of several clusters names no one fleet. */
static int check_one_job(const FleetOptions *o, const Fleet *fleet) {
        if (!o->query.slurm_job || strchr(o->query.slurm_job, ':'))
                return EXIT_OK;
        for (size_t h = 1; h < fleet->n_machines; h++) {
                const char *a = fleet->machines[0].slurm_cluster, *b = fleet->machines[h].slurm_cluster;
                if ((a || b) && (!a || !b || strcmp(a, b) != 0)) {
                        cli_error("fleet",
                                  "Slurm job %s is a job of more than one cluster here (%s and %s): give "
                                  "CLUSTER:%s",
                                  o->query.slurm_job, a ? a : "no cluster", b ? b : "no cluster",
                                  o->query.slurm_job);
                        return EXIT_USAGE;
                }
        }
        return EXIT_OK;
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
                cli_error("fleet", "no finished run of experiment '%s'%s%s (see alloclab runs)",
                          o.query.experiment, o.query.slurm_job ? " in Slurm job " : "",
                          o.query.slurm_job ? o.query.slurm_job : "");
                return EXIT_USAGE;
        }
        if (r < 0)
                return cli_query_failed("fleet", store, 0, r);
        if ((e = check_one_job(&o, fleet)) != EXIT_OK)
                return e;
        if (render_fleet(stdout, o.format, fleet) < 0 || fflush(stdout) != 0) {
                cli_error("fleet", "cannot write the table");
                return EXIT_ENVIRONMENT;
        }
        return n_measured(fleet) < o.expect_machines ? fewer_machines(&o, fleet) : EXIT_OK;
}
