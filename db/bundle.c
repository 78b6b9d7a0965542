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
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/bundle.h"
#include "db/sql.h"
#include "runner/host.h"
#include "util/cleanup.h"
#include "util/message.h"

static void sqlite3_freep(char **p) {
        sqlite3_free(*p);
}

/* SQLite's message for the last statement here that failed: a rollback replaces the
 * connection's own. */
static char failure[512];

static int failed(sqlite3 *db) {
        snprintf(failure, sizeof(failure), "%s", sqlite3_errmsg(db));
        return -EIO;
}

/* Formats (sqlite3_mprintf: %Q quotes a string) and runs statements; returns 0 or -EIO (-ENOMEM
 * when formatting fails). */
static int execf(sqlite3 *db, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *sql = sqlite3_vmprintf(fmt, ap);
        va_end(ap);
        if (!sql)
                return -ENOMEM;
        int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        sqlite3_free(sql);
        return rc == SQLITE_OK ? 0 : failed(db);
}

/* The first column of the first row of a formatted query into *ret (0 when NULL or no row);
 * with ret_text, its text instead (NULL when NULL or no row). Returns 0, -EIO or -ENOMEM. */
static int queryf(sqlite3 *db, int64_t *ret, char **ret_text, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *sql = sqlite3_vmprintf(fmt, ap);
        va_end(ap);
        if (!sql)
                return -ENOMEM;
        sqlite3_stmt *st;
        int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
        sqlite3_free(sql);
        if (rc != SQLITE_OK)
                return failed(db);
        int r = 0;
        if (ret)
                *ret = 0;
        if (ret_text)
                *ret_text = NULL;
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW && ret)
                *ret = sqlite3_column_int64(st, 0);
        if (rc == SQLITE_ROW && ret_text && sqlite3_column_type(st, 0) != SQLITE_NULL &&
            !(*ret_text = strdup((const char *) sqlite3_column_text(st, 0))))
                r = -ENOMEM;
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                r = failed(db);
        sqlite3_finalize(st);
        return r;
}

/* A column of a row copied into another file: its value, an SQL expression over the source
 * row `src`, in place of the source's own value. */
typedef struct Mapping {
        const char *column;
        const char *expr;
} Mapping;

/*
 * INSERT INTO to.table SELECT FROM from.table AS src WHERE where: every column of the table by
 * name, each from the source row's column of that name or as mapped. Returns 0, -EIO, -ENOMEM.
 */
static int copy_rows(sqlite3 *db, const char *from, const char *to, const char *table, const Mapping *map,
                     size_t n_map, const char *where) {
        char *sql = sqlite3_mprintf("SELECT name FROM pragma_table_info(%Q, %Q) ORDER BY cid", table, to);
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
        return execf(db, "INSERT INTO %s.%s (%s) SELECT %s FROM %s.%s AS src WHERE %s", to, table,
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
        r = execf(store_db(b),
                  "PRAGMA journal_mode = DELETE;"
                  "CREATE TABLE bundle (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                  "INSERT INTO bundle VALUES ('format', %Q), ('version', %d), ('alloclab', %Q),"
                  " ('exported_on', %Q), ('runs', %lld),"
                  " ('exported_at', strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', 'now'));",
                  BUNDLE_FORMAT, BUNDLE_VERSION, ALLOCLAB_VERSION, hostname, (long long) n_runs);
        if (r < 0)
                return message_fail(ret_message, r, "cannot write %s: %s", path, failure);
        *ret = TAKE_PTR(b);
        return 0;
}

static int fsync_path(const char *path, int flags) {
        _cleanup_close_ int fd = open(path, flags | O_CLOEXEC);
        return fd >= 0 && fsync(fd) == 0 ? 0 : -errno;
}

int bundle_export(Store *s, const int64_t *run_ids, size_t n, const char *path, char **ret_message) {
        sqlite3 *db = store_db(s);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *status = NULL;
                int r = queryf(db, NULL, &status, "SELECT status FROM runs WHERE id = %lld",
                               (long long) run_ids[i]);
                if (r < 0)
                        return r;
                if (!status)
                        return message_fail(ret_message, -ENOENT, "no run %lld", (long long) run_ids[i]);
                if (strcmp(status, "running") == 0)
                        return message_fail(ret_message, -EBUSY, "run %lld is still running",
                                            (long long) run_ids[i]);
        }
        /* Written through the bundle's connection, the source attached: a reader of the source
         * (a database it cannot write) can export from it. */
        _cleanup_free_ char *partial = NULL;
        if (asprintf(&partial, "%s.partial", path) < 0)
                return -ENOMEM;
        (void) unlink(partial);
        Store *b = NULL;
        int r = create_empty(partial, n, &b, ret_message);
        if (r < 0) {
                (void) unlink(partial);
                return r;
        }
        sqlite3 *to = store_db(b);
        r = execf(to, "ATTACH %Q AS source", store_path(s));
        if (r >= 0)
                r = execf(to, "CREATE TEMP TABLE bundle_runs (id INTEGER PRIMARY KEY)");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = execf(to, "INSERT OR IGNORE INTO temp.bundle_runs VALUES (%lld)",
                          (long long) run_ids[i]);
        if (r >= 0 && (r = sql_begin(to)) >= 0) {
                for (size_t i = 0; r >= 0 && i < ELEMENTSOF(selection); i++)
                        r = copy_rows(to, "source", "main", selection[i].table, NULL, 0, selection[i].where);
                r = sql_commit(to, r);
        }
        (void) execf(to, "DETACH source");
        store_free(b);
        if (r >= 0 && (r = fsync_path(partial, O_RDONLY)) >= 0 && rename(partial, path) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(partial);
                return message_fail(ret_message, r, "cannot write %s: %s", path,
                                    r == -EIO ? failure : strerror(-r));
        }
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        (void) fsync_path(slash ? (slash == dir ? "/" : (*slash = 0, dir)) : ".", O_RDONLY | O_DIRECTORY);
        return 0;
}

/* ---- import ---- */

/* A run's content, to tell a copy of it from another run under the same UUID. */
#define CONTENT_SQL(schema)                                                                                 \
        "SELECT r.status || ':' || count(s.id) || ':' || total(s.wall_ns) || ':' || total(s.step) || ':'"   \
        " || total(s.maxrss_kib) FROM " schema ".runs r LEFT JOIN " schema ".samples s ON s.run_id = r.id"  \
        " WHERE r.uuid = %Q"

/* Opens path alone, read-only, and checks that it is an undamaged bundle of this schema. */
static int check_file(const char *path, char **ret_message) {
        if (access(path, R_OK) < 0)
                return message_fail(ret_message, -errno, "%s: %m", path);
        sqlite3 *db = NULL;
        int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
        _cleanup_free_ char *check = NULL, *format = NULL;
        int64_t version = 0, schema = 0;
        int r = rc == SQLITE_OK ? queryf(db, NULL, &check, "PRAGMA quick_check") : -EIO;
        if (r == -ENOMEM)
                goto out;
        if (r < 0 || !check || strcmp(check, "ok") != 0) {
                r = message_fail(ret_message, -EBADMSG, "%s is damaged: %s", path,
                                 check ? check
                                 : db  ? sqlite3_errmsg(db)
                                       : "cannot open it");
                goto out;
        }
        if ((r = queryf(db, NULL, &format, "SELECT value FROM bundle WHERE key = 'format'")) < 0 ||
            !format || strcmp(format, BUNDLE_FORMAT) != 0) {
                r = message_fail(
                        ret_message, -EBADMSG,
                        "%s is not an alloclab bundle (make one with alloclab export RUN... --bundle FILE)",
                        path);
                goto out;
        }
        if ((r = queryf(db, &version, NULL, "SELECT value FROM bundle WHERE key = 'version'")) < 0 ||
            (r = queryf(db, &schema, NULL, "PRAGMA user_version")) < 0)
                goto out;
        if (version != BUNDLE_VERSION || schema < BUNDLE_OLDEST_SCHEMA || schema > STORE_SCHEMA_VERSION)
                r = message_fail(
                        ret_message, -EPROTO,
                        "%s is a bundle of version %lld with schema %lld; this alloclab reads version %d "
                        "with schema %d to %d: import it with the alloclab that wrote it",
                        path, (long long) version, (long long) schema, BUNDLE_VERSION, BUNDLE_OLDEST_SCHEMA,
                        STORE_SCHEMA_VERSION);
out:
        sqlite3_close_v2(db);
        return r;
}

/* Checks the runs of the bundle attached as b against this database and the bundles checked
 * before it (temp.import_hosts: every host name with the fingerprints accepted for it). */
static int check_runs(sqlite3 *db, const char *path, const BundleOptions *o, char **ret_message) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db,
                               "SELECT r.uuid, h.hostname, r.host_fingerprint,"
                               " json_extract(r.host_facts, '$.machine_id') FROM b.runs r"
                               " JOIN b.hosts h ON h.id = r.host_id ORDER BY r.id",
                               -1, &st, NULL) != SQLITE_OK)
                return message_fail(ret_message, -EBADMSG, "%s: %s", path, sqlite3_errmsg(db));
        int rc, r = 0;
        while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *uuid = (const char *) sqlite3_column_text(st, 0);
                const char *hostname = (const char *) sqlite3_column_text(st, 1);
                const char *fingerprint = (const char *) sqlite3_column_text(st, 2);
                const char *machine = (const char *) sqlite3_column_text(st, 3);
                if (!uuid || !hostname)
                        return sqlite3_finalize(st),
                               message_fail(ret_message, -EBADMSG, "%s: a run without UUID or host", path);
                _cleanup_free_ char *here = NULL, *there = NULL;
                if ((r = queryf(db, NULL, &here, CONTENT_SQL("main"), uuid)) < 0 ||
                    (r = queryf(db, NULL, &there, CONTENT_SQL("b"), uuid)) < 0)
                        break;
                if (here && strcmp(here, there) != 0) {
                        r = message_fail(
                                ret_message, -EEXIST,
                                "%s: run %s is here already with other content (here %s, there %s: status, "
                                "samples, and sums of their times, steps and peak memory)",
                                path, uuid, here, there);
                        break;
                }
                if (here || !fingerprint)
                        continue;
                int64_t known = 0, same = 0;
                _cleanup_free_ char *other = NULL, *other_machine = NULL;
                if ((r = queryf(db, &known, NULL,
                                "SELECT count(*) FROM temp.import_hosts WHERE hostname = %Q", hostname)) <
                            0 ||
                    (r = queryf(db, &same, NULL,
                                "SELECT count(*) FROM temp.import_hosts WHERE hostname = %Q AND fingerprint "
                                "= %Q",
                                hostname, fingerprint)) < 0 ||
                    (r = queryf(db, NULL, &other,
                                "SELECT fingerprint FROM temp.import_hosts WHERE hostname = %Q", hostname)) <
                            0 ||
                    (r = queryf(db, NULL, &other_machine,
                                "SELECT machine_id FROM temp.import_hosts WHERE hostname = %Q", hostname)) <
                            0)
                        break;
                if (known > 0 && same == 0 && !o->accept_host_change) {
                        bool another = !machine || !other_machine || strcmp(machine, other_machine) != 0;
                        r = message_fail(
                                ret_message, -EXDEV,
                                "%s: host %s has fingerprint %.12s here and %.12s in run %s (%s): import "
                                "with --accept-host-change if it is the same machine, changed",
                                path, hostname, other, fingerprint, uuid,
                                another ? "its machine-id differs: another machine under the same name?"
                                        : "the same machine-id: a change of kernel, firmware or settings?");
                        break;
                }
                r = execf(db, "INSERT OR IGNORE INTO temp.import_hosts VALUES (%Q, %Q, %Q)", hostname,
                          fingerprint, machine);
        }
        sqlite3_finalize(st);
        return r;
}

/* Adds run `old` of the bundle attached as b in one transaction. */
static int import_run(sqlite3 *db, int64_t old, BundleTally *tally) {
        int r = sql_begin(db);
        if (r < 0)
                return r;
        /* Hosts, experiments, specs and allocators are shared by runs: found, or added. */
        r = execf(db,
                  "INSERT OR IGNORE INTO main.hosts (hostname, kernel, cpu_model, cpus, glibc, thp)"
                  " SELECT hostname, kernel, cpu_model, cpus, glibc, thp FROM b.hosts"
                  " WHERE id = (SELECT host_id FROM b.runs WHERE id = %lld);"
                  "INSERT OR IGNORE INTO main.experiments (name) SELECT name FROM b.experiments"
                  " WHERE id = (SELECT experiment_id FROM b.runs WHERE id = %lld);"
                  "INSERT OR IGNORE INTO main.specs (sha256, yaml) SELECT sha256, yaml FROM b.specs"
                  " WHERE id = (SELECT spec_id FROM b.runs WHERE id = %lld);"
                  "INSERT OR IGNORE INTO main.allocators (name, path, sha256, version)"
                  " SELECT name, path, sha256, version FROM b.allocators"
                  " WHERE id IN (SELECT allocator_id FROM b.variants WHERE run_id = %lld);",
                  (long long) old, (long long) old, (long long) old, (long long) old);
        int64_t id = 0, dv = 0, dc = 0, ds = 0, dk = 0, n_samples = 0;
        /* Each table's rows of the run move past the largest id here, by one offset per table. */
#define OFFSET(table, where)                                                                                \
        "SELECT coalesce((SELECT max(id) FROM main." table "), 0) + 1"                                      \
        " - coalesce((SELECT min(id) FROM b." table " WHERE " where " = %lld), 0)"
        if (r >= 0)
                r = queryf(db, &id, NULL, "SELECT coalesce(max(id), 0) + 1 FROM main.runs");
        if (r >= 0)
                r = queryf(db, &dv, NULL, OFFSET("variants", "run_id"), (long long) old);
        if (r >= 0)
                r = queryf(db, &dc, NULL, OFFSET("cells", "run_id"), (long long) old);
        if (r >= 0)
                r = queryf(db, &ds, NULL, OFFSET("samples", "run_id"), (long long) old);
        if (r >= 0)
                r = queryf(db, &dk, NULL, OFFSET("calibration", "run_id"), (long long) old);
        if (r >= 0)
                r = queryf(db, &n_samples, NULL, "SELECT count(*) FROM b.samples WHERE run_id = %lld",
                           (long long) old);
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
        snprintf(of_run, sizeof(of_run), "src.sample_id IN (SELECT id FROM b.samples WHERE run_id = %lld)",
                 (long long) old);
        static const char host[] = "(SELECT m.id FROM main.hosts m JOIN b.hosts h USING (hostname, kernel,"
                                   " cpu_model, cpus, glibc, thp) WHERE h.id = src.host_id)";
        static const char experiment[] = "(SELECT m.id FROM main.experiments m JOIN b.experiments e"
                                         " USING (name) WHERE e.id = src.experiment_id)";
        static const char spec[] = "(SELECT m.id FROM main.specs m JOIN b.specs p USING (sha256)"
                                   " WHERE p.id = src.spec_id)";
        static const char allocator[] = "(SELECT m.id FROM main.allocators m JOIN b.allocators a USING"
                                        " (name, path, sha256, version) WHERE a.id = src.allocator_id)";
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
                r = copy_rows(db, "b", "main", steps[i].table, steps[i].map, steps[i].n_map, steps[i].where);
        r = sql_commit(db, r);
        if (r >= 0) {
                tally->runs++;
                tally->samples += n_samples;
        }
        return r;
}

/* Imports the runs of the bundle attached as b that are not here yet. */
static int import_file(sqlite3 *db, BundleTally *tally) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(
                    db,
                    "SELECT id, uuid IN (SELECT uuid FROM main.runs) FROM b.runs ORDER BY started_at, id",
                    -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        int64_t *ids = NULL;
        size_t n = 0;
        int rc, r = 0;
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
                r = -EIO;
        sqlite3_finalize(st);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = import_run(db, ids[i], tally);
        free(ids);
        return r;
}

int bundle_import(Store *s, char *const *paths, size_t n, const BundleOptions *o, BundleTally *ret,
                  char **ret_message) {
        sqlite3 *db = store_db(s);
        *ret = (BundleTally){};
        int r = execf(db,
                      "DROP TABLE IF EXISTS temp.import_hosts;"
                      "CREATE TEMP TABLE import_hosts (hostname TEXT NOT NULL, fingerprint TEXT NOT NULL,"
                      " machine_id TEXT, PRIMARY KEY (hostname, fingerprint));"
                      "INSERT OR IGNORE INTO temp.import_hosts SELECT h.hostname, r.host_fingerprint,"
                      " json_extract(r.host_facts, '$.machine_id') FROM main.runs r JOIN main.hosts h"
                      " ON h.id = r.host_id WHERE r.host_fingerprint IS NOT NULL ORDER BY r.id");
        /* Every file is checked before anything is written. */
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if ((r = check_file(paths[i], ret_message)) < 0)
                        break;
                if ((r = execf(db, "ATTACH %Q AS b", paths[i])) < 0)
                        return message_fail(ret_message, r, "cannot open %s: %s", paths[i], failure);
                r = check_runs(db, paths[i], o, ret_message);
                (void) execf(db, "DETACH b");
        }
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if ((r = execf(db, "ATTACH %Q AS b", paths[i])) < 0)
                        return message_fail(ret_message, r, "cannot open %s: %s", paths[i], failure);
                r = import_file(db, ret);
                if (r < 0)
                        (void) message_fail(ret_message, r, "cannot import %s: %s", paths[i],
                                            r == -EIO ? failure : strerror(-r));
                (void) execf(db, "DETACH b");
        }
        (void) execf(db, "DROP TABLE IF EXISTS temp.import_hosts");
        return r;
}
