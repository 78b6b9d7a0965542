/* SPDX-License-Identifier: MIT */
/*
 * A Report as one JSON object (jansson): the run, its cells and variants with every figure the
 * table shows, in a form that loads straight into pandas or a spreadsheet.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>

#include "cli/render-figures.h"
#include "cli/render.h"

int render_report_json(FILE *f, const Report *rep) {
        json_t *root = json_object(), *variants = json_array(), *cells = json_array(),
               *failures = json_array();
        json_object_set_new(root, "run_id", json_integer(rep->run.id));
        json_object_set_new(root, "uuid", json_string(rep->run.uuid));
        json_object_set_new(root, "label", render_json_text(rep->run.label));
        json_object_set_new(root, "commit", render_json_text(rep->run.commit));
        json_object_set_new(root, "experiment", json_string(rep->run.experiment));
        json_object_set_new(root, "status", json_string(rep->run.status));
        json_object_set_new(root, "started_at", json_string(rep->run.started_at));
        json_object_set_new(root, "ended_at", render_json_text(rep->run.ended_at));
        json_object_set_new(root, "host",
                            json_pack("{s:s, s:s, s:s, s:I, s:s, s:s}", "hostname", rep->run.hostname,
                                      "cpu_model", rep->cpu_model, "kernel", rep->kernel, "cpus",
                                      (json_int_t) rep->cpus, "glibc", rep->glibc, "thp", rep->thp));
        json_object_set_new(root, "metric", json_string(rep->run.metric));
        json_object_set_new(root, "metric_unit", render_json_text(rep->run.metric_unit));
        json_object_set_new(root, "metric_better",
                            json_string(rep->run.higher_is_better ? "higher" : "lower"));
        /* What the Pareto front (entries' "pareto", variants' "pareto_cells") weighs against peak RSS. */
        json_object_set_new(root, "pareto_metric",
                            json_string(rep->front_by_metric ? rep->run.metric : "wall"));
        json_object_set_new(root, "samples", json_integer(rep->samples));
        json_object_set_new(root, "samples_auto",
                            rep->samples_min > 0
                                    ? json_pack("{s:I, s:I}", "min", (json_int_t) rep->samples_min, "max",
                                                (json_int_t) rep->samples)
                                    : json_null());
        json_object_set_new(root, "warmup", json_integer(rep->warmup));
        json_object_set_new(root, "order", json_string(rep->order));
        json_object_set_new(root, "seed",
                            render_report_imported(rep) ? json_null()
                                                        : json_integer((json_int_t) rep->seed));
        json_object_set_new(root, "verify", json_string(rep->verify));
        json_t *ignore = rep->verify_ignore ? json_loads(rep->verify_ignore, 0, NULL) : NULL;
        json_object_set_new(root, "verify_ignore", ignore ? ignore : json_array());
        char *flat = render_flat_wall_note(rep); /* the text's "Wall time flat" note, or null */
        json_object_set_new(root, "wall_flat_note", flat ? json_string(flat) : json_null());
        free(flat);
        json_object_set_new(root, "cells_nothing_verified",
                            json_integer((json_int_t) rep->n_cells_nothing_verified));
        json_object_set_new(root, "baseline", json_string(rep->variant_names[rep->baseline]));
        json_object_set_new(root, "min_effect", json_real(rep->min_effect));
        json_object_set_new(root, "alpha", json_real(rep->alpha));
        json_object_set_new(root, "correction", json_string(correction_to_string(rep->correction)));
        json_object_set_new(root, "tests", json_integer((json_int_t) rep->n_tests));
        json_object_set_new(root, "interval_level",
                            render_report_has_verdicts(rep) ? json_real(render_interval_level(rep))
                                                            : json_null());
        json_object_set_new(root, "verdicts", json_boolean(render_report_has_verdicts(rep)));
        json_object_set_new(root, "outlier_policy", json_string(render_outlier_policy(rep)));
        json_object_set_new(root, "cpus", render_json_text(rep->child_cpus));
        json_object_set_new(root, "runner_cpus", render_json_text(rep->runner_cpus));
        json_object_set_new(root, "cgroup", render_json_text(rep->cgroup));
        json_object_set_new(root, "cgroup_fallback", render_json_text(rep->cgroup_fallback));
        json_t *calibrate = rep->calibrate_command ? json_loads(rep->calibrate_command, 0, NULL) : NULL;
        json_object_set_new(root, "calibrate_command", calibrate ? calibrate : json_null());
        json_object_set_new(root, "aa_variant",
                            rep->aa_variant == SIZE_MAX ? json_null()
                                                        : json_string(rep->variant_names[rep->aa_variant]));
        json_object_set_new(root, "n_failures", json_integer(rep->run.n_failures));
        for (size_t v = 0; v < rep->n_variants; v++) {
                VariantSummary s = render_summarize(rep, v);
                const RenderVerdicts *k = &s.verdicts;
                json_t *o = json_pack(
                        "{s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "name", rep->variant_names[v],
                        "allocator", rep->allocator_names[v], "version",
                        rep->allocator_versions[v][0] ? json_string(rep->allocator_versions[v])
                                                      : json_null(), /* an import records none */
                        "compared_cells", (json_int_t) k->compared, "lower_cells", (json_int_t) k->lower,
                        "higher_cells", (json_int_t) k->higher, "same_cells", (json_int_t) k->same,
                        "inconclusive_cells", (json_int_t) k->inconclusive, "tradeoff_cells",
                        (json_int_t) s.tradeoff_cells, "pareto_cells", (json_int_t) s.pareto_cells);
                json_object_set_new(o, "geomean", k->compared ? json_real(k->geomean) : json_null());
                json_object_set_new(o, "geomean_ci_low",
                                    k->compared ? render_json_number(k->lo) : json_null());
                json_object_set_new(o, "geomean_ci_high",
                                    k->compared ? render_json_number(k->hi) : json_null());
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
                        double r = render_ratio(rep, c, v);
                        json_object_set_new(o, "ratio_to_baseline", r > 0 ? json_real(r) : json_null());
                        if (e->has_comparison) {
                                const Comparison *k = &e->comparison;
                                json_object_set_new(o, "ratio_ci_low", render_json_number(k->lo));
                                json_object_set_new(o, "ratio_ci_high", render_json_number(k->hi));
                                json_object_set_new(o, "p_value", render_json_number(k->p));
                                json_object_set_new(o, "p_adjusted", render_json_number(k->p_adjusted));
                                json_object_set_new(o, "detectable_change",
                                                    render_json_number(k->detectable));
                                json_object_set_new(o, "test", json_string(comparison_test(&e->comparison)));
                                json_object_set_new(
                                        o, "verdict",
                                        k->test == COMPARE_TEST_NONE
                                                ? json_null()
                                                : json_string(verdict_word(k->verdict,
                                                                           render_report_is_time(rep))));
                        }
                        double net = render_minus_startup(rep, c, v);
                        json_object_set_new(o, "median_minus_startup",
                                            isnan(net) ? json_null() : json_real(net));
                        json_object_set_new(o, "outliers", json_integer((json_int_t) e->n_outliers));
                        json_object_set_new(o, "pareto",
                                            e->has_tradeoff ? json_boolean(e->pareto) : json_null());
                        /* Each block's usable size is at least what was asked for, so a usable
                         * peak below the requested one missed blocks the allocator could not size
                         * (tcmalloc's for the C++ runtime's start-up pool): not a figure. */
                        bool usable_known =
                                e->has_smoke_peaks && !(e->smoke_peak_requested > e->smoke_peak_live_bytes);
                        json_object_set_new(o, "smoke_peak_live_bytes",
                                            usable_known ? json_integer(e->smoke_peak_live_bytes)
                                                         : json_null());
                        json_object_set_new(o, "own_allocator_layer",
                                            render_json_text(e->own_layer_program));
                        json_object_set_new(o, "smoke_allocator_calls",
                                            e->has_smoke_calls ? json_integer(e->smoke_calls) : json_null());
                        json_object_set_new(o, "smoke_peak_requested_bytes",
                                            e->has_smoke_peaks && e->smoke_peak_requested >= 0
                                                    ? json_integer(e->smoke_peak_requested)
                                                    : json_null());
                        double overhead = render_memory_overhead(rep, c, v);
                        json_object_set_new(o, "memory_overhead",
                                            isnan(overhead) ? json_null() : json_real(overhead));
                        double floor = query_noise_floor(rep, c);
                        json_object_set_new(o, "noise_floor", isnan(floor) ? json_null() : json_real(floor));
                        json_object_set_new(o, "below_noise_floor",
                                            isnan(floor)
                                                    ? json_null()
                                                    : json_boolean(render_below_noise_floor(rep, c, v)));
                        json_object_set_new(o, "noisy_samples",
                                            e->n_quiet_checked ? json_integer(e->n_noisy) : json_null());
                        json_object_set_new(o, "failed_samples", json_integer(e->n_failed));
                        json_object_set_new(o, "failed_measured_samples", json_integer(e->n_failed_samples));
                        json_object_set_new(o, "first_failure", render_json_text(e->first_failure));
                        json_object_set_new(o, "excluded", render_json_text(e->excluded_reason));
                        json_object_set_new(results, rep->variant_names[v], o);
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
        json_object_set_new(root, "variants", variants);
        json_object_set_new(root, "cells", cells);
        json_object_set_new(root, "failures", failures);
        int r = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        fputc('\n', f);
        return r < 0 || ferror(f) ? -EIO : 0;
}
