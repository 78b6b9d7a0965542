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

static void test_failure_is_the_stores_own(void **state) {
        (void) state;
        char dir[] = "/tmp/alloclab-store.XXXXXX";
        assert_non_null(mkdtemp(dir));
        char a_path[64], b_path[64];
        snprintf(a_path, sizeof(a_path), "%s/a.db", dir);
        snprintf(b_path, sizeof(b_path), "%s/b.db", dir);
        Store *a = NULL, *b = NULL;
        char *message = NULL;
        assert_int_equal(store_open(a_path, STORE_READ_WRITE, &a, &message), 0);
        assert_int_equal(store_open(b_path, STORE_READ_WRITE, &b, &message), 0);

        assert_int_equal(sql_begin(store_db(a)), 0);
        assert_int_equal(sql_execf(store_db(a), "INSERT INTO no_such_table VALUES (1)"), -EIO);
        assert_int_equal(sql_commit(store_db(a), -EIO), -EIO); /* the ROLLBACK clears SQLite's message */
        assert_non_null(strstr(store_error(a), "no_such_table"));
        assert_null(strstr(store_error(b), "no_such_table"));

        store_free(a);
        store_free(b);
        const char *files[] = { a_path, b_path };
        for (size_t i = 0; i < 2; i++) {
                char side[80];
                unlink(files[i]);
                snprintf(side, sizeof(side), "%s-wal", files[i]);
                unlink(side);
                snprintf(side, sizeof(side), "%s-shm", files[i]);
                unlink(side);
        }
        rmdir(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_failure_is_the_stores_own),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
