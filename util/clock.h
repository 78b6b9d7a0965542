/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds and microseconds: for intervals and deadlines, never for dates. */
uint64_t now_ns(void);
uint64_t now_usec(void);
