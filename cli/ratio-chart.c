/* SPDX-License-Identifier: MIT */
/*
 * Ratios to a baseline as a chart with its table (cli/ratio-chart.h).
 */
#include <math.h>
#include <string.h>

#include "cli/html.h"
#include "cli/ratio-chart.h"
#include "cli/render.h"
#include "util/cleanup.h"

RatioRow ratio_row(const Report *rep, const Comparison *k, const char *group, const char *name) {
        return (RatioRow){ .group = group,
                           .name = name,
                           .ratio = k->ratio,
                           .lo = k->lo,
                           .hi = k->hi,
                           .verdict = k->verdict,
                           .verdict_text = verdict_word(k->verdict, render_time_metric(rep->run.metric)),
                           .higher_is_better = rep->run.higher_is_better };
}

RatioRow ratio_row_missing(const char *group, const char *name, const char *mark) {
        RatioRow r = {
                .group = group, .name = name, .ratio = NAN, .lo = NAN, .hi = NAN, .verdict_text = ""
        };
        snprintf(r.why, sizeof(r.why), "not compared: %s", mark);
        return r;
}

static bool bounded(const RatioRow *r) {
        return r->lo > 0 && isfinite(r->hi);
}

/* A bar's or point's colour says its verdict, as its text does: red worse, green better, grey
 * same, pale blue inconclusive (a variant's own colour, red or green, read as a verdict). */
static const char *verdict_fill(const RatioRow *r) {
        bool worse = r->verdict == (r->higher_is_better ? VERDICT_LOWER : VERDICT_HIGHER),
             better = r->verdict == (r->higher_is_better ? VERDICT_HIGHER : VERDICT_LOWER);
        return worse ? "#d62728" : better ? "#2ca02c" : r->verdict == VERDICT_SAME ? "#8c8c8c" : "#9ecae1";
}

void ratio_chart(FILE *f, const char *caption, const char *x_title, const RatioRow *rows, size_t n,
                 bool bars) {
        double lo = bars ? 0 : 1, hi = 1;
        size_t widest = 0, groups = 0;
        for (size_t i = 0; i < n; i++) {
                if (!isnan(rows[i].ratio)) {
                        lo = fmin(lo, bounded(&rows[i]) ? rows[i].lo : rows[i].ratio);
                        hi = fmax(hi, bounded(&rows[i]) ? rows[i].hi : rows[i].ratio);
                }
                widest = MAX(widest, strlen(rows[i].name));
                groups += i == 0 || strcmp(rows[i].group, rows[i - 1].group) != 0;
        }
        double row = 18, width = 1000, left = HTML_LABEL_PX(widest) + 20, right = width - 200;
        double height = row * (double) (n + groups) + 60;
        Axis x = bars ? (Axis){ 0, hi * 1.05, left, right } : axis_padded(lo, hi, left, right);
        figure_start(f, caption, width, height);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" stroke-dasharray=\"4 "
                "3\"/>\n",
                axis_at(&x, 1), axis_at(&x, 1), height - 50);
        double y = 0;
        for (size_t i = 0; i < n; i++) {
                const RatioRow *r = &rows[i];
                if (i == 0 || strcmp(r->group, rows[i - 1].group) != 0) {
                        fprintf(f, "<text x=\"4\" y=\"%.1f\" font-weight=\"bold\">", y + 13);
                        html_text(f, r->group);
                        fputs("</text>\n", f);
                        y += row;
                }
                double mid = y + row / 2;
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 8, mid + 4);
                html_text(f, r->name);
                fputs("</text>\n", f);
                if (isnan(r->ratio)) { /* not compared: why, where its bar would be */
                        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">", x.a + 4, mid + 4);
                        html_text(f, r->why);
                        fputs("</text>\n", f);
                        y += row;
                        continue;
                }
                if (bars)
                        fprintf(f,
                                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                                "fill-opacity=\"0.7\"/>\n",
                                x.a, mid - 6, axis_at(&x, r->ratio) - x.a, 12.0, verdict_fill(r));
                else
                        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"#000\"/>\n",
                                axis_at(&x, r->ratio), mid, verdict_fill(r));
                if (bounded(r))
                        fprintf(f,
                                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>"
                                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>"
                                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n",
                                axis_at(&x, r->lo), mid, axis_at(&x, r->hi), mid, axis_at(&x, r->lo),
                                mid - 4, axis_at(&x, r->lo), mid + 4, axis_at(&x, r->hi), mid - 4,
                                axis_at(&x, r->hi), mid + 4);
                char text[96];
                snprintf(text, sizeof(text), "%.3fx %s", r->ratio, r->verdict_text);
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", right + 10, mid + 4);
                svg_verdict(f, r->verdict, r->higher_is_better, text);
                fputs("</text>\n", f);
                y += row;
        }
        axis_ticks(f, &x, false, y + 6, (TickKind){ NULL, NULL });
        axis_title(f, &x, false, y + 42, x_title);
        fprintf(f,
                "</svg><p class=\"note\">%s: red worse, green better, grey the same, pale blue "
                "inconclusive; the whiskers are the interval.</p></figure>\n",
                bars ? "Bars" : "Points");
}

/* A number with its exact value for a reader that checks it (data-value: 17 digits). */
static void number_cell(FILE *f, double v) {
        if (isfinite(v))
                fprintf(f, "<td class=\"num\" data-value=\"%.17g\">%.3f</td>", v, v);
        else
                fputs("<td class=\"num\">-</td>", f);
}

void ratio_table(FILE *f, const char *group_title, const char *name_title, const RatioRow *rows, size_t n) {
        fputs("<details><summary>The chart's numbers</summary><div class=\"scroll\"><table>\n<tr><th>", f);
        html_text(f, group_title);
        fputs("</th><th>", f);
        html_text(f, name_title);
        fputs("</th><th>ratio</th><th>interval low</th><th>interval high</th><th>verdict</th></tr>\n", f);
        for (size_t i = 0; i < n; i++) {
                fputs("<tr><td>", f);
                html_text(f, rows[i].group);
                fputs("</td><td>", f);
                html_text(f, rows[i].name);
                fputs("</td>", f);
                number_cell(f, rows[i].ratio);
                number_cell(f, bounded(&rows[i]) ? rows[i].lo : NAN);
                number_cell(f, bounded(&rows[i]) ? rows[i].hi : NAN);
                fputs("<td>", f);
                html_verdict(f, rows[i].verdict, rows[i].higher_is_better,
                             isnan(rows[i].ratio) ? rows[i].why : rows[i].verdict_text);
                fputs("</td></tr>\n", f);
        }
        fputs("</table></div></details>\n", f);
}
