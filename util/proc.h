/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/*
 * Identity of a live process across pid reuse: (pid, start time in clock ticks since boot).
 */

/* Start time of pid from /proc/PID/stat (field 22). Returns 0, -ESRCH if gone, -errno. */
int proc_start_time(pid_t pid, uint64_t *ret);
