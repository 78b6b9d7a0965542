/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/*
 * Quantities with units: "1.5s", "500ms", "64MiB", "6h". One parser for durations and sizes,
 * so specs and schedules accept the same spellings.
 */

typedef struct Unit {
        const char *suffix;
        double factor;
} Unit;

/* NULL-suffix-terminated tables: durations in nanoseconds, sizes in bytes. */
extern const Unit units_duration_ns[];
extern const Unit units_size_bytes[];

/*
 * Parses "<non-negative number><suffix>" with a suffix from units, or a bare number scaled by
 * bare_factor (0 to refuse bare numbers). Returns 0 and the scaled value, or -EINVAL.
 */
int units_parse(const char *text, const Unit *units, double bare_factor, double *ret);

/* v in the largest unit of units not above it ("1ms", "1d", "1GiB"; %g of the number), into
 * buf. */
void units_format(double v, const Unit *units, char *buf, size_t size);
