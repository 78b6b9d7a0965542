/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The allocator's own statistics at the smoke run's exit (probe/stats.c writes them as the
 * allocator prints them), and the figures read from them that allocators share, in bytes, -1
 * where an allocator does not give one:
 *
 *   allocated  bytes in blocks the program holds, as the allocator counts them (its size
 *              classes' rounding included)
 *   active     bytes in pages that hold some of those blocks
 *   resident   bytes of the allocator's memory the process has resident
 *   committed  bytes of its address space it has made usable (memory may be behind it or not)
 *   mapped     bytes the allocator has mapped from the kernel
 *   retained   bytes of address space it keeps without memory behind it
 *
 * How each allocator's text gives them is in docs/probe.md (Allocator statistics).
 */
typedef struct AllocatorFigures {
        int64_t allocated, active, resident, committed, mapped, retained;
} AllocatorFigures;

/* The figures in the order above, by name ("allocated"; in JSON "allocated_bytes"): every reader
 * and writer of them goes through this list. */
typedef struct AllocatorFigure {
        const char *name;
        size_t offset; /* of its member in AllocatorFigures */
} AllocatorFigure;
#define N_ALLOCATOR_FIGURES 6
extern const AllocatorFigure allocator_figures[N_ALLOCATOR_FIGURES];

static inline int64_t *allocator_figure_in(AllocatorFigures *f, size_t i) {
        return (int64_t *) ((char *) f + allocator_figures[i].offset);
}
static inline int64_t allocator_figure_of(const AllocatorFigures *f, size_t i) {
        return *(const int64_t *) ((const char *) f + allocator_figures[i].offset);
}

/* The figures of text, in the form the probe says (PROBE_STATS_*). Returns 0, or -EBADMSG when
 * the text is not of that form (cut short, another version's layout). */
int allocator_stats_figures(uint32_t format, const char *text, AllocatorFigures *ret);

/* {"allocated_bytes": N or null, "active_bytes", "resident_bytes", "committed_bytes",
 * "mapped_bytes", "retained_bytes"}; NULL on ENOMEM. */
json_t *allocator_figures_json(const AllocatorFigures *f);
/* The same read back: a figure that is null or missing is -1. */
void allocator_figures_from_json(const json_t *figures, AllocatorFigures *ret);

/* {"format", "truncated", "figures": {...} or null, "fragmentation": resident / allocated or
 * null, "text"}; NULL on ENOMEM. */
json_t *allocator_stats_json(uint32_t format, const char *text, bool truncated);
