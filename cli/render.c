/* SPDX-License-Identifier: MIT */
/*
 * The renderer of a Report for each format. The renderers: render-text.c (table and markdown,
 * one grid), render-json.c, render-rows.c (CSV and the export tables), render-probe.c; what
 * they all show the same way is in render-figures.c.
 */
#include "cli/render-figures.h"
#include "cli/render.h"

RenderFunc render_for(OutputFormat format) {
        static const RenderFunc table[_FORMAT_MAX] = {
                [FORMAT_TABLE] = render_report_table,
                [FORMAT_MARKDOWN] = render_report_markdown,
                [FORMAT_CSV] = render_report_csv,
                [FORMAT_JSON] = render_report_json,
        };
        return (unsigned) format < _FORMAT_MAX ? table[format] : NULL;
}
