/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stdint.h>

#include "db/store.h"

/*
 * Tables for `alloclab export`: {"columns": [names...], "rows": [{column: value}...]}, every row
 * with every column in column order, values JSON numbers, strings, booleans or null. The
 * columns are documented in docs/export.md and only ever gain new ones at the end.
 */

/* Every sample of a run as stored, in recording order: fixed columns, then one "param:NAME"
 * per matrix parameter and one "metric:NAME" per metric the program reported. Units are the
 * database's own (wall_ns, user_us, maxrss_kib), so nothing is rounded on the way out.
 * Returns 0, -ENOENT when no such run, -ENOMEM, -EIO. */
int export_samples(Store *s, int64_t run_id, json_t **ret);

/* An imported run's CPU times as the other tool gave them (runs.import_cpu: [{cell, variant,
 * user, system}], seconds): *ret NULL for a run of alloclab's own or an import without them.
 * Returns 0, -ENOENT when no such run, -ENOMEM, -EIO. */
int export_import_cpu(Store *s, int64_t run_id, json_t **ret);
