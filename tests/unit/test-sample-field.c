/* SPDX-License-Identifier: MIT */
/*
 * The sample field table (runner/sample-field.c) and the schema agree: every column of
 * `samples` a fresh database has, beyond the sample's key, is one stored field of the table, and
 * every stored field has its column. A field added without its migration, or a migration
 * without its field, fails here before it fails a run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "db/store.h"
#include "runner/sample-field.h"
#include "util/cleanup.h"

/* Columns that are not fields: the row's id, the sample's key, when it was recorded. */
static const char *const not_fields[] = { "id",    "run_id", "cell_id", "variant_id",
                                          "phase", "round",  "step",    "recorded_at" };

static bool is_key(const char *column) {
        for (size_t i = 0; i < sizeof(not_fields) / sizeof(not_fields[0]); i++)
                if (strcmp(not_fields[i], column) == 0)
                        return true;
        return false;
}

static const SampleField *field_of(const char *column) {
        for (size_t i = 0; i < n_sample_fields; i++)
                if (sample_fields[i].column && strcmp(sample_fields[i].column, column) == 0)
                        return &sample_fields[i];
        return NULL;
}

static void test_schema_matches_table(void **state) {
        (void) state;
        char dir[] = "/tmp/alloclab-sample-field.XXXXXX";
        assert_non_null(mkdtemp(dir));
        char path[sizeof(dir) + 16];
        snprintf(path, sizeof(path), "%s/results.db", dir);
        Store *store = NULL;
        char *message = NULL;
        assert_int_equal(store_open(path, STORE_READ_WRITE, &store, &message), 0);

        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(store_db(store), "SELECT name FROM pragma_table_info('samples')",
                                            -1, &st, NULL),
                         SQLITE_OK);
        size_t n_columns = 0, n_fields = 0, n_unknown = 0;
        while (sqlite3_step(st) == SQLITE_ROW) {
                const char *column = (const char *) sqlite3_column_text(st, 0);
                if (is_key(column))
                        continue;
                if (!field_of(column)) {
                        print_error("column samples.%s has no field in runner/sample-field.c\n", column);
                        n_unknown++;
                } else
                        n_columns++;
        }
        sqlite3_finalize(st);
        for (size_t i = 0; i < n_sample_fields; i++)
                if (sample_fields[i].column)
                        n_fields++;
        store_free(store);
        unlink(path);
        char wal[sizeof(path) + 8];
        snprintf(wal, sizeof(wal), "%s-wal", path);
        unlink(wal);
        snprintf(wal, sizeof(wal), "%s-shm", path);
        unlink(wal);
        rmdir(dir);
        /* every column a field, and as many columns as stored fields: none missing */
        assert_int_equal(n_unknown, 0);
        assert_int_equal(n_columns, n_fields);
}

/* A stored field has a type that can be stored; an exported one is stored. */
static void test_fields_are_storable(void **state) {
        (void) state;
        for (size_t i = 0; i < n_sample_fields; i++) {
                const SampleField *f = &sample_fields[i];
                if (f->column)
                        assert_int_not_equal(f->type, SAMPLE_FIELD_END);
                if (f->exported)
                        assert_non_null(f->column);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_schema_matches_table),
                cmocka_unit_test(test_fields_are_storable),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
