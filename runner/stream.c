/* SPDX-License-Identifier: MIT */
/*
 * Encoding and replay of run events. The encoder writes every field a recorder stores; the
 * decoder rebuilds a Sample whose step points into the receiver's Plan, so a message naming a
 * step, cell or variant the Plan does not have is refused rather than trusted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner/stream.h"
#include "util/cleanup.h"

void stream_encode_step(WireWriter *w, size_t step_index) {
        wire_put_u8(w, STREAM_STEP);
        wire_put_u64(w, step_index);
}

static void put_timeval(WireWriter *w, const struct timeval *tv) {
        wire_put_i64(w, (int64_t) tv->tv_sec);
        wire_put_i64(w, (int64_t) tv->tv_usec);
}

void stream_encode_sample(WireWriter *w, const Sample *s) {
        const SpawnResult *sr = &s->spawn;
        wire_put_u8(w, STREAM_SAMPLE);
        wire_put_u64(w, s->step_index);
        wire_put_u32(w, (uint32_t) s->status);
        wire_put_u32(w, (uint32_t) sr->end);
        wire_put_i64(w, sr->exit_code);
        wire_put_i64(w, sr->signal);
        wire_put_i64(w, sr->exec_errno);
        wire_put_u8(w, sr->leftover);
        wire_put_u8(w, sr->in_cgroup);
        wire_put_u8(w, sr->peak_from_cgroup);
        wire_put_u8(w, sr->oom_killed);
        wire_put_u8(w, sr->pids_limited);
        wire_put_u32(w, sr->leftover_processes);
        wire_put_u64(w, sr->tree_cpu_us);
        wire_put_u64(w, sr->tree_peak_kib);
        wire_put_u64(w, sr->wall_ns);
        put_timeval(w, &sr->usage.ru_utime);
        put_timeval(w, &sr->usage.ru_stime);
        wire_put_i64(w, sr->usage.ru_maxrss);
        wire_put_i64(w, sr->usage.ru_minflt);
        wire_put_i64(w, sr->usage.ru_majflt);
        wire_put_i64(w, sr->usage.ru_nvcsw);
        wire_put_i64(w, sr->usage.ru_nivcsw);
        wire_put_u8(w, s->verified);
        wire_put_u64(w, s->output.size);
        wire_put_str(w, s->output.hex[0] ? s->output.hex : NULL);
        wire_put_u64(w, s->mismatch_offset);
        wire_put_u64(w, s->reference_size);
        wire_put_u32(w, (uint32_t) s->n_metrics);
        for (size_t i = 0; i < s->n_metrics; i++) {
                wire_put_str(w, s->metrics[i].name);
                wire_put_f64(w, s->metrics[i].value);
        }
        wire_put_str(w, s->stderr_excerpt);
        wire_put_str(w, s->detail);
        wire_put_i64(w, s->env_offset);
        wire_put_u8(w, s->quiet_checked);
        wire_put_u8(w, s->noisy);
        wire_put_f64(w, s->cpu_some_avg10);
        wire_put_f64(w, s->load1);
        wire_put_u64(w, s->quiet_wait_ns);
        wire_put_u8(w, s->probe != NULL);
        if (s->probe)
                wire_put_bytes(w, &s->probe->report, sizeof(s->probe->report));
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

static void get_timeval(WireReader *r, struct timeval *tv) {
        tv->tv_sec = (time_t) wire_get_i64(r);
        tv->tv_usec = (suseconds_t) wire_get_i64(r);
}

static bool metric_name_ok(const char *s) {
        size_t n = s ? strlen(s) : 0;
        return n > 0 && n <= OUTPUT_METRIC_NAME_MAX;
}

static void sample_clear(Sample *s) {
        free(s->metrics);
        free(s->stderr_excerpt);
        free(s->detail);
        free(s->probe);
        *s = (Sample){};
}

static int decode_sample(WireReader *r, const Plan *plan, Sample *s) {
        uint64_t index = wire_get_u64(r);
        uint32_t status = wire_get_u32(r), end = wire_get_u32(r);
        if (index >= plan->n_steps || status >= _SAMPLE_STATUS_MAX || end > SPAWN_EXEC_FAILED)
                return -EBADMSG;
        s->step_index = (size_t) index;
        s->step = &plan->steps[index];
        s->status = (SampleStatus) status;
        SpawnResult *sr = &s->spawn;
        sr->end = (SpawnEnd) end;
        sr->exit_code = (int) wire_get_i64(r);
        sr->signal = (int) wire_get_i64(r);
        sr->exec_errno = (int) wire_get_i64(r);
        sr->leftover = wire_get_u8(r) != 0;
        sr->in_cgroup = wire_get_u8(r) != 0;
        sr->peak_from_cgroup = wire_get_u8(r) != 0;
        sr->oom_killed = wire_get_u8(r) != 0;
        sr->pids_limited = wire_get_u8(r) != 0;
        sr->leftover_processes = wire_get_u32(r);
        sr->tree_cpu_us = wire_get_u64(r);
        sr->tree_peak_kib = wire_get_u64(r);
        sr->wall_ns = wire_get_u64(r);
        get_timeval(r, &sr->usage.ru_utime);
        get_timeval(r, &sr->usage.ru_stime);
        sr->usage.ru_maxrss = (long) wire_get_i64(r);
        sr->usage.ru_minflt = (long) wire_get_i64(r);
        sr->usage.ru_majflt = (long) wire_get_i64(r);
        sr->usage.ru_nvcsw = (long) wire_get_i64(r);
        sr->usage.ru_nivcsw = (long) wire_get_i64(r);
        s->verified = wire_get_u8(r) != 0;
        s->output.size = wire_get_u64(r);
        _cleanup_free_ char *hex = wire_get_str(r);
        if (hex && strlen(hex) >= sizeof(s->output.hex))
                return -EBADMSG;
        if (hex)
                strcpy(s->output.hex, hex);
        s->mismatch_offset = wire_get_u64(r);
        s->reference_size = wire_get_u64(r);
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
        s->stderr_excerpt = wire_get_str(r);
        s->detail = wire_get_str(r);
        s->env_offset = wire_get_i64(r);
        s->quiet_checked = wire_get_u8(r);
        s->noisy = wire_get_u8(r);
        s->cpu_some_avg10 = wire_get_f64(r);
        s->load1 = wire_get_f64(r);
        s->quiet_wait_ns = wire_get_u64(r);
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
        return wire_reader_end(r);
}

static int dispatch_cell_stats(WireReader *r, const Plan *plan, const RunSink *sink) {
        uint32_t cell = wire_get_u32(r), n = wire_get_u32(r);
        if (cell >= plan->n_cells || n > plan->n_variants * (4 + OUTPUT_MAX_METRICS))
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
