/* SPDX-License-Identifier: MIT */
/*
 * Run events across a process boundary: every event survives encoding and replay into a sink
 * field by field, and malformed messages (truncated, trailing bytes, out-of-range indices, an
 * unknown kind) are refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <cmocka.h>

#include "runner/sample-field.h"
#include "runner/stream.h"
#include "util/cleanup.h"

static char *caller_env[] = { (char *) "PATH=/usr/bin:/bin", NULL };

static Plan *make_plan(Spec **ret_spec) {
        static const char yaml[] = "experiment: s\ncommand: [/bin/true]\nparams: {n: [1, 2]}\n"
                                   "allocators: {a: {}, b: {}}\nsamples: 2\nprobe: never\n";
        Diagnostics d = {};
        assert_int_equal(spec_load_buffer("s.yaml", yaml, strlen(yaml), &d, ret_spec), 0);
        Plan *p = NULL;
        assert_int_equal(
                plan_new(*ret_spec, &(PlanOptions){ .caller_env = caller_env, .seed = 1 }, &p, NULL), 0);
        diag_clear(&d);
        return p;
}

typedef struct Captured {
        Sample sample;
        Metric metrics[2];
        char stderr_excerpt[64], detail[64];
        bool had_probe;
        uint64_t probe_mallocs;
        size_t timeline_points;
        TimelinePoint last_point;
        char mark[65];
        uint32_t mark_ms;
        uint32_t excluded_cell, excluded_variant;
        char reason[64];
        StatsRow row;
        char metric[65];
        size_t n_rows;
} Captured;

static int on_sample(void *u, const Plan *p, const Sample *s) {
        Captured *c = u;
        (void) p;
        c->sample = *s;
        memcpy(c->metrics, s->metrics, s->n_metrics * sizeof(Metric));
        snprintf(c->stderr_excerpt, sizeof(c->stderr_excerpt), "%s",
                 s->stderr_excerpt ? s->stderr_excerpt : "");
        snprintf(c->detail, sizeof(c->detail), "%s", s->detail ? s->detail : "");
        c->had_probe = s->probe != NULL;
        c->probe_mallocs = s->probe ? s->probe->calls[PROBE_MALLOC] : 0;
        if (s->timeline) {
                c->timeline_points = s->timeline->n_points;
                c->last_point = s->timeline->points[s->timeline->n_points - 1];
                snprintf(c->mark, sizeof(c->mark), "%s", s->timeline->marks[0].name);
                c->mark_ms = s->timeline->marks[0].t_ms;
        }
        return 0;
}

static int on_exclude(void *u, const Plan *p, uint32_t cell, uint32_t variant, const char *reason) {
        Captured *c = u;
        (void) p;
        c->excluded_cell = cell;
        c->excluded_variant = variant;
        snprintf(c->reason, sizeof(c->reason), "%s", reason);
        return 0;
}

static int on_stats(void *u, const Plan *p, uint32_t cell, const StatsRow *rows, size_t n) {
        Captured *c = u;
        (void) p;
        (void) cell;
        c->row = rows[n - 1];
        snprintf(c->metric, sizeof(c->metric), "%s", rows[n - 1].metric);
        c->n_rows = n;
        return 0;
}

static int replay(const Plan *p, Captured *c, const WireWriter *w) {
        RunSink sink = { .userdata = c, .sample = on_sample, .exclude = on_exclude, .cell_stats = on_stats };
        bool ended = false;
        RunResult res;
        int error;
        return stream_dispatch(w->data, w->size, p, &sink, &ended, &res, &error);
}

static void test_sample_round_trip(void **state) {
        (void) state;
        _cleanup_(spec_freep) Spec *spec = NULL;
        _cleanup_(plan_freep) Plan *p = make_plan(&spec);
        Metric metrics[2] = { { "read_time", 0.25 }, { "rows", 1e6 } };
        ProbeResult probe = {};
        probe.report.magic = PROBE_REPORT_MAGIC;
        probe.report.version = PROBE_REPORT_VERSION;
        probe.report.size = sizeof(ProbeReport);
        probe.report.state = PROBE_STATE_LOADED;
        probe.report.n_slots = 1;
        probe.report.slots[0].calls[PROBE_MALLOC] = 42;
        TimelinePoint points[] = { { 0, 1024 }, { 20, 21000 }, { 40, 2000 } };
        TimelineMark marks[] = { { (char *) "free", 40 } };
        Timeline timeline = { .source = TIMELINE_PROC,
                              .period_ns = 20000000,
                              .points = points,
                              .n_points = 3,
                              .marks = marks,
                              .n_marks = 1 };
        Sample s = {
                .step_index = 7,
                .step = &p->steps[7],
                .status = SAMPLE_MISMATCH,
                .spawn = { .end = SPAWN_EXITED,
                           .exit_code = 0,
                           .wall_ns = 123456789,
                           .leftover = true,
                           .in_cgroup = true,
                           .leftover_processes = 2,
                           .tree_cpu_us = 4321,
                           .tree_peak_kib = 777,
                           .usage = { .ru_utime = { 1, 500 }, .ru_maxrss = 2048, .ru_nivcsw = 3 } },
                .verified = true,
                .output = { .size = 99, .hex = "00112233445566778899aabbccddeeff" },
                .mismatch_offset = 17,
                .reference_size = 100,
                .metrics = metrics,
                .n_metrics = 2,
                .stderr_excerpt = (char *) "oops",
                .detail = (char *) "why",
                .probe = &probe,
                .timeline = &timeline,
        };
        _cleanup_(wire_writer_done) WireWriter w = {};
        stream_encode_sample(&w, &s);
        Captured c = {};
        assert_int_equal(replay(p, &c, &w), 0);
        assert_ptr_equal(c.sample.step, &p->steps[7]);
        assert_int_equal(c.sample.status, SAMPLE_MISMATCH);
        assert_int_equal(c.sample.spawn.wall_ns, 123456789);
        assert_true(c.sample.spawn.leftover);
        assert_true(c.sample.spawn.in_cgroup);
        assert_false(c.sample.spawn.peak_from_cgroup);
        assert_int_equal(c.sample.spawn.leftover_processes, 2);
        assert_int_equal(c.sample.spawn.tree_cpu_us, 4321);
        assert_int_equal(c.sample.spawn.tree_peak_kib, 777);
        assert_int_equal(c.sample.spawn.usage.ru_utime.tv_sec, 1);
        assert_int_equal(c.sample.spawn.usage.ru_utime.tv_usec, 500);
        assert_int_equal(c.sample.spawn.usage.ru_maxrss, 2048);
        assert_int_equal(c.sample.spawn.usage.ru_nivcsw, 3);
        assert_int_equal(c.sample.output.size, 99);
        assert_string_equal(c.sample.output.hex, "00112233445566778899aabbccddeeff");
        assert_int_equal(c.sample.mismatch_offset, 17);
        assert_int_equal(c.sample.n_metrics, 2);
        assert_string_equal(c.metrics[1].name, "rows");
        assert_float_equal(c.metrics[0].value, 0.25, 0);
        assert_string_equal(c.stderr_excerpt, "oops");
        assert_string_equal(c.detail, "why");
        assert_true(c.had_probe);
        assert_int_equal(c.probe_mallocs, 42);
        assert_int_equal(c.timeline_points, 3);
        assert_int_equal(c.last_point.t_ms, 40);
        assert_int_equal(c.last_point.kib, 2000);
        assert_string_equal(c.mark, "free");
        assert_int_equal(c.mark_ms, 40);
}

/* Field i of the table gets a value of its own, so that two fields mixed up show. */
static void fill_field(const SampleField *f, size_t i, Sample *s, char (*texts)[32]) {
        void *v = sample_field_in(f, s);
        switch (f->type) {
        case SAMPLE_FIELD_BOOL:
        case SAMPLE_FIELD_SOURCE:
                *(bool *) v = true;
                break;
        case SAMPLE_FIELD_INT:
                *(int *) v = -(int) (1000 + i);
                break;
        case SAMPLE_FIELD_U32:
                *(uint32_t *) v = (uint32_t) (2000 + i);
                break;
        case SAMPLE_FIELD_U64:
                *(uint64_t *) v = (UINT64_C(1) << 40) + i;
                break;
        case SAMPLE_FIELD_I64:
                *(int64_t *) v = -(INT64_C(1) << 41) - (int64_t) i;
                break;
        case SAMPLE_FIELD_LONG:
                *(long *) v = 3000 + (long) i;
                break;
        case SAMPLE_FIELD_DOUBLE:
                *(double *) v = 0.5 + (double) i;
                break;
        case SAMPLE_FIELD_TEXT:
                snprintf(texts[i], sizeof(texts[i]), "text of field %u", (unsigned) (i % 1000));
                *(char **) v = texts[i];
                break;
        case SAMPLE_FIELD_USEC:
                *(struct timeval *) v = (struct timeval){ .tv_sec = (time_t) i, .tv_usec = 4000 + (long) i };
                break;
        case SAMPLE_FIELD_DIGEST: {
                Digest *d = v;
                for (size_t k = 0; k + 1 < sizeof(d->hex); k++)
                        d->hex[k] = "0123456789abcdef"[(i + k) % 16];
                break;
        }
        case SAMPLE_FIELD_STATUS:
                *(SampleStatus *) v = SAMPLE_SIGNAL;
                break;
        case SAMPLE_FIELD_END:
                *(SpawnEnd *) v = SPAWN_SIGNALED;
                break;
        }
}

static bool field_equal(const SampleField *f, const Sample *a, const Sample *b) {
        const void *x = sample_field_of(f, a), *y = sample_field_of(f, b);
        switch (f->type) {
        case SAMPLE_FIELD_TEXT:
                return strcmp(*(char *const *) x, *(char *const *) y) == 0;
        case SAMPLE_FIELD_DIGEST:
                return strcmp(((const Digest *) x)->hex, ((const Digest *) y)->hex) == 0;
        case SAMPLE_FIELD_USEC:
                return ((const struct timeval *) x)->tv_sec == ((const struct timeval *) y)->tv_sec &&
                       ((const struct timeval *) x)->tv_usec == ((const struct timeval *) y)->tv_usec;
        case SAMPLE_FIELD_BOOL:
        case SAMPLE_FIELD_SOURCE:
                return *(const bool *) x == *(const bool *) y;
        case SAMPLE_FIELD_INT:
        case SAMPLE_FIELD_STATUS:
        case SAMPLE_FIELD_END:
                return *(const int *) x == *(const int *) y;
        case SAMPLE_FIELD_U32:
                return *(const uint32_t *) x == *(const uint32_t *) y;
        case SAMPLE_FIELD_U64:
        case SAMPLE_FIELD_I64:
                return *(const uint64_t *) x == *(const uint64_t *) y;
        case SAMPLE_FIELD_LONG:
                return *(const long *) x == *(const long *) y;
        case SAMPLE_FIELD_DOUBLE:
                return *(const double *) x == *(const double *) y;
        }
        return false;
}

typedef struct Expected {
        const Sample *sample;
        size_t n_equal;
} Expected;

static int count_equal_fields(void *u, const Plan *p, const Sample *got) {
        Expected *e = u;
        (void) p;
        for (size_t i = 0; i < n_sample_fields; i++) {
                if (field_equal(&sample_fields[i], e->sample, got))
                        e->n_equal++;
                else
                        print_error("field %zu (%s) changed on the way\n", i,
                                    sample_fields[i].column ? sample_fields[i].column : "not stored");
        }
        return 0;
}

/* Every field of runner/sample-field.c, whatever it is, crosses the stream unchanged. */
static void test_every_field_round_trip(void **state) {
        (void) state;
        _cleanup_(spec_freep) Spec *spec = NULL;
        _cleanup_(plan_freep) Plan *p = make_plan(&spec);
        Sample s = { .step_index = 3, .step = &p->steps[3] };
        char(*texts)[32] = calloc(n_sample_fields, sizeof(*texts));
        assert_non_null(texts);
        for (size_t i = 0; i < n_sample_fields; i++)
                fill_field(&sample_fields[i], i, &s, texts);
        _cleanup_(wire_writer_done) WireWriter w = {};
        stream_encode_sample(&w, &s);
        Expected e = { .sample = &s };
        RunSink sink = { .userdata = &e, .sample = count_equal_fields };
        bool ended = false;
        RunResult res;
        int error;
        assert_int_equal(stream_dispatch(w.data, w.size, p, &sink, &ended, &res, &error), 0);
        assert_int_equal(e.n_equal, n_sample_fields);
        free(texts);
}

static void test_other_events(void **state) {
        (void) state;
        _cleanup_(spec_freep) Spec *spec = NULL;
        _cleanup_(plan_freep) Plan *p = make_plan(&spec);
        Captured c = {};
        _cleanup_(wire_writer_done) WireWriter w = {};
        stream_encode_exclude(&w, 1, 1, "signal: killed");
        assert_int_equal(replay(p, &c, &w), 0);
        assert_int_equal(c.excluded_cell, 1);
        assert_string_equal(c.reason, "signal: killed");

        StatsRow rows[2] = {
                { .cell = 0, .variant = 0, .metric = "wall", .stats = { .n = 2, .median = 1.5 } },
                { .cell = 0, .variant = 1, .metric = "maxrss", .stats = { .n = 2, .max = 9 } }
        };
        wire_writer_done(&w);
        stream_encode_cell_stats(&w, 0, rows, 2);
        assert_int_equal(replay(p, &c, &w), 0);
        assert_int_equal(c.n_rows, 2);
        assert_string_equal(c.metric, "maxrss");
        assert_int_equal(c.row.variant, 1);
        assert_float_equal(c.row.stats.max, 9, 0);

        wire_writer_done(&w);
        RunResult res = { .end = RUN_CANCELED, .n_runs = 5, .n_failures = 1 };
        stream_encode_end(&w, &res, -EIO);
        RunSink sink = {};
        bool ended = false;
        RunResult got;
        int error = 0;
        assert_int_equal(stream_dispatch(w.data, w.size, p, &sink, &ended, &got, &error), 0);
        assert_true(ended);
        assert_int_equal(got.end, RUN_CANCELED);
        assert_int_equal(got.n_runs, 5);
        assert_int_equal(error, -EIO);
}

static void test_malformed(void **state) {
        (void) state;
        _cleanup_(spec_freep) Spec *spec = NULL;
        _cleanup_(plan_freep) Plan *p = make_plan(&spec);
        Captured c = {};
        RunSink sink = {
                .userdata = &c, .sample = on_sample, .exclude = on_exclude, .cell_stats = on_stats
        };
        bool ended;
        RunResult res;
        int error;
        _cleanup_(wire_writer_done) WireWriter w = {};
        stream_encode_exclude(&w, 1, 1, "reason");
        /* Every strict prefix is refused, and so is a trailing byte. */
        for (size_t n = 0; n < w.size; n++)
                assert_int_equal(stream_dispatch(w.data, n, p, &sink, &ended, &res, &error), -EBADMSG);
        wire_put_u8(&w, 0);
        assert_int_equal(stream_dispatch(w.data, w.size, p, &sink, &ended, &res, &error), -EBADMSG);

        wire_writer_done(&w);
        stream_encode_exclude(&w, 2, 0, "no such cell"); /* the plan has 2 cells: 0 and 1 */
        assert_int_equal(stream_dispatch(w.data, w.size, p, &sink, &ended, &res, &error), -EBADMSG);

        wire_writer_done(&w);
        stream_encode_step(&w, p->n_steps);
        assert_int_equal(stream_dispatch(w.data, w.size, p, &sink, &ended, &res, &error), -EBADMSG);

        uint8_t unknown[] = { 99 };
        assert_int_equal(stream_dispatch(unknown, sizeof(unknown), p, &sink, &ended, &res, &error),
                         -EBADMSG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sample_round_trip),
                cmocka_unit_test(test_every_field_round_trip),
                cmocka_unit_test(test_other_events),
                cmocka_unit_test(test_malformed),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
