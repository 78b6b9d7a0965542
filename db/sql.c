/* SPDX-License-Identifier: MIT */
/*
 * Small statement helpers shared by the db/ modules: transactions, and binding arguments from
 * a format string so that each INSERT or UPDATE stays one readable call.
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql.h"

/* The message of each connection's last failed statement. A ROLLBACK after a failure succeeds
 * and resets the connection's message to "not an error"; this keeps the reason for the one who
 * reports it, and a failure of one connection (a bundle being written) never for another's
 * store. Every process that writes is single-threaded and has a few connections at most. */
#define SQL_CONNECTIONS 8
static struct {
        sqlite3 *db;
        char text[SQL_FAILURE_MAX];
} failures[SQL_CONNECTIONS];
static size_t next_failure; /* the slot a new connection takes: the oldest */

static size_t failure_slot(sqlite3 *db) {
        for (size_t i = 0; i < SQL_CONNECTIONS; i++)
                if (failures[i].db == db)
                        return i;
        return SQL_CONNECTIONS;
}

int sql_failed(sqlite3 *db) {
        if (sqlite3_errcode(db) == SQLITE_OK)
                return -EIO;
        size_t i = failure_slot(db);
        if (i == SQL_CONNECTIONS) {
                i = next_failure;
                next_failure = (next_failure + 1) % SQL_CONNECTIONS;
        }
        failures[i].db = db;
        snprintf(failures[i].text, sizeof(failures[i].text), "%s", sqlite3_errmsg(db));
        return -EIO;
}

const char *sql_last_failure(sqlite3 *db) {
        size_t i = failure_slot(db);
        return i < SQL_CONNECTIONS ? failures[i].text : "";
}

void sql_close(sqlite3 *db) {
        size_t i = failure_slot(db);
        if (i < SQL_CONNECTIONS)
                failures[i].db = NULL;
        sqlite3_close_v2(db);
}

int sql_execf(sqlite3 *db, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *sql = sqlite3_vmprintf(fmt, ap);
        va_end(ap);
        if (!sql)
                return -ENOMEM;
        int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        sqlite3_free(sql);
        return rc == SQLITE_OK ? 0 : sql_failed(db);
}

int sql_queryf(sqlite3 *db, int64_t *ret, char **ret_text, const char *fmt, ...) {
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
                return sql_failed(db);
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
                r = sql_failed(db);
        sqlite3_finalize(st);
        return r;
}

char *sql_text(sqlite3_stmt *st, int i) {
        const unsigned char *t = sqlite3_column_text(st, i);
        return strdup(t ? (const char *) t : "");
}

char *sql_text_or_null(sqlite3_stmt *st, int i) {
        return sqlite3_column_type(st, i) == SQLITE_NULL ? NULL : sql_text(st, i);
}

int sql_begin(sqlite3 *db) {
        return sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : sql_failed(db);
}

int sql_commit(sqlite3 *db, int r) {
        if (r < 0) {
                (void) sql_failed(db);
                sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
                return r;
        }
        if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
                return 0;
        r = sql_failed(db);
        /* A COMMIT that failed (SQLITE_FULL) may leave the transaction open: end it, or every later
         * BEGIN fails with "cannot start a transaction within a transaction". */
        if (!sqlite3_get_autocommit(db))
                sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return r;
}

/* Binds arguments described by a format string: 'i' int64, 't' text (a NULL pointer binds
 * NULL), 'd' double, 'D' double bound as NULL when NaN, 'n' an int64 argument that is ignored
 * and binds NULL (for optional numbers), 'b' a blob (two arguments: a pointer and a size_t). Keeps the many
 * INSERTs below one line each. */
static int bind(sqlite3_stmt *st, const char *fmt, va_list ap) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        for (int i = 0; fmt[i]; i++) {
                int rc = SQLITE_OK;
                switch (fmt[i]) {
                case 'i':
                        rc = sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
                        break;
                case 't':
                        rc = sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
                        break;
                case 'd':
                        rc = sqlite3_bind_double(st, i + 1, va_arg(ap, double));
                        break;
                case 'n':
                        (void) va_arg(ap, int64_t);
                        rc = sqlite3_bind_null(st, i + 1);
                        break;
                case 'b': {
                        const void *p = va_arg(ap, const void *);
                        rc = sqlite3_bind_blob64(st, i + 1, p, va_arg(ap, size_t), SQLITE_TRANSIENT);
                        break;
                }
                case 'D': {
                        double v = va_arg(ap, double);
                        rc = isnan(v) ? sqlite3_bind_null(st, i + 1) : sqlite3_bind_double(st, i + 1, v);
                        break;
                }
                }
                if (rc != SQLITE_OK)
                        return -EIO;
        }
        return 0;
}

/* Executes st with bound arguments; *ret_id (optional) gets the new rowid. */
int sql_step(sqlite3 *db, sqlite3_stmt *st, int64_t *ret_id, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = bind(st, fmt, ap);
        va_end(ap);
        return r < 0 ? r : sql_step_bound(db, st, ret_id);
}

int sql_step_bound(sqlite3 *db, sqlite3_stmt *st, int64_t *ret_id) {
        int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE && rc != SQLITE_ROW)
                return sql_failed(db);
        if (ret_id)
                *ret_id = sqlite3_last_insert_rowid(db);
        return 0;
}

/* One-off statement: prepare, step, finalize. */
int sql_exec1(sqlite3 *db, int64_t *ret_id, const char *sql, const char *fmt, ...) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        va_list ap;
        va_start(ap, fmt);
        int r = bind(st, fmt, ap);
        va_end(ap);
        int rc = r < 0 ? SQLITE_ERROR : sqlite3_step(st);
        if (rc == SQLITE_ROW && ret_id)
                *ret_id = sqlite3_column_int64(st, 0);
        else if (rc == SQLITE_DONE && ret_id)
                *ret_id = sqlite3_last_insert_rowid(db);
        if (rc != SQLITE_DONE && rc != SQLITE_ROW)
                (void) sql_failed(db);
        sqlite3_finalize(st);
        return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -EIO;
}

int sql_collect(sqlite3_stmt *st, size_t size, int (*read)(sqlite3_stmt *st, void *element),
                void (*clear)(void *element), void **ret, size_t *ret_n) {
        char *list = NULL;
        size_t n = 0;
        int rc = SQLITE_DONE, r = 0;
        while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                char *grown = realloc(list, (n + 1) * size);
                if (!grown) {
                        r = -ENOMEM;
                        break;
                }
                list = grown;
                memset(list + n * size, 0, size);
                r = read(st, list + n * size);
                n++; /* a partly read element is cleared with the rest */
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = -EIO;
        sqlite3_finalize(st);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        clear(list + i * size);
                free(list);
                return r;
        }
        *ret = list;
        *ret_n = n;
        return 0;
}

int sql_each_row(sqlite3 *db, const char *sql, int64_t id, int (*row)(sqlite3_stmt *st, void *userdata),
                 void *userdata) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_int64(st, 1, id);
        int rc, r = 0;
        while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
                r = row(st, userdata);
        if (r >= 0 && rc != SQLITE_DONE)
                r = -EIO;
        sqlite3_finalize(st);
        return r;
}
