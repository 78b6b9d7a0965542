/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "db/store.h"

/*
 * The daemon's persistent job queue. A job is a spec (verbatim) plus who submitted it and the
 * environment and directory it is to run with; it moves queued -> running -> done | failed |
 * canceled | interrupted and survives daemon restarts.
 */

typedef enum JobStatus {
        JOB_QUEUED,
        JOB_RUNNING,
        JOB_DONE,
        JOB_FAILED,
        JOB_CANCELED,
        JOB_INTERRUPTED,
        _JOB_STATUS_MAX,
} JobStatus;

const char *job_status_to_string(JobStatus s);

/* The umask of jobs whose submitter's is not known: scheduled ones, and older queues. */
#define JOB_DEFAULT_UMASK 0022

typedef struct Job {
        int64_t id;
        char *spec_path;
        char *spec_yaml;
        char **env; /* strv KEY=VALUE: the submitter's environment */
        char *cwd;
        uid_t uid;
        gid_t gid;
        mode_t umask; /* the files a job makes get the submitter's umask */
        char *submitter;
        char *trigger; /* "submit", "schedule", or "resume" (run_id names the run to continue) */
        JobStatus status;
        int64_t run_id; /* 0 until the run exists */
        char *submitted_at, *started_at, *ended_at;
        char *message;
} Job;

void job_done(Job *j);

/* Queues a job (status queued); assigns *ret_id. Returns 0 or -EIO/-ENOMEM. */
int jobs_add(Store *s, const Job *j, int64_t *ret_id);

/* Queues n jobs in one transaction (one commit, one sync, for a burst of submissions): all or
 * none. ret_ids[i] gets the id of jobs[i]. Returns 0 or -EIO/-ENOMEM. */
int jobs_add_all(Store *s, const Job *jobs, size_t n, int64_t *ret_ids);

/* The oldest queued job, or -ENOENT. */
int jobs_next_queued(Store *s, Job *ret);

/* One job by id, or -ENOENT. */
int jobs_get(Store *s, int64_t id, Job *ret);

/* How many samples of a job's run failed and how many (cell, variant) pairs were excluded: what
 * its exit status follows. Returns 0, -ENOENT (no such run), -EIO. */
int jobs_run_outcome(Store *s, int64_t run_id, int64_t *ret_failures, int64_t *ret_excluded);

/* Jobs, queued and running ones first (however many ended after them), each part newest first;
 * with active_only, only queued and running ones (oldest first). Returns 0 and an array (free
 * with jobs_list_free). */
int jobs_list(Store *s, bool active_only, size_t limit, Job **ret, size_t *ret_n);
void jobs_list_free(Job *jobs, size_t n);

/* How many jobs have this status. Returns 0 or -EIO. */
int jobs_count(Store *s, JobStatus status, size_t *ret);

/* Marks a job running (with its run id once known). */
int jobs_start(Store *s, int64_t id, int64_t run_id);

/* Ends a job with a final status and an optional message. */
int jobs_finish(Store *s, int64_t id, JobStatus status, const char *message);

/* Whether a job for spec_path is queued or running. */
int jobs_active_for_spec(Store *s, const char *spec_path, bool *ret);

/* When the scheduled spec at spec_path last fired: -ENOENT if never. */
int jobs_schedule_last(Store *s, const char *spec_path, time_t *ret);
int jobs_schedule_fired(Store *s, const char *spec_path, time_t when);

/* At daemon start: jobs left running by a previous daemon become interrupted; they are returned
 * (as they were) in *ret for the caller to resume where their spec asks for it. */
int jobs_recover(Store *s, Job **ret, size_t *ret_n);
