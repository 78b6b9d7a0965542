/* SPDX-License-Identifier: MIT */
/*
 * A Report as one JSON object (jansson): the run, its cells and variants with every figure the
 * table shows, in a form that loads straight into pandas or a spreadsheet.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/render-figures.h"
#include "cli/render.h"
#include "db/run-field.h"
#include "runner/probe-json.h"
#include "util/cleanup.h"

/* The JSON header's keys that are not a recorded field of the run (db/run-field.h): each is
 * shown after the key it names (a field's or another of these). */
typedef struct ComputedKey {
        const char *after, *key;
        json_t *(*value)(const Report *rep);
} ComputedKey;

/* What the Pareto front (entries' "pareto", variants' "pareto_cells") weighs against peak RSS. */
static json_t *pareto_metric(const Report *rep) {
        return json_string(rep->front_by_metric ? rep->run.metric : "wall");
}

static json_t *samples_auto(const Report *rep) {
        if (rep->samples_min <= 0)
                return json_null();
        return json_pack("{s:I, s:I}", "min", (json_int_t) rep->samples_min, "max",
                         (json_int_t) rep->samples);
}

/* The text's "Wall time flat" note, or null. */
static json_t *wall_flat_note(const Report *rep) {
        char *flat = render_flat_wall_note(rep);
        json_t *note = flat ? json_string(flat) : json_null();
        free(flat);
        return note;
}

static json_t *cells_nothing_verified(const Report *rep) {
        return json_integer((json_int_t) rep->n_cells_nothing_verified);
}

static json_t *baseline(const Report *rep) {
        return json_string(rep->variant_names[rep->baseline]);
}

static json_t *tests(const Report *rep) {
        return json_integer((json_int_t) rep->n_tests);
}

static json_t *interval_level(const Report *rep) {
        return render_report_has_verdicts(rep) ? json_real(render_interval_level(rep)) : json_null();
}

static json_t *verdicts(const Report *rep) {
        return json_boolean(render_report_has_verdicts(rep));
}

static json_t *outlier_policy(const Report *rep) {
        return json_string(render_outlier_policy(rep));
}

static json_t *aa_variant(const Report *rep) {
        return rep->aa_variant == SIZE_MAX ? json_null() : json_string(rep->variant_names[rep->aa_variant]);
}

static const ComputedKey computed_keys[] = {
        { "metric_better", "pareto_metric", pareto_metric },
        { "samples", "samples_auto", samples_auto },
        { "verify_ignore", "wall_flat_note", wall_flat_note },
        { "wall_flat_note", "cells_nothing_verified", cells_nothing_verified },
        { "cells_nothing_verified", "baseline", baseline },
        { "correction", "tests", tests },
        { "tests", "interval_level", interval_level },
        { "interval_level", "verdicts", verdicts },
        { "verdicts", "outlier_policy", outlier_policy },
        { "calibrate_command", "aa_variant", aa_variant },
};

/* Sets key (or, for "OBJECT.KEY", KEY in root's OBJECT) to value, then the computed keys after it. */
static void header_set(json_t *root, const Report *rep, const char *key, json_t *value) {
        const char *dot = strchr(key, '.');
        char object[32]; /* the key the computed keys follow, after this block too */
        if (dot) {
                snprintf(object, sizeof(object), "%.*s", (int) (dot - key), key);
                json_t *o = json_object_get(root, object);
                if (!o)
                        json_object_set_new(root, object, o = json_object());
                json_object_set_new(o, dot + 1, value);
                key = object;
        } else
                json_object_set_new(root, key, value);
        for (size_t i = 0; i < ELEMENTSOF(computed_keys); i++)
                if (strcmp(computed_keys[i].after, key) == 0)
                        header_set(root, rep, computed_keys[i].key, computed_keys[i].value(rep));
}

/* The run's recorded fields with a JSON key, in the table's order, and the computed keys. */
static json_t *report_header(const Report *rep) {
        json_t *root = json_object();
        for (size_t i = 0; root && i < n_run_fields; i++)
                if (run_fields[i].json_key)
                        header_set(root, rep, run_fields[i].json_key, run_field_json(&run_fields[i], rep));
        return root;
}

/* A variant's summary over the cells: verdicts, geometric mean, start-up. */
static json_t *variant_json(const Report *rep, size_t v) {
        VariantSummary s = render_summarize(rep, v);
        const RenderVerdicts *k = &s.verdicts;
        json_t *o =
                json_pack("{s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "name",
                          rep->variant_names[v], "allocator", rep->allocator_names[v], "version",
                          rep->allocator_versions[v][0] ? json_string(rep->allocator_versions[v])
                                                        : json_null(), /* an import records none */
                          "compared_cells", (json_int_t) k->compared, "lower_cells", (json_int_t) k->lower,
                          "higher_cells", (json_int_t) k->higher, "same_cells", (json_int_t) k->same,
                          "inconclusive_cells", (json_int_t) k->inconclusive, "tradeoff_cells",
                          (json_int_t) s.tradeoff_cells, "pareto_cells", (json_int_t) s.pareto_cells);
        json_object_set_new(o, "geomean", k->compared ? json_real(k->geomean) : json_null());
        json_object_set_new(o, "geomean_ci_low", k->compared ? render_json_number(k->lo) : json_null());
        json_object_set_new(o, "geomean_ci_high", k->compared ? render_json_number(k->hi) : json_null());
        const ReportStartup *u = rep->startup ? &rep->startup[v] : NULL;
        json_object_set_new(o, "startup",
                            u && u->n ? json_pack("{s:I, s:f, s:f, s:f}", "n", (json_int_t) u->n, "median",
                                                  u->median, "ci_low", u->lo, "ci_high", u->hi)
                                      : json_null());
        return o;
}

/* The entry's statistics, when it has any. */
static void stats_into(json_t *o, const ReportEntry *e) {
        if (!e->has_stats)
                return;
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

/* The entry against its cell's baseline, when both were measured. */
static void comparison_into(json_t *o, const Report *rep, const ReportEntry *e) {
        if (!e->has_comparison)
                return;
        const Comparison *k = &e->comparison;
        json_object_set_new(o, "ratio_ci_low", render_json_number(k->lo));
        json_object_set_new(o, "ratio_ci_high", render_json_number(k->hi));
        json_object_set_new(o, "p_value", render_json_number(k->p));
        json_object_set_new(o, "p_adjusted", render_json_number(k->p_adjusted));
        json_object_set_new(o, "detectable_change", render_json_number(k->detectable));
        json_object_set_new(o, "test", json_string(comparison_test(&e->comparison)));
        json_object_set_new(o, "verdict",
                            k->test == COMPARE_TEST_NONE
                                    ? json_null()
                                    : json_string(verdict_word(k->verdict, render_report_is_time(rep))));
}

/* A cell's result under one variant: statistics, comparison, memory, failures. */
static json_t *entry_json(const Report *rep, size_t c, size_t v) {
        const ReportEntry *e = report_entry(rep, c, v);
        json_t *o = json_object();
        stats_into(o, e);
        double r = render_ratio(rep, c, v);
        json_object_set_new(o, "ratio_to_baseline", r > 0 ? json_real(r) : json_null());
        comparison_into(o, rep, e);
        double net = render_minus_startup(rep, c, v);
        json_object_set_new(o, "median_minus_startup", isnan(net) ? json_null() : json_real(net));
        json_object_set_new(o, "outliers", json_integer((json_int_t) e->n_outliers));
        json_object_set_new(o, "pareto", e->has_tradeoff ? json_boolean(e->pareto) : json_null());
        /* Each block's usable size is at least what was asked for, so a usable
         * peak below the requested one missed blocks the allocator could not size
         * (tcmalloc's for the C++ runtime's start-up pool): not a figure. */
        bool usable_known = e->has_smoke_peaks && !(e->smoke_peak_requested > e->smoke_peak_live_bytes);
        json_object_set_new(o, "smoke_peak_live_bytes",
                            usable_known ? json_integer(e->smoke_peak_live_bytes) : json_null());
        json_object_set_new(o, "own_allocator_layer", render_json_text(e->own_layer_program));
        json_object_set_new(o, "smoke_allocator_calls",
                            e->has_smoke_calls ? json_integer(e->smoke_calls) : json_null());
        json_object_set_new(o, "smoke_peak_requested_bytes",
                            e->has_smoke_peaks && e->smoke_peak_requested >= 0
                                    ? json_integer(e->smoke_peak_requested)
                                    : json_null());
        json_t *memory = e->has_exit_memory ? probe_memory_json(e->exit_rss_bytes, e->exit_pss_anon_bytes,
                                                                e->exit_anon_huge_bytes)
                                            : json_null();
        if (e->has_exit_memory)
                json_object_set_new(memory, "processes", json_integer(e->exit_memory_processes));
        json_object_set_new(o, "smoke_memory_at_exit", memory);
        json_object_set_new(o, "smoke_allocator_stats",
                            e->has_allocator_figures ? allocator_figures_json(&e->allocator_figures)
                                                     : json_null());
        json_t *figures = e->n_memory_figures > 0 ? json_object() : json_null();
        for (size_t i = 0; i < e->n_memory_figures; i++)
                json_object_set_new(figures, e->memory_figures[i].metric,
                                    json_real(e->memory_figures[i].median));
        json_object_set_new(o, "memory_timeline", figures);
        double overhead = render_memory_overhead(rep, c, v);
        json_object_set_new(o, "memory_overhead", isnan(overhead) ? json_null() : json_real(overhead));
        double floor = query_noise_floor(rep, c);
        json_object_set_new(o, "noise_floor", isnan(floor) ? json_null() : json_real(floor));
        json_object_set_new(o, "below_noise_floor",
                            isnan(floor) ? json_null() : json_boolean(render_below_noise_floor(rep, c, v)));
        json_object_set_new(o, "noisy_samples", e->n_quiet_checked ? json_integer(e->n_noisy) : json_null());
        json_object_set_new(o, "failed_samples", json_integer(e->n_failed));
        json_object_set_new(o, "failed_measured_samples", json_integer(e->n_failed_samples));
        json_object_set_new(o, "first_failure", render_json_text(e->first_failure));
        json_object_set_new(o, "excluded", render_json_text(e->excluded_reason));
        return o;
}

int render_report_json(FILE *f, const Report *rep) {
        json_t *root = report_header(rep), *variants = json_array(), *cells = json_array(),
               *failures = json_array();
        for (size_t v = 0; v < rep->n_variants; v++)
                json_array_append_new(variants, variant_json(rep, v));
        for (size_t c = 0; c < rep->n_cells; c++) {
                json_t *results = json_object();
                for (size_t v = 0; v < rep->n_variants; v++) {
                        json_object_set_new(results, rep->variant_names[v], entry_json(rep, c, v));
                }
                json_array_append_new(
                        cells,
                        json_pack("{s:s, s:I, s:o, s:o, s:o}", "cell", rep->cell_labels[c], "samples",
                                  (json_int_t) render_cell_samples(rep, c), "precision_target_met",
                                  rep->samples_min > 0 ? json_boolean(!render_cell_missed_target(rep, c))
                                                       : json_null(), /* a fixed count has none */
                                  "peak_requested_bytes",
                                  render_cell_requested(rep, c) >= 0
                                          ? json_integer(render_cell_requested(rep, c))
                                          : json_null(),
                                  "results", results));
        }
        for (size_t i = 0; i < rep->n_failures_listed; i++) {
                const ReportFailure *x = &rep->failures[i];
                json_array_append_new(failures,
                                      json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:o}", "cell", x->cell,
                                                "variant", x->variant, "phase", x->phase, "round",
                                                (json_int_t) x->round + 1, "status", x->status, "detail",
                                                x->detail, "stderr", render_json_text(x->stderr_excerpt)));
        }
        json_object_set_new(root, "memory_timeline",
                            rep->timeline_source
                                    ? json_pack("{s:s, s:I, s:I}", "source", rep->timeline_source,
                                                "period_ns", (json_int_t) rep->timeline_period_min_ns,
                                                "longest_period_ns",
                                                (json_int_t) rep->timeline_period_max_ns)
                                    : json_null());
        json_object_set_new(root, "variants", variants);
        json_object_set_new(root, "cells", cells);
        json_object_set_new(root, "failures", failures);
        int r = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        fputc('\n', f);
        return r < 0 || ferror(f) ? -EIO : 0;
}
