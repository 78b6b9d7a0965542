/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>

#include "runner/probe-report.h"

/*
 * A probe result as JSON: the form stored in the database (probe_reports) and printed by
 * `alloclab census --json`, so the two always agree. Field names are documented in
 * docs/probe.md.
 */

/* Returns a new JSON object (caller owns the reference), or NULL on -ENOMEM. */
json_t *probe_json_from_result(const ProbeResult *r, const char *allocator_stats);

/* Memory at exit as every JSON output writes it: {rss_bytes, pss_anon_bytes, anon_huge_bytes}. */
json_t *probe_memory_json(int64_t rss_bytes, int64_t pss_anon_bytes, int64_t anon_huge_bytes);
