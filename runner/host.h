/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the machine was when a run was measured: enough to tell later whether two runs are
 * comparable. Read from uname, /proc and /sys; fields that cannot be read are "unknown".
 */

#include "util/sha256.h"

/* More facts, each "unknown" when unreadable (HOST_FACT_NAMES gives their names). */
typedef enum HostFact {
        HOST_MACHINE_ID,     /* /etc/machine-id: which machine */
        HOST_KERNEL_CMDLINE, /* /proc/cmdline (mitigations, isolcpus, ...) */
        HOST_CORES,          /* physical cores (distinct package/core ids) */
        HOST_NUMA_NODES,
        HOST_MEMORY_KIB, /* MemTotal */
        HOST_THP_DEFRAG,
        HOST_OVERCOMMIT, /* vm.overcommit_memory */
        HOST_ASLR,       /* kernel.randomize_va_space */
        HOST_GOVERNOR,   /* cpufreq scaling governor of CPU 0 */
        HOST_BOOST,      /* cpufreq boost / intel_pstate no_turbo, as "on"/"off" */
        _HOST_FACT_MAX,
} HostFact;

extern const char *const host_fact_names[_HOST_FACT_MAX];

typedef struct Host {
        char *hostname;
        char *kernel; /* release */
        char *cpu_model;
        unsigned cpus; /* online */
        char *glibc;
        char *thp; /* transparent_hugepage/enabled, the bracketed choice */
        char *facts[_HOST_FACT_MAX];
        /* sha256 over everything above but the hostname: two runs with the same fingerprint ran
         * on the same machine, set up the same way. */
        char fingerprint[SHA256_HEX_SIZE];
} Host;

/* Recomputes h->fingerprint from the other fields. */
void host_fingerprint(Host *h);

/* Fills *ret. Returns 0 or -ENOMEM; unreadable facts become "unknown". */
int host_read(Host *ret);
void host_done(Host *h);
