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
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db/bundle-internal.h"
#include "db/sql.h"
#include "util/message.h"

int bundle_copy_rows(sqlite3 *db, const char *from, const char *to, const char *table, const Mapping *map,
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
        bool in_source = false; /* a bundle of an older schema lacks the newer tables: no rows */
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *column = (const char *) sqlite3_column_text(st, 0);
                const char *expr = NULL;
                in_source |= sqlite3_column_int(st, 1);
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
        if (!in_source)
                return 0;
        if (!column_list || !value_list)
                return -ENOMEM;
        return sql_execf(db, "INSERT INTO %s.%s (%s) SELECT %s FROM %s.%s AS src WHERE %s", to, table,
                         column_list, value_list, from, table, where);
}

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
        { "sample_timelines",
          "sample_id IN (SELECT id FROM source.samples WHERE run_id IN temp.bundle_runs)" },
        { "exclusions", "run_id IN temp.bundle_runs" },
        { "stats", "run_id IN temp.bundle_runs" },
        { "calibration", "run_id IN temp.bundle_runs" },
        { "pruned_values", "run_id IN temp.bundle_runs" },
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
                return message_fail(ret_message, r, "cannot write %s: %s", path,
                                    sql_last_failure(store_db(b)));
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
                return message_fail(ret_message, r, "cannot read %s: %s", store_path(s),
                                    sql_last_failure(to));
        }
        if (r >= 0)
                r = sql_execf(to, "CREATE TEMP TABLE bundle_runs (id INTEGER PRIMARY KEY)");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sql_execf(to, "INSERT OR IGNORE INTO temp.bundle_runs VALUES (%lld)",
                              (long long) run_ids[i]);
        if (r >= 0 && (r = sql_begin(to)) >= 0) {
                for (size_t i = 0; r >= 0 && i < ELEMENTSOF(selection); i++)
                        r = bundle_copy_rows(to, "source", "main", selection[i].table, NULL, 0,
                                             selection[i].where);
                r = sql_commit(to, r);
        }
        char why[SQL_FAILURE_MAX] = ""; /* before the DETACH, and the close that forgets it */
        if (r == -EIO)
                snprintf(why, sizeof(why), "%s", sql_last_failure(to));
        (void) sql_execf(to, "DETACH source");
        store_free(b);
        if (r >= 0)
                r = fsync_path(partial, O_RDONLY);
        return r < 0 ? message_fail(ret_message, r, "cannot write %s: %s", path,
                                    r == -EIO ? why : strerror(-r))
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
