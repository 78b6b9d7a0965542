/* SPDX-License-Identifier: MIT */
/*
 * The field tables of samples (runner/sample-field.c) and runs (db/run-field.c) and the schema
 * agree: every column of `samples` a fresh database has, beyond the sample's key, is one stored
 * field of the sample table, every column of `runs` one field of the run table, and every field
 * has its column. A field added without its migration, or a migration without its field, fails
 * here before it fails a run.
 */
#include <math.h>
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

#include "db/run-field.h"
#include "db/store.h"
#include "runner/metric.h"
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

/* A fresh database in a directory of its own, removed by fresh_db_done(). */
typedef struct FreshDb {
        char dir[64], path[96];
        Store *store;
} FreshDb;

static void fresh_db_open(FreshDb *db) {
        snprintf(db->dir, sizeof(db->dir), "/tmp/alloclab-fields.XXXXXX");
        assert_non_null(mkdtemp(db->dir));
        snprintf(db->path, sizeof(db->path), "%s/results.db", db->dir);
        char *message = NULL;
        assert_int_equal(store_open(db->path, STORE_READ_WRITE, &db->store, &message), 0);
}

static void fresh_db_done(FreshDb *db) {
        store_free(db->store);
        char file[sizeof(db->path) + 8];
        const char *suffixes[] = { "", "-wal", "-shm" };
        for (size_t i = 0; i < 3; i++) {
                snprintf(file, sizeof(file), "%s%s", db->path, suffixes[i]);
                unlink(file);
        }
        rmdir(db->dir);
}

/* A fresh database for a test (cmocka's setup: its teardown runs even when the test fails). */
static int fresh_db_setup(void **state) {
        FreshDb *db = calloc(1, sizeof(FreshDb));
        assert_non_null(db);
        fresh_db_open(db);
        *state = db;
        return 0;
}

static int fresh_db_teardown(void **state) {
        fresh_db_done(*state);
        free(*state);
        return 0;
}

/* The columns of table in a fresh database, each passed to known(); returns how many it did not
 * know (and says which). */
static size_t unknown_columns(Store *store, const char *table, bool (*known)(const char *column)) {
        char sql[128];
        snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info('%s')", table);
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(store_db(store), sql, -1, &st, NULL), SQLITE_OK);
        size_t n_unknown = 0;
        while (sqlite3_step(st) == SQLITE_ROW) {
                const char *column = (const char *) sqlite3_column_text(st, 0);
                if (!known(column)) {
                        print_error("column %s.%s has no field in the table\n", table, column);
                        n_unknown++;
                }
        }
        sqlite3_finalize(st);
        return n_unknown;
}

/* Whether table has the column. */
static bool has_column(Store *store, const char *table, const char *column) {
        char sql[128];
        snprintf(sql, sizeof(sql), "SELECT %s FROM %s", column, table);
        sqlite3_stmt *st;
        bool prepared = sqlite3_prepare_v2(store_db(store), sql, -1, &st, NULL) == SQLITE_OK;
        sqlite3_finalize(st);
        return prepared;
}

static bool is_sample_column(const char *column) {
        return is_key(column) || field_of(column);
}

static bool is_run_column(const char *column) {
        return run_field_by_column(column) != NULL;
}

static void test_samples_schema_matches_table(void **state) {
        FreshDb *db = *state;
        assert_int_equal(unknown_columns(db->store, "samples", is_sample_column), 0);
        /* and every stored field has its column */
        for (size_t i = 0; i < n_sample_fields; i++)
                if (sample_fields[i].column && !has_column(db->store, "samples", sample_fields[i].column))
                        fail_msg("field %s has no column in samples", sample_fields[i].column);
}

/* Every column of runs is a field; every field's column exists, and what the readers select
 * (the report's, the run lists') prepares against the schema. */
static void test_runs_schema_matches_table(void **state) {
        FreshDb *db = *state;
        assert_int_equal(unknown_columns(db->store, "runs", is_run_column), 0);
        for (size_t i = 0; i < n_run_fields; i++)
                if (run_fields[i].column && !has_column(db->store, "runs", run_fields[i].column))
                        fail_msg("field %s has no column in runs", run_fields[i].column);
        for (int summary = 0; summary < 2; summary++) {
                char *columns = run_fields_select(summary), *sql = NULL;
                assert_non_null(columns);
                assert_true(
                        asprintf(
                                &sql,
                                "SELECT %s FROM runs JOIN experiments ON experiments.id = runs.experiment_id"
                                " JOIN hosts ON hosts.id = runs.host_id",
                                columns) > 0);
                sqlite3_stmt *st;
                if (sqlite3_prepare_v2(store_db(db->store), sql, -1, &st, NULL) != SQLITE_OK)
                        fail_msg("%s: %s", sql, sqlite3_errmsg(store_db(db->store)));
                sqlite3_finalize(st);
                free(columns);
                free(sql);
        }
}

/* A JSON key and a label name one field each; the labels' ranks run 1, 2, ... without a gap. */
static void test_run_fields_presented_once(void **state) {
        (void) state;
        int max_rank = 0, n_labels = 0;
        for (size_t i = 0; i < n_run_fields; i++) {
                const RunField *f = &run_fields[i];
                assert_true(f->column || f->select);
                if (f->json_key)
                        assert_ptr_equal(run_field_by_json_key(f->json_key), f);
                if (f->column)
                        assert_ptr_equal(run_field_by_column(f->column), f);
                assert_int_equal(!f->label, !f->label_rank);
                if (f->label) {
                        n_labels++;
                        max_rank = f->label_rank > max_rank ? f->label_rank : max_rank;
                        for (size_t j = 0; j < i; j++)
                                assert_int_not_equal(run_fields[j].label_rank, f->label_rank);
                }
        }
        assert_int_equal(max_rank, n_labels);
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

/* Every field with a label has a text for the report's Run table, whatever its type; only a text
 * not recorded has none. */
static void test_labelled_fields_have_text(void **state) {
        (void) state;
        Report rep = {};
        char *some = (char *) "x";
        for (size_t i = 0; i < n_run_fields; i++) {
                const RunField *f = &run_fields[i];
                if (f->offset != RUN_FIELD_NO_MEMBER &&
                    (f->type == RUN_FIELD_TEXT || f->type == RUN_FIELD_TEXT_OR_NULL ||
                     f->type == RUN_FIELD_JSON))
                        *(char **) run_field_in(f, &rep) = some;
        }
        for (size_t i = 0; i < n_run_fields; i++) {
                char buf[64];
                if (run_fields[i].label && !run_field_text(&run_fields[i], &rep, buf, sizeof(buf)))
                        fail_msg("field %s (%s) has no text for the report", run_fields[i].column,
                                 run_fields[i].label);
        }
        RunField number = { .column = "made_up",
                            .type = RUN_FIELD_INT,
                            .offset = offsetof(Report, samples),
                            .label = "made up",
                            .label_rank = 99 };
        rep.samples = 7;
        char buf[64];
        assert_string_equal(run_field_text(&number, &rep, buf, sizeof(buf)), "7");
}

/* Each built-in metric's value of a sample and its SQL over the stored sample agree. */
static void test_builtin_metrics_agree(void **state) {
        (void) state;
        Sample sample = { .spawn = { .wall_ns = 1234567891,
                                     .usage = { .ru_utime = { 2, 500000 },
                                                .ru_stime = { 0, 250 },
                                                .ru_maxrss = 10240 } } };
        sqlite3 *db;
        assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
        char insert[256];
        snprintf(insert, sizeof(insert),
                 "CREATE TABLE samples (wall_ns, user_us, sys_us, maxrss_kib);"
                 " INSERT INTO samples VALUES (%llu, %lld, %lld, %ld)",
                 (unsigned long long) sample.spawn.wall_ns, 2500000LL, 250LL, sample.spawn.usage.ru_maxrss);
        assert_int_equal(sqlite3_exec(db, insert, NULL, NULL, NULL), SQLITE_OK);
        for (int c = 0; c < N_COUNTERS; c++) { /* each counter its own value */
                sample.spawn.counters.value[c] = 1000003u * (unsigned) (c + 1);
                sample.spawn.counters.have |= 1u << c;
                snprintf(insert, sizeof(insert),
                         "ALTER TABLE samples ADD COLUMN %s; UPDATE samples SET %s = %llu", counter_names[c],
                         counter_names[c], (unsigned long long) sample.spawn.counters.value[c]);
                assert_int_equal(sqlite3_exec(db, insert, NULL, NULL, NULL), SQLITE_OK);
        }
        for (size_t i = 0; i < N_BUILTIN_METRICS; i++) {
                const BuiltinMetric *m = &builtin_metrics[i];
                assert_ptr_equal(builtin_metric(builtin_metric_name(m)), m);
                char sql[128];
                snprintf(sql, sizeof(sql), "SELECT %s FROM samples s", m->sql);
                sqlite3_stmt *st;
                assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
                assert_int_equal(sqlite3_step(st), SQLITE_ROW);
                double stored = sqlite3_column_double(st, 0), of = m->of(&sample);
                sqlite3_finalize(st);
                if (fabs(stored - of) > 1e-9 * fabs(of))
                        fail_msg("%s: %g from a sample, %g from SQL", builtin_metric_name(m), of, stored);
        }
        assert_null(builtin_metric("reported"));
        sqlite3_close(db);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_samples_schema_matches_table, fresh_db_setup,
                                                fresh_db_teardown),
                cmocka_unit_test_setup_teardown(test_runs_schema_matches_table, fresh_db_setup,
                                                fresh_db_teardown),
                cmocka_unit_test(test_run_fields_presented_once),
                cmocka_unit_test(test_builtin_metrics_agree),
                cmocka_unit_test(test_labelled_fields_have_text),
                cmocka_unit_test(test_fields_are_storable),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
