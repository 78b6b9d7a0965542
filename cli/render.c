/* SPDX-License-Identifier: MIT */
/*
 * Renderers of a Report. The text table and the markdown table share one grid builder (rows of
 * cells, one column per variant); CSV is long-form (one row per cell x variant) and JSON is
 * built with jansson, so that both load straight into pandas or a spreadsheet.
 *
 * A cell of the grid shows the median of the primary metric with its unit, its MAD relative to
 * the median, the ratio to the baseline, and a loud mark when samples failed or the variant was
 * excluded.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli/render.h"
#include "util/cleanup.h"

static bool ends_with(const char *s, const char *suffix) {
        size_t n = strlen(s), k = strlen(suffix);
        return n > k && strcmp(s + n - k, suffix) == 0;
}

/* The metric name without the "reported:" prefix decides the unit: the built-in ones theirs, a
 * reported one's by its name (docs/spec.md, Reported metrics). */
static const char *unit_kind(const char *metric) {
        if (strcmp(metric, "wall") == 0 || strcmp(metric, "user") == 0 || strcmp(metric, "sys") == 0 ||
            ends_with(metric, "_seconds"))
                return "time";
        if (strcmp(metric, "maxrss") == 0 || ends_with(metric, "_bytes"))
                return "bytes";
        return "raw";
}

const char *render_value(const char *metric, double v, char *buf, size_t size) {
        const char *kind = unit_kind(metric);
        if (strcmp(kind, "time") == 0) {
                if (v < 1e-6)
                        snprintf(buf, size, "%.0f ns", v * 1e9);
                else if (v < 1e-3)
                        snprintf(buf, size, "%.1f us", v * 1e6);
                else if (v < 1)
                        snprintf(buf, size, "%.1f ms", v * 1e3);
                else
                        snprintf(buf, size, "%.3f s", v);
        } else if (strcmp(kind, "bytes") == 0) {
                if (v < 1024 * 1024)
                        snprintf(buf, size, "%.1f KiB", v / 1024);
                else if (v < 1024.0 * 1024 * 1024)
                        snprintf(buf, size, "%.1f MiB", v / (1024 * 1024));
                else
                        snprintf(buf, size, "%.2f GiB", v / (1024.0 * 1024 * 1024));
        } else if (fabs(v) >= 1e5) { /* "238.1k", not "2.381e+05" */
                static const char suffix[] = "kMGTPE";
                int k = 0;
                do
                        v /= 1000;
                while (fabs(v) >= 1000 && k++ < 5);
                snprintf(buf, size, "%.4g%c", v, suffix[k]);
        } else
                snprintf(buf, size, "%.4g", v);
        return buf;
}

static const char *primary_metric(const Report *rep) {
        const char *m = rep->run.metric;
        return strncmp(m, "reported:", 9) == 0 ? m + 9 : m;
}

bool render_time_metric(const char *metric) {
        return strcmp(unit_kind(strncmp(metric, "reported:", 9) == 0 ? metric + 9 : metric), "time") == 0;
}

static bool time_metric(const Report *rep) {
        return render_time_metric(rep->run.metric);
}

/* Ratio to the baseline's median in the same cell, or 0 when either has no statistics. */
static double ratio(const Report *rep, size_t c, size_t v) {
        const ReportEntry *e = report_entry(rep, c, v), *b = report_entry(rep, c, rep->baseline);
        if (!e->has_stats || !b->has_stats || e->stats.n == 0 || b->stats.median == 0)
                return 0;
        return e->stats.median / b->stats.median;
}

void render_failure_mark(const ReportEntry *e, char *buf, size_t size) {
        const char *f = e->first_failure;
        if (!f && e->excluded_reason)
                f = e->excluded_reason;
        if (!f) {
                snprintf(buf, size, "?");
                return;
        }
        int n;
        if (sscanf(f, "signal %d", &n) == 1) {
                const char *abbrev = sigabbrev_np(n);
                snprintf(buf, size, "CRASH SIG%s", abbrev ? abbrev : "?");
                return;
        }
        size_t i = 0;
        for (; f[i] && f[i] != ':' && i + 1 < size; i++)
                buf[i] = (char) toupper((unsigned char) f[i]);
        buf[i] = 0;
}

static char *grid_cell(const Report *rep, size_t c, size_t v) {
        const ReportEntry *e = report_entry(rep, c, v);
        char value[64] = "", mark[64] = "", rat[32] = "", spread[32] = "";
        if (e->has_stats && e->stats.n > 0) {
                render_value(primary_metric(rep), e->stats.median, value, sizeof(value));
                /* Spread as MAD relative to the median: the noise a reader should weigh the
                 * ratio against. */
                if (e->stats.median != 0)
                        snprintf(spread, sizeof(spread), " +-%.1f%%", 100 * e->stats.mad / e->stats.median);
                double r = ratio(rep, c, v);
                if (v != rep->baseline && r > 0)
                        snprintf(rat, sizeof(rat), " %.2fx%s%s", r, e->has_comparison ? " " : "",
                                 e->has_comparison ? verdict_word(e->comparison.verdict, time_metric(rep))
                                                   : "");
        }
        if (e->excluded_reason || e->n_failed > 0) {
                char what[48];
                render_failure_mark(e, what, sizeof(what));
                if (e->excluded_reason)
                        snprintf(mark, sizeof(mark), "%s", what);
                else
                        snprintf(mark, sizeof(mark), " !%lld %s", (long long) e->n_failed, what);
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
 * the baseline, in percent, with its interval ("+2.3% [+1.1, +3.4]"). */
static char *cost_cell(const Report *rep, size_t c) {
        const ReportEntry *e = report_entry(rep, c, 1 - rep->baseline);
        if (!e->has_comparison)
                return strdup("-");
        const Comparison *k = &e->comparison;
        char *s;
        return asprintf(&s, "%+.1f%% [%+.1f, %+.1f]", 100 * (k->ratio - 1), 100 * (k->lo - 1),
                        100 * (k->hi - 1)) < 0
                       ? NULL
                       : s;
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
                g->cells[g->cols - 1] = strdup("cost %");
        for (size_t c = 0; c < rep->n_cells; c++) {
                g->cells[(c + 1) * g->cols] = strdup(rep->cell_labels[c]);
                for (size_t v = 0; v < rep->n_variants; v++)
                        g->cells[(c + 1) * g->cols + v + 1] = grid_cell(rep, c, v);
                if (cost)
                        g->cells[(c + 2) * g->cols - 1] = cost_cell(rep, c);
        }
        for (size_t i = 0; i < g->rows * g->cols; i++)
                if (!g->cells[i])
                        return -ENOMEM;
        return 0;
}

static void print_header(FILE *f, const Report *rep, const char *bullet) {
        fprintf(f, "%s%s run %lld: %s, %s%s%s\n", bullet, rep->run.experiment, (long long) rep->run.id,
                rep->run.status, rep->run.started_at, rep->run.ended_at ? " - " : "",
                rep->run.ended_at ? rep->run.ended_at : "");
        fprintf(f, "%shost %s: %s, %lld cpus, kernel %s, glibc %s, THP %s\n", bullet, rep->run.hostname,
                rep->cpu_model, (long long) rep->cpus, rep->kernel, rep->glibc, rep->thp);
        fprintf(f, "%suuid %s\n", bullet, rep->run.uuid);
        if (rep->run.label || rep->run.commit)
                fprintf(f, "%s%s%s%s%s%s\n", bullet, rep->run.label ? "label " : "",
                        rep->run.label ? rep->run.label : "", rep->run.label && rep->run.commit ? ", " : "",
                        rep->run.commit ? "commit " : "", rep->run.commit ? rep->run.commit : "");
        char samples[160];
        if (rep->samples_min > 0) {
                /* samples: auto: how many the cells took, and the rule that stopped them. */
                uint64_t fewest = UINT64_MAX, most = 0;
                for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                        if (rep->entries[i].has_stats && rep->entries[i].stats.n > 0) {
                                fewest = rep->entries[i].stats.n < fewest ? rep->entries[i].stats.n : fewest;
                                most = rep->entries[i].stats.n > most ? rep->entries[i].stats.n : most;
                        }
                int k = most == 0 ? snprintf(samples, sizeof(samples), "no")
                        : fewest == most
                                ? snprintf(samples, sizeof(samples), "%llu", (unsigned long long) most)
                                : snprintf(samples, sizeof(samples), "%llu-%llu",
                                           (unsigned long long) fewest, (unsigned long long) most);
                snprintf(samples + k, sizeof(samples) - (size_t) k,
                         " samples (auto: %lld to %lld, until each ratio's 95%% interval is within +-%g%%; ",
                         (long long) rep->samples_min, (long long) rep->samples, 100 * rep->min_effect);
        } else
                snprintf(samples, sizeof(samples), "%lld samples (", (long long) rep->samples);
        fprintf(f, "%smetric %s: median of %s%lld warmup), order %s, seed %llu, verify %s\n", bullet,
                rep->run.metric, samples, (long long) rep->warmup, rep->order,
                (unsigned long long) rep->seed, rep->verify);
        if (rep->child_cpus)
                fprintf(f, "%scpus: children pinned to %s, alloclab on %s\n", bullet, rep->child_cpus,
                        rep->runner_cpus ? rep->runner_cpus : "?");
        if (rep->cgroup)
                fprintf(f, "%sisolation: children in a cgroup (emptied between them) under %s\n", bullet,
                        rep->cgroup);
        else if (rep->cgroup_fallback)
                fprintf(f, "%sisolation: process groups only, no cgroups: %s\n", bullet,
                        rep->cgroup_fallback);
        fprintf(f, "%sallocators:", bullet);
        for (size_t v = 0; v < rep->n_variants; v++)
                fprintf(f, "%s %s=%s %s", v ? "," : "", rep->variant_names[v], rep->allocator_names[v],
                        rep->allocator_versions[v]);
        fputc('\n', f);
}

/* A variant across the cells: its wins against the baseline, the geometric mean of its ratios
 * with an interval, and how often it is on the time/memory Pareto front. */
/* The allocator's memory overhead in a cell: its smoke run's peak RSS over the peak live bytes
 * the probe counted; NAN when not measured. */
static double memory_overhead(const ReportEntry *e) {
        return e->has_overhead ? (double) e->smoke_peak_rss_bytes / (double) e->smoke_peak_live_bytes : NAN;
}

RenderVerdicts render_verdicts(const Report *rep, size_t v) {
        RenderVerdicts s = {};
        _cleanup_free_ const Comparison **cs = calloc(rep->n_cells + 1, sizeof(*cs));
        for (size_t c = 0; c < rep->n_cells && cs; c++) {
                const ReportEntry *e = report_entry(rep, c, v);
                if (!e->has_comparison)
                        continue;
                cs[s.compared++] = &e->comparison;
                s.lower += e->comparison.verdict == VERDICT_LOWER;
                s.higher += e->comparison.verdict == VERDICT_HIGHER;
        }
        if (s.compared)
                compare_geomean(cs, s.compared, COMPARE_LEVEL, &s.geomean, &s.lo, &s.hi);
        return s;
}

typedef struct VariantSummary {
        RenderVerdicts verdicts;
        size_t tradeoff_cells, pareto_cells;
        size_t overhead_cells;
        double overhead_geomean, overhead_lo, overhead_hi; /* when overhead_cells > 0 */
} VariantSummary;

static VariantSummary summarize(const Report *rep, size_t v) {
        VariantSummary s = { .verdicts = render_verdicts(rep, v),
                             .overhead_lo = INFINITY,
                             .overhead_hi = -INFINITY };
        double overhead_logs = 0;
        for (size_t c = 0; c < rep->n_cells; c++) {
                const ReportEntry *e = report_entry(rep, c, v);
                s.tradeoff_cells += e->has_tradeoff && !e->excluded_reason;
                s.pareto_cells += e->pareto;
                double overhead = memory_overhead(e);
                if (!isnan(overhead)) {
                        overhead_logs += log(overhead);
                        s.overhead_lo = fmin(s.overhead_lo, overhead);
                        s.overhead_hi = fmax(s.overhead_hi, overhead);
                        s.overhead_cells++;
                }
        }
        if (s.overhead_cells)
                s.overhead_geomean = exp(overhead_logs / (double) s.overhead_cells);
        return s;
}

/* The A/A noise floor of a cell: how far from 1 the interval of the baseline against its own
 * copy reaches, i.e. the smallest change these samples tell from noise; NAN without aa_check. */
static double noise_floor(const Report *rep, size_t c) {
        if (rep->aa_variant == SIZE_MAX)
                return NAN;
        const ReportEntry *e = report_entry(rep, c, rep->aa_variant);
        if (!e->has_comparison)
                return NAN;
        return fmax(e->comparison.hi - 1, 1 - e->comparison.lo);
}

/* A variant's change smaller than its cell's noise floor: not to be read as a difference. */
static bool below_noise_floor(const Report *rep, size_t c, size_t v) {
        const ReportEntry *e = report_entry(rep, c, v);
        double floor = noise_floor(rep, c);
        return v != rep->aa_variant && e->has_comparison && !isnan(floor) &&
               fabs(e->comparison.ratio - 1) < floor;
}

static void print_noise_floor(FILE *f, const Report *rep, const char *bullet) {
        if (rep->aa_variant == SIZE_MAX)
                return;
        double worst = NAN;
        size_t measured = 0, differs = 0;
        for (size_t c = 0; c < rep->n_cells; c++) {
                double floor = noise_floor(rep, c);
                if (isnan(floor))
                        continue;
                measured++;
                differs += report_entry(rep, c, rep->aa_variant)->comparison.verdict != VERDICT_SAME;
                worst = isnan(worst) || floor > worst ? floor : worst;
        }
        const char *base = rep->variant_names[rep->baseline], *copy = rep->variant_names[rep->aa_variant];
        if (measured == 0) {
                fprintf(f, "%sA/A check (%s run again as %s): not measured\n", bullet, base, copy);
                return;
        }
        fprintf(f, "%sA/A check (%s run again as %s): noise floor +-%.1f%% (the widest of %zu cells)\n",
                bullet, base, copy, 100 * worst, measured);
        if (differs)
                fprintf(f,
                        "%sWARNING: %s differs from %s in %zu of %zu cells: the same configuration measured"
                        " twice is not the same here; trust no small difference in this run\n",
                        bullet, copy, base, differs, measured);
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++)
                        if (below_noise_floor(rep, c, v))
                                fprintf(f, "%s[%s] %s: %+.1f%% is below the noise floor of +-%.1f%%\n",
                                        bullet, rep->cell_labels[c], rep->variant_names[v],
                                        100 * (report_entry(rep, c, v)->comparison.ratio - 1),
                                        100 * noise_floor(rep, c));
}

static void print_verdicts(FILE *f, const Report *rep, const char *bullet) {
        bool any = false;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                any |= rep->entries[i].has_comparison;
        if (!any)
                return;
        fprintf(f, "\nAgainst %s (a difference needs p < %g and at least %g%%; docs/analysis.md):\n",
                rep->variant_names[rep->baseline], rep->alpha, 100 * rep->min_effect);
        bool time = time_metric(rep);
        for (size_t v = 0; v < rep->n_variants; v++) {
                RenderVerdicts s = render_verdicts(rep, v);
                if (s.compared == 0)
                        continue;
                fprintf(f, "%s%s: %s in %zu of %zu cells, %s in %zu; geometric mean %.3fx [%.3f, %.3f]\n",
                        bullet, rep->variant_names[v], verdict_word(VERDICT_LOWER, time), s.lower,
                        s.compared, verdict_word(VERDICT_HIGHER, time), s.higher, s.geomean, s.lo, s.hi);
        }
        print_noise_floor(f, rep, bullet);
}

/* Which variants no other one beats in both median wall time and median peak RSS, per cell. */
static void print_tradeoff(FILE *f, const Report *rep, const char *bullet) {
        bool any = false;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                any |= rep->entries[i].has_tradeoff;
        if (!any || rep->n_variants < 2)
                return;
        fprintf(f, "\nTime/memory trade-off (Pareto front of median wall time and median peak RSS):\n");
        for (size_t v = 0; v < rep->n_variants; v++) {
                VariantSummary s = summarize(rep, v);
                if (s.tradeoff_cells)
                        fprintf(f, "%s%s: on the front in %zu of %zu cells\n", bullet, rep->variant_names[v],
                                s.pareto_cells, s.tradeoff_cells);
        }
}

/* Each variant's memory overhead (memory_overhead()): the geometric mean over the cells and
 * the range. */
static void print_overhead(FILE *f, const Report *rep, const char *bullet) {
        bool any = false;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                any |= rep->entries[i].has_overhead;
        if (!any)
                return;
        fprintf(f, "\nMemory overhead (peak RSS / peak live bytes of the smoke run under the probe):\n");
        for (size_t v = 0; v < rep->n_variants; v++) {
                VariantSummary s = summarize(rep, v);
                if (s.overhead_cells == 1)
                        fprintf(f, "%s%s: %.2fx\n", bullet, rep->variant_names[v], s.overhead_geomean);
                else if (s.overhead_cells > 1)
                        fprintf(f, "%s%s: %.2fx (geometric mean of %zu cells, %.2f-%.2f)\n", bullet,
                                rep->variant_names[v], s.overhead_geomean, s.overhead_cells, s.overhead_lo,
                                s.overhead_hi);
        }
}

/* A cell's median wall time minus its variant's start-up (spec calibrate), or NAN. */
static double minus_startup(const Report *rep, size_t c, size_t v) {
        const ReportEntry *e = report_entry(rep, c, v);
        if (!rep->startup || rep->startup[v].n == 0 || !e->has_stats || e->stats.n == 0 ||
            strcmp(rep->run.metric, "wall") != 0)
                return NAN;
        return e->stats.median - rep->startup[v].median;
}

/* Start-up calibration: each variant's null-workload median, then, for wall time, the medians
 * with it subtracted, labelled as such; the table above stays what was measured. */
static void print_startup(FILE *f, const Report *rep, const char *bullet) {
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
                        fprintf(f, "%s%s: no successful run\n", bullet, rep->variant_names[v]);
                        continue;
                }
                char median[32], lo[32], hi[32], diff[48] = "";
                render_value("wall", u->median, median, sizeof(median));
                render_value("wall", u->lo, lo, sizeof(lo));
                render_value("wall", u->hi, hi, sizeof(hi));
                if (v != rep->baseline && base->n > 0)
                        snprintf(diff, sizeof(diff), ", %+.3f ms against %s",
                                 1e3 * (u->median - base->median), rep->variant_names[rep->baseline]);
                fprintf(f, "%s%s: %s [%s, %s] of %zu runs%s\n", bullet, rep->variant_names[v], median, lo,
                        hi, u->n, diff);
        }
        if (strcmp(rep->run.metric, "wall") != 0)
                return;
        fprintf(f, "\nMedian wall time MINUS each variant's start-up (derived; the table above is what was "
                   "measured):\n");
        for (size_t c = 0; c < rep->n_cells; c++) {
                fprintf(f, "%s[%s]", bullet, rep->cell_labels[c]);
                for (size_t v = 0; v < rep->n_variants; v++) {
                        double x = minus_startup(rep, c, v);
                        char value[32] = "-";
                        if (!isnan(x))
                                render_value("wall", x, value, sizeof(value));
                        fprintf(f, "%s %s %s", v ? "," : "", rep->variant_names[v], value);
                }
                fputc('\n', f);
        }
}

/* The quiet-machine guard: which measured samples started on a machine busier than the spec
 * allows (they are kept, and counted here). */
static void print_noisy(FILE *f, const Report *rep, const char *bullet) {
        int64_t checked = 0, noisy = 0;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++) {
                checked += rep->entries[i].n_quiet_checked;
                noisy += rep->entries[i].n_noisy;
        }
        if (noisy == 0)
                return;
        fprintf(f,
                "\nQuiet-machine guard: %lld of %lld measured samples started on a busier machine than the "
                "spec's"
                " quiet: allows (noisy; kept, unless on_busy: skip)\n",
                (long long) noisy, (long long) checked);
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        if (e->n_noisy)
                                fprintf(f, "%s[%s] %s: %lld of %lld noisy\n", bullet, rep->cell_labels[c],
                                        rep->variant_names[v], (long long) e->n_noisy,
                                        (long long) e->n_quiet_checked);
                }
}

/* Outliers are kept in every statistic; saying where they are lets a reader judge a verdict. */
static void print_outliers(FILE *f, const Report *rep, const char *bullet) {
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
                        if (!separator[0])
                                fprintf(f, "%s[%s] ", bullet, rep->cell_labels[c]);
                        size_t measured = e->n_values + (rep->exclude_outliers ? e->n_outliers : 0);
                        fprintf(f, "%s%s %zu of %zu", separator, rep->variant_names[v], e->n_outliers,
                                measured);
                        separator = ", ";
                }
                if (separator[0])
                        fputc('\n', f);
        }
}

static void print_failures(FILE *f, const Report *rep, const char *bullet) {
        bool any_excluded = false;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                any_excluded |= rep->entries[i].excluded_reason != NULL;
        if (any_excluded) {
                fprintf(f, "\nExcluded:\n");
                for (size_t c = 0; c < rep->n_cells; c++)
                        for (size_t v = 0; v < rep->n_variants; v++)
                                if (report_entry(rep, c, v)->excluded_reason)
                                        fprintf(f, "%s[%s] %s: %s\n", bullet, rep->cell_labels[c],
                                                rep->variant_names[v],
                                                report_entry(rep, c, v)->excluded_reason);
        }
        if (rep->n_failures_listed == 0)
                return;
        fprintf(f, "\nFailed samples (%lld):\n", (long long) rep->run.n_failures);
        for (size_t i = 0; i < rep->n_failures_listed; i++) {
                const ReportFailure *x = &rep->failures[i];
                fprintf(f, "%s[%s] %s %s %lld: %s: %s", bullet, x->cell, x->variant, x->phase,
                        (long long) x->round + 1, x->status, x->detail);
                if (x->stderr_excerpt && x->stderr_excerpt[0]) {
                        size_t len = strcspn(x->stderr_excerpt, "\n");
                        fprintf(f, "; stderr: %.*s%s", (int) (len > 120 ? 120 : len), x->stderr_excerpt,
                                len > 120 ? "..." : "");
                }
                fputc('\n', f);
        }
        if ((int64_t) rep->n_failures_listed < rep->run.n_failures)
                fprintf(f, "%s... and %lld more\n", bullet,
                        (long long) (rep->run.n_failures - (int64_t) rep->n_failures_listed));
        /* Some samples' output matched the reference and others did not: the program's output
         * varies from run to run, whatever the allocator. */
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        if (e->n_failed == 0 || e->n_values == 0 || !e->first_failure ||
                            strcmp(e->first_failure, "mismatch") != 0)
                                continue;
                        fprintf(f,
                                "%s[%s] %s: the output is not deterministic: %lld sample%s differed from "
                                "the "
                                "reference's and %zu matched; verify a file the program writes the same "
                                "every time (verify: file:PATH) or turn verification off (verify: none)\n",
                                bullet, rep->cell_labels[c], rep->variant_names[v], (long long) e->n_failed,
                                e->n_failed == 1 ? "" : "s", e->n_values);
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

/* The part of a result cell to colour: its verdict word after the ratio ("1.05x slower"), or
 * its failure mark ("CRASH SIGSEGV", "!2 TIMEOUT"): *ret_at and *ret_len, and the colour. */
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

/* A result cell padded to width, coloured when the table is. */
static void print_cell(FILE *f, const char *text, int width, bool colour) {
        size_t at, len;
        const char *c = colour ? cell_colour(text, &at, &len) : NULL;
        if (c)
                fprintf(f, "%.*s%s%.*s%s%s", (int) at, text, c, (int) len, text + at, COLOUR_RESET,
                        text + at + len);
        else
                fputs(text, f);
        for (int pad = width - (int) strlen(text); pad > 0; pad--)
                fputc(' ', f);
}

static int render_table(FILE *f, const Report *rep) {
        _cleanup_(grid_done) Grid g = {};
        int r = grid_build(rep, &g);
        if (r < 0)
                return r;
        size_t width[SPEC_MAX_VARIANTS + 2] = {};
        for (size_t i = 0; i < g.rows * g.cols; i++)
                if (strlen(g.cells[i]) > width[i % g.cols])
                        width[i % g.cols] = strlen(g.cells[i]);
        print_header(f, rep, "");
        if (rep->message)
                fprintf(f, "note: %s\n", rep->message);
        fputc('\n', f);
        for (size_t row = 0; row < g.rows; row++) {
                for (size_t col = 0; col < g.cols; col++) {
                        fputs(col ? "  " : "", f);
                        print_cell(f, g.cells[row * g.cols + col], col + 1 == g.cols ? 0 : (int) width[col],
                                   use_colour && row > 0 && col > 0);
                }
                fputc('\n', f);
        }
        print_verdicts(f, rep, "  ");
        print_tradeoff(f, rep, "  ");
        print_overhead(f, rep, "  ");
        print_startup(f, rep, "  ");
        print_noisy(f, rep, "  ");
        print_outliers(f, rep, "  ");
        print_failures(f, rep, "  ");
        return ferror(f) ? -EIO : 0;
}

static int render_markdown(FILE *f, const Report *rep) {
        _cleanup_(grid_done) Grid g = {};
        int r = grid_build(rep, &g);
        if (r < 0)
                return r;
        print_header(f, rep, "- ");
        fputc('\n', f);
        for (size_t row = 0; row < g.rows; row++) {
                for (size_t col = 0; col < g.cols; col++)
                        fprintf(f, "| %s ", g.cells[row * g.cols + col]);
                fprintf(f, "|\n");
                if (row == 0) {
                        for (size_t col = 0; col < g.cols; col++)
                                fprintf(f, "|%s", col ? "---:" : "---");
                        fprintf(f, "|\n");
                }
        }
        print_verdicts(f, rep, "- ");
        print_tradeoff(f, rep, "- ");
        print_overhead(f, rep, "- ");
        print_startup(f, rep, "- ");
        print_noisy(f, rep, "- ");
        print_outliers(f, rep, "- ");
        print_failures(f, rep, "- ");
        return ferror(f) ? -EIO : 0;
}

static json_t *json_str_or_null(const char *s) {
        return s ? json_string(s) : json_null();
}

json_t *render_table_new(const char *const *names, size_t n) {
        json_t *columns = json_array();
        for (size_t i = 0; i < n; i++)
                json_array_append_new(columns, json_string(names[i]));
        return json_pack("{s:o, s:[]}", "columns", columns, "rows");
}

void render_table_add_row(json_t *table, json_t *const *values, size_t n) {
        const json_t *columns = json_object_get(table, "columns");
        json_t *row = json_object();
        for (size_t i = 0; i < n; i++)
                json_object_set_new(row, json_string_value(json_array_get(columns, i)), values[i]);
        json_array_append_new(json_object_get(table, "rows"), row);
}

/* "flag" or "exclude": whether the figures shown keep the outliers (spec key outliers). */
static const char *outlier_policy(const Report *rep) {
        return rep->exclude_outliers ? "exclude" : "flag";
}

json_t *render_stats_table(const Report *rep) {
        static const char *const names[] = {
                "run_id",
                "experiment",
                "cell",
                "variant",
                "allocator",
                "metric",
                "n",
                "median",
                "mad",
                "mean",
                "stddev",
                "min",
                "max",
                "ratio_to_baseline",
                "failed_samples",
                "first_failure",
                "excluded",
                "ratio_ci_low",
                "ratio_ci_high",
                "p_value",
                "test",
                "verdict",
                "outliers",
                "outlier_policy",
                "pareto",
                "noise_floor",
                "below_noise_floor",
                "median_ci_low",
                "median_ci_high",
        };
        json_t *table = render_table_new(names, ELEMENTSOF(names));
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        const Stats *st = &e->stats;
                        const Comparison *cmp = &e->comparison;
                        bool s = e->has_stats, k = e->has_comparison;
                        double r = ratio(rep, c, v), floor = noise_floor(rep, c);
                        json_t *values[] = {
                                json_integer(rep->run.id),
                                json_string(rep->run.experiment),
                                json_string(rep->cell_labels[c]),
                                json_string(rep->variant_names[v]),
                                json_string(rep->allocator_names[v]),
                                json_string(rep->run.metric),
                                json_integer(s ? (json_int_t) st->n : 0),
                                s ? json_real(st->median) : json_null(),
                                s ? json_real(st->mad) : json_null(),
                                s ? json_real(st->mean) : json_null(),
                                s ? json_real(st->stddev) : json_null(),
                                s ? json_real(st->min) : json_null(),
                                s ? json_real(st->max) : json_null(),
                                r > 0 ? json_real(r) : json_null(),
                                json_integer(e->n_failed),
                                json_str_or_null(e->first_failure),
                                json_str_or_null(e->excluded_reason),
                                k ? json_real(cmp->lo) : json_null(),
                                k ? json_real(cmp->hi) : json_null(),
                                k ? json_real(cmp->p) : json_null(),
                                k ? json_string(comparison_test(cmp)) : json_null(),
                                k ? json_string(verdict_word(cmp->verdict, time_metric(rep))) : json_null(),
                                json_integer((json_int_t) e->n_outliers),
                                json_string(outlier_policy(rep)),
                                e->has_tradeoff ? json_boolean(e->pareto) : json_null(),
                                isnan(floor) ? json_null() : json_real(floor),
                                isnan(floor) ? json_null() : json_boolean(below_noise_floor(rep, c, v)),
                                e->has_median_ci ? json_real(e->median_lo) : json_null(),
                                e->has_median_ci ? json_real(e->median_hi) : json_null(),
                        };
                        render_table_add_row(table, values, ELEMENTSOF(values));
                }
        return table;
}

/* A table cell as text: integers exactly, reals with the fewest digits (15 or 17) that read
 * back as the same double, booleans as true/false, null as nothing. */
static void cell_text(const json_t *value, char *buf, size_t size) {
        if (json_is_integer(value))
                snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(value));
        else if (json_is_real(value)) {
                double v = json_real_value(value);
                snprintf(buf, size, "%.15g", v); /* the shorter form when it reads back the same */
                if (strtod(buf, NULL) != v)
                        snprintf(buf, size, "%.17g", v);
        } else if (json_is_boolean(value))
                snprintf(buf, size, "%s", json_is_true(value) ? "true" : "false");
        else if (json_is_string(value))
                snprintf(buf, size, "%s", json_string_value(value));
        else
                buf[0] = 0;
}

/* RFC 4180 quoting when needed. */
static void csv_field(FILE *f, const char *s) {
        if (!strpbrk(s, ",\"\r\n")) {
                fputs(s, f);
                return;
        }
        fputc('"', f);
        for (const char *p = s; *p; p++) {
                if (*p == '"')
                        fputc('"', f);
                fputc(*p, f);
        }
        fputc('"', f);
}

/* Markdown table cell: pipes escaped, line breaks as spaces. */
static void markdown_field(FILE *f, const char *s) {
        for (const char *p = s; *p; p++) {
                if (*p == '|')
                        fputs("\\|", f);
                else
                        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
        }
}

/* An aligned text table: columns two spaces apart, null as "-". */
static int render_rows_aligned(FILE *f, const json_t *columns, const json_t *rows) {
        size_t n = json_array_size(columns), width[64] = {}, i, r;
        json_t *column, *row;
        if (n > ELEMENTSOF(width))
                return -E2BIG;
        json_array_foreach(columns, i, column) width[i] = strlen(json_string_value(column));
        char text[4096];
        json_array_foreach(rows, r, row) json_array_foreach(columns, i, column) {
                cell_text(json_object_get(row, json_string_value(column)), text, sizeof(text));
                width[i] = strlen(text) > width[i] ? strlen(text) : width[i];
        }
        json_array_foreach(columns, i, column) fprintf(
                f, "%s%-*s", i ? "  " : "", i + 1 < n ? (int) width[i] : 0, json_string_value(column));
        fputc('\n', f);
        json_array_foreach(rows, r, row) {
                json_array_foreach(columns, i, column) {
                        const json_t *value = json_object_get(row, json_string_value(column));
                        cell_text(value, text, sizeof(text));
                        fprintf(f, "%s%-*s", i ? "  " : "", i + 1 < n ? (int) width[i] : 0,
                                json_is_null(value) ? "-" : text);
                }
                fputc('\n', f);
        }
        return ferror(f) ? -EIO : 0;
}

int render_rows(FILE *f, OutputFormat format, const json_t *table) {
        const json_t *columns = json_object_get(table, "columns"), *rows = json_object_get(table, "rows");
        if (format == FORMAT_TABLE)
                return render_rows_aligned(f, columns, rows);
        if (format == FORMAT_JSON) {
                int r = json_dumpf(rows, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
                fputc('\n', f);
                return r < 0 || ferror(f) ? -EIO : 0;
        }
        bool markdown = format == FORMAT_MARKDOWN;
        void (*field)(FILE *, const char *) = markdown ? markdown_field : csv_field;
        const char *open = markdown ? "| " : "", *separator = markdown ? " | " : ",",
                   *close = markdown ? " |\n" : "\n";
        size_t i, n = json_array_size(columns);
        json_t *column, *row;
        fputs(open, f);
        json_array_foreach(columns, i, column) {
                field(f, json_string_value(column));
                fputs(i + 1 < n ? separator : close, f);
        }
        if (markdown) {
                for (i = 0; i < n; i++)
                        fputs("|---", f);
                fputs("|\n", f);
        }
        size_t r;
        json_array_foreach(rows, r, row) {
                fputs(open, f);
                json_array_foreach(columns, i, column) {
                        char text[4096];
                        cell_text(json_object_get(row, json_string_value(column)), text, sizeof(text));
                        field(f, text);
                        fputs(i + 1 < n ? separator : close, f);
                }
        }
        return ferror(f) ? -EIO : 0;
}

static int render_csv(FILE *f, const Report *rep) {
        json_auto_t *table = render_stats_table(rep);
        return table ? render_rows(f, FORMAT_CSV, table) : -ENOMEM;
}

static int render_json(FILE *f, const Report *rep) {
        json_t *root = json_object(), *variants = json_array(), *cells = json_array(),
               *failures = json_array();
        json_object_set_new(root, "run_id", json_integer(rep->run.id));
        json_object_set_new(root, "uuid", json_string(rep->run.uuid));
        json_object_set_new(root, "label", json_str_or_null(rep->run.label));
        json_object_set_new(root, "commit", json_str_or_null(rep->run.commit));
        json_object_set_new(root, "experiment", json_string(rep->run.experiment));
        json_object_set_new(root, "status", json_string(rep->run.status));
        json_object_set_new(root, "started_at", json_string(rep->run.started_at));
        json_object_set_new(root, "ended_at", json_str_or_null(rep->run.ended_at));
        json_object_set_new(root, "host",
                            json_pack("{s:s, s:s, s:s, s:I, s:s, s:s}", "hostname", rep->run.hostname,
                                      "cpu_model", rep->cpu_model, "kernel", rep->kernel, "cpus",
                                      (json_int_t) rep->cpus, "glibc", rep->glibc, "thp", rep->thp));
        json_object_set_new(root, "metric", json_string(rep->run.metric));
        json_object_set_new(root, "samples", json_integer(rep->samples));
        json_object_set_new(root, "samples_auto",
                            rep->samples_min > 0
                                    ? json_pack("{s:I, s:I}", "min", (json_int_t) rep->samples_min, "max",
                                                (json_int_t) rep->samples)
                                    : json_null());
        json_object_set_new(root, "warmup", json_integer(rep->warmup));
        json_object_set_new(root, "order", json_string(rep->order));
        json_object_set_new(root, "seed", json_integer((json_int_t) rep->seed));
        json_object_set_new(root, "verify", json_string(rep->verify));
        json_object_set_new(root, "baseline", json_string(rep->variant_names[rep->baseline]));
        json_object_set_new(root, "min_effect", json_real(rep->min_effect));
        json_object_set_new(root, "alpha", json_real(rep->alpha));
        json_object_set_new(root, "outlier_policy", json_string(outlier_policy(rep)));
        json_object_set_new(root, "cpus", json_str_or_null(rep->child_cpus));
        json_object_set_new(root, "runner_cpus", json_str_or_null(rep->runner_cpus));
        json_object_set_new(root, "cgroup", json_str_or_null(rep->cgroup));
        json_object_set_new(root, "cgroup_fallback", json_str_or_null(rep->cgroup_fallback));
        json_t *calibrate = rep->calibrate_command ? json_loads(rep->calibrate_command, 0, NULL) : NULL;
        json_object_set_new(root, "calibrate_command", calibrate ? calibrate : json_null());
        json_object_set_new(root, "aa_variant",
                            rep->aa_variant == SIZE_MAX ? json_null()
                                                        : json_string(rep->variant_names[rep->aa_variant]));
        json_object_set_new(root, "n_failures", json_integer(rep->run.n_failures));
        for (size_t v = 0; v < rep->n_variants; v++) {
                VariantSummary s = summarize(rep, v);
                const RenderVerdicts *k = &s.verdicts;
                json_t *o = json_pack(
                        "{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I}", "name", rep->variant_names[v],
                        "allocator", rep->allocator_names[v], "version", rep->allocator_versions[v],
                        "compared_cells", (json_int_t) k->compared, "lower_cells", (json_int_t) k->lower,
                        "higher_cells", (json_int_t) k->higher, "tradeoff_cells",
                        (json_int_t) s.tradeoff_cells, "pareto_cells", (json_int_t) s.pareto_cells);
                json_object_set_new(o, "geomean", k->compared ? json_real(k->geomean) : json_null());
                json_object_set_new(o, "geomean_ci_low", k->compared ? json_real(k->lo) : json_null());
                json_object_set_new(o, "geomean_ci_high", k->compared ? json_real(k->hi) : json_null());
                const ReportStartup *u = rep->startup ? &rep->startup[v] : NULL;
                json_object_set_new(o, "startup",
                                    u && u->n ? json_pack("{s:I, s:f, s:f, s:f}", "n", (json_int_t) u->n,
                                                          "median", u->median, "ci_low", u->lo, "ci_high",
                                                          u->hi)
                                              : json_null());
                json_array_append_new(variants, o);
        }
        for (size_t c = 0; c < rep->n_cells; c++) {
                json_t *results = json_object();
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        json_t *o = json_object();
                        if (e->has_stats) {
                                json_object_set_new(o, "n", json_integer((json_int_t) e->stats.n));
                                json_object_set_new(o, "median", json_real(e->stats.median));
                                if (e->has_median_ci) {
                                        json_object_set_new(o, "median_ci_low", json_real(e->median_lo));
                                        json_object_set_new(o, "median_ci_high", json_real(e->median_hi));
                                }
                                json_object_set_new(o, "mad", json_real(e->stats.mad));
                                json_object_set_new(o, "mean", json_real(e->stats.mean));
                                json_object_set_new(o, "stddev", json_real(e->stats.stddev));
                                json_object_set_new(o, "min", json_real(e->stats.min));
                                json_object_set_new(o, "max", json_real(e->stats.max));
                        }
                        double r = ratio(rep, c, v);
                        json_object_set_new(o, "ratio_to_baseline", r > 0 ? json_real(r) : json_null());
                        if (e->has_comparison) {
                                json_object_set_new(o, "ratio_ci_low", json_real(e->comparison.lo));
                                json_object_set_new(o, "ratio_ci_high", json_real(e->comparison.hi));
                                json_object_set_new(o, "p_value", json_real(e->comparison.p));
                                json_object_set_new(o, "test", json_string(comparison_test(&e->comparison)));
                                json_object_set_new(
                                        o, "verdict",
                                        json_string(verdict_word(e->comparison.verdict, time_metric(rep))));
                        }
                        double net = minus_startup(rep, c, v);
                        json_object_set_new(o, "median_minus_startup",
                                            isnan(net) ? json_null() : json_real(net));
                        json_object_set_new(o, "outliers", json_integer((json_int_t) e->n_outliers));
                        json_object_set_new(o, "pareto",
                                            e->has_tradeoff ? json_boolean(e->pareto) : json_null());
                        json_object_set_new(o, "smoke_peak_live_bytes",
                                            e->has_overhead ? json_integer(e->smoke_peak_live_bytes)
                                                            : json_null());
                        double overhead = memory_overhead(e);
                        json_object_set_new(o, "memory_overhead",
                                            isnan(overhead) ? json_null() : json_real(overhead));
                        double floor = noise_floor(rep, c);
                        json_object_set_new(o, "noise_floor", isnan(floor) ? json_null() : json_real(floor));
                        json_object_set_new(o, "below_noise_floor",
                                            isnan(floor) ? json_null()
                                                         : json_boolean(below_noise_floor(rep, c, v)));
                        json_object_set_new(o, "noisy_samples",
                                            e->n_quiet_checked ? json_integer(e->n_noisy) : json_null());
                        json_object_set_new(o, "failed_samples", json_integer(e->n_failed));
                        json_object_set_new(o, "first_failure", json_str_or_null(e->first_failure));
                        json_object_set_new(o, "excluded", json_str_or_null(e->excluded_reason));
                        json_object_set_new(results, rep->variant_names[v], o);
                }
                json_array_append_new(
                        cells, json_pack("{s:s, s:o}", "cell", rep->cell_labels[c], "results", results));
        }
        for (size_t i = 0; i < rep->n_failures_listed; i++) {
                const ReportFailure *x = &rep->failures[i];
                json_array_append_new(failures,
                                      json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:o}", "cell", x->cell,
                                                "variant", x->variant, "phase", x->phase, "round",
                                                (json_int_t) x->round + 1, "status", x->status, "detail",
                                                x->detail, "stderr", json_str_or_null(x->stderr_excerpt)));
        }
        json_object_set_new(root, "variants", variants);
        json_object_set_new(root, "cells", cells);
        json_object_set_new(root, "failures", failures);
        int r = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        fputc('\n', f);
        return r < 0 || ferror(f) ? -EIO : 0;
}

RenderFunc render_for(OutputFormat format) {
        static const RenderFunc table[_FORMAT_MAX] = {
                [FORMAT_TABLE] = render_table,
                [FORMAT_MARKDOWN] = render_markdown,
                [FORMAT_CSV] = render_csv,
                [FORMAT_JSON] = render_json,
        };
        return (unsigned) format < _FORMAT_MAX ? table[format] : NULL;
}

int render_runs(FILE *f, OutputFormat format, const RunSummary *runs, size_t n) {
        if (format == FORMAT_TABLE) {
                fprintf(f, "%-6s %-24s %-12s %-25s %6s %8s %8s  %-16s %s\n", "RUN", "EXPERIMENT", "STATUS",
                        "STARTED", "CELLS", "VARIANTS", "FAILED", "HOST", "LABEL");
                for (size_t i = 0; i < n; i++)
                        fprintf(f, "%-6lld %-24s %-12s %-25s %6lld %8lld %8lld  %-16s %s%s%.12s\n",
                                (long long) runs[i].id, runs[i].experiment, runs[i].status,
                                runs[i].started_at, (long long) runs[i].n_cells,
                                (long long) runs[i].n_variants, (long long) runs[i].n_failures,
                                runs[i].hostname, runs[i].label ? runs[i].label : "",
                                runs[i].label && runs[i].commit ? " @"
                                : runs[i].commit                ? "@"
                                                                : "",
                                runs[i].commit ? runs[i].commit : "");
                return ferror(f) ? -EIO : 0;
        }
        static const char *const names[] = {
                "run_id",   "uuid",  "experiment", "status",     "started_at",
                "ended_at", "cells", "variants",   "child_runs", "failed",
                "excluded", "host",  "metric",     "label",      "commit",
        };
        json_auto_t *table = render_table_new(names, ELEMENTSOF(names));
        for (size_t i = 0; i < n; i++) {
                const RunSummary *r = &runs[i];
                json_t *values[] = {
                        json_integer(r->id),         json_string(r->uuid),
                        json_string(r->experiment),  json_string(r->status),
                        json_string(r->started_at),  r->ended_at ? json_string(r->ended_at) : json_null(),
                        json_integer(r->n_cells),    json_integer(r->n_variants),
                        json_integer(r->n_runs),     json_integer(r->n_failures),
                        json_integer(r->n_excluded), json_string(r->hostname),
                        json_string(r->metric),      json_str_or_null(r->label),
                        json_str_or_null(r->commit),
                };
                render_table_add_row(table, values, ELEMENTSOF(values));
        }
        return table ? render_rows(f, format, table) : -ENOMEM;
}

static void print_option_list(FILE *f, json_t *options, const char *indent) {
        const char *key;
        json_t *value;
        size_t n = 0, width = 0;
        json_object_foreach(options, key, value) {
                if (strlen(key) > width)
                        width = strlen(key);
        }
        json_object_foreach(options, key, value) {
                fprintf(f, "%s%-*s %s\n", indent, (int) width, key, json_string_value(value));
                n++;
        }
        if (n == 0)
                fprintf(f, "%s(none reported)\n", indent);
}

/* The started process's program, when it executed another (the final one is what the report's
 * allocator, options and census describe), and the tree, when there is more than one process
 * or a program left it (executed without the probe). */
static void render_process_tree(FILE *f, json_t *processes) {
        size_t n = json_array_size(processes);
        json_t *first = json_array_get(processes, 0);
        if (!first)
                return;
        json_int_t pid = json_integer_value(json_object_get(first, "pid"));
        const char *program = NULL;
        bool left = false;
        size_t i;
        json_t *p;
        json_array_foreach(processes, i, p) {
                if (json_integer_value(json_object_get(p, "pid")) == pid)
                        program = json_string_value(json_object_get(p, "program"));
                left |= json_is_object(json_object_get(p, "exec_without_probe"));
        }
        if (n < 2 && !left)
                return; /* a tree of one, the started program alone */
        const char *began = json_string_value(json_object_get(first, "program"));
        if (program && began && strcmp(program, began) != 0)
                fprintf(f, "program: %s (the started process executed it; it began as %s)\n", program,
                        began);
        fprintf(f, "process tree (%zu processes; malloc-family calls):\n", n);
        json_array_foreach(processes, i, p) {
                json_int_t parent = json_integer_value(json_object_get(p, "parent"));
                fprintf(f, "  #%zu pid %lld %s", i,
                        (long long) json_integer_value(json_object_get(p, "pid")),
                        json_string_value(json_object_get(p, "how")));
                if (parent >= 0)
                        fprintf(f, " from #%lld", (long long) parent);
                json_int_t copies = json_integer_value(json_object_get(p, "allocator_copies"));
                fprintf(f, ": %s, %s (%s), %lld calls%s\n", json_string_value(json_object_get(p, "program")),
                        json_string_value(json_object_get(p, "allocator")),
                        json_string_value(json_object_get(p, "family")),
                        (long long) json_integer_value(json_object_get(p, "calls")),
                        copies > 1 ? ", WARNING: more than one allocator copy loaded" : "");
                json_t *unprobed = json_object_get(p, "exec_without_probe");
                if (json_is_object(unprobed))
                        fprintf(f,
                                "      then executed %s without the probe (LD_PRELOAD=%s): not followed\n",
                                json_string_value(json_object_get(unprobed, "program")),
                                json_string_value(json_object_get(unprobed, "preload")));
        }
}

void render_probe(FILE *f, json_t *probe) {
        json_t *effective = json_object_get(probe, "effective");
        json_t *forward = json_object_get(probe, "forward");
        if (!json_is_true(json_object_get(probe, "loaded"))) {
                fprintf(f, "probe: did not load (LD_PRELOAD ignored: static binary or secure-execution "
                           "mode)\n");
                return;
        }
        const char *error = json_string_value(json_object_get(forward, "error"));
        if (error)
                fprintf(f, "forward mode refused: %s\n", error);
        render_process_tree(f, json_object_get(probe, "processes"));
        fprintf(f, "effective allocator: %s (%s%s%s)\n",
                json_string_value(json_object_get(effective, "path")),
                json_string_value(json_object_get(effective, "family")),
                *json_string_value(json_object_get(effective, "version")) ? " " : "",
                json_string_value(json_object_get(effective, "version")));
        fprintf(f, "effective options:\n");
        print_option_list(f, json_object_get(effective, "options"), "  ");

        json_t *census = json_object_get(probe, "census");
        size_t i;
        json_t *lib;
        fprintf(f, "census (objects implementing an allocator):\n");
        json_array_foreach(census, i, lib) {
                fprintf(f, "  %s:", json_string_value(json_object_get(lib, "path")));
                size_t k;
                json_t *family;
                json_array_foreach(json_object_get(lib, "families"), k, family)
                        fprintf(f, " %s", json_string_value(family));
                const char *prefix = json_string_value(json_object_get(lib, "prefix"));
                if (prefix && *prefix)
                        fprintf(f, " (prefix %s)", prefix);
                fputc('\n', f);
        }
        json_int_t copies = json_integer_value(json_object_get(probe, "allocator_copies"));
        if (copies > 1)
                fprintf(f,
                        "WARNING: %lld allocator implementations besides glibc's are loaded in one process;"
                        " memory from one freed by another corrupts the heap\n",
                        (long long) copies);

        json_t *counters = json_object_get(probe, "counters");
        fprintf(f, "counters:");
        const char *key;
        json_t *value;
        json_object_foreach(json_object_get(counters, "calls"), key, value) {
                if (json_integer_value(value))
                        fprintf(f, " %s=%lld", key, (long long) json_integer_value(value));
        }
        char requested[32], peak[32] = "not measured";
        render_value("maxrss", (double) json_integer_value(json_object_get(counters, "bytes_requested")),
                     requested, sizeof(requested));
        json_t *peak_bytes = json_object_get(counters, "peak_live_bytes");
        if (json_is_integer(peak_bytes))
                render_value("maxrss", (double) json_integer_value(peak_bytes), peak, sizeof(peak));
        fprintf(f, "\n  bytes requested %s, peak live %s, threads %lld%s\n", requested, peak,
                (long long) json_integer_value(json_object_get(counters, "threads")),
                json_is_true(json_object_get(probe, "exited")) ? ""
                                                               : " (the process did not exit normally)");
}
