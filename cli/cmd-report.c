/* SPDX-License-Identifier: MIT */
/*
 * `alloclab report RUN -o report.html`: one self-contained page for people and pull requests.
 * Inline SVG only (no scripts, no network, no external files), written as well-formed XHTML so
 * that any XML parser can check it. Sections: results table, samples per cell (strip plots on a
 * shared axis), ratios to the baseline (forest plot), time against peak RSS (Pareto front
 * marked), optionally the comparison with another run and the history, and the run's metadata.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/pair-render.h"
#include "cli/render-figures.h"
#include "cli/render.h"
#include "db/run-field.h"
#include "db/history.h"
#include "db/pair.h"
#include "db/query.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "util/io.h"
#include "util/text.h"

static const char report_usage[] =
        "Usage: alloclab report [RUN|latest] -o FILE [--compare OLD_RUN] [--history] [--db PATH]\n"
        "\n"
        "Writes one self-contained HTML page (inline SVG, no scripts, no network): the result table,\n"
        "every sample per cell, the ratios to the baseline with their intervals and verdicts, time\n"
        "against peak RSS with the Pareto front, the run's host, spec, allocators and smoke-phase\n"
        "findings; with --compare the change from OLD_RUN to RUN (ratios RUN / OLD_RUN, new over old\n"
        "as pyperf and asv show them), with --history the experiment's\n"
        "timeline of medians.\n";

/* Variant colours: distinguishable, and readable on white. */
static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                       "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22" };
#define COLOUR(v) palette[(v) % ELEMENTSOF(palette)]

/* Text for XHTML: control characters but newlines and tabs as util/text.h shows them (XML allows
 * none of them, not even as references), then & < > " ' escaped. */
static void put_text(FILE *f, const char *s) {
        _cleanup_free_ char *shown = text_shown_as(s, TEXT_KEEP_LAYOUT);
        for (s = shown; s && *s; s++) {
                const char *entity = *s == '&'    ? "&amp;"
                                     : *s == '<'  ? "&lt;"
                                     : *s == '>'  ? "&gt;"
                                     : *s == '"'  ? "&quot;"
                                     : *s == '\'' ? "&#39;"
                                                  : NULL;
                if (entity)
                        fputs(entity, f);
                else
                        fputc(*s, f);
        }
}

/* A linear axis from lo to hi onto pixels a..b. */
typedef struct Axis {
        double lo, hi, a, b;
} Axis;

static double at(const Axis *x, double v) {
        return x->hi > x->lo ? x->a + (v - x->lo) / (x->hi - x->lo) * (x->b - x->a) : (x->a + x->b) / 2;
}

/* Widens [lo, hi] by 5% each side (a point at the edge stays visible). */
static Axis axis(double lo, double hi, double a, double b) {
        double pad = hi > lo ? (hi - lo) * 0.05 : fabs(lo) * 0.05 + 1e-12;
        return (Axis){ lo - pad, hi + pad, a, b };
}

/* A round step for about `want` intervals over span: 1, 2 or 5 times a power of ten. */
static double nice_step(double span, int want) {
        double raw = span / want, power = pow(10, floor(log10(raw))), f = raw / power;
        return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * power;
}

/* Labelled ticks at round values along a horizontal axis at y: the metric's unit ("12.5 ms"),
 * or for ratios (metric NULL) "1.05x". */
static void x_ticks(FILE *f, const Axis *x, double y, const char *metric) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n", x->a, y,
                x->b, y);
        if (!(x->hi > x->lo))
                return;
        double step = nice_step(x->hi - x->lo, 4);
        for (double v = ceil(x->lo / step) * step; v <= x->hi + step * 1e-9; v += step) {
                double px = at(x, v);
                char label[64];
                if (metric)
                        render_value(metric, fabs(v) < step * 1e-9 ? 0 : v, label, sizeof(label));
                else
                        snprintf(label, sizeof(label), "%.*fx", step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3, v);
                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"tick\">",
                        px, y, px, y + 4, px, y + 16);
                put_text(f, label);
                fputs("</text>\n", f);
        }
}

/* Labelled ticks at round numbers of one unit (unit: its size, name: "MiB", "ms") along an axis
 * at `at`: horizontal, labels below; or vertical, labels to its left. "0 MiB, 50 MiB, 100 MiB",
 * never "0.0 KiB" beside "50.0 MiB". */
static void unit_ticks(FILE *f, const Axis *axis, bool vertical, double at_px, double unit,
                       const char *name) {
        if (vertical)
                fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n",
                        at_px, axis->a, at_px, axis->b);
        else
                fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n",
                        axis->a, at_px, axis->b, at_px);
        if (!(axis->hi > axis->lo))
                return;
        double step = nice_step((axis->hi - axis->lo) / unit, 4);
        int decimals = step >= 1 ? 0 : (int) ceil(-log10(step) - 1e-9);
        for (double v = ceil(axis->lo / unit / step) * step; v <= axis->hi / unit + step * 1e-9; v += step) {
                double p = at(axis, v * unit);
                if (vertical)
                        fprintf(f,
                                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
                                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" class=\"tick\">",
                                at_px - 4, p, at_px, p, at_px - 7, p + 4);
                else
                        fprintf(f,
                                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
                                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"tick\">",
                                p, at_px, p, at_px + 4, p, at_px + 16);
                fprintf(f, "%.*f %s</text>\n", decimals, fabs(v) < step * 1e-9 ? 0 : v, name);
        }
}

static void svg_start(FILE *f, double width, double height) {
        fprintf(f,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
                width, height, width, height);
}

/* A captioned figure holding one SVG; figure_end() closes both. */
static void figure_start(FILE *f, const char *caption, double width, double height) {
        fputs("<figure><figcaption>", f);
        put_text(f, caption);
        fputs("</figcaption>\n", f);
        svg_start(f, width, height);
}

static void figure_end(FILE *f) {
        fputs("</svg></figure>\n", f);
}

static const ReportEntry *entry_of(const Report *rep, size_t c, size_t v) {
        return &rep->entries[c * rep->n_variants + v];
}

/* The range of a cell's measured values ([INFINITY, -INFINITY] when it has none). */
static void cell_range(const Report *rep, size_t c, double *lo, double *hi) {
        for (size_t v = 0; v < rep->n_variants; v++)
                for (size_t k = 0; k < entry_of(rep, c, v)->n_values; k++) {
                        *lo = fmin(*lo, entry_of(rep, c, v)->values[k]);
                        *hi = fmax(*hi, entry_of(rep, c, v)->values[k]);
                }
}

/* The range of a cell's variant medians ([INFINITY, -INFINITY] when it has none): where the
 * cell sits, which one slow sample does not move. */
static void cell_median_range(const Report *rep, size_t c, double *lo, double *hi) {
        for (size_t v = 0; v < rep->n_variants; v++)
                if (entry_of(rep, c, v)->has_stats) {
                        *lo = fmin(*lo, entry_of(rep, c, v)->stats.median);
                        *hi = fmax(*hi, entry_of(rep, c, v)->stats.median);
                }
}

/* Whether one axis serves every cell: not when it would squash a cell's medians into a fifth of
 * the span of all cells' medians (cells of very different scale). Medians, not extremes, so
 * that one outlier on a busy machine does not split the axes. */
static bool one_axis(const Report *rep) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t c = 0; c < rep->n_cells; c++)
                cell_median_range(rep, c, &lo, &hi);
        for (size_t c = 0; c < rep->n_cells; c++) {
                double clo = INFINITY, chi = -INFINITY;
                cell_median_range(rep, c, &clo, &chi);
                if (isfinite(clo) && hi > lo && (chi - clo) < 0.2 * (hi - lo))
                        return false;
        }
        return true;
}

/* Per cell, every measured sample of every variant, with its median: on one axis for all cells,
 * unless that would squash a cell (one_axis()). */
static void strip_plots(FILE *f, const Report *rep) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t c = 0; c < rep->n_cells; c++)
                cell_range(rep, c, &lo, &hi);
        bool shared = one_axis(rep);
        fprintf(f,
                "<h2>Samples</h2>\n<p>Every measured sample of %s, one row per variant; the bar is the "
                "median. %s</p>\n",
                rep->run.metric,
                shared ? "All cells share one axis."
                       : "Each cell has its own axis: their values differ too much to share one.");
        if (!isfinite(lo)) {
                fputs("<p>No measured samples.</p>\n", f);
                return;
        }
        double row = 22, left = 150, width = 760;
        for (size_t c = 0; c < rep->n_cells; c++) {
                double clo = INFINITY, chi = -INFINITY;
                cell_range(rep, c, &clo, &chi);
                if (!shared && !isfinite(clo))
                        continue;
                Axis x = shared ? axis(lo, hi, left, width - 20) : axis(clo, chi, left, width - 20);
                double height = row * (double) rep->n_variants + 40;
                figure_start(f, rep->cell_labels[c], width, height);
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = entry_of(rep, c, v);
                        double y = row * (double) v + row / 2 + 4;
                        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 8, y + 4);
                        put_text(f, rep->variant_names[v]);
                        fputs("</text>\n", f);
                        for (size_t k = 0; k < e->n_values; k++)
                                fprintf(f,
                                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" "
                                        "fill-opacity=\"0.5\"/>\n",
                                        at(&x, e->values[k]), y + (double) (k % 5) - 2, COLOUR(v));
                        if (e->has_stats && e->stats.n > 0)
                                fprintf(f,
                                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                        "stroke=\"#000\" "
                                        "stroke-width=\"2\"/>\n",
                                        at(&x, e->stats.median), y - 8, at(&x, e->stats.median), y + 8);
                }
                x_ticks(f, &x, row * (double) rep->n_variants + 10, rep->run.metric);
                figure_end(f);
        }
}

/* Each variant's ratio to its cell's baseline with its interval and verdict. */
static void forest_plot(FILE *f, const Report *rep) {
        double lo = 1, hi = 1;
        size_t rows = 0;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                if (rep->entries[i].has_comparison) {
                        const Comparison *k = &rep->entries[i].comparison;
                        bool bounded = k->lo > 0 && isfinite(k->hi); /* no interval: the ratio alone */
                        lo = fmin(lo, bounded ? k->lo : k->ratio);
                        hi = fmax(hi, bounded ? k->hi : k->ratio);
                        rows++;
                }
        fputs("<h2>Ratios to ", f);
        put_text(f, rep->variant_names[rep->baseline]);
        fputs("</h2>\n", f);
        if (rows == 0) {
                fputs("<p>No variant was compared with the baseline.</p>\n", f);
                return;
        }
        char rule[512];
        CompareRule verdict_rule = render_rule(rep);
        render_verdict_rule(&verdict_rule, rep->order, rule, sizeof(rule));
        fprintf(f,
                "<p>Variant / baseline in the same cell (the Hodges-Lehmann estimate: the median of the "
                "pairwise ratios of independent samples, or of the Walsh averages of the rounds' log "
                "ratios where the rounds pair), with its %.4g%% interval; ",
                100 * render_interval_level(rep));
        put_text(f, rule);
        fputs(".</p>\n", f);
        double row = 20, left = 260, width = 900, plot_right = width - 150;
        Axis x = axis(lo, hi, left, plot_right);
        svg_start(f, width, row * (double) rows + 40);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" stroke-dasharray=\"4 "
                "3\"/>\n",
                at(&x, 1), at(&x, 1), row * (double) rows);
        size_t i = 0;
        bool time = render_time_metric(rep->run.metric);
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = entry_of(rep, c, v);
                        if (!e->has_comparison)
                                continue;
                        const Comparison *k = &e->comparison;
                        bool bounded = k->lo > 0 && isfinite(k->hi);
                        double y = row * (double) i++ + row / 2;
                        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">[", left - 8, y + 4);
                        put_text(f, rep->cell_labels[c]);
                        fputs("] ", f);
                        put_text(f, rep->variant_names[v]);
                        fprintf(f,
                                "</text>\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                "stroke=\"%s\" "
                                "stroke-width=\"2\"/>\n<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
                                "fill=\"%s\"/>\n"
                                "<text x=\"%.1f\" y=\"%.1f\">%.3fx %s</text>\n",
                                at(&x, bounded ? k->lo : k->ratio), y, at(&x, bounded ? k->hi : k->ratio), y,
                                COLOUR(v), at(&x, k->ratio), y, COLOUR(v), plot_right + 10, y + 4, k->ratio,
                                verdict_mark(k->verdict, time));
                }
        x_ticks(f, &x, row * (double) rows + 10, NULL);
        fputs("</svg>\n", f);
}

/* Per cell, median wall time (or the metric: front_by_metric) against median peak RSS, the Pareto
 * front filled. */
static double front_x(const Report *rep, const ReportEntry *e) {
        return rep->front_by_metric ? (e->has_stats && e->stats.n > 0 ? e->stats.median : NAN)
                                    : e->wall_median;
}

static void tradeoff_plots(FILE *f, const Report *rep) {
        bool any = false;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                any |= rep->entries[i].has_tradeoff;
        if (!any)
                return; /* an import that measured no memory: no heading over nothing */
        if (rep->front_by_metric) {
                fputs("<h2>Metric and memory</h2>\n<p>Median ", f);
                put_text(f, render_report_metric(rep));
                fprintf(f,
                        " (%s is better) against median peak RSS per cell. Filled points are on the Pareto "
                        "front: no other variant is at least as good in both and better in one.</p>\n",
                        rep->run.higher_is_better ? "more" : "less");
        } else
                fputs("<h2>Time and memory</h2>\n<p>Median wall time against median peak RSS per cell. "
                      "Filled "
                      "points are on the Pareto front: no other variant is at least as fast and as "
                      "small.</p>\n",
                      f);
        for (size_t c = 0; c < rep->n_cells; c++) {
                double tlo = INFINITY, thi = -INFINITY, mlo = INFINITY, mhi = -INFINITY;
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = entry_of(rep, c, v);
                        if (!e->has_tradeoff || isnan(front_x(rep, e)))
                                continue;
                        tlo = fmin(tlo, front_x(rep, e)), thi = fmax(thi, front_x(rep, e));
                        mlo = fmin(mlo, e->maxrss_median), mhi = fmax(mhi, e->maxrss_median);
                }
                if (!isfinite(tlo))
                        continue;
                double width = 520, height = 300;
                Axis x = axis(tlo, thi, 70, width - 120), y = axis(mlo, mhi, height - 40, 20);
                figure_start(f, rep->cell_labels[c], width, height);
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = entry_of(rep, c, v);
                        if (!e->has_tradeoff || isnan(front_x(rep, e)))
                                continue;
                        double px = at(&x, front_x(rep, e)), py = at(&y, e->maxrss_median);
                        fprintf(f,
                                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" stroke=\"%s\" stroke-width=\"2\" "
                                "fill=\"%s\"/>\n",
                                px, py, COLOUR(v), e->pareto ? COLOUR(v) : "#fff");
                        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", px + 9, py + 4);
                        put_text(f, rep->variant_names[v]);
                        fputs("</text>\n", f);
                }
                x_ticks(f, &x, height - 25, rep->front_by_metric ? rep->run.metric : "wall");
                char top[64], bottom[64];
                fprintf(f,
                        "<text x=\"4\" y=\"%.1f\" class=\"tick\">%s</text><text x=\"4\" y=\"%.1f\" "
                        "class=\"tick\">%s</text>\n",
                        y.b + 10, render_value("maxrss", y.hi, top, sizeof(top)), y.a,
                        render_value("maxrss", y.lo, bottom, sizeof(bottom)));
                figure_end(f);
        }
}

/* Lines about the run (the memory overhead; per cell and variant, what the smoke run read at
 * exit), said as the text says them (render-figures.h) under a title and a paragraph, or nothing. */
static void lines_section(FILE *f, const Report *rep, const char *title, const char *heading,
                          char **(*lines_of)(const Report *rep, bool *ret_oom)) {
        bool oom;
        _cleanup_strv_free_ char **lines = lines_of(rep, &oom);
        if (!lines)
                return;
        fputs("<h2>", f);
        put_text(f, title);
        fputs("</h2>\n<p>", f);
        put_text(f, heading);
        fputs(".</p>\n<ul>\n", f);
        for (char **l = lines; *l; l++) {
                fputs("<li>", f);
                put_text(f, *l);
                fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
}

/* A note as the text gives it, under its heading, or nothing. */
static void warning_section(FILE *f, const char *heading, char *note) {
        if (!note)
                return;
        fputs("<h2>", f);
        put_text(f, heading);
        fputs("</h2>\n<p class=\"warn\">", f);
        put_text(f, note);
        fputs("</p>\n", f);
        free(note);
}

/* A program with an allocator layer of its own, one that barely calls the allocator, or one
 * whose wall time is the same under every variant. */
static void own_layer_section(FILE *f, const Report *rep) {
        warning_section(f, "Allocator layer of the program's own", render_own_layer_note(rep));
        warning_section(f, "Allocator barely exercised", render_barely_exercised_note(rep));
        warning_section(f, "Wall time flat", render_flat_wall_note(rep));
}

/* The colour of a variant by name, as the run's other figures draw it. */
static const char *variant_colour(const Report *rep, const char *name) {
        for (size_t v = 0; v < rep->n_variants; v++)
                if (strcmp(rep->variant_names[v], name) == 0)
                        return COLOUR(v);
        return "#444";
}

/* Per series of the experiment's history, the medians of the last runs as a line. */
static void history_plots(FILE *f, const Report *rep, const History *h) {
        fprintf(f,
                "<h2>History</h2>\n<p>Medians of %s over the last %zu finished runs; red rings are "
                "regressions, green ones improvements, each confirmed by the run after it; dashed rings "
                "are tentative, the last run out of line, not yet confirmed (docs/analysis.md).</p>\n",
                h->metric, h->n_runs);
        for (size_t s = 0; s < h->n_series; s++) {
                const HistorySeries *series = &h->series[s];
                double lo = INFINITY, hi = -INFINITY;
                int64_t first = series->points[0].run_id, last = series->points[series->n_points - 1].run_id;
                for (size_t i = 0; i < series->n_points; i++)
                        lo = fmin(lo, series->points[i].lo), hi = fmax(hi, series->points[i].hi);
                double width = 620, height = 180;
                Axis x = axis((double) first, (double) last, 60, width - 20),
                     y = axis(lo, hi, height - 40, 15);
                char caption[512];
                snprintf(caption, sizeof(caption), "[%s] %s%s%s", series->cell, series->variant,
                         h->many_machines ? " on " : "", h->many_machines ? series->machine : "");
                figure_start(f, caption, width, height);
                const char *colour = variant_colour(rep, series->variant);
                fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" points=\"", colour);
                for (size_t i = 0; i < series->n_points; i++)
                        fprintf(f, "%.1f,%.1f ", at(&x, (double) series->points[i].run_id),
                                at(&y, series->points[i].median));
                fputs("\"/>\n", f);
                for (size_t i = 0; i < series->n_points; i++) {
                        const HistoryPoint *p = &series->points[i];
                        double px = at(&x, (double) p->run_id);
                        fprintf(f,
                                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>"
                                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\" stroke=\"%s\" "
                                "stroke-width=\"2\"%s><title>run %lld%s</title></circle>\n",
                                px, at(&y, p->lo), px, at(&y, p->hi), colour, px, at(&y, p->median),
                                p->change == HISTORY_STEADY ? 3 : 6, colour,
                                p->change == HISTORY_REGRESSION    ? "#d00"
                                : p->change == HISTORY_IMPROVEMENT ? "#0a0"
                                                                   : colour,
                                p->tentative ? " stroke-dasharray=\"3 2\"" : "", (long long) p->run_id,
                                p->change == HISTORY_STEADY ? ""
                                : p->tentative              ? ": a tentative change point"
                                                            : ": a change point");
                }
                fprintf(f,
                        "<text x=\"60\" y=\"%.1f\" class=\"tick\">run %lld</text>"
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" class=\"tick\">run %lld</text>\n",
                        height - 10, (long long) first, width - 20, height - 10, (long long) last);
                char top[64], bottom[64];
                fprintf(f,
                        "<text x=\"2\" y=\"%.1f\" class=\"tick\">%s</text><text x=\"2\" y=\"%.1f\" "
                        "class=\"tick\">%s</text>\n",
                        y.b + 10, render_metric_value(h->metric, h->unit, y.hi, top, sizeof(top)), y.a,
                        render_metric_value(h->metric, h->unit, y.lo, bottom, sizeof(bottom)));
                figure_end(f);
        }
}

/* memory_timeline: per cell, one chart of its variants' readings (each variant's measured sample
 * whose time-weighted mean is its median), the program's phase marks as dots; then the figures
 * as the text says them. */
static void timeline_section(FILE *f, const Report *rep, const CellTimeline *list, size_t n) {
        _cleanup_free_ char *heading = render_timeline_heading(rep);
        if (!heading)
                return;
        fputs("<h2>Memory over time</h2>\n<p>", f);
        put_text(f, heading);
        fputs(". Each line is the variant's sample whose time-weighted mean is its median; dots are the "
              "program's phase marks (their names on hover).</p>\n",
              f);
        for (size_t c = 0; c < rep->n_cells; c++) {
                double t_max = 0, kib_max = 0;
                bool any = false;
                for (size_t i = 0; i < n; i++) {
                        const Timeline *t = &list[i].timeline;
                        if (list[i].cell != c || t->n_points == 0)
                                continue;
                        any = true;
                        t_max = fmax(t_max, t->points[t->n_points - 1].t_ms);
                        for (size_t k = 0; k < t->n_points; k++)
                                kib_max = fmax(kib_max, t->points[k].kib);
                }
                if (!any)
                        continue;
                double width = 900, height = 340, right = width - 170;
                Axis x = { 0, fmax(t_max, 1) / 1000, 90, right },
                     y = { 0, fmax(kib_max, 1) * 1024 * 1.05, height - 60, 15 };
                figure_start(f, rep->n_cells > 1 ? rep->cell_labels[c] : "Each variant's median sample",
                             width, height);
                bool seconds = t_max >= 10000;
                double bytes = kib_max >= 1 << 20 ? 1 << 30 : kib_max >= 1 << 10 ? 1 << 20 : 1 << 10;
                unit_ticks(f, &x, false, y.a, seconds ? 1 : 1e-3, seconds ? "s" : "ms");
                unit_ticks(f, &y, true, x.a, bytes,
                           bytes == 1 << 30   ? "GiB"
                           : bytes == 1 << 20 ? "MiB"
                                              : "KiB");
                fprintf(f,
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time since the child "
                        "started</text>\n"
                        "<text transform=\"translate(14 %.1f) rotate(-90)\" "
                        "text-anchor=\"middle\">memory</text>\n",
                        (x.a + x.b) / 2, height - 12, (y.a + y.b) / 2);
                size_t legend = 0;
                for (size_t i = 0; i < n; i++) {
                        const Timeline *t = &list[i].timeline;
                        if (list[i].cell != c || t->n_points == 0 || list[i].variant >= rep->n_variants)
                                continue;
                        const char *colour = COLOUR(list[i].variant);
                        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                                colour);
                        /* Steps: a reading holds until the next, as the time-weighted mean counts it. */
                        for (size_t k = 0; k < t->n_points; k++)
                                fprintf(f, "%.1f,%.1f %.1f,%.1f ", at(&x, t->points[k].t_ms / 1000.0),
                                        at(&y, t->points[k].kib * 1024.0),
                                        at(&x, t->points[k + (k + 1 < t->n_points)].t_ms / 1000.0),
                                        at(&y, t->points[k].kib * 1024.0));
                        fputs("\"/>\n", f);
                        for (size_t m = 0; m < t->n_marks; m++)
                                for (size_t k = 0; k < t->n_points; k++)
                                        if (t->points[k].t_ms == t->marks[m].t_ms) {
                                                fprintf(f,
                                                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
                                                        "fill=\"%s\"><title>",
                                                        at(&x, t->points[k].t_ms / 1000.0),
                                                        at(&y, t->points[k].kib * 1024.0), colour);
                                                put_text(f, rep->variant_names[list[i].variant]);
                                                fputs(": after ", f);
                                                put_text(f, t->marks[m].name);
                                                fputs("</title></circle>\n", f);
                                                break;
                                        }
                        double ly = 25 + 18.0 * (double) legend++;
                        fprintf(f,
                                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                                "stroke-width=\"3\"/><text x=\"%.1f\" y=\"%.1f\">",
                                right + 15, ly, right + 35, ly, colour, right + 40, ly + 4);
                        put_text(f, rep->variant_names[list[i].variant]);
                        fputs("</text>\n", f);
                }
                figure_end(f);
        }
        bool oom;
        _cleanup_strv_free_ char **lines = render_timeline_lines(rep, &oom);
        fputs("<ul>\n", f);
        for (char **l = lines; l && *l; l++) {
                fputs("<li>", f);
                put_text(f, *l);
                fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
}

/* The result table: median and ratio with verdict per cell and variant. */
static void results_table(FILE *f, const Report *rep) {
        bool time = render_time_metric(rep->run.metric);
        fprintf(f,
                "<h2>Results</h2>\n<p>Median per cell and variant, the ratio to the baseline with its "
                "%.4g%% interval and verdict; outliers (modified z-score above 3.5) and samples "
                "started on a busy machine are counted below a value.</p>\n<table>\n<tr><th>cell</th>",
                100 * render_interval_level(rep));
        for (size_t v = 0; v < rep->n_variants; v++) {
                fputs("<th>", f);
                put_text(f, rep->variant_names[v]);
                fputs(v == rep->baseline ? " (baseline)</th>" : "</th>", f);
        }
        fputs("</tr>\n", f);
        for (size_t c = 0; c < rep->n_cells; c++) {
                fputs("<tr><td>", f);
                put_text(f, rep->cell_labels[c]);
                fputs("</td>", f);
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = entry_of(rep, c, v);
                        char value[64] = "-";
                        if (e->has_stats && e->stats.n > 0)
                                render_run_value(&rep->run, e->stats.median, value, sizeof(value));
                        fputs("<td>", f);
                        put_text(f, e->excluded_reason ? "excluded" : value);
                        char word[64];
                        if (e->has_comparison && render_report_has_verdicts(rep))
                                fprintf(f, " %.3fx [%.3f, %.3f] %s", e->comparison.ratio, e->comparison.lo,
                                        e->comparison.hi,
                                        render_verdict_text(e->comparison.verdict, e->comparison.detectable,
                                                            time, word, sizeof(word)));
                        else if (e->has_comparison)
                                fprintf(f, " %.3fx", e->comparison.ratio);
                        /* What `show` lists below its table: outliers (kept or left out) and samples
                         * the quiet-machine guard found busy. */
                        if (e->n_outliers)
                                fprintf(f, "<br/><span class=\"note\">%zu outlier%s%s</span>", e->n_outliers,
                                        e->n_outliers == 1 ? "" : "s",
                                        rep->exclude_outliers ? " left out" : "");
                        if (e->n_noisy)
                                fprintf(f, "<br/><span class=\"note\">%lld of %lld noisy</span>",
                                        (long long) e->n_noisy, (long long) e->n_quiet_checked);
                        fputs("</td>", f);
                }
                fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
}

static void comparison_section(FILE *f, const RunPair *pair) {
        fprintf(f, "<h2>Change from run %lld to run %lld</h2>\n", (long long) pair->a->run.id,
                (long long) pair->b->run.id);
        if (pair->differences[0]) {
                fputs("<p class=\"warn\">NOT COMPARABLE: the runs differ in</p>\n<ul>\n", f);
                for (char **d = pair->differences; *d; d++) {
                        fputs("<li>", f);
                        put_text(f, *d);
                        fputs("</li>\n", f);
                }
                fputs("</ul>\n", f);
        } else
                fputs("<p>Comparable: same host fingerprint, allocator files, spec, cells and "
                      "variants.</p>\n",
                      f);
        size_t uncompared = pair_uncompared(pair);
        if (uncompared)
                fprintf(f,
                        "<p class=\"warn\">Not compared: %zu of %zu cells and variants, excluded or not "
                        "measured in one of the runs (the table's \"-\").</p>\n",
                        uncompared, pair->n_changes);
        bool time = render_time_metric(pair->a->run.metric);
        char rule[512];
        render_verdict_rule(&pair->rule, NULL, rule, sizeof(rule));
        fprintf(f,
                "<p>Median of run %lld / median of run %lld. Runs are the unit: a run's median moves from "
                "run to run by +-%.1f%%, ",
                (long long) pair->b->run.id, (long long) pair->a->run.id, 100 * pair->spread.spread);
        if (pair->spread.runs)
                fprintf(f, "measured over up to %zu earlier runs of this experiment on this host; ",
                        pair->spread.runs);
        else
                fputs("assumed: no earlier runs of this experiment on this host to measure it from; ", f);
        put_text(f, rule);
        fputs(".</p>\n", f);
        fputs("<table>\n<tr><th>cell</th><th>variant</th><th>change</th></tr>\n", f);
        for (size_t i = 0; i < pair->n_changes; i++) {
                const PairChange *x = &pair->changes[i];
                fputs("<tr><td>", f);
                put_text(f, pair->a->cell_labels[x->cell_a]);
                fputs("</td><td>", f);
                put_text(f, pair->a->variant_names[x->variant_a]);
                char word[64];
                if (x->has_comparison)
                        fprintf(f, "</td><td>%.3fx [%.3f, %.3f] %s</td></tr>\n", x->comparison.ratio,
                                x->comparison.lo, x->comparison.hi,
                                render_verdict_text(x->comparison.verdict, x->comparison.detectable, time,
                                                    word, sizeof(word)));
                else
                        fputs("</td><td>-</td></tr>\n", f);
        }
        fputs("</table>\n", f);
}

/* A recorded field's value in the Run table: as recorded, but saying where an import recorded no
 * machine or time, and the verification as render_verify() words it. NULL: none (a label or
 * commit the run was not given). */
static const char *run_row_text(const Report *rep, const RunField *field, char *buf, size_t size) {
        bool unrecorded = render_machine_unrecorded(rep);
        if (field->offset == offsetof(Report, run.hostname) && unrecorded)
                snprintf(buf, size, "%s (where it was imported: hyperfine records no machine)",
                         rep->run.hostname);
        else if (field->offset == offsetof(Report, run.started_at) && unrecorded)
                snprintf(buf, size, "%s (when it was imported: hyperfine records no time)",
                         rep->run.started_at);
        else if (field->offset == offsetof(Report, verify))
                return render_verify(rep, buf, size);
        else
                return run_field_text(field, rep, buf, size);
        return buf;
}

/* The recorded fields with a label, in the order of their ranks. */
static void run_rows(FILE *f, const Report *rep) {
        for (int rank = 1;; rank++) {
                const RunField *field = NULL;
                for (size_t i = 0; i < n_run_fields && !field; i++)
                        if (run_fields[i].label_rank == rank)
                                field = &run_fields[i];
                if (!field)
                        return;
                char buf[512];
                const char *text = run_row_text(rep, field, buf, sizeof(buf));
                if (!text)
                        continue;
                fputs("<tr><th>", f);
                put_text(f, field->label);
                fputs("</th><td>", f);
                put_text(f, text);
                fputs("</td></tr>\n", f);
        }
}

/* The Run table: the recorded fields, samples, isolation, start-up. */
static void run_table(FILE *f, const Report *rep) {
        fputs("<h2>Run</h2>\n<table>\n", f);
        run_rows(f, rep);
        /* An import had no seed and no children of alloclab's. */
        bool imported = render_report_imported(rep);
        if (imported)
                fprintf(f, "<tr><th>samples</th><td>%lld (warm-ups not stored)", (long long) rep->samples);
        else
                fprintf(f, "<tr><th>samples</th><td>%lld (+%lld warm-up)", (long long) rep->samples,
                        (long long) rep->warmup);
        if (!imported)
                fprintf(f, ", seed %llu", (unsigned long long) rep->seed);
        fputs("</td></tr>\n<tr><th>isolation</th><td>", f);
        if (imported)
                put_text(f, "none of alloclab's: measured by another tool and imported");
        else {
                put_text(f, rep->cgroup ? "children in a cgroup under " : "process groups only: ");
                put_text(f, rep->cgroup            ? rep->cgroup
                            : rep->cgroup_fallback ? rep->cgroup_fallback
                                                   : "not recorded");
        }
        if (rep->child_cpus) {
                put_text(f, "; children pinned to CPUs ");
                put_text(f, rep->child_cpus);
        }
        fputs("</td></tr>\n", f);
        if (rep->startup) {
                fputs("<tr><th>start-up (null workload)</th><td>", f);
                for (size_t v = 0; v < rep->n_variants; v++) {
                        char median[32] = "no successful run";
                        if (rep->startup[v].n)
                                render_value("wall", rep->startup[v].median, median, sizeof(median));
                        fputs(v ? ", " : "", f);
                        put_text(f, rep->variant_names[v]);
                        fputs(" ", f);
                        put_text(f, median);
                }
                fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
}

/* Each variant's allocator, file and what the probe found in effect. */
static void allocators_table(FILE *f, const VariantAllocator *allocators, size_t n) {
        fputs("<h3>Allocators</h3>\n<table>\n<tr><th>variant</th><th>allocator</th><th>version</th>"
              "<th>file and sha256</th><th>effective allocator and options (probe)</th></tr>\n",
              f);
        for (size_t i = 0; i < n; i++) {
                const VariantAllocator *a = &allocators[i];
                fputs("<tr><td>", f);
                put_text(f, a->variant);
                fputs("</td><td>", f);
                put_text(f, a->allocator);
                fputs("</td><td>", f);
                put_text(f, a->version);
                fputs("</td><td><code>", f);
                put_text(f, a->path[0] ? a->path : "(nothing preloaded)");
                fputs("<br/>", f);
                put_text(f, a->sha256);
                fputs("</code></td><td>", f);
                json_auto_t *probe = a->probe_report ? json_loads(a->probe_report, 0, NULL) : NULL;
                json_t *effective = json_object_get(probe, "effective");
                if (effective) {
                        put_text(f, json_string_value(json_object_get(effective, "path")));
                        fputs(" ", f);
                        put_text(f, json_string_value(json_object_get(effective, "version")));
                        const char *key;
                        json_t *value;
                        json_object_foreach(json_object_get(effective, "options"), key, value) {
                                fputs("<br/>", f);
                                put_text(f, key);
                                fputs(" = ", f);
                                put_text(f, json_string_value(value));
                        }
                } else
                        fputs("no probe report", f);
                fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
}

/* The cells and variants excluded or with failed samples, and why. */
static void failures_list(FILE *f, const Report *rep) {
        bool excluded = false;
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = entry_of(rep, c, v);
                        if (!e->excluded_reason && e->n_failed == 0)
                                continue;
                        if (!excluded)
                                fputs("<h3>Smoke phase and failures</h3>\n<ul>\n", f);
                        excluded = true;
                        fputs("<li>[", f);
                        put_text(f, rep->cell_labels[c]);
                        fputs("] ", f);
                        put_text(f, rep->variant_names[v]);
                        fputs(": ", f);
                        put_text(f, e->excluded_reason ? e->excluded_reason : e->first_failure);
                        fputs("</li>\n", f);
                }
        if (excluded)
                fputs("</ul>\n", f);
        else if (render_report_imported(rep))
                fputs("<p>No sample failed (an import: no smoke run).</p>\n", f);
        else
                fputs("<p>Every variant passed its smoke run and no sample failed.</p>\n", f);
}

/* Host, allocators with what the probe found, exclusions, and the spec itself. */
static void metadata_section(FILE *f, const Report *rep, const VariantAllocator *allocators, size_t n,
                             const char *spec_yaml) {
        run_table(f, rep);
        allocators_table(f, allocators, n);
        failures_list(f, rep);
        fputs("<h3>Spec</h3>\n<pre>", f);
        put_text(f, spec_yaml);
        fputs("</pre>\n", f);
}

static int write_report(FILE *f, const Report *rep, const VariantAllocator *allocators, size_t n_allocators,
                        const CellTimeline *timelines, size_t n_timelines, const char *spec_yaml,
                        const RunPair *pair, const History *history) {
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n"
              "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta "
              "charset=\"utf-8\"/>\n<title>",
              f);
        put_text(f, rep->run.experiment);
        fprintf(f, " - alloclab run %lld</title>\n", (long long) rep->run.id);
        fputs("<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}"
              "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
              "text-align:left;vertical-align:top;overflow-wrap:anywhere}svg{font-size:12px;display:block;"
              "max-width:100%;height:auto}.tick{fill:#555;font-"
              "size:11px}"
              "figure{margin:1em 0}figcaption{font-weight:bold}.warn{color:#b00;font-weight:bold}"
              ".note{color:#555;font-size:smaller}"
              "pre{background:#f6f6f6;padding:1em;overflow:auto}</style>\n</head>\n<body>\n<h1>",
              f);
        put_text(f, rep->run.experiment);
        fprintf(f, ": run %lld</h1>\n<p>", (long long) rep->run.id);
        put_text(f, rep->run.status);
        fputs(", metric ", f);
        put_text(f, rep->run.metric);
        fprintf(f, ", %lld samples per variant and cell, ", (long long) rep->samples);
        put_text(f, rep->order);
        fprintf(f, " order, outliers %s.</p>\n",
                rep->exclude_outliers ? "LEFT OUT of every figure (outliers: exclude)" : "kept");
        results_table(f, rep);
        strip_plots(f, rep);
        forest_plot(f, rep);
        tradeoff_plots(f, rep);
        lines_section(
                f, rep, "Memory overhead",
                "Median peak RSS over the cell's peak of bytes the program asked for and had not freed, "
                "one figure for every variant (the baseline's smoke run under the probe): an allocator's "
                "rounding to its size classes counts as its waste",
                render_overhead_lines);
        lines_section(f, rep, "Memory at exit", RENDER_EXIT_MEMORY_HEADING, render_exit_memory_lines);
        lines_section(f, rep, "Allocator statistics", RENDER_ALLOCATOR_STATS_HEADING,
                      render_allocator_stats_lines);
        timeline_section(f, rep, timelines, n_timelines);
        own_layer_section(f, rep);
        if (pair)
                comparison_section(f, pair);
        if (history)
                history_plots(f, rep, history);
        metadata_section(f, rep, allocators, n_allocators, spec_yaml);
        fputs("<p class=\"tick\">Written by alloclab " ALLOCLAB_VERSION ".</p>\n</body>\n</html>\n", f);
        return ferror(f) ? -EIO : 0;
}

int cmd_report(int argc, char **argv) {
        if (cli_wants_help(argc, argv, report_usage))
                return EXIT_OK;
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },
                { "output", required_argument, NULL, 'o' },
                { "compare", required_argument, NULL, 'c' },
                { "history", no_argument, NULL, 'H' },
                {},
        };
        const char *db_path = NULL, *output = NULL;
        unsigned long long other = 0;
        bool with_history = false;
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "d:o:c:H", options, NULL)) >= 0;) {
                if (c == 'd')
                        db_path = optarg;
                else if (c == 'o')
                        output = optarg;
                else if (c == 'H')
                        with_history = true;
                else if (c == 'c' && cli_parse_uint(optarg, INT64_MAX, &other) == 0)
                        continue;
                else {
                        if (c == 'c')
                                cli_error("report", "--compare takes a run id, got '%s'", optarg);
                        return EXIT_USAGE;
                }
        }
        if (!output || argc - optind > 1) {
                cli_error("report", "give the output file with -o FILE (and at most one RUN)");
                return EXIT_USAGE;
        }
        _cleanup_(store_freep) Store *store = NULL;
        int e = cli_open_for_reading("report", db_path, &store);
        if (e != EXIT_OK)
                return e;
        int64_t run_id;
        if ((e = cli_resolve_run("report", store, optind < argc ? argv[optind] : NULL, &run_id)) != EXIT_OK)
                return e;

        _cleanup_(query_report_freep) Report *rep = NULL;
        _cleanup_(run_pair_freep) RunPair *pair = NULL;
        _cleanup_(history_freep) History *history = NULL;
        _cleanup_(resume_info_done) ResumeInfo info = {};
        VariantAllocator *allocators = NULL;
        size_t n_allocators = 0, n_timelines = 0;
        CellTimeline *timelines = NULL;
        int64_t missing = run_id;
        int r = query_report(store, run_id, NULL, &rep);
        if (r >= 0)
                r = query_resume_info(store, run_id, &info);
        if (r >= 0)
                r = query_allocators(store, run_id, &allocators, &n_allocators);
        if (r >= 0)
                r = query_timelines(store, run_id, &timelines, &n_timelines);
        if (r >= 0 && other)
                r = query_run_pair(store, (int64_t) other, run_id, false, &pair, &missing); /* RUN / OLD */
        if (r >= 0 && with_history) {
                HistoryQuery q = { .experiment = rep->run.experiment, .last = HISTORY_DEFAULT_RUNS };
                r = query_history(store, &q, &history);
                if (r == -ENOENT) /* a run still going or failed: no finished history yet */
                        r = 0;
        }
        if (r < 0) {
                query_allocators_free(allocators, n_allocators);
                query_timelines_free(timelines, n_timelines);
                return cli_query_failed("report", store, missing, r);
        }
        /* Written beside it and renamed: a report that could not be written whole (a full
         * disk) leaves the one before, or none, never a truncated page. */
        _cleanup_free_ char *partial = NULL;
        FILE *f = asprintf(&partial, "%s.partial", output) < 0 ? NULL : fopen(partial, "we");
        if (!f) {
                query_allocators_free(allocators, n_allocators);
                query_timelines_free(timelines, n_timelines);
                cli_error("report", "cannot write %s: %m", partial ? partial : output);
                return EXIT_ENVIRONMENT;
        }
        r = write_report(f, rep, allocators, n_allocators, timelines, n_timelines, info.spec_yaml, pair,
                         history);
        query_allocators_free(allocators, n_allocators);
        query_timelines_free(timelines, n_timelines);
        if (fflush(f) != 0 || r < 0)
                r = negative_errno();
        if (fclose(f) != 0 && r >= 0)
                r = negative_errno();
        if (r >= 0 && rename(partial, output) < 0)
                r = negative_errno();
        if (r < 0) {
                (void) unlink(partial);
                cli_error("report", "cannot write %s: %s", output, strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        return EXIT_OK;
}
