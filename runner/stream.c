/* SPDX-License-Identifier: MIT */
/*
 * Encoding and replay of run events. The encoder writes every field a recorder stores; the
 * decoder rebuilds a Sample whose step points into the receiver's Plan, so a message naming a
 * step, cell or variant the Plan does not have is refused rather than trusted.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "runner/metric.h"
#include "runner/sample-field.h"
#include "runner/stream.h"
#include "util/cleanup.h"

void stream_encode_step(WireWriter *w, size_t step_index) {
        wire_put_u8(w, STREAM_STEP);
        wire_put_u64(w, step_index);
}

static void put_field(WireWriter *w, const SampleField *f, const Sample *s) {
        const void *v = sample_field_of(f, s);
        switch (f->type) {
        case SAMPLE_FIELD_BOOL:
        case SAMPLE_FIELD_SOURCE:
                wire_put_u8(w, *(const bool *) v);
                break;
        case SAMPLE_FIELD_INT:
                wire_put_i64(w, *(const int *) v);
                break;
        case SAMPLE_FIELD_STATUS:
                wire_put_u32(w, (uint32_t) * (const SampleStatus *) v);
                break;
        case SAMPLE_FIELD_END:
                wire_put_u32(w, (uint32_t) * (const SpawnEnd *) v);
                break;
        case SAMPLE_FIELD_U32:
                wire_put_u32(w, *(const uint32_t *) v);
                break;
        case SAMPLE_FIELD_U64:
                wire_put_u64(w, *(const uint64_t *) v);
                break;
        case SAMPLE_FIELD_I64:
                wire_put_i64(w, *(const int64_t *) v);
                break;
        case SAMPLE_FIELD_LONG:
                wire_put_i64(w, *(const long *) v);
                break;
        case SAMPLE_FIELD_DOUBLE:
                wire_put_f64(w, *(const double *) v);
                break;
        case SAMPLE_FIELD_TEXT:
                wire_put_str(w, *(char *const *) v);
                break;
        case SAMPLE_FIELD_USEC: {
                const struct timeval *tv = v;
                wire_put_i64(w, (int64_t) tv->tv_sec);
                wire_put_i64(w, (int64_t) tv->tv_usec);
                break;
        }
        case SAMPLE_FIELD_DIGEST: {
                const Digest *d = v;
                wire_put_str(w, d->hex[0] ? d->hex : NULL);
                break;
        }
        }
}

/* memory_timeline's readings and marks, or a 0 for none. */
static void put_timeline(WireWriter *w, const Timeline *t) {
        wire_put_u8(w, t != NULL);
        if (!t)
                return;
        wire_put_u32(w, (uint32_t) t->source);
        wire_put_u64(w, t->period_ns);
        wire_put_u32(w, t->thinned);
        wire_put_u32(w, (uint32_t) t->n_points);
        wire_put_bytes(w, t->points, t->n_points * sizeof(TimelinePoint));
        wire_put_u32(w, (uint32_t) t->n_marks);
        for (size_t i = 0; i < t->n_marks; i++) {
                wire_put_str(w, t->marks[i].name);
                wire_put_u32(w, t->marks[i].t_ms);
        }
}

void stream_encode_sample(WireWriter *w, const Sample *s) {
        wire_put_u8(w, STREAM_SAMPLE);
        wire_put_u64(w, s->step_index);
        for (size_t i = 0; i < n_sample_fields; i++)
                put_field(w, &sample_fields[i], s);
        wire_put_u32(w, (uint32_t) s->n_metrics);
        for (size_t i = 0; i < s->n_metrics; i++) {
                wire_put_str(w, s->metrics[i].name);
                wire_put_f64(w, s->metrics[i].value);
        }
        wire_put_u8(w, s->probe != NULL);
        if (s->probe)
                wire_put_bytes(w, &s->probe->report, sizeof(s->probe->report));
        wire_put_str(w, s->allocator_stats);
        put_timeline(w, s->timeline);
}

void stream_encode_exclude(WireWriter *w, uint32_t cell, uint32_t variant, const char *reason) {
        wire_put_u8(w, STREAM_EXCLUDE);
        wire_put_u32(w, cell);
        wire_put_u32(w, variant);
        wire_put_str(w, reason);
}

void stream_encode_cell_stats(WireWriter *w, uint32_t cell, const StatsRow *rows, size_t n_rows) {
        wire_put_u8(w, STREAM_CELL_STATS);
        wire_put_u32(w, cell);
        wire_put_u32(w, (uint32_t) n_rows);
        for (size_t i = 0; i < n_rows; i++) {
                const Stats *st = &rows[i].stats;
                wire_put_u32(w, rows[i].variant);
                wire_put_str(w, rows[i].metric);
                wire_put_u64(w, st->n);
                wire_put_f64(w, st->median);
                wire_put_f64(w, st->mad);
                wire_put_f64(w, st->mean);
                wire_put_f64(w, st->stddev);
                wire_put_f64(w, st->min);
                wire_put_f64(w, st->max);
        }
}

void stream_encode_end(WireWriter *w, const RunResult *result, int error) {
        wire_put_u8(w, STREAM_END);
        wire_put_u32(w, (uint32_t) result->end);
        wire_put_u64(w, result->n_runs);
        wire_put_u64(w, result->n_failures);
        wire_put_u64(w, result->n_excluded);
        wire_put_i64(w, error);
}

static bool metric_name_ok(const char *s) {
        size_t n = s ? strlen(s) : 0;
        return n > 0 && n <= OUTPUT_METRIC_NAME_MAX;
}

static void sample_clear(Sample *s) {
        for (size_t i = 0; i < n_sample_fields; i++)
                if (sample_fields[i].type == SAMPLE_FIELD_TEXT)
                        free(*(char **) sample_field_in(&sample_fields[i], s));
        free(s->metrics);
        free(s->probe);
        free(s->allocator_stats);
        timeline_free(s->timeline);
        *s = (Sample){};
}

/* Reads f into s; -EBADMSG for a value its type cannot hold (the reader's own failure is
 * checked at the message's end). */
static int get_field(WireReader *r, const SampleField *f, Sample *s) {
        void *v = sample_field_in(f, s);
        switch (f->type) {
        case SAMPLE_FIELD_BOOL:
        case SAMPLE_FIELD_SOURCE:
                *(bool *) v = wire_get_u8(r) != 0;
                return 0;
        case SAMPLE_FIELD_INT: {
                int64_t x = wire_get_i64(r);
                if (x < INT_MIN || x > INT_MAX)
                        return -EBADMSG;
                *(int *) v = (int) x;
                return 0;
        }
        case SAMPLE_FIELD_STATUS: {
                uint32_t x = wire_get_u32(r);
                if (x >= _SAMPLE_STATUS_MAX)
                        return -EBADMSG;
                *(SampleStatus *) v = (SampleStatus) x;
                return 0;
        }
        case SAMPLE_FIELD_END: {
                uint32_t x = wire_get_u32(r);
                if (x > SPAWN_EXEC_FAILED)
                        return -EBADMSG;
                *(SpawnEnd *) v = (SpawnEnd) x;
                return 0;
        }
        case SAMPLE_FIELD_U32:
                *(uint32_t *) v = wire_get_u32(r);
                return 0;
        case SAMPLE_FIELD_U64:
                *(uint64_t *) v = wire_get_u64(r);
                return 0;
        case SAMPLE_FIELD_I64:
                *(int64_t *) v = wire_get_i64(r);
                return 0;
        case SAMPLE_FIELD_LONG:
                *(long *) v = (long) wire_get_i64(r);
                return 0;
        case SAMPLE_FIELD_DOUBLE:
                *(double *) v = wire_get_f64(r);
                return 0;
        case SAMPLE_FIELD_TEXT:
                *(char **) v = wire_get_str(r);
                return 0;
        case SAMPLE_FIELD_USEC: {
                struct timeval *tv = v;
                tv->tv_sec = (time_t) wire_get_i64(r);
                tv->tv_usec = (suseconds_t) wire_get_i64(r);
                return 0;
        }
        case SAMPLE_FIELD_DIGEST: {
                Digest *d = v;
                _cleanup_free_ char *hex = wire_get_str(r);
                if (hex && strlen(hex) >= sizeof(d->hex))
                        return -EBADMSG;
                if (hex)
                        strcpy(d->hex, hex);
                return 0;
        }
        }
        return -EBADMSG;
}

static int get_timeline(WireReader *r, Timeline **ret) {
        Timeline *t = *ret = calloc(1, sizeof(Timeline));
        if (!t)
                return -ENOMEM;
        uint32_t source = wire_get_u32(r);
        t->period_ns = wire_get_u64(r);
        t->thinned = wire_get_u32(r);
        uint32_t n = wire_get_u32(r);
        if (source > TIMELINE_PROC || n > TIMELINE_MAX_POINTS)
                return -EBADMSG;
        t->source = (TimelineSource) source;
        if (!(t->points = calloc(n + 1, sizeof(TimelinePoint))))
                return -ENOMEM;
        wire_get_bytes(r, t->points, n * sizeof(TimelinePoint));
        t->n_points = n;
        uint32_t n_marks = wire_get_u32(r);
        if (n_marks > OUTPUT_MAX_MARKS)
                return -EBADMSG;
        if (!(t->marks = calloc(n_marks + 1, sizeof(TimelineMark))))
                return -ENOMEM;
        for (uint32_t i = 0; i < n_marks; i++) {
                char *name = wire_get_str(r);
                if (!metric_name_ok(name)) {
                        free(name);
                        return -EBADMSG;
                }
                t->marks[i] = (TimelineMark){ name, wire_get_u32(r) };
                t->n_marks = i + 1;
        }
        return 0;
}

static int decode_sample(WireReader *r, const Plan *plan, Sample *s) {
        uint64_t index = wire_get_u64(r);
        if (index >= plan->n_steps)
                return -EBADMSG;
        s->step_index = (size_t) index;
        s->step = &plan->steps[index];
        for (size_t i = 0; i < n_sample_fields; i++) {
                int q = get_field(r, &sample_fields[i], s);
                if (q < 0)
                        return q;
        }
        uint32_t n = wire_get_u32(r);
        if (n > OUTPUT_MAX_METRICS)
                return -EBADMSG;
        if (n > 0 && !(s->metrics = calloc(n, sizeof(Metric))))
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
                _cleanup_free_ char *name = wire_get_str(r);
                if (!metric_name_ok(name))
                        return -EBADMSG;
                strcpy(s->metrics[i].name, name);
                s->metrics[i].value = wire_get_f64(r);
                s->n_metrics = i + 1;
        }
        if (wire_get_u8(r)) {
                static ProbeReport raw; /* 22 KiB: not on the stack */
                wire_get_bytes(r, &raw, sizeof(raw));
                if (r->failed)
                        return -EBADMSG;
                if (!(s->probe = calloc(1, sizeof(ProbeResult))))
                        return -ENOMEM;
                int q = probe_report_decode_buffer(&raw, sizeof(raw), s->probe);
                if (q < 0)
                        return q;
        }
        s->allocator_stats = wire_get_str(r);
        if (wire_get_u8(r)) {
                int q = get_timeline(r, &s->timeline);
                if (q < 0)
                        return q;
        }
        return wire_reader_end(r);
}

static int dispatch_cell_stats(WireReader *r, const Plan *plan, const RunSink *sink) {
        uint32_t cell = wire_get_u32(r), n = wire_get_u32(r);
        if (cell >= plan->n_cells || n > plan->n_variants * (N_BUILTIN_METRICS + OUTPUT_MAX_METRICS))
                return -EBADMSG;
        _cleanup_free_ StatsRow *rows = calloc(n ? n : 1, sizeof(StatsRow));
        char(*names)[OUTPUT_METRIC_NAME_MAX + 1] = calloc(n ? n : 1, sizeof(*names));
        if (!rows || !names) {
                free(names);
                return -ENOMEM;
        }
        for (uint32_t i = 0; i < n && !r->failed; i++) {
                uint32_t variant = wire_get_u32(r);
                _cleanup_free_ char *metric = wire_get_str(r);
                if (variant >= plan->n_variants || !metric_name_ok(metric)) {
                        free(names);
                        return -EBADMSG;
                }
                strcpy(names[i], metric);
                rows[i] = (StatsRow){ .cell = cell, .variant = variant, .metric = names[i] };
                Stats *st = &rows[i].stats;
                st->n = (size_t) wire_get_u64(r);
                st->median = wire_get_f64(r);
                st->mad = wire_get_f64(r);
                st->mean = wire_get_f64(r);
                st->stddev = wire_get_f64(r);
                st->min = wire_get_f64(r);
                st->max = wire_get_f64(r);
        }
        int q = wire_reader_end(r);
        if (q >= 0 && sink->cell_stats)
                q = sink->cell_stats(sink->userdata, plan, cell, rows, n);
        free(names);
        return q;
}

int stream_dispatch(const void *message, size_t size, const Plan *plan, const RunSink *sink, bool *ret_ended,
                    RunResult *ret_result, int *ret_error) {
        WireReader r = wire_reader(message, size);
        uint8_t kind = wire_get_u8(&r);
        switch (kind) {
        case STREAM_STEP: {
                uint64_t index = wire_get_u64(&r);
                if (wire_reader_end(&r) < 0 || index >= plan->n_steps)
                        return -EBADMSG;
                if (sink->step_begin)
                        sink->step_begin(sink->userdata, plan, (size_t) index);
                return 0;
        }
        case STREAM_SAMPLE: {
                Sample s = {};
                int q = decode_sample(&r, plan, &s);
                if (q >= 0 && sink->sample)
                        q = sink->sample(sink->userdata, plan, &s);
                sample_clear(&s);
                return q;
        }
        case STREAM_EXCLUDE: {
                uint32_t cell = wire_get_u32(&r), variant = wire_get_u32(&r);
                _cleanup_free_ char *reason = wire_get_str(&r);
                if (wire_reader_end(&r) < 0 || !reason || cell >= plan->n_cells ||
                    variant >= plan->n_variants)
                        return -EBADMSG;
                return sink->exclude ? sink->exclude(sink->userdata, plan, cell, variant, reason) : 0;
        }
        case STREAM_CELL_STATS:
                return dispatch_cell_stats(&r, plan, sink);
        case STREAM_END: {
                uint32_t end = wire_get_u32(&r);
                RunResult res = {
                        .end = (RunEnd) end,
                        .n_runs = (size_t) wire_get_u64(&r),
                        .n_failures = (size_t) wire_get_u64(&r),
                        .n_excluded = (size_t) wire_get_u64(&r),
                };
                int64_t error = wire_get_i64(&r);
                if (wire_reader_end(&r) < 0 || end > RUN_CANCELED || error > 0 || error < -4095)
                        return -EBADMSG;
                *ret_result = res;
                *ret_error = (int) error;
                *ret_ended = true;
                return 0;
        }
        default:
                return -EBADMSG;
        }
}
