/* SPDX-License-Identifier: MIT */
/*
 * Job rows. Every state change is one committed statement, so the queue on disk is always what
 * the daemon last decided.
 */
#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "db/jobs.h"
#include "db/sql.h"
#include "util/cleanup.h"
#include "util/strv.h"

static const char *const status_names[_JOB_STATUS_MAX] = {
        "queued", "running", "done", "failed", "canceled", "interrupted",
};

const char *job_status_to_string(JobStatus s) {
        return (unsigned) s < _JOB_STATUS_MAX ? status_names[s] : "?";
}

static JobStatus job_status_from_string(const char *s) {
        for (unsigned i = 0; s && i < _JOB_STATUS_MAX; i++)
                if (strcmp(s, status_names[i]) == 0)
                        return (JobStatus) i;
        return JOB_FAILED;
}

void job_done(Job *j) {
        free(j->spec_path);
        free(j->spec_yaml);
        strv_free(j->env);
        free(j->cwd);
        free(j->submitter);
        free(j->trigger);
        free(j->submitted_at);
        free(j->started_at);
        free(j->ended_at);
        free(j->message);
        *j = (Job){};
}

#define JOB_COLUMNS                                                                                         \
        "id, spec_path, spec_yaml, env, cwd, uid, gid, submitter, trigger, status, run_id,"                 \
        " submitted_at, started_at, ended_at, message, umask"

static int read_job(sqlite3_stmt *st, Job *j) {
        *j = (Job){
                .id = sqlite3_column_int64(st, 0),
                .spec_path = sql_text_or_null(st, 1),
                .spec_yaml = sql_text_or_null(st, 2),
                .cwd = sql_text_or_null(st, 4),
                .uid = (uid_t) sqlite3_column_int64(st, 5),
                .gid = (gid_t) sqlite3_column_int64(st, 6),
                .submitter = sql_text_or_null(st, 7),
                .trigger = sql_text_or_null(st, 8),
                .status = job_status_from_string((const char *) sqlite3_column_text(st, 9)),
                .run_id = sqlite3_column_int64(st, 10),
                .submitted_at = sql_text_or_null(st, 11),
                .started_at = sql_text_or_null(st, 12),
                .ended_at = sql_text_or_null(st, 13),
                .message = sql_text_or_null(st, 14),
                .umask = sqlite3_column_type(st, 15) == SQLITE_NULL ? JOB_DEFAULT_UMASK
                                                                    : (mode_t) sqlite3_column_int(st, 15),
        };
        json_t *env = json_loads((const char *) sqlite3_column_text(st, 3), 0, NULL);
        size_t i;
        json_t *v;
        int r = 0;
        json_array_foreach(env, i, v) {
                if (json_is_string(v) && strv_append(&j->env, json_string_value(v)) < 0)
                        r = -ENOMEM;
        }
        json_decref(env);
        if (r < 0 || !j->spec_path || !j->spec_yaml || !j->cwd || !j->trigger || !j->submitted_at) {
                job_done(j);
                return -ENOMEM;
        }
        return 0;
}

/* Inserts jobs[0..n) with one prepared statement (a burst of submissions is stored at once). */
static int insert_jobs(sqlite3 *db, const Job *jobs, size_t n, int64_t *ret_ids) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(
                    db,
                    "INSERT INTO jobs (spec_path, spec_yaml, env, cwd, uid, gid, submitter, trigger,"
                    " umask, run_id, status, submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued',"
                    " strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                    -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        int r = 0;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const Job *j = &jobs[i];
                json_t *env = json_array();
                for (size_t k = 0; j->env && j->env[k]; k++)
                        json_array_append_new(env, json_string(j->env[k]));
                _cleanup_free_ char *env_json = json_dumps(env, JSON_COMPACT);
                json_decref(env);
                if (!env_json) {
                        r = -ENOMEM;
                        break;
                }
                sqlite3_reset(st);
                r = sql_step(db, st, &ret_ids[i], j->run_id > 0 ? "ttttiittii" : "ttttiittin", j->spec_path,
                             j->spec_yaml, env_json, j->cwd, (int64_t) j->uid, (int64_t) j->gid,
                             j->submitter, j->trigger, (int64_t) (j->umask & 0777), j->run_id);
        }
        sqlite3_finalize(st);
        return r;
}

int jobs_add(Store *s, const Job *j, int64_t *ret_id) {
        return insert_jobs(store_db(s), j, 1, ret_id);
}

int jobs_add_all(Store *s, const Job *jobs, size_t n, int64_t *ret_ids) {
        int r = sql_begin(store_db(s));
        if (r >= 0)
                r = insert_jobs(store_db(s), jobs, n, ret_ids);
        return sql_commit(store_db(s), r);
}

static int read_job_row(sqlite3_stmt *st, void *element) {
        return read_job(st, element);
}

static void clear_job(void *element) {
        job_done(element);
}

/* Runs a SELECT of JOB_COLUMNS with ?1 bound to arg and collects up to limit rows. */
static int select_jobs(Store *s, const char *where, int64_t arg, size_t limit, Job **ret, size_t *ret_n) {
        _cleanup_free_ char *sql = NULL;
        if (asprintf(&sql, "SELECT " JOB_COLUMNS " FROM jobs %s LIMIT %zu", where, limit) < 0)
                return -ENOMEM;
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_int64(st, 1, arg);
        void *list = NULL;
        int r = sql_collect(st, sizeof(Job), read_job_row, clear_job, &list, ret_n);
        if (r >= 0)
                *ret = list;
        return r;
}

static int select_one(Store *s, const char *where, int64_t arg, Job *ret) {
        Job *list = NULL;
        size_t n = 0;
        int r = select_jobs(s, where, arg, 1, &list, &n);
        if (r < 0)
                return r;
        if (n == 0) {
                free(list);
                return -ENOENT;
        }
        *ret = list[0];
        free(list);
        return 0;
}

int jobs_next_queued(Store *s, Job *ret) {
        return select_one(s, "WHERE status = 'queued' ORDER BY id", 0, ret);
}

int jobs_get(Store *s, int64_t id, Job *ret) {
        return select_one(s, "WHERE id = ?1", id, ret);
}

int jobs_run_outcome(Store *s, int64_t run_id, int64_t *ret_failures, int64_t *ret_excluded) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(s), "SELECT n_failures, n_excluded FROM runs WHERE id = ?", -1, &st,
                               NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_int64(st, 1, run_id);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                *ret_failures = sqlite3_column_int64(st, 0);
                *ret_excluded = sqlite3_column_int64(st, 1);
        }
        sqlite3_finalize(st);
        return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : -EIO;
}

int jobs_list(Store *s, bool active_only, size_t limit, Job **ret, size_t *ret_n) {
        return select_jobs(s,
                           active_only ? "WHERE status IN ('queued', 'running') ORDER BY id"
                                       : "ORDER BY status IN ('queued', 'running') DESC, id DESC",
                           0, limit, ret, ret_n);
}

void jobs_list_free(Job *jobs, size_t n) {
        for (size_t i = 0; i < n; i++)
                job_done(&jobs[i]);
        free(jobs);
}

int jobs_count(Store *s, JobStatus status, size_t *ret) {
        int64_t n = 0;
        int r = sql_exec1(store_db(s), &n, "SELECT count(*) FROM jobs WHERE status = ?", "t",
                          job_status_to_string(status));
        *ret = r < 0 ? 0 : (size_t) n;
        return r;
}

int jobs_start(Store *s, int64_t id, int64_t run_id) {
        return sql_exec1(
                store_db(s), NULL,
                "UPDATE jobs SET status = 'running', run_id = ?,"
                " started_at = coalesce(started_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) WHERE id = ?",
                run_id > 0 ? "ii" : "ni", run_id, id);
}

int jobs_finish(Store *s, int64_t id, JobStatus status, const char *message) {
        return sql_exec1(store_db(s), NULL,
                         "UPDATE jobs SET status = ?, message = ?,"
                         " ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
                         "tti", job_status_to_string(status), message, id);
}

int jobs_recover(Store *s, Job **ret, size_t *ret_n) {
        int r = select_jobs(s, "WHERE status = 'running' ORDER BY id", 0, 10000, ret, ret_n);
        if (r < 0)
                return r;
        return sql_exec1(
                store_db(s), NULL,
                "UPDATE jobs SET status = 'interrupted', message = 'the daemon stopped while it ran',"
                " ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE status = 'running'",
                "");
}

int jobs_active_for_spec(Store *s, const char *spec_path, bool *ret) {
        int64_t n = 0;
        int r = sql_exec1(
                store_db(s), &n,
                "SELECT count(*) FROM jobs WHERE spec_path = ? AND status IN ('queued', 'running')", "t",
                spec_path);
        if (r >= 0)
                *ret = n > 0;
        return r;
}

int jobs_schedule_last(Store *s, const char *spec_path, time_t *ret) {
        int64_t when = -1;
        int r = sql_exec1(
                store_db(s), &when,
                "SELECT coalesce((SELECT last_fire_at FROM schedule_state WHERE spec_path = ?), -1)", "t",
                spec_path);
        if (r < 0)
                return r;
        if (when < 0)
                return -ENOENT;
        *ret = (time_t) when;
        return 0;
}

int jobs_schedule_fired(Store *s, const char *spec_path, time_t when) {
        return sql_exec1(store_db(s), NULL,
                         "INSERT INTO schedule_state (spec_path, last_fire_at) VALUES (?, ?)"
                         " ON CONFLICT (spec_path) DO UPDATE SET last_fire_at = excluded.last_fire_at",
                         "ti", spec_path, (int64_t) when);
}
