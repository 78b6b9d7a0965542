/* SPDX-License-Identifier: MIT */
/*
 * The summary of a suite invocation (cli/suite-summary.h): per workload each allocator's ratio to
 * the baseline with its verdicts, and per allocator its wins and geometric means, mimalloc-bench's
 * summary with intervals.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/render.h"
#include "cli/suite-summary.h"
#include "configs/spec.h"
#include "db/query.h"
#include "stats/compare.h"
#include "util/cleanup.h"

/* A variant in one workload: its verdicts across the cells, and its first failure or exclusion. */
typedef struct Standing {
        RenderVerdicts verdicts;
        char mark[48]; /* "" when none */
} Standing;

static Standing standing(const Report *rep, size_t v) {
        Standing s = { .verdicts = render_verdicts(rep, v) };
        for (size_t c = 0; c < rep->n_cells && !s.mark[0]; c++) {
                const ReportEntry *e = report_entry(rep, c, v);
                if (e->excluded_reason || e->n_failed > 0)
                        render_failure_mark(e, s.mark, sizeof(s.mark));
        }
        return s;
}

/* The suite is one family per measure: every comparison of every workload's run shares alpha by
 * the first run's correction (each run corrected only over its own cells would let a suite of 20
 * workloads make 20 times the false verdicts), its intervals computed again at the level where
 * they agree with the suite's decisions (query_decide_family). */
static int correct_across(SuiteRun *runs, size_t n, bool rss) {
        _cleanup_free_ Report **reports = calloc(n + 1, sizeof(Report *));
        if (!reports)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                reports[i] = rss ? runs[i].rss : runs[i].rep;
        return query_decide_family(reports, n);
}

int suite_summary_read(Store *s, const char *command, SuiteRun *runs, size_t *n) {
        size_t read = 0;
        int r = 0;
        for (size_t i = 0; i < *n; i++) {
                if (query_report(s, runs[i].run, NULL, &runs[i].rep) < 0 ||
                    query_report(s, runs[i].run, "maxrss", &runs[i].rss) < 0) {
                        cli_error(command, "cannot read run %lld back", (long long) runs[i].run);
                        runs[i].rep = query_report_free(runs[i].rep);
                        r = -EIO;
                        continue;
                }
                runs[read++] = runs[i];
        }
        *n = read;
        if (read > 0 && (correct_across(runs, read, false) < 0 || correct_across(runs, read, true) < 0))
                return -ENOMEM;
        return r;
}

void suite_summary_free(SuiteRun *runs, size_t n) {
        for (size_t i = 0; i < n; i++) {
                runs[i].rep = query_report_free(runs[i].rep);
                runs[i].rss = query_report_free(runs[i].rss);
        }
}

#define NO_WINNER SIZE_MAX

/* The workload's winner, only where the verdicts say so: the one variant significantly better
 * than the baseline in every cell, or of several such the best when its interval lies below
 * every other's; the baseline when every other variant is significantly worse in every cell;
 * else NO_WINNER (nothing significant, mixed verdicts, or a tie among the better ones). */
static size_t winner(const Report *rep) {
        RenderVerdicts k[SPEC_MAX_VARIANTS];
        size_t best = NO_WINNER, better = 0, worse = 0, others = 0;
        for (size_t v = 0; v < rep->n_variants && v < SPEC_MAX_VARIANTS; v++) {
                k[v] = render_verdicts(rep, v);
                if (v == rep->baseline || k[v].compared == 0)
                        continue;
                others++;
                worse += k[v].higher == k[v].compared;
                if (k[v].lower != k[v].compared)
                        continue;
                better++;
                if (best == NO_WINNER || k[v].geomean < k[best].geomean)
                        best = v;
        }
        if (better == 0)
                return others > 0 && worse == others ? rep->baseline : NO_WINNER;
        for (size_t v = 0; v < rep->n_variants && v < SPEC_MAX_VARIANTS; v++)
                if (v != best && v != rep->baseline && k[v].compared > 0 && k[v].lower == k[v].compared &&
                    !(k[best].hi < k[v].lo))
                        return NO_WINNER; /* another as good, as far as the intervals tell */
        return best;
}

/* The baseline's medians across the cells, as one geometric mean with its unit. */
/* The baseline's value across the cells into buf; false when it has none. */
static bool baseline_text(const Report *rep, char *buf, size_t size) {
        double logs = 0;
        size_t n = 0;
        for (size_t c = 0; c < rep->n_cells; c++) {
                const ReportEntry *e = report_entry(rep, c, rep->baseline);
                if (e->has_stats && e->stats.n > 0 && e->stats.median > 0) {
                        logs += log(e->stats.median);
                        n++;
                }
        }
        const char *metric = rep->run.metric;
        if (strncmp(metric, "reported:", 9) == 0)
                metric += 9;
        if (n > 0)
                render_value(metric, exp(logs / (double) n), buf, size);
        return n > 0;
}

/* Whether run i compares with another baseline than the suite's (its first allocator): a
 * workload that cannot run under glibc names its own (redis). */
static bool own_baseline(const SuiteRun *runs, size_t i) {
        return runs[i].rep->baseline != 0;
}

/* One row per workload: its metric, the baseline's value, every other variant's ratio and
 * verdict (and mark). */
json_t *suite_workload_table(const SuiteRun *runs, size_t n) {
        const Report *first = runs[0].rep;
        const char *names[2 + SPEC_MAX_VARIANTS] = { "workload", "metric" };
        for (size_t v = 0; v < first->n_variants; v++)
                names[2 + v] = first->variant_names[v];
        json_t *table = render_table_new(names, 2 + first->n_variants);
        for (size_t i = 0; i < n; i++) {
                const Report *rep = runs[i].rep;
                json_t *values[2 + SPEC_MAX_VARIANTS];
                size_t k = 0;
                values[k++] = json_string(runs[i].workload);
                values[k++] = own_baseline(runs, i) ? json_sprintf("%s against %s", rep->run.metric,
                                                                   rep->variant_names[rep->baseline])
                                                    : json_string(rep->run.metric);
                size_t best = winner(rep);
                for (size_t v = 0; v < rep->n_variants && v < first->n_variants; v++) {
                        char text[128];
                        Standing s = standing(rep, v);
                        const RenderVerdicts *verdicts = &s.verdicts;
                        bool value = v == rep->baseline && baseline_text(rep, text, sizeof(text));
                        /* Without figures, why: the baseline's failure too (a crash showed as "-"). */
                        if (!value && (v == rep->baseline || verdicts->compared == 0))
                                snprintf(text, sizeof(text), "%s", s.mark[0] ? s.mark : "-");
                        else if (!value)
                                snprintf(text, sizeof(text), "%.2fx %s%s%s", verdicts->geomean,
                                         render_standing_word(verdicts, render_time_metric(rep->run.metric)),
                                         s.mark[0] ? " !" : "", s.mark);
                        if (v == best && strlen(text) + 2 < sizeof(text))
                                strcat(text, " *");
                        values[k++] = json_string(text);
                }
                render_table_add_row(table, values, k);
        }
        return table;
}

/* A variant across the suite. */
typedef struct Overall {
        size_t wins, workloads, compared, lower, higher, same, inconclusive;
        size_t time_cells;
        double time_mean, time_lo, time_hi; /* when time_cells > 0 */
        size_t rss_cells;
        double rss_mean, rss_lo, rss_hi; /* peak RSS against the baseline, when rss_cells > 0 */
} Overall;

static Overall overall(const SuiteRun *runs, size_t n, size_t v) {
        Overall o = {};
        size_t cap = 0;
        for (size_t i = 0; i < n; i++)
                cap += runs[i].rep->n_cells;
        _cleanup_free_ const Comparison **times = calloc(cap + 1, sizeof(*times));
        _cleanup_free_ const Comparison **rss = calloc(cap + 1, sizeof(*rss));
        for (size_t i = 0; i < n && times && rss; i++) {
                const Report *rep = runs[i].rep;
                if (v >= rep->n_variants || own_baseline(runs, i))
                        continue;
                o.workloads++;
                o.wins += winner(rep) == v;
                bool time = render_time_metric(rep->run.metric);
                for (size_t c = 0; c < rep->n_cells; c++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        /* Peak RSS as the workload's bars give it: compared sample by sample. */
                        if (runs[i].rss && c < runs[i].rss->n_cells && v < runs[i].rss->n_variants &&
                            report_entry(runs[i].rss, c, v)->has_comparison)
                                rss[o.rss_cells++] = &report_entry(runs[i].rss, c, v)->comparison;
                        if (!e->has_comparison)
                                continue;
                        o.compared++;
                        o.lower += e->comparison.verdict == VERDICT_LOWER;
                        o.higher += e->comparison.verdict == VERDICT_HIGHER;
                        o.same += e->comparison.verdict == VERDICT_SAME;
                        o.inconclusive += e->comparison.verdict == VERDICT_INCONCLUSIVE;
                        if (time)
                                times[o.time_cells++] = &e->comparison;
                }
        }
        if (o.time_cells)
                compare_geomean(times, o.time_cells, render_interval_level(runs[0].rep), &o.time_mean,
                                &o.time_lo, &o.time_hi);
        if (o.rss_cells)
                compare_geomean(rss, o.rss_cells, render_interval_level(runs[0].rss), &o.rss_mean, &o.rss_lo,
                                &o.rss_hi);
        return o;
}

void suite_print_overall(FILE *f, const SuiteRun *runs, size_t n, const char *bullet) {
        const Report *first = runs[0].rep;
        char rule[512];
        CompareRule verdict_rule = render_rule(first);
        render_verdict_rule(&verdict_rule, first->order, rule, sizeof(rule));
        fprintf(f,
                "\nAcross the suite, against %s (%s, across the suite's workloads; * marks a "
                "workload's winner: significantly better than %s in every cell, and of several such the "
                "one whose interval lies below the others', or %s when all others are significantly "
                "worse everywhere; no * where no allocator is clearly best):\n",
                first->variant_names[first->baseline], rule, first->variant_names[first->baseline],
                first->variant_names[first->baseline]);
        for (size_t i = 0; i < n; i++)
                if (own_baseline(runs, i))
                        fprintf(f, "%s(%s, measured against %s, is left out)\n", bullet, runs[i].workload,
                                runs[i].rep->variant_names[runs[i].rep->baseline]);
        for (size_t v = 0; v < first->n_variants; v++) {
                Overall o = overall(runs, n, v);
                fprintf(f, "%s%s: wins %zu of %zu", bullet, first->variant_names[v], o.wins, o.workloads);
                if (v != first->baseline) {
                        fprintf(f,
                                "; better in %zu of %zu cells, worse in %zu, same in %zu, inconclusive in "
                                "%zu",
                                o.lower, o.compared, o.higher, o.same, o.inconclusive);
                        if (o.time_cells && o.time_lo > 0 && isfinite(o.time_hi))
                                fprintf(f, "; time geometric mean %.3fx [%.3f, %.3f]", o.time_mean,
                                        o.time_lo, o.time_hi);
                        else if (o.time_cells) /* as show says it: [0, inf] is no interval */
                                fprintf(f,
                                        "; time geometric mean %.3fx (no interval: a cell's own is "
                                        "unbounded)",
                                        o.time_mean);
                        if (o.rss_cells && o.rss_lo > 0 && isfinite(o.rss_hi))
                                fprintf(f, "; peak RSS %.3fx [%.3f, %.3f]", o.rss_mean, o.rss_lo, o.rss_hi);
                        else if (o.rss_cells)
                                fprintf(f, "; peak RSS %.3fx", o.rss_mean);
                }
                fputc('\n', f);
        }
        size_t undecided = 0, pooled = 0;
        for (size_t i = 0; i < n; i++)
                if (!own_baseline(runs, i)) {
                        pooled++;
                        undecided += winner(runs[i].rep) == NO_WINNER;
                }
        if (undecided > 0)
                fprintf(f, "%sno clear winner in %zu of %zu workloads\n", bullet, undecided, pooled);
}

/* A variant's peak RSS against the baseline's across the workload's cells: the geometric mean
 * of its ratios with its interval, and its verdict (null where no cell compared). */
static void rss_json(json_t *variant, const Report *rss, size_t v) {
        RenderVerdicts k = rss && v < rss->n_variants ? render_verdicts(rss, v) : (RenderVerdicts){};
        bool compared = k.compared > 0 && v != rss->baseline;
        json_object_set_new(variant, "peak_rss_ratio", compared ? json_real(k.geomean) : json_null());
        json_object_set_new(variant, "peak_rss_ci_low", compared ? render_json_number(k.lo) : json_null());
        json_object_set_new(variant, "peak_rss_ci_high", compared ? render_json_number(k.hi) : json_null());
        json_object_set_new(variant, "peak_rss_verdict",
                            compared ? json_string(render_standing_word(&k, false)) : json_null());
}

json_t *suite_summary_json(const SuiteRun *runs, size_t n) {
        const Report *first = runs[0].rep;
        json_t *workloads = json_array(), *allocators = json_array();
        for (size_t i = 0; i < n; i++) {
                const Report *rep = runs[i].rep;
                json_t *variants = json_array();
                for (size_t v = 0; v < rep->n_variants; v++) {
                        Standing s = standing(rep, v);
                        const RenderVerdicts *k = &s.verdicts;
                        json_t *variant = json_pack(
                                "{s:s, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:b, s:o}", "name",
                                rep->variant_names[v], "ratio",
                                k->compared ? json_real(k->geomean) : json_null(), "ratio_ci_low",
                                k->compared ? render_json_number(k->lo) : json_null(), "ratio_ci_high",
                                k->compared ? render_json_number(k->hi) : json_null(), "cells_compared",
                                (json_int_t) k->compared, "cells_better", (json_int_t) k->lower,
                                "cells_worse", (json_int_t) k->higher, "cells_same", (json_int_t) k->same,
                                "cells_inconclusive", (json_int_t) k->inconclusive, "winner",
                                winner(rep) == v, "failure", s.mark[0] ? json_string(s.mark) : json_null());
                        json_object_set_new(variant, "verdict",
                                            v == rep->baseline || !k->compared
                                                    ? json_null()
                                                    : json_string(render_standing_word(
                                                              k, render_time_metric(rep->run.metric))));
                        rss_json(variant, runs[i].rss, v);
                        json_array_append_new(variants, variant);
                }
                size_t best = winner(rep);
                json_array_append_new(
                        workloads,
                        json_pack("{s:s, s:s, s:I, s:s, s:o, s:o}", "workload", runs[i].workload,
                                  "experiment", rep->run.experiment, "run", (json_int_t) rep->run.id,
                                  "metric", rep->run.metric, "winner",
                                  best == NO_WINNER ? json_null() : json_string(rep->variant_names[best]),
                                  "variants", variants));
        }
        for (size_t v = 0; v < first->n_variants; v++) {
                Overall o = overall(runs, n, v);
                json_array_append_new(
                        allocators,
                        json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o}", "name",
                                  first->variant_names[v], "wins", (json_int_t) o.wins, "workloads",
                                  (json_int_t) o.workloads, "cells_compared", (json_int_t) o.compared,
                                  "cells_better", (json_int_t) o.lower, "cells_worse", (json_int_t) o.higher,
                                  "cells_same", (json_int_t) o.same, "cells_inconclusive",
                                  (json_int_t) o.inconclusive, "time_geomean",
                                  o.time_cells ? json_real(o.time_mean) : json_null(), "time_geomean_ci_low",
                                  o.time_cells ? render_json_number(o.time_lo) : json_null(),
                                  "time_geomean_ci_high",
                                  o.time_cells ? render_json_number(o.time_hi) : json_null(),
                                  "peak_rss_ratio", o.rss_cells ? json_real(o.rss_mean) : json_null()));
                json_t *added = json_array_get(allocators, json_array_size(allocators) - 1);
                json_object_set_new(added, "peak_rss_ci_low",
                                    o.rss_cells ? render_json_number(o.rss_lo) : json_null());
                json_object_set_new(added, "peak_rss_ci_high",
                                    o.rss_cells ? render_json_number(o.rss_hi) : json_null());
        }
        return json_pack("{s:s, s:o, s:o}", "baseline", first->variant_names[first->baseline], "workloads",
                         workloads, "allocators", allocators);
}
