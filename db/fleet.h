/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "db/query.h"

/*
 * An experiment across machines (alloclab fleet, docs/fleet.md): per machine name (runs.machine,
 * else the host name), its latest finished run by start time, read as `show` reads it. Machines
 * are never pooled here: each run's ratios are its own, measured against its own baseline on its
 * own machine.
 */

typedef struct FleetMachine {
        char *machine;     /* the name its runs are filed under */
        char *hostname;    /* of the run shown */
        char *fingerprint; /* NULL for runs older than the host fingerprint */
        /* Its hardware class: CPU model, online CPUs, kernel and THP setting, as text */
        char *hardware;
        char *slurm; /* the run's Slurm job, "CLUSTER:JOB on NODE (PARTITION)"; NULL: not under Slurm */
        char *slurm_cluster; /* its cluster, or NULL */
        char *spec_sha256;   /* the spec it ran */
        Report *report;      /* the machine's latest run of the experiment with status done */
} FleetMachine;

typedef struct FleetQuery {
        const char *experiment;
        /* Only runs of this Slurm job, "[CLUSTER:]JOB" (a fleet's nodes), or NULL: every run */
        const char *slurm_job;
} FleetQuery;

typedef struct Fleet {
        char *experiment;
        FleetMachine *machines; /* by machine name */
        size_t n_machines;
} Fleet;

/* What a reader of the fleet must know besides its numbers, as sentences (strv; NULL when none
 * or out of memory): machines that ran different specs of the experiment (their ratios are not
 * of the same experiment everywhere), and two machine names of one host fingerprint (one machine
 * under two names, or cloned nodes: counted as two). */
char **fleet_notes(const Fleet *f);

/* Returns 0, -ENOENT when the experiment has no finished run (of the job), -EIO, -ENOMEM. */
int query_fleet(Store *s, const FleetQuery *q, Fleet **ret);
Fleet *fleet_free(Fleet *f);
static inline void fleet_freep(Fleet **f) {
        fleet_free(*f);
}
