/* SPDX-License-Identifier: MIT */
/*
 * A store's last failure is its own: what failed on one connection (a bundle being written) is
 * never reported as another store's error, and it survives the ROLLBACK that clears SQLite's.
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

#include "db/sql.h"
#include "db/store.h"

/* Two stores in a directory of their own, removed by teardown() even when a check fails. */
typedef struct TwoStores {
        char dir[32], paths[2][64];
        Store *stores[2];
} TwoStores;

static int setup(void **state) {
        TwoStores *t = calloc(1, sizeof(TwoStores));
        assert_non_null(t);
        snprintf(t->dir, sizeof(t->dir), "/tmp/alloclab-store.XXXXXX");
        assert_non_null(mkdtemp(t->dir));
        for (size_t i = 0; i < 2; i++) {
                char *message = NULL;
                snprintf(t->paths[i], sizeof(t->paths[i]), "%s/%c.db", t->dir, (char) ('a' + i));
                assert_int_equal(store_open(t->paths[i], STORE_READ_WRITE, &t->stores[i], &message), 0);
        }
        *state = t;
        return 0;
}

static int teardown(void **state) {
        TwoStores *t = *state;
        for (size_t i = 0; i < 2; i++) {
                store_free(t->stores[i]);
                const char *suffixes[] = { "", "-wal", "-shm" };
                for (size_t k = 0; k < 3; k++) {
                        char file[80];
                        snprintf(file, sizeof(file), "%s%s", t->paths[i], suffixes[k]);
                        unlink(file);
                }
        }
        rmdir(t->dir);
        free(t);
        return 0;
}

static void test_failure_is_the_stores_own(void **state) {
        TwoStores *t = *state;
        Store *a = t->stores[0], *b = t->stores[1];
        assert_int_equal(sql_begin(store_db(a)), 0);
        assert_int_equal(sql_execf(store_db(a), "INSERT INTO no_such_table VALUES (1)"), -EIO);
        assert_int_equal(sql_commit(store_db(a), -EIO), -EIO); /* the ROLLBACK clears SQLite's message */
        assert_non_null(strstr(store_error(a), "no_such_table"));
        assert_null(strstr(store_error(b), "no_such_table"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_failure_is_the_stores_own, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
