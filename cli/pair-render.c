/* SPDX-License-Identifier: MIT */
/*
 * A comparison of two runs (db/pair.h) as `compare` and `run --compare-to` print it: per cell and
 * variant, the change of the metric from A to B with its interval and verdict, what keeps the
 * runs from being comparable, and the gate's exit status.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/pair-render.h"
#include "cli/render.h"
#include "db/pair.h"
#include "stats/changepoint.h"
#include "stats/sampleset.h"
#include "util/cleanup.h"

/* The raw figures, one row per shared cell and variant (csv, json, markdown). */
static json_t *changes_table(const RunPair *p) {
        static const char *const names[] = {
                "run_a",
                "run_b",
                "cell",
                "variant",
                "metric",
                "n_a",
                "median_a",
                "n_b",
                "median_b",
                "ratio",
                "ratio_ci_low",
                "ratio_ci_high",
                "p_value",
                "test",
                "verdict",
                "comparable",
                "p_adjusted",
                "detectable_change",
                "ratio_to_baseline_a",
                "ratio_to_baseline_b",
        };
        json_t *table = render_table_new(names, ELEMENTSOF(names));
        bool time = render_time_metric(p->a->run.metric), comparable = p->differences[0] == NULL;
        for (size_t i = 0; i < p->n_changes; i++) {
                const PairChange *x = &p->changes[i];
                const ReportEntry *ea = &p->a->entries[x->cell_a * p->a->n_variants + x->variant_a];
                const ReportEntry *eb = &p->b->entries[x->cell_b * p->b->n_variants + x->variant_b];
                const Comparison *c = &x->comparison;
                bool k = x->has_comparison;
                json_t *values[] = {
                        json_integer(p->a->run.id),
                        json_integer(p->b->run.id),
                        json_string(p->a->cell_labels[x->cell_a]),
                        json_string(p->a->variant_names[x->variant_a]),
                        json_string(p->a->run.metric),
                        json_integer((json_int_t) ea->n_values),
                        ea->n_values ? json_real(ea->stats.median) : json_null(),
                        json_integer((json_int_t) eb->n_values),
                        eb->n_values ? json_real(eb->stats.median) : json_null(),
                        k ? json_real(c->ratio) : json_null(),
                        k ? render_json_number(c->lo) : json_null(),
                        k ? render_json_number(c->hi) : json_null(),
                        k ? render_json_number(c->p) : json_null(),
                        k ? json_string(comparison_test(c)) : json_null(),
                        k ? json_string(verdict_word(c->verdict, time)) : json_null(),
                        json_boolean(comparable),
                        k ? render_json_number(c->p_adjusted) : json_null(),
                        k ? render_json_number(c->detectable) : json_null(),
                        p->relative ? render_json_number(x->value_a) : json_null(),
                        p->relative ? render_json_number(x->value_b) : json_null(),
                };
                render_table_add_row(table, values, ELEMENTSOF(values));
        }
        return table;
}

/* A row's verdict for people (render_verdict_text). */
static const char *verdict_text(const json_t *row, char *buf, size_t size) {
        const char *word = json_string_value(json_object_get(row, "verdict"));
        const json_t *detectable = json_object_get(row, "detectable_change");
        if (strcmp(word, "inconclusive") != 0)
                snprintf(buf, size, "%s", word);
        else
                render_verdict_text(VERDICT_INCONCLUSIVE,
                                    json_is_real(detectable) ? json_real_value(detectable) : INFINITY, false,
                                    buf, size);
        return buf;
}

/* The same changes for people: values with units, "1.03x [1.01, 1.05] slower". */
static json_t *display_table(const RunPair *p, const json_t *changes) {
        char a[64], b[64];
        snprintf(a, sizeof(a), "run %lld", (long long) p->a->run.id);
        snprintf(b, sizeof(b), "run %lld", (long long) p->b->run.id);
        json_t *rows = json_array();
        size_t i;
        json_t *row;
        json_array_foreach(json_object_get(changes, "rows"), i, row) {
                char va[64] = "-", vb[64] = "-", change[160] = "-", word[64];
                const json_t *ma = json_object_get(row, p->relative ? "ratio_to_baseline_a" : "median_a"),
                             *mb = json_object_get(row, p->relative ? "ratio_to_baseline_b" : "median_b");
                if (json_is_real(ma) && p->relative)
                        snprintf(va, sizeof(va), "%.3fx", json_real_value(ma));
                else if (json_is_real(ma))
                        render_run_value(&p->a->run, json_real_value(ma), va, sizeof(va));
                if (json_is_real(mb) && p->relative)
                        snprintf(vb, sizeof(vb), "%.3fx", json_real_value(mb));
                else if (json_is_real(mb))
                        render_run_value(&p->a->run, json_real_value(mb), vb, sizeof(vb));
                if (json_is_real(json_object_get(row, "ratio")))
                        snprintf(change, sizeof(change), "%.2fx [%.2f, %.2f] %s",
                                 json_real_value(json_object_get(row, "ratio")),
                                 json_real_value(json_object_get(row, "ratio_ci_low")),
                                 json_real_value(json_object_get(row, "ratio_ci_high")),
                                 verdict_text(row, word, sizeof(word)));
                json_array_append_new(rows, json_pack("{s:O, s:O, s:s, s:s, s:s}", "cell",
                                                      json_object_get(row, "cell"), "variant",
                                                      json_object_get(row, "variant"), a, va, b, vb,
                                                      "change", change));
        }
        return json_pack("{s:[s, s, s, s, s], s:o, s:s}", "columns", "cell", "variant", a, b, "change",
                         "rows", rows, "colour_column", "change");
}

/* The variants built from source at other revisions: what the comparison is of. */
static void print_revisions(FILE *f, const RunPair *p, const char *bullet) {
        if (!p->revisions || !p->revisions[0])
                return;
        fprintf(f, "%sbuilt from source at other revisions (what is compared):\n", bullet);
        for (char **r = p->revisions; *r; r++)
                fprintf(f, "%s  %s\n", bullet, *r);
}

static void print_differences(FILE *f, const RunPair *p, const char *bullet) {
        bool unrecorded = render_machine_unrecorded(p->a) || render_machine_unrecorded(p->b);
        if (!p->differences[0] && unrecorded) {
                fprintf(f,
                        "%scomparable as far as recorded: same spec, cells and variants; the host is where "
                        "each run was imported and no allocator file was recorded (hyperfine records "
                        "neither), so whether they ran on one machine with the same files is not known\n",
                        bullet);
                return;
        }
        /* An import (pyperf's) records its machine, but no allocator file. */
        bool imported = render_report_imported(p->a) || render_report_imported(p->b);
        bool rebuilt = p->revisions && p->revisions[0];
        if (!p->differences[0]) {
                fprintf(f, "%scomparable: same host fingerprint, %s, cells and variants%s\n", bullet,
                        imported  ? "spec"
                        : rebuilt ? "allocator builds, spec (but for the revisions built)"
                                  : "allocator files, spec",
                        imported ? " (an import records no allocator file)" : "");
                print_revisions(f, p, bullet);
                return;
        }
        fprintf(f, "%sNOT COMPARABLE: runs %lld and %lld differ in\n", bullet, (long long) p->a->run.id,
                (long long) p->b->run.id);
        bool experiments = false;
        for (char **d = p->differences; *d; d++) {
                fprintf(f, "%s  %s\n", bullet, *d);
                experiments |= strncmp(*d, "experiment: ", 12) == 0;
        }
        print_revisions(f, p, bullet);
        /* Each imported file names its own experiment unless told one. */
        bool both_imported = render_report_imported(p->a) && render_report_imported(p->b);
        if (experiments && both_imported)
                fprintf(f,
                        "%s  (files of the same commands compare when imported into one experiment: "
                        "alloclab import FILE --experiment NAME)\n",
                        bullet);
}

/* Run B significantly worse than run A beyond min_effect: slower, or more of a cost; less of a
 * metric where more is better (run A's direction). */
static bool is_regression(const RunPair *p, const PairChange *x) {
        return x->has_comparison &&
               x->comparison.verdict == (p->a->run.higher_is_better ? VERDICT_LOWER : VERDICT_HIGHER);
}

int pair_usable(const char *command, const RunPair *p) {
        if (p->a->run.id == p->b->run.id) {
                cli_error(command, "run %lld against itself: give two different runs",
                          (long long) p->a->run.id);
                return EXIT_USAGE;
        }
        if (!p->relative)
                return EXIT_OK;
        if (p->a->n_variants < 2) {
                cli_error(command,
                          "--relative compares each variant's ratio to the baseline variant '%s' within "
                          "each run, "
                          "and run %lld has no other variant",
                          p->baseline, (long long) p->a->run.id);
                return EXIT_USAGE;
        }
        const Report *unpaired = sampleset_design(p->a->order) != SAMPLE_ROUNDS   ? p->a
                                 : sampleset_design(p->b->order) != SAMPLE_ROUNDS ? p->b
                                                                                  : NULL;
        if (unpaired) {
                cli_error(command,
                          "--relative compares the ratios of rounds measured side by side, and run %lld "
                          "was measured in %s order, without such rounds; measure interleaved",
                          (long long) unpaired->run.id, unpaired->order);
                return EXIT_USAGE;
        }
        return EXIT_OK;
}

/* Run B worse than run A by at least min_effect, yet not significantly: a change the size of a
 * regression that the runs cannot tell from noise (too few earlier runs for the spread, too few
 * samples). A gate must not call it "no regression". */
static bool is_unresolved(const RunPair *p, const PairChange *x) {
        if (!x->has_comparison || x->comparison.verdict != VERDICT_INCONCLUSIVE ||
            !(x->comparison.ratio > 0))
                return false;
        double worse = p->a->run.higher_is_better ? 1 / x->comparison.ratio : x->comparison.ratio;
        return worse >= 1 + p->a->min_effect;
}

size_t pair_unresolved(const RunPair *p) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_changes; i++)
                n += is_unresolved(p, &p->changes[i]);
        return n;
}

int pair_exit_status(const RunPair *p, bool fail_on_regression) {
        if (p->differences[0])
                return EXIT_NOT_COMPARABLE;
        if (!fail_on_regression)
                return EXIT_OK;
        /* A gate passes only what it could judge: a variant left unmeasured, or a change it cannot
         * tell from noise, is not "no regression". */
        return pair_regressions(p) > 0                            ? EXIT_REGRESSION
               : pair_uncompared(p) > 0 || pair_unresolved(p) > 0 ? EXIT_EXCLUDED
                                                                  : EXIT_OK;
}

size_t pair_uncompared(const RunPair *p) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_changes; i++)
                n += !p->changes[i].has_comparison;
        return n;
}

/* Which cells and variants were not compared, and why: excluded in a run, or not measured. */
static void print_uncompared(FILE *f, const RunPair *p, const char *bullet) {
        size_t n = pair_uncompared(p);
        if (n == 0)
                return;
        fprintf(f, "%snot compared, %zu of %zu:\n", bullet, n, p->n_changes);
        for (size_t i = 0; i < p->n_changes; i++) {
                const PairChange *x = &p->changes[i];
                if (x->has_comparison)
                        continue;
                const ReportEntry *ea = report_entry(p->a, x->cell_a, x->variant_a),
                                  *eb = report_entry(p->b, x->cell_b, x->variant_b);
                const Report *run = eb->excluded_reason || !ea->excluded_reason ? p->b : p->a;
                const ReportEntry *e = run == p->b ? eb : ea;
                if (e->excluded_reason)
                        fprintf(f, "%s  [%s] %s: excluded in run %lld (%s)\n", bullet,
                                p->a->cell_labels[x->cell_a], p->a->variant_names[x->variant_a],
                                (long long) run->run.id, e->excluded_reason);
                else
                        fprintf(f, "%s  [%s] %s: not measured in run %lld\n", bullet,
                                p->a->cell_labels[x->cell_a], p->a->variant_names[x->variant_a],
                                (long long) run->run.id);
        }
}

size_t pair_regressions(const RunPair *p) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_changes; i++)
                n += is_regression(p, &p->changes[i]);
        return n;
}

/* "[cell] variant 1.50x", with its interval if asked, for each change that `which` picks. */
static void print_changes(FILE *f, const RunPair *p, bool (*which)(const RunPair *, const PairChange *),
                          bool interval) {
        const char *sep = "";
        for (size_t i = 0; i < p->n_changes; i++) {
                const PairChange *x = &p->changes[i];
                if (!which(p, x))
                        continue;
                fprintf(f, "%s[%s] %s %.2fx", sep, p->a->cell_labels[x->cell_a],
                        p->a->variant_names[x->variant_a], x->comparison.ratio);
                if (interval)
                        fprintf(f, " [%.2f, %.2f]", x->comparison.lo, x->comparison.hi);
                sep = ", ";
        }
}

/* The gate's line: how many cells and variants got worse, and which. */
static void print_regressions(FILE *f, const RunPair *p, const char *bullet) {
        size_t n = pair_regressions(p);
        size_t compared = p->n_changes - pair_uncompared(p);
        size_t unresolved = pair_unresolved(p);
        if (n == 0 && unresolved > 0) {
                fprintf(f,
                        "%scannot tell: %zu of %zu %s worse in run %lld by at least %.0f%%, but not "
                        "significantly (",
                        bullet, unresolved, compared, unresolved == 1 ? "is" : "are",
                        (long long) p->b->run.id, 100 * p->a->min_effect);
                print_changes(f, p, is_unresolved, true);
                fputs("): more earlier runs to measure the spread, more samples, or --relative can tell\n",
                      f);
                return;
        }
        if (n == 0) {
                fprintf(f, "%sno regression: nothing is significantly worse in run %lld", bullet,
                        (long long) p->b->run.id);
                if (compared < p->n_changes)
                        fprintf(f, " among the %zu of %zu compared", compared, p->n_changes);
                fputc('\n', f);
                return;
        }
        fputs(bullet, f);
        if (*bullet) /* markdown: no terminal colours */
                fputs("REGRESSION", f);
        else
                render_alarm(f, "REGRESSION");
        fprintf(f, " in %zu of %zu%s: ", n, compared, compared < p->n_changes ? " compared" : "");
        print_changes(f, p, is_regression, false);
        fputc('\n', f);
}

/* How the changes were judged: runs as the unit, with the between-run spread and where it came
 * from, and the rule. */
static void print_method(FILE *f, const RunPair *p) {
        char rule[512], spread[256];
        render_verdict_rule(&p->rule, NULL, rule, sizeof(rule));
        if (p->aa_floor > 0)
                snprintf(spread, sizeof(spread),
                         "+-%.1f%%, from run %lld's A/A noise floor of +-%.1f%% (no earlier %s of this "
                         "experiment on %s to measure it from)",
                         100 * p->spread.spread, (long long) p->a->run.id, 100 * p->aa_floor,
                         p->relative ? "within-run ratios" : "runs", p->a->run.machine);
        else if (p->spread.runs == 0)
                snprintf(spread, sizeof(spread),
                         "+-%.1f%%, assumed: no earlier %s of this experiment on %s to measure it from",
                         100 * p->spread.spread, p->relative ? "within-run ratios" : "runs",
                         p->a->run.machine);
        else
                snprintf(spread, sizeof(spread),
                         "+-%.1f%%, measured over up to %zu earlier runs of this experiment on %s, pooled "
                         "with an "
                         "assumed +-%.0f%%",
                         100 * p->spread.spread, p->spread.runs, p->a->run.machine,
                         100 * CHANGEPOINT_PRIOR_SPREAD);
        long long a = p->a->run.id, b = p->b->run.id;
        double level = 1 - (p->rule.interval_alpha > 0 ? p->rule.interval_alpha : p->rule.alpha);
        fputc('\n', f);
        if (p->relative)
                fprintf(f,
                        "Change = (variant / %s within run %lld) / (variant / %s within run %lld), each the "
                        "median of its rounds' ratios, with its %.4g%% interval: what moved the whole "
                        "machine "
                        "falls out.\n"
                        "Runs are the unit: a within-run ratio moves from run to run by %s, or by the two "
                        "runs' own standard errors where they are larger; Student's t on the two ratios.\n",
                        p->baseline, b, p->baseline, a, 100 * level, spread);
        else
                fprintf(f,
                        "Change = median of run %lld / median of run %lld, with its %.4g%% interval.\n"
                        "Runs are the unit: a run's median moves from run to run by %s, or by the two runs' "
                        "own standard errors where they are larger; Student's t on the two medians.\n",
                        b, a, 100 * level, spread);
        fprintf(f, "Verdicts: %s (run %lld's rule; docs/analysis.md).\n", rule, a);
}

int pair_render(FILE *f, OutputFormat format, const RunPair *p) {
        json_auto_t *changes = changes_table(p);
        if (!changes)
                return -ENOMEM;
        if (format == FORMAT_CSV)
                return render_rows(f, format, changes);
        if (format == FORMAT_JSON) {
                json_auto_t *differences = json_array(), *revisions = json_array();
                for (char **d = p->differences; *d; d++)
                        json_array_append_new(differences, json_string(*d));
                for (char **d = p->revisions; d && *d; d++)
                        json_array_append_new(revisions, json_string(*d));
                json_auto_t *root = json_pack(
                        "{s:I, s:I, s:s, s:s, s:b, s:O, s:O, s:f, s:f, s:s, s:I, s:f, s:b, s:o, s:f, s:I, "
                        "s:o, "
                        "s:I, s:I, s:O}",
                        "run_a", (json_int_t) p->a->run.id, "run_b", (json_int_t) p->b->run.id, "experiment",
                        p->a->run.experiment, "metric", p->a->run.metric, "comparable",
                        p->differences[0] == NULL, "differences", differences, "revisions", revisions,
                        "min_effect", p->a->min_effect, "alpha", p->a->alpha, "correction",
                        correction_to_string(p->rule.correction), "tests", (json_int_t) p->rule.tests,
                        "interval_level",
                        1 - (p->rule.interval_alpha > 0 ? p->rule.interval_alpha : p->rule.alpha),
                        "relative", p->relative, "baseline", render_json_text(p->baseline),
                        "between_run_spread", p->spread.spread, "spread_runs", (json_int_t) p->spread.runs,
                        "spread_aa_floor", p->aa_floor > 0 ? json_real(p->aa_floor) : json_null(),
                        "regressions", (json_int_t) pair_regressions(p), "not_compared",
                        (json_int_t) pair_uncompared(p), "changes", json_object_get(changes, "rows"));
                /* Which verdict is the worse one: a consumer tells a regression from "lower"; and the
                 * changes the gate could not tell from noise. */
                if (root &&
                    (json_object_set_new(root, "cannot_tell",
                                         json_integer((json_int_t) pair_unresolved(p))) < 0 ||
                     json_object_set_new(root, "metric_better",
                                         json_string(p->a->run.higher_is_better ? "higher" : "lower")) < 0 ||
                     json_object_set_new(root, "metric_unit", render_json_text(p->a->run.metric_unit)) < 0))
                        return -ENOMEM;
                int r = root ? json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
                fputc('\n', f);
                return r < 0 || ferror(f) ? -EIO : 0;
        }
        bool markdown = format == FORMAT_MARKDOWN;
        const char *bullet = markdown ? "- " : "!! ";
        fprintf(f, "%s run %lld (%s) -> run %lld (%s), experiment %s, metric %s\n",
                markdown ? "###" : "compare:", (long long) p->a->run.id, p->a->run.started_at,
                (long long) p->b->run.id, p->b->run.started_at, p->a->run.experiment, p->a->run.metric);
        for (const Report *const *r = (const Report *const[]){ p->a, p->b, NULL }; *r; r++)
                if ((*r)->run.pruned_at)
                        fprintf(f, "%srun %lld was pruned %s: computed from the values kept of its metric\n",
                                markdown ? "- " : "", (long long) (*r)->run.id, (*r)->run.pruned_at);
        fputc('\n', f);
        print_differences(f, p, p->differences[0] ? bullet : markdown ? "- " : "");
        fputc('\n', f);
        json_auto_t *display = display_table(p, changes);
        int r = display ? render_rows(f, markdown ? FORMAT_MARKDOWN : FORMAT_TABLE, display) : -ENOMEM;
        if (r < 0)
                return r;
        print_method(f, p);
        fputc('\n', f);
        print_regressions(f, p, markdown ? "- " : "");
        print_uncompared(f, p, markdown ? "- " : "");
        if (p->differences[0]) {
                fputc('\n', f);
                print_differences(f, p, bullet);
        }
        return ferror(f) ? -EIO : 0;
}
