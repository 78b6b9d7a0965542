/* SPDX-License-Identifier: MIT */
/*
 * Bundles (see bundle.h). Both directions work on one connection with the other file ATTACHed:
 * rows move with INSERT ... SELECT, column lists read from the schema (both files have this
 * alloclab's), so a million samples move without passing through C. On import, a run's rows
 * get new ids by offset: every id of the run's variants, cells, samples and calibration rows
 * moves by one amount per table, past the largest id here, which keeps their references right
 * without a mapping table.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "db/bundle.h"
#include "db/record.h"
#include "db/sql.h"
#include "configs/schema.h"
#include "runner/host.h"
#include "util/cleanup.h"
#include "util/doomed.h"
#include "util/io.h"
#include "util/message.h"
#include "util/sha256.h"
#include "util/text.h"

static void sqlite3_freep(char **p) {
        sqlite3_free(*p);
}

/* A column of a row copied into another file: its value, an SQL expression over the source
 * row `src`, in place of the source's own value. */
typedef struct Mapping {
        const char *column;
        const char *expr;
} Mapping;

/*
 * INSERT INTO to.table SELECT FROM from.table AS src WHERE where: every column of the table by
 * name, each from the source row's column of that name or as mapped; a column the source does
 * not have (a bundle of an earlier schema) takes its default. Returns 0, -EIO, -ENOMEM.
 */
static int copy_rows(sqlite3 *db, const char *from, const char *to, const char *table, const Mapping *map,
                     size_t n_map, const char *where) {
        char *sql = sqlite3_mprintf("SELECT name, name IN (SELECT name FROM pragma_table_info(%Q, %Q))"
                                    " FROM pragma_table_info(%Q, %Q) ORDER BY cid",
                                    table, from, table, to);
        sqlite3_stmt *st = NULL;
        int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
        if (rc != SQLITE_OK)
                return rc == SQLITE_NOMEM ? -ENOMEM : -EIO;
        sqlite3_str *columns = sqlite3_str_new(db), *values = sqlite3_str_new(db);
        const char *sep = "";
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *column = (const char *) sqlite3_column_text(st, 0);
                const char *expr = NULL;
                for (size_t i = 0; i < n_map; i++)
                        if (strcmp(map[i].column, column) == 0)
                                expr = map[i].expr;
                if (!expr && !sqlite3_column_int(st, 1))
                        continue;
                sqlite3_str_appendf(columns, "%s%s", sep, column);
                if (expr)
                        sqlite3_str_appendf(values, "%s%s", sep, expr);
                else
                        sqlite3_str_appendf(values, "%ssrc.%s", sep, column);
                sep = ", ";
        }
        sqlite3_finalize(st);
        _cleanup_(sqlite3_freep) char *column_list = sqlite3_str_finish(columns);
        _cleanup_(sqlite3_freep) char *value_list = sqlite3_str_finish(values);
        if (rc != SQLITE_DONE)
                return -EIO;
        if (!column_list || !value_list)
                return -ENOMEM;
        return sql_execf(db, "INSERT INTO %s.%s (%s) SELECT %s FROM %s.%s AS src WHERE %s", to, table,
                         column_list, value_list, from, table, where);
}

/* ---- export ---- */

/* What a bundle holds of each table of the source (attached as `source`) for the runs in
 * temp.bundle_runs, in an order that keeps every reference to a row already copied. */
static const struct {
        const char *table, *where;
} selection[] = {
        { "hosts", "id IN (SELECT host_id FROM source.runs WHERE id IN temp.bundle_runs)" },
        { "experiments", "id IN (SELECT experiment_id FROM source.runs WHERE id IN temp.bundle_runs)" },
        { "specs", "id IN (SELECT spec_id FROM source.runs WHERE id IN temp.bundle_runs)" },
        { "allocators",
          "id IN (SELECT allocator_id FROM source.variants WHERE run_id IN temp.bundle_runs)" },
        { "runs", "id IN temp.bundle_runs" },
        { "variants", "run_id IN temp.bundle_runs" },
        { "cells", "run_id IN temp.bundle_runs" },
        { "samples", "run_id IN temp.bundle_runs" },
        { "sample_metrics",
          "sample_id IN (SELECT id FROM source.samples WHERE run_id IN temp.bundle_runs)" },
        { "probe_reports", "sample_id IN (SELECT id FROM source.samples WHERE run_id IN temp.bundle_runs)" },
        { "exclusions", "run_id IN temp.bundle_runs" },
        { "stats", "run_id IN temp.bundle_runs" },
        { "calibration", "run_id IN temp.bundle_runs" },
};

/* A new bundle at path, open: this schema, its journal in a rollback file (a bundle is one
 * file), and the table that says what it is. */
static int create_empty(const char *path, size_t n_runs, Store **ret, char **ret_message) {
        _cleanup_(store_freep) Store *b = NULL;
        int r = store_open(path, STORE_READ_WRITE, &b, ret_message);
        if (r < 0)
                return r;
        char hostname[HOST_NAME_MAX + 1] = "";
        (void) gethostname(hostname, sizeof(hostname) - 1);
        r = sql_execf(store_db(b),
                      "PRAGMA journal_mode = DELETE;"
                      "CREATE TABLE bundle (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                      "INSERT INTO bundle VALUES ('format', %Q), ('version', %d), ('alloclab', %Q),"
                      " ('exported_on', %Q), ('runs', %lld),"
                      " ('exported_at', strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', 'now'));",
                      BUNDLE_FORMAT, BUNDLE_VERSION, ALLOCLAB_VERSION, hostname, (long long) n_runs);
        if (r < 0)
                return message_fail(ret_message, r, "cannot write %s: %s", path, sql_last_failure());
        *ret = TAKE_PTR(b);
        return 0;
}

static int fsync_path(const char *path, int flags) {
        _cleanup_close_ int fd = open(path, flags | O_CLOEXEC);
        return fd >= 0 && fsync(fd) == 0 ? 0 : -errno;
}

/* Writes the bundle of runs run_ids for path into the new file partial, and syncs it. Written through
 * the bundle's connection, the source attached: a reader of the source (a database it cannot
 * write) can export from it. */
static int write_partial(Store *s, const int64_t *run_ids, size_t n, const char *path, const char *partial,
                         char **ret_message) {
        Store *b = NULL;
        int r = create_empty(partial, n, &b, ret_message);
        if (r < 0)
                return r;
        sqlite3 *to = store_db(b);
        _cleanup_free_ char *source = NULL;
        r = store_attach_uri(s, &source);
        if (r >= 0 && (r = sql_execf(to, "ATTACH %Q AS source", source)) < 0) {
                store_free(b);
                return message_fail(ret_message, r, "cannot read %s: %s", store_path(s), sql_last_failure());
        }
        if (r >= 0)
                r = sql_execf(to, "CREATE TEMP TABLE bundle_runs (id INTEGER PRIMARY KEY)");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sql_execf(to, "INSERT OR IGNORE INTO temp.bundle_runs VALUES (%lld)",
                              (long long) run_ids[i]);
        if (r >= 0 && (r = sql_begin(to)) >= 0) {
                for (size_t i = 0; r >= 0 && i < ELEMENTSOF(selection); i++)
                        r = copy_rows(to, "source", "main", selection[i].table, NULL, 0, selection[i].where);
                r = sql_commit(to, r);
        }
        (void) sql_execf(to, "DETACH source");
        store_free(b);
        if (r >= 0)
                r = fsync_path(partial, O_RDONLY);
        return r < 0 ? message_fail(ret_message, r, "cannot write %s: %s", path,
                                    r == -EIO ? sql_last_failure() : strerror(-r))
                     : 0;
}

int bundle_export(Store *s, const int64_t *run_ids, size_t n, const char *path, char **ret_message) {
        sqlite3 *db = store_db(s);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *status = NULL;
                int r = sql_queryf(
                        db, NULL, &status,
                        "SELECT r.status || ' ' || alloclab_run_status(r.status, h.hostname) FROM runs r"
                        " JOIN hosts h ON h.id = r.host_id WHERE r.id = %lld",
                        (long long) run_ids[i]);
                if (r < 0)
                        return r;
                if (!status)
                        return message_fail(ret_message, -ENOENT, "no run %lld", (long long) run_ids[i]);
                if (strcmp(status, "running running") == 0)
                        return message_fail(ret_message, -EBUSY, "run %lld is still running",
                                            (long long) run_ids[i]);
                /* A reader sees it interrupted (db/store.c); the bundle would carry it running. */
                if (strcmp(status, "running interrupted") == 0)
                        return message_fail(ret_message, -EBUSY,
                                            "run %lld is recorded as running, but its process is gone: "
                                            "the next run, resume or import into this database by a user "
                                            "who may write it records it as interrupted; export it then",
                                            (long long) run_ids[i]);
        }
        _cleanup_free_ char *partial = NULL;
        if (asprintf(&partial, "%s.partial", path) < 0)
                return -ENOMEM;
        store_remove_files(partial);
        int doomed[STORE_FILES];
        store_doom_files(partial, doomed);
        int r = write_partial(s, run_ids, n, path, partial, ret_message);
        if (r >= 0 && rename(partial, path) < 0)
                r = message_fail(ret_message, -errno, "cannot write %s: %m", path);
        if (r < 0)
                store_remove_files(partial);
        store_forget_files(doomed);
        if (r < 0)
                return r;
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        (void) fsync_path(slash ? (slash == dir ? "/" : (*slash = 0, dir)) : ".", O_RDONLY | O_DIRECTORY);
        return 0;
}

/* ---- import ---- */

/* A bundle being imported: the file named, and the private copy of it that is checked and
 * attached as `schema` (b0, b1, ...). SQLite opens a file by name (a /proc/self/fd link it
 * resolves to the name), so the file named could be swapped between check and attach; a copy
 * in a directory only this process's user can write cannot. */
typedef struct Source {
        const char *path;
        char *copy_dir; /* $TMPDIR/alloclab-import-XXXXXX, mode 0700; NULL until made */
        int doomed[2];  /* copy_dir and the copy, registered for removal (util/doomed.h) */
        int fd;         /* the copy, held open */
        char uri[64];   /* file:/proc/self/fd/N?mode=ro&immutable=1: the copy */
        char schema[16];
} Source;

#define COPY_NAME "bundle"

static void source_done(Source *src) {
        src->fd = safe_close(src->fd);
        if (src->copy_dir) {
                _cleanup_close_ int dir = open(src->copy_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dir >= 0)
                        (void) unlinkat(dir, COPY_NAME, 0);
                (void) rmdir(src->copy_dir);
                free(src->copy_dir);
                src->copy_dir = NULL;
        }
        doomed_forget(src->doomed[1]);
        doomed_forget(src->doomed[0]);
        src->doomed[0] = src->doomed[1] = -1;
}

/* Copies src->path (refusing anything but a regular file, without blocking on a FIFO) into a
 * private directory and holds the copy open in src->fd. */
static int copy_source(Source *src, char **ret_message) {
        _cleanup_close_ int in = open(src->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat st;
        if (in < 0 || fstat(in, &st) < 0)
                return message_fail(ret_message, -errno, "%s: %m", src->path);
        if (!S_ISREG(st.st_mode))
                return message_fail(ret_message, -EBADMSG, "%s is not a regular file", src->path);
        const char *tmp = getenv("TMPDIR");
        if (asprintf(&src->copy_dir, "%s/alloclab-import-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
                src->copy_dir = NULL;
                return -ENOMEM;
        }
        if (!mkdtemp(src->copy_dir)) {
                int r = message_fail(ret_message, -errno, "cannot make a private copy of %s in %s: %m",
                                     src->path, tmp && *tmp ? tmp : "/tmp");
                free(src->copy_dir);
                src->copy_dir = NULL;
                return r;
        }
        /* A signal that ends import takes the copy with it. */
        _cleanup_free_ char *copy = NULL;
        if (asprintf(&copy, "%s/" COPY_NAME, src->copy_dir) < 0)
                return -ENOMEM;
        src->doomed[0] = doomed_register(src->copy_dir, true);
        src->doomed[1] = doomed_register(copy, false);
        _cleanup_close_ int dir = open(src->copy_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int out =
                dir < 0 ? -1 : openat(dir, COPY_NAME, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        int r = out < 0 ? -errno : 0;
        for (ssize_t n = 1; r >= 0 && n > 0;) {
                n = sendfile(out, in, NULL, 1 << 24);
                if (n < 0)
                        r = errno == EINTR ? 0 : -errno;
        }
        if (r < 0)
                return message_fail(ret_message, r, "cannot make a private copy of %s in %s: %s", src->path,
                                    src->copy_dir, strerror(-r));
        src->fd = TAKE_FD(out);
        snprintf(src->uri, sizeof(src->uri), "file:/proc/self/fd/%d?mode=ro&immutable=1", src->fd);
        return 0;
}

/* What is no SQLite file is no bundle; a database in WAL mode may hold committed changes in its
 * -wal file, which a bundle does not carry and an immutable open ignores. */
static int refuse_wal(const Source *src, char **ret_message) {
        uint8_t header[100];
        ssize_t n = read_full_at(src->fd, header, sizeof(header), 0);
        if (n < 0)
                return message_fail(ret_message, (int) n, "%s: %s", src->path, strerror((int) -n));
        if (n < 16 || memcmp(header, "SQLite format 3", 16) != 0)
                return message_fail(ret_message, -EBADMSG,
                                    "%s is neither an alloclab bundle nor hyperfine's or pyperf's JSON",
                                    src->path);
        if (n == sizeof(header) && (header[18] == 2 || header[19] == 2))
                return message_fail(ret_message, -EBADMSG,
                                    "%s is a database in WAL mode, not a bundle alloclab export wrote: its "
                                    "latest changes may be in %s-wal, which import does not read",
                                    src->path, src->path);
        return 0;
}

/* What a column of a bundle's run may hold beyond its declared type. A text column is CLEAN
 * unless listed: no control characters, UTF-8 (util/text.h). */
typedef enum Rule {
        RULE_CLEAN,        /* at most CLEAN_MAX bytes */
        RULE_LABEL,        /* clean, at most RUN_MAX_LABEL bytes: a run's label or commit */
        RULE_FREE,         /* what a program or an allocator wrote, or a spec's YAML: shown escaped */
        RULE_NAME,         /* a name as a spec names things: 1-64 letters, digits, '_', '-', '.' */
        RULE_JSON,         /* JSON as alloclab wrote it (its readers parse it) */
        RULE_UUID,         /* a run's UUID: 36 characters, lowercase hex and dashes */
        RULE_SPEC_SHA256,  /* the sha256 of the row's yaml: a spec's text is what its hash says */
        RULE_NON_NEGATIVE, /* a count, a size or a time */
        RULE_FRACTION,     /* a spec's alpha or min_effect */
        RULE_FINITE,       /* any other REAL: no infinity */
        _RULE_MAX,
} Rule;

/* Bytes of text a column holds at most (a path, a host's facts, JSON a run wrote): longer
 * texts are no run alloclab made, and would fill a terminal or a page. */
#define CLEAN_MAX          4096
#define FREE_MAX           (1024 * 1024) /* a spec (YAMLTREE_MAX_INPUT_BYTES), a stderr excerpt, a message */
#define JSON_MAX           (8 * 1024 * 1024)
/* The SQL condition that $C holds at most max bytes (NULL does). */
#define AT_MOST_BYTES(max) "ifnull(length(CAST($C AS BLOB)), 0) <= " STRINGIFY(max)

static const struct {
        const char *table, *column;
        Rule rule;
} column_rules[] = {
        { "specs", "yaml", RULE_FREE },
        { "specs", "sha256", RULE_SPEC_SHA256 },
        { "samples", "stderr_excerpt", RULE_FREE },
        { "samples", "detail", RULE_FREE },
        { "exclusions", "reason", RULE_FREE },
        { "runs", "message", RULE_FREE },
        { "experiments", "name", RULE_NAME },
        { "variants", "name", RULE_NAME },
        { "sample_metrics", "name", RULE_NAME },
        { "stats", "metric", RULE_NAME },
        { "runs", "host_facts", RULE_JSON },
        { "runs", "calibrate_command", RULE_JSON },
        { "runs", "import_cpu", RULE_JSON },
        { "runs", "verify_ignore", RULE_JSON },
        { "runs", "metric_defs", RULE_JSON },
        { "variants", "env", RULE_JSON },
        { "variants", "command", RULE_JSON },
        { "cells", "params", RULE_JSON },
        { "probe_reports", "report", RULE_JSON },
        { "runs", "uuid", RULE_UUID },
        { "runs", "label", RULE_LABEL },
        { "runs", "commit_id", RULE_LABEL },
        { "runs", "alpha", RULE_FRACTION },
        { "runs", "min_effect", RULE_FRACTION },
        { "runs", "samples", RULE_NON_NEGATIVE },
        { "runs", "samples_min", RULE_NON_NEGATIVE },
        { "runs", "warmup", RULE_NON_NEGATIVE },
        { "runs", "timeout_ns", RULE_NON_NEGATIVE },
        { "runs", "n_runs", RULE_NON_NEGATIVE },
        { "runs", "n_failures", RULE_NON_NEGATIVE },
        { "runs", "n_excluded", RULE_NON_NEGATIVE },
        { "hosts", "cpus", RULE_NON_NEGATIVE },
        { "stats", "n", RULE_NON_NEGATIVE },
        { "samples", "wall_ns", RULE_NON_NEGATIVE },
        { "samples", "user_us", RULE_NON_NEGATIVE },
        { "samples", "sys_us", RULE_NON_NEGATIVE },
        { "samples", "maxrss_kib", RULE_NON_NEGATIVE },
        { "samples", "minflt", RULE_NON_NEGATIVE },
        { "samples", "majflt", RULE_NON_NEGATIVE },
        { "samples", "nvcsw", RULE_NON_NEGATIVE },
        { "samples", "nivcsw", RULE_NON_NEGATIVE },
        { "samples", "step", RULE_NON_NEGATIVE },
        { "samples", "round", RULE_NON_NEGATIVE },
        { "samples", "leftover", RULE_NON_NEGATIVE },
        { "samples", "leftover_processes", RULE_NON_NEGATIVE },
        { "samples", "output_size", RULE_NON_NEGATIVE },
        { "samples", "cpu_us", RULE_NON_NEGATIVE },
        { "samples", "peak_kib", RULE_NON_NEGATIVE },
        { "samples", "quiet_wait_ns", RULE_NON_NEGATIVE },
        { "samples", "other_cpu_ns", RULE_NON_NEGATIVE },
        { "samples", "steal_ns", RULE_NON_NEGATIVE },
        { "calibration", "wall_ns", RULE_NON_NEGATIVE },
        { "calibration", "user_us", RULE_NON_NEGATIVE },
        { "calibration", "sys_us", RULE_NON_NEGATIVE },
        { "calibration", "maxrss_kib", RULE_NON_NEGATIVE },
};

/* The largest finite double, as SQLite reads it: infinity is above it. */
#define DBL_MAX_SQL "1.7976931348623157e308"

/* Per rule: the SQL condition over the column ($C; the row's other columns by name), and the
 * words for a value that breaks it. */
static const struct {
        const char *sql, *breaks;
} rule_texts[_RULE_MAX] = {
        [RULE_CLEAN] = { "(alloclab_clean($C) AND " AT_MOST_BYTES(CLEAN_MAX) ")",
                         "text with control characters, not UTF-8, or over " STRINGIFY(CLEAN_MAX) " bytes" },
        [RULE_LABEL] = { "(alloclab_clean($C) AND " AT_MOST_BYTES(RUN_MAX_LABEL) ")",
                         "text with control characters, not UTF-8, or over " STRINGIFY(
                                 RUN_MAX_LABEL) " bytes" },
        [RULE_FREE] = { AT_MOST_BYTES(FREE_MAX), "text over 1 MiB" },
        [RULE_NAME] = { "($C IS NULL OR alloclab_name($C))",
                        "a name that breaks the rule of names (1-64 letters, digits, '_', '-' or '.')" },
        [RULE_JSON] = { "($C IS NULL OR (json_valid($C) AND " AT_MOST_BYTES(JSON_MAX) "))",
                        "what is not JSON, or is over 8 MiB" },
        [RULE_UUID] = { "($C IS NULL OR (length($C) = 36 AND NOT $C GLOB '*[^0-9a-f-]*'))",
                        "what is not a UUID" },
        [RULE_SPEC_SHA256] = { "$C = alloclab_sha256(yaml)", "a hash that is not the sha256 of its spec" },
        [RULE_NON_NEGATIVE] = { "($C IS NULL OR $C BETWEEN 0 AND " DBL_MAX_SQL ")",
                                "what is not a finite number of 0 or more" },
        [RULE_FRACTION] = { "($C IS NULL OR $C BETWEEN 0 AND 1)", "what is not a fraction between 0 and 1" },
        [RULE_FINITE] = { "($C IS NULL OR abs($C) <= " DBL_MAX_SQL ")", "what is not a finite number" },
};

/* The tables a run is imported from, as bundle_export() writes them. */
static const char *const run_tables[] = { "hosts",          "experiments",   "specs",      "allocators",
                                          "runs",           "variants",      "cells",      "samples",
                                          "sample_metrics", "probe_reports", "exclusions", "stats",
                                          "calibration" };

/* SQL functions of the checks (registered on the checking connection only, SQLITE_DIRECTONLY:
 * nothing in a bundle's schema may call them): alloclab_clean(x) is 1 when x is no text, or
 * clean text; alloclab_name(x) when x is text that follows the names' rule; alloclab_sha256(x)
 * is the hex sha256 of text x. A text with a NUL byte in it is neither clean nor a name. */
static const char *whole_text(sqlite3_value *v) {
        const char *text = (const char *) sqlite3_value_text(v);
        return sqlite3_value_type(v) == SQLITE_TEXT && text &&
                               (size_t) sqlite3_value_bytes(v) == strlen(text)
                       ? text
                       : NULL;
}

static void sql_clean(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
        (void) argc;
        const char *text = whole_text(argv[0]);
        sqlite3_result_int(ctx, sqlite3_value_type(argv[0]) != SQLITE_TEXT || (text && text_is_clean(text)));
}

static void sql_name(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
        (void) argc;
        const char *text = whole_text(argv[0]);
        sqlite3_result_int(ctx, text && schema_is_identifier(text, true));
}

static void sql_sha256(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
        (void) argc;
        char hex[SHA256_HEX_SIZE];
        const void *bytes = sqlite3_value_text(argv[0]);
        sha256_hex(bytes ? bytes : "", (size_t) sqlite3_value_bytes(argv[0]), hex);
        sqlite3_result_text(ctx, hex, -1, SQLITE_TRANSIENT);
}

/* The typeof() values a column of declared type `type` may hold. */
static const char *allowed_types(const char *type) {
        return strcasecmp(type, "INTEGER") == 0 ? "'integer', 'null'"
               : strcasecmp(type, "REAL") == 0  ? "'real', 'integer', 'null'"
               : strcasecmp(type, "TEXT") == 0  ? "'text', 'null'"
                                                : NULL;
}

static Rule rule_of(const char *table, const char *column, const char *type) {
        for (size_t i = 0; i < ELEMENTSOF(column_rules); i++)
                if (strcmp(column_rules[i].table, table) == 0 && strcmp(column_rules[i].column, column) == 0)
                        return column_rules[i].rule;
        return strcasecmp(type, "TEXT") == 0   ? RULE_CLEAN
               : strcasecmp(type, "REAL") == 0 ? RULE_FINITE
                                               : RULE_FREE;
}

/* What column `column` (of declared type `type`) of `table` must satisfy, as an SQL condition:
 * its type, and its rule; NULL for none (sqlite3_free() it). */
static char *column_rule(const char *table, const char *column, const char *type) {
        const char *types = allowed_types(type);
        if (!types)
                return NULL;
        const char *rule = rule_texts[rule_of(table, column, type)].sql;
        sqlite3_str *extra = sqlite3_str_new(NULL);
        for (const char *at = rule; at && *at;) { /* $C: the column, quoted */
                const char *c = strstr(at, "$C");
                size_t len = c ? (size_t) (c - at) : strlen(at);
                sqlite3_str_append(extra, at, (int) len);
                if (c)
                        sqlite3_str_appendf(extra, "\"%w\"", column);
                at += len + (c ? 2 : 0);
        }
        _cleanup_(sqlite3_freep) char *condition = sqlite3_str_finish(extra);
        if (rule && !condition)
                return NULL;
        return sqlite3_mprintf("(typeof(\"%w\") IN (%s)%s%s)", column, types, rule ? " AND " : "",
                               rule ? condition : "");
}

/* Checks every row of `table`: each column holds its declared type, names follow the names'
 * rule, and other text is clean. One scan; the first offending row and column are named. */
static int check_table(sqlite3 *db, const Source *src, const char *table, char **ret_message) {
        char *sql = sqlite3_mprintf("SELECT name, type FROM pragma_table_info(%Q) ORDER BY cid", table);
        sqlite3_stmt *st = NULL;
        int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
        if (rc != SQLITE_OK)
                return rc == SQLITE_NOMEM ? -ENOMEM : sql_failed(db);
        sqlite3_str *all = sqlite3_str_new(db);
        char *rules[64] = {}, columns[64][64], declared[64][16];
        size_t n = 0;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < ELEMENTSOF(columns)) {
                const char *column = (const char *) sqlite3_column_text(st, 0);
                char *rule = column_rule(table, column, (const char *) sqlite3_column_text(st, 1));
                if (!rule)
                        continue;
                snprintf(columns[n], sizeof(columns[n]), "%s", column);
                snprintf(declared[n], sizeof(declared[n]), "%s", (const char *) sqlite3_column_text(st, 1));
                rules[n++] = rule;
                sqlite3_str_appendf(all, "%s%s", sqlite3_str_length(all) ? " AND " : "", rule);
        }
        sqlite3_finalize(st);
        _cleanup_(sqlite3_freep) char *every = sqlite3_str_finish(all);
        /* The first row that breaks a rule, with each rule's verdict and each column's type. */
        sqlite3_str *q = sqlite3_str_new(db);
        for (size_t i = 0; i < n; i++)
                sqlite3_str_appendf(
                        q, "%sNOT %s, typeof(\"%w\"), substr(CAST(\"%w\" AS TEXT), 1, 40), length(\"%w\")",
                        i ? ", " : "", rules[i], columns[i], columns[i], columns[i]);
        _cleanup_(sqlite3_freep) char *checks = sqlite3_str_finish(q);
        sql = n == 0 || !every || !checks ? NULL
                                          : sqlite3_mprintf("SELECT %s FROM \"%w\" WHERE NOT (%s) LIMIT 1",
                                                            checks, table, every);
        int r = 0;
        if (n > 0 && !sql)
                r = -ENOMEM;
        else if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                r = sql_failed(db);
        else if (sql && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                size_t i = 0;
                while (i + 1 < n && !sqlite3_column_int(st, (int) (4 * i)))
                        i++;
                const char *type = (const char *) sqlite3_column_text(st, (int) (4 * i + 1));
                const char *value = (const char *) sqlite3_column_text(st, (int) (4 * i + 2));
                int64_t length = sqlite3_column_int64(st, (int) (4 * i + 3));
                char quoted[32];
                snprintf(quoted, sizeof(quoted), "'%s'", type ? type : "");
                bool typed = strstr(allowed_types(declared[i]), quoted) != NULL;
                const char *breaks = rule_texts[rule_of(table, columns[i], declared[i])].breaks;
                const char *why = !typed   ? "a value of a type its column does not take"
                                  : breaks ? breaks
                                           : "what its column does not take";
                /* Escaped: the value is the bundle's, and may hold a forged line of its own. A
                 * blob is bytes: its length says more. */
                _cleanup_free_ char *shown = NULL;
                bool blob = type && strcmp(type, "blob") == 0;
                r = blob ? asprintf(&shown, "(a blob of %" PRId64 " bytes)", length)
                    : (shown = text_shown(value ? value : "")) ? 0
                                                               : -1;
                r = r >= 0 ? message_fail(ret_message, -EBADMSG, "%s: %s.%s holds %s: %s%s%s%s", src->path,
                                          table, columns[i], why, blob ? "" : "'", shown, blob ? "" : "'",
                                          blob || length <= 40 ? "" : "...")
                           : -ENOMEM;
        } else if (sql && rc != SQLITE_DONE)
                r = sql_failed(db);
        if (sql)
                sqlite3_finalize(st);
        sqlite3_free(sql);
        for (size_t i = 0; i < n; i++)
                sqlite3_free(rules[i]);
        return r;
}

/* Whether a line of text `a` is not a line of `b`: *ret gets the first such line. */
static bool first_line_not_in(const char *a, const char *b, const char **ret) {
        for (const char *line = a; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
                size_t len = strcspn(line, "\n");
                bool found = false;
                for (const char *other = b; *other && !found;
                     other += strcspn(other, "\n") + (other[strcspn(other, "\n")] != 0))
                        found = strcspn(other, "\n") == len && memcmp(other, line, len) == 0;
                if (!found) {
                        *ret = line;
                        return true;
                }
        }
        *ret = a;
        return false;
}

/* Copies src->path privately and checks the copy alone, read-only and with trusted_schema off:
 * an undamaged bundle of a schema this alloclab reads, whose schema objects are exactly that
 * schema's (no view, trigger or other object), and whose rows hold what their columns take. */
static int check_file(Source *src, char **ret_message) {
        int r = copy_source(src, ret_message);
        if (r >= 0)
                r = refuse_wal(src, ret_message);
        if (r < 0)
                return r;
        sqlite3 *db = NULL;
        int rc = sqlite3_open_v2(src->uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                                 NULL);
        /* All here: a goto out must not pass a variable that is cleaned up at the end. */
        _cleanup_free_ char *check = NULL, *format = NULL, *have = NULL, *want = NULL, *bundle_sql = NULL,
                            *dangling = NULL;
        int64_t version = 0, schema = 0;
        r = rc == SQLITE_OK ? sql_execf(db, "PRAGMA trusted_schema = OFF") : -EIO;
        if (r >= 0)
                r = sql_queryf(db, NULL, &check, "PRAGMA quick_check");
        if (r == -ENOMEM)
                goto out;
        if (r < 0 || !check || strcmp(check, "ok") != 0) {
                r = message_fail(ret_message, -EBADMSG, "%s is damaged: %s", src->path,
                                 check ? check
                                 : db  ? sqlite3_errmsg(db)
                                       : "cannot open it");
                goto out;
        }
        /* The table that says what the file is must be that table before it is read. */
        if ((r = sql_queryf(db, NULL, &bundle_sql,
                            "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'bundle'")) < 0)
                goto out;
        if (!bundle_sql ||
            strcmp(bundle_sql, "CREATE TABLE bundle (key TEXT PRIMARY KEY, value TEXT NOT NULL)") != 0 ||
            (r = sql_queryf(db, NULL, &format, "SELECT value FROM bundle WHERE key = 'format'")) < 0 ||
            !format || strcmp(format, BUNDLE_FORMAT) != 0) {
                r = message_fail(
                        ret_message, -EBADMSG,
                        "%s is not an alloclab bundle (make one with alloclab export RUN... --bundle FILE)",
                        src->path);
                goto out;
        }
        if ((r = sql_queryf(db, &version, NULL, "SELECT value FROM bundle WHERE key = 'version'")) < 0 ||
            (r = sql_queryf(db, &schema, NULL, "PRAGMA user_version")) < 0)
                goto out;
        if (version != BUNDLE_VERSION || schema < BUNDLE_OLDEST_SCHEMA || schema > STORE_SCHEMA_VERSION) {
                r = message_fail(
                        ret_message, -EPROTO,
                        "%s is a bundle of version %lld with schema %lld; this alloclab reads version %d "
                        "with schema %d to %d: import it with the alloclab that wrote it",
                        src->path, (long long) version, (long long) schema, BUNDLE_VERSION,
                        BUNDLE_OLDEST_SCHEMA, STORE_SCHEMA_VERSION);
                goto out;
        }
        if ((r = store_schema_text(db, "main", &have)) < 0 ||
            (r = store_expected_schema((int) schema, &want)) < 0)
                goto out;
        if (strcmp(have, want) != 0) {
                /* An object it has that the schema does not (a view, a trigger, a changed table),
                 * else one it lacks. */
                const char *line = NULL;
                bool lacks = !first_line_not_in(have, want, &line);
                if (lacks)
                        (void) first_line_not_in(want, have, &line);
                r = message_fail(ret_message, -EBADMSG,
                                 "%s: its schema is not that of schema %lld: it %s '%.*s'%s", src->path,
                                 (long long) schema, lacks ? "lacks" : "has", (int) strcspn(line, "\n"),
                                 line, lacks ? "" : ", which that schema does not");
                goto out;
        }
        if ((rc = sqlite3_create_function(db, "alloclab_clean", 1,
                                          SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, NULL,
                                          sql_clean, NULL, NULL)) != SQLITE_OK ||
            (rc = sqlite3_create_function(db, "alloclab_name", 1,
                                          SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, NULL,
                                          sql_name, NULL, NULL)) != SQLITE_OK ||
            (rc = sqlite3_create_function(db, "alloclab_sha256", 1,
                                          SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, NULL,
                                          sql_sha256, NULL, NULL)) != SQLITE_OK) {
                r = rc == SQLITE_NOMEM ? -ENOMEM : sql_failed(db);
                goto out;
        }
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(run_tables); i++)
                r = check_table(db, src, run_tables[i], ret_message);
        /* Every reference within the file holds: a row that names one not there would fail the
         * import later with "FOREIGN KEY constraint failed", naming nothing. */
        if (r >= 0 &&
            (r = sql_queryf(
                     db, NULL, &dangling,
                     "SELECT \"table\" || ' row ' || rowid || ' names a row of ' || parent || ' that is "
                     "not there'"
                     " FROM pragma_foreign_key_check LIMIT 1")) >= 0 &&
            dangling)
                r = message_fail(ret_message, -EBADMSG, "%s: %s", src->path, dangling);
        if (r == -EIO)
                r = message_fail(ret_message, r, "%s: %s", src->path, sql_last_failure());
out:
        sqlite3_close_v2(db);
        return r;
}

/* ---- a run's content, to tell a copy of it from another run under the same UUID ---- */

/* What makes a shared row what it is, for a column that refers to one: the row's natural key in
 * place of its local id. */
static const struct {
        const char *column, *key;
} shared_keys[] = {
        { "host_id", "(SELECT json_array(hostname, kernel, cpu_model, cpus, glibc, thp) FROM %s.hosts WHERE "
                     "id = t.host_id)" },
        { "experiment_id", "(SELECT name FROM %s.experiments WHERE id = t.experiment_id)" },
        { "spec_id", "(SELECT sha256 FROM %s.specs WHERE id = t.spec_id)" },
        { "allocator_id",
          "(SELECT json_array(name, path, sha256, version) FROM %s.allocators WHERE id = t.allocator_id)" },
};

/* Columns that refer to a row of the run's own, moved by one offset per table on import: their
 * value less the run's smallest id of that table is the same in every copy of the run. */
static const struct {
        const char *column, *table;
} own_keys[] = { { "variant_id", "variants" }, { "cell_id", "cells" }, { "sample_id", "samples" } };

/* The statement that reads the rows of one table of a run (?1: the run's id in `schema`) as
 * the content hash sees them: every column, ids as above, ordered by all of them. */
static int prepare_table_rows(sqlite3 *db, const char *schema, const char *table, sqlite3_stmt **ret) {
        char *sql =
                sqlite3_mprintf("SELECT name FROM pragma_table_info(%Q, %Q) ORDER BY cid", table, schema);
        sqlite3_stmt *st = NULL;
        int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
        if (rc != SQLITE_OK)
                return rc == SQLITE_NOMEM ? -ENOMEM : sql_failed(db);
        sqlite3_str *select = sqlite3_str_new(db), *order = sqlite3_str_new(db);
        size_t n = 0;
        bool has_run_id = false;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *column = (const char *) sqlite3_column_text(st, 0);
                if (strcmp(column, "run_id") == 0) {
                        has_run_id = true;
                        continue;
                }
                const char *sep = n++ ? ", " : "";
                sqlite3_str_appendf(order, "%s%lld", sep, (long long) n);
                bool done = false;
                for (size_t i = 0; i < ELEMENTSOF(shared_keys) && !done; i++)
                        if ((done = strcmp(column, shared_keys[i].column) == 0)) {
                                sqlite3_str_appendall(select, sep);
                                sqlite3_str_appendf(select, shared_keys[i].key, schema);
                        }
                for (size_t i = 0; i < ELEMENTSOF(own_keys) && !done; i++)
                        if ((done = strcmp(column, own_keys[i].column) == 0))
                                sqlite3_str_appendf(select,
                                                    "%st.%s - (SELECT min(id) FROM %s.%s WHERE run_id = ?1)",
                                                    sep, column, schema, own_keys[i].table);
                if (done)
                        continue;
                if (strcmp(column, "id") == 0 && strcmp(table, "runs") == 0)
                        sqlite3_str_appendf(select, "%s0", sep);
                else if (strcmp(column, "id") == 0)
                        sqlite3_str_appendf(select, "%st.id - (SELECT min(id) FROM %s.%s WHERE run_id = ?1)",
                                            sep, schema, table);
                else if (strcmp(table, "runs") == 0 && strcmp(column, "status") == 0)
                        /* import_run() makes a running run interrupted */
                        sqlite3_str_appendf(
                                select,
                                "%sCASE t.status WHEN 'running' THEN 'interrupted' ELSE t.status END", sep);
                else
                        sqlite3_str_appendf(select, "%st.\"%w\"", sep, column);
        }
        sqlite3_finalize(st);
        _cleanup_(sqlite3_freep) char *columns = sqlite3_str_finish(select);
        _cleanup_(sqlite3_freep) char *order_by = sqlite3_str_finish(order);
        if (rc != SQLITE_DONE)
                return sql_failed(db);
        if (!columns || !order_by)
                return -ENOMEM;
        sql = strcmp(table, "runs") == 0
                      ? sqlite3_mprintf("SELECT %s FROM %s.runs t WHERE t.id = ?1", columns, schema)
              : has_run_id ? sqlite3_mprintf("SELECT %s FROM %s.%s t WHERE t.run_id = ?1 ORDER BY %s",
                                             columns, schema, table, order_by)
                           : sqlite3_mprintf(
                                     "SELECT %s FROM %s.%s t WHERE t.sample_id IN (SELECT id FROM %s.samples"
                                     " WHERE run_id = ?1) ORDER BY %s",
                                     columns, schema, table, schema, order_by);
        rc = sql ? sqlite3_prepare_v2(db, sql, -1, ret, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
        return rc == SQLITE_OK ? 0 : rc == SQLITE_NOMEM ? -ENOMEM : sql_failed(db);
}

/* The tables of a run's own rows, from runs on (run_tables[RUN_OWN...]), each read by a
 * statement prepared once for every run of an import. */
#define RUN_OWN 4

typedef struct Hasher {
        sqlite3 *db;
        const char *schema;
        sqlite3_stmt *tables[ELEMENTSOF(run_tables) - RUN_OWN];
} Hasher;

static void hasher_done(Hasher *h) {
        for (size_t i = 0; i < ELEMENTSOF(h->tables); i++)
                sqlite3_finalize(h->tables[i]);
}

static int hasher_init(Hasher *h, sqlite3 *db, const char *schema) {
        *h = (Hasher){ .db = db, .schema = schema };
        for (size_t i = 0; i < ELEMENTSOF(h->tables); i++) {
                int r = prepare_table_rows(db, schema, run_tables[RUN_OWN + i], &h->tables[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

#define CONTENT_HEX_SIZE 33

/* The content hash (XXH3-128, as outputs are hashed) of the run with UUID uuid: every row of
 * every table of the run, as prepare_table_rows() reads them, each value with its type and
 * length. Returns 0 with ret_hex, -ENOENT when the run is not there. */
static int hasher_run(Hasher *h, const char *uuid, char ret_hex[CONTENT_HEX_SIZE]) {
        int64_t id = 0;
        int r = sql_queryf(h->db, &id, NULL, "SELECT coalesce((SELECT id FROM %s.runs WHERE uuid = %Q), 0)",
                           h->schema, uuid);
        if (r < 0)
                return r;
        if (id == 0)
                return -ENOENT;
        XXH3_state_t *state = XXH3_createState();
        if (!state)
                return -ENOMEM;
        XXH3_128bits_reset(state);
        for (size_t k = 0; k < ELEMENTSOF(h->tables); k++) {
                sqlite3_stmt *st = h->tables[k];
                sqlite3_reset(st);
                sqlite3_bind_int64(st, 1, id);
                XXH3_128bits_update(state, run_tables[RUN_OWN + k], strlen(run_tables[RUN_OWN + k]) + 1);
                int rc;
                while ((rc = sqlite3_step(st)) == SQLITE_ROW)
                        for (int c = 0; c < sqlite3_column_count(st); c++) {
                                /* Type, length and bytes: no two different rows feed the same bytes. */
                                uint8_t type = (uint8_t) sqlite3_column_type(st, c);
                                XXH3_128bits_update(state, &type, 1);
                                if (type == SQLITE_INTEGER) {
                                        int64_t v = sqlite3_column_int64(st, c);
                                        XXH3_128bits_update(state, &v, sizeof(v));
                                } else if (type == SQLITE_FLOAT) {
                                        double v = sqlite3_column_double(st, c);
                                        XXH3_128bits_update(state, &v, sizeof(v));
                                } else if (type != SQLITE_NULL) {
                                        const void *bytes = sqlite3_column_blob(st, c);
                                        uint64_t len = (uint64_t) sqlite3_column_bytes(st, c);
                                        XXH3_128bits_update(state, &len, sizeof(len));
                                        XXH3_128bits_update(state, bytes, len);
                                }
                        }
                if (rc != SQLITE_DONE) {
                        XXH3_freeState(state);
                        return sql_failed(h->db);
                }
        }
        XXH128_hash_t digest = XXH3_128bits_digest(state);
        XXH3_freeState(state);
        snprintf(ret_hex, CONTENT_HEX_SIZE, "%016llx%016llx", (unsigned long long) digest.high64,
                 (unsigned long long) digest.low64);
        return 0;
}

/* Checks the runs of the bundle attached as src->schema against this database (in which the
 * bundles before it in this import are already, uncommitted) and the hosts accepted so far
 * (temp.import_hosts: every host name with the fingerprints accepted for it). */
static int check_runs(sqlite3 *db, const Source *src, const BundleOptions *o, char **ret_message) {
        sqlite3_stmt *st;
        char *sql = sqlite3_mprintf("SELECT r.uuid, h.hostname, r.host_fingerprint,"
                                    " json_extract(r.host_facts, '$.machine_id') FROM %s.runs r"
                                    " JOIN %s.hosts h ON h.id = r.host_id ORDER BY r.id",
                                    src->schema, src->schema);
        int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
        if (rc != SQLITE_OK)
                return message_fail(ret_message, -EBADMSG, "%s: %s", src->path, sqlite3_errmsg(db));
        Hasher here_hasher = {}, there_hasher = {};
        int r = hasher_init(&here_hasher, db, "main");
        if (r >= 0)
                r = hasher_init(&there_hasher, db, src->schema);
        while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *uuid = (const char *) sqlite3_column_text(st, 0);
                const char *hostname = (const char *) sqlite3_column_text(st, 1);
                const char *fingerprint = (const char *) sqlite3_column_text(st, 2);
                const char *machine = (const char *) sqlite3_column_text(st, 3);
                if (!uuid || !hostname) {
                        r = message_fail(ret_message, -EBADMSG, "%s: a run without UUID or host", src->path);
                        break;
                }
                char here[CONTENT_HEX_SIZE], there[CONTENT_HEX_SIZE];
                r = hasher_run(&here_hasher, uuid, here);
                if (r == 0 && (r = hasher_run(&there_hasher, uuid, there)) >= 0 &&
                    strcmp(here, there) != 0) {
                        r = message_fail(
                                ret_message, -EEXIST,
                                "%s: run %s is here already (or in a file before it in this import) with "
                                "other content (content hash %.12s here, %.12s there: samples, metrics, "
                                "statistics, settings, label, spec or host differ)",
                                src->path, uuid, here, there);
                        break;
                }
                if (r == 0) /* here already, the same: nothing to add */
                        continue;
                if (r != -ENOENT)
                        break;
                int64_t known = 0, same = 0;
                _cleanup_free_ char *other = NULL, *other_machine = NULL;
                if ((r = sql_queryf(db, &known, NULL,
                                    "SELECT count(*) FROM temp.import_hosts WHERE hostname = %Q",
                                    hostname)) < 0 ||
                    (r = sql_queryf(
                             db, &same, NULL,
                             "SELECT count(*) FROM temp.import_hosts WHERE hostname = %Q AND fingerprint "
                             "= %Q",
                             hostname, fingerprint)) < 0 ||
                    (r = sql_queryf(db, NULL, &other,
                                    "SELECT fingerprint FROM temp.import_hosts WHERE hostname = %Q",
                                    hostname)) < 0 ||
                    (r = sql_queryf(db, NULL, &other_machine,
                                    "SELECT machine_id FROM temp.import_hosts WHERE hostname = %Q",
                                    hostname)) < 0)
                        break;
                /* A run without a fingerprint (alloclab before schema 10) of a host known here
                 * with one: nothing says it is the same machine. */
                if (!fingerprint && known > 0 && !o->accept_host_change) {
                        r = message_fail(
                                ret_message, -EXDEV,
                                "%s: run %s of host %s has no fingerprint, and %s is known here with "
                                "fingerprint %.12s: import with --accept-host-change if it is that "
                                "machine",
                                src->path, uuid, hostname, hostname, other);
                        break;
                }
                if (!fingerprint) {
                        r = 0;
                        continue;
                }
                if (known > 0 && same == 0 && !o->accept_host_change) {
                        bool another = !machine || !other_machine || strcmp(machine, other_machine) != 0;
                        r = message_fail(
                                ret_message, -EXDEV,
                                "%s: host %s has fingerprint %.12s here and %.12s in run %s (%s): import "
                                "with --accept-host-change if it is the same machine, changed",
                                src->path, hostname, other, fingerprint, uuid,
                                another ? "its machine-id differs: another machine under the same name?"
                                        : "the same machine-id: a change of kernel, firmware or settings?");
                        break;
                }
                r = sql_execf(db, "INSERT OR IGNORE INTO temp.import_hosts VALUES (%Q, %Q, %Q)", hostname,
                              fingerprint, machine);
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = sql_failed(db);
        sqlite3_finalize(st);
        hasher_done(&here_hasher);
        hasher_done(&there_hasher);
        return r;
}

/* Adds run `old` of the bundle attached as `b` (inside the import's transaction). */
static int import_run(sqlite3 *db, const char *b, int64_t old, BundleTally *tally) {
        /* Hosts, experiments, specs and allocators are shared by runs: found, or added. */
        int r = sql_execf(db,
                          "INSERT OR IGNORE INTO main.hosts (hostname, kernel, cpu_model, cpus, glibc, thp)"
                          " SELECT hostname, kernel, cpu_model, cpus, glibc, thp FROM %s.hosts"
                          " WHERE id = (SELECT host_id FROM %s.runs WHERE id = %lld);"
                          "INSERT OR IGNORE INTO main.experiments (name) SELECT name FROM %s.experiments"
                          " WHERE id = (SELECT experiment_id FROM %s.runs WHERE id = %lld);"
                          "INSERT OR IGNORE INTO main.specs (sha256, yaml) SELECT sha256, yaml FROM %s.specs"
                          " WHERE id = (SELECT spec_id FROM %s.runs WHERE id = %lld);"
                          "INSERT OR IGNORE INTO main.allocators (name, path, sha256, version)"
                          " SELECT name, path, sha256, version FROM %s.allocators"
                          " WHERE id IN (SELECT allocator_id FROM %s.variants WHERE run_id = %lld);",
                          b, b, (long long) old, b, b, (long long) old, b, b, (long long) old, b, b,
                          (long long) old);
        int64_t id = 0, dv = 0, dc = 0, ds = 0, dk = 0, n_samples = 0;
        /* Each table's rows of the run move past the largest id here, by one offset per table. */
#define OFFSET(table, where)                                                                                \
        "SELECT coalesce((SELECT max(id) FROM main." table "), 0) + 1"                                      \
        " - coalesce((SELECT min(id) FROM %s." table " WHERE " where " = %lld), 0)"
        if (r >= 0)
                r = sql_queryf(db, &id, NULL, "SELECT coalesce(max(id), 0) + 1 FROM main.runs");
        if (r >= 0)
                r = sql_queryf(db, &dv, NULL, OFFSET("variants", "run_id"), b, (long long) old);
        if (r >= 0)
                r = sql_queryf(db, &dc, NULL, OFFSET("cells", "run_id"), b, (long long) old);
        if (r >= 0)
                r = sql_queryf(db, &ds, NULL, OFFSET("samples", "run_id"), b, (long long) old);
        if (r >= 0)
                r = sql_queryf(db, &dk, NULL, OFFSET("calibration", "run_id"), b, (long long) old);
        if (r >= 0)
                r = sql_queryf(db, &n_samples, NULL, "SELECT count(*) FROM %s.samples WHERE run_id = %lld",
                               b, (long long) old);
#undef OFFSET
        /* The columns' new values as SQL over the bundle's row `src`: numbers moved by the
         * offsets, and the shared rows found here by what makes them unique. */
        char run[32], variant[64], cell[64], sample[64], own[4][64], in_run[64], the_run[64], of_run[128];
        snprintf(run, sizeof(run), "%lld", (long long) id);
        snprintf(variant, sizeof(variant), "src.variant_id + %lld", (long long) dv);
        snprintf(cell, sizeof(cell), "src.cell_id + %lld", (long long) dc);
        snprintf(sample, sizeof(sample), "src.sample_id + %lld", (long long) ds);
        const int64_t own_offsets[] = { dv, dc, ds, dk };
        for (size_t i = 0; i < ELEMENTSOF(own); i++)
                snprintf(own[i], sizeof(own[i]), "src.id + %lld", (long long) own_offsets[i]);
        snprintf(in_run, sizeof(in_run), "src.run_id = %lld", (long long) old);
        snprintf(the_run, sizeof(the_run), "src.id = %lld", (long long) old);
        snprintf(of_run, sizeof(of_run), "src.sample_id IN (SELECT id FROM %s.samples WHERE run_id = %lld)",
                 b, (long long) old);
        char host[256], experiment[160], spec[160], allocator[200];
        snprintf(host, sizeof(host),
                 "(SELECT m.id FROM main.hosts m JOIN %s.hosts h USING (hostname, kernel,"
                 " cpu_model, cpus, glibc, thp) WHERE h.id = src.host_id)",
                 b);
        snprintf(experiment, sizeof(experiment),
                 "(SELECT m.id FROM main.experiments m JOIN %s.experiments e"
                 " USING (name) WHERE e.id = src.experiment_id)",
                 b);
        snprintf(spec, sizeof(spec),
                 "(SELECT m.id FROM main.specs m JOIN %s.specs p USING (sha256) WHERE p.id = src.spec_id)",
                 b);
        snprintf(allocator, sizeof(allocator),
                 "(SELECT m.id FROM main.allocators m JOIN %s.allocators a USING"
                 " (name, path, sha256, version) WHERE a.id = src.allocator_id)",
                 b);
        /* A run that a bundle says is running was running where it came from; here it is what
         * recovery would make of it. */
        const Mapping runs[] = {
                { "id", run },
                { "status", "CASE src.status WHEN 'running' THEN 'interrupted' ELSE src.status END" },
                { "host_id", host },
                { "experiment_id", experiment },
                { "spec_id", spec },
        };
        const Mapping variants[] = { { "id", own[0] }, { "run_id", run }, { "allocator_id", allocator } };
        const Mapping cells[] = { { "id", own[1] }, { "run_id", run } };
        const Mapping samples[] = {
                { "id", own[2] }, { "run_id", run }, { "cell_id", cell }, { "variant_id", variant }
        };
        const Mapping per_sample[] = { { "sample_id", sample } };
        const Mapping per_cell[] = { { "run_id", run }, { "cell_id", cell }, { "variant_id", variant } };
        const Mapping calibration[] = { { "id", own[3] }, { "run_id", run }, { "variant_id", variant } };
        const struct {
                const char *table;
                const Mapping *map;
                size_t n_map;
                const char *where;
        } steps[] = {
                { "runs", runs, ELEMENTSOF(runs), the_run },
                { "variants", variants, ELEMENTSOF(variants), in_run },
                { "cells", cells, ELEMENTSOF(cells), in_run },
                { "samples", samples, ELEMENTSOF(samples), in_run },
                { "sample_metrics", per_sample, ELEMENTSOF(per_sample), of_run },
                { "probe_reports", per_sample, ELEMENTSOF(per_sample), of_run },
                { "exclusions", per_cell, ELEMENTSOF(per_cell), in_run },
                { "stats", per_cell, ELEMENTSOF(per_cell), in_run },
                { "calibration", calibration, ELEMENTSOF(calibration), in_run },
        };
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(steps); i++)
                r = copy_rows(db, b, "main", steps[i].table, steps[i].map, steps[i].n_map, steps[i].where);
        if (r >= 0) {
                tally->runs++;
                tally->samples += n_samples;
        }
        return r;
}

/* Imports the runs of the bundle attached as src->schema that are not here yet; a failure
 * names the run. */
static int import_file(sqlite3 *db, const Source *src, BundleTally *tally, char **ret_message) {
        const char *b = src->schema;
        sqlite3_stmt *st;
        char *sql = sqlite3_mprintf(
                "SELECT id, uuid IN (SELECT uuid FROM main.runs) FROM %s.runs ORDER BY started_at, id", b);
        int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
        if (rc != SQLITE_OK)
                return rc == SQLITE_NOMEM ? -ENOMEM : sql_failed(db);
        int64_t *ids = NULL;
        size_t n = 0;
        int r = 0;
        /* The list first: the statement must not read b while the runs are written. */
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                if (sqlite3_column_int(st, 1)) {
                        tally->present++;
                        continue;
                }
                int64_t *grown = realloc(ids, (n + 1) * sizeof(int64_t));
                if (!grown) {
                        r = -ENOMEM;
                        break;
                }
                ids = grown;
                ids[n++] = sqlite3_column_int64(st, 0);
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = sql_failed(db);
        sqlite3_finalize(st);
        size_t i = 0;
        while (r >= 0 && i < n && (r = import_run(db, b, ids[i], tally)) >= 0)
                i++;
        if (r < 0 && r != -ENOMEM) {
                char *uuid = NULL, why[SQL_FAILURE_MAX];
                snprintf(why, sizeof(why), "%s",
                         r == -EIO ? sql_last_failure() : strerror(-r)); /* kept from the query */
                if (i < n)
                        (void) sql_queryf(db, NULL, &uuid, "SELECT uuid FROM %s.runs WHERE id = %lld", b,
                                          (long long) ids[i]);
                (void) message_fail(ret_message, r, "cannot import %s%s%s: %s", src->path,
                                    uuid ? ": run " : "", uuid ? uuid : "", why);
                free(uuid);
        }
        free(ids);
        return r;
}

struct BundleFiles {
        size_t n;
        Source sources[];
};

void bundle_files_free(BundleFiles *f) {
        if (!f)
                return;
        for (size_t i = 0; i < f->n; i++)
                source_done(&f->sources[i]);
        free(f);
}

int bundle_files_check(char *const *paths, size_t n, BundleFiles **ret, char **ret_message) {
        /* One transaction over every file: each is attached until it commits (SQLite cannot
         * detach inside a transaction), and SQLite attaches at most so many (on any
         * connection: the limit is the library's). */
        sqlite3 *memory = NULL;
        int most = sqlite3_open(":memory:", &memory) == SQLITE_OK
                           ? sqlite3_limit(memory, SQLITE_LIMIT_ATTACHED, -1)
                           : -1;
        sqlite3_close(memory);
        if (most < 0)
                return -ENOMEM;
        if (n > (size_t) most)
                return message_fail(
                        ret_message, -E2BIG,
                        "%zu files: import takes at most %d at a time (SQLite attaches no more), so "
                        "that each import is one transaction; import them in groups",
                        n, most);
        _cleanup_(bundle_files_freep) BundleFiles *f = calloc(1, sizeof(BundleFiles) + n * sizeof(Source));
        if (!f)
                return -ENOMEM;
        for (f->n = 0; f->n < n; f->n++)
                f->sources[f->n] = (Source){ .path = paths[f->n], .doomed = { -1, -1 }, .fd = -1 };
        /* Every file alone, before a database is opened. */
        for (size_t i = 0; i < n; i++) {
                int r = check_file(&f->sources[i], ret_message);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(f);
        return 0;
}

int bundle_import(Store *s, BundleFiles *files, const BundleOptions *o, BundleTally *ret,
                  char **ret_message) {
        sqlite3 *db = store_db(s);
        *ret = (BundleTally){};
        size_t n = files->n;
        Source *sources = files->sources;
        int r = sql_execf(
                db, "PRAGMA trusted_schema = OFF;"
                    "DROP TABLE IF EXISTS temp.import_hosts;"
                    "CREATE TEMP TABLE import_hosts (hostname TEXT NOT NULL, fingerprint TEXT NOT NULL,"
                    " machine_id TEXT, PRIMARY KEY (hostname, fingerprint));"
                    "INSERT OR IGNORE INTO temp.import_hosts SELECT h.hostname, r.host_fingerprint,"
                    " json_extract(r.host_facts, '$.machine_id') FROM main.runs r JOIN main.hosts h"
                    " ON h.id = r.host_id WHERE r.host_fingerprint IS NOT NULL ORDER BY r.id");
        size_t attached = 0;
        bool began = false;
        if (r >= 0 && (r = sql_begin(db)) >= 0)
                began = true;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                Source *src = &sources[i];
                snprintf(src->schema, sizeof(src->schema), "b%u", (unsigned) i);
                if ((r = sql_execf(db, "ATTACH %Q AS %s", src->uri, src->schema)) < 0) {
                        r = message_fail(ret_message, r, "cannot open %s: %s", src->path,
                                         sql_last_failure());
                        break;
                }
                attached++;
                if ((r = check_runs(db, src, o, ret_message)) < 0)
                        break;
                r = import_file(db, src, ret, ret_message);
        }
        if (began)
                r = sql_commit(db, r);
        if (r < 0 && ret_message && !*ret_message)
                (void) message_fail(ret_message, r, "cannot import: %s",
                                    r == -EIO ? sql_last_failure() : strerror(-r));
        for (size_t i = 0; i < attached; i++)
                (void) sql_execf(db, "DETACH %s", sources[i].schema);
        (void) sql_execf(db, "DROP TABLE IF EXISTS temp.import_hosts");
        if (r < 0)
                *ret = (BundleTally){}; /* one transaction: nothing of it stays */
        return r;
}
