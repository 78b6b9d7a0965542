/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* db/history.h: what log_change_point() reads */
typedef struct HistorySeries HistorySeries;
typedef struct HistoryPoint HistoryPoint;

/*
 * alloclabd's structured logging: the journal when stderr is connected to it (JOURNAL_STREAM),
 * with the context's fields; stderr otherwise.
 */

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

/* Where messages go from now on: the journal, or stderr. */
void log_open(bool to_journal);

void log_context(int priority, const LogContext *ctx, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* The same with only a run id (0 for none). */
void log_message(int priority, int64_t run_id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Logs fmt at LOG_ERR with ": " and the text of error (a negative errno) appended, and returns
 * error: `return log_error_errno(r, "cannot serve the socket");`. */
int log_error_errno(int error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A change point of a scheduled run (db/history.h): a warning for a confirmed regression, a
 * notice for an improvement or a tentative change, with MESSAGE_ID, RUN_ID (the change point's
 * run), EXPERIMENT, VARIANT, CELL, METRIC, CHANGE, MEDIAN, RATIO, RATIO_CI_LOW, RATIO_CI_HIGH,
 * P_VALUE, BASELINE_FROM_RUN, BASELINE_RUNS, STATUS (confirmed or tentative) and CONFIRMED_BY_RUN
 * fields; with relative_to (the spec's `history: ratios`) the series is of ratios to that
 * baseline variant, said in the message and RELATIVE_TO. */
void log_change_point(const char *experiment, const char *metric, const char *relative_to,
                      const HistorySeries *series, const HistoryPoint *point);
