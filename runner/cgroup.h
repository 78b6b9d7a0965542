/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * A cgroup v2 for the children of a run. A run owns one directory, `alloclab-<pid>-<n>` under the
 * runner's own cgroup (or under $ALLOCLAB_CGROUP_ROOT), and every child is created directly
 * inside its `children` sub-cgroup (runner/spawn.c), one child at a time, so that its whole
 * process tree can be measured (cpu.stat, memory.peak) and killed (cgroup.kill), setsid()
 * daemons included. The cgroup is emptied between children and reused: a fresh cgroup per
 * child costs about 0.6 ms inside the clock on Linux 6.x (a new css_set on every clone), a
 * reused one nothing measurable; per-child figures are differences of the cgroup's counters.
 * Where cgroups are missing or not writable the run falls back to process groups and says why,
 * once, in `why_not`; nothing fails because of it.
 */

#define CGROUP_ROOT_ENV "ALLOCLAB_CGROUP_ROOT" /* a cgroup v2 directory, or "off" */

typedef struct CgroupRun {
        char *path;      /* the run's cgroup directory ("/sys/fs/cgroup/alloclab-1234-0"), or NULL */
        char *why_not;   /* why there is no cgroup; NULL when there is one */
        int fd;          /* the run's cgroup directory, or -1: process groups */
        int children_fd; /* the children's cgroup, where every child is created, or -1 */
        char children_name[32];
        unsigned generation; /* children's cgroups made so far (see cgroup_children_empty) */
        bool killed;         /* cgroup.kill was written to the children's cgroup */
        bool memory;         /* the memory controller is enabled for children (memory.peak, memory.max) */
        bool pids;           /* the pids controller is enabled for children (pids.max) */
        uint64_t memory_max, pids_max; /* the spec's limits, for each children's cgroup */
        /* Hosts that mount cgroup v1 hierarchies beside the v2 one may have the pids controller
         * only in v1: with pids_max the run then also owns a cgroup there, which the process
         * that creates the children (the spawner) joins around each child (outside the clock:
         * the child inherits it at clone). */
        int pids_v1_fd;   /* the run's cgroup in the v1 pids hierarchy, or -1 */
        int pids_home_fd; /* the runner's own cgroup there (the spawner's too), to return to */
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

/* Removes the run cgroups (v2, and v1 pids) of alloclab processes that are gone, killing what
 * they left running, deepest cgroups first. It may wait (for processes to leave, bounded): call
 * it where waiting is harmless, never from an event loop (alloclab run before planning; the
 * daemon's runner process before it runs). */
void cgroup_remove_stale(void);

/* For pids_max where the v2 cgroup lacks the pids controller: a cgroup of the run's in the v1
 * pids hierarchy (see CgroupRun). Returns whether the pids controller is now there. */
bool cgroup_run_pids_v1(CgroupRun *run);

/* Writes the spec's limits into the children's cgroup (0: none; the caller made sure the
 * controllers are there). Returns 0 or -errno. */
int cgroup_run_limit(CgroupRun *run, uint64_t memory_max, uint64_t pids_max);

/* Removes the run's cgroups (killing what is left in them) and frees *c. */
void cgroup_run_close(CgroupRun *c);

/* Hands the run's cgroup to uid:gid, for a runner that is about to take that identity: moves
 * this process into a leaf of it and gives the user what cgroup v2 delegation gives (the
 * directory, cgroup.procs, cgroup.threads, cgroup.subtree_control). Returns 0 or -errno. */
int cgroup_run_delegate(const CgroupRun *run, uid_t uid, gid_t gid);

/* What the child's cgroup measured, read after the child was reaped. */
typedef struct CgroupUsage {
        bool have_cpu;       /* the child was in the children's cgroup: cpu_us is its tree's */
        uint64_t cpu_us;     /* cpu.stat usage_usec: the whole tree's CPU time */
        bool have_peak;      /* memory.peak was reset for the child and read (memory controller) */
        uint64_t peak_bytes; /* memory.peak */
        bool oom_killed;     /* memory.events oom_kill went up */
        bool pids_limited;   /* pids.events max went up */
} CgroupUsage;

/* One child's share of the run's cgroups: their counters when the child is created, memory.peak
 * reset for it where the kernel can (Linux 6.12), and the child's creator in the v1 pids cgroup
 * when that stands in. Opened before the child starts, closed after it was reaped (in_children: it was
 * created in the children's cgroup), both outside the clock; done() undoes an open one. */
typedef struct CgroupWindow {
        const CgroupRun *run;
        uint64_t cpu_us, oom_kills, pids_max_events, pids_v1_max_events;
        int peak_fd;    /* memory.peak, reset for this window, or -1 */
        pid_t creator;  /* the process that creates the child */
        bool joined_v1; /* creator is in the v1 pids cgroup */
} CgroupWindow;

int cgroup_window_open(const CgroupRun *run, pid_t creator, CgroupWindow *ret);
int cgroup_window_close(CgroupWindow *w, bool in_children, CgroupUsage *ret);
void cgroup_window_done(CgroupWindow *w);

/* How many processes are in the child's cgroup (cgroup.procs), or -errno. */
int cgroup_child_processes(int fd);

/* Kills everything in the children's cgroup (cgroup.kill). Returns 0 or -errno. */
int cgroup_children_kill(CgroupRun *run);

/* Kills what the last child left in the children's cgroup and waits (bounded) until it is
 * empty, for the next child. A cgroup that was killed is replaced by a fresh one: on Linux 6.x a
 * child cloned into a cgroup after a cgroup.kill there can be killed at birth (the kill
 * sequence CLONE_INTO_CGROUP compares is the parent's cgroup's). */
void cgroup_children_empty(CgroupRun *run);
