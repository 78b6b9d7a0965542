/* SPDX-License-Identifier: MIT */
/*
 * hyperfine's and pyperf's JSON: imported as runs, and a run exported in hyperfine's layout.
 *
 * An import becomes an ordinary run: a spec is written for it (one variant per hyperfine command
 * or pyperf benchmark, each running its command, verify: none, probe: never), planned, and its
 * times go through the recorder's sink as the samples of that plan, with the statistics computed
 * as the runner computes them. The host is this machine's (neither tool records one), the
 * trigger is "import", and the run's message names the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/interop.h"
#include "configs/spec-text.h"
#include "db/record.h"
#include "runner/host.h"
#include "runner/plan.h"
#include "runner/run.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/message.h"

extern char **environ;

/* One hyperfine command or pyperf benchmark. */
typedef struct Series {
        char *name;
        char *command;
        double *times; /* seconds */
        int *exit_codes;
        double *memory; /* bytes per run, or NULL */
        size_t n;
} Series;

typedef struct Import {
        const char *tool; /* "hyperfine" or "pyperf" */
        Series *series;
        size_t n;
} Import;

static void import_done(Import *im) {
        for (size_t i = 0; i < im->n; i++) {
                free(im->series[i].name);
                free(im->series[i].command);
                free(im->series[i].times);
                free(im->series[i].exit_codes);
                free(im->series[i].memory);
        }
        free(im->series);
}

bool interop_is_json(const char *path) {
        /* Never blocks: a FIFO is not opened for good, and is no JSON file (import refuses it). */
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                safe_close(fd);
                return false;
        }
        FILE *f = fdopen(fd, "re");
        if (!f) {
                safe_close(fd);
                return false;
        }
        int c;
        while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
                ;
        fclose(f);
        return c == '{' || c == '[';
}

static Series *add_series(Import *im, const char *name, const char *command, size_t n) {
        Series *grown = realloc(im->series, (im->n + 1) * sizeof(Series));
        if (!grown)
                return NULL;
        im->series = grown;
        Series *s = &grown[im->n++];
        *s = (Series){ .name = strdup(name), .command = strdup(command), .n = n };
        s->times = calloc(n + 1, sizeof(double));
        s->exit_codes = calloc(n + 1, sizeof(int));
        return s->name && s->command && s->times && s->exit_codes ? s : NULL;
}

/* What a time and a memory figure of another tool may be: a sample alloclab could have taken
 * (no child runs longer than a spec's longest timeout), a size a machine could have. */
#define IMPORT_MAX_SECONDS ((double) SPEC_MAX_TIMEOUT_NS / 1e9)
#define IMPORT_MAX_BYTES   9007199254740992.0 /* 2^53 */

/* A JSON array of n numbers from 0 to max into values. Otherwise fails with a message that
 * names the array (where, e.g. "results[0].times") and the first value that is not one. */
static int numbers(const json_t *array, size_t n, double max, const char *unit, double *values,
                   const char *where, char **ret_why) {
        if (!json_is_array(array) || json_array_size(array) != n)
                return message_fail(ret_why, -EINVAL, "%s is not an array of %zu numbers", where, n);
        for (size_t i = 0; i < n; i++) {
                const json_t *v = json_array_get(array, i);
                if (!json_is_number(v))
                        return message_fail(ret_why, -EINVAL, "%s[%zu] is not a number", where, i);
                values[i] = json_number_value(v);
                if (!(values[i] >= 0 && values[i] <= max)) /* also NaN */
                        return message_fail(ret_why, -EINVAL, "%s[%zu] is %g, which is not from 0 to %g %s",
                                            where, i, values[i], max, unit);
        }
        return 0;
}

/* hyperfine --export-json: {"results": [{"command", "times", "exit_codes", "memory_usage_byte"}]}. */
static int read_hyperfine(const json_t *doc, Import *im, char **ret_why) {
        const json_t *results = json_object_get(doc, "results");
        size_t i;
        const json_t *r;
        im->tool = "hyperfine";
        json_array_foreach(results, i, r) {
                const char *command = json_string_value(json_object_get(r, "command"));
                const json_t *times = json_object_get(r, "times");
                if (!command || !json_is_array(times) || json_array_size(times) == 0)
                        return message_fail(ret_why, -EINVAL, "result %zu has no command or no times",
                                            i + 1);
                size_t n = json_array_size(times);
                Series *s = add_series(im, command, command, n);
                if (!s)
                        return -ENOMEM;
                char where[64];
                snprintf(where, sizeof(where), "results[%zu].times", i);
                int e = numbers(times, n, IMPORT_MAX_SECONDS, "seconds", s->times, where, ret_why);
                if (e < 0)
                        return e;
                const json_t *codes = json_object_get(r, "exit_codes");
                for (size_t k = 0; json_is_array(codes) && k < n && k < json_array_size(codes); k++)
                        s->exit_codes[k] = (int) json_integer_value(json_array_get(codes, k));
                const json_t *memory = json_object_get(r, "memory_usage_byte");
                if (json_is_array(memory)) {
                        if (!(s->memory = calloc(n, sizeof(double))))
                                return -ENOMEM;
                        snprintf(where, sizeof(where), "results[%zu].memory_usage_byte", i);
                        if ((e = numbers(memory, n, IMPORT_MAX_BYTES, "bytes", s->memory, where, ret_why)) <
                            0)
                                return e;
                }
        }
        return 0;
}

/* pyperf's JSON: {"benchmarks": [{"metadata": {"name"}, "runs": [{"values": [...]}]}],
 * "metadata": {...}}; every value of every run is a sample (warm-ups are left out). */
static int read_pyperf(const json_t *doc, Import *im, char **ret_why) {
        const json_t *benchmarks = json_object_get(doc, "benchmarks"),
                     *common = json_object_get(doc, "metadata");
        size_t i;
        const json_t *b;
        im->tool = "pyperf";
        json_array_foreach(benchmarks, i, b) {
                const json_t *meta = json_object_get(b, "metadata");
                const char *name = json_string_value(json_object_get(meta, "name"));
                const char *unit = json_string_value(json_object_get(meta, "unit"));
                if (!name)
                        name = json_string_value(json_object_get(common, "name"));
                if (!unit)
                        unit = json_string_value(json_object_get(common, "unit"));
                if (!name)
                        return message_fail(ret_why, -EINVAL, "benchmark %zu has no name", i + 1);
                if (unit && strcmp(unit, "second") != 0)
                        return message_fail(ret_why, -EINVAL, "benchmark %s is in %s, not seconds", name,
                                            unit);
                const json_t *runs = json_object_get(b, "runs"), *run;
                size_t n = 0, k;
                json_array_foreach(runs, k, run) n += json_array_size(json_object_get(run, "values"));
                if (n == 0)
                        return message_fail(ret_why, -EINVAL, "benchmark %s has no values", name);
                const char *command = json_string_value(json_object_get(meta, "command"));
                Series *s = add_series(im, name, command ? command : name, n);
                if (!s)
                        return -ENOMEM;
                size_t at = 0;
                json_array_foreach(runs, k, run) {
                        const json_t *values = json_object_get(run, "values");
                        if (!values)
                                continue; /* a run of warm-ups only (pyperf's calibration) */
                        char where[96];
                        snprintf(where, sizeof(where), "benchmarks[%zu].runs[%zu].values", i, k);
                        int e = numbers(values, json_array_size(values), IMPORT_MAX_SECONDS, "seconds",
                                        s->times + at, where, ret_why);
                        if (e < 0)
                                return e;
                        at += json_array_size(values);
                }
        }
        return 0;
}

/* A variant name from a command or benchmark name: its identifier characters from the program's
 * base name on, unique. */
static void variant_name(const Import *im, size_t i, char *buf, size_t size) {
        const char *name = im->series[i].name, *slash = memrchr(name, '/', strcspn(name, " \t"));
        size_t k = 0;
        for (const char *p = slash ? slash + 1 : name; *p && k + 8 < size && k < 48; p++) {
                bool ok = spec_text_name_char(*p);
                if (ok || (k > 0 && buf[k - 1] != '_'))
                        buf[k++] = ok ? *p : '_';
        }
        while (k > 0 && buf[k - 1] == '_')
                k--;
        buf[k] = 0;
        /* The position makes it unique (and non-empty). */
        snprintf(buf + k, size - k, "%s%zu", k ? "-" : "command-", i + 1);
}

static char *import_spec(const Import *im, const char *experiment, const char *path) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        size_t samples = 0;
        for (size_t i = 0; i < im->n; i++)
                samples = im->series[i].n > samples ? im->series[i].n : samples;
        fprintf(f, "# Imported by alloclab import from %s's JSON.\nexperiment: ", im->tool);
        spec_text_scalar(f, experiment);
        fputs("\ndescription: ", f);
        char description[512];
        snprintf(description, sizeof(description), "imported from %s: %s", im->tool, path);
        spec_text_scalar(f, description);
        fputs("\ncommand: \"true\"\nallocators:", f);
        for (size_t i = 0; i < im->n; i++) {
                char name[64];
                variant_name(im, i, name, sizeof(name));
                fputs("\n  ", f);
                spec_text_scalar(f, name);
                /* A command as it was given, run by sh as hyperfine does; braces are literal. */
                fputs(": {command: ", f);
                spec_text_template(f, im->series[i].command, NULL);
                fputs("}", f);
        }
        fprintf(f, "\nsamples: %zu\nwarmup: 0\nverify: none\nprobe: never\n", samples);
        return memstream_text(f, &text);
}

/* The plan's step for a sample round of a variant in its only cell. */
static const PlanStep *sample_step(const Plan *p, uint32_t variant, uint32_t round, size_t *ret_index) {
        for (size_t i = 0; i < p->n_steps; i++)
                if (p->steps[i].phase == PHASE_SAMPLE && p->steps[i].variant == variant &&
                    p->steps[i].round == round) {
                        *ret_index = i;
                        return &p->steps[i];
                }
        return NULL;
}

/* The series' times as the plan's samples, then the cell's statistics, into the sink. */
static int replay(const Plan *p, const Import *im, const RunSink *sink, RunResult *res) {
        int r;
        _cleanup_free_ StatsRow *rows = calloc(2 * im->n, sizeof(StatsRow));
        if (!rows)
                return -ENOMEM;
        size_t n_rows = 0;
        for (uint32_t v = 0; v < im->n; v++) {
                const Series *s = &im->series[v];
                _cleanup_free_ double *ok = calloc(s->n + 1, sizeof(double)),
                                      *rss = calloc(s->n + 1, sizeof(double));
                if (!ok || !rss)
                        return -ENOMEM;
                size_t n_ok = 0;
                for (uint32_t k = 0; k < s->n; k++) {
                        Sample sample = { .env_offset = -1 };
                        if (!(sample.step = sample_step(p, v, k, &sample.step_index)))
                                return -EINVAL;
                        sample.status = s->exit_codes[k] == 0 ? SAMPLE_OK : SAMPLE_EXIT;
                        sample.spawn = (SpawnResult){ .end = SPAWN_EXITED,
                                                      .exit_code = s->exit_codes[k],
                                                      .wall_ns = (uint64_t) llround(s->times[k] * 1e9) };
                        if (s->memory)
                                sample.spawn.usage.ru_maxrss = (long) (s->memory[k] / 1024);
                        if ((r = sink->sample(sink->userdata, p, &sample)) < 0)
                                return r;
                        res->n_runs++;
                        res->n_failures += sample.status != SAMPLE_OK;
                        if (sample.status == SAMPLE_OK) {
                                rss[n_ok] = s->memory ? s->memory[k] : 0;
                                ok[n_ok++] = s->times[k];
                        }
                }
                if (n_ok == 0)
                        continue;
                rows[n_rows] = (StatsRow){ .variant = v, .metric = RUN_METRIC_WALL };
                if ((r = stats_compute(ok, n_ok, &rows[n_rows++].stats)) < 0)
                        return r;
                if (s->memory) {
                        rows[n_rows] = (StatsRow){ .variant = v, .metric = RUN_METRIC_MAXRSS };
                        if ((r = stats_compute(rss, n_ok, &rows[n_rows++].stats)) < 0)
                                return r;
                }
        }
        return n_rows ? sink->cell_stats(sink->userdata, p, 0, rows, n_rows) : 0;
}

/* The experiment's default name: TOOL-FILE, FILE's base name without .json, made an identifier. */
static void default_experiment(const char *tool, const char *path, char *buf, size_t size) {
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        size_t len = strlen(base);
        if (len > 5 && strcmp(base + len - 5, ".json") == 0)
                len -= 5;
        char prefix[32];
        snprintf(prefix, sizeof(prefix), "%s-", tool);
        spec_text_name(buf, size, prefix, base, len);
}

struct InteropRun {
        const char *path;
        Import im;
        Spec *spec;
        Plan *plan;
};

void interop_run_free(InteropRun *run) {
        if (!run)
                return;
        import_done(&run->im);
        plan_free(run->plan);
        spec_free(run->spec);
        free(run);
}

int interop_read(const char *path, const char *experiment, InteropRun **ret) {
        json_error_t error;
        json_auto_t *doc = json_load_file(path, 0, &error);
        if (!doc) {
                cli_error("import", "%s:%d:%d: %s", path, error.line, error.column, error.text);
                return EXIT_SPEC;
        }
        _cleanup_(interop_run_freep) InteropRun *run = calloc(1, sizeof(InteropRun));
        if (!run)
                return EXIT_ENVIRONMENT;
        run->path = path;
        Import *im = &run->im;
        _cleanup_free_ char *why = NULL;
        int r = json_is_array(json_object_get(doc, "results"))      ? read_hyperfine(doc, im, &why)
                : json_is_array(json_object_get(doc, "benchmarks")) ? read_pyperf(doc, im, &why)
                                                                    : -EPROTO;
        if (r == -EPROTO || (r >= 0 && im->n == 0)) {
                cli_error("import",
                          "%s: neither hyperfine's --export-json nor pyperf's JSON (no \"results\" "
                          "or \"benchmarks\")",
                          path);
                return EXIT_SPEC;
        }
        if (r < 0) {
                cli_error("import", "%s: %s", path, why ? why : strerror(-r));
                return r == -ENOMEM ? EXIT_ENVIRONMENT : EXIT_SPEC;
        }
        char name[80];
        default_experiment(im->tool, path, name, sizeof(name));
        _cleanup_free_ char *text = import_spec(im, experiment ? experiment : name, path);
        if (!text)
                return EXIT_ENVIRONMENT;
        int e = cli_load_spec_text("import", path, text, &run->spec);
        if (e != EXIT_OK)
                return e;
        _cleanup_free_ char *message = NULL;
        r = plan_new(run->spec, &(PlanOptions){ .caller_env = environ, .defer_cgroup = true }, &run->plan,
                     &message);
        if (r < 0) {
                cli_plan_error("import", run->spec, message ? message : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        *ret = TAKE_PTR(run);
        return EXIT_OK;
}

int interop_record(Store *store, InteropRun *run, int64_t *ret_run) {
        Host host = {};
        if (host_read(&host) < 0)
                return EXIT_ENVIRONMENT;
        _cleanup_free_ char *label = NULL;
        if (asprintf(&label, "imported from %s", run->im.tool) < 0)
                label = NULL;
        RecordContext ctx = { .trigger = "import", .origin_env = environ, .label = label };
        _cleanup_(record_freep) Recorder *rec = NULL;
        int r = record_begin(store, run->plan, &host, &ctx, &rec);
        host_done(&host);
        RunResult result = { .end = RUN_COMPLETED };
        if (r >= 0) {
                RunSink sink = record_sink(rec);
                r = replay(run->plan, &run->im, &sink, &result);
                _cleanup_free_ char *note = NULL;
                if (asprintf(&note, "imported from %s's JSON %s", run->im.tool, run->path) < 0)
                        note = NULL;
                int q = record_finish(rec, &result, r, note);
                r = r < 0 ? r : q;
        }
        if (r < 0) {
                cli_error("import", "cannot record %s: %s", run->path,
                          r == -EIO ? store_error(store) : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        *ret_run = record_run_id(rec);
        return EXIT_OK;
}

/* --- export ------------------------------------------------------------------------------ */

/* A hyperfine result for the measured samples of one (cell, variant), collected in one pass. */
typedef struct Group {
        const char *cell, *variant;
        json_t *times, *codes, *memory, *parameters;
        double user, sys;
} Group;

static json_t *group_result(const Group *g, bool one_cell) {
        size_t n = json_array_size(g->times);
        _cleanup_free_ double *values = calloc(n + 1, sizeof(double));
        if (!values)
                return NULL;
        double sum = 0, var = 0;
        for (size_t k = 0; k < n; k++)
                sum += values[k] = json_real_value(json_array_get(g->times, k));
        double mean = n ? sum / (double) n : 0;
        for (size_t k = 0; k < n; k++)
                var += (values[k] - mean) * (values[k] - mean);
        Stats st = {};
        if (stats_compute(values, n, &st) < 0)
                return NULL;
        char command[512];
        snprintf(command, sizeof(command), one_cell ? "%s" : "%s [%s]", g->variant, g->cell);
        json_t *result = json_pack("{s:s, s:f, s:o, s:f, s:f, s:f, s:f, s:f, s:O, s:O, s:O}", "command",
                                   command, "mean", mean, "stddev",
                                   n > 1 ? json_real(sqrt(var / (double) (n - 1))) : json_null(), "median",
                                   st.median, "user", n ? g->user / (double) n : 0.0, "system",
                                   n ? g->sys / (double) n : 0.0, "min", st.min, "max", st.max, "times",
                                   g->times, "memory_usage_byte", g->memory, "exit_codes", g->codes);
        if (result && json_object_size(g->parameters))
                json_object_set(result, "parameters", g->parameters);
        return result;
}

int interop_export_hyperfine(FILE *f, const json_t *samples) {
        const json_t *rows = json_object_get(samples, "rows"), *row;
        size_t n_rows = json_array_size(rows), n = 0, i;
        _cleanup_free_ Group *groups = calloc(n_rows + 1, sizeof(Group));
        json_auto_t *index = json_object(), *cells = json_object();
        if (!groups || !index || !cells)
                return -ENOMEM;
        json_array_foreach(rows, i, row) {
                const char *cell = json_string_value(json_object_get(row, "cell"));
                const char *variant = json_string_value(json_object_get(row, "variant"));
                const json_t *wall = json_object_get(row, "wall_ns");
                json_object_set_new(cells, cell, json_true());
                if (strcmp(json_string_value(json_object_get(row, "phase")), "sample") != 0 ||
                    !json_is_integer(wall))
                        continue;
                char key[1024];
                snprintf(key, sizeof(key), "%s\n%s", cell, variant);
                const json_t *at = json_object_get(index, key);
                Group *g = &groups[at ? json_integer_value(at) : (json_int_t) n];
                if (!at) {
                        json_object_set_new(index, key, json_integer((json_int_t) n++));
                        *g = (Group){ .cell = cell,
                                      .variant = variant,
                                      .times = json_array(),
                                      .codes = json_array(),
                                      .memory = json_array(),
                                      .parameters = json_object() };
                        const char *name;
                        json_t *value;
                        json_object_foreach((json_t *) row, name, value) {
                                if (strncmp(name, "param:", 6) == 0)
                                        json_object_set(g->parameters, name + 6, value);
                        }
                }
                json_array_append_new(g->times, json_real((double) json_integer_value(wall) / 1e9));
                json_array_append(g->codes, json_object_get(row, "exit_code"));
                json_array_append_new(
                        g->memory,
                        json_integer(json_integer_value(json_object_get(row, "maxrss_kib")) * 1024));
                g->user += (double) json_integer_value(json_object_get(row, "user_us")) / 1e6;
                g->sys += (double) json_integer_value(json_object_get(row, "sys_us")) / 1e6;
        }
        json_auto_t *results = json_array();
        int r = results ? 0 : -ENOMEM;
        for (size_t k = 0; k < n; k++) {
                json_t *result = r >= 0 ? group_result(&groups[k], json_object_size(cells) == 1) : NULL;
                if (!result || json_array_append_new(results, result) < 0)
                        r = -ENOMEM;
                json_decref(groups[k].times);
                json_decref(groups[k].codes);
                json_decref(groups[k].memory);
                json_decref(groups[k].parameters);
        }
        json_auto_t *doc = r >= 0 ? json_pack("{s:O}", "results", results) : NULL;
        if (!doc || json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) < 0)
                return -ENOMEM;
        fputc('\n', f);
        return ferror(f) ? -EIO : 0;
}
