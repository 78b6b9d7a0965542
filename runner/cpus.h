/* SPDX-License-Identifier: MIT */
#pragma once

#include <sched.h>
#include <stdbool.h>

#include "configs/spec.h"

/*
 * CPU placement (spec key cpus): the CPUs children are pinned to, and the ones the runner
 * moves to so that it stays off them while a child runs, when there are enough CPUs.
 */
typedef struct CpuPlacement {
        bool pinned;      /* children are pinned to `child` */
        cpu_set_t child;  /* the children's CPUs */
        cpu_set_t runner; /* the runner's while a child runs: the others, or all when none are left */
} CpuPlacement;

/*
 * From the spec and the CPUs this process may use (sched_getaffinity). auto: the highest
 * allowed CPU other than 0, and the runner off its SMT siblings (sysfs topology) when that
 * leaves it a CPU; fewer than two allowed CPUs: no pinning. A list: every CPU must be allowed.
 * Returns 0; -EINVAL with *ret_message for a CPU this process cannot use; -ENOMEM.
 */
int cpus_place(const Spec *s, CpuPlacement *ret, char **ret_message);

/* "1", "0,2-3": a set as a CPU list (the kernel's format). Caller frees; NULL on ENOMEM. */
char *cpus_format(const cpu_set_t *set);
