/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "db/history.h"
#include "db/store.h"

/*
 * alloclabd's shared state. One event loop, one store (the daemon is the only writer), at most
 * one job running at a time. control.c serves the socket, worker.c runs jobs, alloclabd.c wires
 * them together.
 */

typedef struct Worker Worker;
typedef struct Control Control;
typedef struct Scheduler Scheduler;

typedef struct Daemon {
        sd_event *event;
        Store *store;
        char *db_path;
        char *probe_path;
        Control *control;
        Worker *worker; /* the running job, or NULL */
        Scheduler *scheduler;
        sd_event_source *start;   /* a timer: starts the next job (daemon_start_soon()) */
        uint64_t start_requested; /* CLOCK_MONOTONIC usec of the first request not served yet; 0: none */
        bool stopping;            /* SIGTERM/SIGINT: no new jobs, finish the current one as interrupted */
        uint64_t idle_timeout_usec;
        char progress[256]; /* the STATUS= text last published */
} Daemon;

/* Journal fields of a log message; unset ones are left out. */
typedef struct LogContext {
        const char *message_id; /* an sd-id128 in hex, for messages worth querying */
        int64_t run_id;
        int64_t job_id;
        const char *experiment;
        const char *variant;
        const char *cell;
        char *const *fields; /* more "KEY=VALUE" journal fields, NULL-terminated; may be NULL */
} LogContext;

/* MESSAGE_IDs of alloclabd's structured messages. */
#define LOG_MESSAGE_JOB_STARTED  "0b7a5d1e9c4f4a2b8e6d3c1f7a9b2e40"
#define LOG_MESSAGE_JOB_FINISHED "5c2e8f1a3b6d4e7f9a0c1b2d3e4f5a61"
#define LOG_MESSAGE_CHANGE_POINT "6f3e0a1d2c4b4e8f9a7d5c3b1e0f2a4d"

/* Structured logging: the journal when stderr is connected to it (JOURNAL_STREAM), with the
 * context's fields; stderr otherwise. */
void daemon_log_context(int priority, const LogContext *ctx, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* The same with only a run id (0 for none). */
void daemon_log(int priority, int64_t run_id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A change point of a scheduled run (db/history.h): a warning for a regression, a notice for an
 * improvement, with MESSAGE_ID, RUN_ID, EXPERIMENT, VARIANT, CELL, METRIC, CHANGE, MEDIAN, RATIO,
 * RATIO_CI_LOW, RATIO_CI_HIGH, P_VALUE, BASELINE_FROM_RUN and BASELINE_RUNS fields. */
void daemon_log_change_point(const char *experiment, const char *metric, const HistorySeries *series,
                             const HistoryPoint *point);

/* Publishes STATUS= from the current state (idle, running job and progress, queue length). */
void daemon_update_status(Daemon *d, const char *progress);

/* Starts the oldest queued job when nothing runs, once submissions have settled: preparing a
 * job (its files found and hashed, its run recorded) takes tens of milliseconds, which must not
 * stall the answers to a burst of submissions. The job starts when no request to start came for
 * START_SETTLE_USEC, and at the latest START_MAX_DELAY_USEC after the first. */
#define START_SETTLE_USEC    (20ULL * 1000)
#define START_MAX_DELAY_USEC (1000ULL * 1000)
void daemon_start_soon(Daemon *d);

/* Called by the worker when its job ended, to answer waiters and start the next job. */
void daemon_job_finished(Daemon *d, int64_t job_id);
