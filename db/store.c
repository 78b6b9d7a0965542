/* SPDX-License-Identifier: MIT */
/*
 * Store lifecycle: opening (read-write, read-only, immutable), the migrations of db/migrations.c
 * each in one transaction, so a crash during one leaves the previous version intact, and
 * recovery of runs whose process is gone. A database newer than this build is refused rather
 * than guessed at.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "db/sql.h"
#include "db/store.h"
#include "util/accounts.h"
#include "util/cleanup.h"
#include "util/doomed.h"
#include "util/io.h"
#include "util/lockfile.h"
#include "util/message.h"

struct Store {
        sqlite3 *db;
        char *reserve_path; /* set by store_reserve() */
        bool immutable;     /* opened with immutable=1 (see open_immutable()) */
        /* A reader that found the measurement lock free: this host's runs recorded as running
         * are interrupted (what recover_interrupted() would write), shown so. */
        bool running_is_interrupted;
        char hostname[HOST_NAME_MAX + 1];
};

sqlite3 *store_db(Store *s) {
        return s->db;
}

int store_reserve(Store *s) {
        const char *db_path = store_path(s);
        if (!s->reserve_path && (!db_path || asprintf(&s->reserve_path, "%s-reserve", db_path) < 0)) {
                s->reserve_path = NULL;
                return -ENOMEM;
        }
        _cleanup_close_ int fd = open(s->reserve_path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        /* Written, not fallocate()d: tmpfs and others without fallocate must hold it too. */
        static const char zeros[64 * 1024];
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        for (off_t at = st.st_size; at < STORE_RESERVE_BYTES; at += (off_t) sizeof(zeros)) {
                errno = 0;
                if (pwrite(fd, zeros, sizeof(zeros), at) != (ssize_t) sizeof(zeros)) {
                        int r = errno ? -errno : -ENOSPC; /* a short write: the disk is full */
                        (void) !ftruncate(fd, 0);         /* best effort: the error is the write's */
                        return r;
                }
        }
        return fsync(fd) < 0 ? negative_errno() : 0;
}

void store_release_reserve(Store *s) {
        if (s->reserve_path)
                (void) unlink(s->reserve_path);
}

void store_checkpoint(Store *s) {
        (void) sqlite3_busy_timeout(s->db, 0);
        (void) sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
        (void) sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
}

const char *store_path(Store *s) {
        return sqlite3_db_filename(s->db, "main");
}

const char *store_error(Store *s) {
        if (sqlite3_errcode(s->db) == SQLITE_OK && sql_last_failure(s->db)[0])
                return sql_last_failure(s->db); /* a ROLLBACK since the failure cleared the connection's */
        return sqlite3_errmsg(s->db);
}

Store *store_free(Store *s) {
        if (!s)
                return NULL;
        store_release_reserve(s); /* kept for as long as the store that made it */
        sql_close(s->db);
        free(s->reserve_path);
        free(s);
        return NULL;
}

int store_exec(Store *s, const char *sql) {
        if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
                return -EIO;
        if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
                (void) sql_failed(s->db); /* its reason, which the ROLLBACK clears */
                sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
                return -EIO;
        }
        return sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

static int pragma_int(Store *s, const char *sql, int *ret) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        int r = sqlite3_step(st) == SQLITE_ROW ? (*ret = sqlite3_column_int(st, 0), 0) : -EIO;
        sqlite3_finalize(st);
        return r;
}

int store_cache_size(Store *s, int size, int *ret_previous) {
        char pragma[64];
        snprintf(pragma, sizeof(pragma), "PRAGMA cache_size = %d;", size);
        int r = pragma_int(s, "PRAGMA cache_size", ret_previous);
        return r < 0 ? r : sqlite3_exec(s->db, pragma, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* Why a database cannot be written, when the file system says: a hint for SQLite's message
 * `said` ("unable to open database file", "disk I/O error"), which names no cause. */
static const char *write_hint(const char *path, const char *said) {
        struct statvfs fs;
        _cleanup_free_ char *dir = strdup(path);
        char *slash = dir ? strrchr(dir, '/') : NULL;
        if (slash)
                *(slash == dir ? slash + 1 : slash) = 0;
        if (statvfs(path, &fs) < 0 && statvfs(slash ? dir : ".", &fs) < 0)
                return "";
        /* Root may use the blocks reserved for it; less than alloclab keeps in reserve is full. */
        uint64_t avail = (uint64_t) (geteuid() == 0 ? fs.f_bfree : fs.f_bavail) * fs.f_frsize;
        return fs.f_flag & ST_RDONLY                       ? " (on a read-only file system)"
               : access(path, W_OK) < 0 && errno != ENOENT ? " (not writable by you)"
               : avail < STORE_RESERVE_BYTES && !strstr(said, "disk is full") ? " (the disk is full)"
                                                                              : "";
}

/* Rolls back the migration from version that failed, and says why: SQLite's reason, taken
 * before the ROLLBACK, which replaces it (with "no transaction is active" where SQLite rolled
 * back already, on a full disk). */
static int migration_failed(Store *s, int version, char **ret_message) {
        char why[256];
        snprintf(why, sizeof(why), "%s", sqlite3_errmsg(s->db));
        (void) sql_failed(s->db);
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return message_fail(ret_message, -EIO, "cannot migrate %s from schema %d to %d: %s%s", store_path(s),
                            version, version + 1, why, write_hint(store_path(s), why));
}

/* Brings the schema to STORE_SCHEMA_VERSION, one migration per transaction. The version is read
 * inside each write transaction: two processes that open a new database at once take turns, and
 * the second finds the first's work done (it failed with "table hosts already exists"). */
static int migrate(Store *s, char **ret_message) {
        for (;;) {
                if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
                        return message_fail(ret_message, -EIO, "cannot migrate %s: %s%s", store_path(s),
                                            sqlite3_errmsg(s->db),
                                            write_hint(store_path(s), sqlite3_errmsg(s->db)));
                int version, r = pragma_int(s, "PRAGMA user_version", &version);
                if (r >= 0 && version > STORE_SCHEMA_VERSION)
                        r = message_fail(ret_message, -EPROTO,
                                         "database schema version %d is newer than this alloclab (%d)",
                                         version, STORE_SCHEMA_VERSION);
                if (r < 0 || version >= STORE_SCHEMA_VERSION) {
                        sqlite3_exec(s->db, r < 0 ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
                        return r;
                }
                _cleanup_free_ char *sql = NULL;
                if (asprintf(&sql, "%s PRAGMA user_version = %d;", store_migration(version), version + 1) <
                    0) {
                        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
                        return -ENOMEM;
                }
                if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK ||
                    sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
                        return migration_failed(s, version, ret_message);
        }
}

/* Marks the runs of this host that are still running interrupted, when nobody holds the
 * database's measurement lock (util/lockfile.h): every process that writes a run holds it until
 * the run ends, so a running run with the lock free is one whose process is gone. A PID says
 * nothing across PID namespaces (a run started in `unshare -p` recorded PID 1, alive anywhere).
 * While the lock is held, the holder's run is live and the others wait for the next time. */
static int recover_interrupted(Store *s) {
        if (lockfile_held(store_path(s)))
                return 0;
        char hostname[HOST_NAME_MAX + 1] = "";
        gethostname(hostname, sizeof(hostname) - 1);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->db,
                               "UPDATE runs SET status = 'interrupted', message = 'the process running it "
                               "vanished (killed or crashed)' WHERE status = 'running' AND host_id IN"
                               " (SELECT id FROM hosts WHERE hostname = ?)",
                               -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_text(st, 1, hostname, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        return rc == SQLITE_DONE ? 0 : -EIO;
}

static int make_parent_dir(const char *path) {
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return 0;
        *slash = 0;
        return mkdir_parents(dir, 0755);
}

/* path as an SQLite URI with query (without '?'): '%', '?' and '#' escaped, an absolute path
 * with an empty authority (a path that starts with "//" is no host name). */
static char *file_uri(const char *path, const char *query) {
        _cleanup_free_ char *escaped = malloc(3 * strlen(path) + 1);
        if (!escaped)
                return NULL;
        size_t n = 0;
        for (const char *c = path; *c; c++)
                n += (size_t) (strchr("%?#", *c) ? sprintf(escaped + n, "%%%02X", (unsigned char) *c)
                                                 : sprintf(escaped + n, "%c", *c));
        char *uri = NULL;
        return asprintf(&uri, "file:%s%s?%s", path[0] == '/' ? "//" : "", escaped, query) < 0 ? NULL : uri;
}

/* Opens path read-only as immutable: no -shm or -wal file is read or made, and nothing is
 * locked. Safe only while nobody writes to the database: see the callers. */
static int open_immutable(Store *s, const char *path) {
        _cleanup_free_ char *uri = file_uri(path, "mode=ro&immutable=1");
        if (!uri)
                return -ENOMEM;
        sqlite3 *db = NULL;
        if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK) {
                sql_close(db);
                return -EIO;
        }
        sql_close(s->db);
        s->db = db;
        s->immutable = true;
        return 0;
}

static bool side_file_exists(const char *path, const char *suffix) {
        _cleanup_free_ char *file = NULL;
        return asprintf(&file, "%s%s", path, suffix) >= 0 && access(file, F_OK) == 0;
}

/* Whether a reader that may not write the database opens it as immutable at once: when it has
 * no -wal file (so no connection has it open, and nothing is in a WAL), the -shm and -wal files
 * SQLite would make would be this user's, and the database's owner could not write to it
 * afterwards ("attempt to write a readonly database"; root's are given to the owner). A writer
 * that starts meanwhile writes into its WAL, which this reader does not see: what it reads is
 * the database as it was, except that its checkpoint, should it come while this reads, can make
 * a read fail ("malformed"); the database itself is never touched. */
static bool read_immutable(const char *path) {
        return access(path, W_OK) < 0 && !side_file_exists(path, "-wal") && !side_file_exists(path, "-shm");
}

/* A WAL database that no writer has open (no -wal file) in a directory this user cannot write
 * to (the daemon's, readable through its group, with the daemon stopped), or on a full disk:
 * SQLite cannot create the -shm file a reader needs, so it is opened as immutable, which needs
 * none. Safe only because nobody writes to it: a writer would have made the -wal file, or holds
 * the measurement lock. Returns 0 when reopened. */
static int reopen_immutable(Store *s, const char *path) {
        /* Also a full disk: the -shm file a reader needs cannot be made there either. */
        int code = sqlite3_extended_errcode(s->db) & 0xff;
        if (code != SQLITE_READONLY && code != SQLITE_CANTOPEN && code != SQLITE_IOERR &&
            code != SQLITE_FULL)
                return -EINVAL;
        _cleanup_free_ char *wal = NULL;
        if (asprintf(&wal, "%s-wal", path) < 0)
                return -ENOMEM;
        /* A -wal file with frames holds what the database does not have yet; an empty one is a
         * writer's, unless nobody writes (the measurement lock is free). */
        struct stat st;
        if (stat(wal, &st) == 0 && (st.st_size > 0 || lockfile_held(path)))
                return -EBUSY;
        return open_immutable(s, path);
}

/* alloclab_run_status(status, hostname): a run's status as this reader knows it (see
 * running_is_interrupted). */
static void sql_run_status(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
        (void) argc;
        const Store *s = sqlite3_user_data(ctx);
        const char *status = (const char *) sqlite3_value_text(argv[0]),
                   *hostname = (const char *) sqlite3_value_text(argv[1]);
        if (s->running_is_interrupted && status && hostname && strcmp(status, "running") == 0 &&
            strcmp(hostname, s->hostname) == 0)
                sqlite3_result_text(ctx, "interrupted", -1, SQLITE_STATIC);
        else
                sqlite3_result_value(ctx, argv[0]);
}

int store_attach_uri(Store *s, char **ret) {
        *ret = file_uri(store_path(s), s->immutable ? "mode=ro&immutable=1" : "mode=ro");
        return *ret ? 0 : -ENOMEM;
}

/* Puts a database into WAL mode. On a new file two processes may try at once, and the change of
 * journal mode does not wait for the other's lock as statements do (SQLITE_BUSY at once): tried
 * again for as long as the busy timeout. */
static int set_wal(sqlite3 *db) {
        int rc = SQLITE_BUSY;
        for (int waited = 0; waited <= STORE_BUSY_TIMEOUT_MS; waited += 10) {
                rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL;", NULL, NULL, NULL);
                if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
                        break;
                (void) nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
        return rc;
}

static const char *const store_file_suffixes[STORE_FILES] = { "", "-wal", "-shm", "-journal" };

void store_remove_files(const char *path) {
        for (size_t i = 0; i < STORE_FILES; i++) {
                _cleanup_free_ char *file = NULL;
                if (asprintf(&file, "%s%s", path, store_file_suffixes[i]) >= 0)
                        (void) unlink(file);
        }
}

void store_doom_files(const char *path, int handles[STORE_FILES]) {
        for (size_t i = 0; i < STORE_FILES; i++) {
                _cleanup_free_ char *file = NULL;
                handles[i] = asprintf(&file, "%s%s", path, store_file_suffixes[i]) < 0
                                     ? -ENOMEM
                                     : doomed_register(file, false);
        }
}

void store_forget_files(int handles[STORE_FILES]) {
        for (size_t i = STORE_FILES; i-- > 0;)
                doomed_forget(handles[i]);
}

/* store_open() but for the cleanup of what it created. */
static int open_store(Store *s, const char *path, StoreMode mode, char **ret_message) {
        if (mode == STORE_READ_ONLY && read_immutable(path)) {
                int r = open_immutable(s, path);
                if (r != -EIO)
                        return r;
        }
        /* URIs are taken (ATTACH of a database read-only: store_attach_uri()); a path that
         * looks like one is a file name all the same. */
        _cleanup_free_ char *name = NULL;
        if (strncmp(path, "file:", 5) == 0 && asprintf(&name, "./%s", path) < 0)
                return -ENOMEM;
        int flags = SQLITE_OPEN_URI | (mode == STORE_READ_ONLY ? SQLITE_OPEN_READONLY
                                                               : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        int rc = sqlite3_open_v2(name ? name : path, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
        if (rc == SQLITE_OK && mode == STORE_READ_WRITE)
                rc = set_wal(s->db);
        if (rc == SQLITE_OK && mode == STORE_READ_WRITE)
                rc = sqlite3_exec(s->db, "PRAGMA synchronous = FULL;", NULL, NULL, NULL);
        if (rc == SQLITE_OK && mode == STORE_READ_WRITE) {
                char limit[64];
                snprintf(limit, sizeof(limit), "PRAGMA journal_size_limit = %d;", STORE_WAL_LIMIT_BYTES);
                rc = sqlite3_exec(s->db, limit, NULL, NULL, NULL);
        }
        if (rc == SQLITE_OK)
                rc = sqlite3_exec(s->db, "PRAGMA foreign_keys = ON;", NULL, NULL, NULL);
        if (rc != SQLITE_OK)
                return message_fail(ret_message, -EIO, "cannot open database %s: %s%s", path,
                                    s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc),
                                    mode == STORE_READ_WRITE ? write_hint(path, s->db ? sqlite3_errmsg(s->db)
                                                                                      : sqlite3_errstr(rc))
                                                             : "");

        int r = 0;
        if (mode == STORE_READ_WRITE) {
                r = migrate(s, ret_message);
                if (r >= 0)
                        r = recover_interrupted(s);
        } else {
                int version;
                r = pragma_int(s, "PRAGMA user_version", &version);
                int reopened = r < 0 ? reopen_immutable(s, path) : -EINVAL;
                if (reopened == 0)
                        r = pragma_int(s, "PRAGMA user_version", &version);
                else if (reopened == -EBUSY && !lockfile_held(path))
                        return message_fail(ret_message, -EIO,
                                            "cannot read database %s: its latest changes are in %s-wal, "
                                            "and SQLite must make %s-shm beside it to read them, which "
                                            "it cannot here (a directory you may not write to, or a "
                                            "full disk): read it as its owner, or copy %s and %s-wal "
                                            "together into a directory of yours",
                                            path, path, path, path, path);
                if (r >= 0 && version != STORE_SCHEMA_VERSION)
                        return message_fail(
                                ret_message, -EPROTO, "database %s has schema version %d, expected %d%s",
                                path, version, STORE_SCHEMA_VERSION,
                                version < STORE_SCHEMA_VERSION ? " (open it for writing once to migrate)"
                                                               : "");
        }
        if (r == -EIO && ret_message && !*ret_message)
                (void) message_fail(ret_message, r, "database %s: %s%s", path, store_error(s),
                                    mode == STORE_READ_WRITE ? write_hint(path, store_error(s)) : "");
        return r;
}

/* The SQL functions of the store's readers (on the connection open_store() ended with). */
static int add_functions(Store *s, StoreMode mode) {
        (void) gethostname(s->hostname, sizeof(s->hostname) - 1);
        s->running_is_interrupted = mode == STORE_READ_ONLY && !lockfile_held(store_path(s));
        return sqlite3_create_function(s->db, "alloclab_run_status", 2, SQLITE_UTF8, s, sql_run_status, NULL,
                                       NULL) == SQLITE_OK
                       ? 0
                       : -ENOMEM;
}

/* Who may read path (SQLite says only "unable to open database file"). */
static int permission_denied(const char *path, char **ret_message) {
        struct stat st;
        if (stat(path, &st) < 0)
                return message_fail(ret_message, -EACCES, "cannot read database %s: %m", path);
        char readers[2 * ACCOUNT_NAME_MAX + 32];
        account_readers(&st, readers, sizeof(readers));
        return message_fail(ret_message, -EACCES, "cannot read database %s: permission denied: it is for %s",
                            path, readers);
}

int store_open(const char *path, StoreMode mode, Store **ret, char **ret_message) {
        if (mode == STORE_READ_ONLY && access(path, F_OK) < 0)
                return message_fail(ret_message, -ENOENT, "no database at %s (run an experiment first)",
                                    path);
        if (access(path, R_OK) < 0 && errno == EACCES)
                return permission_denied(path, ret_message);
        if (mode == STORE_READ_WRITE && make_parent_dir(path) < 0)
                return message_fail(ret_message, -EIO, "cannot create the directory of %s: %m", path);
        Store *s = calloc(1, sizeof(Store));
        if (!s)
                return -ENOMEM;
        bool created = mode == STORE_READ_WRITE && access(path, F_OK) < 0 && errno == ENOENT;
        int r = open_store(s, path, mode, ret_message);
        if (r >= 0)
                r = add_functions(s, mode);
        if (r < 0) {
                store_free(s);
                if (created) /* a database this call created and could not make whole is none */
                        store_remove_files(path);
                return r;
        }
        *ret = s;
        return 0;
}

char *store_default_path(void) {
        const char *explicit = getenv("ALLOCLAB_DB");
        if (explicit && *explicit)
                return strdup(explicit);
        char *p = NULL;
        const char *xdg = getenv("XDG_DATA_HOME");
        const char *home = getenv("HOME");
        if (xdg && xdg[0] == '/') {
                if (asprintf(&p, "%s/alloclab/results.db", xdg) < 0)
                        return NULL;
        } else if (home && *home) {
                if (asprintf(&p, "%s/.local/share/alloclab/results.db", home) < 0)
                        return NULL;
        }
        return p;
}
