/* SPDX-License-Identifier: MIT */
/*
 * Run events as the daemon receives them from a runner process, which runs as the submitting
 * user: any bytes may arrive. Input: a first byte choosing one valid message (step, sample with
 * a probe report, exclusion, cell statistics, end), a second byte asking for a truncation to
 * the next two bytes' length, then edits (fuzz.h) of that message. It is dispatched against the
 * plan it was encoded for, into a sink that reads every field as the daemon's recorder does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner/probe-json.h"
#include "runner/stream.h"
#include "tests/fuzz/fuzz.h"

static char *caller_env[] = { (char *) "PATH=/usr/bin:/bin", NULL };

static size_t read_text(const char *s) {
        return s ? strlen(s) : 0;
}

static int on_sample(void *u, const Plan *p, const Sample *s) {
        size_t *seen = u;
        *seen += read_text(s->stderr_excerpt) + read_text(s->detail) + read_text(s->output.hex);
        for (size_t i = 0; i < s->n_metrics; i++)
                *seen += read_text(s->metrics[i].name) + (s->metrics[i].value > 0);
        *seen += read_text(p->spec->variants[s->step->variant].name);
        if (s->probe) {
                json_t *json = probe_json_from_result(s->probe, s->allocator_stats);
                if (json) {
                        free(json_dumps(json, JSON_COMPACT));
                        json_decref(json);
                }
        }
        return 0;
}

static int on_exclude(void *u, const Plan *p, uint32_t cell, uint32_t variant, const char *reason) {
        size_t *seen = u;
        *seen += read_text(reason) + read_text(p->spec->variants[variant].name) + cell;
        return 0;
}

static int on_stats(void *u, const Plan *p, uint32_t cell, const StatsRow *rows, size_t n) {
        size_t *seen = u;
        (void) p;
        for (size_t i = 0; i < n; i++)
                *seen += read_text(rows[i].metric) + rows[i].variant + cell + (rows[i].stats.median > 0);
        return 0;
}

/* The valid messages the inputs start from, encoded once. */
static WireWriter messages[5];
static Plan *plan;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        (void) argc;
        (void) argv;
        static const char yaml[] = "experiment: s\ncommand: [/bin/true]\nparams: {n: [1, 2]}\n"
                                   "allocators: {a: {}, b: {}}\nsamples: 2\nprobe: never\n";
        Diagnostics d = {};
        Spec *spec = NULL; /* lives as long as the plan: the whole process */
        if (spec_load_buffer("s.yaml", yaml, strlen(yaml), &d, &spec) < 0 ||
            plan_new(spec, &(PlanOptions){ .caller_env = caller_env, .seed = 1 }, &plan, NULL) < 0)
                abort();

        static ProbeResult probe;
        probe.loaded = true;
        probe.report = (ProbeReport){ .magic = PROBE_REPORT_MAGIC,
                                      .version = PROBE_REPORT_VERSION,
                                      .size = sizeof(ProbeReport),
                                      .state = PROBE_STATE_LOADED | PROBE_STATE_IDENTITY,
                                      .effective_path = "/lib/x86_64-linux-gnu/libc.so.6",
                                      .effective_family = PROBE_FAMILY_GLIBC,
                                      .n_slots = 1 };
        probe.report.slots[0].calls[PROBE_MALLOC] = 42;
        Metric metrics[2] = { { "read_time", 0.25 }, { "rows", 1e6 } };
        Sample s = {
                .step_index = 3,
                .step = &plan->steps[3],
                .status = SAMPLE_MISMATCH,
                .spawn = { .end = SPAWN_EXITED, .wall_ns = 123456789, .usage = { .ru_maxrss = 2048 } },
                .verified = true,
                .output = { .size = 99, .hex = "00112233445566778899aabbccddeeff" },
                .metrics = metrics,
                .n_metrics = 2,
                .stderr_excerpt = (char *) "oops",
                .detail = (char *) "why",
                .probe = &probe,
        };
        StatsRow rows[2] = {
                { .cell = 1, .variant = 0, .metric = "wall", .stats = { .n = 2, .median = 1.5 } },
                { .cell = 1, .variant = 1, .metric = "maxrss", .stats = { .n = 2, .max = 9 } }
        };
        RunResult result = { .end = RUN_STOPPED, .n_runs = 5, .n_failures = 1 };
        stream_encode_step(&messages[0], 2);
        stream_encode_sample(&messages[1], &s);
        stream_encode_exclude(&messages[2], 1, 1, "signal: killed");
        stream_encode_cell_stats(&messages[3], 1, rows, 2);
        stream_encode_end(&messages[4], &result, -EIO);
        for (size_t i = 0; i < 5; i++)
                if (messages[i].failed)
                        abort();
        diag_clear(&d);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 2)
                return 0;
        const WireWriter *base = &messages[data[0] % 5];
        size_t length = base->size;
        bool truncate = data[1] & 1;
        data += 2;
        size -= 2;
        if (truncate && size >= 2) {
                length = (data[0] | (size_t) data[1] << 8) % (base->size + 1);
                data += 2;
                size -= 2;
        }
        uint8_t *message = malloc(base->size);
        if (!message)
                return 0;
        memcpy(message, base->data, base->size);
        fuzz_apply_edits(message, length, data, size);

        size_t seen = 0;
        RunSink sink = {
                .userdata = &seen, .sample = on_sample, .exclude = on_exclude, .cell_stats = on_stats
        };
        bool ended = false;
        RunResult result;
        int error;
        (void) stream_dispatch(message, length, plan, &sink, &ended, &result, &error);
        free(message);
        return 0;
}
