/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/*
 * Statement helpers for db/ modules. Format strings describe the arguments: 'i' int64, 't'
 * text (a NULL pointer binds NULL), 'd' double, 'n' an int64 argument that is ignored and binds
 * NULL (for optional numbers). All return 0 or -EIO.
 */

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

int sql_begin(sqlite3 *db);

/* For _cleanup_(sqlite3_freep): text from sqlite3_mprintf. */
void sqlite3_free(void *);
static inline void sqlite3_freep(char **p) {
        sqlite3_free(*p);
}

/* The message of the last statement that failed on db ("" if none), at most SQL_FAILURE_MAX
 * bytes with its NUL. */
#define SQL_FAILURE_MAX 512
const char *sql_last_failure(sqlite3 *db);

/* Closes db, and forgets its last failure. */
void sql_close(sqlite3 *db);

/* Keeps db's message as the last failure (before a ROLLBACK clears it). Returns -EIO. */
int sql_failed(sqlite3 *db);

/* Column i of the current row as a new string: "" for SQL NULL (NULL when out of memory). */
char *sql_text(sqlite3_stmt *st, int i);

/* The same, but NULL for SQL NULL (and when out of memory). */
char *sql_text_or_null(sqlite3_stmt *st, int i);

/* Formats (sqlite3_mprintf: %Q quotes a string, %w an identifier) and runs statements; returns 0,
 * -EIO or -ENOMEM (when formatting fails). For statements whose table names vary (an attached
 * file's schema); values are bound, never formatted, everywhere else. */
int sql_execf(sqlite3 *db, const char *fmt, ...);

/* The first column of the first row of a formatted query into *ret (0 when NULL or no row); with
 * ret_text, its text instead (NULL when NULL or no row). Returns 0, -EIO or -ENOMEM. */
int sql_queryf(sqlite3 *db, int64_t *ret, char **ret_text, const char *fmt, ...);

/* Commits when r >= 0, rolls back otherwise; returns r or the commit's failure. */
int sql_commit(sqlite3 *db, int r);

/* Resets st, binds the arguments, steps once; *ret_id (optional) gets the new rowid. */
int sql_step(sqlite3 *db, sqlite3_stmt *st, int64_t *ret_id, const char *fmt, ...);

/* Steps st once as the caller bound it; *ret_id (optional) gets the new rowid. */
int sql_step_bound(sqlite3 *db, sqlite3_stmt *st, int64_t *ret_id);

/* One-off statement: prepare, bind, step, finalize. *ret_id gets the first column of a returned
 * row, or the new rowid. */
int sql_exec1(sqlite3 *db, int64_t *ret_id, const char *sql, const char *fmt, ...);

/* Prepares sql, binds ?1 = id and calls row() for each result row until one returns < 0.
 * Returns 0, -EIO, or row()'s error. */
int sql_each_row(sqlite3 *db, const char *sql, int64_t id, int (*row)(sqlite3_stmt *st, void *userdata),
                 void *userdata);

/*
 * Steps st (prepared and bound by the caller, finalized here) to its end and returns one
 * element of `size` bytes per row in a new array: read() fills a zeroed element and returns
 * < 0 on failure; on any failure every element is cleared with clear() and nothing returned.
 * Returns 0, -ENOMEM, -EIO, or read()'s error.
 */
int sql_collect(sqlite3_stmt *st, size_t size, int (*read)(sqlite3_stmt *st, void *element),
                void (*clear)(void *element), void **ret, size_t *ret_n);
