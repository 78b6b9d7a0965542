/* SPDX-License-Identifier: MIT */
/*
 * ProbeResult -> JSON. Counters are numbers; option values stay strings, as the allocators
 * report them.
 */
#include "db/probejson.h"
#include "util/cleanup.h"

static json_t *families_json(uint32_t families) {
        json_t *a = json_array();
        for (size_t i = 0; i < ELEMENTSOF(probe_family_names); i++)
                if (families & probe_family_names[i].bit)
                        json_array_append_new(a, json_string(probe_family_names[i].name));
        return a;
}

json_t *probejson_from_result(const ProbeResult *result) {
        const ProbeReport *r = &result->report;
        json_t *options = json_object(), *census = json_array(), *calls = json_object();
        for (uint32_t i = 0; i < r->n_options; i++)
                json_object_set_new(options, r->options[i].name, json_string(r->options[i].value));
        for (uint32_t i = 0; i < r->n_libraries; i++)
                json_array_append_new(census, json_pack("{s:s, s:o, s:s}", "path", r->libraries[i].path,
                                                        "families", families_json(r->libraries[i].families),
                                                        "prefix", r->libraries[i].prefix));
        for (unsigned f = 0; f < _PROBE_FUNCTION_MAX; f++)
                json_object_set_new(calls, probe_function_name((ProbeFunction) f),
                                    json_integer((json_int_t) result->calls[f]));
        /* Live bytes are measured in smoke runs only (see PROBE_REQUEST_LIVE_BYTES): null otherwise. */
        json_t *live = result->live_measured ? json_integer(result->live_bytes) : json_null();
        json_t *peak = result->live_measured ? json_integer(result->peak_live_bytes) : json_null();
        return json_pack(
                "{s:b, s:b, s:{s:s, s:s, s:s, s:s, s:o}, s:o, s:I, s:{s:o, s:I, s:o, s:o, s:I, s:I},"
                " s:{s:s?, s:s?}}",
                "loaded", result->loaded, "exited", result->exited, "effective", "path", r->effective_path,
                "family", probe_family_name(r->effective_family), "prefix", r->effective_prefix, "version",
                r->allocator_version, "options", options, "census", census, "allocator_copies",
                (json_int_t) probe_allocator_copies(result), "counters", "calls", calls, "bytes_requested",
                (json_int_t) result->bytes_requested, "live_bytes", live, "peak_live_bytes", peak, "threads",
                (json_int_t) result->threads, "bootstrap_bytes", (json_int_t) r->bootstrap_bytes, "forward",
                "library", r->forward_library[0] ? r->forward_library : NULL, "error",
                r->error[0] ? r->error : NULL);
}
