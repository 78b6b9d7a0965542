/* SPDX-License-Identifier: MIT */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include "runner/counters.h"

/*
 * What alloclab and alloclab-spawner (runner/spawner.c) say to each other over their
 * SOCK_SEQPACKET socket, one message each way per step, in this order:
 *
 *   request  alloclab -> spawner  SpawnWireRequest; fds: SPAWN_WIRE_FD_* (the strings memfd
 *                                  holds exe, cwd if any, argv and envp, each NUL-terminated)
 *   started  spawner -> alloclab  SpawnWireStarted
 *   ended    spawner -> alloclab  SpawnWireEnded, once the child is reaped (not after a failed
 *                                  exec: the spawner has reaped it already)
 *
 * Both ends are built from one tree, so the layout is this header's, unversioned.
 */

/* The fds of a request, in this order; those whose flag is clear are absent. */
enum {
        SPAWN_WIRE_FD_STRINGS, /* memfd */
        SPAWN_WIRE_FD_STDOUT,
        SPAWN_WIRE_FD_STDERR,
        SPAWN_WIRE_FD_METRICS,
        SPAWN_WIRE_FD_STDIN,    /* with has_stdin */
        SPAWN_WIRE_FD_PROBE,    /* with has_probe */
        SPAWN_WIRE_FD_CGROUP,   /* with has_cgroup */
        SPAWN_WIRE_FD_TIMELINE, /* with has_timeline: a memfd for the readings (runner/timeline.h) */
        SPAWN_WIRE_MAX_FDS,
};

typedef struct SpawnWireRequest {
        uint32_t n_argv, n_envp;
        uint64_t strings_size;
        bool has_cwd, has_stdin, has_probe, has_cgroup, cgroup_required, has_cpus, has_timeline;
        cpu_set_t cpus;
        uint64_t timeline_period_ns; /* with has_timeline: read the tree's memory this often */
} SpawnWireRequest;

typedef struct SpawnWireStarted {
        int32_t error;      /* the spawner could not create the child: -errno; else 0 */
        int32_t exec_errno; /* the child could not exec: its errno (it is reaped); else 0 */
        int32_t pid;
        bool in_cgroup;    /* created inside the cgroup (else the cgroup refused it) */
        uint64_t start_ns; /* CLOCK_MONOTONIC, just before the child was created (or told "go") */
} SpawnWireStarted;

typedef struct SpawnWireEnded {
        int32_t status; /* from wait4() */
        struct rusage usage;
        uint64_t end_ns;        /* CLOCK_MONOTONIC, just after the reap */
        CounterValues counters; /* the tree's, from its exec to the reap (runner/counters.h) */
} SpawnWireEnded;

/* The fd the spawner finds its socket at. */
#define SPAWN_WIRE_SOCKET_FD 3

/* Sends msg (size bytes) with n_fds fds. Returns 0 or -errno (-EPIPE: the other end is gone). */
int wire_send(int sock, const void *msg, size_t size, const int *fds, size_t n_fds);

/* Receives one message of exactly size bytes into msg and up to max_fds fds (close-on-exec)
 * into fds, their count into *ret_n_fds. Returns 0, -ECONNRESET when the other end is gone,
 * -EBADMSG for a message of another size (its fds closed), or -errno. */
int wire_recv(int sock, void *msg, size_t size, int *fds, size_t max_fds, size_t *ret_n_fds);
