/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * A cgroup v2 per child. A run owns one directory, `alloclab-<pid>` under the runner's own
 * cgroup (or under $ALLOCLAB_CGROUP_ROOT), and every child is created directly inside a fresh
 * sub-cgroup of it (runner/spawn.c), so that its whole process tree can be measured (cpu.stat,
 * memory.peak) and killed (cgroup.kill), setsid() daemons included. Where cgroups are missing or
 * not writable the run falls back to process groups and says why, once, in `why_not`; nothing
 * fails because of it.
 */

#define CGROUP_ROOT_ENV "ALLOCLAB_CGROUP_ROOT" /* a cgroup v2 directory, or "off" */

typedef struct CgroupRun {
        int fd;        /* the run's cgroup directory, or -1: process groups */
        char *path;    /* its path inside the cgroup2 hierarchy ("/alloclab-1234"), or NULL */
        char *why_not; /* why there is no cgroup; NULL when there is one */
        bool memory;   /* the memory controller is enabled for children (memory.peak, memory.max) */
        bool pids;     /* the pids controller is enabled for children (pids.max) */
} CgroupRun;

/*
 * For a service that owns its cgroup (systemd's Delegate=yes): when this process is alone in a
 * cgroup other than the root, it moves into a `supervisor` leaf below it and enables there what
 * controllers the cgroup has (memory, pids), since a cgroup that hands controllers to children
 * may hold no process itself. Runs then put their cgroups next to that leaf: returns 1 and sets
 * CGROUP_ROOT_ENV to the owned cgroup; 0 when there is nothing to take (or it is set already).
 */
int cgroup_take_delegation(void);

/* Decides where the run's children go. Returns 0 (with or without a cgroup) or -ENOMEM. */
int cgroup_run_open(CgroupRun *ret);

/* Removes the run's cgroup (its children's are gone by then) and frees *c. */
void cgroup_run_close(CgroupRun *c);

/* Hands the run's cgroup to uid:gid, for a runner that is about to take that identity: moves
 * this process into a leaf of it and gives the user what cgroup v2 delegation gives (the
 * directory, cgroup.procs, cgroup.threads, cgroup.subtree_control). Returns 0 or -errno. */
int cgroup_run_delegate(const CgroupRun *run, uid_t uid, gid_t gid);

/* A fresh, empty sub-cgroup for one child, named after its step, with the spec's limits (0:
 * none; plan_new() made sure the controllers are there): an O_DIRECTORY fd for
 * clone3(CLONE_INTO_CGROUP). Returns the fd, or -errno (the child then goes without). */
int cgroup_child_new(const CgroupRun *run, size_t step, uint64_t memory_max, uint64_t pids_max,
                     char ret_name[static 32]);

/* What the child's cgroup measured, read after the child was reaped. */
typedef struct CgroupUsage {
        uint64_t cpu_us;     /* cpu.stat usage_usec: the whole tree's CPU time */
        bool have_peak;      /* memory.peak was readable (memory controller) */
        uint64_t peak_bytes; /* memory.peak */
        bool oom_killed;     /* memory.events oom_kill > 0 */
        bool pids_limited;   /* pids.events max > 0 */
} CgroupUsage;

int cgroup_child_usage(int fd, CgroupUsage *ret);

/* How many processes are in the child's cgroup (cgroup.procs), or -errno. */
int cgroup_child_processes(int fd);

/* Kills everything in the child's cgroup (cgroup.kill). Returns 0 or -errno. */
int cgroup_child_kill(int fd);

/* Kills what is left, waits (bounded) until the cgroup is empty, removes it, closes fd. */
void cgroup_child_remove(const CgroupRun *run, int fd, const char *name);
