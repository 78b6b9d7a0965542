/* SPDX-License-Identifier: MIT */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

/*
 * Spawns one child and measures it: the clock runs from just before the spawn to just after
 * the reap. While the child runs the caller sleeps in one ppoll() on the child's pidfd (and an
 * optional cancel fd); nothing else happens in this process.
 */

typedef struct SpawnRequest {
        const char *exe;
        char *const *argv;
        char *const *envp;
        const char *cwd; /* or NULL */
        uint64_t timeout_ns;
        int stdout_fd; /* become the child's fds 1, 2 and ENV_METRICS_FD */
        int stderr_fd;
        int metrics_fd;
        int probe_fd;                 /* becomes PROBE_REPORT_FD when >= 0 */
        int cancel_fd;                /* readable means stop now (a signalfd), or -1 */
        const cpu_set_t *cpus;        /* pin the child here, or NULL */
        const cpu_set_t *runner_cpus; /* and move the runner here meanwhile (with cpus) */
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
        bool leftover; /* other processes of the child's group were alive at the reap */
        uint64_t wall_ns;
        struct rusage usage; /* of the child alone, from wait4() */
} SpawnResult;

/* Runs the child to completion (or timeout/cancel). Returns 0 with *ret filled, or -errno
 * when the parent itself failed (pidfd, poll); the child is never left running. */
int spawn_run(const SpawnRequest *req, SpawnResult *ret);
