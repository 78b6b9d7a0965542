/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * The kernel's event counters of a child's whole process tree (perf_event_open(2)), counted from
 * its exec to its reap, with nothing in the runner running while it runs.
 *
 * How: before each child, alloclab-spawner opens a fresh set of counters on itself, disabled,
 * with inherit and enable_on_exec. The child inherits a copy that the kernel enables at its exec
 * (the spawner's own stays off and counts nothing); the child's children inherit it in turn, and
 * when a process of the tree exits its counts are added to the spawner's counter, read after the
 * reap and closed. Nothing is read or opened between the clock's start and its stop.
 *
 * Fresh for each child, not one set for all: the kernel may swap a parent's and a child's
 * identical counter contexts at a context switch (an optimisation), so the counters the spawner
 * opened can end up in the child; when that child exits they stop for good, and a set kept for
 * the next child would count nothing (it did, from the eighth child of a run on).
 *
 * Hardware counters need a PMU, which most virtual machines lack; a counter that cannot be opened
 * is absent (stored as NULL, never as 0), and counters_describe() says once per run why.
 * COUNTERS(X): X(ID, column, perf type, perf config, unit) in the order of the samples' columns.
 */
#define COUNTER_CACHE_EVENT(id, op, result)                                                                 \
        ((id) | (PERF_COUNT_HW_CACHE_OP_##op << 8) | (PERF_COUNT_HW_CACHE_RESULT_##result << 16))
#define COUNTERS(X)                                                                                         \
        X(PAGE_FAULTS, "page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS)                        \
        X(CONTEXT_SWITCHES, "context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES)         \
        X(CPU_MIGRATIONS, "cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS)               \
        X(CYCLES, "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES)                                   \
        X(INSTRUCTIONS, "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS)                     \
        X(DTLB_LOAD_MISSES, "dtlb_load_misses", PERF_TYPE_HW_CACHE,                                         \
          COUNTER_CACHE_EVENT(PERF_COUNT_HW_CACHE_DTLB, READ, MISS))                                        \
        X(CACHE_MISSES, "cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES)

#define COUNTER_INDEX_(id, ...) COUNTER_##id,
typedef enum Counter { COUNTERS(COUNTER_INDEX_) N_COUNTERS } Counter;

extern const char *const counter_names[N_COUNTERS];

/* A child's counts: value[c] is meaningful where bit c of `have` is set. A count the kernel
 * could only estimate (the PMU was shared out among more counters than it has, and this one ran
 * part of the time) is scaled to the whole time, as perf stat does, and its bit set in `scaled`. */
typedef struct CounterValues {
        uint64_t value[N_COUNTERS];
        uint32_t have;
        uint32_t scaled;
} CounterValues;

static inline bool counter_have(const CounterValues *v, Counter c) {
        return v->have & (1u << c);
}

/* A child's counters: an fd per counter, -1 where it could not be opened. */
typedef struct CounterSet {
        int fd[N_COUNTERS];
} CounterSet;

/* Opens every counter on the calling process (disabled, inherit, enable_on_exec), for the next
 * child it creates. Never fails: what cannot be opened stays -1. */
void counters_open(CounterSet *set);
/* What the child's tree counted, once it is reaped. */
void counters_read(const CounterSet *set, CounterValues *ret);
void counters_close(CounterSet *set);

/* Whether this process can open counter c; if not, why not in words into *ret_why (static). */
bool counters_can_open(Counter c, const char **ret_why);

/* Which counters this process can open, and why the others cannot, for the run's record:
 * "page_faults context_switches cpu_migrations; hardware counters unavailable: no PMU on this
 * machine (perf_event_open: No such file or directory)". Returns a malloc'ed text or NULL. */
char *counters_describe(void);
