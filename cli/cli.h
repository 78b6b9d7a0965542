/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "configs/spec.h"
#include "db/store.h"

/*
 * Shared pieces of the alloclab commands: exit codes, spec loading with diagnostics, opening
 * the store. The commands themselves live in cli/cmd-*.c, one family per file.
 */

/* Exit codes, documented in README.md. */
enum {
        EXIT_OK = 0,
        EXIT_FAILURES = 1,    /* the experiment ran, but samples failed (crash, timeout, ...) */
        EXIT_USAGE = 2,       /* bad command line */
        EXIT_SPEC = 3,        /* invalid spec: nothing was run or written */
        EXIT_ENVIRONMENT = 4, /* missing allocator or program, database or system error */
        EXIT_INTERRUPTED = 5, /* stopped by SIGINT/SIGTERM; the run is marked interrupted */
        /* The gate's outcomes (compare, run --compare-to): when several hold, the highest. */
        EXIT_REGRESSION = 6,     /* --fail-on regression: run B significantly worse somewhere */
        EXIT_NOT_COMPARABLE = 7, /* the two runs measured different things (NOT COMPARABLE) */
        EXIT_NO_BASELINE = 8,    /* --compare-to latest without an earlier run: nothing measured */
        EXIT_EXCLUDED = 9,       /* the experiment ran, but a variant was excluded somewhere */
};

/* A finished run's status: EXIT_EXCLUDED when a variant was excluded in some cell (a comparison
 * the spec asked for was not measured), else EXIT_FAILURES when samples failed, else EXIT_OK. */
int cli_run_status(int64_t n_failures, int64_t n_excluded);

/* Of two statuses that both hold, the one to exit with: the later in the order 0, 1, 9, 2, 3,
 * 4, 5, 6, 7, 8 (README's table), so that a gate's verdict is never hidden by what the run
 * itself met, and an excluded variant outranks failed samples. */
int cli_status_worst(int a, int b);

/* Prints "alloclab CMD: message" to stderr. */
void cli_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A planning failure, one problem per line: a line that starts with the spec's FILE:LINE:COL is printed as
 * the spec's diagnostics are (bare, so editors jump to it); others as cli_error(). */
void cli_plan_error(const char *command, const Spec *spec, const char *message);

/* A message about what spec writes at: "FILE:LINE:COL: " and the message on stderr, as a spec's
 * problems are given, or "alloclab COMMAND: " before it where the spec has no such place (at
 * line 0, or quick's spec, which alloclab wrote). */
void cli_say_at(const char *command, const Spec *spec, SpecPosition at, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Warns on stderr when the spec's samples and alpha leave no verdict possible
 * (compare_smallest_p), saying how many samples would. */
typedef struct Plan Plan;
void cli_warn_powerless(const char *command, const Plan *plan);

/* Notes on stderr when a variant's program serves most allocations from a layer of its own that
 * the allocator under test never sees (options_own_layer(): CPython without PYTHONMALLOC=malloc). */
void cli_warn_own_layer(const char *command, const Plan *plan);

/* Notes on stderr when the command's program, found in PATH by a bare name, is a script (#!): a
 * pyenv or rbenv shim measures a shell and its children, not only the program it names. */
void cli_warn_script(const char *command, const Plan *plan);

/* A warning on stderr when the spec's metric is reported:NAME, its metrics: key defines others,
 * and none is NAME: the child must then write NAME on ALLOCLAB_METRICS_FD itself, and a
 * misspelt name excludes every variant only once it has run ("did you mean" the close one). */
void cli_warn_undefined_metric(const char *command, const Spec *spec);

/* Warns on stderr of a setting that configures another allocator than the one its variant
 * preloads (MALLOC_ARENA_MAX in jemalloc's env), or, in the experiment's env, one that no
 * variant preloads: catalog_reader(). */
void cli_warn_foreign_settings(const char *command, const Plan *plan);

/* Loads a spec; on failure prints every diagnostic (or the read error) and returns the exit
 * code to use (EXIT_SPEC or EXIT_ENVIRONMENT). Returns EXIT_OK and *ret on success. */
int cli_load_spec(const char *command, const char *path, Spec **ret);

/* The same from a stream: path "-" (standard input) or a pipe, read to its end (check). */
int cli_load_spec_stream(const char *command, const char *path, Spec **ret);
/* The same for a spec made in memory (by quick and suite); name stands for its file. */
int cli_load_spec_text(const char *command, const char *name, const char *text, Spec **ret);

/* Opens the store at db_path (or the default path); prints the error and returns an exit code
 * on failure. */
int cli_open_store(const char *command, const char *db_path, StoreMode mode, Store **ret);

/* Opens the store to read it: for writing where this user may (so that recovery records the
 * runs of vanished processes as interrupted), else read-only. Prints the error and returns an
 * exit code on failure. */
int cli_open_for_reading(const char *command, const char *db_path, Store **ret);

/* The machine name a new run is filed under: `option` (--machine), else $ALLOCLAB_MACHINE when
 * set and not empty, else NULL (the host name; docs/fleet.md). */
const char *cli_machine(const char *option);

/* The machine name a new run will be filed under: cli_machine(option), else the host name (as
 * runner/host.h reads it), into buf. */
const char *cli_machine_name(const char *option, char *buf, size_t size);

/* EXIT_OK when cli_machine(option) is NULL or a name as specs name things (1-64 letters,
 * digits, '_', '-', '.'), else prints why and returns EXIT_USAGE. */
int cli_check_machine(const char *command, const char *option);

/* The database's measurement lock (util/lockfile.h): alloclab run, resume and import wait for
 * each other and refuse a database alloclabd measures into. Returns EXIT_OK with *ret_fd (-1
 * where no lock file can be made), or prints why not and returns the exit status. */
int cli_take_measure_lock(const char *command, Store *store, int *ret_fd);

/* RUN as given on the command line: a run id, or "latest" (also when absent). Returns EXIT_OK
 * and *ret, or prints why not and returns EXIT_USAGE or EXIT_ENVIRONMENT. */
int cli_resolve_run(const char *command, Store *store, const char *argument, int64_t *ret);

/* Prints a query's failure r and returns EXIT_USAGE for -ENOENT (no such run `run_id`: the
 * command line named it), else EXIT_ENVIRONMENT (-EIO: the store's message). */
int cli_query_failed(const char *command, Store *store, int64_t run_id, int r);

/* Prints usage and returns true when argv holds --help or -h. */
bool cli_wants_help(int argc, char **argv, const char *usage);

/* Blocks SIGINT, SIGTERM and SIGHUP and returns a signalfd for them (the runner's cancel fd),
 * or -errno. */
int cli_stop_signals_fd(void);

/* Output formats of results. */
typedef enum OutputFormat {
        FORMAT_TABLE,
        FORMAT_MARKDOWN,
        FORMAT_CSV,
        FORMAT_JSON,
        _FORMAT_MAX,
} OutputFormat;

/* Parses a --format value; returns -EINVAL for unknown names. */
int cli_parse_format(const char *s, OutputFormat *ret);

/* The same for command's --format option: EXIT_OK, or prints what it takes and returns EXIT_USAGE. */
int cli_format_option(const char *command, const char *s, OutputFormat *ret);

/* How two runs are compared (`compare`, `run --compare-to`): --fail-on regression, --relative. */
typedef struct CompareOptions {
        bool fail_on_regression;
        bool relative; /* the within-run ratios to the baseline variant, not the medians */
} CompareOptions;

/* The options of a command that reads the database and prints in a format: --db PATH and
 * --format F, into *ret_db and *ret_format, and where ret_compare is not NULL --fail-on
 * regression and --relative. Returns EXIT_OK with optind at the first operand, or prints why
 * not and returns EXIT_USAGE. */
int cli_parse_db_format(const char *command, int argc, char **argv, const char **ret_db,
                        OutputFormat *ret_format, CompareOptions *ret_compare);

/* Whether output to f gets colours: never with NO_COLOR set, always with CLICOLOR_FORCE set (and
 * not "0"), else on a terminal that is not "dumb". */
/* Keeps STORE_RESERVE_BYTES beside the database for a measuring command (run, resume): the
 * writes that close a run whose samples fill the disk. Returns EXIT_OK (with a warning when the
 * reserve cannot be made for another reason), or EXIT_ENVIRONMENT, said, when the disk has not
 * that much room: then the run does not start. The command releases it when done. */
int cli_keep_reserve(const char *command, Store *store);

bool cli_colour(FILE *f);

/* Strict unsigned integer parser for option values. */
int cli_parse_uint(const char *s, unsigned long long max, unsigned long long *ret);
