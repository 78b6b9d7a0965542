/* SPDX-License-Identifier: MIT */
/*
 * HTML and SVG for the report and the site (cli/html.h).
 */
#include <math.h>
#include <string.h>

#include "cli/html.h"
#include "cli/render.h"
#include "util/cleanup.h"
#include "util/text.h"

/* No red and no green: those say worse and better (verdicts, change points). */
static const char *const palette[] = { "#1f77b4", "#ff7f0e", "#9467bd", "#17becf", "#8c564b",
                                       "#e377c2", "#7f7f7f", "#bcbd22", "#393b79", "#e7ba52" };

const char *html_colour(size_t variant) {
        return palette[variant % ELEMENTSOF(palette)];
}

void html_text(FILE *f, const char *s) {
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

/* Wide tables scroll inside their box, never the page; words are never broken (a hash or a path
 * may be wider than a column: its box scrolls). */
static const char stylesheet[] =
        "body{font-family:sans-serif;max-width:1300px;margin:2em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}"
        "td.num{text-align:right;white-space:nowrap}.nowrap{white-space:nowrap}"
        ".scroll{overflow-x:auto;max-width:100%}"
        "svg{font-size:12px;display:block;max-width:100%;height:auto}.tick{fill:#555;font-size:11px}"
        "figure{margin:1em 0}figcaption{font-weight:bold}.warn{color:#b00;font-weight:bold}"
        ".note{color:#555;font-size:smaller}.worse{color:#c00;font-weight:bold}"
        ".better{color:#080;font-weight:bold}.same{color:#666}tspan.worse{fill:#c00}tspan.better{fill:#080}"
        "tspan.same{fill:#666}"
        ".chart{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}"
        "nav{margin-bottom:1em}nav a{margin-right:1em}"
        "code{white-space:nowrap}pre{background:#f6f6f6;padding:1em;overflow:auto}";

void html_page_start(FILE *f, const char *title, const char *nav) {
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n"
              "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta "
              "charset=\"utf-8\"/>\n<title>",
              f);
        html_text(f, title);
        fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n", stylesheet);
        if (nav)
                fprintf(f, "<nav>%s</nav>\n", nav);
}

void html_page_end(FILE *f) {
        fputs("<p class=\"tick\">Written by alloclab " ALLOCLAB_VERSION ".</p>\n</body>\n</html>\n", f);
}

double axis_at(const Axis *x, double v) {
        return x->hi > x->lo ? x->a + (v - x->lo) / (x->hi - x->lo) * (x->b - x->a) : (x->a + x->b) / 2;
}

Axis axis_padded(double lo, double hi, double a, double b) {
        double pad = hi > lo ? (hi - lo) * 0.05 : fabs(lo) * 0.05 + 1e-12;
        return (Axis){ lo - pad, hi + pad, a, b };
}

/* A round step for about `want` intervals over span: 1, 2 or 5 times a power of ten. */
static double nice_step(double span, int want) {
        double raw = span / want, power = pow(10, floor(log10(raw))), f = raw / power;
        return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * power;
}

/* The unit an axis is labelled in: its size and name, from the largest magnitude it shows. */
typedef struct TickUnit {
        double size;
        const char *name;
} TickUnit;

static TickUnit tick_unit(const Axis *axis, TickKind kind) {
        double top = fmax(fabs(axis->lo), fabs(axis->hi));
        if (!kind.metric)
                return (TickUnit){ 1, "x" };
        if (kind.unit)
                return (TickUnit){ 1, kind.unit };
        const char *what = render_metric_kind(kind.metric);
        if (strcmp(what, "time") == 0)
                return top < 1e-6   ? (TickUnit){ 1e-9, "ns" }
                       : top < 1e-3 ? (TickUnit){ 1e-6, "us" }
                       : top < 1    ? (TickUnit){ 1e-3, "ms" }
                                    : (TickUnit){ 1, "s" };
        if (strcmp(what, "bytes") == 0)
                return top < 1 << 20   ? (TickUnit){ 1 << 10, "KiB" }
                       : top < 1 << 30 ? (TickUnit){ 1 << 20, "MiB" }
                                       : (TickUnit){ 1 << 30, "GiB" };
        return top >= 1e9   ? (TickUnit){ 1e9, "G" }
               : top >= 1e6 ? (TickUnit){ 1e6, "M" }
               : top >= 1e4 ? (TickUnit){ 1e3, "k" }
                            : (TickUnit){ 1, "" };
}

void axis_ticks(FILE *f, const Axis *axis, bool vertical, double at_px, TickKind kind) {
        if (vertical)
                fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n",
                        at_px, axis->a, at_px, axis->b);
        else
                fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n",
                        axis->a, at_px, axis->b, at_px);
        if (!(axis->hi > axis->lo))
                return;
        TickUnit unit = tick_unit(axis, kind);
        double step = nice_step((axis->hi - axis->lo) / unit.size, vertical ? 5 : 4);
        int decimals = step >= 1 ? 0 : (int) ceil(-log10(step) - 1e-9);
        /* Glued to the number ("1.05x", "12k"), or a word apart ("12 ms"). */
        bool glued =
                !kind.metric || (!kind.unit && (strcmp(unit.name, "k") == 0 || strcmp(unit.name, "M") == 0 ||
                                                strcmp(unit.name, "G") == 0));
        const char *space = glued || !unit.name[0] ? "" : " ";
        for (double v = ceil(axis->lo / unit.size / step) * step; v <= axis->hi / unit.size + step * 1e-9;
             v += step) {
                double p = axis_at(axis, v * unit.size);
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
                char label[64];
                snprintf(label, sizeof(label), "%.*f%s%s", decimals, fabs(v) < step * 1e-9 ? 0 : v, space,
                         unit.name);
                html_text(f, label);
                fputs("</text>\n", f);
        }
}

void axis_title(FILE *f, const Axis *axis, bool vertical, double at_px, const char *title) {
        if (vertical) /* above the axis, read across: a long title turned along it would not fit */
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\">", at_px,
                        fmin(axis->a, axis->b) - 12);
        else
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (axis->a + axis->b) / 2,
                        at_px);
        html_text(f, title);
        fputs("</text>\n", f);
}

void svg_start(FILE *f, double width, double height) {
        fprintf(f,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
                width, height, width, height);
}

void figure_start(FILE *f, const char *caption, double width, double height) {
        fputs("<figure><figcaption>", f);
        html_text(f, caption);
        fputs("</figcaption>\n", f);
        svg_start(f, width, height);
}

void figure_end(FILE *f) {
        fputs("</svg></figure>\n", f);
}

/* The class of a verdict's colour, or NULL for none. */
static const char *verdict_class(Verdict v, bool higher_is_better) {
        if (v == (higher_is_better ? VERDICT_LOWER : VERDICT_HIGHER))
                return "worse";
        if (v == (higher_is_better ? VERDICT_HIGHER : VERDICT_LOWER))
                return "better";
        return v == VERDICT_SAME ? "same" : NULL;
}

static void verdict_in(FILE *f, const char *element, Verdict v, bool higher_is_better, const char *text) {
        const char *class = verdict_class(v, higher_is_better);
        if (class)
                fprintf(f, "<%s class=\"%s\">", element, class);
        html_text(f, text);
        if (class)
                fprintf(f, "</%s>", element);
}

void html_verdict(FILE *f, Verdict v, bool higher_is_better, const char *text) {
        verdict_in(f, "span", v, higher_is_better, text);
}

void svg_verdict(FILE *f, Verdict v, bool higher_is_better, const char *text) {
        verdict_in(f, "tspan", v, higher_is_better, text);
}

void html_table(FILE *f, const json_t *table) {
        const json_t *columns = json_object_get(table, "columns"), *rows = json_object_get(table, "rows"),
                     *column, *row;
        size_t i;
        fputs("<div class=\"scroll\"><table>\n<tr>", f);
        json_array_foreach(columns, i, column) {
                fputs("<th>", f);
                html_text(f, json_string_value(column));
                fputs("</th>", f);
        }
        fputs("</tr>\n", f);
        json_array_foreach(rows, i, row) {
                fputs("<tr>", f);
                size_t k;
                json_array_foreach(columns, k, column) {
                        const json_t *value = json_object_get(row, json_string_value(column));
                        if (json_is_number(value))
                                fprintf(f, "<td class=\"num\">%.*g</td>", json_is_integer(value) ? 19 : 4,
                                        json_number_value(value));
                        else {
                                fputs("<td>", f);
                                html_text(f, json_is_string(value) ? json_string_value(value) : "");
                                fputs("</td>", f);
                        }
                }
                fputs("</tr>\n", f);
        }
        fputs("</table></div>\n", f);
}

void html_details_table(FILE *f, const char *summary, const json_t *table) {
        fputs("<details><summary>", f);
        html_text(f, summary);
        fputs("</summary>", f);
        html_table(f, table);
        fputs("</details>\n", f);
}
