/* SPDX-License-Identifier: MIT */
/*
 * A run's content hash: every row of the run's own tables with shared rows by their natural keys
 * and its own ids less their smallest, so that two copies of a run hash alike in any database.
 */
#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "db/bundle-internal.h"
#include "db/sql.h"

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
                /* where a run is filed (an import may file it apart, --machine-policy split), not
                 * what it measured */
                if (strcmp(table, "runs") == 0 && strcmp(column, "machine") == 0)
                        continue;
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
        if (n == 0) { /* a table newer than the bundle's schema: the run has no rows in it */
                *ret = NULL;
                return 0;
        }
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

void bundle_hasher_done(Hasher *h) {
        for (size_t i = 0; i < ELEMENTSOF(h->tables); i++)
                sqlite3_finalize(h->tables[i]);
}

int bundle_hasher_init(Hasher *h, sqlite3 *db, const char *schema) {
        *h = (Hasher){ .db = db, .schema = schema };
        for (size_t i = 0; i < ELEMENTSOF(h->tables); i++) {
                int r = prepare_table_rows(db, schema, run_tables[RUN_OWN + i], &h->tables[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The content hash (XXH3-128, as outputs are hashed) of the run with UUID uuid: every row of
 * every table of the run, as prepare_table_rows() reads them, each value with its type and
 * length. Returns 0 with ret_hex, -ENOENT when the run is not there. */
int bundle_hasher_run(Hasher *h, const char *uuid, char ret_hex[CONTENT_HEX_SIZE]) {
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
                if (!st)
                        continue;
                sqlite3_reset(st);
                sqlite3_bind_int64(st, 1, id);
                int rc;
                /* A table's name only before its first row: no rows hash alike with or without
                 * the table (a bundle of an older schema). */
                for (bool named = false; (rc = sqlite3_step(st)) == SQLITE_ROW; named = true) {
                        if (!named)
                                XXH3_128bits_update(state, run_tables[RUN_OWN + k],
                                                    strlen(run_tables[RUN_OWN + k]) + 1);
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
