/* SPDX-License-Identifier: MIT */
/*
 * Importing bundles: each checked (bundle-check.c), its runs against this database's by UUID
 * and content (bundle-content.c), then copied in one transaction with their ids moved by offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/bundle-internal.h"
#include "db/sql.h"
#include "util/message.h"

const char *const machine_policy_names[_MACHINE_POLICY_MAX] = {
        [MACHINE_REFUSE] = "refuse",
        [MACHINE_SPLIT] = "split",
        [MACHINE_ACCEPT] = "accept",
};

/* The machine name a run of the bundle is filed under, as SQL over its row r and host h: a
 * bundle of a schema before 31 has no runs.machine, and its runs are their host's. */
static int machine_sql(sqlite3 *db, const Source *src, const char **ret) {
        int64_t has = 0;
        int r = sql_queryf(db, &has, NULL,
                           "SELECT count(*) FROM pragma_table_info('runs', %Q) WHERE name = 'machine'",
                           src->schema);
        *ret = has ? STORE_SQL_MACHINE("r", "h") : "h.hostname";
        return r;
}

/* The machine name run `uuid` of `machine`, fingerprint `fingerprint` (machine-id `machine_id`),
 * is filed under here, by the policy when that name is known here (or earlier in this import,
 * temp.import_machines) with other fingerprints only. */
static int file_run(sqlite3 *db, const Source *src, const BundleOptions *o, const char *uuid,
                    const char *machine, const char *fingerprint, const char *machine_id, BundleTally *tally,
                    char **ret_message) {
        int64_t known = 0, same = 0;
        _cleanup_free_ char *other = NULL, *other_machine_id = NULL, *split = NULL;
        int r;
        if ((r = sql_queryf(db, &known, NULL, "SELECT count(*) FROM temp.import_machines WHERE machine = %Q",
                            machine)) < 0 ||
            (r = sql_queryf(
                     db, &same, NULL,
                     "SELECT count(*) FROM temp.import_machines WHERE machine = %Q AND fingerprint = %Q",
                     machine, fingerprint)) < 0 ||
            (r = sql_queryf(db, NULL, &other,
                            "SELECT fingerprint FROM temp.import_machines WHERE machine = %Q", machine)) <
                    0 ||
            (r = sql_queryf(db, NULL, &other_machine_id,
                            "SELECT machine_id FROM temp.import_machines WHERE machine = %Q"
                            " AND machine_id IS %Q UNION ALL SELECT machine_id FROM temp.import_machines"
                            " WHERE machine = %Q LIMIT 1",
                            machine, machine_id, machine)) < 0)
                return r;
        const char *filed = machine;
        bool agrees = known == 0 || (fingerprint ? same > 0 : false);
        /* Where the run would go apart: NAME.FINGERPRINT8, the name cut so that it stays a name of
         * 64 characters at most; a run without a fingerprint (before schema 10) as NAME.unknown. */
        if (asprintf(&split, "%.55s.%.8s", machine, fingerprint ? fingerprint : "unknown") < 0)
                return -ENOMEM;
        int64_t split_before = 0;
        if (!agrees && fingerprint &&
            (r = sql_queryf(
                     db, &split_before, NULL,
                     "SELECT count(*) FROM temp.import_machines WHERE machine = %Q AND fingerprint = %Q",
                     split, fingerprint)) < 0)
                return r;
        /* split once, its runs go on going there (a nightly import need not say so again) */
        if (!agrees && (o->machine_policy == MACHINE_SPLIT || split_before > 0)) {
                filed = split;
                if (tally->split++ == 0)
                        snprintf(tally->split_as, sizeof(tally->split_as), "%s", split);
        } else if (!agrees && o->machine_policy == MACHINE_ACCEPT)
                tally->accepted++;
        else if (!agrees && o->machine_policy == MACHINE_REFUSE) {
                if (!fingerprint)
                        return message_fail(
                                ret_message, -EXDEV,
                                "%s: run %s of machine %s has no host fingerprint, and %s is known "
                                "here (or in a file before it) with fingerprint %.12s: import with "
                                "--machine-policy accept if it is that machine, or split to keep it apart",
                                src->path, uuid, machine, machine, other);
                bool another = !machine_id || !other_machine_id || strcmp(machine_id, other_machine_id) != 0;
                return message_fail(
                        ret_message, -EXDEV,
                        "%s: machine %s has host fingerprint %.12s here (or in a file before it in this "
                        "import) and %.12s in run %s (%s): import with --machine-policy accept if it is "
                        "the same machine, changed, or --machine-policy split to file its runs apart, as %s",
                        src->path, machine, other, fingerprint, uuid,
                        another ? "its machine-id differs: another machine under the same name?"
                                : "the same machine-id: a change of kernel, firmware or settings?",
                        split);
        }
        if (fingerprint &&
            (r = sql_execf(db, "INSERT OR IGNORE INTO temp.import_machines VALUES (%Q, %Q, %Q)", filed,
                           fingerprint, machine_id)) < 0)
                return r;
        return sql_execf(db, "INSERT OR REPLACE INTO temp.import_filed VALUES (%Q, %Q)", uuid, filed);
}

/* Checks the runs of the bundle attached as src->schema against this database (in which the
 * bundles before it in this import are already, uncommitted) and the machines accepted so far
 * (temp.import_machines: every machine name with the fingerprints accepted for it), and files
 * each new run under its machine name (temp.import_filed). */
static int check_runs(sqlite3 *db, const Source *src, const BundleOptions *o, BundleTally *tally,
                      char **ret_message) {
        const char *machine_of;
        int r = machine_sql(db, src, &machine_of);
        if (r < 0)
                return r;
        sqlite3_stmt *st;
        char *sql = sqlite3_mprintf("SELECT r.uuid, %s, r.host_fingerprint,"
                                    " json_extract(r.host_facts, '$.machine_id') FROM %s.runs r"
                                    " JOIN %s.hosts h ON h.id = r.host_id ORDER BY r.id",
                                    machine_of, src->schema, src->schema);
        int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
        if (rc != SQLITE_OK)
                return message_fail(ret_message, -EBADMSG, "%s: %s", src->path, sqlite3_errmsg(db));
        Hasher here_hasher = {}, there_hasher = {};
        r = bundle_hasher_init(&here_hasher, db, "main");
        if (r >= 0)
                r = bundle_hasher_init(&there_hasher, db, src->schema);
        while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *uuid = (const char *) sqlite3_column_text(st, 0);
                const char *machine = (const char *) sqlite3_column_text(st, 1);
                const char *fingerprint = (const char *) sqlite3_column_text(st, 2);
                const char *machine_id = (const char *) sqlite3_column_text(st, 3);
                if (!uuid || !machine) {
                        r = message_fail(ret_message, -EBADMSG, "%s: a run without UUID or host", src->path);
                        break;
                }
                char here[CONTENT_HEX_SIZE], there[CONTENT_HEX_SIZE];
                r = bundle_hasher_run(&here_hasher, uuid, here);
                if (r == 0 && (r = bundle_hasher_run(&there_hasher, uuid, there)) >= 0 &&
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
                r = file_run(db, src, o, uuid, machine, fingerprint, machine_id, tally, ret_message);
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = sql_failed(db);
        sqlite3_finalize(st);
        bundle_hasher_done(&here_hasher);
        bundle_hasher_done(&there_hasher);
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
        int64_t id = 0, dv = 0, dc = 0, ds = 0, dk = 0, n_samples = 0, pruned = 0;
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
        if (r >= 0) /* a bundle before schema 32 has no pruned runs */
                r = sql_queryf(db, &pruned, NULL,
                               "SELECT count(*) FROM pragma_table_info('runs', %Q) WHERE name = 'pruned_at'",
                               b);
        if (r >= 0 && pruned)
                r = sql_queryf(db, &pruned, NULL,
                               "SELECT pruned_at IS NOT NULL FROM %s.runs WHERE id = %lld", b,
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
                { "machine", "(SELECT machine FROM temp.import_filed WHERE uuid = src.uuid)" },
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
                { "sample_timelines", per_sample, ELEMENTSOF(per_sample), of_run },
                { "exclusions", per_cell, ELEMENTSOF(per_cell), in_run },
                { "stats", per_cell, ELEMENTSOF(per_cell), in_run },
                { "calibration", calibration, ELEMENTSOF(calibration), in_run },
                { "pruned_values", per_cell, ELEMENTSOF(per_cell), in_run },
        };
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(steps); i++)
                r = bundle_copy_rows(db, b, "main", steps[i].table, steps[i].map, steps[i].n_map,
                                     steps[i].where);
        if (r >= 0) {
                tally->runs++;
                tally->samples += n_samples;
                tally->pruned += pruned > 0;
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
                         r == -EIO ? sql_last_failure(db) : strerror(-r)); /* kept from the query */
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
                bundle_source_done(&f->sources[i]);
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
                int r = bundle_check_file(&f->sources[i], ret_message);
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
                    "DROP TABLE IF EXISTS temp.import_machines;"
                    "DROP TABLE IF EXISTS temp.import_filed;"
                    "CREATE TEMP TABLE import_machines (machine TEXT NOT NULL, fingerprint TEXT NOT NULL,"
                    " machine_id TEXT, PRIMARY KEY (machine, fingerprint));"
                    "CREATE TEMP TABLE import_filed (uuid TEXT PRIMARY KEY, machine TEXT NOT NULL);"
                    "INSERT OR IGNORE INTO temp.import_machines SELECT " STORE_SQL_MACHINE(
                            "r", "h") ","
                                      " r.host_fingerprint, json_extract(r.host_facts, '$.machine_id') FROM "
                                      "main.runs r"
                                      " JOIN main.hosts h ON h.id = r.host_id WHERE r.host_fingerprint IS "
                                      "NOT NULL ORDER BY r.id");
        size_t attached = 0;
        bool began = false;
        if (r >= 0 && (r = sql_begin(db)) >= 0)
                began = true;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                Source *src = &sources[i];
                snprintf(src->schema, sizeof(src->schema), "b%u", (unsigned) i);
                if ((r = sql_execf(db, "ATTACH %Q AS %s", src->uri, src->schema)) < 0) {
                        r = message_fail(ret_message, r, "cannot open %s: %s", src->path,
                                         sql_last_failure(db));
                        break;
                }
                attached++;
                if ((r = check_runs(db, src, o, ret, ret_message)) < 0)
                        break;
                r = import_file(db, src, ret, ret_message);
        }
        if (began)
                r = sql_commit(db, r);
        if (r < 0 && ret_message && !*ret_message)
                (void) message_fail(ret_message, r, "cannot import: %s",
                                    r == -EIO ? sql_last_failure(db) : strerror(-r));
        for (size_t i = 0; i < attached; i++)
                (void) sql_execf(db, "DETACH %s", sources[i].schema);
        (void) sql_execf(
                db, "DROP TABLE IF EXISTS temp.import_machines; DROP TABLE IF EXISTS temp.import_filed");
        if (r < 0)
                *ret = (BundleTally){}; /* one transaction: nothing of it stays */
        return r;
}
