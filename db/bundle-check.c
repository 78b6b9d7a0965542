/* SPDX-License-Identifier: MIT */
/*
 * What a bundle file may hold before anything of it is imported: a private copy of it, checked
 * read-only: this schema, and every row of every table holding what alloclab writes (types,
 * clean names, bounded text, JSON, finite numbers).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/bundle-internal.h"
#include "db/record.h"
#include "db/run-field.h"
#include "db/sql.h"
#include "configs/schema.h"
#include "runner/timeline.h"
#include "util/doomed.h"
#include "util/io.h"
#include "util/message.h"
#include "util/text.h"

#define COPY_NAME "bundle"

void bundle_source_done(Source *src) {
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
        RULE_TIMELINE,     /* memory_timeline's points: whole (t_ms, KiB) pairs, at most the runner's */
        _RULE_MAX,
} Rule;

/* Bytes of text a column holds at most (a path, a host's facts, JSON a run wrote): longer
 * texts are no run alloclab made, and would fill a terminal or a page. */
#define CLEAN_MAX 4096

#define FREE_MAX (1024 * 1024) /* a spec (YAMLTREE_MAX_INPUT_BYTES), a stderr excerpt, a message */

#define JSON_MAX (8 * 1024 * 1024)

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
        { "variants", "env", RULE_JSON },
        { "variants", "command", RULE_JSON },
        { "variants", "build", RULE_JSON },
        { "cells", "params", RULE_JSON },
        { "probe_reports", "report", RULE_JSON },
        { "sample_timelines", "points", RULE_TIMELINE },
        { "sample_timelines", "marks", RULE_JSON },
        { "pruned_values", "points", RULE_JSON },
        { "sample_timelines", "period_ns", RULE_NON_NEGATIVE },
        { "sample_timelines", "thinned", RULE_NON_NEGATIVE },
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

/* Bytes of a sample's memory_timeline points at most (a literal: it is spliced into SQL). */
#define TIMELINE_BLOB_MAX 32768
_Static_assert(TIMELINE_BLOB_MAX == TIMELINE_MAX_POINTS * sizeof(TimelinePoint), "the runner's limit");

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
        [RULE_TIMELINE] = { "(length($C) % 8 = 0 AND length($C) <= " STRINGIFY(TIMELINE_BLOB_MAX) ")",
                            "what is not memory_timeline's readings (pairs of 4-byte numbers, at most "
                            "4096 of them)" },
};

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
               : strcasecmp(type, "BLOB") == 0  ? "'blob'"
                                                : NULL;
}

static Rule rule_of(const char *table, const char *column, const char *type) {
        for (size_t i = 0; i < ELEMENTSOF(column_rules); i++)
                if (strcmp(column_rules[i].table, table) == 0 && strcmp(column_rules[i].column, column) == 0)
                        return column_rules[i].rule;
        /* A run's JSON settings, as its field table says (db/run-field.c). */
        const RunField *f = strcmp(table, "runs") == 0 ? run_field_by_column(column) : NULL;
        if (f && f->type == RUN_FIELD_JSON)
                return RULE_JSON;
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
int bundle_check_file(Source *src, char **ret_message) {
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
                r = message_fail(ret_message, r, "%s: %s", src->path, sql_last_failure(db));
out:
        sql_close(db);
        return r;
}
