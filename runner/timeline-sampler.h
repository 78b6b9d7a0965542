/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "runner/timeline.h"

/*
 * alloclab-spawner's reader of a child's memory over time (runner/timeline-sampler.c; what it
 * reads and when: runner/timeline.h). One child at a time:
 *
 *   sampler_begin()   after the child's exec: the first reading
 *   sampler_run()     readings at each tick until the child exits (it is not reaped)
 *   sampler_end()     after the reap: the readings into the memfd, everything closed
 *
 * Without pidfd_open() (Linux < 5.3) sampler_active() is false and there is nothing to run: the
 * memfd says why.
 */
typedef struct TimelineSampler {
        int out_fd, metrics_fd;
        int memory_fd; /* the children's cgroup's memory.current, or -1 */
        int procs_fd;  /* its cgroup.procs when it has no memory.current, or -1 */
        int pidfd;
        pid_t pid;
        uint32_t page_kib;
        uint64_t start_ns;
        uint64_t metrics_size;
        TimelineHeader head;
} TimelineSampler;

/* cgroup_fd: the children's cgroup the child was created in, or -1. */
void sampler_begin(TimelineSampler *s, int out_fd, int metrics_fd, int cgroup_fd, pid_t pid,
                   uint64_t start_ns, uint64_t period_ns);
bool sampler_active(const TimelineSampler *s);
void sampler_run(TimelineSampler *s);
void sampler_end(TimelineSampler *s);
