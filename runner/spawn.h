/* SPDX-License-Identifier: MIT */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include "runner/cgroup.h"
#include "runner/counters.h"

/*
 * Spawns one child and measures it: the child is created inside the run's children's cgroup
 * when given one, and the clock runs from just before its creation to just after its reap
 * (runner/spawn.c). While the child runs the caller sleeps in one ppoll() on the spawner's socket
 * (and an optional cancel fd); nothing else happens in this process.
 */

typedef struct SpawnRequest {
        const char *exe;
        char *const *argv;
        char *const *envp;
        const char *cwd; /* or NULL */
        uint64_t timeout_ns;
        int stdin_fd;  /* > 0: becomes the child's fd 0; otherwise fd 0 is /dev/null */
        int stdout_fd; /* become the child's fds 1, 2 and ENV_METRICS_FD */
        int stderr_fd;
        int metrics_fd;
        int probe_fd;                 /* becomes PROBE_REPORT_FD when >= 0 */
        int cancel_fd;                /* readable means stop now (a signalfd), or -1 */
        const cpu_set_t *cpus;        /* pin the child here, or NULL */
        const cpu_set_t *runner_cpus; /* and keep the runner here (with cpus) */
        CgroupRun *cgroup;    /* create the child in its children's cgroup (runner/cgroup.h), or NULL */
        bool cgroup_required; /* the cgroup holds limits: fail rather than go without it */
        /* > 0: the spawner reads the tree's memory this often into timeline_fd, a memfd
         * (runner/timeline.h), filled once the child is reaped */
        uint64_t timeline_period_ns;
        int timeline_fd;
} SpawnRequest;

typedef enum SpawnEnd {
        SPAWN_EXITED,      /* exit_code is valid */
        SPAWN_SIGNALED,    /* signal is valid */
        SPAWN_TIMEOUT,     /* killed by us at the timeout */
        SPAWN_CANCELED,    /* killed by us because cancel_fd became readable */
        SPAWN_EXEC_FAILED, /* exec_errno is valid; nothing was measured */
} SpawnEnd;

typedef struct SpawnResult {
        SpawnEnd end;
        int exit_code;
        int signal;
        int exec_errno;
        bool leftover; /* other processes of the child's cgroup (or group) were alive at the reap */
        uint64_t wall_ns;
        struct rusage usage; /* of the child and the descendants it waited for, from wait4() */
        /* The whole tree: from the child's cgroup when it had one (in_cgroup), else from usage
         * (user + system time, and the largest single process's RSS). */
        bool in_cgroup;
        bool peak_from_cgroup;       /* tree_peak_kib is memory.peak, not ru_maxrss */
        bool oom_killed;             /* memory.events: the kernel killed in the tree (memory_max) */
        bool pids_limited;           /* pids.events: a fork failed at pids_max */
        uint32_t leftover_processes; /* with in_cgroup: how many were alive at the reap */
        uint64_t tree_cpu_us;
        uint64_t tree_peak_kib;
        CounterValues counters; /* the tree's event counts (runner/counters.h) */
} SpawnResult;

/* "exit code 3", "killed by signal 11 (Segmentation fault)", "cannot execute: No such file or
 * directory": how an exited, killed or unexecutable child ended, into buf; "" otherwise (a
 * timeout or a cancel, which the caller words). Returns buf. */
const char *spawn_describe_end(const SpawnResult *r, char *buf, size_t size);

/* Runs the child to completion (or timeout/cancel). Returns 0 with *ret filled, or -errno
 * when the parent itself failed (the spawner, poll); the child is never left running. */
int spawn_run(const SpawnRequest *req, SpawnResult *ret);
