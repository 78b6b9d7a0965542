/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

#include "db/history.h"

/*
 * One series of an experiment's history as a figure (the report's History section and the site's
 * timelines): each run's median with its interval, in the order the runs ran, change points
 * marked by triangles (red, up: regression; green, down: improvement; hollow and dashed:
 * tentative), the x axis labelled by the runs' commits, labels or start times, and the chart's
 * numbers as a table beneath it.
 */

typedef struct HistoryFigure {
        const char *caption;
        const char *colour;
        /* Each point links to its run's page: this prefix, the run id and ".html" ("run/" gives
         * "run/12.html"), or NULL: no links. */
        const char *run_href;
        double width;
} HistoryFigure;

void history_figure(FILE *f, const History *h, const HistorySeries *s, const HistoryFigure *how);

/* What a series' runs are named by on its x axis: "commit", "label" or "start time". */
const char *history_x_title(const HistorySeries *s);
