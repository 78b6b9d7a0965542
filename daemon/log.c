/* SPDX-License-Identifier: MIT */
/*
 * Journal messages with fields (sd_journal_sendv), or lines on stderr when not under the journal.
 * A message names what others wrote (spec paths, file names, a job's error): its control
 * characters are escaped, so that it can neither forge a line nor drive a reader's terminal.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include "daemon/log.h"
#include "db/history.h"
#include "util/cleanup.h"
#include "util/text.h"

static bool log_to_journal;

void log_open(bool to_journal) {
        log_to_journal = to_journal;
}

static void logv(int priority, const LogContext *ctx, const char *fmt, va_list ap) {
        char raw[1024];
        vsnprintf(raw, sizeof(raw), fmt, ap);
        /* Control characters escaped, so that no text forges a line; a backslash is left as it
         * is: what a message quotes was escaped already where it was made (a diagnostic). */
        _cleanup_free_ char *shown = text_shown_as(raw, 0);
        const char *message = shown ? shown : "(a message was lost for want of memory)";
        if (!log_to_journal) {
                fprintf(stderr, "alloclabd: %s\n", message);
                return;
        }
        char fields[24][320];
        struct iovec iov[24];
        size_t n = 0;
#define FIELD(...)                                                                                          \
        do {                                                                                                \
                snprintf(fields[n], sizeof(fields[n]), __VA_ARGS__);                                        \
                iov[n] = (struct iovec){ .iov_base = fields[n], .iov_len = strlen(fields[n]) };             \
                n++;                                                                                        \
        } while (0)
        FIELD("PRIORITY=%i", priority);
        FIELD("SYSLOG_IDENTIFIER=alloclabd");
        if (ctx->message_id)
                FIELD("MESSAGE_ID=%s", ctx->message_id);
        if (ctx->run_id > 0)
                FIELD("RUN_ID=%lld", (long long) ctx->run_id);
        if (ctx->job_id > 0)
                FIELD("JOB_ID=%lld", (long long) ctx->job_id);
        if (ctx->experiment)
                FIELD("EXPERIMENT=%s", ctx->experiment);
        if (ctx->variant)
                FIELD("VARIANT=%s", ctx->variant);
        if (ctx->cell)
                FIELD("CELL=%s", ctx->cell);
        for (char *const *f = ctx->fields; f && *f && n < ELEMENTSOF(fields); f++)
                FIELD("%s", *f);
#undef FIELD
        char *text = NULL;
        if (asprintf(&text, "MESSAGE=%s", message) < 0)
                return;
        struct iovec all[ELEMENTSOF(iov) + 1];
        memcpy(all, iov, n * sizeof(struct iovec));
        all[n++] = (struct iovec){ .iov_base = text, .iov_len = strlen(text) };
        sd_journal_sendv(all, (int) n);
        free(text);
}

void log_context(int priority, const LogContext *ctx, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        logv(priority, ctx, fmt, ap);
        va_end(ap);
}

void log_message(int priority, int64_t run_id, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        logv(priority, &(LogContext){ .run_id = run_id }, fmt, ap);
        va_end(ap);
}

int log_error_errno(int error, const char *fmt, ...) {
        char what[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        log_message(LOG_ERR, 0, "%s: %s", what, strerror(-error));
        return error;
}

void log_change_point(const char *experiment, const char *metric, const char *relative_to,
                      const HistorySeries *series, const HistoryPoint *point) {
        const Comparison *c = &point->against;
        const char *change = history_change_word(point->change);
        char f[12][96], status[64], what[160];
        snprintf(what, sizeof(what), "%s%s%s", metric, relative_to ? " ratio to " : "",
                 relative_to ? relative_to : "");
        if (point->tentative)
                snprintf(status, sizeof(status), "possible %s (tentative until the next run)", change);
        else
                snprintf(status, sizeof(status), "%s (confirmed by run %lld)", change,
                         (long long) point->confirmed_by);
        snprintf(f[0], sizeof(f[0]), "METRIC=%s", metric);
        snprintf(f[1], sizeof(f[1]), "CHANGE=%s", change);
        snprintf(f[2], sizeof(f[2]), "MEDIAN=%.9g", point->median);
        snprintf(f[3], sizeof(f[3]), "RATIO=%.6f", c->ratio);
        snprintf(f[4], sizeof(f[4]), "RATIO_CI_LOW=%.6f", c->lo);
        snprintf(f[5], sizeof(f[5]), "RATIO_CI_HIGH=%.6f", c->hi);
        snprintf(f[6], sizeof(f[6]), "P_VALUE=%.3g", c->p);
        snprintf(f[7], sizeof(f[7]), "BASELINE_FROM_RUN=%lld", (long long) point->baseline_from);
        snprintf(f[8], sizeof(f[8]), "BASELINE_RUNS=%zu", point->baseline_runs);
        snprintf(f[9], sizeof(f[9]), "STATUS=%s", point->tentative ? "tentative" : "confirmed");
        snprintf(f[10], sizeof(f[10]), "CONFIRMED_BY_RUN=%lld", (long long) point->confirmed_by);
        snprintf(f[11], sizeof(f[11]), "RELATIVE_TO=%s", relative_to ? relative_to : "");
        char *fields[] = { f[0], f[1], f[2], f[3], f[4],  f[5],
                           f[6], f[7], f[8], f[9], f[10], relative_to ? f[11] : NULL,
                           NULL };
        LogContext ctx = { .message_id = LOG_MESSAGE_CHANGE_POINT,
                           .run_id = point->run_id,
                           .experiment = experiment,
                           .variant = series->variant,
                           .cell = series->cell,
                           .fields = fields };
        log_context(point->change == HISTORY_REGRESSION && !point->tentative ? LOG_WARNING : LOG_NOTICE,
                    &ctx,
                    "%s run %lld: %s [%s] %s: %s %.3fx [%.3f, %.3f] against runs %lld.. (%zu runs, p %.2g)",
                    experiment, (long long) point->run_id, series->variant, series->cell, status, what,
                    c->ratio, c->lo, c->hi, (long long) point->baseline_from, point->baseline_runs, c->p);
}
