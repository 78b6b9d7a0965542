/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "configs/spec.h"

/*
 * The quiet-machine guard (spec key quiet): how busy the machine is, read from
 * /proc/pressure/cpu ("some avg10", percent) and /proc/loadavg (1-minute load), and a bounded
 * wait for it to calm down. Only ever called between children, never while one runs.
 */
typedef struct QuietReading {
        double cpu_some_avg10; /* NAN when the kernel has no PSI */
        double load1;          /* NAN when unreadable */
} QuietReading;

void quiet_read(QuietReading *ret);

/* Whether a reading is within the limits (an unreadable figure never fails a limit). */
bool quiet_enough(const SpecQuiet *q, const QuietReading *r);

/* Reads until the machine is within the limits or max_wait_ns has passed, polling every 100 ms.
 * Returns whether it was quiet; *ret is the last reading, *ret_waited_ns the time spent. */
bool quiet_wait(const SpecQuiet *q, QuietReading *ret, uint64_t *ret_waited_ns);
