/* SPDX-License-Identifier: MIT */
/*
 * Helpers every command uses. This is where errors from configs/ and db/ are reported: those
 * modules return them, the CLI prints each once.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "cli/render.h"
#include "configs/catalog.h"
#include "configs/schema.h"
#include "configs/yamltree.h"
#include "db/query.h"
#include "runner/env.h"
#include "runner/options.h"
#include "runner/plan.h"
#include "stats/compare.h"
#include "util/cleanup.h"
#include "util/text.h"
#include "util/io.h"
#include "util/lockfile.h"
#include "util/suggest.h"

void cli_error(const char *command, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "alloclab%s%s: ", command ? " " : "", command ? command : "");
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

void cli_say_at(const char *command, const Spec *spec, SpecPosition at, const char *fmt, ...) {
        if (at.line > 0 && strcmp(spec->path, "quick") != 0)
                fprintf(stderr, "%s:%u:%u: ", spec->path, at.line, at.column);
        else
                fprintf(stderr, "alloclab %s: ", command);
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

/* Whether some variant's allocator reads the environment entry. */
static bool read_by_some_variant(const Plan *plan, const char *entry) {
        for (size_t v = 0; v < plan->n_variants; v++)
                if (plan->allocators[v].entry && catalog_reads(plan->allocators[v].entry, entry))
                        return true;
        return false;
}

void cli_warn_foreign_settings(const char *command, const Plan *plan) {
        const Spec *spec = plan->spec;
        for (size_t v = 0; v < plan->n_variants; v++) {
                const SpecVariant *sv = &spec->variants[v];
                const CatalogEntry *own = plan->allocators[v].entry;
                for (size_t i = 0; own && !sv->is_aa && sv->env && sv->env[i]; i++) {
                        const CatalogEntry *reader = catalog_reader(sv->env[i]);
                        if (reader && !catalog_reads(own, sv->env[i]))
                                cli_say_at(command, spec, sv->env_var_at ? sv->env_var_at[i] : sv->env_at,
                                           "warning: variant %s: %s configures %s, not %s: it has no "
                                           "effect on this variant",
                                           sv->name, sv->env[i], reader->name, own->name);
                }
        }
        /* The experiment's env is every variant's: a setting there is meant for some of them. */
        for (size_t i = 0; spec->env && spec->env[i]; i++) {
                const CatalogEntry *reader = catalog_reader(spec->env[i]);
                if (reader && !read_by_some_variant(plan, spec->env[i]))
                        cli_say_at(command, spec, spec->env_var_at ? spec->env_var_at[i] : (SpecPosition){},
                                   "warning: %s configures %s, which no variant uses: it has no effect",
                                   spec->env[i], reader->name);
        }
}

void cli_warn_script(const char *command, const Plan *plan) {
        const PlanJob *job = plan_job(plan, 0, 0);
        if (!job->exe || !job->argv || !job->argv[0] || strchr(job->argv[0], '/'))
                return; /* a path the spec gave: what it is, the spec knows */
        char head[256] = "";
        _cleanup_close_ int fd = open(job->exe, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, head, sizeof(head) - 1) : -1;
        if (n < 3 || head[0] != '#' || head[1] != '!')
                return;
        head[n] = 0;
        head[strcspn(head, "\n")] = 0;
        const char *interpreter = head + 2 + strspn(head + 2, " \t");
        size_t word = strcspn(interpreter, " \t");
        if (word >= 3 && strncmp(interpreter + word - 3, "env", 3) == 0 &&
            interpreter[word]) /* #!/usr/bin/env bash */
                interpreter += word + strspn(interpreter + word, " \t");
        fprintf(stderr,
                "alloclab %s: note: %s is %s, a script run by %.*s: the measured tree is that interpreter "
                "and whatever the script starts (a version manager's shim is a shell script: give the "
                "program's path, or pin PATH %s)\n",
                command, job->argv[0], job->exe, (int) strcspn(interpreter, " \t"), interpreter,
                strcmp(command, "quick") == 0 ? "with -e PATH=..." : "in the spec's env");
}

void cli_warn_own_layer(const char *command, const Plan *plan) {
        size_t with = 0, first = SIZE_MAX;
        for (size_t v = 0; v < plan->n_variants; v++) {
                const PlanJob *job = plan_job(plan, 0, v);
                if (job->exe && options_own_layer(job->exe, env_get(job->envp, "PYTHONMALLOC"))) {
                        with++;
                        first = first == SIZE_MAX ? v : first;
                }
        }
        if (with == 0)
                return;
        const char *exe = plan_job(plan, 0, first)->exe, *base = basename(exe);
        char who[128];
        if (with == plan->n_variants && plan->n_variants > 1)
                snprintf(who, sizeof(who), "every variant runs");
        else if (with == 1 && plan->n_variants == 1)
                snprintf(who, sizeof(who), "variant %s runs", plan->spec->variants[first].name);
        else
                snprintf(who, sizeof(who), "variant %s%s runs", plan->spec->variants[first].name,
                         with > 1 ? " (and others)" : "");
        /* A child's environment is built from empty: alloclab's own PYTHONMALLOC never reaches it. */
        fprintf(stderr, "alloclab %s: note: %s %s, which %s (%s)\n", command, who, base,
                options_own_layer(exe, env_get(plan_job(plan, 0, first)->envp, "PYTHONMALLOC")),
                strcmp(plan->spec->path, "quick") == 0 ? "quick --env PYTHONMALLOC=malloc"
                                                       : "spec key env: {PYTHONMALLOC: malloc}");
}

void cli_warn_undefined_metric(const char *command, const Spec *spec) {
        if (spec->metric != SPEC_METRIC_REPORTED || spec->n_metric_defs == 0)
                return;
        const char *names[SPEC_MAX_METRIC_DEFS + 1] = {};
        for (size_t i = 0; i < spec->n_metric_defs && i < SPEC_MAX_METRIC_DEFS; i++) {
                if (strcmp(spec->metric_defs[i].name, spec->metric_name) == 0)
                        return;
                names[i] = spec->metric_defs[i].name;
        }
        const char *close = suggest_closest(spec->metric_name, names);
        fprintf(stderr,
                "alloclab %s: warning: metric reported:%s is none of the metrics: the spec defines%s%s%s; "
                "the program must write '%s VALUE' on ALLOCLAB_METRICS_FD itself, or every variant is "
                "excluded as missing-metric\n",
                command, spec->metric_name, close ? " (did you mean '" : "", close ? close : "",
                close ? "'?)" : "", spec->metric_name);
}

void cli_warn_powerless(const char *command, const Plan *plan) {
        const Spec *spec = plan->spec;
        bool rounds = spec->order != SPEC_ORDER_BLOCKED;
        CompareRule rule = run_compare_rule(plan);
        if (spec->n_variants < 2)
                return;
        if (!rounds) {
                fprintf(stderr,
                        "alloclab %s: warning: order: blocked gives no verdicts (a drift of the machine "
                        "between "
                        "blocks cannot be told from a difference between variants); interleaved or "
                        "randomized "
                        "order can\n",
                        command);
                return;
        }
        if (compare_can_decide(plan->samples, rounds, &rule))
                return;
        bool paired = compare_pairs(plan->samples, &rule);
        /* The verdicts' words for the spec's metric: faster/slower for a time, lower/higher else. */
        bool time = spec->metric == SPEC_METRIC_WALL || spec->metric == SPEC_METRIC_USER ||
                    spec->metric == SPEC_METRIC_SYS ||
                    (spec->metric == SPEC_METRIC_REPORTED && render_time_metric(spec->metric_name));
        double level = compare_test_alpha(&rule);
        fprintf(stderr,
                "alloclab %s: warning: with %u samples per variant no difference can reach p < %.3g "
                "(alpha %g%s; the smallest p the %s test can give is %.3g): no verdict can be %s or "
                "%s; %u samples can reach it\n",
                command, plan->samples, level, spec->alpha,
                rule.correction == CORRECTION_NONE || rule.tests < 2 ? ""
                                                                     : " shared by the run's comparisons",
                paired ? "signed-rank" : "rank-sum", compare_smallest_p(plan->samples, paired),
                verdict_word(VERDICT_LOWER, time), verdict_word(VERDICT_HIGHER, time),
                compare_samples_needed(rounds, &rule));
}

void cli_plan_error(const char *command, const Spec *spec, const char *message) {
        size_t n = strlen(spec->path);
        for (const char *line = message; *line;) { /* one problem per line */
                int len = (int) strcspn(line, "\n");
                if (strncmp(line, spec->path, n) == 0 && line[n] == ':')
                        fprintf(stderr, "%.*s\n", len, line);
                else
                        cli_error(command, "%.*s", len, line);
                line += len + (line[len] == '\n');
        }
}

int cli_run_status(int64_t n_failures, int64_t n_excluded) {
        return n_excluded > 0 ? EXIT_EXCLUDED : n_failures > 0 ? EXIT_FAILURES : EXIT_OK;
}

int cli_status_worst(int a, int b) {
        /* Rank of each status, indexed by status; README's table lists them in this order. */
        static const int rank[] = {
                [EXIT_OK] = 0,          [EXIT_FAILURES] = 1,   [EXIT_EXCLUDED] = 2,
                [EXIT_USAGE] = 3,       [EXIT_SPEC] = 4,       [EXIT_ENVIRONMENT] = 5,
                [EXIT_INTERRUPTED] = 6, [EXIT_REGRESSION] = 7, [EXIT_NOT_COMPARABLE] = 8,
                [EXIT_NO_BASELINE] = 9,
        };
        assert(a >= 0 && (size_t) a < ELEMENTSOF(rank) && b >= 0 && (size_t) b < ELEMENTSOF(rank));
        return rank[a] >= rank[b] ? a : b;
}

/* After a spec_load_*(): prints its problems, or the read error, and says the exit status. */
static int spec_loaded(const char *command, const char *path, int r, Diagnostics *d) {
        if (r >= 0) {
                diag_clear(d);
                return EXIT_OK;
        }
        struct stat st;
        if (d->n_items == 0 && r == -EISDIR && stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
                cli_error(command,
                          "cannot read %s: not a regular file (a pipe or a device); %s needs a spec "
                          "file, alloclab check also reads one from a pipe or from - (standard input)",
                          path, command);
                return EXIT_SPEC;
        }
        if (d->n_items == 0) {
                cli_error(command, "cannot read %s: %s", path, strerror(-r));
                diag_clear(d);
                return r == -ENOMEM ? EXIT_ENVIRONMENT : EXIT_SPEC;
        }
        for (size_t i = 0; i < d->n_items; i++) {
                _cleanup_free_ char *line = diag_format(d, i);
                fprintf(stderr, "%s\n", line ? line : "out of memory");
        }
        if (d->n_dropped > 0)
                fprintf(stderr, "%s: %zu more problems not shown\n", path, d->n_dropped);
        diag_clear(d);
        return EXIT_SPEC;
}

int cli_load_spec(const char *command, const char *path, Spec **ret) {
        Diagnostics d = {};
        return spec_loaded(command, path, spec_load_file(path, &d, ret), &d);
}

int cli_load_spec_stream(const char *command, const char *path, Spec **ret) {
        bool in = strcmp(path, "-") == 0;
        _cleanup_close_ int fd = in ? -1 : open(path, O_RDONLY | O_CLOEXEC);
        _cleanup_free_ char *text = malloc(YAMLTREE_MAX_INPUT_BYTES + 2);
        if (!in && fd < 0) {
                cli_error(command, "cannot read %s: %m", path);
                return EXIT_SPEC;
        }
        if (!text) {
                cli_error(command, "out of memory");
                return EXIT_ENVIRONMENT;
        }
        ssize_t n = read_full(in ? STDIN_FILENO : fd, text, YAMLTREE_MAX_INPUT_BYTES + 1);
        if (n < 0) {
                cli_error(command, "cannot read %s: %s", in ? "standard input" : path, strerror((int) -n));
                return EXIT_SPEC;
        }
        if (n > YAMLTREE_MAX_INPUT_BYTES) {
                cli_error(command, "%s: spec is larger than %d bytes", in ? "-" : path,
                          YAMLTREE_MAX_INPUT_BYTES);
                return EXIT_SPEC;
        }
        text[n] = '\0';
        return cli_load_spec_text(command, path, text, ret);
}

int cli_load_spec_text(const char *command, const char *name, const char *text, Spec **ret) {
        Diagnostics d = {};
        return spec_loaded(command, name, spec_load_buffer(name, text, strlen(text), &d, ret), &d);
}

int cli_open_store(const char *command, const char *db_path, StoreMode mode, Store **ret) {
        _cleanup_free_ char *fallback = NULL;
        if (!db_path) {
                fallback = store_default_path();
                if (!fallback) {
                        cli_error(command, "no database path: set --db, ALLOCLAB_DB or HOME");
                        return EXIT_ENVIRONMENT;
                }
                db_path = fallback;
        }
        _cleanup_free_ char *message = NULL;
        int r = store_open(db_path, mode, ret, &message);
        if (r < 0) {
                cli_error(command, "%s", message ? message : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        return EXIT_OK;
}

bool cli_wants_help(int argc, char **argv, const char *usage) {
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--") == 0)
                        break;
                if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                        printf("%s", usage);
                        return true;
                }
        }
        return false;
}

int cli_parse_db_format(const char *command, int argc, char **argv, const char **ret_db,
                        OutputFormat *ret_format, CompareOptions *ret_compare) {
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },
                { "format", required_argument, NULL, 'f' },
                { "fail-on", required_argument, NULL, 'F' },
                { "relative", no_argument, NULL, 'R' },
                {},
        };
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "d:f:", options, NULL)) >= 0;) {
                if (c == 'd')
                        *ret_db = optarg;
                else if (c == 'f' && cli_parse_format(optarg, ret_format) == 0)
                        continue;
                else if (c == 'F' && ret_compare && strcmp(optarg, "regression") == 0)
                        ret_compare->fail_on_regression = true;
                else if (c == 'R' && ret_compare)
                        ret_compare->relative = true;
                else {
                        if (c == 'f')
                                cli_error(command, "unknown format '%s' (table, markdown, csv, json)",
                                          optarg);
                        else if (c == 'F' && ret_compare)
                                cli_error(command, "--fail-on takes 'regression', not '%s'", optarg);
                        else if (c == 'F' || c == 'R')
                                cli_error(command, "unrecognized option '%s'",
                                          c == 'F' ? "--fail-on" : "--relative");
                        return EXIT_USAGE;
                }
        }
        return EXIT_OK;
}

int cli_format_option(const char *command, const char *s, OutputFormat *ret) {
        if (cli_parse_format(s, ret) == 0)
                return EXIT_OK;
        cli_error(command, "unknown format '%s' (table, markdown, csv, json)", s);
        return EXIT_USAGE;
}

int cli_parse_format(const char *s, OutputFormat *ret) {
        if (strcmp(s, "markdown") == 0)
                output_markdown(); /* whatever is printed in it */
        static const char *const names[_FORMAT_MAX] = { "table", "markdown", "csv", "json" };
        for (unsigned i = 0; i < _FORMAT_MAX; i++)
                if (strcmp(s, names[i]) == 0) {
                        *ret = (OutputFormat) i;
                        return 0;
                }
        return -EINVAL;
}

int cli_parse_uint(const char *s, unsigned long long max, unsigned long long *ret) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (*s < '0' || *s > '9' || *end || errno || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

int cli_stop_signals_fd(void) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
                return negative_errno();
        int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        return fd < 0 ? negative_errno() : fd;
}

int cli_resolve_run(const char *command, Store *store, const char *argument, int64_t *ret) {
        unsigned long long v;
        if (!argument || strcmp(argument, "latest") == 0) {
                if (query_latest_run(store, ret) < 0) {
                        cli_error(command, "the database holds no runs yet");
                        return EXIT_ENVIRONMENT;
                }
                return EXIT_OK;
        }
        if (cli_parse_uint(argument, INT64_MAX, &v) < 0) {
                cli_error(command, "RUN must be a run id or 'latest', got '%s'", argument);
                return EXIT_USAGE;
        }
        *ret = (int64_t) v;
        return EXIT_OK;
}

int cli_query_failed(const char *command, Store *store, int64_t run_id, int r) {
        if (r == -ENOENT) { /* a run the command line named that is not there: as run --compare-to */
                cli_error(command, "no run %lld (see alloclab runs)", (long long) run_id);
                return EXIT_USAGE;
        }
        cli_error(command, "%s", r == -EIO ? store_error(store) : strerror(-r));
        return EXIT_ENVIRONMENT;
}

/* Opens for writing when it can (recovery marks the runs of vanished processes interrupted),
 * else read-only: a reader reads all the same on a full disk, a read-only file system or in a
 * directory it may not write to (where a vanished process's run is shown interrupted all the
 * same: db/store.c). */
int cli_open_for_reading(const char *command, const char *db_path, Store **ret) {
        _cleanup_free_ char *fallback = db_path ? NULL : store_default_path();
        const char *path = db_path ? db_path : fallback;
        if (!path || access(path, W_OK) < 0)
                return cli_open_store(command, path, STORE_READ_ONLY, ret);
        _cleanup_free_ char *why = NULL;
        if (store_open(path, STORE_READ_WRITE, ret, &why) >= 0 ||
            store_open(path, STORE_READ_ONLY, ret, NULL) >= 0)
                return EXIT_OK;
        /* Neither: what writing found is the better reason (a migration that failed, say). */
        cli_error(command, "%s", why ? why : "cannot open the database");
        return EXIT_ENVIRONMENT;
}

/* The database's measurement lock (util/lockfile.h), so that two runs into one database never
 * measure at once: alloclab run waits for another alloclab run, and refuses a database that
 * alloclabd measures into. Returns EXIT_OK with *ret_fd (-1 where no lock file can be made: a
 * read-only directory, whose store will say more), or the exit status. */
const char *cli_machine(const char *option) {
        const char *env = getenv("ALLOCLAB_MACHINE");
        return option ? option : env && *env ? env : NULL;
}

const char *cli_machine_name(const char *option, char *buf, size_t size) {
        const char *machine = cli_machine(option);
        struct utsname u;
        snprintf(buf, size, "%s", machine ? machine : uname(&u) == 0 ? u.nodename : "unknown");
        return buf;
}

int cli_check_machine(const char *command, const char *option) {
        const char *machine = cli_machine(option);
        if (!machine || schema_is_identifier(machine, true))
                return EXIT_OK;
        _cleanup_free_ char *shown = text_shown(machine);
        cli_error(command, "%s '%s' must be 1-64 letters, digits, '_', '-' or '.'",
                  option ? "--machine" : "ALLOCLAB_MACHINE", shown ? shown : "?");
        return EXIT_USAGE;
}

int cli_take_measure_lock(const char *command, Store *store, int *ret_fd) {
        char holder[LOCKFILE_HOLDER_MAX], self[LOCKFILE_HOLDER_MAX];
        snprintf(self, sizeof(self), "alloclab %s", command);
        int fd = lockfile_take(store_path(store), self, false, holder);
        if (fd == -EWOULDBLOCK && strncmp(holder, "alloclabd", 9) == 0) {
                /* What measures runs can go to the daemon; an import cannot. */
                bool measures = strcmp(command, "import") != 0;
                cli_error(command, "%s is measured into by %s: %s", store_path(store), holder,
                          measures ? "submit to it (alloclab submit) or use another --db"
                                   : "it is the database's only writer while it runs: stop it to import, or "
                                     "import into another --db");
                return EXIT_ENVIRONMENT;
        }
        if (fd == -EWOULDBLOCK) {
                fprintf(stderr, "alloclab %s: waiting for %s, which writes runs into %s\n", command,
                        holder[0] ? holder : "another alloclab", store_path(store));
                fd = lockfile_take(store_path(store), self, true, holder);
        }
        *ret_fd = fd >= 0 ? fd : -1;
        return EXIT_OK;
}

int cli_keep_reserve(const char *command, Store *store) {
        int r = store_reserve(store);
        if (r == -ENOSPC || r == -EDQUOT) {
                store_release_reserve(store);
                cli_error(command,
                          "the disk of %s has less than %d KiB free, which a run needs kept to close itself "
                          "should its samples fill the disk: free some space first",
                          store_path(store), STORE_RESERVE_BYTES / 1024);
                return EXIT_ENVIRONMENT;
        }
        if (r < 0)
                fprintf(stderr,
                        "alloclab %s: warning: cannot keep %d KiB in reserve beside %s (%s): a run that "
                        "fills the disk may not be closed\n",
                        command, STORE_RESERVE_BYTES / 1024, store_path(store), strerror(-r));
        return EXIT_OK;
}

bool cli_colour(FILE *f) {
        const char *no = getenv("NO_COLOR"), *force = getenv("CLICOLOR_FORCE"), *term = getenv("TERM");
        if (no && *no) /* https://no-color.org */
                return false;
        if (force && *force && strcmp(force, "0") != 0)
                return true;
        return isatty(fileno(f)) && term && strcmp(term, "dumb") != 0;
}
