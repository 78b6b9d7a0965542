/* SPDX-License-Identifier: MIT */
/*
 * What a report's values say: outliers, each variant against its cell's baseline, the verdicts
 * of a family of comparisons under its correction, the A/A noise floor, the time/memory Pareto
 * front.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/query-internal.h"
#include "stats/sampleset.h"
#include "util/cleanup.h"

/* Per cell, the measured variants that no other one beats in both the metric (or wall time) and
 * memory. */
int query_mark_pareto_front(Report *rep) {
        rep->front_by_metric =
                strcmp(rep->run.metric, "wall") != 0 && strcmp(rep->run.metric, "maxrss") != 0;
        size_t n = rep->n_variants;
        _cleanup_free_ double *cost = calloc(n ? n : 1, sizeof(double)),
                              *rss = calloc(n ? n : 1, sizeof(double));
        _cleanup_free_ bool *eligible = calloc(n ? n : 1, sizeof(bool)),
                            *front = calloc(n ? n : 1, sizeof(bool));
        if (!cost || !rss || !eligible || !front)
                return -ENOMEM;
        for (size_t c = 0; c < rep->n_cells; c++) {
                ReportEntry *cell = &rep->entries[c * n];
                for (size_t v = 0; v < n; v++) {
                        const ReportEntry *e = &cell[v];
                        eligible[v] = e->has_tradeoff && !e->excluded_reason &&
                                      (!rep->front_by_metric || (e->has_stats && e->stats.n > 0));
                        cost[v] = !rep->front_by_metric       ? e->wall_median
                                  : rep->run.higher_is_better ? -e->stats.median /* less is worse */
                                                              : e->stats.median;
                        rss[v] = cell[v].maxrss_median;
                }
                sampleset_pareto_front(cost, rss, eligible, n, front);
                for (size_t v = 0; v < n; v++)
                        cell[v].pareto = front[v];
        }
        return 0;
}

static SampleSet entry_samples(ReportEntry *e) {
        return (SampleSet){ .values = e->values, .rounds = e->rounds, .n = e->n_values };
}

/* Whether variant v of cell c is compared with its cell's baseline: both measured. */
static bool compared(const Report *rep, size_t c, size_t v) {
        const ReportEntry *base = &rep->entries[c * rep->n_variants + rep->baseline];
        const ReportEntry *e = &rep->entries[c * rep->n_variants + v];
        return v != rep->baseline && !e->excluded_reason && !base->excluded_reason && e->n_values > 0 &&
               base->n_values > 0;
}

/* The comparisons of a run, for compare_family(): each entry and its cell's baseline. */
/* One comparison of a family: a variant's entry, its cell's baseline, and the run's report. */
typedef struct FamilyMember {
        ReportEntry *entry, *base;
        const Report *rep;
} FamilyMember;

/* Member i of the FamilyMember array userdata against its baseline under rule, by the design its
 * run chose: pairing follows the run's own number of comparisons (rep->n_tests), whatever family
 * the member is decided in. */
static int judge_member(void *userdata, size_t i, const CompareRule *rule, Comparison *ret) {
        const FamilyMember *m = &((const FamilyMember *) userdata)[i];
        CompareRule own = *rule;
        own.tests = m->rep->n_tests;
        SampleSet b = entry_samples(m->base), x = entry_samples(m->entry);
        return sampleset_compare(&b, &x, sampleset_design(m->rep->order), &own, ret);
}

int query_decide_family(Report *const *reports, size_t n) {
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
                total += reports[i]->n_cells * reports[i]->n_variants;
        _cleanup_free_ FamilyMember *members = calloc(total + 1, sizeof(FamilyMember));
        _cleanup_free_ Comparison **comparisons = calloc(total + 1, sizeof(Comparison *));
        if (!members || !comparisons)
                return -ENOMEM;
        size_t k = 0, tested = 0;
        for (size_t i = 0; i < n; i++) {
                Report *rep = reports[i];
                for (size_t c = 0; c < rep->n_cells; c++)
                        for (size_t v = 0; v < rep->n_variants; v++) {
                                ReportEntry *e = &rep->entries[c * rep->n_variants + v];
                                if (!e->has_comparison)
                                        continue;
                                members[k] = (FamilyMember){
                                        e, &rep->entries[c * rep->n_variants + rep->baseline], rep
                                };
                                comparisons[k++] = &e->comparison;
                                tested += e->comparison.test != COMPARE_TEST_NONE; /* blocked: no test */
                        }
        }
        const Report *first = reports[0];
        CompareRule rule = { .min_effect = first->min_effect,
                             .alpha = first->alpha,
                             .correction = first->correction,
                             .tests = tested };
        int r = compare_family(comparisons, k, &rule, judge_member, members);
        for (size_t i = 0; i < n; i++) { /* after: the members' designs read each run's own */
                reports[i]->n_tests = tested;
                reports[i]->interval_alpha = rule.interval_alpha;
        }
        return r;
}

/* Each measured variant against its cell's measured baseline (stats/sampleset.h), every
 * comparison of the run one family whose verdicts share alpha by the run's correction. */
static int judge_entries(Report *rep) {
        size_t n = 0;
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++)
                        n += compared(rep, c, v);
        /* The family's size sets the level each test must reach, and with it the design. */
        rep->n_tests = n;
        CompareRule rule = { .min_effect = rep->min_effect,
                             .alpha = rep->alpha,
                             .correction = rep->correction };
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++) {
                        if (!compared(rep, c, v))
                                continue;
                        FamilyMember m = { &rep->entries[c * rep->n_variants + v],
                                           &rep->entries[c * rep->n_variants + rep->baseline], rep };
                        int r = judge_member(&m, 0, &rule, &m.entry->comparison);
                        if (r == -ENOMEM)
                                return r;
                        m.entry->has_comparison = r == 0;
                }
        return query_decide_family(&rep, 1);
}

/* Outliers of every entry, then (compare_variants) each measured variant against its cell's measured
 * baseline (judge_entries). Nothing in it is random: showing a run twice gives the same figures. */
int query_analyse_entries(Report *rep, bool compare_variants) {
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++) {
                ReportEntry *e = &rep->entries[i];
                /* Statistics never stored (the run failed before the cell's end, on a full disk
                 * say): computed from its samples, as the recorder does, rather than shown as
                 * none while its samples count in the verdicts. */
                if (!e->has_stats && e->n_values > 0) {
                        _cleanup_free_ double *copy = malloc(e->n_values * sizeof(double));
                        if (!copy)
                                return -ENOMEM;
                        memcpy(copy, e->values, e->n_values * sizeof(double));
                        if (stats_compute(copy, e->n_values, &e->stats) < 0)
                                return -ENOMEM;
                        e->has_stats = true;
                }
                SampleSet set = entry_samples(e);
                int n = sampleset_outliers(&set, rep->exclude_outliers, &e->stats);
                if (n < 0)
                        return n;
                e->n_outliers = (size_t) n;
                e->n_values = set.n;
                if (e->n_values > 0) {
                        int r = sampleset_median_interval(&set, &e->median_lo, &e->median_hi);
                        if (r < 0)
                                return r;
                        e->has_median_ci = true;
                }
        }
        if (compare_variants)
                return judge_entries(rep);
        return 0;
}

double query_noise_floor(const Report *rep, size_t c) {
        if (rep->aa_variant == SIZE_MAX)
                return NAN;
        const ReportEntry *e = &rep->entries[c * rep->n_variants + rep->aa_variant];
        if (!e->has_comparison)
                return NAN;
        double floor = fmax(e->comparison.hi - 1, 1 - e->comparison.lo);
        return isfinite(floor) ? floor : NAN;
}
