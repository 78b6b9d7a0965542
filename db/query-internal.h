/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

#include "db/query.h"

/* What the query modules (db/query-*.c) share, and nothing else includes. */

/* The measured samples of run ?1 (phase 'sample', status 'ok') with their cell `c` and variant
 * `v`, as `samples s`, or as `sample_metrics m` of those samples. */
#define MEASURED_JOINS                                                                                      \
        " JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id"                          \
        " WHERE s.run_id = ?1 AND s.phase = 'sample' AND s.status = 'ok'"

#define MEASURED_SAMPLES " FROM samples s" MEASURED_JOINS

#define MEASURED_METRICS " FROM sample_metrics m JOIN samples s ON s.id = m.sample_id" MEASURED_JOINS

/* The tables a run's fields are read from (db/run-field.h), for runs.id = ?1. */
#define RUN_FROM                                                                                            \
        " FROM runs JOIN experiments ON experiments.id = runs.experiment_id"                                \
        " JOIN hosts ON hosts.id = runs.host_id"

/* Outliers of every entry, then (compare_variants) each measured variant against its cell's
 * measured baseline (query-verdicts.c). Returns 0 or -ENOMEM. */
int query_analyse_entries(Report *rep, bool compare_variants);

/* Per cell, the measured variants on the Pareto front of the metric (or wall time) and memory. */
int query_mark_pareto_front(Report *rep);
