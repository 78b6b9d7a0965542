/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The probe's report: one fixed-layout structure in shared memory that the runner creates (a
 * memfd, passed as ALLOCLAB_PROBE_FD) and the probe fills while the child runs, so a child that
 * crashes or calls _exit() still leaves its report behind. This header is the whole contract
 * between liballoclab-probe.so and the runner; the runner decodes it with size checks
 * (runner/probe-report.c) and never trusts a string to be terminated.
 *
 * Bump PROBE_REPORT_VERSION's hundreds on any layout change. The family rows (PROBE_FAMILIES) are
 * part of the layout, their order numbering the bits: the version counts them, so a report of a
 * probe built with other families is refused, not misread.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define PROBE_REPORT_MAGIC   UINT64_C(0x31424f52504c4c41) /* "ALLPROB1" */
#define PROBE_REPORT_VERSION (900 + PROBE_N_FAMILIES)

#define PROBE_ENV_FD              "ALLOCLAB_PROBE_FD"
#define PROBE_ENV_PARENT          "ALLOCLAB_PROBE_PARENT" /* the entry of the process that exec'd this image */
#define PROBE_ENV_FORWARD_LIBRARY "ALLOCLAB_PROBE_FORWARD_LIBRARY"
#define PROBE_ENV_FORWARD_PREFIX  "ALLOCLAB_PROBE_FORWARD_PREFIX"
#define PROBE_REPORT_FD           4 /* the fd number the runner gives children */

/* The report's file holds the report, then room for the allocator's statistics text (sparse:
 * nothing of it costs unless written), at most PROBE_STATS_MAX bytes. */
#define PROBE_STATS_MAX   (128u << 10)
#define PROBE_REPORT_FILE (sizeof(ProbeReport) + PROBE_STATS_MAX)

/* The form of the statistics text (ProbeReport.stats_format). */
enum {
        PROBE_STATS_NONE,
        PROBE_STATS_JEMALLOC_JSON, /* malloc_stats_print(..., "Ja"): JSON, arenas merged */
        PROBE_STATS_MIMALLOC_TEXT, /* mi_stats_print_out() */
        PROBE_STATS_GLIBC_XML,     /* malloc_info(0, ...) */
        PROBE_STATS_TCMALLOC_TEXT, /* MallocExtension_GetStats() */
};

#define PROBE_PATH_MAX      256
#define PROBE_TEXT_MAX      64
#define PROBE_MAX_OPTIONS   32
#define PROBE_MAX_LIBRARIES 32
#define PROBE_MAX_SLOTS     64 /* per-thread counter slots; later threads share the last one */
#define PROBE_MAX_PROCESSES 32 /* entries of the process tree; later processes are not listed */
/* The report's descriptor, kept close-on-exec at or above this number for the programs a probed
 * process executes (handed over only to one that loads the probe too). */
#define PROBE_KEPT_FD_MIN   500

typedef enum ProbeFunction {
        PROBE_MALLOC,
        PROBE_FREE,
        PROBE_CALLOC,
        PROBE_REALLOC,
        PROBE_REALLOCARRAY,
        PROBE_POSIX_MEMALIGN,
        PROBE_ALIGNED_ALLOC,
        PROBE_MEMALIGN,
        PROBE_VALLOC,
        PROBE_PVALLOC,
        PROBE_MALLOC_USABLE_SIZE,
        PROBE_NEW,    /* C++ operator new and new[], every form (nothrow, aligned) */
        PROBE_DELETE, /* C++ operator delete and delete[], every form (sized, aligned, nothrow) */
        _PROBE_FUNCTION_MAX,
} ProbeFunction;

/*
 * The allocator families the probe tells apart, one row each, in the order that names an object
 * of several (one that is also glibc counts as the other):
 *
 *   X(ID, name, marker, also, shim, prefixed, identify)
 *
 * marker: a symbol only the family's objects define; also: a second symbol they define too, or
 * NULL; shim: the symbol of a forwarding shim of the family (an object that serves malloc but
 * implements nothing, counted only where shims are asked for), or NULL; prefixed: the marker may
 * carry a symbol prefix (jemalloc built with --with-jemalloc-prefix); identify: the function of
 * probe/census.c that reads the version and options of the one serving malloc, or NULL. A new
 * family is a row here (before glibc's, which names an object last) and its entry in the catalog
 * (configs/catalog.c); rows are numbered by their order, and the report's version follows.
 */
#define PROBE_FAMILIES(X)                                                                                   \
        X(JEMALLOC, "jemalloc", "mallctl", NULL, NULL, true, identify_jemalloc)                             \
        X(MIMALLOC, "mimalloc", "mi_malloc", NULL, NULL, false, identify_mimalloc)                          \
        X(TCMALLOC, "tcmalloc", "tc_malloc", NULL, NULL, false, identify_tcmalloc)                          \
        X(TBBMALLOC, "tbbmalloc", "scalable_malloc", NULL, "__TBB_malloc_proxy", false, NULL)               \
        X(SCUDO, "scudo", "__scudo_print_stats", NULL, NULL, false, identify_scudo)                         \
        X(GLIBC, "glibc", "__libc_malloc", "gnu_get_libc_version", NULL, false, identify_glibc)

#define PROBE_FAMILY_INDEX_(id, ...) PROBE_FAMILY_INDEX_##id,
enum { PROBE_FAMILIES(PROBE_FAMILY_INDEX_) PROBE_N_FAMILIES };

/* Allocator families, as a bit mask for objects that carry more than one. */
#define PROBE_FAMILY_BIT_(id, ...) PROBE_FAMILY_##id = 1 << PROBE_FAMILY_INDEX_##id,
typedef enum ProbeFamily { PROBE_FAMILIES(PROBE_FAMILY_BIT_) } ProbeFamily;

/* Report state bits, in the order the probe sets them. */
enum {
        PROBE_STATE_LOADED = 1 << 0,         /* constructor ran, real functions resolved */
        PROBE_STATE_IDENTITY = 1 << 1,       /* effective allocator (path, family, prefix) filled */
        PROBE_STATE_CENSUS = 1 << 2,         /* census filled (again at exit) */
        PROBE_STATE_EXITED = 1 << 3,         /* destructor ran: a normal exit */
        PROBE_STATE_FORWARD_FAILED = 1 << 4, /* forward mode refused the library; see error */
        PROBE_STATE_LIVE_BYTES = 1 << 5,     /* live and peak bytes were measured */
        PROBE_STATE_OPTIONS = 1 << 6,        /* allocator version and effective options filled */
        PROBE_STATE_EXEC = 1 << 7,           /* the process replaced its image: exec_* filled */
        PROBE_STATE_COUNTERS = 1 << 8,       /* calls, bytes requested and threads were counted */
        /* live and peak requested bytes were tracked through every call (cleared when a process
         * could not keep its table of live blocks) */
        PROBE_STATE_LIVE_REQUESTED = 1 << 9,
        /* a process past the table (PROBE_MAX_PROCESSES) ran with another LD_PRELOAD than the
         * started process, or executed a program without the probe */
        PROBE_STATE_UNLISTED_FOREIGN = 1 << 10,
        /* a process past the table was CPython without PYTHONMALLOC=malloc (pymalloc: an
         * allocator layer of its own) */
        PROBE_STATE_UNLISTED_PYMALLOC = 1 << 11,
};

/* What the runner asks of the probe, written into the report before the child starts. The
 * untimed smoke run asks for all of them: they do not vary from sample to sample, and they
 * cost. Counters take every call through the probe's slow path instead of straight to the
 * allocator (tens of instructions a call); live bytes add an allocator size query to every
 * malloc and free (a few nanoseconds, more under jemalloc). The census and the allocator's
 * version and options cost start-up time: jemalloc's first mallctl builds its statistics
 * tables (~190,000 instructions, ~40 page faults). Without any of them a report still names
 * the allocator that served malloc, and the process tree. */
enum {
        PROBE_REQUEST_COUNTERS = 1 << 0,   /* calls per function, bytes requested, threads */
        PROBE_REQUEST_IDENTITY = 1 << 1,   /* version, effective options and census */
        PROBE_REQUEST_LIVE_BYTES = 1 << 2, /* with the counters: live and peak bytes */
        /* each process's memory at its exit, from /proc/self/smaps_rollup (the kernel walks the
         * process's page tables: about 0.5 ms per 100 MiB resident in 4 KiB pages) */
        PROBE_REQUEST_MEMORY = 1 << 3,
        /* the started process's allocator's own statistics at its exit, as the allocator prints
         * them, into the report's file after the report (PROBE_STATS_*) */
        PROBE_REQUEST_STATS = 1 << 4,
        PROBE_REQUEST_SMOKE = PROBE_REQUEST_COUNTERS | PROBE_REQUEST_IDENTITY | PROBE_REQUEST_LIVE_BYTES |
                              PROBE_REQUEST_MEMORY | PROBE_REQUEST_STATS,
};

typedef struct ProbeOption {
        char name[PROBE_TEXT_MAX];
        char value[PROBE_TEXT_MAX];
} ProbeOption;

/* Whether program (a path) is CPython serving small objects from pymalloc's arenas, given its
 * PYTHONMALLOC (NULL: unset): python, python3, python3.11 without malloc or malloc_debug. The
 * probe sets PROBE_STATE_UNLISTED_PYMALLOC by it, and the runner's notes (options_own_layer())
 * say it: one rule for both. Needs _GNU_SOURCE (basename). */
static inline bool probe_uses_pymalloc(const char *program, const char *pythonmalloc) {
        const char *base = basename(program);
        bool cpython =
                strncmp(base, "python", 6) == 0 && strspn(base + 6, "0123456789.") == strlen(base + 6);
        return cpython && !(pythonmalloc && strncmp(pythonmalloc, "malloc", 6) == 0);
}

/* How a process of the tree came to be. */
enum {
        PROBE_PROCESS_STARTED = 1,  /* the process the runner started */
        PROBE_PROCESS_FORKED = 2,   /* a child of `parent`, the same program */
        PROBE_PROCESS_EXECUTED = 3, /* `parent` (the same pid) replaced its image with this one */
        PROBE_PROCESS_SPAWNED = 4,  /* a child `parent` started with posix_spawn */
};

/* A process of the measured tree that loaded the probe. The started process is entry 0; the
 * programs executed in a process and its children follow. Calls are counted in the slots that
 * name the entry. */
typedef struct ProbeProcess {
        int32_t pid;
        int32_t parent; /* index of the entry it came from; -1 for the started process */
        uint32_t how;   /* PROBE_PROCESS_* */
        uint32_t family;
        uint32_t copies; /* with PROBE_REQUEST_IDENTITY: loaded objects implementing an allocator
                          * other than glibc's (at start-up); else 0 */
        /* With PROBE_REQUEST_MEMORY, once the process exited normally (memory_read 1): its
         * smaps_rollup's Rss, Pss_Anon (its share of anonymous memory) and AnonHugePages (the
         * anonymous memory in transparent huge pages), in KiB */
        uint32_t memory_read;
        uint64_t rss_kib, pss_anon_kib, anon_huge_kib;
        char program[PROBE_PATH_MAX];        /* /proc/self/exe */
        char effective_path[PROBE_PATH_MAX]; /* the object that serves its malloc */
        /* Its last exec of a program that does not load the probe (so that program is not in the
         * tree): the program and the LD_PRELOAD it gets. */
        char unprobed_exec[PROBE_PATH_MAX];
        char unprobed_preload[PROBE_PATH_MAX];
        char preload[PROBE_PATH_MAX * 2]; /* the LD_PRELOAD it runs with ("" when unset) */
} ProbeProcess;

typedef struct ProbeLibrary {
        char path[PROBE_PATH_MAX];
        uint32_t families; /* ProbeFamily bits */
        char prefix[16];   /* symbol prefix of a prefixed jemalloc build ("je_", "_rjem_") */
} ProbeLibrary;

/* Counters of one thread, on their own cache lines; only that thread writes them. */
typedef struct ProbeSlot {
        uint64_t calls[_PROBE_FUNCTION_MAX];
        uint64_t bytes_requested; /* with PROBE_STATE_COUNTERS, as calls */
        int64_t live_bytes; /* with PROBE_STATE_LIVE_BYTES: usable bytes allocated minus freed by this thread
                             */
        int32_t process;    /* the thread's process entry; -1: unlisted, or the shared last slot */
        uint32_t pad[3];
} __attribute__((aligned(64))) ProbeSlot;

typedef struct ProbeReport {
        uint64_t magic;
        uint32_t version;
        uint32_t size; /* sizeof(ProbeReport), checked by the reader */
        uint32_t state;
        int32_t pid;
        uint32_t requests; /* PROBE_REQUEST_*, set by the runner; the probe only reads it */
        uint32_t reserved;

        /* The started process's program as it is now (after its execs, the last one's), and
         * the shared object whose malloc it reaches, and what that is. */
        char effective_path[PROBE_PATH_MAX];
        uint32_t effective_family;
        char effective_prefix[16];
        char allocator_version[PROBE_TEXT_MAX];
        uint32_t n_options;
        ProbeOption options[PROBE_MAX_OPTIONS];

        /* Every loaded object that implements an allocator. */
        uint32_t n_libraries;
        ProbeLibrary libraries[PROBE_MAX_LIBRARIES];

        char forward_library[PROBE_PATH_MAX];
        char error[PROBE_PATH_MAX];

        /* The last exec of the process the runner started (not of its children), as it was
         * called: the program, and the LD_PRELOAD its new image gets (exec_preload_set 0: none). */
        char exec_path[PROBE_PATH_MAX];
        char exec_preload[PROBE_PATH_MAX * 2];
        uint32_t exec_preload_set;
        uint32_t exec_pad;

        uint32_t n_processes; /* entries claimed; more than PROBE_MAX_PROCESSES: some unlisted */
        uint32_t pad2;
        ProbeProcess processes[PROBE_MAX_PROCESSES];

        uint32_t n_slots; /* threads that called the malloc family */
        uint32_t pad;
        int64_t peak_live_bytes;  /* maximum of the summed live bytes, see probe.c */
        int64_t live_bytes;       /* the summed live bytes at the last flush */
        uint64_t bootstrap_bytes; /* served from the static arena while dlsym resolved */
        /* With PROBE_STATE_LIVE_REQUESTED: the bytes the program asked for and has not freed (the
         * same under every allocator, unlike usable bytes), summed over the tree, and its peak */
        int64_t live_requested;
        int64_t peak_live_requested;
        /* With PROBE_REQUEST_STATS, once the started process exited normally: the statistics
         * text's form and size (in the file after the report), and whether it was cut at
         * PROBE_STATS_MAX */
        uint32_t stats_format;
        uint32_t stats_truncated;
        uint64_t stats_size;
        ProbeSlot slots[PROBE_MAX_SLOTS];
} ProbeReport;
