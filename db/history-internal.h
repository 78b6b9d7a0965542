/* SPDX-License-Identifier: MIT */
#pragma once

#include "db/history.h"

/* What history.c uses of history-series.c, and nothing else includes. */

/* Relative: drops the baselines' points (their ratio to themselves), points that had no
 * baseline in their run, and series left empty. */
void history_drop_baselines(History *h);

/* Series by cell (numbers in parameter values as numbers), variant, then machine. */
void history_sort_series(History *h);
