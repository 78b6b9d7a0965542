/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/*
 * Memory over time (spec memory_timeline): the resident memory of a sample's process tree, read
 * by alloclab-spawner at a fixed period while the child runs, and the program's phase marks.
 *
 * The spawner reads, at the child's exec and then at each tick: the size of the metrics file
 * first, then the tree's memory (runner/timeline-sampler.c). A `phase NAME` line the program
 * wrote to ALLOCLAB_METRICS_FD before a tick is therefore seen by that tick's size, and the
 * reading that follows is taken after the mark: the memory "at" a mark is the first reading
 * after it, at most one period later. Nothing else runs in the spawner while the child does;
 * when the run pins CPUs the spawner is on the runner's, not the child's.
 *
 * The memory is the children's cgroup's memory.current where its memory controller is enabled
 * (every page charged to the tree: anonymous, file cache, kernel), else the sum of
 * /proc/PID/statm's resident pages over the tree's processes (RSS as ps shows it).
 *
 * The spawner writes what it read into a memfd after the reap, in this layout (host byte order,
 * both ends are built from one tree): TimelineHeader, n_points TimelinePoint, n_sizes
 * TimelineSize. TimelinePoint is also the layout of the points stored in the database
 * (sample_timelines.points, little-endian).
 */

typedef enum TimelineSource {
        TIMELINE_NONE,   /* nothing could be read (see error) */
        TIMELINE_CGROUP, /* memory.current of the children's cgroup */
        TIMELINE_PROC,   /* /proc/PID/statm of each process of the tree */
} TimelineSource;

/* A reading: milliseconds since the child's creation, and the tree's memory in KiB. */
typedef struct TimelinePoint {
        uint32_t t_ms;
        uint32_t kib;
} TimelinePoint;

/* The metrics file's size grew to `size` bytes before the reading at t_ms. */
typedef struct TimelineSize {
        uint32_t t_ms;
        uint32_t size;
} TimelineSize;

typedef struct TimelineHeader {
        uint32_t source;    /* TimelineSource */
        int32_t error;      /* -errno of why nothing was read (TIMELINE_NONE), else 0 */
        uint64_t period_ns; /* between readings: the spec's, doubled each time the points were
                             * thinned out to fit TIMELINE_MAX_POINTS */
        uint32_t thinned;   /* how many times they were */
        uint32_t n_points, n_sizes;
} TimelineHeader;

/* At most this many readings per sample: past it every other reading is dropped and the period
 * doubled, so a long child is still covered from start to end. */
#define TIMELINE_MAX_POINTS    4096
/* At most this many growths of the metrics file are followed (a mark past them is not seen). */
#define TIMELINE_MAX_SIZES     256
#define TIMELINE_MIN_PERIOD_NS 1000000ULL

const char *timeline_source_to_string(TimelineSource s);

/* The runner's side (runner/timeline.c). */

/* A phase mark of the program: `phase NAME` on its metrics fd, ending at byte `end` of it. */
typedef struct PhaseMark {
        char *name;
        uint64_t end;
} PhaseMark;

/* When the program marked a phase: the time of the first reading after the mark. */
typedef struct TimelineMark {
        char *name;
        uint32_t t_ms;
} TimelineMark;

/* A sample's timeline, as read back from the spawner's memfd, and its marks' times. */
typedef struct Timeline {
        TimelineSource source;
        int error;          /* -errno, with TIMELINE_NONE */
        uint64_t period_ns; /* between the readings kept: the spec's << thinned */
        uint32_t thinned;
        TimelinePoint *points;
        size_t n_points;
        TimelineSize *sizes; /* the spawner's; none once the timeline is recorded */
        size_t n_sizes;
        TimelineMark *marks; /* set by timeline_add_metrics() */
        size_t n_marks;
} Timeline;

/* Reads the spawner's memfd into *ret. Returns 0 or -errno (-EBADMSG: not its layout). */
int timeline_read(int fd, Timeline *ret);
void timeline_done(Timeline *t);
/* timeline_done() and free() of a Timeline allocated on its own (or NULL); returns NULL. */
Timeline *timeline_free(Timeline *t);

/* The figures read from a timeline, in bytes: none (have false) without a reading after the
 * one at the exec, which is of a process that has not started to run (a child shorter than one
 * period has only that one). */
typedef struct TimelineFigures {
        bool have;
        double peak; /* the highest reading (readings can miss a peak between two of them) */
        double mean; /* time-weighted: each reading holds until the next */
        double last; /* the last reading, at most one period before the exit */
} TimelineFigures;

void timeline_figures(const Timeline *t, TimelineFigures *ret);

/* The reading right after mark m (the first whose tick saw the metrics file reach m->end), in
 * bytes, with its time in *ret_t_ms. Returns false when no reading came after the mark. */
bool timeline_at_mark(const Timeline *t, const PhaseMark *m, double *ret_bytes, uint32_t *ret_t_ms);

/* As stored (db/migrations.c, 28 -> 29): the points little-endian into a new buffer of
 * n_points * sizeof(TimelinePoint) bytes (NULL: ENOMEM), the marks as a JSON array (NULL when
 * none, or on ENOMEM with *ret_oom). */
TimelinePoint *timeline_points_le(const Timeline *t);
json_t *timeline_marks_json(const Timeline *t, bool *ret_oom);
/* Back from what is stored: points (size bytes) and marks (JSON text or NULL) into *ret.
 * Returns 0, -EBADMSG for what alloclab did not write, -ENOMEM. */
int timeline_decode(const void *points, size_t size, const char *marks, Timeline *ret);

/* Why a sample has no figure `metric` (a memory_timeline figure, spec_timeline_figure()), in
 * words, into buf: the child ended before the first reading, or before the reading after the
 * mark, or never marked the phase. Returns buf. */
const char *timeline_missing(const Timeline *t, const PhaseMark *marks, size_t n_marks, const char *metric,
                             char *buf, size_t size);

/* The figures as the sample's metrics, in bytes: mem_peak_bytes, mem_mean_bytes, mem_last_bytes,
 * and mem_at_NAME_bytes per phase mark with a reading after it (of a name marked twice, the last
 * mark counts); the marks' times into t->marks. Nothing without a reading. The program's own
 * mem_*_bytes are refused before (runner/run.c). Returns 0, -E2BIG past the metrics' limit (the
 * reason in *ret_why), -ENOMEM. */
struct Metric;
int timeline_add_metrics(Timeline *t, const PhaseMark *marks, size_t n_marks, struct Metric **list,
                         size_t *n, char **ret_why);
