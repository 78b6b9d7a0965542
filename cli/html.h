/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "stats/compare.h"

/*
 * The HTML and SVG vocabulary of `alloclab report` and `alloclab publish`: escaped text, pages
 * with one stylesheet, captioned figures, linear axes with round ticks, verdicts in colour and
 * export tables (cli/render.h) as HTML tables. Pages are well-formed XHTML (any XML parser
 * checks them), with inline SVG only: no scripts, no network.
 */

/* Variant colours: distinguishable, readable on white, and neither red nor green (verdicts'). */
const char *html_colour(size_t variant);

/* Text for XHTML: control characters but newlines and tabs as util/text.h shows them (XML allows
 * none of them, not even as references), then & < > " ' escaped. */
void html_text(FILE *f, const char *s);

/* The page's head (title, the stylesheet) and the <body>; nav: HTML written before the <h1>
 * (links back up the site), or NULL. */
void html_page_start(FILE *f, const char *title, const char *nav);
void html_page_end(FILE *f);

/* Pixels a label of n characters takes at the charts' 12 px sans-serif (an upper bound: 7 px a
 * character), so that labels are placed apart and never overlap. */
#define HTML_LABEL_PX(n) (7.0 * (double) (n))

/* A linear axis from lo to hi onto pixels a..b (b < a for a y axis: up is more). */
typedef struct Axis {
        double lo, hi, a, b;
} Axis;

/* The pixel of v. */
double axis_at(const Axis *x, double v);

/* [lo, hi] widened by 5% each side (a point at the edge stays visible) onto a..b. */
Axis axis_padded(double lo, double hi, double a, double b);

/* What a tick's number is: a metric's value ("wall", "maxrss", "reported:NAME"; unit: the spec's
 * unit for it, or NULL), or a ratio (metric NULL: "1.05x"). */
typedef struct TickKind {
        const char *metric;
        const char *unit;
} TickKind;

/* Labelled ticks at round numbers of one unit along an axis drawn at at_px: horizontal with
 * labels below, or vertical with labels to its left. "0 ms, 50 ms, 100 ms" and "10 s", never
 * "10.000 s" or "0.0 KiB" beside "50.0 MiB". */
void axis_ticks(FILE *f, const Axis *axis, bool vertical, double at_px, TickKind kind);

/* An axis title: centred under a horizontal axis at y = at_px, or for a vertical one above its
 * top, starting at x = at_px (the chart leaves 30 px above its y axis for it). */
void axis_title(FILE *f, const Axis *axis, bool vertical, double at_px, const char *title);

void svg_start(FILE *f, double width, double height);

/* A captioned figure holding one SVG; figure_end() closes both. */
void figure_start(FILE *f, const char *caption, double width, double height);
void figure_end(FILE *f);

/* A verdict's text in its colour class: worse (slower, more memory; with higher_is_better
 * lower) red, better green, same grey, inconclusive plain. */
void html_verdict(FILE *f, Verdict v, bool higher_is_better, const char *text);

/* The same inside an SVG <text>. */
void svg_verdict(FILE *f, Verdict v, bool higher_is_better, const char *text);

/* An export table (render_table_new form) as an HTML table; numbers right-aligned. */
void html_table(FILE *f, const json_t *table);

/* The same closed under a summary ("The chart's numbers"), beneath a chart. */
void html_details_table(FILE *f, const char *summary, const json_t *table);
