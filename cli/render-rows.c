/* SPDX-License-Identifier: MIT */
/*
 * Export tables (columns and row objects) written as CSV, JSON, markdown or aligned text: a
 * run's statistics (show --format csv, export --what stats), its samples, the run list.
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
                "p_adjusted",
                "detectable_change",
        };
        json_t *table = render_table_new(names, ELEMENTSOF(names));
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        const Stats *st = &e->stats;
                        const Comparison *cmp = &e->comparison;
                        bool s = e->has_stats, k = e->has_comparison;
                        double r = render_ratio(rep, c, v), floor = query_noise_floor(rep, c);
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
                                render_json_text(e->first_failure),
                                render_json_text(e->excluded_reason),
                                k ? render_json_number(cmp->lo) : json_null(),
                                k ? render_json_number(cmp->hi) : json_null(),
                                k ? render_json_number(cmp->p) : json_null(),
                                k ? json_string(comparison_test(cmp)) : json_null(),
                                k && cmp->test != COMPARE_TEST_NONE
                                        ? json_string(verdict_word(cmp->verdict, render_report_is_time(rep)))
                                        : json_null(),
                                json_integer((json_int_t) e->n_outliers),
                                json_string(render_outlier_policy(rep)),
                                e->has_tradeoff ? json_boolean(e->pareto) : json_null(),
                                isnan(floor) ? json_null() : json_real(floor),
                                isnan(floor) ? json_null()
                                             : json_boolean(render_below_noise_floor(rep, c, v)),
                                e->has_median_ci ? json_real(e->median_lo) : json_null(),
                                e->has_median_ci ? json_real(e->median_hi) : json_null(),
                                k ? render_json_number(cmp->p_adjusted) : json_null(),
                                k ? render_json_number(cmp->detectable) : json_null(),
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

/* An aligned text table: columns two spaces apart, null as "-"; the cells of the column the
 * table names as "colour_column" coloured as `show`'s (render_cell). */
static int render_rows_aligned(FILE *f, const json_t *table) {
        const json_t *columns = json_object_get(table, "columns"), *rows = json_object_get(table, "rows");
        const char *coloured = json_string_value(json_object_get(table, "colour_column"));
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
                        fputs(i ? "  " : "", f);
                        render_cell(f, json_is_null(value) ? "-" : text, i + 1 < n ? (int) width[i] : 0,
                                    coloured && strcmp(coloured, json_string_value(column)) == 0);
                }
                fputc('\n', f);
        }
        return ferror(f) ? -EIO : 0;
}

int render_rows(FILE *f, OutputFormat format, const json_t *table) {
        const json_t *columns = json_object_get(table, "columns"), *rows = json_object_get(table, "rows");
        if (format == FORMAT_TABLE)
                return render_rows_aligned(f, table);
        if (format == FORMAT_JSON) {
                int r = json_dumpf(rows, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
                fputc('\n', f);
                return r < 0 || ferror(f) ? -EIO : 0;
        }
        bool markdown = format == FORMAT_MARKDOWN;
        void (*field)(FILE *, const char *) = markdown ? output_markdown_cell : csv_field;
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

int render_report_csv(FILE *f, const Report *rep) {
        json_auto_t *table = render_stats_table(rep);
        return table ? render_rows(f, FORMAT_CSV, table) : -ENOMEM;
}

/* "done,pruned": a run whose measured samples alloclab prune dropped. */
static const char *status_pruned(const char *status, char *buf, size_t size) {
        snprintf(buf, size, "%s,pruned", status);
        return buf;
}

int render_runs(FILE *f, OutputFormat format, const RunSummary *runs, size_t n) {
        char pruned[64];
        if (format == FORMAT_TABLE) {
                fprintf(f, "%-6s %-24s %-12s %-25s %6s %8s %8s  %-16s %s\n", "RUN", "EXPERIMENT", "STATUS",
                        "STARTED", "CELLS", "VARIANTS", "FAILED", "MACHINE", "LABEL");
                for (size_t i = 0; i < n; i++)
                        fprintf(f, "%-6lld %-24s %-12s %-25s %6lld %8lld %8lld  %-16s %s%s%.12s\n",
                                (long long) runs[i].id, runs[i].experiment,
                                runs[i].pruned_at ? status_pruned(runs[i].status, pruned, sizeof(pruned))
                                                  : runs[i].status,
                                runs[i].started_at, (long long) runs[i].n_cells,
                                (long long) runs[i].n_variants, (long long) runs[i].n_failures,
                                runs[i].machine, runs[i].label ? runs[i].label : "",
                                runs[i].label && runs[i].commit ? " @"
                                : runs[i].commit                ? "@"
                                                                : "",
                                runs[i].commit ? runs[i].commit : "");
                return ferror(f) ? -EIO : 0;
        }
        static const char *const names[] = {
                "run_id", "uuid",     "experiment", "status",  "started_at", "ended_at",
                "cells",  "variants", "child_runs", "failed",  "excluded",   "host",
                "metric", "label",    "commit",     "machine", "pruned_at",
        };
        json_auto_t *table = render_table_new(names, ELEMENTSOF(names));
        for (size_t i = 0; i < n; i++) {
                const RunSummary *r = &runs[i];
                json_t *values[] = {
                        json_integer(r->id),
                        json_string(r->uuid),
                        json_string(r->experiment),
                        json_string(r->status),
                        json_string(r->started_at),
                        r->ended_at ? json_string(r->ended_at) : json_null(),
                        json_integer(r->n_cells),
                        json_integer(r->n_variants),
                        json_integer(r->n_runs),
                        json_integer(r->n_failures),
                        json_integer(r->n_excluded),
                        json_string(r->hostname),
                        json_string(r->metric),
                        render_json_text(r->label),
                        render_json_text(r->commit),
                        json_string(r->machine),
                        render_json_text(r->pruned_at),
                };
                render_table_add_row(table, values, ELEMENTSOF(values));
        }
        return table ? render_rows(f, format, table) : -ENOMEM;
}
