/* SPDX-License-Identifier: MIT */
/*
 * The probe's report as the runner reads it: the child writes it, so any bytes may be there.
 * Input: edits (fuzz.h) of a complete, valid report. Decoded, then turned into the JSON that
 * is stored and printed, and the census counted, as the runner and `alloclab census` do.
 */
#include <stdlib.h>
#include <string.h>

#include "runner/probe-json.h"
#include "runner/probe-report.h"
#include "tests/fuzz/fuzz.h"

static void fill_valid(ProbeReport *r) {
        *r = (ProbeReport){
                .magic = PROBE_REPORT_MAGIC,
                .version = PROBE_REPORT_VERSION,
                .size = sizeof(ProbeReport),
                .state = PROBE_STATE_LOADED | PROBE_STATE_IDENTITY | PROBE_STATE_CENSUS |
                         PROBE_STATE_EXITED | PROBE_STATE_LIVE_BYTES | PROBE_STATE_OPTIONS,
                .pid = 4242,
                .requests = PROBE_REQUEST_SMOKE,
                .effective_path = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
                .effective_family = PROBE_FAMILY_JEMALLOC,
                .allocator_version = "5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c",
                .n_options = 2,
                .options = { { "dirty_decay_ms", "500" }, { "background_thread", "true" } },
                .n_libraries = 2,
                .libraries = { { "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", PROBE_FAMILY_JEMALLOC, "" },
                               { "/lib/x86_64-linux-gnu/libc.so.6", PROBE_FAMILY_GLIBC, "" } },
                .n_slots = 2,
                .peak_live_bytes = 1 << 20,
                .live_bytes = 4096,
                .bootstrap_bytes = 64,
        };
        r->slots[0].calls[PROBE_MALLOC] = 1000;
        r->slots[0].calls[PROBE_FREE] = 990;
        r->slots[0].bytes_requested = 64000;
        r->slots[0].live_bytes = 4096;
        r->slots[1].calls[PROBE_ALIGNED_ALLOC] = 20;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static ProbeReport report;
        fill_valid(&report);
        fuzz_apply_edits((uint8_t *) &report, sizeof(report), data, size);

        static ProbeResult result;
        if (probe_report_decode_buffer(&report, sizeof(report), &result) < 0)
                return 0;
        json_t *json = probe_json_from_result(&result, NULL);
        if (json) {
                free(json_dumps(json, JSON_COMPACT));
                json_decref(json);
        }
        (void) probe_allocator_copies(&result);
        (void) probe_family_name(result.report.effective_family);
        return 0;
}
