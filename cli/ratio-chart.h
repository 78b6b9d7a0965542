/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "db/query.h"
#include "stats/compare.h"

/*
 * Ratios to a baseline, grouped, as a figure and as a table: the report's ratios per cell and
 * variant, a fleet's per machine, a suite's per workload and allocator. Each row has its
 * interval (whiskers) and its verdict, in words and in its bar's colour; a group's heading sits
 * on a row of its own; a variant not compared keeps its row, saying why.
 */

typedef struct RatioRow {
        const char *group; /* a heading row above the rows of a new group */
        const char *name;
        double ratio, lo, hi; /* ratio NAN: not compared (why says why); lo, hi: NAN, 0 or unbounded
                               * when there is no interval */
        Verdict verdict;
        const char *verdict_text;
        bool higher_is_better;
        char why[80]; /* "not compared: EXIT 3", when ratio is NAN */
} RatioRow;

/* A row of a run's comparison k (its ratio, interval and verdict in the run's words). */
RatioRow ratio_row(const Report *rep, const Comparison *k, const char *group, const char *name);

/* A row of a variant not compared (excluded, failed): "not compared: " and mark ("EXIT 3",
 * "PRELOAD-INEFFECTIVE"). */
RatioRow ratio_row_missing(const char *group, const char *name, const char *mark);

/* The rows as bars from 0 (normalised, as papers print them) or as points, against a dashed
 * line at 1, with x_title under the axis. */
void ratio_chart(FILE *f, const char *caption, const char *x_title, const RatioRow *rows, size_t n,
                 bool bars);

/* The same numbers as a table, exact values in data-value attributes (17 digits), in a closed
 * <details> beneath the chart. */
void ratio_table(FILE *f, const char *group_title, const char *name_title, const RatioRow *rows, size_t n);
