/* SPDX-License-Identifier: MIT */
/*
 * Store lifecycle. The schema is a list of forward migrations indexed by PRAGMA user_version;
 * migration N takes the database from version N to N+1 in one transaction, so a crash during
 * a migration leaves the previous version intact. A database newer than this build is refused
 * rather than guessed at.
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

static const char *const migrations[] = {
        /* 0 -> 1 */
        "CREATE TABLE hosts ("
        "  id INTEGER PRIMARY KEY,"
        "  hostname TEXT NOT NULL, kernel TEXT NOT NULL, cpu_model TEXT NOT NULL,"
        "  cpus INTEGER NOT NULL, glibc TEXT NOT NULL, thp TEXT NOT NULL,"
        "  UNIQUE (hostname, kernel, cpu_model, cpus, glibc, thp));"
        "CREATE TABLE experiments ("
        "  id INTEGER PRIMARY KEY,"
        "  name TEXT NOT NULL UNIQUE);"
        "CREATE TABLE specs ("
        "  id INTEGER PRIMARY KEY,"
        "  sha256 TEXT NOT NULL UNIQUE,"
        "  yaml TEXT NOT NULL);"
        "CREATE TABLE runs ("
        "  id INTEGER PRIMARY KEY,"
        "  experiment_id INTEGER NOT NULL REFERENCES experiments(id),"
        "  spec_id INTEGER NOT NULL REFERENCES specs(id),"
        "  host_id INTEGER NOT NULL REFERENCES hosts(id),"
        "  spec_path TEXT,"
        "  status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted')),"
        "  trigger TEXT NOT NULL,"
        "  submitter TEXT,"
        "  pid INTEGER, pid_start INTEGER,"
        "  started_at TEXT NOT NULL, ended_at TEXT,"
        "  samples INTEGER NOT NULL, warmup INTEGER NOT NULL, order_mode TEXT NOT NULL,"
        "  seed INTEGER NOT NULL, timeout_ns INTEGER NOT NULL, verify TEXT NOT NULL,"
        "  metric TEXT NOT NULL,"
        "  on_failure TEXT NOT NULL,"
        "  n_runs INTEGER NOT NULL DEFAULT 0, n_failures INTEGER NOT NULL DEFAULT 0,"
        "  n_excluded INTEGER NOT NULL DEFAULT 0,"
        "  message TEXT);"
        "CREATE INDEX runs_experiment ON runs (experiment_id, id);"
        "CREATE TABLE allocators ("
        "  id INTEGER PRIMARY KEY,"
        "  name TEXT NOT NULL,"
        "  path TEXT NOT NULL," /* '' when nothing is preloaded */
        "  sha256 TEXT NOT NULL, version TEXT NOT NULL,"
        "  UNIQUE (name, path, sha256, version));"
        "CREATE TABLE variants ("
        "  id INTEGER PRIMARY KEY,"
        "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        "  position INTEGER NOT NULL,"
        "  name TEXT NOT NULL,"
        "  allocator_id INTEGER NOT NULL REFERENCES allocators(id),"
        "  env TEXT NOT NULL,"     /* JSON object: spec env + variant env, unexpanded */
        "  command TEXT NOT NULL," /* JSON array, unexpanded */
        "  is_baseline INTEGER NOT NULL, is_reference INTEGER NOT NULL,"
        "  UNIQUE (run_id, position));"
        "CREATE TABLE cells ("
        "  id INTEGER PRIMARY KEY,"
        "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        "  position INTEGER NOT NULL,"
        "  label TEXT NOT NULL,"
        "  params TEXT NOT NULL," /* JSON object name -> value */
        "  UNIQUE (run_id, position));"
        "CREATE TABLE samples ("
        "  id INTEGER PRIMARY KEY,"
        "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        "  cell_id INTEGER NOT NULL REFERENCES cells(id),"
        "  variant_id INTEGER NOT NULL REFERENCES variants(id),"
        "  phase TEXT NOT NULL CHECK (phase IN ('smoke', 'warmup', 'sample')),"
        "  round INTEGER NOT NULL, step INTEGER NOT NULL,"
        "  status TEXT NOT NULL,"
        "  wall_ns INTEGER NOT NULL, user_us INTEGER NOT NULL, sys_us INTEGER NOT NULL,"
        "  maxrss_kib INTEGER NOT NULL, minflt INTEGER NOT NULL, majflt INTEGER NOT NULL,"
        "  nvcsw INTEGER NOT NULL, nivcsw INTEGER NOT NULL,"
        "  exit_code INTEGER, signal INTEGER, exec_errno INTEGER,"
        "  leftover INTEGER NOT NULL,"
        "  output_size INTEGER, output_hash TEXT, verified INTEGER NOT NULL,"
        "  mismatch_offset INTEGER, reference_size INTEGER,"
        "  stderr_excerpt TEXT,"
        "  recorded_at TEXT NOT NULL);"
        "CREATE INDEX samples_run ON samples (run_id, cell_id, variant_id);"
        "CREATE TABLE sample_metrics ("
        "  sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,"
        "  name TEXT NOT NULL, value REAL NOT NULL,"
        "  PRIMARY KEY (sample_id, name)) WITHOUT ROWID;"
        "CREATE TABLE exclusions ("
        "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        "  cell_id INTEGER NOT NULL REFERENCES cells(id),"
        "  variant_id INTEGER NOT NULL REFERENCES variants(id),"
        "  reason TEXT NOT NULL,"
        "  PRIMARY KEY (cell_id, variant_id));"
        "CREATE TABLE stats ("
        "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        "  cell_id INTEGER NOT NULL REFERENCES cells(id),"
        "  variant_id INTEGER NOT NULL REFERENCES variants(id),"
        "  metric TEXT NOT NULL,"
        "  n INTEGER NOT NULL, median REAL NOT NULL, mad REAL NOT NULL, mean REAL NOT NULL,"
        "  stddev REAL NOT NULL, min REAL NOT NULL, max REAL NOT NULL,"
        "  PRIMARY KEY (cell_id, variant_id, metric));",
        /* 1 -> 2: the probe */
        "ALTER TABLE samples ADD COLUMN detail TEXT;"
        "ALTER TABLE runs ADD COLUMN probe TEXT NOT NULL DEFAULT 'never';"
        "CREATE TABLE probe_reports ("
        "  sample_id INTEGER PRIMARY KEY REFERENCES samples(id) ON DELETE CASCADE,"
        "  effective_path TEXT NOT NULL, family TEXT NOT NULL, version TEXT NOT NULL,"
        "  allocator_copies INTEGER NOT NULL,"
        "  report TEXT NOT NULL);", /* the whole report as JSON (runner/probe-json.c) */
        /* 2 -> 3: the daemon's job queue */
        "CREATE TABLE jobs ("
        "  id INTEGER PRIMARY KEY,"
        "  spec_path TEXT NOT NULL, spec_yaml TEXT NOT NULL,"
        "  env TEXT NOT NULL," /* JSON array of KEY=VALUE */
        "  cwd TEXT NOT NULL,"
        "  uid INTEGER NOT NULL, gid INTEGER NOT NULL, submitter TEXT,"
        "  trigger TEXT NOT NULL,"
        "  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'canceled',"
        "    'interrupted')),"
        "  run_id INTEGER REFERENCES runs(id),"
        "  submitted_at TEXT NOT NULL, started_at TEXT, ended_at TEXT,"
        "  message TEXT);"
        "CREATE INDEX jobs_status ON jobs (status, id);",
        /* 3 -> 4: when each scheduled spec last fired, for catching up after downtime */
        "CREATE TABLE schedule_state ("
        "  spec_path TEXT PRIMARY KEY,"
        "  last_fire_at INTEGER NOT NULL);",
        /* 4 -> 5: what the verdicts of a run call a difference */
        "ALTER TABLE runs ADD COLUMN min_effect REAL NOT NULL DEFAULT 0.02;"
        "ALTER TABLE runs ADD COLUMN alpha REAL NOT NULL DEFAULT 0.01;",
        /* 5 -> 6: whether the figures shown leave outliers out */
        "ALTER TABLE runs ADD COLUMN outliers TEXT NOT NULL DEFAULT 'flag';",
        /* 6 -> 7: a run's statistics and exclusions without scanning every run's (bench/scale.sh) */
        "CREATE INDEX stats_run ON stats (run_id, metric);"
        "CREATE INDEX exclusions_run ON exclusions (run_id);",
        /* 7 -> 8: the baseline's A/A copy (spec aa_check) */
        "ALTER TABLE variants ADD COLUMN is_aa INTEGER NOT NULL DEFAULT 0;",
        /* 8 -> 9: CPU placement (spec cpus): CPU lists, NULL when the children were not pinned */
        "ALTER TABLE runs ADD COLUMN cpus TEXT;"
        "ALTER TABLE runs ADD COLUMN runner_cpus TEXT;",
        /* 9 -> 10: the host fingerprint (runner/host.h) and each variant's program file */
        "ALTER TABLE runs ADD COLUMN host_facts TEXT;" /* JSON object name -> value */
        "ALTER TABLE runs ADD COLUMN host_fingerprint TEXT;"
        "ALTER TABLE variants ADD COLUMN program_sha256 TEXT;",
        /* 10 -> 11: the quiet-machine guard's reading before each measured sample (spec quiet) */
        "ALTER TABLE samples ADD COLUMN noisy INTEGER;" /* NULL: not checked */
        "ALTER TABLE samples ADD COLUMN cpu_some_avg10 REAL;"
        "ALTER TABLE samples ADD COLUMN load1 REAL;"
        "ALTER TABLE samples ADD COLUMN quiet_wait_ns INTEGER;",
        /* 11 -> 12: timed probe reports carry no version or census (PROBE_REQUEST_IDENTITY):
         * those columns become nullable (SQLite changes a constraint by copying the table) */
        "CREATE TABLE probe_reports_12 ("
        "  sample_id INTEGER PRIMARY KEY REFERENCES samples(id) ON DELETE CASCADE,"
        "  effective_path TEXT NOT NULL, family TEXT NOT NULL, version TEXT,"
        "  allocator_copies INTEGER,"
        "  report TEXT NOT NULL);"
        "INSERT INTO probe_reports_12 SELECT * FROM probe_reports;"
        "DROP TABLE probe_reports;"
        "ALTER TABLE probe_reports_12 RENAME TO probe_reports;",
        /* 12 -> 13: a cgroup per child (runner/cgroup.h): where, or why not; per sample what is
         * left of the tree at the reap, and the tree's CPU time and peak memory with their source
         * ('cgroup', or 'rusage': the child and the descendants it waited for) */
        "ALTER TABLE runs ADD COLUMN cgroup TEXT;"
        "ALTER TABLE runs ADD COLUMN cgroup_fallback TEXT;"
        "ALTER TABLE samples ADD COLUMN leftover_processes INTEGER;" /* NULL: not in a cgroup */
        "ALTER TABLE samples ADD COLUMN cpu_us INTEGER;"
        "ALTER TABLE samples ADD COLUMN cpu_source TEXT;"
        "ALTER TABLE samples ADD COLUMN peak_kib INTEGER;"
        "ALTER TABLE samples ADD COLUMN memory_source TEXT;",
        /* 13 -> 14: start-up calibration (spec calibrate): the null workload under each variant,
         * apart from samples (whose phase CHECK names the phases of the measured program) */
        "CREATE TABLE calibration ("
        "  id INTEGER PRIMARY KEY,"
        "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        "  variant_id INTEGER NOT NULL REFERENCES variants(id),"
        "  round INTEGER NOT NULL, step INTEGER NOT NULL,"
        "  status TEXT NOT NULL,"
        "  wall_ns INTEGER NOT NULL, user_us INTEGER NOT NULL, sys_us INTEGER NOT NULL,"
        "  maxrss_kib INTEGER NOT NULL,"
        "  recorded_at TEXT NOT NULL);"
        "CREATE INDEX calibration_run ON calibration (run_id, variant_id);"
        "ALTER TABLE runs ADD COLUMN calibrate_command TEXT;", /* JSON array; NULL: no calibration */
        /* 14 -> 15: spec env_offset: random: the bytes each sample's environment was shifted by */
        "ALTER TABLE samples ADD COLUMN env_offset INTEGER;" /* NULL: not shifted */
        "ALTER TABLE runs ADD COLUMN env_offset TEXT NOT NULL DEFAULT 'none';",
        /* 15 -> 16: runs from many databases merged into one (alloclab import): a run is known by
         * a random UUID everywhere (its number is local), and says which Slurm job and node
         * measured it. Existing runs get their UUIDs here. */
        "ALTER TABLE runs ADD COLUMN uuid TEXT;"
        "UPDATE runs SET uuid = " STORE_SQL_UUID ";"
        "CREATE UNIQUE INDEX runs_uuid ON runs (uuid);"
        "ALTER TABLE runs ADD COLUMN slurm_job_id TEXT;"
        "ALTER TABLE runs ADD COLUMN slurm_array_task_id TEXT;"
        "ALTER TABLE runs ADD COLUMN slurm_node TEXT;",
        /* 16 -> 17: what a run measured, in the user's words (run --label) and version control
         * (run --commit): a CI gate names its runs. */
        "ALTER TABLE runs ADD COLUMN label TEXT;"
        "ALTER TABLE runs ADD COLUMN commit_id TEXT;",
        /* 17 -> 18: samples: auto: the rounds a cell ran at least before it could stop (runs.samples
         * is then the most); NULL for a fixed count. The samples index also holds what selects
         * and times a measured sample, so that history reads a series from the index alone
         * (bench/scale.sh: 200 runs of one series from 200 ms to 10 ms, 13% more file). */
        "ALTER TABLE runs ADD COLUMN samples_min INTEGER;"
        "DROP INDEX samples_run;"
        "CREATE INDEX samples_run ON samples (run_id, cell_id, variant_id, phase, status, wall_ns);",
        /* 18 -> 19: every writable open looks for this host's runs left 'running' (recovery):
         * without an index that read the whole runs table, 6-7 ms of every show and history on
         * a database of 1,000 runs (bench/scale.sh). Only running runs are in it. */
        "CREATE INDEX runs_running ON runs (host_id) WHERE status = 'running';",
        /* 19 -> 20: what history reads of an experiment's runs, in run order: the runs' rows
         * carry the host's facts and are fat (3 to a page), and 200 runs cost 69 page reads of
         * about 440; from this index, 11 (bench/scale.sh). */
        "CREATE INDEX runs_history ON runs (experiment_id, id, status, host_id, started_at, metric,"
        " min_effect, alpha, seed, host_fingerprint, label, commit_id);",
        /* 20 -> 21: the submitter's umask, which a job's files get (NULL: JOB_DEFAULT_UMASK) */
        "ALTER TABLE jobs ADD COLUMN umask INTEGER CHECK (umask BETWEEN 0 AND 511);",
        /* 21 -> 22: how a run's verdicts share alpha (spec correction); earlier runs are read
         * with the default, as the figures are recomputed on every read */
        "ALTER TABLE runs ADD COLUMN correction TEXT NOT NULL DEFAULT 'holm'"
        " CHECK (correction IN ('holm', 'bh', 'none'));",
        /* 22 -> 23: the samples index holds each sample's round too, so that history --relative
         * pairs a variant's samples with the baseline's round by round from the index alone
         * (bench/scale.sh: one cell of 20 runs, 62 samples each, from 29 to 7 ms) */
        "DROP INDEX samples_run;"
        "CREATE INDEX samples_run ON samples (run_id, cell_id, variant_id, phase, status, wall_ns, round);",
        /* 23 -> 24: a run imported from hyperfine's or pyperf's JSON (cli/interop.c): the sha256 of
         * the file, so that importing it again adds nothing, and what the file says that no
         * sample column holds: hyperfine's mean CPU times per command (JSON array of {cell,
         * variant, user, system}, seconds) */
        "ALTER TABLE runs ADD COLUMN import_sha256 TEXT;"
        "ALTER TABLE runs ADD COLUMN import_cpu TEXT;"
        "CREATE INDEX runs_import ON runs (import_sha256) WHERE import_sha256 IS NOT NULL;",
        /* 24 -> 25: how the spec's metrics are judged and shown (spec metrics:), a JSON object
         * {NAME: {"better": "higher" | "lower", "unit": TEXT}} (NULL: none defined; a metric not
         * in it is lower-is-better, in its own unit); the lines of the verified output left out
         * of the comparison (spec verify_ignore: JSON array of patterns), or NULL */
        "ALTER TABLE runs ADD COLUMN metric_defs TEXT;"
        "ALTER TABLE runs ADD COLUMN verify_ignore TEXT;",
        /* 25 -> 26: the quiet guard's reading of the machine while each sample ran
         * (runner/quiet.h): other work's CPU time and the hypervisor's steal, in ns; NULL: not
         * read (guard off, or a sample of an earlier version) */
        "ALTER TABLE samples ADD COLUMN other_cpu_ns INTEGER;"
        "ALTER TABLE samples ADD COLUMN steal_ns INTEGER;",
};

_Static_assert(ELEMENTSOF(migrations) == STORE_SCHEMA_VERSION, "one migration per version");

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
        if (sqlite3_errcode(s->db) == SQLITE_OK && sql_last_failure()[0])
                return sql_last_failure(); /* a ROLLBACK since the failure cleared the connection's */
        return sqlite3_errmsg(s->db);
}

Store *store_free(Store *s) {
        if (!s)
                return NULL;
        store_release_reserve(s); /* kept for as long as the store that made it */
        sqlite3_close_v2(s->db);
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
                if (asprintf(&sql, "%s PRAGMA user_version = %d;", migrations[version], version + 1) < 0) {
                        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
                        return -ENOMEM;
                }
                if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK ||
                    sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
                        return migration_failed(s, version, ret_message);
        }
}

int store_schema_text(sqlite3 *db, const char *schema, char **ret) {
        char *sql =
                sqlite3_mprintf("SELECT type, name, tbl_name, coalesce(sql, '') FROM %w.sqlite_schema"
                                " WHERE name NOT IN ('bundle', 'sqlite_autoindex_bundle_1') ORDER BY name",
                                schema);
        sqlite3_stmt *st = NULL;
        int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
        if (rc != SQLITE_OK)
                return rc == SQLITE_NOMEM ? -ENOMEM : -EIO;
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f) {
                sqlite3_finalize(st);
                return -ENOMEM;
        }
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
                fprintf(f, "%s %s on %s: %s\n", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1),
                        sqlite3_column_text(st, 2), sqlite3_column_text(st, 3));
        sqlite3_finalize(st);
        if (!(*ret = memstream_text(f, &text)))
                return -ENOMEM;
        if (rc != SQLITE_DONE) {
                free(*ret);
                *ret = NULL;
                return -EIO;
        }
        return 0;
}

int store_expected_schema(int version, char **ret) {
        if (version < 0 || version > STORE_SCHEMA_VERSION)
                return -EINVAL;
        sqlite3 *db = NULL;
        if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK) {
                sqlite3_close_v2(db);
                return -ENOMEM;
        }
        int r = 0;
        for (int v = 0; r >= 0 && v < version; v++)
                r = sqlite3_exec(db, migrations[v], NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
        if (r >= 0)
                r = store_schema_text(db, "main", ret);
        sqlite3_close_v2(db);
        return r;
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
        for (char *p = dir + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = 0;
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
                *p = '/';
        }
        return 0;
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
                sqlite3_close_v2(db);
                return -EIO;
        }
        sqlite3_close_v2(s->db);
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
