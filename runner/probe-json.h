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
