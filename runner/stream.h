/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "runner/run.h"
#include "util/wire.h"

/*
 * A run's events as typed messages, for a runner in one process and a recorder in another
 * (the daemon: it is the only writer of the database). Each event of RunSink becomes one
 * message; the receiving side replays them into its own RunSink against an identical Plan.
 * Every message is decoded field by field with range checks against that Plan and must be
 * consumed exactly.
 */

#define STREAM_MAX_MESSAGE (256 * 1024)

typedef enum StreamKind {
        STREAM_STEP = 1,   /* a child is about to start (progress) */
        STREAM_SAMPLE,     /* a measured sample */
        STREAM_EXCLUDE,    /* a (cell, variant) excluded, with the reason */
        STREAM_CELL_STATS, /* a finished cell's statistics */
        STREAM_END,        /* the run ended: RunResult and error */
} StreamKind;

void stream_encode_step(WireWriter *w, size_t step_index);
void stream_encode_sample(WireWriter *w, const Sample *s);
void stream_encode_exclude(WireWriter *w, uint32_t cell, uint32_t variant, const char *reason);
void stream_encode_cell_stats(WireWriter *w, uint32_t cell, const StatsRow *rows, size_t n_rows);
void stream_encode_end(WireWriter *w, const RunResult *result, int error);

/*
 * Decodes one message and replays it into sink. For STREAM_END, fills *ret_result and
 * *ret_error and sets *ret_ended. Returns the sink's result, -EBADMSG for a malformed message,
 * -ENOMEM.
 */
int stream_dispatch(const void *message, size_t size, const Plan *plan, const RunSink *sink, bool *ret_ended,
                    RunResult *ret_result, int *ret_error);
