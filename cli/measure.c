/* SPDX-License-Identifier: MIT */
/*
 * Measuring from the command line (run, quick, suite, resume): a run session (db/session.h)
 * planned and recorded with the CLI's words for what fails, executed in this process with the
 * database recorder as the sink and a progress line, printed, and gated against an earlier run
 * (--compare-to).
 *
 * SIGINT, SIGTERM and SIGHUP are blocked and read through a signalfd that the runner waits on
 * next to the child, so ^C kills the current child, marks the run interrupted and exits cleanly.
 */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/measure.h"
#include "cli/pair-render.h"
#include "cli/output.h"
#include "cli/render.h"
#include "db/pair.h"
#include "db/session.h"
#include "stats/sampleset.h"
#include "util/cleanup.h"
#include "util/text.h"
#include "util/paths.h"
#include "util/clock.h"

extern char **environ;

/* The progress line wraps the recorder's sink: it prints before each child starts, never while
 * one runs. */
typedef struct Progress {
        RunSink inner;
        bool enabled;
        uint64_t start_ns;
} Progress;

static void fmt_duration(uint64_t s, char *buf, size_t size) {
        if (s >= 3600)
                snprintf(buf, size, "%lluh%02llum", (unsigned long long) s / 3600,
                         (unsigned long long) (s % 3600) / 60);
        else if (s >= 60)
                snprintf(buf, size, "%llum%02llus", (unsigned long long) s / 60,
                         (unsigned long long) s % 60);
        else
                snprintf(buf, size, "%llus", (unsigned long long) s);
}

static void progress_step(void *userdata, const Plan *p, size_t index) {
        Progress *pr = userdata;
        if (!pr->enabled)
                return;
        const PlanStep *st = &p->steps[index];
        _cleanup_free_ char *label = plan_cell_label(p, st->cell);
        uint64_t elapsed = (now_ns() - pr->start_ns) / 1000000000ULL;
        char el[32], eta[32] = "?";
        fmt_duration(elapsed, el, sizeof(el));
        if (index > 0)
                fmt_duration(elapsed * (p->n_steps - index) / index, eta, sizeof(eta));
        unsigned total = plan_phase_rounds(p, st->phase);
        output_raw(stderr, "\r\033[K");
        fprintf(stderr, "cell %u/%zu [%s] %s %s %u/%u  %s elapsed, ETA %s", st->cell + 1, p->n_cells,
                label ? label : "?", p->spec->variants[st->variant].name, phase_to_string(st->phase),
                st->round + 1, total, el, eta);
        fflush(stderr);
}

static int progress_sample(void *u, const Plan *p, const Sample *s) {
        Progress *pr = u;
        return pr->inner.sample(pr->inner.userdata, p, s);
}

static int progress_exclude(void *u, const Plan *p, uint32_t c, uint32_t v, const char *reason) {
        Progress *pr = u;
        return pr->inner.exclude(pr->inner.userdata, p, c, v, reason);
}

static int progress_stats(void *u, const Plan *p, uint32_t c, const StatsRow *rows, size_t n) {
        Progress *pr = u;
        return pr->inner.cell_stats(pr->inner.userdata, p, c, rows, n);
}

/* Builds from source take minutes where a child takes seconds: each is said as it starts and
 * ends (before any child runs, so nothing is measured meanwhile). */
static void announce_build(void *userdata, const SpecVariant *v, const Build *b, bool done) {
        const char *command = userdata;
        if (!done) {
                fprintf(stderr, "alloclab %s: %s: %s at %s: ", command, v->name, b->source, build_label(b));
                fflush(stderr);
        } else if (b->failure)
                fprintf(stderr, "build failed; the variant is excluded\n");
        else if (b->cached)
                fprintf(stderr, "built before (%.1f s), from the cache\n", (double) b->build_ns / 1e9);
        else
                fprintf(stderr, "built in %.1f s\n", (double) b->build_ns / 1e9);
}

static int print_report_to(FILE *f, const char *command, Store *store, int64_t run_id, OutputFormat format) {
        _cleanup_(query_report_freep) Report *rep = NULL;
        int r = query_report(store, run_id, NULL, &rep);
        if (r < 0) {
                cli_error(command, "cannot read run %lld back: %s", (long long) run_id,
                          r == -EIO ? store_error(store) : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        r = render_for(format)(f, rep);
        if (r < 0 || fflush(f) != 0) {
                cli_error(command, "cannot write results: %s", strerror(r < 0 ? -r : errno));
                return EXIT_ENVIRONMENT;
        }
        return cli_run_status(rep->run.n_failures, rep->run.n_excluded);
}

static int print_report(const char *command, Store *store, int64_t run_id, OutputFormat format) {
        return print_report_to(stdout, command, store, run_id, format);
}

/* --compare-to: the run to compare with, found before the new one exists. A run of another
 * experiment: EXIT_NOT_COMPARABLE, said. With latest and none earlier: EXIT_NO_BASELINE, said (a CI job
 * pointed at the wrong database must not pass for ever), or with --allow-missing-baseline *ret = 0, said. */
static int resolve_base(Store *store, const char *experiment, const MeasureOptions *o, int64_t *ret) {
        const char *compare_to = o->compare_to;
        bool latest = strcmp(compare_to, "latest") == 0;
        unsigned long long id = 0;
        int r;
        char machine[256];
        if (latest) /* this machine's: another one's would not be comparable */
                r = query_latest_done_run(store, experiment,
                                          cli_machine_name(o->machine, machine, sizeof(machine)), ret);
        else {
                (void) cli_parse_uint(compare_to, INT64_MAX, &id); /* checked with the options */
                *ret = (int64_t) id;
                r = query_run_of_experiment(store, *ret, experiment);
        }
        if (r == -EXDEV) { /* known before measuring: the comparison could only say so */
                cli_error(
                        "run",
                        "--compare-to %s: run %s is of another experiment than %s: NOT COMPARABLE; nothing "
                        "was measured",
                        compare_to, compare_to, experiment);
                return EXIT_NOT_COMPARABLE;
        }
        if (r == -ENOENT && latest && o->allow_missing_baseline) {
                fprintf(stderr,
                        "alloclab run: no finished run of %s on machine %s in %s yet: nothing to compare "
                        "with "
                        "(--allow-missing-baseline)\n",
                        experiment, machine, store_path(store) ? store_path(store) : "the database");
                *ret = 0;
                return EXIT_OK;
        }
        if (r == -ENOENT && latest) {
                cli_error("run",
                          "--compare-to latest: no finished run of %s on machine %s in %s to compare with; "
                          "nothing was measured. A first run has no baseline: give it "
                          "--allow-missing-baseline (a wrong --db, experiment or --machine has none either)",
                          experiment, machine, store_path(store) ? store_path(store) : "the database");
                return EXIT_NO_BASELINE;
        }
        if (r == -ENOENT) {
                cli_error("run", "no run %s to compare with (see alloclab runs)", compare_to);
                return EXIT_USAGE;
        }
        if (r < 0) {
                cli_error("run", "cannot read the runs: %s", store_error(store));
                return EXIT_ENVIRONMENT;
        }
        return EXIT_OK;
}

/* --compare-to latest against a database that does not exist: EXIT_NO_BASELINE, said, before the
 * database is made (a mistyped --db must not read as a first run), unless
 * --allow-missing-baseline makes it a first run. */
static int baseline_database_exists(const MeasureOptions *o) {
        if (!o->compare_to || strcmp(o->compare_to, "latest") != 0 || o->allow_missing_baseline)
                return EXIT_OK;
        _cleanup_free_ char *fallback = o->db_path ? NULL : store_default_path();
        const char *path = o->db_path ? o->db_path : fallback;
        if (!path || access(path, F_OK) == 0 || errno != ENOENT)
                return EXIT_OK; /* whatever else is wrong, opening it says */
        cli_error("run",
                  "--compare-to latest: the database %s does not exist, so it holds no run to compare with; "
                  "nothing was measured and nothing was created (check --db or ALLOCLAB_DB; a first run: "
                  "--allow-missing-baseline)",
                  path);
        return EXIT_NO_BASELINE;
}

/* --compare-to with --relative: what pair_usable() refuses once both runs exist, refused
 * before anything is measured (a variant besides the baseline, and no blocked order). */
static int relative_possible(Store *store, const Spec *spec, const MeasureOptions *o, int64_t base) {
        if (!o->compare_relative || base == 0)
                return EXIT_OK;
        _cleanup_(query_report_freep) Report *rep = NULL;
        int r = query_report_values(store, base, NULL, &rep);
        if (r < 0)
                return cli_query_failed("run", store, base, r);
        if (spec->n_variants < 2 || rep->n_variants < 2) {
                cli_error("run",
                          "--relative compares each variant's ratio to the baseline within each run, and %s "
                          "has no variant besides the baseline; nothing was measured",
                          spec->n_variants < 2 ? "the spec" : "the run to compare with");
                return EXIT_USAGE;
        }
        if (spec->order == SPEC_ORDER_BLOCKED || sampleset_design(rep->order) != SAMPLE_ROUNDS) {
                cli_error("run",
                          "--relative compares the ratios of rounds measured side by side, and %s measures "
                          "in %s order, without such rounds; measure interleaved. Nothing was measured",
                          spec->order == SPEC_ORDER_BLOCKED ? "the spec" : "the run to compare with",
                          spec->order == SPEC_ORDER_BLOCKED ? "blocked" : rep->order);
                return EXIT_USAGE;
        }
        return EXIT_OK;
}

/* Prints base -> run as `compare` does, and returns the gate's status as `compare --fail-on
 * regression` does. */
static int gate_against(FILE *f, Store *store, int64_t base, int64_t run, bool relative,
                        OutputFormat format) {
        _cleanup_(run_pair_freep) RunPair *pair = NULL;
        int64_t missing = 0;
        int r = query_run_pair(store, base, run, relative, &pair, &missing);
        if (r < 0)
                return cli_query_failed("run", store, missing, r);
        if ((r = pair_usable("run", pair)) != EXIT_OK)
                return r;
        if (format != FORMAT_JSON)
                fputc('\n', f);
        if (pair_render(f, format, pair) < 0 || fflush(f) != 0) {
                cli_error("run", "cannot write the comparison");
                return EXIT_ENVIRONMENT;
        }
        return pair_exit_status(pair, true);
}

/* The output of print(f, ...) as JSON, or NULL (said). */
static json_t *captured_json(int *ret_status, int (*print)(FILE *f, void *userdata), void *userdata) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f) {
                cli_error("run", "out of memory");
                *ret_status = EXIT_ENVIRONMENT;
                return NULL;
        }
        *ret_status = print(f, userdata);
        if (fclose(f) != 0 ||
            (*ret_status != EXIT_OK && *ret_status != EXIT_FAILURES && *ret_status != EXIT_EXCLUDED &&
             *ret_status != EXIT_REGRESSION && *ret_status != EXIT_NOT_COMPARABLE))
                return NULL;
        json_t *doc = json_loads(text, 0, NULL);
        if (!doc) {
                cli_error("run", "cannot read back what was written");
                *ret_status = EXIT_ENVIRONMENT;
        }
        return doc;
}

typedef struct RunAndBase {
        Store *store;
        int64_t base, run;
        bool relative;
} RunAndBase;

static int print_run_json(FILE *f, void *userdata) {
        const RunAndBase *x = userdata;
        return print_report_to(f, "run", x->store, x->run, FORMAT_JSON);
}

static int print_comparison_json(FILE *f, void *userdata) {
        const RunAndBase *x = userdata;
        return gate_against(f, x->store, x->base, x->run, x->relative, FORMAT_JSON);
}

/* --compare-to with --format json: one document, {"run": what run prints, "comparison": what
 * compare prints}, so that it parses as JSON. Returns the gate's status and the run's, the
 * higher. */
static int print_run_and_comparison(Store *store, int64_t base, int64_t run, bool relative) {
        RunAndBase x = { store, base, run, relative };
        int run_status, gate;
        json_auto_t *report = captured_json(&run_status, print_run_json, &x);
        if (!report)
                return run_status;
        json_auto_t *comparison = captured_json(&gate, print_comparison_json, &x);
        if (!comparison)
                return gate;
        json_auto_t *doc = json_pack("{s:O, s:O}", "run", report, "comparison", comparison);
        if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 ||
            fputc('\n', stdout) < 0 || fflush(stdout) != 0) {
                cli_error("run", "cannot write the result");
                return EXIT_ENVIRONMENT;
        }
        return cli_status_worst(gate, run_status);
}

/* Runs plan into rec (a new run, or an interrupted one with prior), closes the run and prints it
 * as stored. Returns the command's exit status. */
static int execute_recorded(const char *command, Store *store, const Plan *plan, Recorder *rec,
                            const RunPrior *prior, int stop_fd, const MeasureOptions *o) {
        Progress progress = {
                .inner = record_sink(rec),
                .enabled = !o->quiet && isatty(STDERR_FILENO),
                .start_ns = now_ns(),
        };
        RunSink sink = {
                .userdata = &progress,
                .step_begin = progress_step,
                .sample = progress_sample,
                .exclude = progress_exclude,
                .cell_stats = progress_stats,
        };
        RunResult result = {};
        int r = run_execute(plan, prior, &sink, stop_fd, &result);
        if (progress.enabled)
                output_raw(stderr, "\r\033[K");
        if (r == -EIO)
                store_release_reserve(store);

        const char *note = r < 0                        ? strerror(-r)
                           : result.end == RUN_CANCELED ? "stopped by a signal"
                           : result.end == RUN_STOPPED  ? "stopped at the first failure (on_failure: stop)"
                                                        : NULL;
        if (r == -EIO && !(note = store_error(store)))
                note = "a storage failure";
        int closed = record_finish(rec, &result, r, note);
        store_release_reserve(store);
        if (closed < 0) {
                cli_error(command, "cannot close run %lld: %s", (long long) record_run_id(rec),
                          store_error(store));
                return EXIT_ENVIRONMENT;
        }
        if (r < 0) {
                cli_error(command, "run %lld aborted: %s", (long long) record_run_id(rec),
                          r == -EIO ? store_error(store) : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        if (result.end == RUN_CANCELED) {
                cli_error(command, "run %lld interrupted; its samples so far are stored",
                          (long long) record_run_id(rec));
                return EXIT_INTERRUPTED;
        }
        return o->silent ? cli_run_status(result.n_failures, result.n_excluded)
                         : print_report(command, store, record_run_id(rec), o->format);
}

/* --label and --commit are clean (util/text.h): a label is shown in tables and terminals, and
 * import takes no other. */
static int check_tags(const char *command, const MeasureOptions *o) {
        const char *const tags[][2] = { { "label", o->label }, { "commit", o->commit } };
        for (size_t i = 0; i < ELEMENTSOF(tags); i++)
                if (tags[i][1] && (strlen(tags[i][1]) > RUN_MAX_LABEL || !text_is_clean(tags[i][1]))) {
                        cli_error(command,
                                  "--%s must be UTF-8 text without control characters, of at most %d bytes",
                                  tags[i][0], RUN_MAX_LABEL);
                        return EXIT_USAGE;
                }
        return cli_check_machine(command, o->machine);
}

/* What the plan of a new run makes worth a warning before it runs. */
static void warn_plan(const char *command, const Plan *plan) {
        cli_warn_powerless(command, plan);
        cli_warn_own_layer(command, plan);
        cli_warn_script(command, plan);
        cli_warn_foreign_settings(command, plan);
        cli_warn_undefined_metric(command, plan->spec);
}

/* The database, locked for measuring with its reserve kept (*ret_lock), and --compare-to's run
 * (*ret_base, 0 for none), found before anything is written. */
static int open_for_measuring(const char *command, const Spec *spec, const MeasureOptions *o,
                              Store **ret_store, int *ret_lock, int64_t *ret_base) {
        int e;
        if ((e = baseline_database_exists(o)) != EXIT_OK ||
            (e = cli_open_store(command, o->db_path, STORE_READ_WRITE, ret_store)) != EXIT_OK ||
            (e = cli_take_measure_lock(command, *ret_store, ret_lock)) != EXIT_OK ||
            (e = cli_keep_reserve(command, *ret_store)) != EXIT_OK)
                return e;
        if (o->compare_to && ((e = resolve_base(*ret_store, spec->experiment, o, ret_base)) != EXIT_OK ||
                              (e = relative_possible(*ret_store, spec, o, *ret_base)) != EXIT_OK))
                return e;
        return EXIT_OK;
}

int cli_measure(const char *command, const Spec *spec, const MeasureOptions *o, int64_t *ret_run) {
        int e;
        if (ret_run)
                *ret_run = 0;
        if ((e = check_tags(command, o)) != EXIT_OK)
                return e;
        _cleanup_free_ char *probe = paths_probe();
        cgroup_remove_stale(); /* what runs killed with SIGKILL left behind */
        _cleanup_(session_done) Session session = {};
        SessionRequest request = { .spec = spec,
                                   .options = { .caller_env = environ,
                                                .build = true,
                                                .on_build = announce_build,
                                                .userdata = (void *) command,
                                                .samples = o->samples,
                                                .samples_fixed = o->samples > 0, /* also for samples: auto */
                                                .probe_path = probe } };
        if (session_plan(&request, &session) < 0) {
                cli_plan_error(command, spec, session.message ? session.message : strerror(-session.error));
                return EXIT_ENVIRONMENT;
        }
        const Plan *plan = session.plan;
        warn_plan(command, plan);

        _cleanup_(store_freep) Store *store = NULL;
        _cleanup_close_ int lock_fd = -1;
        int64_t base = 0;
        if ((e = open_for_measuring(command, spec, o, &store, &lock_fd, &base)) != EXIT_OK)
                return e;
        /* From here on a stop signal must end in a clean 'interrupted', not a dead process. */
        _cleanup_close_ int stop_fd = cli_stop_signals_fd();
        if (stop_fd < 0) {
                cli_error(command, "cannot set up signal handling: %s", strerror(-stop_fd));
                return EXIT_ENVIRONMENT;
        }
        struct passwd *pw = getpwuid(getuid());
        RecordContext ctx = { .trigger = "cli",
                              .submitter = pw ? pw->pw_name : NULL,
                              .origin_env = environ,
                              .machine = cli_machine(o->machine),
                              .label = o->label,
                              .commit = o->commit };
        if (session_record(&session, store, &ctx) < 0) {
                cli_error(command, "cannot record the run: %s",
                          session.error == -EIO ? store_error(store) : strerror(-session.error));
                return EXIT_ENVIRONMENT;
        }
        Recorder *rec = session.recorder;

        /* JSON with a comparison: one document of both, printed once both are known. */
        bool one_document = base != 0 && o->format == FORMAT_JSON;
        MeasureOptions quiet_result = *o;
        quiet_result.silent = true;
        e = execute_recorded(command, store, plan, rec, NULL, stop_fd, one_document ? &quiet_result : o);
        if (ret_run)
                *ret_run = record_run_id(rec);
        if (base == 0 || (e != EXIT_OK && e != EXIT_FAILURES && e != EXIT_EXCLUDED))
                return e;
        if (one_document)
                return print_run_and_comparison(store, base, record_run_id(rec), o->compare_relative);
        int gate = gate_against(stdout, store, base, record_run_id(rec), o->compare_relative, o->format);
        return cli_status_worst(gate, e);
}

/* Says why run could not be resumed (its session's failure) and returns the exit status. */
static int resume_failed(Store *store, int64_t run, const Session *s) {
        const char *why = s->message         ? s->message
                          : s->error == -EIO ? store_error(store)
                                             : strerror(-s->error);
        switch (s->failure) {
        case SESSION_NOT_INTERRUPTED:
                cli_error("resume", "run %lld is %s: only interrupted runs can be resumed", (long long) run,
                          s->message ? s->message : "?");
                return EXIT_USAGE;
        case SESSION_NO_SUCH_RUN:
                cli_error("resume", "no run %lld", (long long) run);
                return EXIT_ENVIRONMENT;
        case SESSION_SPEC_INVALID:
                cli_error("resume", "the stored spec of run %lld no longer loads", (long long) run);
                return EXIT_SPEC;
        case SESSION_PLAN_FAILED:
                cli_plan_error("resume", s->spec, why);
                return EXIT_ENVIRONMENT;
        case SESSION_MISMATCH:
                cli_error("resume", "run %lld does not match its spec any more: %s", (long long) run, why);
                return EXIT_ENVIRONMENT;
        case SESSION_STORE_FAILED:
                if (s->plan) {
                        cli_error("resume", "run %lld does not match its spec any more: %s", (long long) run,
                                  why);
                        return EXIT_ENVIRONMENT;
                }
                break;
        default:
                break;
        }
        cli_error("resume", "run %lld cannot be resumed here: %s", (long long) run, why);
        return EXIT_ENVIRONMENT;
}

int cli_resume(int64_t run, const MeasureOptions *o) {
        int e;
        _cleanup_(store_freep) Store *store = NULL;
        if ((e = cli_open_store("resume", o->db_path, STORE_READ_WRITE, &store)) != EXIT_OK)
                return e;
        _cleanup_close_ int lock_fd = -1;
        if ((e = cli_take_measure_lock("resume", store, &lock_fd)) != EXIT_OK ||
            (e = cli_keep_reserve("resume", store)) != EXIT_OK)
                return e;
        _cleanup_free_ char *probe = paths_probe();
        cgroup_remove_stale();
        _cleanup_(session_done) Session session = {};
        SessionRequest request = { .resume_run = run,
                                   .store = store,
                                   .options = { .caller_env = environ,
                                                .probe_path = probe,
                                                .build = true,
                                                .on_build = announce_build,
                                                .userdata = (void *) "resume" } };
        if (session_plan(&request, &session) < 0)
                return resume_failed(store, run, &session);
        /* From here on a stop signal must end in a clean 'interrupted', not a dead process. */
        _cleanup_close_ int stop_fd = cli_stop_signals_fd();
        if (session_record(&session, store, NULL) < 0)
                return resume_failed(store, run, &session);
        if (stop_fd < 0) {
                cli_error("resume", "cannot set up signal handling: %s", strerror(-stop_fd));
                return EXIT_ENVIRONMENT;
        }
        return execute_recorded("resume", store, session.plan, session.recorder, &session.prior, stop_fd, o);
}
