/* SPDX-License-Identifier: MIT */
/*
 * A History once read (history.c): its series in order, the relative view without the
 * baselines' own points, the pooled run-to-run spread of a host's series, and its freeing.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/history-internal.h"
#include "db/history.h"
#include "stats/changepoint.h"
#include "util/cleanup.h"

/* Adds a segment's squared deviations of log medians from their mean, and its degrees of
 * freedom. */
static void add_segment(const double *logs, size_t n, double *squares, double *df) {
        if (n < 2)
                return;
        double mean = 0;
        for (size_t i = 0; i < n; i++)
                mean += logs[i] / (double) n;
        for (size_t i = 0; i < n; i++)
                *squares += (logs[i] - mean) * (logs[i] - mean);
        *df += (double) (n - 1);
}

/* Where a series starts over for the spread: another host or configuration, or a confirmed
 * change point. */
static bool starts_over(const HistoryPoint *p) {
        return p && (p->host_changed || p->config_change || (p->change != HISTORY_STEADY && !p->tentative));
}

int history_spread(const History *h, const char *machine, int64_t skip_run, HistorySpread *ret) {
        double squares = 0, df = 0;
        size_t longest = 0;
        for (size_t i = 0; i < h->n_series; i++) {
                const HistorySeries *s = &h->series[i];
                if (strcmp(s->machine, machine) != 0)
                        continue;
                _cleanup_free_ double *logs = malloc((s->n_points ? s->n_points : 1) * sizeof(double));
                if (!logs)
                        return -ENOMEM;
                size_t n = 0, used = 0;
                for (size_t j = 0; j < s->n_points; j++) {
                        const HistoryPoint *p = &s->points[j];
                        if (starts_over(p)) {
                                add_segment(logs, n, &squares, &df);
                                n = 0;
                        }
                        if (p->run_id == skip_run || !(p->median > 0))
                                continue;
                        logs[n++] = log(p->median);
                        used++;
                }
                add_segment(logs, n, &squares, &df);
                longest = used > longest ? used : longest;
        }
        changepoint_pool_spread(squares, df, &ret->spread, &ret->df);
        ret->runs = df > 0 ? longest : 0;
        return 0;
}

const char *history_change_word(HistoryChange c) {
        return c == HISTORY_REGRESSION ? "regression" : c == HISTORY_IMPROVEMENT ? "improvement" : NULL;
}

static void point_done(HistoryPoint *p) {
        free(p->started_at);
        free(p->label);
        free(p->commit);
        free(p->revision);
        free(p->hostname);
        free(p->machine);
        free(p->env);
        free(p->preload);
        free(p->command);
        free(p->config_change);
        free(p->baseline_setup);
}

static void series_done(HistorySeries *s) {
        for (size_t i = 0; i < s->n_points; i++)
                point_done(&s->points[i]);
        free(s->points);
        free(s->cell);
        free(s->variant);
        free(s->machine);
}

History *history_free(History *h) {
        if (!h)
                return NULL;
        for (size_t i = 0; i < h->n_series; i++)
                series_done(&h->series[i]);
        free(h->series);
        free(h->experiment);
        free(h->metric);
        free(h->unit);
        free(h->relative_to);
        free(h);
        return NULL;
}

/* Relative: drops the baselines' points (their ratio to themselves), points that had no
 * baseline in their run, and series left empty. */
void history_drop_baselines(History *h) {
        size_t kept_series = 0;
        for (size_t i = 0; i < h->n_series; i++) {
                HistorySeries *s = &h->series[i];
                size_t kept = 0;
                for (size_t j = 0; j < s->n_points; j++) {
                        if (s->points[j].baseline_setup)
                                s->points[kept++] = s->points[j];
                        else
                                point_done(&s->points[j]);
                }
                s->n_points = kept;
                if (kept == 0)
                        series_done(s);
                else
                        h->series[kept_series++] = *s;
        }
        h->n_series = kept_series;
}

/* Strings with their runs of digits compared as numbers: "n=2" before "n=10". */
static int natural_compare(const char *a, const char *b) {
        while (*a && *b) {
                if (isdigit((unsigned char) *a) && isdigit((unsigned char) *b)) {
                        while (*a == '0')
                                a++;
                        while (*b == '0')
                                b++;
                        size_t na = strspn(a, "0123456789"), nb = strspn(b, "0123456789");
                        if (na != nb)
                                return na < nb ? -1 : 1;
                        int c = strncmp(a, b, na);
                        if (c != 0)
                                return c;
                        a += na;
                        b += nb;
                } else if (*a != *b) {
                        return (unsigned char) *a < (unsigned char) *b ? -1 : 1;
                } else {
                        a++;
                        b++;
                }
        }
        return (unsigned char) *a - (unsigned char) *b;
}

/* Series by cell (numbers in parameter values as numbers), variant, then machine. */
static int series_order(const void *x, const void *y) {
        const HistorySeries *a = x, *b = y;
        int c = natural_compare(a->cell, b->cell);
        if (c == 0)
                c = strcmp(a->variant, b->variant);
        return c != 0 ? c : strcmp(a->machine, b->machine);
}

void history_sort_series(History *h) {
        qsort(h->series, h->n_series, sizeof(HistorySeries), series_order);
}
