/* SPDX-License-Identifier: MIT */
/*
 * The schema as forward migrations indexed by PRAGMA user_version: migration N takes a database
 * from version N to N + 1 (db/store.c runs each in one transaction). A migration is never
 * edited once released; a change is a new one, with the columns' table rows beside it
 * (runner/sample-field.c, db/run-field.c).
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "db/store.h"
#include "util/cleanup.h"
#include "util/io.h"

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
        /* 26 -> 27: an allocator built from source (spec build:, runner/build.h): a JSON object
         * {source, commit, subdir, describe, dirty, commands, output, compiler, sha256, key,
         * cached, build_seconds}; NULL for a variant that preloads a file it did not build */
        "ALTER TABLE variants ADD COLUMN build TEXT;",
        /* 27 -> 28: the kernel's event counters of each sample's process tree (runner/counters.h),
         * NULL where the machine could not count them (hardware ones without a PMU);
         * counters_scaled: the bits (in column order) of counts estimated from part of the time;
         * runs.counters: which counters the run could open, and why not the others; runs.timed_under:
         * 'callgrind' where the timed children ran under it (metric instructions without a PMU) */
        "ALTER TABLE samples ADD COLUMN page_faults INTEGER;"
        "ALTER TABLE samples ADD COLUMN context_switches INTEGER;"
        "ALTER TABLE samples ADD COLUMN cpu_migrations INTEGER;"
        "ALTER TABLE samples ADD COLUMN cycles INTEGER;"
        "ALTER TABLE samples ADD COLUMN instructions INTEGER;"
        "ALTER TABLE samples ADD COLUMN dtlb_load_misses INTEGER;"
        "ALTER TABLE samples ADD COLUMN cache_misses INTEGER;"
        "ALTER TABLE samples ADD COLUMN counters_scaled INTEGER;"
        "ALTER TABLE runs ADD COLUMN counters TEXT;"
        "ALTER TABLE runs ADD COLUMN timed_under TEXT;",
        /* 28 -> 29: memory_timeline's readings of a sample (runner/timeline.h): points, pairs of
         * little-endian uint32 (milliseconds since the child's creation, KiB), period_ns between
         * them; marks, the
         * program's phase marks as JSON [{"name", "t_ms"}] (t_ms: the first reading after the mark), NULL
         * without any */
        "CREATE TABLE sample_timelines ("
        "  sample_id INTEGER PRIMARY KEY REFERENCES samples(id) ON DELETE CASCADE,"
        "  source TEXT NOT NULL CHECK (source IN ('cgroup', 'proc')),"
        "  period_ns INTEGER NOT NULL,"
        "  points BLOB NOT NULL,"
        "  marks TEXT);",
        /* 29 -> 30: how many times a sample's readings were thinned out to fit (period_ns is then
         * the spec's period doubled that many times) */
        "ALTER TABLE sample_timelines ADD COLUMN thinned INTEGER NOT NULL DEFAULT 0;",
        /* 30 -> 31: the machine a run is filed under (run --machine, the daemon's machine:,
         * ALLOCLAB_MACHINE; NULL for earlier runs: their host name), which series and fleets
         * group by; the Slurm cluster and partition of a run under Slurm (job ids of two
         * clusters collide). Runs are read in the order they ran, not the order they arrived
         * (import keeps a bundle's order only): runs_history by start time. */
        "ALTER TABLE runs ADD COLUMN machine TEXT;"
        "ALTER TABLE runs ADD COLUMN slurm_cluster TEXT;"
        "ALTER TABLE runs ADD COLUMN slurm_partition TEXT;"
        "DROP INDEX runs_history;"
        "CREATE INDEX runs_history ON runs (experiment_id, started_at, id, status, host_id, metric,"
        " min_effect, alpha, seed, host_fingerprint, label, commit_id, machine);",
        /* 31 -> 32: retention (alloclab prune, db/prune.h): when a run's measured samples were
         * dropped, and what is kept of them: per cell, variant and the run's metric, the
         * values as a JSON array in round order, of the values alone where the rounds are 0 to
         * n - 1 (the usual case), else of [value, round] pairs; every figure and verdict of the
         * run is computed from them as from its samples */
        "ALTER TABLE runs ADD COLUMN pruned_at TEXT;"
        "CREATE TABLE pruned_values ("
        "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        "  cell_id INTEGER NOT NULL REFERENCES cells(id),"
        "  variant_id INTEGER NOT NULL REFERENCES variants(id),"
        "  metric TEXT NOT NULL,"
        "  points TEXT NOT NULL,"
        "  PRIMARY KEY (cell_id, variant_id, metric));" /* rowid: a row of 1 KB fits a table page */
        "CREATE INDEX pruned_values_run ON pruned_values (run_id);",
};

_Static_assert(ELEMENTSOF(migrations) == STORE_SCHEMA_VERSION, "one migration per version");

const char *store_migration(int version) {
        return version >= 0 && version < STORE_SCHEMA_VERSION ? migrations[version] : NULL;
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
                r = sqlite3_exec(db, store_migration(v), NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
        if (r >= 0)
                r = store_schema_text(db, "main", ret);
        sqlite3_close_v2(db);
        return r;
}
