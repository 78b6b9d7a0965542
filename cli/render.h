/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stdio.h>

#include "cli/cli.h"
#include "db/query.h"

/*
 * Result output. One Report (read back from the database) is printed in one of four formats;
 * `alloclab run` and `alloclab show` both print through here, so they always agree.
 */

typedef int (*RenderFunc)(FILE *f, const Report *rep);

/* Colour the table format's verdicts and failures (for a terminal; cli_colour() decides). */
void render_use_colour(bool on);

/* A table cell padded to width: with colour (and render_use_colour on), its verdict word
 * ("1.05x slower", "1.05x [1.01, 1.09] slower") or failure mark coloured as in `show`. */
void render_cell(FILE *f, const char *text, int width, bool colour);

/* word, in the failures' colour when colours are on ("REGRESSION"). */
void render_alarm(FILE *f, const char *word);

/* The renderer for a format (a static table of them, render.c). */
RenderFunc render_for(OutputFormat format);

/* What a metric's values are, by its name without the "reported:" prefix: "time" (wall, user,
 * sys, NAME_seconds), "bytes" (maxrss, NAME_bytes) or "raw" (docs/spec.md, Reported metrics). */
const char *render_metric_kind(const char *metric);

/* "12.3 ms", "512.0 MiB", "1.234e+05": a metric value with its unit, into buf. */
const char *render_value(const char *metric, double v, char *buf, size_t size);

/* Whether alloclab prune dropped the run's samples; then what that means, into buf. */
bool render_pruned_note(const Report *rep, char *buf, size_t size);

/* hyperfine records no machine and no time: an import of its file has the importing machine
 * as its host and the import's time as its start, which every view must say. */
bool render_machine_unrecorded(const Report *rep);

/* Whether the run was imported from another tool's file (its order is sequential: independent
 * samples, no seed, no smoke run, no allocator file recorded). */
bool render_report_imported(const Report *rep);

/* A value of a metric, in the unit the spec gave it (metrics: {NAME: {unit}}), else as
 * render_value() shows it. */
const char *render_metric_value(const char *metric, const char *unit, double v, char *buf, size_t size);

/* A value of run's primary metric, so. */
const char *render_run_value(const RunSummary *run, double v, char *buf, size_t size);

/* "CRASH SIGSEGV", "MISMATCH", "TIMEOUT", "EXIT 3": the loud form of an entry's failure, into
 * buf. A variant excluded without a failed sample of its own (pre-flight, or a cell whose
 * reference failed) shows the status its exclusion reason starts with. */
void render_failure_mark(const ReportEntry *e, char *buf, size_t size);

/* A variant across a run's cells against the baseline: the cells compared, their verdicts, and
 * the geometric mean of its ratios with its interval at the cells' level, 1 - alpha
 * (compare_geomean; NAN bounds when no test was valid). */
typedef struct RenderVerdicts {
        size_t compared, lower, higher, same, inconclusive;
        double geomean, lo, hi; /* when compared > 0 */
} RenderVerdicts;
RenderVerdicts render_verdicts(const Report *rep, size_t v);

/* A variant's verdicts in one word: "faster" when every compared cell says so, "slower" and
 * "same" likewise (lower/higher for a metric not a time), "~" when no cell differs and not all
 * are the same, else "mixed". */
const char *render_standing_word(const RenderVerdicts *s, bool time);

/* The same as one verdict: lower, higher or same when every compared cell says so, else
 * inconclusive. */
Verdict render_standing(const RenderVerdicts *s);

/* A JSON string, or null for NULL. */
json_t *render_json_text(const char *s);

/* A JSON number, or null for a NAN or an infinity (which JSON cannot say). */
json_t *render_json_number(double x);

/* The samples cell c took: its variants' most measured samples (each round measures them all). */
uint64_t render_cell_samples(const Report *rep, size_t c);

/* samples: auto: whether cell c stopped at the maximum, before its ratios were known within
 * min_effect (the rule stops a cell only between rounds before the maximum). */
bool render_cell_missed_target(const Report *rep, size_t c);

/* Whether the run was made by `alloclab quick` (no spec file of the user's to change). */
bool render_report_is_quick(const Report *rep);

/* A verdict rule in words, into buf: "a difference needs p < 0.01 (Holm over 12 comparisons) and
 * at least 2%; same: the 99% interval within +-2%", what order sequential means for it, or
 * (blocked order) why there are none. order: the run's; NULL for runs compared as units. */
void render_verdict_rule(const CompareRule *rule, const char *order, char *buf, size_t size);

/* The rule the report's verdicts were decided by (stats/compare.h). */
CompareRule render_rule(const Report *rep);

/* A verdict for people, into buf: its word, and for inconclusive "~ (detects +-12%)", the
 * smallest change the comparison would have found (Comparison.detectable; "~ (too few
 * samples)" when none). Returns buf. */
const char *render_verdict_text(Verdict v, double detectable, bool time, char *buf, size_t size);

/* The confidence level of the report's ratio intervals (1 - its interval_alpha). */
double render_interval_level(const Report *rep);

/* Whether the report's order gives verdicts (blocked does not). */
bool render_report_has_verdicts(const Report *rep);

/* Whether a metric ("wall", "maxrss", "reported:NAME") is a time: its verdicts say
 * faster/slower rather than lower/higher. */
bool render_time_metric(const char *metric);

/* A run's statistics for its metric as an export table (db/export.h form): one row per cell and
 * variant, the columns of `show --format csv` and `export --what stats`. NULL on ENOMEM. */
json_t *render_stats_table(const Report *rep);

/* An export table with these columns and no rows yet; NULL on ENOMEM (the calls below accept
 * NULL and do nothing, so a caller checks once, at the end). */
json_t *render_table_new(const char *const *names, size_t n);

/* Appends a row of n values in column order, taking the references. */
void render_table_add_row(json_t *table, json_t *const *values, size_t n);

/* Writes an export table as CSV (RFC 4180, a header line), JSON (an array of row objects), a
 * Markdown table or an aligned text table. Reals carry the fewest digits that read back as the
 * same doubles. */
int render_rows(FILE *f, OutputFormat format, const json_t *table);

/* The run list of `alloclab runs` in a format (csv, json and markdown: one row per run with
 * its UUID, times and counts). Returns 0, -EIO, -ENOMEM. */
int render_runs(FILE *f, OutputFormat format, const RunSummary *runs, size_t n);

/* A probe report (runner/probe-json.h form) for people: effective allocator, options, census with a
 * warning for several allocator copies, counters. */
void render_probe(FILE *f, json_t *probe);
