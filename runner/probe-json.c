/* SPDX-License-Identifier: MIT */
/*
 * ProbeResult -> JSON. Counters are numbers; option values stay strings, as the allocators
 * report them.
 */
#include "runner/allocator-stats.h"
#include "runner/probe-json.h"
#include "util/cleanup.h"

static json_t *families_json(uint32_t families) {
        json_t *a = json_array();
        for (size_t i = 0; i < ELEMENTSOF(probe_family_names); i++)
                if (families & probe_family_names[i].bit)
                        json_array_append_new(a, json_string(probe_family_names[i].name));
        return a;
}

/* A counter, or null where the run did not count (PROBE_REQUEST_COUNTERS). */
static json_t *counted(const ProbeResult *result, uint64_t value) {
        return result->counted ? json_integer((json_int_t) value) : json_null();
}

json_t *probe_memory_json(int64_t rss_bytes, int64_t pss_anon_bytes, int64_t anon_huge_bytes) {
        return json_pack("{s:I, s:I, s:I}", "rss_bytes", (json_int_t) rss_bytes, "pss_anon_bytes",
                         (json_int_t) pss_anon_bytes, "anon_huge_bytes", (json_int_t) anon_huge_bytes);
}

/* Memory at exit from smaps_rollup (PROBE_REQUEST_MEMORY), in bytes, or null where not read. */
static json_t *memory_json(bool read, uint64_t rss_kib, uint64_t pss_anon_kib, uint64_t anon_huge_kib) {
        if (!read)
                return json_null();
        return probe_memory_json((int64_t) rss_kib * 1024, (int64_t) pss_anon_kib * 1024,
                                 (int64_t) anon_huge_kib * 1024);
}

/* The process tree: each process with its program, allocator and calls, and a program it
 * executed without the probe (so not in the tree). */
static json_t *processes_json(const ProbeResult *result) {
        json_t *a = json_array();
        for (uint32_t i = 0; i < result->n_processes; i++) {
                const ProbeProcess *p = &result->report.processes[i];
                json_t *unprobed = p->unprobed_exec[0] ? json_pack("{s:s, s:s}", "program", p->unprobed_exec,
                                                                   "preload", p->unprobed_preload)
                                                       : json_null();
                json_array_append_new(a,
                                      json_pack("{s:i, s:i, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o}",
                                                "pid", (int) p->pid, "parent", (int) p->parent, "how",
                                                probe_process_how(p->how), "program", p->program, "preload",
                                                p->preload, "allocator", p->effective_path, "family",
                                                probe_family_name(p->family), "allocator_copies",
                                                result->census_known ? json_integer(p->copies) : json_null(),
                                                "calls", counted(result, result->process_calls[i]),
                                                "exec_without_probe", unprobed, "memory_at_exit",
                                                memory_json(p->memory_read, p->rss_kib, p->pss_anon_kib,
                                                            p->anon_huge_kib)));
        }
        return a;
}

json_t *probe_json_from_result(const ProbeResult *result, const char *allocator_stats) {
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
        /* Counters, live bytes, options and the census come from the runs that asked for them
         * (PROBE_REQUEST_*): null elsewhere. */
        if (!result->counted)
                json_decref(calls), calls = json_null();
        json_t *live = result->live_measured ? json_integer(result->live_bytes) : json_null();
        json_t *peak = result->live_measured ? json_integer(result->peak_live_bytes) : json_null();
        json_t *peak_requested =
                result->requested_tracked ? json_integer(r->peak_live_requested) : json_null();
        json_t *copies = result->census_known ? json_integer(probe_allocator_copies(result)) : json_null();
        if (!result->options_known)
                json_decref(options), options = json_null();
        if (!result->census_known)
                json_decref(census), census = json_null();
        json_t *stats = allocator_stats
                                ? allocator_stats_json(r->stats_format, allocator_stats, r->stats_truncated)
                                : json_null();
        return json_pack(
                "{s:b, s:b, s:{s:s, s:s, s:s, s:s?, s:o}, s:o, s:o, s:{s:o, s:o, s:o, s:o, s:o, s:o, s:I},"
                " s:{s:s?, s:s?}, s:o, s:I, s:b, s:o, s:I, s:o}",
                "loaded", result->loaded, "exited", result->exited, "effective", "path", r->effective_path,
                "family", probe_family_name(r->effective_family), "prefix", r->effective_prefix, "version",
                result->options_known ? r->allocator_version : NULL, "options", options, "census", census,
                "allocator_copies", copies, "counters", "calls", calls, "bytes_requested",
                counted(result, result->bytes_requested), "live_bytes", live, "peak_live_bytes", peak,
                "peak_live_requested_bytes", peak_requested, "threads", counted(result, result->threads),
                "bootstrap_bytes", (json_int_t) r->bootstrap_bytes, "forward", "library",
                r->forward_library[0] ? r->forward_library : NULL, "error", r->error[0] ? r->error : NULL,
                "processes", processes_json(result), "processes_total", (json_int_t) r->n_processes,
                "unlisted_pymalloc", (r->state & PROBE_STATE_UNLISTED_PYMALLOC) != 0, "memory_at_exit",
                memory_json(result->memory_processes > 0, result->rss_kib, result->pss_anon_kib,
                            result->anon_huge_kib),
                "memory_processes", (json_int_t) result->memory_processes, "allocator_stats", stats);
}
