/* SPDX-License-Identifier: MIT */
/*
 * `alloclab fleet EXPERIMENT`: one experiment on many hosts (docs/fleet.md). Per host, its latest
 * finished run's ratio of each variant to the baseline, measured within that run; then, with
 * hosts as the unit, the geometric mean and range of those ratios and on how many hosts each
 * verdict holds. Samples of different hosts are never pooled: machines differ by more than any
 * allocator does, and only a ratio within one run on one machine is a measurement.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/render.h"
#include "db/fleet.h"
#include "util/cleanup.h"
#include "util/strv.h"

static const char fleet_usage[] =
        "Usage: alloclab fleet EXPERIMENT [--db PATH] [--format table|markdown|csv|json]\n"
        "\n"
        "The experiment across hosts (runs merged with alloclab import): per host name its latest\n"
        "finished run, and per cell and variant that run's ratio to its baseline with its interval\n"
        "and verdict (by that run's rule and correction); then, hosts as the unit, the geometric mean and "
        "range of the ratios\n"
        "and on how many hosts each verdict holds. Samples of different hosts are never pooled.\n";

/* Where a variant of a cell is in a host's report, or NULL. */
static const ReportEntry *entry_of(const Report *rep, const char *cell, const char *variant) {
        for (size_t c = 0; c < rep->n_cells; c++)
                for (size_t v = 0; v < rep->n_variants; v++)
                        if (strcmp(rep->cell_labels[c], cell) == 0 &&
                            strcmp(rep->variant_names[v], variant) == 0)
                                return &rep->entries[c * rep->n_variants + v];
        return NULL;
}

/* The (cell, variant) pairs compared with a baseline on any host, in the order hosts list them. */
static int pairs_of(const Fleet *f, char ***ret_cells, char ***ret_variants) {
        _cleanup_strv_free_ char **cells = NULL, **variants = NULL;
        for (size_t h = 0; h < f->n_hosts; h++) {
                const Report *rep = f->hosts[h].report;
                for (size_t c = 0; c < rep->n_cells; c++)
                        for (size_t v = 0; v < rep->n_variants; v++) {
                                if (v == rep->baseline || v == rep->aa_variant)
                                        continue;
                                bool seen = false;
                                for (size_t i = 0; cells && cells[i] && !seen; i++)
                                        seen = strcmp(cells[i], rep->cell_labels[c]) == 0 &&
                                               strcmp(variants[i], rep->variant_names[v]) == 0;
                                if (!seen && (strv_append(&cells, rep->cell_labels[c]) < 0 ||
                                              strv_append(&variants, rep->variant_names[v]) < 0))
                                        return -ENOMEM;
                        }
        }
        *ret_cells = TAKE_PTR(cells);
        *ret_variants = TAKE_PTR(variants);
        return 0;
}

/* One row per cell, variant and host: what each host measured (csv, json). */
static json_t *hosts_table(const Fleet *f, char **cells, char **variants) {
        static const char *const names[] = {
                "experiment", "cell",  "variant",      "host",          "run_id",  "uuid",
                "baseline",   "ratio", "ratio_ci_low", "ratio_ci_high", "p_value", "verdict",
        };
        json_t *table = render_table_new(names, ELEMENTSOF(names));
        for (size_t i = 0; cells && cells[i]; i++)
                for (size_t h = 0; h < f->n_hosts; h++) {
                        const Report *rep = f->hosts[h].report;
                        const ReportEntry *e = entry_of(rep, cells[i], variants[i]);
                        bool k = e && e->has_comparison;
                        json_t *values[] = {
                                json_string(f->experiment),
                                json_string(cells[i]),
                                json_string(variants[i]),
                                json_string(f->hosts[h].hostname),
                                json_integer(rep->run.id),
                                json_string(rep->run.uuid),
                                json_string(rep->variant_names[rep->baseline]),
                                k ? json_real(e->comparison.ratio) : json_null(),
                                k ? json_real(e->comparison.lo) : json_null(),
                                k ? json_real(e->comparison.hi) : json_null(),
                                k ? json_real(e->comparison.p) : json_null(),
                                k ? json_string(verdict_word(e->comparison.verdict,
                                                             render_time_metric(rep->run.metric)))
                                  : json_null(),
                        };
                        render_table_add_row(table, values, ELEMENTSOF(values));
                }
        return table;
}

/* Hosts as the unit: the geometric mean and range of the hosts' ratios and the verdict count. */
typedef struct Summary {
        size_t n;                      /* hosts that compared the variant with their baseline */
        double geomean, min, max;      /* of their ratios */
        size_t verdicts[_VERDICT_MAX]; /* hosts per verdict */
} Summary;

static Summary summarize(const Fleet *f, const char *cell, const char *variant) {
        Summary s = { .min = INFINITY, .max = -INFINITY };
        double log_sum = 0;
        for (size_t h = 0; h < f->n_hosts; h++) {
                const ReportEntry *e = entry_of(f->hosts[h].report, cell, variant);
                if (!e || !e->has_comparison)
                        continue;
                s.n++;
                log_sum += log(e->comparison.ratio);
                s.min = fmin(s.min, e->comparison.ratio);
                s.max = fmax(s.max, e->comparison.ratio);
                s.verdicts[e->comparison.verdict]++;
        }
        s.geomean = s.n ? exp(log_sum / (double) s.n) : NAN;
        return s;
}

/* "faster on 2 of 2 hosts", "slower on 1, inconclusive on 1 of 2 hosts". */
static void verdict_count(const Summary *s, bool time, char *buf, size_t size) {
        static const Verdict order[] = { VERDICT_HIGHER, VERDICT_LOWER, VERDICT_SAME, VERDICT_INCONCLUSIVE };
        size_t n = 0;
        buf[0] = 0;
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                if (s->verdicts[order[i]] > 0 && n < size)
                        n += (size_t) snprintf(buf + n, size - n, "%s%s on %zu", n ? ", " : "",
                                               verdict_word(order[i], time), s->verdicts[order[i]]);
        if (n < size)
                snprintf(buf + n, size - n, " of %zu host%s", s->n, s->n == 1 ? "" : "s");
}

static json_t *summary_json(const Fleet *f, char **cells, char **variants, bool time) {
        json_t *rows = json_array();
        for (size_t i = 0; cells && cells[i]; i++) {
                Summary s = summarize(f, cells[i], variants[i]);
                json_t *verdicts = json_object();
                for (Verdict v = 0; v < _VERDICT_MAX; v++)
                        json_object_set_new(verdicts, verdict_word(v, time),
                                            json_integer((json_int_t) s.verdicts[v]));
                json_array_append_new(
                        rows, json_pack("{s:s, s:s, s:I, s:o, s:o, s:o, s:o}", "cell", cells[i], "variant",
                                        variants[i], "hosts", (json_int_t) s.n, "geomean_ratio",
                                        s.n ? json_real(s.geomean) : json_null(), "min_ratio",
                                        s.n ? json_real(s.min) : json_null(), "max_ratio",
                                        s.n ? json_real(s.max) : json_null(), "verdicts", verdicts));
        }
        return rows;
}

/* For people: a column per host ("0.91x [0.89, 0.93] faster") and the summary columns. */
static json_t *display_table(const Fleet *f, char **cells, char **variants, bool time) {
        json_t *columns = json_pack("[s, s]", "cell", "variant");
        for (size_t h = 0; h < f->n_hosts; h++)
                json_array_append_new(columns, json_string(f->hosts[h].hostname));
        json_array_append_new(columns, json_string("hosts: geomean"));
        json_array_append_new(columns, json_string("range"));
        json_array_append_new(columns, json_string("verdict"));
        json_t *rows = json_array();
        for (size_t i = 0; cells && cells[i]; i++) {
                json_t *row = json_pack("{s:s, s:s}", "cell", cells[i], "variant", variants[i]);
                for (size_t h = 0; h < f->n_hosts; h++) {
                        const ReportEntry *e = entry_of(f->hosts[h].report, cells[i], variants[i]);
                        char text[128] = "-", word[64];
                        if (e && e->has_comparison)
                                snprintf(text, sizeof(text), "%.2fx [%.2f, %.2f] %s", e->comparison.ratio,
                                         e->comparison.lo, e->comparison.hi,
                                         render_verdict_text(e->comparison.verdict, e->comparison.detectable,
                                                             time, word, sizeof(word)));
                        json_object_set_new(row, f->hosts[h].hostname, json_string(text));
                }
                Summary s = summarize(f, cells[i], variants[i]);
                char geomean[32] = "-", range[64] = "-", verdict[128];
                if (s.n) {
                        snprintf(geomean, sizeof(geomean), "%.2fx", s.geomean);
                        snprintf(range, sizeof(range), "%.2f-%.2f", s.min, s.max);
                }
                verdict_count(&s, time, verdict, sizeof(verdict));
                json_object_set_new(row, "hosts: geomean", json_string(geomean));
                json_object_set_new(row, "range", json_string(range));
                json_object_set_new(row, "verdict", json_string(verdict));
                json_array_append_new(rows, row);
        }
        return json_pack("{s:o, s:o}", "columns", columns, "rows", rows);
}

static int render_fleet(FILE *f, OutputFormat format, const Fleet *fleet) {
        _cleanup_strv_free_ char **cells = NULL, **variants = NULL;
        if (pairs_of(fleet, &cells, &variants) < 0)
                return -ENOMEM;
        const Report *first = fleet->hosts[0].report;
        bool time = render_time_metric(first->run.metric);
        json_auto_t *per_host = hosts_table(fleet, cells, variants);
        if (!per_host)
                return -ENOMEM;
        if (format == FORMAT_CSV)
                return render_rows(f, format, per_host);
        if (format == FORMAT_JSON) {
                json_auto_t *hosts = json_array();
                for (size_t h = 0; h < fleet->n_hosts; h++) {
                        const FleetHost *x = &fleet->hosts[h];
                        json_array_append_new(
                                hosts, json_pack("{s:s, s:I, s:s, s:s, s:s?}", "host", x->hostname, "run_id",
                                                 (json_int_t) x->report->run.id, "uuid", x->report->run.uuid,
                                                 "started_at", x->report->run.started_at, "fingerprint",
                                                 x->fingerprint));
                }
                json_auto_t *root = json_pack("{s:s, s:s, s:O, s:O, s:o}", "experiment", fleet->experiment,
                                              "metric", first->run.metric, "hosts", hosts, "ratios",
                                              json_object_get(per_host, "rows"), "summary",
                                              summary_json(fleet, cells, variants, time));
                int r = root ? json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
                fputc('\n', f);
                return r < 0 || ferror(f) ? -EIO : 0;
        }
        bool markdown = format == FORMAT_MARKDOWN;
        fprintf(f, "%s%s on %zu host%s: the latest finished run of each, metric %s\n\n",
                markdown ? "### fleet: " : "fleet: ", fleet->experiment, fleet->n_hosts,
                fleet->n_hosts == 1 ? "" : "s", first->run.metric);
        json_auto_t *hosts = json_pack("{s:[s, s, s, s, s], s:[]}", "columns", "host", "run", "uuid",
                                       "started", "fingerprint", "rows");
        for (size_t h = 0; h < fleet->n_hosts; h++) {
                const FleetHost *x = &fleet->hosts[h];
                char run[32];
                snprintf(run, sizeof(run), "%lld", (long long) x->report->run.id);
                json_array_append_new(json_object_get(hosts, "rows"),
                                      json_pack("{s:s, s:s, s:s, s:s, s:s%}", "host", x->hostname, "run",
                                                run, "uuid", x->report->run.uuid, "started",
                                                x->report->run.started_at, "fingerprint",
                                                x->fingerprint ? x->fingerprint : "unknown", (size_t) 12));
        }
        json_auto_t *display = display_table(fleet, cells, variants, time);
        int r = hosts && display ? render_rows(f, markdown ? FORMAT_MARKDOWN : FORMAT_TABLE, hosts)
                                 : -ENOMEM;
        if (r >= 0) {
                fputc('\n', f);
                r = render_rows(f, markdown ? FORMAT_MARKDOWN : FORMAT_TABLE, display);
        }
        if (r < 0)
                return r;
        fprintf(f,
                "\nEach host: the variant / its baseline within that host's run (the Hodges-Lehmann "
                "estimate),\n"
                "its interval and verdict by the run's rule and correction (docs/analysis.md). Hosts: the\n"
                "geometric mean and range of those ratios, and on how many hosts each verdict holds;\n"
                "samples of different hosts are never pooled.\n");
        return ferror(f) ? -EIO : 0;
}

int cmd_fleet(int argc, char **argv) {
        if (cli_wants_help(argc, argv, fleet_usage))
                return EXIT_OK;
        const char *db_path = NULL;
        OutputFormat format = FORMAT_TABLE;
        int e = cli_parse_db_format("fleet", argc, argv, &db_path, &format, NULL);
        if (e != EXIT_OK)
                return e;
        if (argc - optind != 1) {
                cli_error("fleet", "expected exactly one EXPERIMENT (see alloclab runs)");
                return EXIT_USAGE;
        }
        _cleanup_(store_freep) Store *store = NULL;
        e = cli_open_for_reading("fleet", db_path, &store);
        if (e != EXIT_OK)
                return e;
        _cleanup_(fleet_freep) Fleet *fleet = NULL;
        int r = query_fleet(store, argv[optind], &fleet);
        if (r == -ENOENT) {
                cli_error("fleet", "no finished run of experiment '%s'", argv[optind]);
                return EXIT_ENVIRONMENT;
        }
        if (r < 0)
                return cli_query_failed("fleet", store, 0, r);
        if (render_fleet(stdout, format, fleet) < 0 || fflush(stdout) != 0) {
                cli_error("fleet", "cannot write the table");
                return EXIT_ENVIRONMENT;
        }
        return EXIT_OK;
}
