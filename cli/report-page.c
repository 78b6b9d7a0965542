/* SPDX-License-Identifier: MIT */
/*
 * A run's page (cli/report-page.h): one self-contained page for people and pull requests.
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
#include "cli/history-chart.h"
#include "cli/html.h"
#include "cli/pair-render.h"
#include "cli/ratio-chart.h"
#include "cli/report-page.h"
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

/* The widest of the variants' names. */
static size_t longest_variant(const Report *rep) {
        size_t n = 0;
        for (size_t v = 0; v < rep->n_variants; v++)
                n = MAX(n, strlen(rep->variant_names[v]));
        return n;
}

/* A cell's samples as a table beneath its strip plot: per variant its median and every value. */
static void samples_table(FILE *f, const Report *rep, size_t c) {
        static const char *const columns[] = { "variant", "samples", "median",
                                               "values, in the order measured" };
        json_auto_t *table = render_table_new(columns, ELEMENTSOF(columns));
        for (size_t v = 0; v < rep->n_variants; v++) {
                const ReportEntry *e = entry_of(rep, c, v);
                char median[64] = "-", *values = NULL;
                size_t size = 0;
                FILE *m = open_memstream(&values, &size);
                for (size_t k = 0; m && k < e->n_values; k++) {
                        char value[64];
                        fprintf(m, "%s%s", k ? ", " : "",
                                render_run_value(&rep->run, e->values[k], value, sizeof(value)));
                }
                if (!m || !memstream_text(m, &values))
                        return;
                if (e->has_stats && e->stats.n > 0)
                        render_run_value(&rep->run, e->stats.median, median, sizeof(median));
                json_t *row[] = { json_string(rep->variant_names[v]), json_integer((json_int_t) e->n_values),
                                  json_string(median), json_string(values) };
                render_table_add_row(table, row, ELEMENTSOF(row));
                free(values);
        }
        html_details_table(f, "The chart's numbers", table);
}

/* Per cell, every measured sample of every variant, with its median: on one axis for all cells,
 * unless that would squash a cell (one_axis()). */
static void strip_plots(FILE *f, const Report *rep) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t c = 0; c < rep->n_cells; c++)
                cell_range(rep, c, &lo, &hi);
        bool shared = one_axis(rep);
        fputs("<h2>Samples</h2>\n<p>Every measured sample of ", f);
        html_text(f, render_report_metric(rep));
        fprintf(f, ", one row per variant; the bar is the median. %s</p>\n",
                shared ? "All cells share one axis."
                       : "Each cell has its own axis: their values differ too much to share one.");
        if (!isfinite(lo)) {
                fputs("<p>No measured samples.</p>\n", f);
                return;
        }
        TickKind kind = { rep->run.metric, rep->run.metric_unit };
        double row = 22, left = HTML_LABEL_PX(longest_variant(rep)) + 16, width = 1000;
        for (size_t c = 0; c < rep->n_cells; c++) {
                double clo = INFINITY, chi = -INFINITY;
                cell_range(rep, c, &clo, &chi);
                if (!shared && !isfinite(clo))
                        continue;
                Axis x = shared ? axis_padded(lo, hi, left, width - 30)
                                : axis_padded(clo, chi, left, width - 30);
                double height = row * (double) rep->n_variants + 50;
                figure_start(f, rep->cell_labels[c], width, height);
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = entry_of(rep, c, v);
                        double y = row * (double) v + row / 2 + 4;
                        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 8, y + 4);
                        html_text(f, rep->variant_names[v]);
                        fputs("</text>\n", f);
                        for (size_t k = 0; k < e->n_values; k++)
                                fprintf(f,
                                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" "
                                        "fill-opacity=\"0.5\"/>\n",
                                        axis_at(&x, e->values[k]), y + (double) (k % 5) - 2, html_colour(v));
                        if (e->has_stats && e->stats.n > 0)
                                fprintf(f,
                                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                        "stroke=\"#000\" stroke-width=\"2\"/>\n",
                                        axis_at(&x, e->stats.median), y - 8, axis_at(&x, e->stats.median),
                                        y + 8);
                }
                double axis_y = row * (double) rep->n_variants + 10;
                axis_ticks(f, &x, false, axis_y, kind);
                axis_title(f, &x, false, axis_y + 34, render_report_metric(rep));
                figure_end(f);
                samples_table(f, rep, c);
        }
}

/* Each variant's ratio to its cell's baseline with its interval and verdict, grouped by cell. */
static void forest_plot(FILE *f, const Report *rep) {
        fputs("<h2>Ratios to ", f);
        html_text(f, rep->variant_names[rep->baseline]);
        fputs("</h2>\n", f);
        _cleanup_free_ RatioRow *rows = calloc(rep->n_cells * rep->n_variants + 1, sizeof(RatioRow));
        if (!rows)
                return;
        size_t n = 0;
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = entry_of(rep, c, v);
                        char mark[48];
                        if (e->has_comparison)
                                rows[n++] = ratio_row(rep, &e->comparison, rep->cell_labels[c],
                                                      rep->variant_names[v]);
                        else if (v != rep->baseline && (e->excluded_reason || e->n_failed > 0)) {
                                render_failure_mark(e, mark, sizeof(mark));
                                rows[n++] =
                                        ratio_row_missing(rep->cell_labels[c], rep->variant_names[v], mark);
                        }
                }
        if (n == 0) {
                fputs("<p>No variant was compared with the baseline.</p>\n", f);
                return;
        }
        char rule[512], title[160];
        CompareRule verdict_rule = render_rule(rep);
        render_verdict_rule(&verdict_rule, rep->order, rule, sizeof(rule));
        fprintf(f,
                "<p>Variant / baseline in the same cell (the Hodges-Lehmann estimate: the median of the "
                "pairwise ratios of independent samples, or of the Walsh averages of the rounds' log "
                "ratios where the rounds pair), with its %.4g%% interval; ",
                100 * render_interval_level(rep));
        html_text(f, rule);
        fputs(".</p>\n", f);
        snprintf(title, sizeof(title), "ratio to %s (%s is better)", rep->variant_names[rep->baseline],
                 rep->run.higher_is_better ? "more" : "less");
        ratio_chart(f, "Each variant's ratio to the baseline, per cell", title, rows, n, false);
        ratio_table(f, "cell", "variant", rows, n);
}

/* Per cell, median wall time (or the metric: front_by_metric) against median peak RSS, the Pareto
 * front filled. */
static double front_x(const Report *rep, const ReportEntry *e) {
        return rep->front_by_metric ? (e->has_stats && e->stats.n > 0 ? e->stats.median : NAN)
                                    : e->wall_median;
}

/* A cell's points of the time and memory chart as a table. */
static void tradeoff_table(FILE *f, const Report *rep, size_t c) {
        const char *columns[] = { "variant",
                                  rep->front_by_metric ? render_report_metric(rep) : "median wall time",
                                  "median peak RSS", "on the Pareto front" };
        json_auto_t *table = render_table_new(columns, ELEMENTSOF(columns));
        for (size_t v = 0; v < rep->n_variants; v++) {
                const ReportEntry *e = entry_of(rep, c, v);
                if (!e->has_tradeoff || isnan(front_x(rep, e)))
                        continue;
                char x[64], rss[64];
                if (rep->front_by_metric)
                        render_run_value(&rep->run, front_x(rep, e), x, sizeof(x));
                else
                        render_value("wall", front_x(rep, e), x, sizeof(x));
                json_t *row[] = { json_string(rep->variant_names[v]), json_string(x),
                                  json_string(render_value("maxrss", e->maxrss_median, rss, sizeof(rss))),
                                  json_string(e->pareto ? "yes" : "no") };
                render_table_add_row(table, row, ELEMENTSOF(row));
        }
        html_details_table(f, "The chart's numbers", table);
}

static void tradeoff_plots(FILE *f, const Report *rep) {
        bool any = false;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                any |= rep->entries[i].has_tradeoff;
        if (!any)
                return; /* an import that measured no memory: no heading over nothing */
        if (rep->front_by_metric) {
                fputs("<h2>Metric and memory</h2>\n<p>Median ", f);
                html_text(f, render_report_metric(rep));
                fprintf(f,
                        " (%s is better) against median peak RSS per cell. Filled points are on the Pareto "
                        "front: no other variant is at least as good in both and better in one.</p>\n",
                        rep->run.higher_is_better ? "more" : "less");
        } else
                fputs("<h2>Time and memory</h2>\n<p>Median wall time against median peak RSS per cell. "
                      "Filled points are on the Pareto front: no other variant is at least as fast and as "
                      "small.</p>\n",
                      f);
        TickKind x_kind = rep->front_by_metric ? (TickKind){ rep->run.metric, rep->run.metric_unit }
                                               : (TickKind){ "wall", NULL },
                 y_kind = { "maxrss", NULL };
        /* The legend names the variants (filled: on the front); no label sits beside a point,
         * where two close points would put theirs on top of each other. */
        double width = 1000, height = 340, legend_x = width - HTML_LABEL_PX(longest_variant(rep)) - 60;
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
                Axis x = axis_padded(tlo, thi, 100, legend_x - 30),
                     y = axis_padded(mlo, mhi, height - 60, 36);
                figure_start(f, rep->cell_labels[c], width, height);
                size_t legend = 0;
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = entry_of(rep, c, v);
                        if (!e->has_tradeoff || isnan(front_x(rep, e)))
                                continue;
                        const char *fill = e->pareto ? html_colour(v) : "#fff";
                        fprintf(f,
                                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" stroke=\"%s\" stroke-width=\"2\" "
                                "fill=\"%s\"><title>",
                                axis_at(&x, front_x(rep, e)), axis_at(&y, e->maxrss_median), html_colour(v),
                                fill);
                        html_text(f, rep->variant_names[v]);
                        fputs("</title></circle>\n", f);
                        double ly = 30 + 20.0 * (double) legend++;
                        fprintf(f,
                                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" stroke=\"%s\" stroke-width=\"2\" "
                                "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">",
                                legend_x + 8, ly, html_colour(v), fill, legend_x + 20, ly + 4);
                        html_text(f, rep->variant_names[v]);
                        fputs("</text>\n", f);
                }
                axis_ticks(f, &x, false, height - 45, x_kind);
                axis_ticks(f, &y, true, x.a - 10, y_kind);
                axis_title(f, &x, false, height - 8,
                           rep->front_by_metric ? render_report_metric(rep) : "median wall time");
                axis_title(f, &y, true, 4, "median peak RSS");
                figure_end(f);
                tradeoff_table(f, rep, c);
        }
}

/* Lines about the run (the memory overhead; per cell and variant, what the smoke run read at
 * exit), said as the text says them (render-figures.h) under a title and a paragraph; where
 * there are none, the line none says why, or (none NULL) nothing at all. */
static void lines_section(FILE *f, const Report *rep, const char *title, const char *heading,
                          char **(*lines_of)(const Report *rep, bool *ret_oom), const char *none) {
        bool oom;
        _cleanup_strv_free_ char **lines = lines_of(rep, &oom);
        if (!lines && !none)
                return;
        fputs("<h2>", f);
        html_text(f, title);
        fputs("</h2>\n<p>", f);
        html_text(f, heading);
        fputs(".</p>\n<ul>\n", f);
        for (char **l = lines; l && *l; l++) {
                fputs("<li>", f);
                html_text(f, *l);
                fputs("</li>\n", f);
        }
        if (!lines) {
                fputs("<li>", f);
                html_text(f, none);
                fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
}

/* A note as the text gives it, under its heading, or nothing. */
static void warning_section(FILE *f, const char *heading, char *note) {
        if (!note)
                return;
        fputs("<h2>", f);
        html_text(f, heading);
        fputs("</h2>\n<p class=\"warn\">", f);
        html_text(f, note);
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
                        return html_colour(v);
        return "#444";
}

/* Per series of the experiment's history, the medians of the last runs. */
static void history_plots(FILE *f, const Report *rep, const History *h) {
        fprintf(f,
                "<h2>History</h2>\n<p>Medians of %s over the last %zu finished runs, in the order they "
                "ran; red triangles pointing up are regressions, green ones pointing down improvements, "
                "each confirmed by the run after it; hollow dashed ones are tentative, the last run out of "
                "line, not yet confirmed "
                "(docs/analysis.md).</p>\n",
                h->metric, h->n_runs);
        for (size_t s = 0; s < h->n_series; s++) {
                const HistorySeries *series = &h->series[s];
                char caption[512];
                snprintf(caption, sizeof(caption), "[%s] %s%s%s", series->cell, series->variant,
                         h->many_machines ? " on " : "", h->many_machines ? series->machine : "");
                HistoryFigure how = { caption, variant_colour(rep, series->variant), NULL, 1000 };
                history_figure(f, h, series, &how);
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
        html_text(f, heading);
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
                double width = 1000, height = 340, right = width - HTML_LABEL_PX(longest_variant(rep)) - 60;
                Axis x = { 0, fmax(t_max, 1) / 1000, 90, right },
                     y = { 0, fmax(kib_max, 1) * 1024 * 1.05, height - 60, 36 };
                figure_start(f, rep->n_cells > 1 ? rep->cell_labels[c] : "Each variant's median sample",
                             width, height);
                axis_ticks(f, &x, false, y.a, (TickKind){ "wall", NULL });
                axis_ticks(f, &y, true, x.a, (TickKind){ "maxrss", NULL });
                axis_title(f, &x, false, height - 12, "time since the child started");
                axis_title(f, &y, true, 4, "resident memory");
                size_t legend = 0;
                for (size_t i = 0; i < n; i++) {
                        const Timeline *t = &list[i].timeline;
                        if (list[i].cell != c || t->n_points == 0 || list[i].variant >= rep->n_variants)
                                continue;
                        const char *colour = html_colour(list[i].variant);
                        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                                colour);
                        /* Steps: a reading holds until the next, as the time-weighted mean counts it. */
                        for (size_t k = 0; k < t->n_points; k++)
                                fprintf(f, "%.1f,%.1f %.1f,%.1f ", axis_at(&x, t->points[k].t_ms / 1000.0),
                                        axis_at(&y, t->points[k].kib * 1024.0),
                                        axis_at(&x, t->points[k + (k + 1 < t->n_points)].t_ms / 1000.0),
                                        axis_at(&y, t->points[k].kib * 1024.0));
                        fputs("\"/>\n", f);
                        for (size_t m = 0; m < t->n_marks; m++)
                                for (size_t k = 0; k < t->n_points; k++)
                                        if (t->points[k].t_ms == t->marks[m].t_ms) {
                                                fprintf(f,
                                                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
                                                        "fill=\"%s\"><title>",
                                                        axis_at(&x, t->points[k].t_ms / 1000.0),
                                                        axis_at(&y, t->points[k].kib * 1024.0), colour);
                                                html_text(f, rep->variant_names[list[i].variant]);
                                                fputs(": after ", f);
                                                html_text(f, t->marks[m].name);
                                                fputs("</title></circle>\n", f);
                                                break;
                                        }
                        double ly = 25 + 18.0 * (double) legend++;
                        fprintf(f,
                                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                                "stroke-width=\"3\"/><text x=\"%.1f\" y=\"%.1f\">",
                                right + 25, ly, right + 45, ly, colour, right + 50, ly + 4);
                        html_text(f, rep->variant_names[list[i].variant]);
                        fputs("</text>\n", f);
                }
                figure_end(f);
        }
        bool oom;
        _cleanup_strv_free_ char **lines = render_timeline_lines(rep, &oom);
        fputs("<ul>\n", f);
        for (char **l = lines; l && *l; l++) {
                fputs("<li>", f);
                html_text(f, *l);
                fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
}

/* "1.050x [1.021, 1.080] slower", or without an interval where it has none ([0, inf]: too few
 * samples for one), as show prints it: "1.050x ~ (too few samples)". */
static void comparison_text(const Comparison *k, bool time, char *buf, size_t size) {
        char word[64];
        render_verdict_text(k->verdict, k->detectable, time, word, sizeof(word));
        if (k->lo > 0 && isfinite(k->hi))
                snprintf(buf, size, "%.3fx [%.3f, %.3f] %s", k->ratio, k->lo, k->hi, word);
        else
                snprintf(buf, size, "%.3fx %s", k->ratio, word);
}

/* The result table: median and ratio with verdict per cell and variant. */
static void results_table(FILE *f, const Report *rep) {
        bool time = render_time_metric(rep->run.metric);
        fprintf(f,
                "<h2>Results</h2>\n<p>Median per cell and variant, the ratio to the baseline with its "
                "%.4g%% interval and verdict; outliers (modified z-score above 3.5) and samples "
                "started on a busy machine are counted below a value.</p>\n<div "
                "class=\"scroll\"><table>\n<tr><th>cell</th>",
                100 * render_interval_level(rep));
        for (size_t v = 0; v < rep->n_variants; v++) {
                fputs("<th>", f);
                html_text(f, rep->variant_names[v]);
                fputs(v == rep->baseline ? " (baseline)</th>" : "</th>", f);
        }
        fputs("</tr>\n", f);
        for (size_t c = 0; c < rep->n_cells; c++) {
                fputs("<tr><td>", f);
                html_text(f, rep->cell_labels[c]);
                fputs("</td>", f);
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = entry_of(rep, c, v);
                        char value[64] = "-";
                        if (e->has_stats && e->stats.n > 0)
                                render_run_value(&rep->run, e->stats.median, value, sizeof(value));
                        fputs("<td>", f);
                        html_text(f, e->excluded_reason ? "excluded" : value);
                        char text[160];
                        if (e->has_comparison && render_report_has_verdicts(rep)) {
                                text[0] = ' ';
                                comparison_text(&e->comparison, time, text + 1, sizeof(text) - 1);
                                html_verdict(f, e->comparison.verdict, rep->run.higher_is_better, text);
                        } else if (e->has_comparison)
                                fprintf(f, " %.3fx", e->comparison.ratio);
                        if (e->excluded_reason) {
                                fputs("<br/><span class=\"note\">", f);
                                html_text(f, e->excluded_reason);
                                fputs("</span>", f);
                        }
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
        fputs("</table></div>\n", f);
}

/* A run's value in the change table: its median, or relative its ratio to its baseline; "-"
 * where it has none. */
static void pair_value(const RunPair *pair, double value, char *buf, size_t size) {
        if (!(value > 0))
                snprintf(buf, size, "-");
        else if (pair->relative)
                snprintf(buf, size, "%.3fx", value);
        else
                render_run_value(&pair->a->run, value, buf, size);
}

static void comparison_section(FILE *f, const RunPair *pair) {
        fprintf(f, "<h2>Change from run %lld to run %lld</h2>\n", (long long) pair->a->run.id,
                (long long) pair->b->run.id);
        if (pair->differences[0]) {
                fputs("<p class=\"warn\">NOT COMPARABLE: the runs differ in</p>\n<ul>\n", f);
                for (char **d = pair->differences; *d; d++) {
                        fputs("<li>", f);
                        html_text(f, *d);
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
                fprintf(f, "measured over up to %zu earlier runs of this experiment on this machine (%s); ",
                        pair->spread.runs, pair->a->run.machine);
        else
                fprintf(f,
                        "assumed: no earlier runs of this experiment on this machine (%s) to measure it "
                        "from; ",
                        pair->a->run.machine);
        html_text(f, rule);
        fputs(".</p>\n", f);
        fprintf(f,
                "<div class=\"scroll\"><table>\n<tr><th>cell</th><th>variant</th><th>run %lld</th>"
                "<th>run %lld</th><th>change</th></tr>\n",
                (long long) pair->a->run.id, (long long) pair->b->run.id);
        for (size_t i = 0; i < pair->n_changes; i++) {
                const PairChange *x = &pair->changes[i];
                fputs("<tr><td>", f);
                html_text(f, pair->a->cell_labels[x->cell_a]);
                fputs("</td><td>", f);
                html_text(f, pair->a->variant_names[x->variant_a]);
                char a[64], b[64];
                pair_value(pair, x->value_a, a, sizeof(a));
                pair_value(pair, x->value_b, b, sizeof(b));
                fprintf(f, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td>", a, b);
                char text[160] = "-";
                if (x->has_comparison)
                        comparison_text(&x->comparison, time, text, sizeof(text));
                html_verdict(f, x->has_comparison ? x->comparison.verdict : VERDICT_INCONCLUSIVE,
                             pair->a->run.higher_is_better, text);
                fputs("</td></tr>\n", f);
        }
        fputs("</table></div>\n", f);
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
                html_text(f, field->label);
                fputs("</th><td>", f);
                html_text(f, text);
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
                html_text(f, "none of alloclab's: measured by another tool and imported");
        else {
                html_text(f, rep->cgroup ? "children in a cgroup under " : "process groups only: ");
                html_text(f, rep->cgroup            ? rep->cgroup
                             : rep->cgroup_fallback ? rep->cgroup_fallback
                                                    : "not recorded");
        }
        if (rep->child_cpus) {
                html_text(f, "; children pinned to CPUs ");
                html_text(f, rep->child_cpus);
        }
        fputs("</td></tr>\n", f);
        if (rep->startup) {
                fputs("<tr><th>start-up (null workload)</th><td>", f);
                for (size_t v = 0; v < rep->n_variants; v++) {
                        char median[32] = "no successful run";
                        if (rep->startup[v].n)
                                render_value("wall", rep->startup[v].median, median, sizeof(median));
                        fputs(v ? ", " : "", f);
                        html_text(f, rep->variant_names[v]);
                        fputs(" ", f);
                        html_text(f, median);
                }
                fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
}

/* Each variant's allocator, file and what the probe found in effect. */
/* A row of the allocators' table: a name, and its value in a code span (a path, a hash or a
 * version is one word, never broken). */
static void allocator_row(FILE *f, const char *name, const char *value) {
        fputs("<tr><th>", f);
        html_text(f, name);
        fputs("</th><td><code>", f);
        html_text(f, value);
        fputs("</code></td></tr>\n", f);
}

/* Per variant, a few rows (one value each, so that no column is squeezed by another's long
 * words): its allocator, version, file and sha256, and what the probe found in effect. */
static void allocators_table(FILE *f, const VariantAllocator *allocators, size_t n) {
        fputs("<h3>Allocators</h3>\n<div class=\"scroll\"><table>\n", f);
        for (size_t i = 0; i < n; i++) {
                const VariantAllocator *a = &allocators[i];
                fputs("<tr><th colspan=\"2\">", f);
                html_text(f, a->variant);
                fputs("</th></tr>\n", f);
                allocator_row(f, "allocator", a->allocator);
                allocator_row(f, "version", a->version);
                allocator_row(f, "file", a->path[0] ? a->path : "(nothing preloaded)");
                allocator_row(f, "sha256", a->sha256);
                json_auto_t *probe = a->probe_report ? json_loads(a->probe_report, 0, NULL) : NULL;
                json_t *effective = json_object_get(probe, "effective");
                if (!effective) {
                        allocator_row(f, "in effect (probe)", "no probe report");
                        continue;
                }
                char in_effect[1024];
                snprintf(in_effect, sizeof(in_effect), "%s %s",
                         json_string_value(json_object_get(effective, "path")) ?: "",
                         json_string_value(json_object_get(effective, "version")) ?: "");
                allocator_row(f, "in effect (probe)", in_effect);
                const char *key;
                json_t *value;
                json_object_foreach(json_object_get(effective, "options"), key, value) {
                        const char *text = json_string_value(value);
                        char option[1024];
                        if (!text || !text[0])
                                continue; /* GLIBC_TUNABLES= set empty: no option in effect */
                        snprintf(option, sizeof(option), "%s = %s", key, text);
                        allocator_row(f, "option in effect", option);
                }
        }
        fputs("</table></div>\n", f);
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
                        html_text(f, rep->cell_labels[c]);
                        fputs("] ", f);
                        html_text(f, rep->variant_names[v]);
                        fputs(": ", f);
                        html_text(f, e->excluded_reason ? e->excluded_reason : e->first_failure);
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
        html_text(f, spec_yaml);
        fputs("</pre>\n", f);
}

static int write_report(FILE *f, const Report *rep, const VariantAllocator *allocators, size_t n_allocators,
                        const CellTimeline *timelines, size_t n_timelines, const char *spec_yaml,
                        const RunPair *pair, const History *history, const char *nav) {
        char title[512];
        snprintf(title, sizeof(title), "%s - alloclab run %lld", rep->run.experiment,
                 (long long) rep->run.id);
        html_page_start(f, title, nav);
        fputs("<h1>", f);
        html_text(f, rep->run.experiment);
        fprintf(f, ": run %lld</h1>\n<p>", (long long) rep->run.id);
        html_text(f, rep->run.status);
        fputs(", metric ", f);
        html_text(f, rep->run.metric);
        fprintf(f, ", %lld samples per variant and cell, ", (long long) rep->samples);
        html_text(f, rep->order);
        fprintf(f, " order, outliers %s.</p>\n",
                rep->exclude_outliers ? "LEFT OUT of every figure (outliers: exclude)" : "kept");
        char pruned[512];
        if (render_pruned_note(rep, pruned, sizeof(pruned))) {
                fputs("<p class=\"warn\">", f);
                html_text(f, pruned);
                fputs(".</p>\n", f);
        }
        results_table(f, rep);
        strip_plots(f, rep);
        forest_plot(f, rep);
        tradeoff_plots(f, rep);
        lines_section(
                f, rep, "Memory overhead",
                "Median peak RSS over the cell's peak of bytes the program asked for and had not freed, "
                "one figure for every variant (the baseline's smoke run under the probe): an allocator's "
                "rounding to its size classes counts as its waste",
                render_overhead_lines,
                "not given: no smoke run of this run recorded the peak of the bytes the program asked for");
        lines_section(f, rep, "Memory at exit", RENDER_EXIT_MEMORY_HEADING, render_exit_memory_lines, NULL);
        lines_section(f, rep, "Allocator statistics", RENDER_ALLOCATOR_STATS_HEADING,
                      render_allocator_stats_lines, NULL);
        timeline_section(f, rep, timelines, n_timelines);
        own_layer_section(f, rep);
        if (pair)
                comparison_section(f, pair);
        if (history)
                history_plots(f, rep, history);
        metadata_section(f, rep, allocators, n_allocators, spec_yaml);
        html_page_end(f);
        return ferror(f) ? -EIO : 0;
}

int report_page_write(FILE *f, Store *store, int64_t run_id, const ReportPageOptions *o,
                      int64_t *ret_missing) {
        _cleanup_(query_report_freep) Report *rep = NULL;
        _cleanup_(run_pair_freep) RunPair *pair = NULL;
        _cleanup_(history_freep) History *history = NULL;
        _cleanup_(resume_info_done) ResumeInfo info = {};
        VariantAllocator *allocators = NULL;
        size_t n_allocators = 0, n_timelines = 0;
        CellTimeline *timelines = NULL;
        *ret_missing = run_id;
        int r = query_report(store, run_id, NULL, &rep);
        if (r >= 0)
                r = query_resume_info(store, run_id, &info);
        if (r >= 0)
                r = query_allocators(store, run_id, &allocators, &n_allocators);
        if (r >= 0)
                r = query_timelines(store, run_id, &timelines, &n_timelines);
        if (r >= 0 && o->compare_to) /* RUN / OLD */
                r = query_run_pair(store, o->compare_to, run_id, false, &pair, ret_missing);
        if (r >= 0 && o->history) {
                HistoryQuery q = { .experiment = rep->run.experiment, .last = HISTORY_DEFAULT_RUNS };
                r = query_history(store, &q, &history);
                if (r == -ENOENT) /* a run still going or failed: no finished history yet */
                        r = 0;
        }
        if (r >= 0)
                r = write_report(f, rep, allocators, n_allocators, timelines, n_timelines, info.spec_yaml,
                                 pair, history, o->nav);
        query_allocators_free(allocators, n_allocators);
        query_timelines_free(timelines, n_timelines);
        return r;
}
