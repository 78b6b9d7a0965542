/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "configs/spec.h"

/*
 * The quiet-machine guard (spec key quiet): how much the rest of the machine works while the
 * run measures, and a bounded wait for it to calm down. Only ever called between children,
 * never while one runs.
 *
 * Other work is the machine's busy CPU time (/proc/stat, every process and the kernel) less the
 * run's own (its children's, measured exactly, and this process's), plus the time the
 * hypervisor took from the virtual CPUs (steal): what a neighbour takes, and nothing the run's
 * own children cause. CPU pressure and load are read as well, for the spec limits that ask for
 * them; both count the run's own children.
 */
typedef struct QuietReading {
        double cpu_some_avg10; /* NAN when the kernel has no PSI */
        double load1;          /* NAN when unreadable */
        double other_cpu;      /* CPUs of other work over the last 100 ms, NAN when not read */
} QuietReading;

/* A reading of the machine's CPU counters, taken before and after an interval. */
typedef struct MachineTimes {
        bool valid;        /* /proc/stat was read */
        uint64_t busy_ns;  /* every CPU's busy time: user, nice, system, irq, softirq */
        uint64_t steal_ns; /* time the hypervisor ran something else on the virtual CPUs */
        uint64_t own_ns;   /* this process's CPU time */
        uint64_t at_ns;    /* CLOCK_MONOTONIC */
} MachineTimes;

void machine_times_read(MachineTimes *ret);

/* Other work over an interval, in ns of CPU time. */
typedef struct OtherWork {
        uint64_t cpu_ns;   /* busy time that was not the run's own */
        uint64_t steal_ns; /* time the hypervisor took */
        uint64_t elapsed_ns;
} OtherWork;

/* Other work between two readings, given the CPU time of the run's children in it. Fails
 * (false) when either reading is missing. */
bool other_work_between(const MachineTimes *a, const MachineTimes *b, uint64_t children_cpu_ns,
                        OtherWork *ret);

/* Whether other work stayed within the limit (max_other_cpu CPUs on average over the interval).
 * The kernel counts in ticks: what one tick per CPU at either end can add is not held against
 * the machine. */
bool other_work_within(const SpecQuiet *q, const OtherWork *w);

/* Reads until the machine is within the limits or max_wait_ns has passed, polling every 100 ms
 * (other work is read over each 100 ms: a spec that waits pays that before every sample; one
 * that never waits reads pressure and load alone). Returns whether it was quiet; *ret is the
 * last reading, *ret_waited_ns the time spent. */
bool quiet_wait(const SpecQuiet *q, QuietReading *ret, uint64_t *ret_waited_ns);
