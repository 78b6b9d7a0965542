/* SPDX-License-Identifier: MIT */
/*
 * What every renderer of a Report shows the same way (render.h, render-figures.h): values with
 * their units, failure marks, ratios to the baseline, a variant's summary across cells, the noise
 * floor, start-up costs.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/render-figures.h"
#include "cli/render.h"
#include "runner/options.h"
#include "stats/sampleset.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "util/text.h"

static bool ends_with(const char *s, const char *suffix) {
        size_t n = strlen(s), k = strlen(suffix);
        return n > k && strcmp(s + n - k, suffix) == 0;
}

const char *render_metric_kind(const char *metric) {
        if (strncmp(metric, "reported:", 9) == 0)
                metric += 9;
        if (strcmp(metric, "wall") == 0 || strcmp(metric, "user") == 0 || strcmp(metric, "sys") == 0 ||
            ends_with(metric, "_seconds"))
                return "time";
        if (strcmp(metric, "maxrss") == 0 || ends_with(metric, "_bytes"))
                return "bytes";
        return "raw";
}

const char *render_value(const char *metric, double v, char *buf, size_t size) {
        const char *kind = render_metric_kind(metric);
        if (strcmp(kind, "time") == 0) {
                if (v < 1e-6)
                        snprintf(buf, size, "%.0f ns", v * 1e9);
                else if (v < 1e-3)
                        snprintf(buf, size, "%.1f us", v * 1e6);
                else if (v < 1)
                        snprintf(buf, size, "%.1f ms", v * 1e3);
                else
                        snprintf(buf, size, "%.3f s", v);
        } else if (strcmp(kind, "bytes") == 0) {
                if (v < 1024 * 1024)
                        snprintf(buf, size, "%.1f KiB", v / 1024);
                else if (v < 1024.0 * 1024 * 1024)
                        snprintf(buf, size, "%.1f MiB", v / (1024 * 1024));
                else
                        snprintf(buf, size, "%.2f GiB", v / (1024.0 * 1024 * 1024));
        } else if (fabs(v) >= 1e4) { /* "16.98k", not "1.698e+04" */
                static const char suffix[] = "kMGTPE";
                int k = 0;
                do
                        v /= 1000;
                while (fabs(v) >= 1000 && k++ < 5);
                snprintf(buf, size, "%.4g%c", v, suffix[k]);
        } else
                snprintf(buf, size, "%.4g", v);
        return buf;
}

const char *render_metric_value(const char *metric, const char *unit, double v, char *buf, size_t size) {
        if (!unit)
                return render_value(strncmp(metric, "reported:", 9) == 0 ? metric + 9 : metric, v, buf,
                                    size);
        /* The spec's unit replaces the one a name would give: "1.234M ops/s", not "1.2 ms s". */
        render_value("", v, buf, size);
        snprintf(buf + strlen(buf), size - strlen(buf), " %s", unit);
        return buf;
}

const char *render_run_value(const RunSummary *run, double v, char *buf, size_t size) {
        return render_metric_value(run->metric, run->metric_unit, v, buf, size);
}

bool render_pruned_note(const Report *rep, char *buf, size_t size) {
        if (!rep->run.pruned_at)
                return false;
        snprintf(buf, size,
                 "pruned %s: its measured samples are gone; its statistics and each cell's values of %s are "
                 "kept, and everything below is computed from them",
                 rep->run.pruned_at, rep->run.metric);
        return true;
}

bool render_machine_unrecorded(const Report *rep) {
        return rep->run.label && strcmp(rep->run.label, "imported from hyperfine") == 0;
}

bool render_report_imported(const Report *rep) {
        return sampleset_design(rep->order) == SAMPLE_INDEPENDENT;
}

const char *render_report_metric(const Report *rep) {
        const char *m = rep->run.metric;
        return strncmp(m, "reported:", 9) == 0 ? m + 9 : m;
}

bool render_time_metric(const char *metric) {
        return strcmp(render_metric_kind(metric), "time") == 0;
}

bool render_report_is_time(const Report *rep) {
        return render_time_metric(rep->run.metric);
}

double render_ratio(const Report *rep, size_t c, size_t v) {
        const ReportEntry *e = report_entry(rep, c, v), *b = report_entry(rep, c, rep->baseline);
        if (e->has_comparison)
                return e->comparison.ratio;
        if (!e->has_stats || !b->has_stats || e->stats.n == 0 || b->stats.median == 0)
                return 0;
        return e->stats.median / b->stats.median;
}

void render_failure_mark(const ReportEntry *e, char *buf, size_t size) {
        const char *f = e->first_failure;
        if (!f && e->excluded_reason)
                f = e->excluded_reason;
        if (!f) {
                snprintf(buf, size, "?");
                return;
        }
        int n;
        if (sscanf(f, "signal %d", &n) == 1) {
                const char *abbrev = sigabbrev_np(n);
                snprintf(buf, size, "CRASH SIG%s", abbrev ? abbrev : "?");
                return;
        }
        size_t i = 0;
        for (; f[i] && f[i] != ':' && i + 1 < size; i++)
                buf[i] = (char) toupper((unsigned char) f[i]);
        buf[i] = 0;
}

int64_t render_cell_requested(const Report *rep, size_t c) {
        const ReportEntry *base = report_entry(rep, c, rep->baseline);
        if (base->has_smoke_peaks && base->smoke_peak_requested >= 0)
                return base->smoke_peak_requested;
        int64_t most = -1;
        for (size_t v = 0; v < rep->n_variants; v++) {
                const ReportEntry *e = report_entry(rep, c, v);
                if (e->has_smoke_peaks && e->smoke_peak_requested > most)
                        most = e->smoke_peak_requested;
        }
        return most;
}

bool render_cell_tree_heavy(const Report *rep, size_t c) {
        for (size_t v = 0; v < rep->n_variants; v++)
                if (report_entry(rep, c, v)->smoke_large_processes > 1)
                        return true;
        return false;
}

double render_memory_overhead(const Report *rep, size_t c, size_t v) {
        const ReportEntry *e = report_entry(rep, c, v);
        int64_t requested = render_cell_requested(rep, c);
        if (requested < RENDER_OVERHEAD_MIN || !e->has_tradeoff || e->excluded_reason ||
            e->maxrss_median <= 0 || render_cell_tree_heavy(rep, c))
                return NAN;
        return e->maxrss_median / (double) requested;
}

/* Appends a printf-formatted line to *lines. */
static int add_line(char ***lines, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_line(char ***lines, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *line = NULL;
        int r = vasprintf(&line, fmt, ap);
        va_end(ap);
        return r < 0 ? -ENOMEM : strv_consume(lines, line);
}

const char *render_verify(const Report *rep, char *buf, size_t size) {
        size_t empty = rep->n_cells_nothing_verified;
        /* The stored size is of what was compared: with verify_ignore, what it left. */
        const char *what = rep->verify_ignore ? "what verify_ignore left of the output" : "the output";
        if (empty == 0)
                snprintf(buf, size, "%s", rep->verify);
        else if (empty == rep->n_cells)
                snprintf(buf, size, "%s (%s was empty: nothing was compared)", rep->verify, what);
        else
                snprintf(buf, size, "%s (%s was empty in %zu of %zu cells: nothing was compared there)",
                         rep->verify, what, empty, rep->n_cells);
        /* What was left out of the comparison, said where what was compared is. */
        json_t *ignore = rep->verify_ignore ? json_loads(rep->verify_ignore, 0, NULL) : NULL;
        for (size_t i = 0; i < json_array_size(ignore); i++) {
                _cleanup_free_ char *shown = text_shown(json_string_value(json_array_get(ignore, i)));
                size_t at = strlen(buf);
                snprintf(buf + at, size - at, "%s'%s'", i == 0 ? ", without the lines matching " : " or ",
                         shown ? shown : "?");
        }
        json_decref(ignore);
        return buf;
}

char *render_barely_exercised_note(const Report *rep) {
        size_t cells = 0, counted = 0;
        int64_t fewest = INT64_MAX;
        double wall = 0;
        for (size_t c = 0; c < rep->n_cells; c++) {
                const ReportEntry *e = report_entry(rep, c, rep->baseline);
                if (!e->has_smoke_calls || e->smoke_wall_s <= 0)
                        continue;
                counted++;
                if ((double) e->smoke_calls >= RENDER_EXERCISED_MIN_RATE * e->smoke_wall_s)
                        continue;
                cells++;
                if (e->smoke_calls < fewest) {
                        fewest = e->smoke_calls;
                        wall = e->smoke_wall_s;
                }
        }
        if (cells == 0)
                return NULL;
        char in[64] = "";
        if (counted > 1)
                snprintf(in, sizeof(in), " in %zu of %zu cells", cells, counted);
        char *note = NULL;
        if (asprintf(&note,
                     "the program calls the allocator rarely%s: %s's smoke run made %lld allocator call%s "
                     "in %.3g s%s (fewer than %.0f a second); a difference between allocators there "
                     "comes from their start-up and own memory, code and data layout, not from how "
                     "they serve a stream of allocations",
                     in, rep->variant_names[rep->baseline], (long long) fewest, fewest == 1 ? "" : "s", wall,
                     cells > 1 ? " in the cell with the fewest" : "", RENDER_EXERCISED_MIN_RATE) < 0)
                return NULL;
        return note;
}

/* asprintf() that returns the text, NULL when out of memory. */
static char *render_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *render_format(const char *fmt, ...) {
        char *text = NULL;
        va_list ap;
        va_start(ap, fmt);
        int r = vasprintf(&text, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : text;
}

char *render_flat_wall_note(const Report *rep) {
        bool wall = strcmp(rep->run.metric, "wall") == 0,
             reported = strncmp(rep->run.metric, "reported:", 9) == 0;
        double widest = 0, moved = 0; /* of |wall / the baseline's - 1|, and of the metric's */
        bool differs = false;         /* a verdict on the metric says lower or higher */
        size_t compared = 0;
        if (!wall && !reported)
                return NULL;
        for (size_t c = 0; c < rep->n_cells; c++) {
                const ReportEntry *base = report_entry(rep, c, rep->baseline);
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        if (v == rep->baseline || e->excluded_reason || !e->has_tradeoff ||
                            !base->has_tradeoff || !(base->wall_median > 0))
                                continue;
                        widest = fmax(widest, fabs(e->wall_median / base->wall_median - 1));
                        compared++;
                        differs |= e->has_comparison && (e->comparison.verdict == VERDICT_LOWER ||
                                                         e->comparison.verdict == VERDICT_HIGHER);
                        if (e->has_stats && base->has_stats && base->stats.median != 0)
                                moved = fmax(moved, fabs(e->stats.median / base->stats.median - 1));
                }
        }
        /* A reported metric "says otherwise" by a verdict, or by medians apart by more than the
         * run's minimum effect where too few samples could give one. */
        if (compared == 0 || widest > RENDER_FLAT_WALL ||
            (reported && !differs && !(moved > rep->min_effect)))
                return NULL;
        char in[32] = "";
        if (rep->n_cells > 1)
                snprintf(in, sizeof(in), " in every cell");
        if (reported)
                return render_format(
                        "every variant's median wall time is within %.1f%% of %s's%s while %s differs by up "
                        "to "
                        "%.0f%%: the program runs for a fixed time, and its figure, not its time, tells the "
                        "allocators apart",
                        widest * 100, rep->variant_names[rep->baseline], in, rep->run.metric + 9,
                        moved * 100);
        /* A figure the spec reads already, but not as the metric judged. */
        json_t *defs = rep->metric_defs ? json_loads(rep->metric_defs, 0, NULL) : NULL;
        const char *figure =
                json_object_size(defs) > 0 ? json_object_iter_key(json_object_iter(defs)) : NULL;
        char *note = render_format(
                "every variant's median wall time is within %.1f%% of %s's%s: either the allocator matters "
                "little to this program, or it runs for a fixed time, when wall time cannot tell allocators "
                "apart; %s%s%s",
                widest * 100, rep->variant_names[rep->baseline], in,
                figure ? "`metric: reported:"
                       : "a program that prints its own figure (operations, a rate) is judged "
                         "by it with the spec key `metrics:` (docs/spec.md",
                figure ? figure : "",
                figure                        ? "` would judge the figure the spec's metrics: reads already"
                : render_report_is_quick(rep) ? "; quick --print-spec writes a spec to add it to)"
                                              : ")");
        json_decref(defs);
        return note;
}

char *render_own_layer_note(const Report *rep) {
        const char *program = NULL;
        size_t cells = 0;
        for (size_t c = 0; c < rep->n_cells; c++) {
                bool here = false;
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        if (e->own_layer_program) {
                                program = program ? program : e->own_layer_program;
                                here = true;
                        }
                }
                cells += here;
        }
        if (!program)
                return NULL;
        const char *base = basename(program);
        char *note = NULL;
        if (asprintf(&note,
                     "%s (in %zu of %zu cells' smoke runs) %s: the figures measure that layer as much as "
                     "the allocators",
                     base, cells, rep->n_cells, options_own_layer(program, NULL)) < 0)
                return NULL;
        return note;
}

/* One line per cell and variant of a figure the smoke run read at exit: "[cell] variant: TEXT"
 * where the entry has it (say() writes TEXT), else "... : not read (why)"; NULL when no entry
 * has it, or on ENOMEM (*ret_oom). */
static char **smoke_exit_lines(const Report *rep, bool (*has)(const ReportEntry *e),
                               void (*say)(const ReportEntry *e, char *buf, size_t size),
                               const char *why_not, bool *ret_oom) {
        *ret_oom = false;
        bool any = false;
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                any |= has(&rep->entries[i]);
        if (!any)
                return NULL;
        char **lines = NULL;
        int r = 0;
        for (size_t c = 0; c < rep->n_cells && r >= 0; c++)
                for (size_t v = 0; v < rep->n_variants && r >= 0; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        char cell[160] = "", text[1024];
                        if (rep->n_cells > 1)
                                snprintf(cell, sizeof(cell), "[%s] ", rep->cell_labels[c]);
                        if (has(e)) {
                                say(e, text, sizeof(text));
                                r = add_line(&lines, "%s%s: %s", cell, rep->variant_names[v], text);
                        } else
                                r = add_line(&lines, "%s%s: not read (%s)", cell, rep->variant_names[v],
                                             why_not);
                }
        if (r < 0) {
                strv_free(lines);
                *ret_oom = true;
                return NULL;
        }
        return lines;
}
static bool has_exit_memory(const ReportEntry *e) {
        return e->has_exit_memory;
}

static void say_exit_memory(const ReportEntry *e, char *buf, size_t size) {
        render_exit_memory(e->exit_rss_bytes, e->exit_pss_anon_bytes, e->exit_anon_huge_bytes,
                           e->exit_memory_processes, e->exit_tree_processes, buf, size);
}

char **render_exit_memory_lines(const Report *rep, bool *ret_oom) {
        return smoke_exit_lines(
                rep, has_exit_memory, say_exit_memory,
                "excluded from the cell, or the program did not exit normally, or ran without the probe",
                ret_oom);
}

char *render_timeline_heading(const Report *rep) {
        if (!rep->timeline_source)
                return NULL;
        char period[64], longest[160] = "";
        render_value("wall", (double) rep->timeline_period_min_ns / 1e9, period, sizeof(period));
        if (rep->timeline_period_max_ns > rep->timeline_period_min_ns) {
                char at[32];
                snprintf(longest, sizeof(longest),
                         " (thinned out to every %s in samples too long for " STRINGIFY(
                                 TIMELINE_MAX_POINTS) " readings)",
                         render_value("wall", (double) rep->timeline_period_max_ns / 1e9, at, sizeof(at)));
        }
        const char *what =
                strcmp(rep->timeline_source, "proc") == 0 ? "the tree's resident memory (/proc/PID/statm)"
                : strcmp(rep->timeline_source, "cgroup") == 0
                        ? "the memory charged to the children's cgroup (memory.current)"
                        : "memory.current of the children's cgroup, or /proc/PID/statm without it";
        char *heading = NULL;
        return asprintf(&heading,
                        "Memory over time (memory_timeline: %s, read every %s%s; medians over the samples; "
                        "\"after\" a phase: the first reading after the program marked it)",
                        what, period, longest) < 0
                       ? NULL
                       : heading;
}

/* "highest reading 201.6 MiB" for mem_peak_bytes, "free 1.6 MiB" for mem_at_free_bytes. */
static void say_timeline_figure(const ReportFigure *f, char *buf, size_t size) {
        static const struct {
                const char *metric, *words;
        } named[] = {
                { "mem_peak_bytes", "highest reading" },
                { "mem_mean_bytes", "time-weighted mean" },
                { "mem_last_bytes", "last reading" },
        };
        char value[32];
        render_value("maxrss", f->median, value, sizeof(value));
        for (size_t i = 0; i < ELEMENTSOF(named); i++)
                if (strcmp(f->metric, named[i].metric) == 0) {
                        snprintf(buf, size, "%s %s", named[i].words, value);
                        return;
                }
        /* mem_at_NAME_bytes */
        size_t len = strlen(f->metric);
        snprintf(buf, size, "%.*s %s", len > 13 ? (int) (len - 13) : 0, f->metric + 7, value);
}

static bool has_timeline(const ReportEntry *e) {
        return e->n_memory_figures > 0;
}

static void say_timeline(const ReportEntry *e, char *buf, size_t size) {
        size_t at = 0;
        int64_t most = 0; /* samples with figures: a phase some did not outlive has fewer */
        for (size_t i = 0; i < e->n_memory_figures; i++)
                most = e->memory_figures[i].n > most ? e->memory_figures[i].n : most;
        buf[0] = 0;
        for (size_t i = 0; i < e->n_memory_figures && at < size; i++) {
                char figure[160];
                say_timeline_figure(&e->memory_figures[i], figure, sizeof(figure));
                if (e->memory_figures[i].n < most)
                        snprintf(figure + strlen(figure), sizeof(figure) - strlen(figure),
                                 " (in %lld of %lld samples)", (long long) e->memory_figures[i].n,
                                 (long long) most);
                const char *metric = e->memory_figures[i].metric;
                bool first_phase = strncmp(metric, "mem_at_", 7) == 0 &&
                                   (i == 0 || strncmp(e->memory_figures[i - 1].metric, "mem_at_", 7) != 0);
                const char *sep = first_phase ? (i == 0 ? "after " : "; after ") : i == 0 ? "" : ", ";
                at += (size_t) snprintf(buf + at, size - at, "%s%s", sep, figure);
        }
}

char **render_timeline_lines(const Report *rep, bool *ret_oom) {
        char **lines = smoke_exit_lines(
                rep, has_timeline, say_timeline,
                "excluded from the cell, or no sample succeeded, or none lived long enough for a reading",
                ret_oom);
        if (lines || *ret_oom || !rep->timeline_source)
                return lines;
        char period[64];
        render_value("wall", (double) rep->timeline_period_min_ns / 1e9, period, sizeof(period));
        if (add_line(&lines,
                     "none: no sample lived past its first reading after the exec (every %s): give "
                     "memory_timeline a shorter period",
                     period) < 0)
                *ret_oom = true;
        return lines;
}

const char *render_allocator_figures(const AllocatorFigures *f, char *buf, size_t size) {
        size_t at = 0;
        buf[0] = 0;
        for (size_t i = 0; i < N_ALLOCATOR_FIGURES && at < size; i++) {
                int64_t v = allocator_figure_of(f, i);
                if (v < 0)
                        continue;
                char value[32];
                render_value("maxrss", (double) v, value, sizeof(value));
                at += (size_t) snprintf(buf + at, size - at, "%s%s %s", at ? ", " : "",
                                        allocator_figures[i].name, value);
        }
        if (f->allocated > 0 && f->resident >= 0 && at < size)
                snprintf(buf + at, size - at, "; resident / allocated %.2f",
                         (double) f->resident / (double) f->allocated);
        return buf;
}

static bool has_allocator_figures(const ReportEntry *e) {
        return e->has_allocator_figures;
}

static void say_allocator_figures(const ReportEntry *e, char *buf, size_t size) {
        render_allocator_figures(&e->allocator_figures, buf, size);
}

char **render_allocator_stats_lines(const Report *rep, bool *ret_oom) {
        return smoke_exit_lines(rep, has_allocator_figures, say_allocator_figures,
                                "excluded from the cell, or the program did not exit normally, ran without "
                                "the probe, or its allocator gives no statistics alloclab reads",
                                ret_oom);
}

const char *render_exit_memory(int64_t rss, int64_t anon, int64_t huge, int64_t processes, int64_t tree,
                               char *buf, size_t size) {
        char rss_text[32], anon_text[32], huge_text[48] = "none";
        render_value("maxrss", (double) rss, rss_text, sizeof(rss_text));
        render_value("maxrss", (double) anon, anon_text, sizeof(anon_text));
        if (huge > 0 && anon > 0) {
                char value[32];
                render_value("maxrss", (double) huge, value, sizeof(value));
                snprintf(huge_text, sizeof(huge_text), "%s (%.0f%%)", value,
                         100.0 * (double) huge / (double) anon);
        }
        char over[160] = "";
        if (tree > processes)
                snprintf(over, sizeof(over),
                         ", of %lld of the tree's %lld processes (one that ends with _exit() or a signal "
                         "reads "
                         "none)",
                         (long long) processes, (long long) tree);
        else if (processes > 1)
                snprintf(over, sizeof(over), ", over %lld processes", (long long) processes);
        snprintf(buf, size, "resident %s, anonymous %s, of which %s in transparent huge pages%s", rss_text,
                 anon_text, huge_text, over);
        return buf;
}

char **render_overhead_lines(const Report *rep, bool *ret_oom) {
        *ret_oom = false;
        size_t measured = 0, judged = 0;
        int64_t largest = -1;
        for (size_t c = 0; c < rep->n_cells; c++) {
                int64_t requested = render_cell_requested(rep, c);
                measured += requested >= 0;
                judged += requested >= RENDER_OVERHEAD_MIN;
                largest = requested > largest ? requested : largest;
        }
        const char *unprobed = NULL; /* a program that ran without the probe, in some smoke run */
        for (size_t i = 0; i < rep->n_cells * rep->n_variants && !unprobed; i++)
                unprobed = rep->entries[i].smoke_unprobed;
        char **lines = NULL, size[32];
        int r = 0;
        if (rep->timed_under) {
                r = add_line(
                        &lines,
                        "not given: the samples ran under valgrind's %s (metric: instructions without a "
                        "PMU), so their peak RSS is valgrind's, not the program's",
                        rep->timed_under);
                goto out;
        }
        if (measured == 0 && unprobed) {
                r = add_line(
                        &lines,
                        "not given: %s ran without the probe in the smoke runs, so what the program asked "
                        "for is not known",
                        unprobed);
                goto out;
        }
        if (measured == 0)
                return NULL;
        if (judged == 0 && largest == 0) {
                r = add_line(&lines, "not given: in the smoke runs the program asked for no memory through "
                                     "the malloc family");
                goto out;
        }
        if (judged == 0) {
                render_value("maxrss", (double) largest, size, sizeof(size));
                r = add_line(&lines,
                             "not given: in the smoke runs the program asked for at most %s at once, under "
                             "the %d MiB below which the code and libraries every process has resident "
                             "outweigh its heap",
                             size, RENDER_OVERHEAD_MIN >> 20);
                goto out;
        }
        size_t heavy = 0;
        for (size_t c = 0; c < rep->n_cells; c++)
                heavy += render_cell_tree_heavy(rep, c);
        if (heavy == rep->n_cells) {
                r = add_line(
                        &lines,
                        "not given: several processes of the program's tree each held a large part of "
                        "its memory, and a sample's peak RSS is the largest single process's while what "
                        "the program asked for is summed over the tree (mem_peak_bytes of "
                        "memory_timeline reads the tree's sum)");
                goto out;
        }
        bool below_one = false, above_three = false;
        for (size_t v = 0; v < rep->n_variants && r >= 0; v++) {
                VariantSummary s = render_summarize(rep, v);
                below_one |= s.overhead_cells && s.overhead_lo < 1;
                above_three |= s.overhead_cells && s.overhead_hi > 3;
                if (s.overhead_cells == 1)
                        r = add_line(&lines, "%s: %.2fx", rep->variant_names[v], s.overhead_geomean);
                else if (s.overhead_cells > 1)
                        r = add_line(&lines, "%s: %.2fx (geometric mean of %zu cells, %.2f-%.2f)",
                                     rep->variant_names[v], s.overhead_geomean, s.overhead_cells,
                                     s.overhead_lo, s.overhead_hi);
                else /* never left out without a word */
                        r = add_line(&lines, "%s: none: no measured peak RSS in the cells judged",
                                     rep->variant_names[v]);
        }
        size_t borrowed = 0; /* cells whose baseline gave no figure: the largest other one stands in */
        for (size_t c = 0; c < rep->n_cells; c++) {
                const ReportEntry *base = report_entry(rep, c, rep->baseline);
                borrowed += !(base->has_smoke_peaks && base->smoke_peak_requested >= 0) &&
                            render_cell_requested(rep, c) >= 0;
        }
        if (r >= 0 && borrowed > 0)
                r = add_line(
                        &lines,
                        "in %zu of %zu cells %s's smoke run gave no figure (it failed or ran without the "
                        "probe): there the largest of the other variants' smoke runs is the one figure",
                        borrowed, rep->n_cells, rep->variant_names[rep->baseline]);
        if (r >= 0 && judged < rep->n_cells)
                r = add_line(
                        &lines,
                        "not given in %zu of %zu cells: there the program asked for less than %d MiB at "
                        "once in the smoke runs, too little beside the code and libraries every process "
                        "has resident",
                        rep->n_cells - judged, rep->n_cells, RENDER_OVERHEAD_MIN >> 20);
        if (r >= 0 && heavy > 0)
                r = add_line(
                        &lines,
                        "not given in %zu of %zu cells: there several processes of the tree each held a "
                        "large part of its memory, and a peak RSS is a single process's",
                        heavy, rep->n_cells);
        /* One figure per cell stands for the program's demand: where the variants' own smoke runs
         * asked for very different peaks (a heap that depends on thread scheduling), say so. */
        int64_t least = INT64_MAX, most = 0;
        size_t varied = 0;
        for (size_t c = 0; c < rep->n_cells; c++) {
                int64_t lo = INT64_MAX, hi = 0;
                for (size_t v = 0; v < rep->n_variants; v++) {
                        const ReportEntry *e = report_entry(rep, c, v);
                        if (!e->has_smoke_peaks || e->smoke_peak_requested < 0)
                                continue;
                        lo = e->smoke_peak_requested < lo ? e->smoke_peak_requested : lo;
                        hi = e->smoke_peak_requested > hi ? e->smoke_peak_requested : hi;
                }
                /* only cells that get a figure: the others said "not given" above */
                if (lo == INT64_MAX || render_cell_requested(rep, c) < RENDER_OVERHEAD_MIN || hi <= 2 * lo)
                        continue;
                varied++;
                least = lo < least ? lo : least;
                most = hi > most ? hi : most;
        }
        if (r >= 0 && varied > 0) {
                char lo_text[32], hi_text[32];
                render_value("maxrss", (double) least, lo_text, sizeof(lo_text));
                render_value("maxrss", (double) most, hi_text, sizeof(hi_text));
                r = add_line(&lines,
                             "rough in %zu of %zu cells: the program's own peak demand differed between the "
                             "variants' smoke runs (%s to %s), so it depends on more than the allocator "
                             "(thread scheduling, input); one run's figure stands for all",
                             varied, rep->n_cells, lo_text, hi_text);
        }
        bool tree = false; /* several processes asked: the figure is their sum, a peak RSS one's */
        for (size_t i = 0; i < rep->n_cells * rep->n_variants; i++)
                tree |= rep->entries[i].smoke_allocating_processes > 1;
        if (r >= 0 && below_one)
                r = add_line(&lines,
                             "below 1x: less resident than the cell's figure of what the program asked for: "
                             "it asked for memory it never wrote (pages never touched are not resident), or "
                             "asked for less in this variant's runs than in the smoke run that gave the "
                             "figure%s",
                             tree ? ", or, as here several processes of the tree called the allocator, the "
                                    "figure is their sum while a sample's peak RSS is the largest single "
                                    "process's (mem_peak_bytes of memory_timeline reads the tree's sum)"
                                  : "");
        if (r >= 0 && above_three)
                r = add_line(&lines,
                             "above 3x: most of the resident memory was not asked for through the malloc "
                             "family: the program may serve its objects from an allocator layer of its own "
                             "(an arena, a pool: CPython's pymalloc), which the allocator under test never "
                             "sees");
out:
        if (r < 0) {
                *ret_oom = true;
                return strv_free(lines);
        }
        return lines;
}

RenderVerdicts render_verdicts(const Report *rep, size_t v) {
        RenderVerdicts s = {};
        _cleanup_free_ const Comparison **cs = calloc(rep->n_cells + 1, sizeof(*cs));
        for (size_t c = 0; c < rep->n_cells && cs; c++) {
                const ReportEntry *e = report_entry(rep, c, v);
                if (!e->has_comparison)
                        continue;
                cs[s.compared++] = &e->comparison;
                s.lower += e->comparison.verdict == VERDICT_LOWER;
                s.higher += e->comparison.verdict == VERDICT_HIGHER;
                s.same += e->comparison.verdict == VERDICT_SAME;
                s.inconclusive += e->comparison.verdict == VERDICT_INCONCLUSIVE &&
                                  e->comparison.test != COMPARE_TEST_NONE; /* blocked: no verdict at all */
        }
        if (s.compared)
                compare_geomean(cs, s.compared, render_interval_level(rep), &s.geomean, &s.lo, &s.hi);
        return s;
}

/* "faster" when every compared cell says so, "slower" and "same" likewise, "~" when no cell
 * differs and not all are the same, else "mixed". */
const char *render_standing_word(const RenderVerdicts *s, bool time) {
        if (s->lower == s->compared)
                return verdict_word(VERDICT_LOWER, time);
        if (s->higher == s->compared)
                return verdict_word(VERDICT_HIGHER, time);
        if (s->same == s->compared)
                return verdict_word(VERDICT_SAME, time);
        return s->lower == 0 && s->higher == 0 ? "~" : "mixed";
}

Verdict render_standing(const RenderVerdicts *s) {
        if (s->compared == 0)
                return VERDICT_INCONCLUSIVE;
        return s->lower == s->compared    ? VERDICT_LOWER
               : s->higher == s->compared ? VERDICT_HIGHER
               : s->same == s->compared   ? VERDICT_SAME
                                          : VERDICT_INCONCLUSIVE;
}

VariantSummary render_summarize(const Report *rep, size_t v) {
        VariantSummary s = { .verdicts = render_verdicts(rep, v),
                             .overhead_lo = INFINITY,
                             .overhead_hi = -INFINITY };
        double overhead_logs = 0;
        for (size_t c = 0; c < rep->n_cells; c++) {
                const ReportEntry *e = report_entry(rep, c, v);
                s.tradeoff_cells += e->has_tradeoff && !e->excluded_reason;
                s.pareto_cells += e->pareto;
                double overhead = render_memory_overhead(rep, c, v);
                if (!isnan(overhead)) {
                        overhead_logs += log(overhead);
                        s.overhead_lo = fmin(s.overhead_lo, overhead);
                        s.overhead_hi = fmax(s.overhead_hi, overhead);
                        s.overhead_cells++;
                }
        }
        if (s.overhead_cells)
                s.overhead_geomean = exp(overhead_logs / (double) s.overhead_cells);
        return s;
}

bool render_below_noise_floor(const Report *rep, size_t c, size_t v) {
        const ReportEntry *e = report_entry(rep, c, v);
        double floor = query_noise_floor(rep, c);
        return v != rep->aa_variant && e->has_comparison && !isnan(floor) &&
               fabs(e->comparison.ratio - 1) < floor;
}

double render_minus_startup(const Report *rep, size_t c, size_t v) {
        const ReportEntry *e = report_entry(rep, c, v);
        if (!rep->startup || rep->startup[v].n == 0 || !e->has_stats || e->stats.n == 0 ||
            strcmp(rep->run.metric, "wall") != 0)
                return NAN;
        return e->stats.median - rep->startup[v].median;
}

json_t *render_json_text(const char *s) {
        return s ? json_string(s) : json_null();
}

json_t *render_json_number(double x) {
        return isfinite(x) ? json_real(x) : json_null();
}

CompareRule render_rule(const Report *rep) {
        return (CompareRule){ .min_effect = rep->min_effect,
                              .alpha = rep->alpha,
                              .correction = rep->correction,
                              .tests = rep->n_tests ? rep->n_tests : 1,
                              .interval_alpha = rep->interval_alpha };
}

const char *render_verdict_text(Verdict v, double detectable, bool time, char *buf, size_t size) {
        if (v != VERDICT_INCONCLUSIVE)
                snprintf(buf, size, "%s", verdict_word(v, time));
        else if (isfinite(detectable))
                snprintf(buf, size, "~ (detects +-%.0f%%)", 100 * detectable);
        else
                snprintf(buf, size, "~ (too few samples)");
        return buf;
}

double render_interval_level(const Report *rep) {
        return 1 - (rep->interval_alpha > 0 ? rep->interval_alpha : rep->alpha);
}

uint64_t render_cell_samples(const Report *rep, size_t c) {
        uint64_t most = 0;
        for (size_t v = 0; v < rep->n_variants; v++) {
                const ReportEntry *e = report_entry(rep, c, v);
                uint64_t n = e->has_stats ? e->stats.n : 0;
                most = n > most ? n : most;
        }
        return most;
}

bool render_cell_missed_target(const Report *rep, size_t c) {
        return rep->samples_min > 0 && rep->n_variants > 1 &&
               render_cell_samples(rep, c) >= (uint64_t) rep->samples;
}

bool render_report_is_quick(const Report *rep) {
        return rep->spec_path && strcmp(rep->spec_path, "quick") == 0;
}

bool render_report_has_verdicts(const Report *rep) {
        return sampleset_design(rep->order) != SAMPLE_BLOCKS;
}

void render_verdict_rule(const CompareRule *rule, const char *order, char *buf, size_t size) {
        SampleDesign design = order ? sampleset_design(order) : SAMPLE_ROUNDS;
        if (design == SAMPLE_BLOCKS) {
                snprintf(buf, size,
                         "no verdicts: order blocked measures each variant's samples after the other's, and "
                         "no test can tell a drift of the machine between the blocks from a difference "
                         "between the variants (interleaved or randomized order pairs them); ratios only");
                return;
        }
        char shared[96] = "";
        if (rule->tests > 1)
                snprintf(shared, sizeof(shared), " (%s over %zu comparisons)",
                         rule->correction == CORRECTION_HOLM ? "Holm"
                         : rule->correction == CORRECTION_BH ? "Benjamini-Hochberg"
                                                             : "no correction",
                         rule->tests);
        double level = 100 * (1 - (rule->interval_alpha > 0 ? rule->interval_alpha : rule->alpha));
        snprintf(buf, size,
                 "a difference needs p < %g%s and at least %g%%; same: the %.4g%% interval within +-%g%%%s",
                 rule->alpha, shared, 100 * rule->min_effect, level, 100 * rule->min_effect,
                 design == SAMPLE_INDEPENDENT
                         ? "; order sequential: each variant's samples were taken after the other's (an "
                           "import), compared as independent samples, so a drift of the machine between "
                           "them reads as a difference"
                         : "");
}

const char *render_outlier_policy(const Report *rep) {
        return rep->exclude_outliers ? "exclude" : "flag";
}
