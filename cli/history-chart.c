/* SPDX-License-Identifier: MIT */
/*
 * A history series as an SVG figure with its table (cli/history-chart.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/history-chart.h"
#include "cli/html.h"
#include "cli/render.h"
#include "util/cleanup.h"

#define X_LABEL_MAX 40 /* characters: longer labels name the runs by start time */

typedef enum XName { X_COMMIT, X_LABEL, X_TIME, X_CLOCK, X_CLOCK_MS } XName;

/* Commits when every run has one, else labels when every run has a short one and no two runs
 * in a row share it, else start times (the time of day alone when every run started on one
 * day). */
static XName x_name(const HistorySeries *s) {
        bool commits = true, labels = true, one_day = true, one_second = false;
        for (size_t i = 0; i < s->n_points; i++) {
                const HistoryPoint *p = &s->points[i];
                commits &= p->commit != NULL;
                labels &=
                        p->label && strlen(p->label) <= X_LABEL_MAX &&
                        (i == 0 || !s->points[i - 1].label || strcmp(p->label, s->points[i - 1].label) != 0);
                one_day &= strncmp(p->started_at, s->points[0].started_at, 10) == 0;
                one_second |= i > 0 && strncmp(p->started_at, s->points[i - 1].started_at, 19) == 0;
        }
        return commits ? X_COMMIT : labels ? X_LABEL : !one_day ? X_TIME : one_second ? X_CLOCK_MS : X_CLOCK;
}

const char *history_x_title(const HistorySeries *s) {
        static const char *const titles[] = { [X_COMMIT] = "commit",
                                              [X_LABEL] = "label",
                                              [X_TIME] = "start time (UTC)",
                                              [X_CLOCK] = "start time (UTC)",
                                              [X_CLOCK_MS] = "start time (UTC)" };
        return titles[x_name(s)];
}

/* Whether a commit is a hash (hex digits only), which its first 10 digits name: a tag or a
 * branch name is shown whole. */
static bool is_hash(const char *commit) {
        return strspn(commit, "0123456789abcdef") == strlen(commit) && strlen(commit) > 10;
}

/* A point's name on the x axis, into buf: its commit (a hash's first 10 digits), its label, "MM-DD HH:MM",
 * or on one day "HH:MM:SS" (with milliseconds when two runs started in one second). */
static const char *point_name(const HistoryPoint *p, XName by, char *buf, size_t size) {
        if (by == X_COMMIT)
                snprintf(buf, size, "%.*s", is_hash(p->commit) ? 10 : (int) size, p->commit);
        else if (by == X_LABEL)
                snprintf(buf, size, "%s", p->label);
        else if (by == X_CLOCK || by == X_CLOCK_MS) /* started_at: "YYYY-MM-DDTHH:MM:SS.mmmZ" */
                snprintf(buf, size, "%.*s", by == X_CLOCK ? 8 : 12,
                         strlen(p->started_at) >= 19 ? p->started_at + 11 : p->started_at);
        else
                snprintf(buf, size, "%.5s %.5s", strlen(p->started_at) >= 16 ? p->started_at + 5 : "",
                         strlen(p->started_at) >= 16 ? p->started_at + 11 : p->started_at);
        return buf;
}

static const char *change_text(const HistoryPoint *p) {
        if (p->change == HISTORY_STEADY)
                return "";
        return p->change == HISTORY_REGRESSION ? (p->tentative ? "regression (tentative)" : "regression")
                                               : (p->tentative ? "improvement (tentative)" : "improvement");
}

/* Every point's numbers, with the run's start, label and commit whatever the axis shows. */
static void numbers_table(FILE *f, const History *h, const HistorySeries *s) {
        fputs("<details><summary>The chart's numbers</summary><div class=\"scroll\"><table>\n"
              "<tr><th>run</th><th>started (UTC)</th><th>label</th><th>commit</th><th>median</th>"
              "<th>95% interval</th><th>samples</th><th>change point or new baseline</th></tr>\n",
              f);
        for (size_t i = 0; i < s->n_points; i++) {
                const HistoryPoint *p = &s->points[i];
                char median[64], lo[64], hi[64];
                fprintf(f, "<tr><td class=\"num\">%lld</td><td><code>", (long long) p->run_id);
                html_text(f, p->started_at);
                fputs("</code></td><td>", f);
                html_text(f, p->label ? p->label : "");
                fputs("</td><td><code>", f);
                html_text(f, p->commit ? p->commit : "");
                fputs("</code></td><td class=\"num\">", f);
                html_text(f, render_metric_value(h->metric, h->unit, p->median, median, sizeof(median)));
                fputs("</td><td class=\"num\">", f);
                render_metric_value(h->metric, h->unit, p->lo, lo, sizeof(lo));
                render_metric_value(h->metric, h->unit, p->hi, hi, sizeof(hi));
                fprintf(f, "[%s, %s]</td><td class=\"num\">%zu</td><td>", lo, hi, p->n);
                html_verdict(f,
                             p->change == HISTORY_REGRESSION    ? VERDICT_HIGHER
                             : p->change == HISTORY_IMPROVEMENT ? VERDICT_LOWER
                                                                : VERDICT_INCONCLUSIVE,
                             false, change_text(p));
                if (p->config_change || p->host_changed) {
                        fputs(p->change == HISTORY_STEADY ? "new baseline: <code>"
                                                          : "; new baseline: <code>",
                              f);
                        html_text(f, p->config_change ? p->config_change
                                                      : "the host changed (another fingerprint)");
                        fputs("</code>", f);
                }
                fputs("</td></tr>\n", f);
        }
        fputs("</table></div></details>\n", f);
}

/* The x axis's names: the runs that matter first (the newest, the change points, the first and
 * new baselines), then every stride-th; a name is written only where it touches none written, so
 * that none overlaps, centred under its run but never past the chart's edges. */
static void x_names(FILE *f, const HistorySeries *s, XName by, const Axis *x, double axis_y, double width) {
        size_t n = s->n_points, taken = 0;
        _cleanup_free_ size_t *order = calloc(2 * n + 1, sizeof(size_t));
        _cleanup_free_ double *lefts = calloc(2 * n + 1, sizeof(double)),
                              *rights = calloc(2 * n + 1, sizeof(double));
        if (!order || !lefts || !rights)
                return;
        size_t k = 0, widest = 0;
        char name[64];
        for (size_t i = 0; i < n; i++)
                widest = MAX(widest, strlen(point_name(&s->points[i], by, name, sizeof(name))));
        order[k++] = n - 1;
        for (size_t i = 0; i < n; i++)
                if (s->points[i].change != HISTORY_STEADY || s->points[i].config_change ||
                    s->points[i].host_changed)
                        order[k++] = i;
        order[k++] = 0;
        double spacing = (x->b - x->a) / (double) n;
        size_t stride = (size_t) ceil((HTML_LABEL_PX(widest) + 14) / spacing);
        for (size_t i = 0; i < n; i += stride ? stride : 1)
                order[k++] = i;
        for (size_t j = 0; j < k; j++) {
                size_t i = order[j];
                point_name(&s->points[i], by, name, sizeof(name));
                double px = axis_at(x, (double) i), half = HTML_LABEL_PX(strlen(name)) / 2,
                       tx = fmin(fmax(px, half + 2), width - half - 2);
                bool clear = true;
                for (size_t t = 0; t < taken && clear; t++)
                        clear = tx + half + 6 < lefts[t] || tx - half - 6 > rights[t];
                if (!clear)
                        continue;
                lefts[taken] = tx - half, rights[taken++] = tx + half;
                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"tick\">",
                        px, axis_y, px, axis_y + 4, tx, axis_y + 16);
                html_text(f, name);
                fputs("</text>\n", f);
        }
}

/* A new baseline (the configuration or the host changed): a dashed grey line up the chart, what
 * changed on hover. */
static void baseline_mark(FILE *f, const HistoryPoint *p, double x, double top, double bottom) {
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#666\" "
                "stroke-dasharray=\"2 3\"><title>a new baseline: ",
                x, top, x, bottom);
        html_text(f, p->config_change ? p->config_change : "the host changed (another fingerprint)");
        fputs("</title></line>\n", f);
}

/* A change point: a triangle pointing the way the values went, black-edged, that no series
 * colour hides (a red ring on a red series did); filled when confirmed, hollow and dashed when
 * tentative. */
static void change_mark(FILE *f, const HistoryPoint *p, double x, double y) {
        bool up = p->change == HISTORY_REGRESSION;
        const char *fill = p->tentative ? "#fff" : up ? "#d00" : "#0a0";
        double d = up ? -1 : 1;
        fprintf(f,
                "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\" stroke=\"#000\" "
                "stroke-width=\"1.5\"%s/>",
                x, y + 9 * d, x - 7, y - 5 * d, x + 7, y - 5 * d, fill,
                p->tentative ? " stroke-dasharray=\"3 2\"" : "");
}

void history_figure(FILE *f, const History *h, const HistorySeries *s, const HistoryFigure *how) {
        XName by = x_name(s);
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < s->n_points; i++)
                lo = fmin(lo, s->points[i].lo), hi = fmax(hi, s->points[i].hi);
        double width = how->width, height = 250, left = 90;
        Axis x = { -0.5, (double) s->n_points - 0.5, left, width - 20 },
             y = axis_padded(lo, hi, height - 70, 36);
        TickKind kind = { h->relative_to ? NULL : h->metric, h->unit };
        figure_start(f, how->caption, width, height);
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" points=\"", how->colour);
        for (size_t i = 0; i < s->n_points; i++)
                fprintf(f, "%.1f,%.1f ", axis_at(&x, (double) i), axis_at(&y, s->points[i].median));
        fputs("\"/>\n", f);
        for (size_t i = 0; i < s->n_points; i++) {
                const HistoryPoint *p = &s->points[i];
                double px = axis_at(&x, (double) i), py = axis_at(&y, p->median);
                if (how->run_href)
                        fprintf(f, "<a href=\"%s%lld.html\">", how->run_href, (long long) p->run_id);
                char median[64];
                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>"
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>run %lld: "
                        "%s%s%s</title></circle>",
                        px, axis_at(&y, p->lo), px, axis_at(&y, p->hi), how->colour, px, py, how->colour,
                        (long long) p->run_id,
                        render_metric_value(h->metric, h->unit, p->median, median, sizeof(median)),
                        p->change == HISTORY_STEADY ? "" : ", ", change_text(p));
                if (p->config_change || p->host_changed)
                        baseline_mark(f, p, px, y.b, y.a);
                if (p->change != HISTORY_STEADY)
                        change_mark(f, p, px, py);
                fputs(how->run_href ? "</a>\n" : "\n", f);
        }
        double axis_y = height - 60;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n", x.a, axis_y,
                x.b, axis_y);
        x_names(f, s, by, &x, axis_y, width);
        axis_ticks(f, &y, true, x.a - 8, kind);
        char title[128];
        if (by == X_CLOCK || by == X_CLOCK_MS) /* the day the times are of */
                snprintf(title, sizeof(title), "run, by start time (UTC) on %.10s", s->points[0].started_at);
        else
                snprintf(title, sizeof(title), "run, by %s", history_x_title(s));
        axis_title(f, &x, false, height - 20, title);
        if (h->relative_to)
                snprintf(title, sizeof(title), "ratio to %s", h->relative_to);
        else
                snprintf(title, sizeof(title), "median %s",
                         strcmp(h->metric, "wall") == 0 ? "wall time" : h->metric);
        axis_title(f, &y, true, 4, title);
        figure_end(f);
        numbers_table(f, h, s);
}
