/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "db/query.h"

/*
 * An experiment across hosts (alloclab fleet, docs/fleet.md): per host name, its latest finished
 * run, read as `show` reads it. Hosts are never pooled here: each run's ratios are its own,
 * measured against its own baseline on its own machine.
 */

typedef struct FleetHost {
        char *hostname;
        char *fingerprint; /* NULL for runs older than the host fingerprint */
        Report *report;    /* the host's latest run of the experiment with status done */
} FleetHost;

typedef struct Fleet {
        char *experiment;
        FleetHost *hosts; /* by host name */
        size_t n_hosts;
} Fleet;

/* Returns 0, -ENOENT when the experiment has no finished run, -EIO, -ENOMEM. */
int query_fleet(Store *s, const char *experiment, Fleet **ret);
Fleet *fleet_free(Fleet *f);
static inline void fleet_freep(Fleet **f) {
        fleet_free(*f);
}
