/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * The SQLite store: opening, schema migrations, crash recovery. This module and its siblings
 * in db/ are the only code that includes <sqlite3.h>.
 *
 * Durability: WAL, synchronous=FULL, one transaction per sample, so a kill -9 at any moment
 * keeps every sample whose write returned.
 */

#define STORE_SCHEMA_VERSION 32

/* The SQL that takes a database from schema version to version + 1 (db/migrations.c), or NULL. */
const char *store_migration(int version);

/* The machine name a run is filed under (history, fleet, import group by it), over runs R and
 * hosts H: runs.machine, else (a run of a version before schema 31) its host name. */
#define STORE_SQL_MACHINE(R, H) "coalesce(" R ".machine, " H ".hostname)"

/* An SQL expression for a random (version 4) UUID in its 36-character text form; evaluated once
 * per row. */
#define STORE_SQL_UUID                                                                                      \
        "lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2)"    \
        " || '-' || substr('89ab', 1 + abs(random() % 4), 1) || substr(hex(randomblob(2)), 2) || '-'"       \
        " || hex(randomblob(6)))"
#define STORE_BUSY_TIMEOUT_MS 10000

typedef struct Store Store;
typedef struct sqlite3 sqlite3;

typedef enum StoreMode {
        STORE_READ_ONLY,
        STORE_READ_WRITE, /* creates the file and its directory if missing */
} StoreMode;

/*
 * Opens (and for READ_WRITE creates and migrates) the database. A run left 'running' by a
 * process that no longer exists on this host is marked 'interrupted' when opened for writing.
 * Returns 0; -ENOENT when READ_ONLY and missing; -EPROTO for a database newer than this build;
 * -EIO for other SQLite failures; *ret_message (if non-NULL) explains failures.
 */
int store_open(const char *path, StoreMode mode, Store **ret, char **ret_message);

/* Deletes the database file at path and SQLite's files beside it (-wal, -shm, -journal): for a
 * database that was never whole (one being created, a bundle being written). Not for one open. */
void store_remove_files(const char *path);

/* Those files registered to be removed should a signal end the process first (util/doomed.h),
 * and forgotten (when kept, or removed by the caller). */
#define STORE_FILES 4
void store_doom_files(const char *path, int handles[STORE_FILES]);
void store_forget_files(int handles[STORE_FILES]);

/* Sets the connection's page cache to `size` (PRAGMA cache_size: pages, or -KiB when negative)
 * and gives the size it had. Returns 0 or -EIO. */
int store_cache_size(Store *s, int size, int *ret_previous);

Store *store_free(Store *s);
static inline void store_freep(Store **s) {
        store_free(*s);
}

/* The handle, for db/ modules only. */
sqlite3 *store_db(Store *s);

/* Last SQLite error message of this store (static until the next call). */
const char *store_error(Store *s);

/* Moves the WAL into the database and truncates it, when no reader holds an older snapshot; never
 * waits for one (a reader that stays keeps the WAL until a later checkpoint). Called at the end
 * of each run; during a run SQLite's automatic checkpoints keep the WAL near 4 MiB, and
 * journal_size_limit truncates it back after a checkpoint that a reader had held up. */
#define STORE_WAL_LIMIT_BYTES (64 * 1024 * 1024)
void store_checkpoint(Store *s);

/* The database file's absolute path. */
const char *store_path(Store *s);

/* The URI under which another connection (opened by store_open()) ATTACHes this database
 * read-only, as this one reads it (immutable where store_open() chose that). */
int store_attach_uri(Store *s, char **ret);

/* Space kept in reserve next to the database (PATH-reserve, STORE_RESERVE_BYTES) for the few
 * writes that end a job when the disk is full. store_reserve() makes the file (again); returns 0
 * or -errno. store_release_reserve() deletes it, once a write failed for lack of space: the
 * writes that follow (a job marked failed, a run closed) then fit. store_free() deletes it too. */
#define STORE_RESERVE_BYTES (256 * 1024)
int store_reserve(Store *s);
void store_release_reserve(Store *s);

/*
 * Default database path: $ALLOCLAB_DB, else $XDG_DATA_HOME/alloclab/results.db, else
 * $HOME/.local/share/alloclab/results.db. Returns a new string or NULL (no HOME, or -ENOMEM).
 */
char *store_default_path(void);

/* Runs a statement list inside one transaction. Returns 0 or -EIO. */
int store_exec(Store *s, const char *sql);

/* The schema objects of database `schema` (main, or an attached one) of db as text, a line each
 * ("TYPE NAME on TABLE: SQL", in name order), a bundle's own table left out. Returns 0, -EIO,
 * -ENOMEM. */
int store_schema_text(sqlite3 *db, const char *schema, char **ret);

/* The same for what this alloclab's migrations make of an empty database at schema `version`:
 * what a database, or a bundle, of that version holds and nothing else. Returns 0, -EINVAL (a
 * version it does not know), -EIO, -ENOMEM. */
int store_expected_schema(int version, char **ret);
