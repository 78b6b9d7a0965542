/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

#include "runner/probe-report.h"
#include "runner/spawn.h"

/*
 * One command run under the probe, as the user runs it: the caller's environment minus any
 * LD_PRELOAD, plus the probe (first) and an optional allocator. What `alloclab census` shows:
 * which allocator serves its malloc, every allocator copy loaded, the probe's counters.
 */

typedef struct Census {
        SpawnResult spawn;
        ProbeResult probe;     /* when report_error == 0 */
        int report_error;      /* the probe's report could not be read: -errno */
        char *allocator_stats; /* the allocator's statistics at exit (probe_report_stats()), or NULL */
        /* The allocator's complaint about its configuration on stderr, in its own words
         * (options_complaint(): "<jemalloc>: Invalid conf pair: narenaz:1"), or "". */
        char complaint[256];
} Census;

/* Runs command (argv[0] found in the environment's PATH) once, its output to stderr (its own
 * stderr after it ends, read for a complaint), until it
 * ends or cancel_fd becomes readable (spawn.end == SPAWN_CANCELED, no report). allocator_path
 * may be NULL. Returns 0 with *ret filled, or -errno when the command cannot run (not found, not
 * executable, out of memory). */
int census_run(char *const *command, char *const *caller_env, const char *probe_path,
               const char *allocator_path, int cancel_fd, Census *ret);
void census_done(Census *c);
