/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/render.h"

/*
 * Inside the renderers (cli/render*.c): the figures the table, markdown and JSON renderers all
 * show, computed one way, and the renderers render_for() hands out.
 */

/* The metric the run's table is for, and whether it is a time. */
const char *render_report_metric(const Report *rep);
bool render_report_is_time(const Report *rep);

/* A variant's ratio to the baseline in its cell: its comparison's estimate (stats/compare.h), or
 * without one the ratio of the medians; 0 when either has no statistics. */
double render_ratio(const Report *rep, size_t c, size_t v);

/* The memory overhead: a variant's median peak RSS over one figure common to its cell, the
 * cell's peak of requested bytes (render_cell_requested()), so that an allocator's rounding to
 * size classes counts as its waste and every variant is divided alike. Below RENDER_OVERHEAD_MIN
 * requested bytes a process's code and libraries outweigh its heap, and no figure is given. */
#define RENDER_OVERHEAD_MIN (4 << 20)

/* The cell's peak of live requested bytes from the smoke runs under the probe: the baseline's,
 * else the largest of its variants' (they differ only by what each allocator's own libraries ask
 * for); -1 when none was measured. */
int64_t render_cell_requested(const Report *rep, size_t c);

/* Variant v's memory overhead in cell c, or NAN: not measured, no peak RSS, or too small
 * (render_cell_requested() below RENDER_OVERHEAD_MIN). */
/* Cell c's tree had several processes each holding a large part of its memory at exit (smoke
 * run): a single process's peak RSS cannot stand for the tree's, and no overhead is given. */
bool render_cell_tree_heavy(const Report *rep, size_t c);
double render_memory_overhead(const Report *rep, size_t c, size_t v);

/* What to say when a program of the smoke runs serves allocations from a layer of its own that
 * the allocators under test never see (options_own_layer(): CPython without PYTHONMALLOC=malloc):
 * "python3.11 serves objects ... (in 4 of 4 cells' smoke runs)"; NULL when none, or on ENOMEM. */
char *render_own_layer_note(const Report *rep);

/* Below this many allocator calls per second of its smoke run, a program barely exercises the
 * allocator: a real allocation benchmark makes millions; a timed loop the compiler emptied, 5. */
#define RENDER_EXERCISED_MIN_RATE 10000.0

/* A note when the baseline's smoke run made fewer allocator calls than RENDER_EXERCISED_MIN_RATE
 * a second (in how many cells, the fewest calls and their time), or NULL. */
char *render_barely_exercised_note(const Report *rep);

/* Every variant's median wall time within this of the baseline's, in every cell, is "flat". */
#define RENDER_FLAT_WALL 0.01

/* A note when wall time is flat while the primary metric is wall (a fixed-duration program, or
 * one the allocator does not matter to), or while the primary metric, reported, differs (then its
 * figure, not its time, tells the allocators apart); NULL otherwise or when out of memory. */
char *render_flat_wall_note(const Report *rep);

/* What the run verified: the spec's verify ("stdout", "file:out.txt", "none"), and where the
 * verified output was empty, that nothing was compared there. Into buf; returns buf. */
const char *render_verify(const Report *rep, char *buf, size_t size);

/* What to say of the run's memory overhead, one line each (without a bullet), for the text and
 * the HTML report alike; NULL when the probe measured nothing, or on ENOMEM (*ret_oom). */
char **render_overhead_lines(const Report *rep, bool *ret_oom);

/* The smoke runs' memory at exit (smaps_rollup), one line per cell and variant (without a
 * bullet): resident, anonymous, and the part of that in transparent huge pages; NULL when no smoke
 * run read it, or on ENOMEM (*ret_oom). */
#define RENDER_EXIT_MEMORY_HEADING                                                                          \
        "Memory at exit (smoke run: each probed process's /proc/PID/smaps_rollup as it exited, summed "     \
        "over "                                                                                             \
        "the tree)"
char **render_exit_memory_lines(const Report *rep, bool *ret_oom);
/* The same for the allocator's own statistics at exit (runner/allocator-stats.h). */
#define RENDER_ALLOCATOR_STATS_HEADING                                                                      \
        "Allocator statistics at exit (smoke run: the started program's allocator's own figures, not "      \
        "its children's; docs/probe.md says how each allocator's are read)"
char **render_allocator_stats_lines(const Report *rep, bool *ret_oom);
/* memory_timeline's section: its heading (where the readings came from and how often; NULL
 * without a timeline or on ENOMEM), and a line per cell and variant: "highest reading 201.6 MiB,
 * time-weighted mean 103.1 MiB, last reading 1.6 MiB; after step1 21.5 MiB, ..., free 1.6 MiB"
 * (medians over the samples; NULL as render_exit_memory_lines()). */
char *render_timeline_heading(const Report *rep);
char **render_timeline_lines(const Report *rep, bool *ret_oom);
/* "allocated 98.7 MiB, active 98.8 MiB, resident 104.3 MiB, mapped 104.8 MiB, retained 14.2 MiB;
 * resident / allocated 1.06", the figures the allocator gives; into buf, returned. */
const char *render_allocator_figures(const AllocatorFigures *f, char *buf, size_t size);

/* "resident 112.7 MiB, anonymous 109.3 MiB, of which 98.0 MiB (90%) in transparent huge pages"
 * (", over 2 processes"), bytes in; into buf, returned. */
const char *render_exit_memory(int64_t rss, int64_t anon, int64_t huge, int64_t processes, int64_t tree,
                               char *buf, size_t size);

/* A variant across the run's cells: its verdicts, the cells where it is on the time/memory
 * Pareto front, and its memory overhead's geometric mean and range. */
typedef struct VariantSummary {
        RenderVerdicts verdicts;
        size_t tradeoff_cells, pareto_cells;
        size_t overhead_cells;
        double overhead_geomean, overhead_lo, overhead_hi; /* when overhead_cells > 0 */
} VariantSummary;
VariantSummary render_summarize(const Report *rep, size_t v);

/* A variant's change smaller than its cell's noise floor: not to be read as a difference. */
bool render_below_noise_floor(const Report *rep, size_t c, size_t v);

/* For wall time with start-up calibration: the median less the variant's start-up, else NAN. */
double render_minus_startup(const Report *rep, size_t c, size_t v);

/* "exclude" or "flag": what the run did with outliers. */
const char *render_outlier_policy(const Report *rep);

/* The renderers of a Report, by format. */
int render_report_table(FILE *f, const Report *rep);    /* render-text.c */
int render_report_markdown(FILE *f, const Report *rep); /* render-text.c */
int render_report_json(FILE *f, const Report *rep);     /* render-json.c */
int render_report_csv(FILE *f, const Report *rep);      /* render-rows.c */
