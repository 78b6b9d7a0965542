/* SPDX-License-Identifier: MIT */
/*
 * db/ when SQLite runs out of memory. Every allocation SQLite makes while a run is recorded and
 * read back (open, record_begin, samples, cell statistics, record_finish, query_report,
 * query_history, export_samples) is made to fail in turn, the Nth in the Nth pass, with
 * sqlite3_config(SQLITE_CONFIG_MALLOC). Each pass must end in an error code, never a crash (and,
 * under the sanitizers, never a leak), and leave a database that passes integrity_check and
 * holds every sample whose recording returned success.
 */
#include <errno.h>
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

#include "db/export.h"
#include "db/history.h"
#include "db/query.h"
#include "db/record.h"
#include "db/store.h"
#include "util/cleanup.h"

/* ---- the failing allocator ---------------------------------------------------------------- */

static sqlite3_mem_methods real;
static long countdown; /* > 0: the allocation that brings it to 0 fails; <= 0: none fails */
static bool injected;  /* the failure happened in this pass */

static bool fail_now(void) {
        if (countdown <= 0)
                return false;
        if (--countdown == 0) {
                injected = true;
                return true;
        }
        return false;
}

static void *failing_malloc(int n) {
        return fail_now() ? NULL : real.xMalloc(n);
}

static void *failing_realloc(void *p, int n) {
        return fail_now() ? NULL : real.xRealloc(p, n);
}

static int install_failing_allocator(void **state) {
        (void) state;
        sqlite3_mem_methods m;
        if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &real) != SQLITE_OK)
                return -1;
        m = real;
        m.xMalloc = failing_malloc;
        m.xRealloc = failing_realloc;
        return sqlite3_config(SQLITE_CONFIG_MALLOC, &m) == SQLITE_OK ? 0 : -1;
}

/* ---- one pass ------------------------------------------------------------------------------ */

static char *caller_env[] = { (char *) "PATH=/usr/bin:/bin", NULL };

typedef struct Pass {
        int64_t run_id;
        size_t samples_recorded; /* sink calls that returned success */
        int failed_at;           /* the step that returned an error, 0: none */
} Pass;

static Host host;

static void record_and_read(const char *path, const Plan *plan, Pass *pass) {
        Store *store = NULL;
        _cleanup_free_ char *message = NULL;
        *pass = (Pass){};
        if (store_open(path, STORE_READ_WRITE, &store, &message) < 0) {
                pass->failed_at = 1;
                return;
        }
        RecordContext ctx = { .trigger = "test" };
        Recorder *rec = NULL;
        int r = record_begin(store, plan, &host, &ctx, &rec);
        if (r < 0) {
                assert_true(r == -EIO || r == -ENOMEM);
                pass->failed_at = 2;
                store_free(store);
                return;
        }
        pass->run_id = record_run_id(rec);
        RunSink sink = record_sink(rec);
        for (size_t i = 0; i < plan->n_steps && r >= 0; i++) {
                const PlanStep *step = &plan->steps[i];
                Sample s = { .step_index = i,
                             .step = step,
                             .status = SAMPLE_OK,
                             .spawn = { .end = SPAWN_EXITED, .wall_ns = 1000000 + 1000 * i },
                             .verified = step->variant != 0,
                             .detail = (char *) "a detail",
                             .env_offset = -1 };
                r = sink.sample(sink.userdata, plan, &s);
                if (r >= 0)
                        pass->samples_recorded++;
        }
        if (r >= 0) {
                StatsRow row = {
                        .cell = 0, .variant = 0, .metric = "wall", .stats = { .n = 2, .median = 0.001 }
                };
                r = sink.cell_stats(sink.userdata, plan, 0, &row, 1);
        }
        RunResult result = { .end = RUN_COMPLETED, .n_runs = plan->n_steps };
        int q = record_finish(rec, &result, r < 0 ? r : 0, NULL);
        if (r >= 0)
                r = q;
        record_free(rec);
        if (r < 0) {
                assert_true(r == -EIO || r == -ENOMEM);
                pass->failed_at = 3;
                store_free(store);
                return;
        }
        Report *rep = NULL;
        r = query_report(store, pass->run_id, NULL, &rep);
        query_report_free(rep);
        History *h = NULL;
        if (r >= 0)
                r = query_history(store, &(HistoryQuery){ .experiment = "oom", .last = 5 }, &h);
        history_free(h);
        json_t *table = NULL;
        if (r >= 0)
                r = export_samples(store, pass->run_id, &table);
        json_decref(table);
        if (r < 0) {
                assert_true(r == -EIO || r == -ENOMEM);
                pass->failed_at = 4;
        }
        store_free(store);
}

/* After a pass, with nothing failing: the database is sound and holds what was recorded. */
static void check_database(const char *path, const Pass *pass) {
        if (access(path, F_OK) < 0) {
                assert_int_equal(pass->failed_at, 1); /* the store failed before it made the file */
                return;
        }
        sqlite3 *db;
        assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *) sqlite3_column_text(st, 0), "ok");
        sqlite3_finalize(st);
        if (pass->run_id > 0) {
                char sql[128];
                snprintf(sql, sizeof(sql), "SELECT count(*) FROM samples WHERE run_id = %lld",
                         (long long) pass->run_id);
                assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
                assert_int_equal(sqlite3_step(st), SQLITE_ROW);
                assert_int_equal((size_t) sqlite3_column_int64(st, 0), pass->samples_recorded);
                sqlite3_finalize(st);
        }
        sqlite3_close(db);
}

static void remove_database(const char *path) {
        static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
        for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
                char p[512];
                snprintf(p, sizeof(p), "%s%s", path, suffixes[i]);
                unlink(p);
        }
}

static Spec *spec;
static Plan *plan;
static char dir[256], path[300];
static void *pristine; /* a database as store_open() leaves a new one: migrated, empty */
static size_t pristine_size;

static int write_file(const char *p, const void *data, size_t size) {
        FILE *f = fopen(p, "we");
        if (!f)
                return -errno;
        size_t w = fwrite(data, 1, size, f);
        return fclose(f) == 0 && w == size ? 0 : -EIO;
}

/* Passes n = first, first + stride, ... until a pass runs out of allocations to fail. */
static size_t fail_in_turn(long stride, bool from_pristine) {
        Pass pass;
        size_t passes = 0;
        for (long n = 1;; n += stride) {
                remove_database(path);
                if (from_pristine)
                        assert_int_equal(write_file(path, pristine, pristine_size), 0);
                countdown = n;
                injected = false;
                record_and_read(path, plan, &pass);
                countdown = 0;
                passes++;
                if (!injected) { /* the whole scenario ran without reaching allocation n */
                        assert_int_equal(pass.failed_at, 0);
                        check_database(path, &pass);
                        return passes;
                }
                check_database(path, &pass);
        }
}

/* A new database: the migrations, then the run; every 61st allocation (the schema is made of
 * tens of thousands, each of the same few kinds). */
static void test_new_database(void **state) {
        (void) state;
        size_t passes = fail_in_turn(61, false);
        print_message("a new database: %zu passes\n", passes);
        assert_true(passes > 100);
}

/* An existing database: every single allocation of recording and reading a run. */
static void test_every_allocation_fails_once(void **state) {
        (void) state;
        size_t passes = fail_in_turn(1, true);
        print_message("an existing database: %zu passes\n", passes);
        assert_true(passes > 100);
}

static int setup(void **state) {
        (void) state;
        static const char yaml[] = "experiment: oom\ncommand: [/bin/true]\nparams: {n: [1, 2]}\n"
                                   "allocators: {a: {}, b: {}}\nsamples: 2\nwarmup: 0\nprobe: never\n";
        Diagnostics d = {};
        if (install_failing_allocator(state) < 0 || host_read(&host) < 0 ||
            spec_load_buffer("oom.yaml", yaml, strlen(yaml), &d, &spec) < 0 ||
            plan_new(spec, &(PlanOptions){ .caller_env = caller_env, .seed = 1, .defer_cgroup = true },
                     &plan, NULL) < 0)
                return -1;
        diag_clear(&d);
        const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                          : getenv("TMPDIR")            ? getenv("TMPDIR")
                                                        : "/tmp";
        snprintf(dir, sizeof(dir), "%s/alloclab-oom.XXXXXX", tmp);
        if (!mkdtemp(dir))
                return -1;
        snprintf(path, sizeof(path), "%s/results.db", dir);
        Store *store = NULL;
        _cleanup_free_ char *message = NULL;
        if (store_open(path, STORE_READ_WRITE, &store, &message) < 0)
                return -1;
        store_free(store);
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        fseek(f, 0, SEEK_END);
        pristine_size = (size_t) ftell(f);
        rewind(f);
        pristine = malloc(pristine_size);
        size_t got = pristine ? fread(pristine, 1, pristine_size, f) : 0;
        fclose(f);
        return got == pristine_size ? 0 : -1;
}

static int teardown(void **state) {
        (void) state;
        remove_database(path);
        rmdir(dir);
        free(pristine);
        plan_free(plan);
        spec_free(spec);
        host_done(&host);
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_new_database),
                cmocka_unit_test(test_every_allocation_fails_once),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
