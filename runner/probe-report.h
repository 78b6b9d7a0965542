/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe/report.h"

/*
 * The runner's side of the probe contract: a zeroed shared-memory file for a child's report,
 * and a checked decoding of what the probe wrote into it.
 */

typedef struct ProbeResult {
        bool loaded;            /* the probe ran in the child (magic, version and size match) */
        bool exited;            /* its destructor ran: the child exited normally */
        bool forward_failed;    /* forward mode refused its library; see report.error */
        bool counted;           /* calls, bytes_requested, threads and process_calls were counted */
        bool live_measured;     /* live_bytes and peak_live_bytes were measured (smoke runs) */
        bool requested_tracked; /* report.live_requested and peak_live_requested were tracked */
        bool options_known;     /* allocator version and options were read (smoke runs) */
        bool census_known;      /* the census was taken (smoke runs) */
        bool exec_seen;         /* the started process replaced its image (report.exec_*) */
        /* The report as the probe wrote it, with every string terminated and every count
         * clamped to its array. Its per-thread slots are summed below. */
        ProbeReport report;
        uint64_t calls[_PROBE_FUNCTION_MAX];
        uint64_t bytes_requested;
        int64_t live_bytes;
        int64_t peak_live_bytes;
        uint32_t threads;
        /* The most threads that called the malloc family in one process of the tree (threads
         * whose process is not known count as one process's) */
        uint32_t threads_in_one_process;
        /* The process tree: report.processes[0..n_processes), and each one's malloc-family
         * calls (those of threads past the slots are in calls only). */
        uint32_t n_processes;
        uint64_t process_calls[PROBE_MAX_PROCESSES];
        /* Summed over the listed processes that read their memory at exit (memory_processes of
         * them; PROBE_REQUEST_MEMORY): smaps_rollup's Rss, Pss_Anon and AnonHugePages, KiB. */
        uint32_t memory_processes;
        uint64_t rss_kib, pss_anon_kib, anon_huge_kib;
} ProbeResult;

/* A new memfd the size of a ProbeReport, zeros but for `requests` (PROBE_REQUEST_*), sealed
 * against resizing (the probe's test that the fd it is handed is really a report). Returns the
 * fd or -errno. */
int probe_report_memfd(uint32_t requests);

/*
 * Decodes the report in fd. A report the probe never wrote (all zeros: the probe did not
 * load) yields loaded = false and returns 0. Returns -EBADMSG for a report of another layout
 * (magic, version or size differ), -errno on I/O errors.
 */
int probe_report_decode(int fd, ProbeResult *ret);

/* The allocator's statistics text the probe wrote after the report (report.stats_size bytes),
 * terminated, into *ret; NULL when there is none. Returns 0 or -errno. */
int probe_report_stats(int fd, const ProbeResult *r, char **ret);

/* Allocator family names by bit, in PROBE_FAMILIES order (glibc last). */
typedef struct ProbeFamilyName {
        uint32_t bit;
        const char *name;
} ProbeFamilyName;
extern const ProbeFamilyName probe_family_names[PROBE_N_FAMILIES];

/* The same for a report already in memory (as it travels from a runner process to the
 * daemon); size must be sizeof(ProbeReport). */
int probe_report_decode_buffer(const void *data, size_t size, ProbeResult *ret);

/* The name of the first family of a family mask in probe_family_names order ("jemalloc"; an
 * object that is also glibc counts as the other), "none" for 0. */
const char *probe_family_name(uint32_t families);

/* Name of a counter, e.g. "posix_memalign". */
const char *probe_function_name(ProbeFunction f);

/* "started", "forked", "executed", "spawned": how a process of the tree came to be. */
const char *probe_process_how(uint32_t how);

/* Number of census entries that implement an allocator other than glibc's own. */
unsigned probe_allocator_copies(const ProbeResult *r);
