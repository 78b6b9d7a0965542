/* SPDX-License-Identifier: MIT */
/*
 * The site's pages but the runs' (cli/site.h): the index, an experiment's timelines, its fleet
 * and a suite invocation. Every chart has axis titles, round ticks and its numbers in a table.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/history-chart.h"
#include "cli/html.h"
#include "cli/ratio-chart.h"
#include "cli/render.h"
#include "cli/site-pages.h"
#include "cli/suite-summary.h"
#include "db/fleet.h"
#include "db/history.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/strv.h"

static const char up[] = "<a href=\"../index.html\">all experiments</a>";

/* A link to a page of the site (path relative to its root) from a page depth directories below. */
static void site_link(FILE *f, int depth, const char *path, const char *text) {
        fprintf(f, "<a href=\"%s%s\">", depth ? "../" : "", path);
        html_text(f, text);
        fputs("</a>", f);
}

/* A page whose heading is its title. */
static void titled_page_start(FILE *f, const char *title, const char *nav) {
        html_page_start(f, title, nav);
        fputs("<h1>", f);
        html_text(f, title);
        fputs("</h1>\n", f);
}

/* Each non-baseline variant of a run across its cells: "jemalloc 0.93x faster", coloured. */
static void verdicts_line(FILE *f, const Report *rep) {
        bool time = render_time_metric(rep->run.metric), any = false;
        for (size_t v = 0; v < rep->n_variants; v++) {
                RenderVerdicts k = render_verdicts(rep, v);
                if (v == rep->baseline)
                        continue;
                char text[256], missing[96] = "";
                const char *word = render_standing_word(&k, time);
                size_t excluded = 0;
                for (size_t c = 0; c < rep->n_cells; c++)
                        excluded += !report_entry(rep, c, v)->has_comparison;
                if (k.compared > 0 && excluded > 0)
                        snprintf(missing, sizeof(missing), " (not compared in %zu of %zu cells)", excluded,
                                 rep->n_cells);
                char mark[48] = "";
                for (size_t c = 0; c < rep->n_cells && !mark[0]; c++)
                        if (report_entry(rep, c, v)->excluded_reason ||
                            report_entry(rep, c, v)->n_failed > 0)
                                render_failure_mark(report_entry(rep, c, v), mark, sizeof(mark));
                if (k.compared == 0)
                        snprintf(text, sizeof(text), "%s: not compared in %zu of %zu cells%s%s",
                                 rep->variant_names[v], excluded, rep->n_cells, mark[0] ? ", " : "", mark);
                else /* "~" in a table's cell; here the word */
                        snprintf(text, sizeof(text), "%s %.3fx %s%s", rep->variant_names[v], k.geomean,
                                 strcmp(word, "~") == 0 ? "inconclusive" : word, missing);
                fputs(any ? "<br/><span class=\"nowrap\">" : "<span class=\"nowrap\">", f);
                html_verdict(f, render_standing(&k), rep->run.higher_is_better, text);
                fputs("</span>", f);
                any = true;
        }
        if (!any)
                fputs("no comparison", f);
}

/* --- the index ------------------------------------------------------------------------------ */

static void experiments_table(FILE *f, const Site *site) {
        fputs("<h2>Experiments</h2>\n<p>Each experiment's latest run on each machine (by start time) and "
              "each variant's ratio to its baseline across the run's cells (geometric mean) with the "
              "run's verdict. The experiment's name leads to its timelines, a run to its report.</p>\n"
              "<div class=\"scroll\"><table>\n<tr><th>experiment</th>",
              f);
        for (char **m = site->machines; m && *m; m++) {
                fputs("<th class=\"nowrap\">", f);
                html_text(f, *m);
                fputs("</th>", f);
        }
        fputs("</tr>\n", f);
        char path[512];
        for (char **e = site->experiments; e && *e; e++) {
                fputs("<tr><td>", f);
                fputs("<span class=\"nowrap\">", f);
                site_link(f, 0, site_experiment_path(*e, path, sizeof(path)), *e);
                fputs("</span><br/><span class=\"note\">", f);
                site_link(f, 0, site_fleet_path(*e, path, sizeof(path)), "across machines");
                fputs("</span></td>", f);
                for (char **m = site->machines; m && *m; m++) {
                        const RunSummary *run = site_latest(site, *e, *m);
                        fputs("<td>", f);
                        if (!run) {
                                fputs("-</td>", f);
                                continue;
                        }
                        char text[160];
                        snprintf(text, sizeof(text), "run %lld", (long long) run->id);
                        site_link(f, 0, site_run_path(run->id, path, sizeof(path)), text);
                        fprintf(f, " <span class=\"note nowrap\">%.10s %.5s", run->started_at,
                                strlen(run->started_at) >= 16 ? run->started_at + 11 : "");
                        fputs(strcmp(run->status, "done") == 0 ? "" : ", ", f);
                        html_text(f, strcmp(run->status, "done") == 0 ? "" : run->status);
                        fputs("</span><br/>", f);
                        _cleanup_(query_report_freep) Report *rep = NULL;
                        if (query_report(site->store, run->id, NULL, &rep) >= 0)
                                verdicts_line(f, rep);
                        fputs("</td>", f);
                }
                fputs("</tr>\n", f);
        }
        fputs("</table></div>\n", f);
}

static void suites_table(FILE *f, const Site *site) {
        if (site->n_suites == 0)
                return;
        fputs("<h2>Suites</h2>\n<p>Each <code>alloclab suite</code> invocation, newest first: its "
              "workloads' ratios to the baseline in time and in peak RSS.</p>\n<table>\n"
              "<tr><th>suite</th><th>machine</th><th>workloads</th></tr>\n",
              f);
        for (size_t i = 0; i < site->n_suites; i++) {
                char path[512], count[32];
                fputs("<tr><td>", f);
                site_link(f, 0, site_suite_path(&site->suites[i], path, sizeof(path)),
                          site->suites[i].label);
                fputs("</td><td>", f);
                html_text(f, site->suites[i].machine);
                snprintf(count, sizeof(count), "%zu", site->suites[i].n_runs);
                fputs("</td><td class=\"num\">", f);
                html_text(f, count);
                fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
}

int site_index_page(FILE *f, const Site *site) {
        html_page_start(f, "alloclab results", NULL);
        fprintf(f, "<h1>alloclab results</h1>\n<p>%zu runs of %zu experiments on %zu machines", site->n_runs,
                strv_length(site->experiments), strv_length(site->machines));
        if (site->n_runs) {
                fputs("; the latest started ", f);
                html_text(f, site->runs[0].started_at);
        }
        fputs(".</p>\n", f);
        experiments_table(f, site);
        suites_table(f, site);
        html_page_end(f);
        return ferror(f) ? -EIO : 0;
}

/* --- an experiment over time ------------------------------------------------------------------ */

static void runs_table(FILE *f, const Site *site, const char *experiment, const char *machine) {
        fputs("<details><summary>Its runs</summary><div class=\"scroll\"><table>\n"
              "<tr><th>run</th><th>started</th><th>label</th><th>commit</th><th>status</th></tr>\n",
              f);
        for (size_t i = 0; i < site->n_runs; i++) {
                const RunSummary *run = &site->runs[i];
                if (strcmp(run->experiment, experiment) != 0 || strcmp(run->machine, machine) != 0)
                        continue;
                char path[64], text[32];
                snprintf(text, sizeof(text), "%lld", (long long) run->id);
                fputs("<tr><td>", f);
                site_link(f, 1, site_run_path(run->id, path, sizeof(path)), text);
                fputs("</td><td>", f);
                html_text(f, run->started_at);
                fputs("</td><td>", f);
                html_text(f, run->label ? run->label : "");
                fputs("</td><td><code>", f);
                html_text(f, run->commit ? run->commit : "");
                fputs("</code></td><td>", f);
                html_text(f, run->status);
                fputs(run->pruned_at ? " (pruned)</td></tr>\n" : "</td></tr>\n", f);
        }
        fputs("</table></div></details>\n", f);
}

/* A variant's colour: by its place among the names the series carry, as the runs' reports
 * colour their variants when every run has the same ones. */
static const char *series_colour(const History *h, const char *variant) {
        size_t k = 0;
        for (size_t s = 0; s < h->n_series; s++) {
                bool earlier = false;
                for (size_t t = 0; t < s && !earlier; t++)
                        earlier = strcmp(h->series[t].variant, h->series[s].variant) == 0;
                if (strcmp(h->series[s].variant, variant) == 0)
                        return html_colour(k);
                k += !earlier;
        }
        return html_colour(k);
}

int site_experiment_page(FILE *f, const Site *site, const char *experiment) {
        char title[512], nav[1024], fleet[512];
        snprintf(title, sizeof(title), "%s over time", experiment);
        snprintf(nav, sizeof(nav), "%s<a href=\"../%s\">across machines</a>", up,
                 site_fleet_path(experiment, fleet, sizeof(fleet)));
        titled_page_start(f, title, nav);
        _cleanup_(history_freep) History *h = NULL;
        HistoryQuery q = { .experiment = experiment, .last = site->n_runs };
        int r = query_history(site->store, &q, &h);
        if (r == -ENOENT)
                fputs("<p>No finished run yet.</p>\n", f);
        else if (r < 0)
                return r;
        else
                fprintf(f,
                        "<p>Each run's median of %s with its 95%% interval, per machine, cell and variant, "
                        "in the order the runs ran; red triangles pointing up are regressions, green ones "
                        "pointing down improvements, each confirmed by the run after it; hollow dashed ones "
                        "are tentative "
                        "(docs/analysis.md). A point leads to its run's report.</p>\n",
                        h->metric);
        for (char **m = site->machines; m && *m; m++) {
                if (!site_latest(site, experiment, *m))
                        continue;
                fputs("<h2>On ", f);
                html_text(f, *m);
                fputs("</h2>\n", f);
                for (size_t s = 0; h && s < h->n_series; s++) {
                        const HistorySeries *series = &h->series[s];
                        if (strcmp(series->machine, *m) != 0)
                                continue;
                        char caption[512];
                        snprintf(caption, sizeof(caption), "[%s] %s", series->cell, series->variant);
                        HistoryFigure how = { caption, series_colour(h, series->variant), "../run/", 1000 };
                        history_figure(f, h, series, &how);
                }
                runs_table(f, site, experiment, *m);
        }
        html_page_end(f);
        return ferror(f) ? -EIO : 0;
}

/* --- an experiment across machines -------------------------------------------------------------- */

static void machines_table(FILE *f, const Fleet *fleet) {
        fputs("<div class=\"scroll\"><table>\n<tr><th>machine</th><th>host</th>"
              "<th>hardware (CPU, CPUs, kernel, THP)</th><th>run</th><th>started</th><th>Slurm job</th>"
              "</tr>\n",
              f);
        for (size_t i = 0; i < fleet->n_machines; i++) {
                const FleetMachine *m = &fleet->machines[i];
                char path[64], text[32];
                snprintf(text, sizeof(text), "%lld", (long long) m->report->run.id);
                fputs("<tr><td>", f);
                html_text(f, m->machine);
                fputs("</td><td>", f);
                html_text(f, m->hostname);
                fputs("</td><td>", f);
                html_text(f, m->hardware ? m->hardware : "unknown");
                fputs("</td><td>", f);
                site_link(f, 1, site_run_path(m->report->run.id, path, sizeof(path)), text);
                fputs("</td><td>", f);
                html_text(f, m->report->run.started_at);
                fputs("</td><td>", f);
                html_text(f, m->slurm ? m->slurm : "-");
                fputs("</td></tr>\n", f);
        }
        fputs("</table></div>\n", f);
}

/* One group per cell and variant of the first machine's run, a row per machine that compared
 * it with its baseline; *groups holds the groups' names. */
static int fleet_rows(const Fleet *fleet, RatioRow *rows, size_t cap, char ***groups, size_t *ret_n) {
        const Report *first = fleet->machines[0].report;
        size_t n = 0;
        for (size_t c = 0; c < first->n_cells; c++)
                for (size_t v = 0; v < first->n_variants; v++) {
                        char *group = NULL;
                        if (v == first->baseline)
                                continue;
                        int r = asprintf(&group, "[%s] %s", first->cell_labels[c], first->variant_names[v]);
                        if (r < 0 || strv_consume(groups, group) < 0)
                                return -ENOMEM;
                        for (size_t i = 0; i < fleet->n_machines && n < cap; i++) {
                                const Report *rep = fleet->machines[i].report;
                                const ReportEntry *e = report_entry_named(rep, first->cell_labels[c],
                                                                          first->variant_names[v]);
                                char mark[48];
                                if (e && e->has_comparison)
                                        rows[n++] = ratio_row(rep, &e->comparison, group,
                                                              fleet->machines[i].machine);
                                else if (e && (e->excluded_reason || e->n_failed > 0)) {
                                        render_failure_mark(e, mark, sizeof(mark));
                                        rows[n++] =
                                                ratio_row_missing(group, fleet->machines[i].machine, mark);
                                }
                        }
                }
        *ret_n = n;
        return 0;
}

int site_fleet_page(FILE *f, const Site *site, const char *experiment) {
        char title[512], nav[1024], timelines[512];
        snprintf(title, sizeof(title), "%s across machines", experiment);
        snprintf(nav, sizeof(nav), "%s<a href=\"../%s\">timelines</a>", up,
                 site_experiment_path(experiment, timelines, sizeof(timelines)));
        titled_page_start(f, title, nav);
        _cleanup_(fleet_freep) Fleet *fleet = NULL;
        int r = query_fleet(site->store, &(FleetQuery){ .experiment = experiment }, &fleet);
        if (r == -ENOENT) {
                fputs("<p>No finished run yet.</p>\n", f);
                html_page_end(f);
                return ferror(f) ? -EIO : 0;
        }
        if (r < 0)
                return r;
        fputs("<p>The latest finished run of each machine, by start time. Each ratio is a machine's own: "
              "its variant against its baseline within its run, with its interval and verdict; samples "
              "of different machines are never pooled (<code>alloclab fleet</code> adds the summary "
              "across them).</p>\n",
              f);
        machines_table(f, fleet);
        _cleanup_strv_free_ char **notes = fleet_notes(fleet);
        for (char **note = notes; note && *note; note++) {
                fputs("<p class=\"warn\">Note: ", f);
                html_text(f, *note);
                fputs(".</p>\n", f);
        }
        size_t cap = 0;
        for (size_t i = 0; i < fleet->n_machines; i++)
                cap += fleet->machines[i].report->n_cells * fleet->machines[i].report->n_variants;
        _cleanup_free_ RatioRow *rows = calloc(cap + 1, sizeof(RatioRow));
        _cleanup_strv_free_ char **groups = NULL;
        const Report *first = fleet->machines[0].report;
        size_t n = 0;
        if (!rows || fleet_rows(fleet, rows, cap, &groups, &n) < 0)
                return -ENOMEM;
        if (n > 0) {
                char x_title[256];
                snprintf(x_title, sizeof(x_title), "ratio to %s in %s (%s is better)",
                         first->variant_names[first->baseline], first->run.metric,
                         first->run.higher_is_better ? "more" : "less");
                ratio_chart(f, "Each machine's ratio to its baseline", x_title, rows, n, false);
                ratio_table(f, "cell and variant", "machine", rows, n);
        } else
                fputs("<p>No machine compared a variant with its baseline.</p>\n", f);
        html_page_end(f);
        return ferror(f) ? -EIO : 0;
}

/* --- a suite invocation ------------------------------------------------------------------------- */

/* The verdict a suite's word stands for ("faster", "lower": lower; "slower", "higher": higher). */
static Verdict word_verdict(const char *word) {
        if (!word)
                return VERDICT_INCONCLUSIVE;
        if (strcmp(word, "faster") == 0 || strcmp(word, "lower") == 0)
                return VERDICT_LOWER;
        if (strcmp(word, "slower") == 0 || strcmp(word, "higher") == 0)
                return VERDICT_HIGHER;
        return strcmp(word, "same") == 0 ? VERDICT_SAME : VERDICT_INCONCLUSIVE;
}

static double number_or_nan(const json_t *v) {
        return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The suite summary's ratios of one measure ("" for the run's metric, "peak_rss_" for peak RSS)
 * as rows: per workload, its variants but the baseline. */
static size_t suite_rows(const json_t *doc, const SuiteRun *runs, const char *measure, RatioRow *rows,
                         size_t cap) {
        size_t n = 0, i;
        const json_t *workload;
        char key[64];
        json_array_foreach(json_object_get(doc, "workloads"), i, workload) {
                size_t v;
                const json_t *variant;
                json_array_foreach(json_object_get(workload, "variants"), v, variant) {
                        snprintf(key, sizeof(key), "%sratio", measure);
                        double ratio = number_or_nan(json_object_get(variant, key));
                        const char *group = json_string_value(json_object_get(workload, "workload")),
                                   *name = json_string_value(json_object_get(variant, "name")),
                                   *failure = json_string_value(json_object_get(variant, "failure"));
                        if (n >= cap || (isnan(ratio) && !failure))
                                continue; /* the baseline */
                        if (isnan(ratio)) {
                                rows[n++] = ratio_row_missing(group, name, failure);
                                continue;
                        }
                        snprintf(key, sizeof(key), "%s%s", measure, measure[0] ? "ci_low" : "ratio_ci_low");
                        double lo = number_or_nan(json_object_get(variant, key));
                        snprintf(key, sizeof(key), "%s%s", measure,
                                 measure[0] ? "ci_high" : "ratio_ci_high");
                        double hi = number_or_nan(json_object_get(variant, key));
                        snprintf(key, sizeof(key), "%sverdict", measure);
                        const char *word = json_string_value(json_object_get(variant, key));
                        rows[n++] = (RatioRow){
                                .group = group,
                                .name = name,
                                .ratio = ratio,
                                .lo = lo,
                                .hi = hi,
                                .verdict = word_verdict(word),
                                .verdict_text = !word                    ? ""
                                                : strcmp(word, "~") == 0 ? "inconclusive"
                                                                         : word,
                                .higher_is_better = measure[0] ? false : runs[i].rep->run.higher_is_better,
                        };
                }
        }
        return n;
}

/* The summary's lines (suite_print_overall) as a list. */
static int overall_list(FILE *f, const SuiteRun *runs, size_t n) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&text, &size);
        if (!m)
                return -ENOMEM;
        suite_print_overall(m, runs, n, "");
        if (!memstream_text(m, &text))
                return -ENOMEM;
        bool list = false;
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                if (!*line)
                        continue;
                if (!list && line[strlen(line) - 1] == ':') {
                        fputs("<p>", f);
                        html_text(f, line);
                        fputs("</p>\n<ul>\n", f);
                        list = true;
                        continue;
                }
                fputs(list ? "<li>" : "<p>", f);
                html_text(f, line);
                fputs(list ? "</li>\n" : "</p>\n", f);
        }
        if (list)
                fputs("</ul>\n", f);
        return 0;
}

int site_suite_page(FILE *f, const Site *site, const SiteSuite *suite) {
        char title[512];
        snprintf(title, sizeof(title), "%s on %s", suite->label, suite->machine);
        titled_page_start(f, title, up);
        _cleanup_free_ SuiteRun *runs = calloc(suite->n_runs + 1, sizeof(SuiteRun));
        if (!runs)
                return -ENOMEM;
        for (size_t i = 0; i < suite->n_runs; i++) {
                const char *name = suite->runs[i]->experiment;
                runs[i] = (SuiteRun){
                        .workload = strncmp(name, SITE_SUITE_EXPERIMENT, strlen(SITE_SUITE_EXPERIMENT)) == 0
                                            ? name + strlen(SITE_SUITE_EXPERIMENT)
                                            : name,
                        .run = suite->runs[i]->id,
                };
        }
        size_t n = suite->n_runs;
        int r = suite_summary_read(site->store, "publish", runs, &n);
        if (r == -ENOMEM || n == 0) {
                suite_summary_free(runs, n);
                return r == -ENOMEM ? r : -EIO;
        }
        json_auto_t *doc = suite_summary_json(runs, n);
        json_auto_t *table = suite_workload_table(runs, n);
        size_t cap = 0;
        for (size_t i = 0; i < n; i++)
                cap += runs[i].rep->n_variants;
        _cleanup_free_ RatioRow *rows = calloc(cap + 1, sizeof(RatioRow));
        if (!doc || !table || !rows) {
                suite_summary_free(runs, n);
                return -ENOMEM;
        }
        const char *baseline = json_string_value(json_object_get(doc, "baseline"));
        fprintf(f,
                "<p>%zu workloads, each one run (the workload's name leads to its report); each "
                "allocator's ratio to %s across the workload's cells (geometric mean) with its %.4g%% "
                "interval and verdict, every workload's comparisons corrected as one family. The numbers "
                "are those of <code>alloclab suite --format json</code>.</p>\n<ul>\n",
                n, baseline, 100 * render_interval_level(runs[0].rep));
        for (size_t i = 0; i < n; i++) {
                char path[64];
                fputs("<li>", f);
                site_link(f, 1, site_run_path(runs[i].run, path, sizeof(path)), runs[i].workload);
                fputs(": ", f);
                html_text(f, runs[i].rep->run.metric);
                fputs("</li>\n", f);
        }
        fputs("</ul>\n<h2>Each workload's metric</h2>\n", f);
        char x_title[256];
        size_t k = suite_rows(doc, runs, "", rows, cap);
        snprintf(x_title, sizeof(x_title), "ratio to %s in the workload's metric (time: less is better)",
                 baseline);
        if (k) {
                ratio_chart(f, "Each workload's metric relative to the baseline", x_title, rows, k, true);
                ratio_table(f, "workload", "allocator", rows, k);
        }
        fputs("<h2>Peak RSS</h2>\n", f);
        k = suite_rows(doc, runs, "peak_rss_", rows, cap);
        snprintf(x_title, sizeof(x_title), "peak RSS relative to %s (less is better)", baseline);
        if (k) {
                ratio_chart(f, "Each workload's peak RSS relative to the baseline", x_title, rows, k, true);
                ratio_table(f, "workload", "allocator", rows, k);
        } else
                fputs("<p>No workload measured peak RSS.</p>\n", f);
        fputs("<h2>Summary</h2>\n", f);
        html_table(f, table);
        r = overall_list(f, runs, n);
        suite_summary_free(runs, n);
        html_page_end(f);
        return r < 0 ? r : ferror(f) ? -EIO : 0;
}
