/* SPDX-License-Identifier: MIT */
/*
 * hyperfine's and pyperf's JSON: imported as runs, and a run exported in hyperfine's layout.
 *
 * An import becomes an ordinary run: a spec is written for it (one variant per hyperfine command
 * or pyperf benchmark, each running its command, verify: none, probe: never), planned, and its
 * times go through the recorder's sink as the samples of that plan, with the statistics computed
 * as the runner computes them. The host is the one pyperf's metadata names, else (hyperfine
 * records none) this machine, said as such; the trigger is "import", and the run's message names
 * the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/interop.h"
#include "configs/catalog.h"
#include "configs/schema.h"
#include "configs/spec-text.h"
#include "db/query.h"
#include "db/record.h"
#include "runner/host.h"
#include "runner/plan.h"
#include "runner/run.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/message.h"
#include "util/sha256.h"
#include "util/strv.h"
#include "util/template.h"

extern char **environ;

/* One hyperfine command or pyperf benchmark. */
typedef struct Series {
        char *name;
        char *command;
        char **params; /* hyperfine's parameters: NAME, VALUE, NAME, VALUE, ...; NULL: none */
        double *times; /* seconds */
        int *exit_codes;
        double *memory; /* bytes per run, or NULL */
        size_t n;
        double user, system; /* hyperfine's means per run, seconds; NAN: not given */
        size_t variant;      /* where it goes (import_layout()); its cell is found in the plan */
} Series;

/* A variant of an import: the series that share its command once the cell parameters are taken
 * out of it. */
typedef struct ImportVariant {
        char *name;
        char *command;   /* a spec template: the cell parameters as {NAME}, other braces doubled */
        char *preload;   /* the LD_PRELOAD the command sets, or NULL */
        char *allocator; /* identified from preload (preload_allocator()), or "unknown" */
} ImportVariant;

typedef struct Import {
        const char *tool; /* "hyperfine" or "pyperf" */
        /* Of the file's content: its JSON written again with sorted keys and no spaces, so that
         * the same data re-indented or re-ordered is the same import. bytes_sha256, of the bytes
         * as read, is what imports before 2026-12-02 stored. */
        char sha256[SHA256_HEX_SIZE], bytes_sha256[SHA256_HEX_SIZE];
        Series *series;
        size_t n;
        char **cell_params; /* names of the parameters that make cells (strv); NULL: one cell */
        ImportVariant *variants;
        size_t n_variants;
        /* The machine the file says it was measured on (pyperf's metadata), or none: hyperfine
         * records none, and the run then names the importing machine as such. */
        bool has_machine;
        Host machine;
        /* When the samples were measured, as the file says (pyperf's runs' date and duration:
         * the measuring machine's local time, for pyperf records no zone), or "": not said. */
        char measured_from[32], measured_to[32];
} Import;

/* Frees the variants, keeping their array (a layout that did not fit is tried again). */
static void drop_variants(Import *im) {
        for (size_t v = 0; v < im->n_variants; v++) {
                free(im->variants[v].name);
                free(im->variants[v].command);
                free(im->variants[v].preload);
                free(im->variants[v].allocator);
        }
        im->n_variants = 0;
}

static void import_done(Import *im) {
        for (size_t i = 0; i < im->n; i++) {
                free(im->series[i].name);
                free(im->series[i].command);
                strv_free(im->series[i].params);
                free(im->series[i].times);
                free(im->series[i].exit_codes);
                free(im->series[i].memory);
        }
        free(im->series);
        strv_free(im->cell_params);
        drop_variants(im);
        free(im->variants);
        if (im->has_machine)
                host_done(&im->machine);
}

/* A text of pyperf's metadata, or "unknown". */
static char *metadata_text(const json_t *meta, const char *key) {
        const char *v = json_string_value(json_object_get(meta, key));
        return strdup(v && *v ? v : "unknown");
}

/* The machine pyperf's metadata names (hostname, cpu_model_name, cpu_count, platform as
 * "Linux-RELEASE-ARCH-with-glibcVERSION"): what the run records as its host, the rest unknown
 * (not this machine's). Without a hostname there is none. */
static int pyperf_machine(const json_t *meta, Import *im) {
        const char *hostname = json_string_value(json_object_get(meta, "hostname"));
        if (!hostname || !*hostname)
                return 0;
        Host *h = &im->machine;
        const char *platform = json_string_value(json_object_get(meta, "platform"));
        const char *linux_at = platform && strncmp(platform, "Linux-", 6) == 0 ? platform + 6 : NULL;
        const char *with = platform ? strstr(platform, "-with-glibc") : NULL;
        h->hostname = strdup(hostname);
        h->cpu_model = metadata_text(meta, "cpu_model_name");
        h->cpus = (unsigned) json_integer_value(json_object_get(meta, "cpu_count"));
        /* Python's platform(): "Linux-RELEASE-MACHINE-with-LIBC"; the kernel is RELEASE alone. */
        size_t release = 0;
        if (linux_at) {
                release = with && with > linux_at ? (size_t) (with - linux_at) : strlen(linux_at);
                const char *dash = memrchr(linux_at, '-', release);
                static const char *const machines[] = { "x86_64",  "aarch64", "i686",   "armv7l",
                                                        "ppc64le", "s390x",   "riscv64" };
                for (size_t i = 0; dash && i < ELEMENTSOF(machines); i++)
                        if (strlen(machines[i]) == release - (size_t) (dash + 1 - linux_at) &&
                            strncmp(dash + 1, machines[i], strlen(machines[i])) == 0)
                                release = (size_t) (dash - linux_at);
        }
        h->kernel = linux_at ? strndup(linux_at, release) : strdup("unknown");
        h->glibc = strdup(with ? with + strlen("-with-glibc") : "unknown");
        h->thp = strdup("unknown");
        bool ok = h->hostname && h->cpu_model && h->kernel && h->glibc && h->thp;
        for (size_t i = 0; i < _HOST_FACT_MAX; i++)
                ok &= (h->facts[i] = strdup("unknown")) != NULL;
        im->has_machine = true;
        if (!ok)
                return -ENOMEM;
        host_fingerprint(h);
        return 0;
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
        *s = (Series){
                .name = strdup(name), .command = strdup(command), .n = n, .user = NAN, .system = NAN
        };
        s->times = calloc(n + 1, sizeof(double));
        s->exit_codes = calloc(n + 1, sizeof(int));
        return s->name && s->command && s->times && s->exit_codes ? s : NULL;
}

/* What a time and a memory figure of another tool may be: a sample alloclab could have taken
 * (no child runs longer than a spec's longest timeout), a size a machine could have. */
#define IMPORT_MAX_SECONDS ((double) SPEC_MAX_TIMEOUT_NS / 1e9)
#define IMPORT_MAX_BYTES   9007199254740992.0 /* 2^53 */
#define IMPORT_MAX_FILE    (256u << 20)       /* bytes of JSON */

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

/* A mean CPU time of hyperfine's (absent: NAN), refused as numbers() refuses a time. */
static int mean_cpu(const json_t *v, const char *where, double *ret, char **ret_why) {
        if (!v)
                return 0;
        if (!json_is_number(v))
                return message_fail(ret_why, -EINVAL, "%s is not a number", where);
        *ret = json_number_value(v);
        if (!(*ret >= 0 && *ret <= IMPORT_MAX_SECONDS))
                return message_fail(ret_why, -EINVAL, "%s is %g, which is not from 0 to %g seconds", where,
                                    *ret, IMPORT_MAX_SECONDS);
        return 0;
}

/* hyperfine --export-json: {"results": [{"command", "times", "exit_codes", "memory_usage_byte",
 * "user", "system", "parameters"}]}. */
static int read_hyperfine(const json_t *doc, Import *im, char **ret_why) {
        const json_t *results = json_object_get(doc, "results");
        size_t i;
        const json_t *r;
        im->tool = "hyperfine";
        json_array_foreach(results, i, r) {
                const char *command = json_string_value(json_object_get(r, "command"));
                const json_t *times = json_object_get(r, "times");
                if (!command)
                        return message_fail(ret_why, -EINVAL, "results[%zu].command is not a string", i);
                if (!json_is_array(times) || json_array_size(times) == 0)
                        return message_fail(ret_why, -EINVAL, "results[%zu].times is not an array of times",
                                            i);
                size_t n = json_array_size(times);
                Series *s = add_series(im, command, command, n);
                if (!s)
                        return -ENOMEM;
                char where[64];
                snprintf(where, sizeof(where), "results[%zu].times", i);
                int e = numbers(times, n, IMPORT_MAX_SECONDS, "seconds", s->times, where, ret_why);
                if (e < 0)
                        return e;
                for (size_t k = 0; k < n; k++)
                        if (!(s->times[k] > 0))
                                return message_fail(ret_why, -EINVAL,
                                                    "%s[%zu] is 0: no command runs in no time at all", where,
                                                    k);
                /* The summaries are not read (times are), but a file that has impossible ones is
                 * not what hyperfine wrote. */
                static const char *const summaries[] = { "mean", "median", "min", "max" };
                for (size_t k = 0; k < ELEMENTSOF(summaries); k++) {
                        const json_t *v = json_object_get(r, summaries[k]);
                        double x = json_is_number(v) ? json_number_value(v) : 1;
                        if ((v && !json_is_number(v)) || !(x > 0 && x <= IMPORT_MAX_SECONDS))
                                return message_fail(ret_why, -EINVAL,
                                                    "results[%zu].%s is not a time from 0 to %g seconds", i,
                                                    summaries[k], IMPORT_MAX_SECONDS);
                }
                const json_t *codes = json_object_get(r, "exit_codes");
                for (size_t k = 0; json_is_array(codes) && k < n && k < json_array_size(codes); k++)
                        s->exit_codes[k] = (int) json_integer_value(json_array_get(codes, k));
                /* Means only: hyperfine exports no CPU time per run. */
                snprintf(where, sizeof(where), "results[%zu].user", i);
                if ((e = mean_cpu(json_object_get(r, "user"), where, &s->user, ret_why)) < 0)
                        return e;
                snprintf(where, sizeof(where), "results[%zu].system", i);
                if ((e = mean_cpu(json_object_get(r, "system"), where, &s->system, ret_why)) < 0)
                        return e;
                const json_t *parameters = json_object_get(r, "parameters"), *value;
                const char *name;
                json_object_foreach((json_t *) parameters, name, value) {
                        if (!json_is_string(value))
                                return message_fail(ret_why, -EINVAL,
                                                    "results[%zu].parameters.%s is not a string", i, name);
                        if (strv_append(&s->params, name) < 0 ||
                            strv_append(&s->params, json_string_value(value)) < 0)
                                return -ENOMEM;
                }
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

/* pyperf's "date" of a run, "2020-10-13 10:14:44.091061" (the measuring machine's local time),
 * as seconds of a clock without a zone (for earlier, later and + duration only); NAN if absent. */
static double pyperf_date(const json_t *run_meta) {
        const char *date = json_string_value(json_object_get(run_meta, "date"));
        struct tm tm = {};
        double second;
        char sep;
        if (!date ||
            sscanf(date, "%4d-%2d-%2d%c%2d:%2d:%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &sep, &tm.tm_hour,
                   &tm.tm_min, &second) != 7 ||
            (sep != ' ' && sep != 'T') || !(second >= 0 && second < 61))
                return NAN;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        time_t t = timegm(&tm);
        return t == (time_t) -1 ? NAN : (double) t + second;
}

/* "2020-10-13T10:14:44.091": ISO 8601 local time, without a zone (none was recorded). */
static void format_local_time(double t, char buf[static 32]) {
        time_t whole = (time_t) floor(t);
        struct tm tm;
        if (!gmtime_r(&whole, &tm) || strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
                buf[0] = 0;
        else
                snprintf(buf + strlen(buf), 32 - strlen(buf), ".%03d", (int) ((t - floor(t)) * 1000));
}

/* pyperf's JSON: {"benchmarks": [{"metadata": {"name"}, "runs": [{"values": [...]}]}],
 * "metadata": {...}}; every value of every run is a sample (warm-ups are left out). */
static int read_pyperf(const json_t *doc, Import *im, char **ret_why) {
        const json_t *benchmarks = json_object_get(doc, "benchmarks"),
                     *common = json_object_get(doc, "metadata");
        size_t i;
        const json_t *b;
        im->tool = "pyperf";
        int r = pyperf_machine(common, im);
        if (r < 0)
                return r;
        double first = INFINITY, last = -INFINITY; /* of the runs' dates, and date + duration */
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
                /* A file's benchmarks are different programs measured under one configuration:
                 * the cells (parameter benchmark) of one variant, never variants compared with
                 * each other. Another configuration is another file, another run to compare. */
                _cleanup_free_ char *command = NULL;
                if (asprintf(&command, "pyperf %s", name) < 0)
                        return -ENOMEM;
                Series *s = add_series(im, name, command, n);
                if (!s || strv_append(&s->params, "benchmark") < 0 || strv_append(&s->params, name) < 0)
                        return -ENOMEM;
                size_t at = 0;
                json_array_foreach(runs, k, run) {
                        const json_t *values = json_object_get(run, "values"),
                                     *run_meta = json_object_get(run, "metadata");
                        double date = pyperf_date(run_meta),
                               duration = json_number_value(json_object_get(run_meta, "duration"));
                        if (isfinite(date)) {
                                first = fmin(first, date);
                                last = fmax(last,
                                            date + (duration > 0 && duration < IMPORT_MAX_SECONDS ? duration
                                                                                                  : 0));
                        }
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
        if (isfinite(first)) {
                format_local_time(first, im->measured_from);
                format_local_time(last, im->measured_to);
        }
        return 0;
}

/* The value of parameter name in a series, or NULL. */
static const char *param_value(const Series *s, const char *name) {
        for (size_t k = 0; s->params && s->params[k] && s->params[k + 1]; k += 2)
                if (strcmp(s->params[k], name) == 0)
                        return s->params[k + 1];
        return NULL;
}

/* Whether word is NAME=VALUE with NAME as sh takes a variable's name. */
static bool is_assignment(const char *word) {
        const char *eq = strchr(word, '=');
        size_t name = strspn(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
        return eq && eq > word && name == (size_t) (eq - word) && !(word[0] >= '0' && word[0] <= '9');
}

/* Where a command's program starts: after its leading `env` (with its options: `-u NAME`, `-i`,
 * ...) and NAME=VALUE words (quoted as sh quotes them). The value of an LD_PRELOAD among them,
 * unquoted, into *ret_preload (or NULL). */
static size_t environment_end(const char *command, char **ret_preload) {
        *ret_preload = NULL;
        size_t at = 0;
        bool after_env = false, operand = false; /* operand: the word after env's -u, -C, -S */
        for (bool first = true;; first = false) {
                at += strspn(command + at, " \t\n");
                size_t start = at;
                char word[4096];
                size_t k = 0;
                for (char quote = 0; command[at] && (quote || !strchr(" \t\n", command[at])); at++) {
                        char c = command[at];
                        if (quote ? c == quote : c == '\'' || c == '"') {
                                quote = quote ? 0 : c;
                                continue;
                        }
                        if (c == '\\' && quote != '\'' && command[at + 1])
                                c = command[++at];
                        if (k + 1 < sizeof(word))
                                word[k++] = c;
                }
                word[k] = 0;
                bool env = first && strcmp(basename(word), "env") == 0;
                bool assignment = is_assignment(word);
                if (k > 0 && after_env && (operand || word[0] == '-')) {
                        operand =
                                !operand && (strcmp(word, "-u") == 0 || strcmp(word, "--unset") == 0 ||
                                             strcmp(word, "-C") == 0 || strcmp(word, "--chdir") == 0 ||
                                             strcmp(word, "-S") == 0 || strcmp(word, "--split-string") == 0);
                        continue;
                }
                after_env |= env;
                if (k == 0 || !(env || assignment))
                        return start;
                if (assignment && strncmp(word, "LD_PRELOAD=", 11) == 0) {
                        free(*ret_preload);
                        *ret_preload = strdup(word + 11);
                }
        }
}

/* What a preload names (import's words): the first of its files (separated by ':' or spaces)
 * the catalog knows by its file name ("libc.so.6" is glibc), else the first file as written. */
static char *preload_allocator(const char *preload) {
        _cleanup_free_ char *copy = strdup(preload);
        if (!copy)
                return NULL;
        const char *first = NULL;
        for (char *save = NULL, *file = strtok_r(copy, ": \t", &save); file;
             file = strtok_r(NULL, ": \t", &save)) {
                const CatalogEntry *e = catalog_find_file(file);
                if (e)
                        return strdup(e->name);
                first = first ? first : file;
        }
        return strdup(first ? first : "unknown");
}

/* A command as a spec template: its environment and program path as written, its arguments with
 * each value of the cell parameters names[] (values[] of this series) as {NAME}, other braces
 * doubled. NULL on
 * ENOMEM; *ret_exact says whether expanding the template gives the command back (a value that is
 * also part of the program's own words does not). */
static char *command_template(const char *command, size_t program, char *const *names,
                              const char *const *values, size_t n, bool *ret_exact) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        /* Not in the program's own path: a build directory's digits are no parameter's value. */
        size_t args = program + strcspn(command + program, " \t\n");
        for (size_t at = 0; command[at];) {
                size_t best = SIZE_MAX, best_len = 0;
                for (size_t k = 0; at >= args && k < n; k++) {
                        size_t len = strlen(values[k]);
                        if (len > best_len && strncmp(command + at, values[k], len) == 0)
                                best = k, best_len = len;
                }
                if (best != SIZE_MAX) {
                        fprintf(f, "{%s}", names[best]);
                        at += best_len;
                        continue;
                }
                if (command[at] == '{' || command[at] == '}')
                        fputc(command[at], f);
                fputc(command[at++], f);
        }
        if (!memstream_text(f, &text))
                return NULL;
        _cleanup_free_ char *back = NULL;
        TemplateError error;
        *ret_exact = template_expand(text, (const char *const *) names, values, n, &back, &error) == 0 &&
                     strcmp(back, command) == 0;
        return text;
}

/* Whether parameter name sets what a variant is: two series that differ in it alone (the other
 * parameters equal) set different environments (e.g. LD_PRELOAD={lib}). */
static bool sets_environment(const Import *im, const size_t *env_end, const char *name) {
        for (size_t i = 0; i < im->n; i++)
                for (size_t j = i + 1; j < im->n; j++) {
                        const Series *a = &im->series[i], *b = &im->series[j];
                        const char *va = param_value(a, name), *vb = param_value(b, name);
                        if (!va || !vb || strcmp(va, vb) == 0 ||
                            strv_length(a->params) != strv_length(b->params))
                                continue;
                        bool others_equal = true;
                        for (size_t k = 0; a->params[k] && others_equal; k += 2) {
                                const char *other = param_value(b, a->params[k]);
                                others_equal = strcmp(a->params[k], name) == 0 ||
                                               (other && strcmp(other, a->params[k + 1]) == 0);
                        }
                        if (others_equal &&
                            (env_end[i] != env_end[j] || strncmp(a->command, b->command, env_end[i]) != 0))
                                return true;
                }
        return false;
}

/* The cell parameters' values of series s, in the order of names; false when one is missing. */
static bool cell_values(const Series *s, char *const *names, const char **ret) {
        for (size_t k = 0; names && names[k]; k++)
                if (!(ret[k] = param_value(s, names[k])))
                        return false;
        return true;
}

/* Whether a series before i has i's value of parameter name: each distinct value once. */
static bool value_seen_before(const Import *im, size_t i, const char *name) {
        for (size_t j = 0; j < i; j++)
                if (strcmp(param_value(&im->series[j], name), param_value(&im->series[i], name)) == 0)
                        return true;
        return false;
}

/* Whether the series fill the cells x variants grid exactly once each: the cells being every
 * combination of the cell parameters' values. */
static bool fills_grid(const Import *im) {
        size_t n_names = strv_length(im->cell_params), cells = 1;
        for (size_t k = 0; k < n_names; k++) {
                size_t distinct = 0;
                for (size_t i = 0; i < im->n; i++)
                        distinct += !value_seen_before(im, i, im->cell_params[k]);
                cells *= distinct;
        }
        if (cells * im->n_variants != im->n)
                return false;
        for (size_t i = 0; i < im->n; i++) /* no (cell, variant) twice, so all are there */
                for (size_t j = i + 1; j < im->n; j++) {
                        if (im->series[i].variant != im->series[j].variant)
                                continue;
                        bool same_cell = true;
                        for (size_t k = 0; k < n_names && same_cell; k++)
                                same_cell = strcmp(param_value(&im->series[i], im->cell_params[k]),
                                                   param_value(&im->series[j], im->cell_params[k])) == 0;
                        if (same_cell)
                                return false;
                }
        return true;
}

/* A new variant of command template (taken) and the allocator preload names, series i's. */
static int new_variant(Import *im, size_t i, char *template, const char *preload) {
        ImportVariant *variant = &im->variants[im->n_variants];
        *variant = (ImportVariant){ .command = template, .preload = preload ? strdup(preload) : NULL };
        variant->allocator = preload ? preload_allocator(preload) : strdup("unknown");
        im->series[i].variant = im->n_variants++;
        return variant->allocator && (!preload || variant->preload) ? 0 : -ENOMEM;
}

/* Series i's variant: the variant with its template (taken), or a new one. */
static int place_series(Import *im, size_t i, char *template, const char *preload) {
        for (size_t v = 0; v < im->n_variants; v++)
                if (strcmp(im->variants[v].command, template) == 0) {
                        free(template);
                        im->series[i].variant = v;
                        return 0;
                }
        return new_variant(im, i, template, preload);
}

/* Places each series (import_layout()) with cells made of the parameters in im->cell_params
 * (NULL: one cell, a variant per series). Returns 1 when that fits, 0 when not, -ENOMEM. */
static int try_layout(Import *im, const size_t *env_end, char *const *preloads) {
        size_t n_names = strv_length(im->cell_params);
        _cleanup_free_ const char **values = calloc(n_names + 1, sizeof(char *));
        if (!values)
                return -ENOMEM;
        for (size_t i = 0; i < im->n; i++) {
                if (!cell_values(&im->series[i], im->cell_params, values))
                        return 0;
                bool exact = false;
                char *template = command_template(im->series[i].command, env_end[i], im->cell_params, values,
                                                  n_names, &exact);
                if (!template)
                        return -ENOMEM;
                if (!exact) {
                        free(template);
                        return 0;
                }
                /* One cell: every series its own variant. */
                int r = n_names == 0 ? new_variant(im, i, template, preloads[i])
                                     : place_series(im, i, template, preloads[i]);
                if (r < 0)
                        return r;
        }
        return n_names == 0 || fills_grid(im);
}

/* Appends a word that tells a command apart to words, "-" between: of NAME=VALUE the value, of
 * a path (or a list of them) each file's name up to ".so" ("LD_PRELOAD=/x/libjemalloc.so.2":
 * "libjemalloc"). */
static void add_word(char *words, size_t size, const char *word) {
        const char *value = is_assignment(word) ? strchr(word, '=') + 1 : word;
        for (const char *at = value; *at;) {
                size_t len = strcspn(at, ":");
                const char *slash = memrchr(at, '/', len);
                const char *name = slash ? slash + 1 : at;
                size_t n = (size_t) (at + len - name);
                const char *so = strstr(name, ".so");
                if (so && so < name + n && so > name)
                        n = (size_t) (so - name);
                if (n && strlen(words) + n + 2 < size)
                        snprintf(words + strlen(words), size - strlen(words), "%s%.*s", words[0] ? "-" : "",
                                 (int) n, name);
                at += len + (at[len] == ':');
        }
}

/* Variant v's program's base name, into words ("pyperf" for a pyperf file's one variant). */
static void program_word(const Import *im, size_t v, char *words, size_t size) {
        const Series *s = NULL;
        for (size_t i = 0; i < im->n && !s; i++)
                s = im->series[i].variant == v ? &im->series[i] : NULL;
        if (!s) {
                words[0] = 0;
                return;
        }
        char *preload = NULL;
        const char *name = s->command + environment_end(s->command, &preload);
        free(preload);
        size_t len = strcspn(name, " \t\n");
        const char *slash = memrchr(name, '/', len);
        if (slash)
                len -= (size_t) (slash + 1 - name), name = slash + 1;
        snprintf(words, size, "%.*s", (int) len, name);
}

/* Readable variant names: the allocators when each variant has its own, else the words of its
 * command that not every variant's command has; unique by a suffix. */
static int name_variants(Import *im) {
        bool by_allocator = im->n_variants > 0;
        for (size_t v = 0; v < im->n_variants && by_allocator; v++) {
                by_allocator = strcmp(im->variants[v].allocator, "unknown") != 0;
                for (size_t w = 0; w < v && by_allocator; w++)
                        by_allocator = strcmp(im->variants[v].allocator, im->variants[w].allocator) != 0;
        }
        for (size_t v = 0; v < im->n_variants; v++) {
                char words[256] = "", buf[64];
                if (by_allocator) {
                        snprintf(words, sizeof(words), "%s", basename(im->variants[v].allocator));
                        words[strcspn(words, ".")] = 0; /* libfoo.so.1: libfoo */
                } else if (im->n_variants == 1)
                        program_word(im, v, words, sizeof(words));
                else {
                        _cleanup_free_ char *copy = strdup(im->variants[v].command);
                        if (!copy)
                                return -ENOMEM;
                        for (char *save = NULL, *word = strtok_r(copy, " \t\n", &save); word;
                             word = strtok_r(NULL, " \t\n", &save)) {
                                bool everywhere = true;
                                for (size_t w = 0; w < im->n_variants && everywhere; w++) {
                                        const char *c = im->variants[w].command, *at = c;
                                        size_t len = strlen(word);
                                        everywhere = false;
                                        while (!everywhere && (at = strstr(at, word))) {
                                                everywhere = (at == c || strchr(" \t\n", at[-1])) &&
                                                             strchr(" \t\n", at[len]);
                                                at += len;
                                        }
                                }
                                /* {n} names a cell, not the variant */
                                if (!everywhere && strcmp(word, "env") != 0 && !strchr(word, '{'))
                                        add_word(words, sizeof(words), word);
                        }
                        if (!words[0]) /* nothing of its own: the command all the others vary */
                                program_word(im, v, words, sizeof(words));
                }
                /* Name characters only, no runs of '_', at most 40 of them: room for a suffix. */
                size_t k = 0;
                for (const char *p = words; *p && k < 40; p++) {
                        if (k == 0 && *p == '-')
                                continue; /* "-1": a name that reads as an option */
                        bool ok = spec_text_name_char(*p);
                        if (ok || (k > 0 && buf[k - 1] != '_'))
                                buf[k++] = ok ? *p : '_';
                }
                while (k > 0 && buf[k - 1] == '_')
                        k--;
                buf[k] = 0;
                if (k == 0)
                        snprintf(buf, sizeof(buf), "command");
                for (unsigned suffix = 2;; suffix++) {
                        bool taken = false;
                        for (size_t w = 0; w < v && !taken; w++)
                                taken = strcmp(im->variants[w].name, buf) == 0;
                        if (!taken)
                                break;
                        snprintf(buf + k, sizeof(buf) - k, "%s%u", k ? "-" : "", suffix);
                }
                if (!(im->variants[v].name = strdup(buf)))
                        return -ENOMEM;
        }
        return 0;
}

/* Lays the series out as a spec would: parameters that set the environment (LD_PRELOAD={lib})
 * tell variants apart, the others make cells (hyperfine runs every command at every value), so
 * each variant is compared with the baseline in each cell. Where that does not fit, every
 * series is a variant of one cell. */
static int import_layout(Import *im) {
        _cleanup_free_ size_t *env_end = calloc(im->n + 1, sizeof(size_t));
        char **preloads = calloc(im->n + 1, sizeof(char *));
        im->variants = calloc(im->n + 1, sizeof(ImportVariant));
        int r = env_end && preloads && im->variants ? 0 : -ENOMEM;
        for (size_t i = 0; i < im->n && r >= 0; i++)
                env_end[i] = environment_end(im->series[i].command, &preloads[i]);
        for (size_t i = 0; i < im->n && r >= 0; i++)
                for (size_t k = 0; im->series[i].params && im->series[i].params[k] && r >= 0; k += 2) {
                        const char *name = im->series[i].params[k];
                        if (!strv_contains(im->cell_params, name) && schema_is_identifier(name, false) &&
                            !sets_environment(im, env_end, name))
                                r = strv_append(&im->cell_params, name);
                }
        if (r >= 0 && im->cell_params && (r = try_layout(im, env_end, preloads)) == 0) {
                drop_variants(im);
                im->cell_params = strv_free(im->cell_params);
        }
        if (r >= 0 && !im->cell_params)
                r = try_layout(im, env_end, preloads);
        if (r >= 0)
                r = name_variants(im);
        for (size_t i = 0; preloads && i < im->n; i++)
                free(preloads[i]);
        free(preloads);
        return r < 0 ? r : 0;
}

static char *import_spec(const Import *im, const char *experiment) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        size_t samples = 0;
        for (size_t i = 0; i < im->n; i++)
                samples = im->series[i].n > samples ? im->series[i].n : samples;
        /* The same commands make the same spec, whatever file they came from: runs imported
         * from two files are comparable (the file is in the run's message, its sha256 in the
         * run's row). */
        fprintf(f,
                "# Imported by alloclab import from %s's JSON: the times of each command as %s\n"
                "# measured them, all of one command's after the other's (recorded as order sequential).\n"
                "experiment: ",
                im->tool, im->tool);
        spec_text_scalar(f, experiment);
        fprintf(f, "\ndescription: \"imported from %s\"", im->tool);
        fputs("\ncommand: \"true\"", f);
        if (im->cell_params) {
                fputs("\nparams:", f);
                for (size_t k = 0; im->cell_params[k]; k++) {
                        fprintf(f, "\n  %s: [", im->cell_params[k]);
                        for (size_t i = 0, shown = 0; i < im->n; i++) {
                                if (value_seen_before(im, i, im->cell_params[k]))
                                        continue;
                                fputs(shown++ ? ", " : "", f);
                                spec_text_scalar(f, param_value(&im->series[i], im->cell_params[k]));
                        }
                        fputc(']', f);
                }
        }
        fputs("\nallocators:", f);
        for (size_t v = 0; v < im->n_variants; v++) {
                fputs("\n  ", f);
                spec_text_scalar(f, im->variants[v].name);
                fputs(": {command: ", f);
                spec_text_scalar(f, im->variants[v].command); /* a template already */
                fputs("}", f);
        }
        /* A spec has no order for what another tool ran one command after the other: blocked is
         * the nearest, and the run itself records order sequential. */
        fprintf(f,
                "\nsamples: %zu\nwarmup: 0\n# imported: the commands ran one after the other (the run's "
                "order: "
                "sequential)\norder: blocked\nverify: none\nprobe: never\n",
                samples);
        return memstream_text(f, &text);
}

/* The plan's cell of series s: the one with its values of the cell parameters (spec params in
 * the order of im->cell_params). */
static size_t series_cell(const Plan *p, const Import *im, const Series *s) {
        for (size_t c = 0; c < p->n_cells; c++) {
                bool match = true;
                for (size_t k = 0; im->cell_params && im->cell_params[k] && match; k++)
                        match = strcmp(plan_cell_value(p, c, k), param_value(s, im->cell_params[k])) == 0;
                if (match)
                        return c;
        }
        return SIZE_MAX;
}

/* The plan's step for a sample round of a variant in a cell. */
static const PlanStep *sample_step(const Plan *p, size_t cell, size_t variant, uint32_t round,
                                   size_t *ret_index) {
        for (size_t i = 0; i < p->n_steps; i++)
                if (p->steps[i].phase == PHASE_SAMPLE && p->steps[i].cell == cell &&
                    p->steps[i].variant == variant && p->steps[i].round == round) {
                        *ret_index = i;
                        return &p->steps[i];
                }
        return NULL;
}

/* One series' times as its cell and variant's samples, and their statistics into rows. */
static int replay_series(const Plan *p, const Series *s, size_t cell, const RunSink *sink, RunResult *res,
                         StatsRow *rows, size_t *n_rows) {
        _cleanup_free_ double *ok = calloc(s->n + 1, sizeof(double)),
                              *rss = calloc(s->n + 1, sizeof(double));
        if (!ok || !rss)
                return -ENOMEM;
        size_t n_ok = 0;
        int r;
        for (uint32_t k = 0; k < s->n; k++) {
                Sample sample = { .env_offset = -1, .imported = true };
                if (!(sample.step = sample_step(p, cell, s->variant, k, &sample.step_index)))
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
                return 0;
        rows[*n_rows] = (StatsRow){ .variant = (uint32_t) s->variant,
                                    .metric = spec_metric_to_string(SPEC_METRIC_WALL) };
        if ((r = stats_compute(ok, n_ok, &rows[(*n_rows)++].stats)) < 0)
                return r;
        if (s->memory) {
                rows[*n_rows] = (StatsRow){ .variant = (uint32_t) s->variant,
                                            .metric = spec_metric_to_string(SPEC_METRIC_MAXRSS) };
                if ((r = stats_compute(rss, n_ok, &rows[(*n_rows)++].stats)) < 0)
                        return r;
        }
        return 0;
}

/* The series' times as the plan's samples, cell by cell, each cell's statistics after its
 * samples, into the sink. */
static int replay(const Plan *p, const Import *im, const RunSink *sink, RunResult *res) {
        _cleanup_free_ StatsRow *rows = calloc(2 * im->n + 1, sizeof(StatsRow));
        if (!rows)
                return -ENOMEM;
        for (size_t c = 0; c < p->n_cells; c++) {
                size_t n_rows = 0;
                for (size_t i = 0; i < im->n; i++) {
                        const Series *s = &im->series[i];
                        if (series_cell(p, im, s) != c)
                                continue;
                        int r = replay_series(p, s, c, sink, res, rows, &n_rows);
                        if (r < 0)
                                return r;
                }
                int r = n_rows ? sink->cell_stats(sink->userdata, p, (uint32_t) c, rows, n_rows) : 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The experiment's default name: TOOL-FILE, FILE's base name without .json, made an identifier. */
static void default_experiment(const char *tool, const char *path, char *buf, size_t size) {
        const char *base = basename(path);
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
        _cleanup_free_ char *bytes = NULL;
        size_t size = 0;
        int r = read_text_file(path, IMPORT_MAX_FILE, &bytes, &size);
        if (r < 0) {
                cli_error("import", "cannot read %s: %s", path, r == -EFBIG ? "over 256 MiB" : strerror(-r));
                return r == -EFBIG ? EXIT_SPEC : EXIT_ENVIRONMENT;
        }
        json_error_t error;
        json_auto_t *doc = json_loadb(bytes, size, 0, &error);
        if (!doc) {
                cli_error("import", "%s:%d:%d: %s", path, error.line, error.column, error.text);
                return EXIT_SPEC;
        }
        _cleanup_(interop_run_freep) InteropRun *run = calloc(1, sizeof(InteropRun));
        if (!run)
                return EXIT_ENVIRONMENT;
        run->path = path;
        Import *im = &run->im;
        const char *exporter = json_string_value(json_object_get(doc, "exported_by"));
        if (exporter && strncmp(exporter, "alloclab", 8) == 0) {
                cli_error("import",
                          "%s is alloclab's own export of a run (export --what hyperfine): its samples "
                          "were measured by alloclab, not by hyperfine; carry the run itself with "
                          "`alloclab export RUN --bundle FILE` and import that file",
                          path);
                return EXIT_SPEC;
        }
        sha256_hex(bytes, size, im->bytes_sha256);
        _cleanup_free_ char *canonical = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
        if (!canonical) {
                cli_error("import", "out of memory");
                return EXIT_ENVIRONMENT;
        }
        sha256_hex(canonical, strlen(canonical), im->sha256);
        _cleanup_free_ char *why = NULL;
        r = json_is_array(json_object_get(doc, "results"))      ? read_hyperfine(doc, im, &why)
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
        if (import_layout(im) < 0)
                return EXIT_ENVIRONMENT;
        char name[80];
        default_experiment(im->tool, path, name, sizeof(name));
        _cleanup_free_ char *text = import_spec(im, experiment ? experiment : name);
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
        /* What the other tool ran, as its command says: never this machine's glibc. */
        for (size_t v = 0; v < im->n_variants; v++) {
                Allocator *a = &run->plan->allocators[v];
                allocator_done(a);
                *a = (Allocator){ .name = strdup(im->variants[v].allocator),
                                  .path = im->variants[v].preload ? strdup(im->variants[v].preload) : NULL,
                                  .version = strdup(""),
                                  .entry = catalog_find(im->variants[v].allocator) };
                if (!a->name || !a->version || (im->variants[v].preload && !a->path))
                        return EXIT_ENVIRONMENT;
        }
        *ret = TAKE_PTR(run);
        return EXIT_OK;
}

/* hyperfine's mean CPU times per run of each command, for runs.import_cpu: [{cell, variant,
 * user, system}] (seconds), [] when the file gives none; NULL on ENOMEM. */
static char *cpu_json(const InteropRun *run) {
        json_auto_t *cpu = json_array();
        for (size_t i = 0; cpu && i < run->im.n; i++) {
                const Series *s = &run->im.series[i];
                if (isnan(s->user) && isnan(s->system))
                        continue;
                _cleanup_free_ char *cell = plan_cell_label(run->plan, series_cell(run->plan, &run->im, s));
                json_t *row = cell ? json_pack("{s:s, s:s, s:o, s:o}", "cell", cell, "variant",
                                               run->im.variants[s->variant].name, "user",
                                               isnan(s->user) ? json_null() : json_real(s->user), "system",
                                               isnan(s->system) ? json_null() : json_real(s->system))
                                   : NULL;
                if (!row || json_array_append_new(cpu, row) < 0)
                        return NULL;
        }
        return cpu ? json_dumps(cpu, JSON_COMPACT) : NULL;
}

const char *interop_layout(const InteropRun *run, char *buf, size_t size) {
        const Import *im = &run->im;
        FILE *f = fmemopen(buf, size, "w");
        if (!f)
                return "";
        fprintf(f, "%zu variant%s (", im->n_variants, im->n_variants == 1 ? "" : "s");
        for (size_t v = 0; v < im->n_variants; v++)
                fprintf(f, "%s%s: %s", v ? ", " : "", im->variants[v].name, im->variants[v].allocator);
        fprintf(f, ") in %zu cell%s", run->plan->n_cells, run->plan->n_cells == 1 ? "" : "s");
        for (size_t k = 0; im->cell_params && im->cell_params[k]; k++)
                fprintf(f, "%s%s", k ? ", " : " of ", im->cell_params[k]);
        fprintf(f, ", order sequential");
        fclose(f);
        return buf;
}

int interop_record(Store *store, InteropRun *run, int64_t *ret_run, bool *ret_known) {
        int64_t known = 0;
        int r = query_imported_run(store, run->im.sha256, &known);
        if (r == -ENOENT)
                r = query_imported_run(store, run->im.bytes_sha256, &known);
        if (r < 0 && r != -ENOENT)
                return cli_query_failed("import", store, 0, r);
        if (r >= 0) { /* the same content again: nothing to add */
                *ret_run = known;
                *ret_known = true;
                return EXIT_OK;
        }
        *ret_known = false;
        Host here = {};
        if (!run->im.has_machine && host_read(&here) < 0)
                return EXIT_ENVIRONMENT;
        Host *host = run->im.has_machine ? &run->im.machine : &here;
        _cleanup_free_ char *label = NULL, *cpu = cpu_json(run);
        if (!cpu || asprintf(&label, "imported from %s", run->im.tool) < 0)
                return EXIT_ENVIRONMENT;
        RecordContext ctx = { .trigger = "import",
                              .origin_env = environ,
                              .label = label,
                              .order = "sequential",
                              .import_sha256 = run->im.sha256,
                              .import_cpu = cpu,
                              .started_at = *run->im.measured_from ? run->im.measured_from : NULL,
                              .ended_at = *run->im.measured_to ? run->im.measured_to : NULL };
        _cleanup_(record_freep) Recorder *rec = NULL;
        r = record_begin(store, run->plan, host, &ctx, &rec);
        host_done(&here);
        RunResult result = { .end = RUN_COMPLETED };
        if (r >= 0) {
                RunSink sink = record_sink(rec);
                r = replay(run->plan, &run->im, &sink, &result);
                _cleanup_free_ char *note = NULL;
                if (asprintf(
                            &note,
                            "imported from %s's JSON %s: each command's samples were taken after the "
                            "other's%s%s",
                            run->im.tool, run->path,
                            *run->im.measured_from
                                    ? "; started and ended as pyperf's runs say, in the measuring machine's "
                                      "local time (pyperf records no time zone)"
                                    : "; started and ended when imported (the file does not say when it was "
                                      "measured)",
                            strcmp(cpu, "[]") != 0
                                    ? "; hyperfine's mean user and system CPU time per command are kept "
                                      "(alloclab export RUN --what hyperfine)"
                                    : "") < 0)
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

/* The mean CPU times of g: of its samples, or for an imported run (cpu non-NULL) the file's, null
 * where it gave none. New references, NULL on ENOMEM. */
static void group_cpu(const Group *g, const json_t *cpu, json_t **ret_user, json_t **ret_system) {
        size_t n = json_array_size(g->times), i;
        const json_t *row;
        if (!cpu) {
                *ret_user = json_real(n ? g->user / (double) n : 0.0);
                *ret_system = json_real(n ? g->sys / (double) n : 0.0);
                return;
        }
        const json_t *user = json_null(), *system = json_null();
        json_array_foreach(cpu, i, row) {
                const char *cell = json_string_value(json_object_get(row, "cell")),
                           *variant = json_string_value(json_object_get(row, "variant"));
                if (cell && variant && strcmp(cell, g->cell) == 0 && strcmp(variant, g->variant) == 0) {
                        user = json_object_get(row, "user");
                        system = json_object_get(row, "system");
                }
        }
        *ret_user = json_copy((json_t *) user);
        *ret_system = json_copy((json_t *) system);
}

static json_t *group_result(const Group *g, bool one_cell, const json_t *cpu) {
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
        json_t *user, *system;
        group_cpu(g, cpu, &user, &system);
        json_t *result = json_pack(
                "{s:s, s:f, s:o, s:f, s:o*, s:o*, s:f, s:f, s:O}", "command", command, "mean", mean,
                "stddev", n > 1 ? json_real(sqrt(var / (double) (n - 1))) : json_null(), "median", st.median,
                "user", user, "system", system, "min", st.min, "max", st.max, "times", g->times);
        /* Memory where it was measured: an import of a file without it stored none. */
        bool measured = false;
        for (size_t k = 0; k < json_array_size(g->memory) && !measured; k++)
                measured = json_integer_value(json_array_get(g->memory, k)) > 0;
        if (result && measured)
                json_object_set(result, "memory_usage_byte", g->memory);
        if (result)
                json_object_set(result, "exit_codes", g->codes);
        if (result && json_object_size(g->parameters))
                json_object_set(result, "parameters", g->parameters);
        return result;
}

int interop_export_hyperfine(FILE *f, const json_t *samples, const json_t *cpu) {
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
                json_t *result = r >= 0 ? group_result(&groups[k], json_object_size(cells) == 1, cpu) : NULL;
                if (!result || json_array_append_new(results, result) < 0)
                        r = -ENOMEM;
                json_decref(groups[k].times);
                json_decref(groups[k].codes);
                json_decref(groups[k].memory);
                json_decref(groups[k].parameters);
        }
        /* Marked as alloclab's: importing it back would call an alloclab run hyperfine's. */
        json_auto_t *doc = r >= 0 ? json_pack("{s:O, s:s}", "results", results, "exported_by",
                                              "alloclab " ALLOCLAB_VERSION)
                                  : NULL;
        if (!doc || json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) < 0)
                return -ENOMEM;
        fputc('\n', f);
        return ferror(f) ? -EIO : 0;
}
