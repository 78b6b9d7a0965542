/* SPDX-License-Identifier: MIT */
/*
 * strtod() for the number, an exact match for the suffix: "5 parsecs" and "5s " are errors.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"

const Unit units_duration_ns[] = {
        { "ns", 1 },     { "us", 1e3 },   { "ms", 1e6 },    { "s", 1e9 }, { "m", 60e9 },
        { "min", 60e9 }, { "h", 3600e9 }, { "d", 86400e9 }, {},
};

const Unit units_size_bytes[] = {
        { "B", 1 },         { "K", 1024 },       { "KiB", 1024 },       { "M", 1048576 },
        { "MiB", 1048576 }, { "G", 1073741824 }, { "GiB", 1073741824 }, {},
};

int units_parse(const char *text, const Unit *units, double bare_factor, double *ret) {
        char *end;
        errno = 0;
        double v = strtod(text, &end);
        if (end == text || errno != 0 || !(v >= 0) || !isfinite(v))
                return -EINVAL;
        double factor = *end == 0 ? bare_factor : 0;
        for (const Unit *u = units; factor == 0 && u->suffix; u++)
                if (strcmp(end, u->suffix) == 0)
                        factor = u->factor;
        if (factor == 0)
                return -EINVAL;
        *ret = v * factor;
        return 0;
}

void units_format(double v, const Unit *units, char *buf, size_t size) {
        const Unit *best = units;
        for (const Unit *u = units; u->suffix; u++)
                if (u->factor <= v &&
                    (u->factor > best->factor ||
                     (u->factor == best->factor && strlen(u->suffix) > strlen(best->suffix))))
                        best = u; /* of two names, the longer: "GiB", "min" */
        snprintf(buf, size, "%g%s", v / best->factor, best->suffix);
}
