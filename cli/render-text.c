/* SPDX-License-Identifier: MIT */
/*
 * The table and markdown renderers of a Report. Both share one grid (rows of cells, one column
 * per variant): a cell shows the median of the primary metric with its unit, its MAD relative
 * to the median, the ratio to the baseline, and a loud mark when samples failed or the variant
 * was excluded. The header and the notes under the grid say how the run was made and what to
 * make of it.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/output.h"
#include "cli/render-figures.h"
#include "cli/render.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "util/text.h"

static char *grid_cell(const Report *rep, size_t c, size_t v) {
        const ReportEntry *e = report_entry(rep, c, v);
        char value[64] = "", mark[64] = "", rat[32] = "", spread[32] = "";
        if (e->has_stats && e->stats.n > 0) {
                render_run_value(&rep->run, e->stats.median, value, sizeof(value));
                /* Spread as MAD relative to the median: the noise a reader should weigh the
                 * ratio against. */
                if (e->stats.median != 0)
                        snprintf(spread, sizeof(spread), " +-%.1f%%", 100 * e->stats.mad / e->stats.median);
                double r = render_ratio(rep, c, v);
                bool verdict = e->has_comparison && e->comparison.test != COMPARE_TEST_NONE;
                if (v != rep->baseline && r > 0)
                        snprintf(rat, sizeof(rat), " %.2fx%s%s", r, verdict ? " " : "",
                                 verdict ? verdict_mark(e->comparison.verdict, render_report_is_time(rep))
                                         : "");
        }
        if (e->excluded_reason || e->n_failed > 0) {
                char what[48];
                render_failure_mark(e, what, sizeof(what));
                if (e->excluded_reason)
                        snprintf(mark, sizeof(mark), "%s", what);
                else
                        snprintf(mark, sizeof(mark), " !%lld %s%s",
                                 (long long) (e->n_failed_samples ? e->n_failed_samples : e->n_failed), what,
                                 e->n_failed_samples ? "" : " (warmup)");
        }
        if (!value[0] && !mark[0])
                snprintf(value, sizeof(value), "-");
        char *s;
        return asprintf(&s, "%s%s%s%s", value, spread, rat, mark) < 0 ? NULL : s;
}

typedef struct Grid {
        size_t rows, cols;
        char **cells; /* rows x cols, row 0 is the header */
} Grid;

static void grid_done(Grid *g) {
        for (size_t i = 0; g->cells && i < g->rows * g->cols; i++)
                free(g->cells[i]);
        free(g->cells);
}

/* With exactly two variants the question is one number per cell: what the other costs against
 * the baseline (or gains, where more of the metric is better), in percent, with its interval
 * ("+2.3% [+1.1, +3.4]"; the change alone where the test could not bound it or there is no test). */
static char *cost_cell(const Report *rep, size_t c) {
        const ReportEntry *e = report_entry(rep, c, 1 - rep->baseline);
        if (!e->has_comparison)
                return strdup("-");
        const Comparison *k = &e->comparison;
        char *s;
        int r = k->lo > 0 && isfinite(k->hi) ? asprintf(&s, "%+.1f%% [%+.1f, %+.1f]", 100 * (k->ratio - 1),
                                                        100 * (k->lo - 1), 100 * (k->hi - 1))
                                             : asprintf(&s, "%+.1f%%", 100 * (k->ratio - 1));
        return r < 0 ? NULL : s;
}

static int grid_build(const Report *rep, Grid *g) {
        bool cost = rep->n_variants == 2;
        g->rows = rep->n_cells + 1;
        g->cols = rep->n_variants + 1 + cost;
        g->cells = calloc(g->rows * g->cols, sizeof(char *));
        if (!g->cells)
                return -ENOMEM;
        g->cells[0] = strdup("cell");
        for (size_t v = 0; v < rep->n_variants; v++) {
                char *h;
                if (asprintf(&h, "%s%s", rep->variant_names[v], v == rep->baseline ? " (baseline)" : "") < 0)
                        return -ENOMEM;
                g->cells[v + 1] = h;
        }
        if (cost)
                g->cells[g->cols - 1] = strdup(rep->run.higher_is_better ? "gain %" : "cost %");
        for (size_t c = 0; c < rep->n_cells; c++) {
                g->cells[(c + 1) * g->cols] = strdup(rep->cell_labels[c]);
                for (size_t v = 0; v < rep->n_variants; v++)
                        g->cells[(c + 1) * g->cols + v + 1] = grid_cell(rep, c, v);
                if (cost)
                        g->cells[(c + 2) * g->cols - 1] = cost_cell(rep, c);
        }
        /* A cell is one line, whatever a stored text in it holds (an imported exclusion reason). */
        for (size_t i = 0; i < g->rows * g->cols; i++) {
                char *one_line = g->cells[i] ? text_shown_as(g->cells[i], 0) : NULL;
                free(g->cells[i]);
                if (!(g->cells[i] = one_line))
                        return -ENOMEM;
        }
        return 0;
}

/* "no", "12" or "3-12": how many samples, from fewest to most (fewest UINT64_MAX: none). */
static const char *samples_range(uint64_t fewest, uint64_t most) {
        static char text[48];
        if (most == 0)
                snprintf(text, sizeof(text), "%s", fewest == 0 ? "0" : "no");
        else if (fewest == most || fewest == UINT64_MAX)
                snprintf(text, sizeof(text), "%llu", (unsigned long long) most);
        else
                snprintf(text, sizeof(text), "%llu-%llu", (unsigned long long) fewest,
                         (unsigned long long) most);
        return text;
}

static void print_header(FILE *f, const Report *rep, const char *bullet) {
        fprintf(f, "%s%s run %lld: %s, %s%s%s\n", bullet, rep->run.experiment, (long long) rep->run.id,
                rep->run.status, rep->run.started_at, rep->run.ended_at ? " - " : "",
                rep->run.ended_at ? rep->run.ended_at : "");
        bool imported_here = render_machine_unrecorded(rep);
        bool named = strcmp(rep->run.machine, rep->run.hostname) != 0;
        fprintf(f, "%s%s%s%shost %s%s: %s, %lld cpus, kernel %s, glibc %s, THP %s\n", bullet,
                named ? "machine " : "", named ? rep->run.machine : "", named ? ", " : "", rep->run.hostname,
                imported_here ? " (where it was imported: hyperfine records no machine)" : "",
                rep->cpu_model, (long long) rep->cpus, rep->kernel, rep->glibc, rep->thp);
        fprintf(f, "%suuid %s\n", bullet, rep->run.uuid);
        char pruned[512];
        if (render_pruned_note(rep, pruned, sizeof(pruned)))
                fprintf(f, "%s%s\n", bullet, pruned);
        if (rep->run.label || rep->run.commit)
                fprintf(f, "%s%s%s%s%s%s\n", bullet, rep->run.label ? "label " : "",
                        rep->run.label ? rep->run.label : "", rep->run.label && rep->run.commit ? ", " : "",
                        rep->run.commit ? "commit " : "", rep->run.commit ? rep->run.commit : "");
        /* How many samples the cells' medians are of (fewest counts the cells with none too). */
        uint64_t fewest = UINT64_MAX, fewest_taken = UINT64_MAX, most = 0;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++) {
                uint64_t n = rep->entries[i].has_stats ? rep->entries[i].stats.n : 0;
                fewest = n < fewest ? n : fewest;
                fewest_taken = n > 0 && n < fewest_taken ? n : fewest_taken;
                most = n > most ? n : most;
        }
        char samples[160];
        if (rep->samples_min >
            0) /* samples: auto: how many the cells took, and the rule that stopped them */
                snprintf(samples, sizeof(samples),
                         "%s samples (auto: %lld to %lld, until each ratio's %g%% interval is within "
                         "+-%g%%; ",
                         samples_range(fewest_taken, most), (long long) rep->samples_min,
                         (long long) rep->samples, 100 * (1 - rep->alpha), 100 * rep->min_effect);
        else if (strcmp(rep->run.status, "done") != 0 && most < (uint64_t) rep->samples)
                /* A run that ended early did not take what was planned (it said "of 3000" after 14). */
                snprintf(samples, sizeof(samples), "%s of %lld planned samples (the run ended early; ",
                         samples_range(fewest, most), (long long) rep->samples);
        else if (render_report_imported(rep)) /* as many as each took */
                snprintf(samples, sizeof(samples), "%s samples (", samples_range(fewest, most));
        else
                snprintf(samples, sizeof(samples), "%lld samples (", (long long) rep->samples);
        size_t missed = 0;
        for (size_t c = 0; c < rep->n_cells; c++)
                missed += render_cell_missed_target(rep, c);
        char seed[40] = ""; /* an import's order has none */
        if (!render_report_imported(rep))
                snprintf(seed, sizeof(seed), ", seed %llu", (unsigned long long) rep->seed);
        char verify[512], warmup[40] = "warm-ups not stored"; /* an import keeps none of the file's */
        if (!render_report_imported(rep))
                snprintf(warmup, sizeof(warmup), "%lld warmup", (long long) rep->warmup);
        fprintf(f, "%smetric %s: median of %s%s), order %s%s, verify %s\n", bullet, rep->run.metric, samples,
                warmup, rep->order, seed, render_verify(rep, verify, sizeof(verify)));
        if (missed)
                fprintf(f,
                        "%ssamples: auto: %zu of %zu cells stopped at the maximum of %lld samples with the "
                        "precision target missed (a ratio's %g%% interval wider than +-%g%%); raise the "
                        "maximum (samples: {min, max}%s) or expect inconclusive verdicts there\n",
                        bullet, missed, rep->n_cells, (long long) rep->samples, 100 * (1 - rep->alpha),
                        100 * rep->min_effect,
                        render_report_is_quick(rep) ? " in a spec: quick --print-spec writes one" : "");
        if (rep->child_cpus)
                fprintf(f, "%scpus: children pinned to %s, alloclab on %s\n", bullet, rep->child_cpus,
                        rep->runner_cpus ? rep->runner_cpus : "?");
        if (rep->cgroup)
                fprintf(f, "%sisolation: children in a cgroup (emptied between them) under %s\n", bullet,
                        rep->cgroup);
        else if (rep->cgroup_fallback)
                fprintf(f, "%sisolation: process groups only, no cgroups: %s\n", bullet,
                        rep->cgroup_fallback);
        if (rep->counters)
                fprintf(f, "%scounters: %s\n", bullet, rep->counters);
        fprintf(f, "%sallocators:", bullet);
        for (size_t v = 0; v < rep->n_variants; v++)
                fprintf(f, "%s %s=%s %s", v ? "," : "", rep->variant_names[v], rep->allocator_names[v],
                        rep->allocator_versions[v][0] ? rep->allocator_versions[v]
                                                      : "(version not recorded)");
        fputc('\n', f);
}

/* How the notes under the grid are written: each item after bullet; in Markdown, stored text
 * is escaped as Markdown too. */
typedef struct Notes {
        const char *bullet;
        bool markdown;
} Notes;

/* A stored text on one line: a newline in it (a program's message) must not start a line of the
 * table's own; in Markdown its syntax is shown as written (a stored "[link](url)" or "**"). */
static void put_one_line(FILE *f, const char *s, size_t len, bool markdown) {
        if (!markdown) {
                (void) text_show(f, s, len, 0);
                return;
        }
        _cleanup_free_ char *piece = strndup(s, len);
        _cleanup_free_ char *shown = piece ? text_shown_as(piece, 0) : NULL;
        if (shown)
                output_markdown_cell(f, shown);
}

/* An item about a cell: "bullet[LABEL]", the label (a parameter's value) shown as written. */
static void put_cell(FILE *f, const Notes *n, const char *label) {
        fprintf(f, "%s[", n->bullet);
        put_one_line(f, label, strlen(label), n->markdown);
        fputc(']', f);
}

static void print_noise_floor(FILE *f, const Report *rep, const Notes *n) {
        if (rep->aa_variant == SIZE_MAX)
                return;
        double worst = NAN;
        size_t measured = 0, differs = 0, compared = 0;
        for (size_t c = 0; c < rep->n_cells; c++) {
                compared += report_entry(rep, c, rep->aa_variant)->has_comparison;
                double floor = query_noise_floor(rep, c);
                if (isnan(floor))
                        continue;
                measured++;
                Verdict aa = report_entry(rep, c, rep->aa_variant)->comparison.verdict;
                differs += aa == VERDICT_LOWER || aa == VERDICT_HIGHER;
                worst = isnan(worst) || floor > worst ? floor : worst;
        }
        const char *base = rep->variant_names[rep->baseline], *copy = rep->variant_names[rep->aa_variant];
        if (measured == 0 && !render_report_has_verdicts(rep)) {
                fprintf(f,
                        "%sA/A check (%s run again as %s): no noise floor: order blocked gives no "
                        "interval\n",
                        n->bullet, base, copy);
                return;
        }
        if (measured == 0 && compared) {
                fprintf(f,
                        "%sA/A check (%s run again as %s): no noise floor: too few samples for a bounded "
                        "interval\n",
                        n->bullet, base, copy);
                return;
        }
        if (measured == 0) {
                fprintf(f, "%sA/A check (%s run again as %s): not measured\n", n->bullet, base, copy);
                return;
        }
        fprintf(f, "%sA/A check (%s run again as %s): noise floor +-%.1f%% (the widest of %zu cells",
                n->bullet, base, copy, 100 * worst, measured);
        if (compared > measured)
                fprintf(f, "; %zu had too few samples for a bound", compared - measured);
        fputs(")\n", f);
        if (differs)
                fprintf(f,
                        "%sWARNING: %s differs from %s in %zu of %zu cells: the same configuration measured"
                        " twice is not the same here; trust no small difference in this run\n",
                        n->bullet, copy, base, differs, measured);
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++)
                        if (render_below_noise_floor(rep, c, v)) {
                                put_cell(f, n, rep->cell_labels[c]);
                                fprintf(f, " %s: %+.1f%% is below the noise floor of +-%.1f%%\n",
                                        rep->variant_names[v],
                                        100 * (report_entry(rep, c, v)->comparison.ratio - 1),
                                        100 * query_noise_floor(rep, c));
                        }
}

/* What each inconclusive comparison could have told: the smallest change its test finds 80% of
 * the time at its samples and noise (Comparison.detectable). */
static void print_inconclusive(FILE *f, const Report *rep, const Notes *n) {
        CompareRule rule = render_rule(rep);
        bool header = false;
        for (size_t c = 0; c < rep->n_cells && render_report_has_verdicts(rep); c++)
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        if (!e->has_comparison || e->comparison.verdict != VERDICT_INCONCLUSIVE)
                                continue;
                        if (!header)
                                fprintf(f,
                                        "%s~ inconclusive: neither a difference nor within +-%g%%; the "
                                        "smallest "
                                        "change each would detect (%g%% of the time):\n",
                                        n->bullet, 100 * rep->min_effect, 100 * COMPARE_POWER);
                        header = true;
                        put_cell(f, n, rep->cell_labels[c]);
                        if (isfinite(e->comparison.detectable))
                                fprintf(f, " %s: +-%.1f%%\n", rep->variant_names[v],
                                        100 * e->comparison.detectable);
                        else
                                fprintf(f, " %s: none, too few samples for p < %.3g\n",
                                        rep->variant_names[v], compare_test_alpha(&rule));
                }
}

static void print_verdicts(FILE *f, const Report *rep, const Notes *n) {
        bool any = false;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                any |= rep->entries[i].has_comparison;
        if (!any)
                return;
        char rule[512];
        CompareRule verdict_rule = render_rule(rep);
        render_verdict_rule(&verdict_rule, rep->order, rule, sizeof(rule));
        fprintf(f, "\nAgainst %s (%s; docs/analysis.md):\n", rep->variant_names[rep->baseline], rule);
        bool time = render_report_is_time(rep);
        for (size_t v = 0; v < rep->n_variants; v++) {
                RenderVerdicts s = render_verdicts(rep, v);
                if (s.compared == 0)
                        continue;
                if (!render_report_has_verdicts(rep)) {
                        fprintf(f, "%s%s: geometric mean %.3fx over %zu cell%s, no verdict\n", n->bullet,
                                rep->variant_names[v], s.geomean, s.compared, s.compared == 1 ? "" : "s");
                        continue;
                }
                /* An interval the cells' own cannot bound (one reaching 0 or infinity) is none. */
                char interval[96] = "(no interval: a cell's own is unbounded)";
                if (s.lo > 0 && isfinite(s.hi))
                        snprintf(interval, sizeof(interval), "[%.3f, %.3f] (%.4g%%)", s.lo, s.hi,
                                 100 * render_interval_level(rep));
                fprintf(f,
                        "%s%s: %s in %zu of %zu cells, %s in %zu, same in %zu, inconclusive in %zu; "
                        "geometric mean %.3fx %s\n",
                        n->bullet, rep->variant_names[v], verdict_word(VERDICT_LOWER, time), s.lower,
                        s.compared, verdict_word(VERDICT_HIGHER, time), s.higher, s.same, s.inconclusive,
                        s.geomean, interval);
        }
        print_inconclusive(f, rep, n);
        print_noise_floor(f, rep, n);
}

/* Which variants no other one beats in both median wall time (or the metric: front_by_metric)
 * and median peak RSS, per cell. */
static void print_tradeoff(FILE *f, const Report *rep, const Notes *n) {
        bool any = false;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                any |= rep->entries[i].has_tradeoff;
        if (!any || rep->n_variants < 2)
                return;
        if (rep->front_by_metric)
                fprintf(f,
                        "\n%s/memory trade-off (Pareto front of median %s, %s is better, and median peak "
                        "RSS):\n",
                        render_time_metric(rep->run.metric) ? "Time" : "Metric", render_report_metric(rep),
                        rep->run.higher_is_better ? "more" : "less");
        else
                fprintf(f,
                        "\nTime/memory trade-off (Pareto front of median wall time and median peak RSS):\n");
        for (size_t v = 0; v < rep->n_variants; v++) {
                VariantSummary s = render_summarize(rep, v);
                if (s.tradeoff_cells)
                        fprintf(f, "%s%s: on the front in %zu of %zu cells\n", n->bullet,
                                rep->variant_names[v], s.pareto_cells, s.tradeoff_cells);
        }
}

/* A program with an allocator layer of its own: what the figures measure then. */
static void print_barely_exercised(FILE *f, const Report *rep, const Notes *n) {
        _cleanup_free_ char *note = render_barely_exercised_note(rep);
        if (note)
                fprintf(f, "\nAllocator barely exercised:\n%s%s\n", n->bullet, note);
}

static void print_flat_wall(FILE *f, const Report *rep, const Notes *n) {
        _cleanup_free_ char *note = render_flat_wall_note(rep);
        if (note)
                fprintf(f, "\nWall time flat:\n%s%s\n", n->bullet, note);
}

static void print_own_layer(FILE *f, const Report *rep, const Notes *n) {
        _cleanup_free_ char *note = render_own_layer_note(rep);
        if (note)
                fprintf(f, "\nAllocator layer of the program's own:\n%s%s\n", n->bullet, note);
}

/* Each variant's memory overhead (render_overhead_lines()): the geometric mean over the cells and
 * the range, and why a figure is missing or below 1. */
static void print_overhead(FILE *f, const Report *rep, const Notes *n) {
        bool oom;
        _cleanup_strv_free_ char **lines = render_overhead_lines(rep, &oom);
        if (!lines)
                return;
        fputs("\nMemory overhead (median peak RSS / the cell's peak of bytes the program asked for and had "
              "not freed, one figure for every variant: the baseline's smoke run under the probe):\n",
              f);
        for (char **l = lines; *l; l++)
                fprintf(f, "%s%s\n", n->bullet, *l);
}

/* A section of lines per cell and variant under its heading (render-figures.h), or nothing. */
static void print_lines(FILE *f, const Report *rep, const Notes *n, const char *heading,
                        char **(*lines_of)(const Report *rep, bool *ret_oom)) {
        bool oom;
        _cleanup_strv_free_ char **lines = lines_of(rep, &oom);
        if (!lines)
                return;
        fprintf(f, "\n%s:\n", heading);
        for (char **l = lines; *l; l++)
                fprintf(f, "%s%s\n", n->bullet, *l);
}

/* A cell's median wall time minus its variant's start-up (spec calibrate), or NAN. */

/* Start-up calibration: each variant's null-workload median, then, for wall time, the medians
 * with it subtracted, labelled as such; the table above stays what was measured. */
static void print_startup(FILE *f, const Report *rep, const Notes *n) {
        if (!rep->startup)
                return;
        json_t *argv = json_loads(rep->calibrate_command, 0, NULL);
        char command[256] = "";
        for (size_t i = 0; argv && i < json_array_size(argv); i++)
                snprintf(command + strlen(command), sizeof(command) - strlen(command), "%s%s", i ? " " : "",
                         json_string_value(json_array_get(argv, i)));
        json_decref(argv);
        fprintf(f, "\nStart-up (`%s` under each variant; median wall time with its 95%% interval):\n",
                command);
        const ReportStartup *base = &rep->startup[rep->baseline];
        for (size_t v = 0; v < rep->n_variants; v++) {
                const ReportStartup *u = &rep->startup[v];
                if (u->n == 0) {
                        fprintf(f, "%s%s: no successful run\n", n->bullet, rep->variant_names[v]);
                        continue;
                }
                char median[32], lo[32], hi[32], diff[48] = "";
                render_value("wall", u->median, median, sizeof(median));
                render_value("wall", u->lo, lo, sizeof(lo));
                render_value("wall", u->hi, hi, sizeof(hi));
                if (v != rep->baseline && base->n > 0)
                        snprintf(diff, sizeof(diff), ", %+.3f ms against %s",
                                 1e3 * (u->median - base->median), rep->variant_names[rep->baseline]);
                fprintf(f, "%s%s: %s [%s, %s] of %zu runs%s\n", n->bullet, rep->variant_names[v], median, lo,
                        hi, u->n, diff);
        }
        if (strcmp(rep->run.metric, "wall") != 0)
                return;
        fprintf(f, "\nMedian wall time MINUS each variant's start-up (derived; the table above is what was "
                   "measured):\n");
        for (size_t c = 0; c < rep->n_cells; c++) {
                put_cell(f, n, rep->cell_labels[c]);
                for (size_t v = 0; v < rep->n_variants; v++) {
                        double x = render_minus_startup(rep, c, v);
                        char value[32] = "-";
                        if (!isnan(x))
                                render_value("wall", x, value, sizeof(value));
                        fprintf(f, "%s %s %s", v ? "," : "", rep->variant_names[v], value);
                }
                fputc('\n', f);
        }
}

/* The quiet-machine guard: which measured samples ran on a machine busier than the spec allows,
 * before they started or while they ran (they are kept, and counted here). */
static void print_noisy(FILE *f, const Report *rep, const Notes *n) {
        int64_t checked = 0, noisy = 0, steal = 0, others = 0, skipped = 0;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++) {
                const ReportEntry *e = &rep->entries[i];
                checked += e->n_quiet_checked;
                noisy += e->n_noisy;
                steal += e->n_noisy_steal;
                others += e->n_noisy_others;
                skipped += e->n_skipped_busy;
        }
        if (noisy == 0)
                return;
        /* Who took the machine: other processes while the sample ran, the hypervisor (steal), or
         * the limits read before it started (CPU pressure and load count the run's own children
         * too): each is fixed differently. */
        int64_t before = noisy - steal - others;
        char who[400] = "", part[200];
        if (others > 0) {
                snprintf(part, sizeof(part), "; other processes took the time in %lld", (long long) others);
                strncat(who, part, sizeof(who) - strlen(who) - 1);
        }
        if (steal > 0) {
                snprintf(part, sizeof(part), "%s the hypervisor (steal) in %lld", *who ? "," : ";",
                         (long long) steal);
                strncat(who, part, sizeof(who) - strlen(who) - 1);
        }
        if (before > 0) {
                snprintf(part, sizeof(part),
                         "%s the machine was above the limits before it started in %lld (CPU pressure and "
                         "load count the run's own children too)",
                         *who ? "," : ";", (long long) before);
                strncat(who, part, sizeof(who) - strlen(who) - 1);
        }
        /* The limit is the spec's quiet: or the default; a quick run has no spec to point to. */
        const char *limit =
                render_report_is_quick(rep)
                        ? "the guard allows (other processes or the hypervisor took more than 0.25 "
                          "CPUs while a sample ran; a spec sets other limits with quiet:, and quick "
                          "--print-spec writes one)"
                        : "the guard allows (spec key quiet:, by default: other processes or the "
                          "hypervisor took more than 0.25 CPUs while a sample ran)";
        char fate[160];
        if (skipped == noisy)
                snprintf(fate, sizeof(fate), "none of them was run (on_busy: skip)");
        else if (skipped > 0)
                snprintf(fate, sizeof(fate),
                         "%lld were not run (on_busy: skip), the rest are kept and marked noisy",
                         (long long) skipped);
        else
                snprintf(fate, sizeof(fate), "they are kept and marked noisy");
        if (noisy == checked) { /* one line says it: no list of every cell */
                fprintf(f,
                        "\nQuiet-machine guard: all %lld measured samples met a machine busier than %s%s; "
                        "%s%s\n",
                        (long long) noisy, limit, who, fate,
                        skipped == noisy ? "" : ": every figure here carries the neighbours' work");
                return;
        }
        fprintf(f,
                "\nQuiet-machine guard: %lld of %lld measured samples met a machine busier than %s%s; %s:\n",
                (long long) noisy, (long long) checked, limit, who, fate);
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        if (e->n_noisy) {
                                put_cell(f, n, rep->cell_labels[c]);
                                fprintf(f, " %s: %lld of %lld noisy\n", rep->variant_names[v],
                                        (long long) e->n_noisy, (long long) e->n_quiet_checked);
                        }
                }
}

/* Outliers are kept in every statistic; saying where they are lets a reader judge a verdict. */
static void print_outliers(FILE *f, const Report *rep, const Notes *n) {
        bool any = false;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                any |= rep->entries[i].n_outliers > 0;
        if (!any) {
                if (rep->exclude_outliers)
                        fprintf(f, "\nOutliers: none to leave out (outliers: exclude)\n");
                return;
        }
        if (rep->exclude_outliers)
                fprintf(f,
                        "\nOutliers (modified z-score above %g; LEFT OUT of every figure above, as the "
                        "spec's"
                        " outliers: exclude asks):\n",
                        COMPARE_OUTLIER_Z);
        else
                fprintf(f, "\nOutliers (modified z-score above %g; kept in every figure):\n",
                        COMPARE_OUTLIER_Z);
        for (size_t c = 0; c < rep->n_cells; c++) {
                const char *separator = "";
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        if (e->n_outliers == 0)
                                continue;
                        if (!separator[0]) {
                                put_cell(f, n, rep->cell_labels[c]);
                                fputc(' ', f);
                        }
                        size_t measured = e->n_values + (rep->exclude_outliers ? e->n_outliers : 0);
                        fprintf(f, "%s%s %zu of %zu", separator, rep->variant_names[v], e->n_outliers,
                                measured);
                        separator = ", ";
                }
                if (separator[0])
                        fputc('\n', f);
        }
}

/* Samples of e failed, the first of them because its output differed from the reference's. */
static bool mismatched(const ReportEntry *e) {
        return e->n_failed > 0 && e->first_failure && strcmp(e->first_failure, "mismatch") == 0;
}

static void print_failures(FILE *f, const Report *rep, const Notes *n) {
        bool any_excluded = false;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                any_excluded |= rep->entries[i].excluded_reason != NULL;
        if (any_excluded) {
                fprintf(f, "\nExcluded:\n");
                for (size_t c = 0; c < rep->n_cells; c++)
                        for (size_t v = 0; v < rep->n_variants; v++)
                                if (report_entry(rep, c, v)->excluded_reason) {
                                        const char *reason = report_entry(rep, c, v)->excluded_reason;
                                        put_cell(f, n, rep->cell_labels[c]);
                                        fprintf(f, " %s: ", rep->variant_names[v]);
                                        put_one_line(f, reason, strlen(reason), n->markdown);
                                        fputc('\n', f);
                                }
        }
        if (rep->n_failures_listed == 0)
                return;
        fprintf(f, "\nFailed samples (%lld):\n", (long long) rep->run.n_failures);
        for (size_t i = 0; i < rep->n_failures_listed; i++) {
                const ReportFailure *x = &rep->failures[i];
                put_cell(f, n, x->cell);
                fprintf(f, " %s %s %lld: %s: ", x->variant, x->phase, (long long) x->round + 1, x->status);
                put_one_line(f, x->detail, strlen(x->detail), n->markdown);
                if (x->stderr_excerpt && x->stderr_excerpt[0]) {
                        size_t len = strcspn(x->stderr_excerpt, "\n");
                        fputs("; stderr: ", f);
                        put_one_line(f, x->stderr_excerpt, len > 120 ? 120 : len, n->markdown);
                        fputs(len > 120 ? "..." : "", f);
                }
                fputc('\n', f);
        }
        if ((int64_t) rep->n_failures_listed < rep->run.n_failures)
                fprintf(f, "%s... and %lld more\n", n->bullet,
                        (long long) (rep->run.n_failures - (int64_t) rep->n_failures_listed));
        /* The output varies from run to run whatever the allocator: the baseline's own samples
         * differ from its reference run's output (then every variant's do, and all may fail), or
         * some samples of a variant matched the reference and others did not. */
        static const char spec_remedy[] =
                "leave the lines that vary out of the comparison (verify_ignore: ['^seed ']), verify a "
                "file the program writes the same every time (verify: file:PATH), or turn verification "
                "off (verify: none)";
        static const char quick_remedy[] =
                "verify only the part of its output that is the same (alloclab quick ... -- sh -c "
                "'PROGRAM | grep -v seed'), or turn verification off (--verify none); a spec can leave "
                "the lines that vary out (verify_ignore) or verify a file instead (quick --print-spec "
                "writes one)";
        const char *remedy = render_report_is_quick(rep) ? quick_remedy : spec_remedy;
        for (size_t c = 0; c < rep->n_cells; c++) {
                const ReportEntry *base = report_entry(rep, c, rep->baseline);
                if (mismatched(base)) {
                        put_cell(f, n, rep->cell_labels[c]);
                        fprintf(f,
                                " the output is not deterministic: %lld of the baseline %s's own runs "
                                "failed, the first a mismatch with the reference run's output, so no "
                                "variant's output can be checked against it; %s\n",
                                (long long) base->n_failed, rep->variant_names[rep->baseline], remedy);
                        continue;
                }
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        if (!mismatched(e) || e->n_values == 0)
                                continue;
                        put_cell(f, n, rep->cell_labels[c]);
                        fprintf(f,
                                " %s: the output is not deterministic: %lld sample%s differed from the "
                                "reference's and %zu matched; %s\n",
                                rep->variant_names[v], (long long) e->n_failed, e->n_failed == 1 ? "" : "s",
                                e->n_values, remedy);
                }
        }
}

/* Colours of the result table on a terminal (render_use_colour()): verdicts and failures. */
static bool use_colour;

void render_use_colour(bool on) {
        use_colour = on;
}

#define COLOUR_GOOD  "\033[32m"
#define COLOUR_BAD   "\033[31m"
#define COLOUR_FAIL  "\033[1;31m"
#define COLOUR_RESET "\033[0m"

/* The part of a result cell to colour: its verdict word after the ratio ("1.05x slower") or
 * after its interval ("1.05x [1.01, 1.09] slower", compare), or its failure mark ("CRASH
 * SIGSEGV", "!2 TIMEOUT"): *ret_at and *ret_len, and the colour. */
static const char *cell_colour(const char *text, size_t *ret_at, size_t *ret_len) {
        static const struct {
                const char *word, *colour;
        } verdicts[] = { { "x faster", COLOUR_GOOD },
                         { "x lower", COLOUR_GOOD },
                         { "x slower", COLOUR_BAD },
                         { "x higher", COLOUR_BAD } };
        for (size_t i = 0; i < ELEMENTSOF(verdicts); i++) {
                const char *hit = strstr(text, verdicts[i].word);
                if (hit) {
                        *ret_at = (size_t) (hit - text) + 2;
                        *ret_len = strlen(verdicts[i].word) - 2;
                        return verdicts[i].colour;
                }
                const char *word = verdicts[i].word + 2; /* "] slower" */
                size_t n = strlen(text), k = strlen(word);
                if (n > k + 2 && strcmp(text + n - k, word) == 0 && text[n - k - 1] == ' ' &&
                    text[n - k - 2] == ']') {
                        *ret_at = n - k;
                        *ret_len = k;
                        return verdicts[i].colour;
                }
        }
        /* A mark is the cell's trailing run of capitals (and what they carry: digits, '!', '-'). */
        size_t end = strlen(text), at = end;
        while (at > 0 && (isupper((unsigned char) text[at - 1]) || isdigit((unsigned char) text[at - 1]) ||
                          strchr(" !-", text[at - 1])))
                at--;
        at += strspn(text + at, " ");
        if (at < end && (text[at] == '!' || isupper((unsigned char) text[at])) && end - at >= 3) {
                *ret_at = at;
                *ret_len = end - at;
                return COLOUR_FAIL;
        }
        return NULL;
}

void render_alarm(FILE *f, const char *word) {
        if (use_colour)
                output_raw(f, COLOUR_FAIL);
        fputs(word, f);
        if (use_colour)
                output_raw(f, COLOUR_RESET);
}

void render_cell(FILE *f, const char *text, int width, bool colour) {
        size_t at, len;
        const char *c = colour && use_colour ? cell_colour(text, &at, &len) : NULL;
        if (c) {
                fprintf(f, "%.*s", (int) at, text);
                output_raw(f, c);
                fprintf(f, "%.*s", (int) len, text + at);
                output_raw(f, COLOUR_RESET);
                fputs(text + at + len, f);
        } else
                fputs(text, f);
        for (int pad = width - (int) strlen(text); pad > 0; pad--)
                fputc(' ', f);
}

/* What the table or markdown grid is followed by, each item starting with n->bullet. */
static void print_notes(FILE *f, const Report *rep, const Notes *n) {
        print_verdicts(f, rep, n);
        print_tradeoff(f, rep, n);
        print_overhead(f, rep, n);
        print_lines(f, rep, n, RENDER_EXIT_MEMORY_HEADING, render_exit_memory_lines);
        print_lines(f, rep, n, RENDER_ALLOCATOR_STATS_HEADING, render_allocator_stats_lines);
        _cleanup_free_ char *timeline = render_timeline_heading(rep);
        if (timeline)
                print_lines(f, rep, n, timeline, render_timeline_lines);
        print_own_layer(f, rep, n);
        print_barely_exercised(f, rep, n);
        print_flat_wall(f, rep, n);
        print_startup(f, rep, n);
        print_noisy(f, rep, n);
        print_outliers(f, rep, n);
        print_failures(f, rep, n);
}

int render_report_table(FILE *f, const Report *rep) {
        _cleanup_(grid_done) Grid g = {};
        int r = grid_build(rep, &g);
        if (r < 0)
                return r;
        size_t width[SPEC_MAX_VARIANTS + 2] = {};
        for (size_t i = 0; i < g.rows * g.cols; i++)
                if (strlen(g.cells[i]) > width[i % g.cols])
                        width[i % g.cols] = strlen(g.cells[i]);
        print_header(f, rep, "");
        if (rep->message) {
                fputs("note: ", f);
                put_one_line(f, rep->message, strlen(rep->message), false);
                fputc('\n', f);
        }
        fputc('\n', f);
        for (size_t row = 0; row < g.rows; row++) {
                for (size_t col = 0; col < g.cols; col++) {
                        fputs(col ? "  " : "", f);
                        render_cell(f, g.cells[row * g.cols + col], col + 1 == g.cols ? 0 : (int) width[col],
                                    row > 0 && col > 0);
                }
                fputc('\n', f);
        }
        print_notes(f, rep, &(Notes){ .bullet = "  " });
        return ferror(f) ? -EIO : 0;
}

int render_report_markdown(FILE *f, const Report *rep) {
        _cleanup_(grid_done) Grid g = {};
        int r = grid_build(rep, &g);
        if (r < 0)
                return r;
        print_header(f, rep, "- ");
        fputc('\n', f);
        for (size_t row = 0; row < g.rows; row++) {
                for (size_t col = 0; col < g.cols; col++) {
                        fputs("| ", f);
                        output_markdown_cell(f, g.cells[row * g.cols + col]);
                        fputc(' ', f);
                }
                fprintf(f, "|\n");
                if (row == 0) {
                        for (size_t col = 0; col < g.cols; col++)
                                fprintf(f, "|%s", col ? "---:" : "---");
                        fprintf(f, "|\n");
                }
        }
        print_notes(f, rep, &(Notes){ .bullet = "- ", .markdown = true });
        return ferror(f) ? -EIO : 0;
}
