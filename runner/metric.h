/* SPDX-License-Identifier: MIT */
#pragma once

#include "configs/spec.h"
#include "runner/run.h"

/*
 * The built-in metrics, listed once: a sample's value (the runner's statistics, samples: auto,
 * the primary metric) and the same over `samples s` in SQL (the report, history and resume read
 * them from the database). They carry the spec's names (spec_metric_to_string()), in its order,
 * which is their order in every per-cell statistics batch. Reported metrics (ALLOCLAB_METRICS_FD
 * or the spec's metrics:) are the program's own and not listed here.
 */
typedef struct BuiltinMetric {
        SpecMetric id;
        double (*of)(const Sample *s); /* in the metric's unit: seconds, bytes for maxrss, or a count */
        const char *sql;               /* the same over `samples s`; NULL where it was not measured */
        /* A counter (runner/counters.h): measured only where the machine could count it; else -1 */
        int counter;
} BuiltinMetric;

#define N_BUILTIN_METRICS ((size_t) SPEC_METRIC_REPORTED)
extern const BuiltinMetric builtin_metrics[N_BUILTIN_METRICS];

/* Whether s has m's value (a counter the machine could not count has none). */
bool builtin_metric_measured(const BuiltinMetric *m, const Sample *s);

/* The built-in metric of this name ("wall"), or NULL for any other. */
const BuiltinMetric *builtin_metric(const char *name);

static inline const char *builtin_metric_name(const BuiltinMetric *m) {
        return spec_metric_to_string(m->id);
}
