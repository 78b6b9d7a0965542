/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "probe/report.h"

/*
 * The runner's side of the probe contract: a zeroed shared-memory file for a child's report,
 * and a checked decoding of what the probe wrote into it.
 */

typedef struct ProbeResult {
        bool loaded;         /* the probe ran in the child (magic, version and size match) */
        bool exited;         /* its destructor ran: the child exited normally */
        bool forward_failed; /* forward mode refused its library; see error */
        char effective_path[PROBE_PATH_MAX];
        uint32_t effective_family;
        char effective_prefix[16];
        char allocator_version[PROBE_TEXT_MAX];
        uint32_t n_options;
        ProbeOption options[PROBE_MAX_OPTIONS];
        uint32_t n_libraries;
        ProbeLibrary libraries[PROBE_MAX_LIBRARIES];
        char forward_library[PROBE_PATH_MAX];
        char error[PROBE_PATH_MAX];
        /* Counters summed over threads. */
        uint64_t calls[_PROBE_FUNCTION_MAX];
        uint64_t bytes_requested;
        int64_t live_bytes;
        int64_t peak_live_bytes;
        uint32_t threads;
        uint64_t bootstrap_bytes;
} ProbeResult;

/* A new memfd the size of a ProbeReport, all zeros. Returns the fd or -errno. */
int probe_report_memfd(void);

/*
 * Decodes the report in fd. A report the probe never wrote (all zeros: the probe did not
 * load) yields loaded = false and returns 0. Returns -EBADMSG for a report of another layout
 * (magic, version or size differ), -errno on I/O errors.
 */
int probe_report_decode(int fd, ProbeResult *ret);

/* "jemalloc", "mimalloc", "tcmalloc", "tbbmalloc", "glibc" for the lowest non-glibc bit of a
 * family mask (an object that is also glibc counts as the other), "none" for 0. */
const char *probe_family_name(uint32_t families);

/* Name of a counter, e.g. "posix_memalign". */
const char *probe_function_name(ProbeFunction f);

/* Number of census entries that implement an allocator other than glibc's own. */
unsigned probe_allocator_copies(const ProbeResult *r);
