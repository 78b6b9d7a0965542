/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Inside the probe: what census.c (the constructor, destructor, identification, census and exec
 * wrappers) uses of probe.c (the interposed malloc family, its state and its symbol resolution).
 * Everything here is hidden (the library's default visibility); only EXPORT symbols are seen by
 * the program.
 */
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe/report.h"

#define EXPORT      __attribute__((visibility("default")))
#define TLS         __thread __attribute__((tls_model("initial-exec")))
#define LIKELY(x)   __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define NOINLINE    __attribute__((noinline))

typedef struct Family {
        void *(*malloc)(size_t);
        void (*free)(void *);
        void *(*calloc)(size_t, size_t);
        void *(*realloc)(void *, size_t);
        void *(*reallocarray)(void *, size_t, size_t);
        int (*posix_memalign)(void **, size_t, size_t);
        void *(*aligned_alloc)(size_t, size_t);
        void *(*memalign)(size_t, size_t);
        void *(*valloc)(size_t);
        void *(*pvalloc)(size_t);
        size_t (*usable_size)(void *);
} Family;

extern Family next;                 /* the definitions every call is forwarded to */
extern char forward_prefix[16];     /* forward mode's symbol prefix, also a jemalloc prefix candidate */
extern int init_state;              /* 0: not yet, 1: resolving, 2: ready */
extern ProbeReport fallback_report; /* no runner: nobody reads it, so nothing is requested */
extern ProbeReport *report;         /* the runner's shared report, or fallback_report */
extern int report_fd;               /* the report's memfd, kept for the programs this one executes */
extern int32_t process_index;       /* this process's entry in report->processes; -1: unlisted */

/* Copies src into dst, truncated and always terminated; never allocates. */
void copy_text(char *dst, size_t size, const char *src);
/* The same for a followed by b (a symbol prefix and a name). */
void join_text(char *dst, size_t size, const char *a, const char *b);

/* A symbol defined in map itself (its own dynamic symbol table), or NULL. */
const ElfW(Sym) * find_symbol(const struct link_map *map, const char *name);

/* The address of a function or object defined in map itself (not through dlsym: see
 * find_symbol), or NULL. */
void *symbol_address(const struct link_map *map, const char *name);

/* The next definition of name after the probe (RTLD_NEXT), or NULL. */
void *next_definition(const char *name);

/* The loaded object that contains address p, or NULL. */
struct link_map *object_of(const void *p);

/* The path of the program (/proc/self/exe) into buf. */
bool own_program(char *buf, size_t size);

/* This process's entry in the report, or NULL. */
ProbeProcess *this_process(void);

/* Writes the statistics of the allocator in map (of family, symbols with prefix) after the report
 * (PROBE_REQUEST_STATS; probe/stats.c). The exit handler calls it, inside the probe. */
void write_allocator_stats(struct link_map *map, uint32_t family, const char *prefix);

/* The resident KiB of the probe's own table of live blocks (smoke runs and census track each
 * live block's requested size: 32-64 bytes a block), which the memory at exit leaves out. */
uint64_t probe_table_kib(void);

/* Adds this thread's pending live-byte change to the shared total. */
void flush_live(void);

/* The probe resolved its family (resolving it now if nobody has yet). */
bool interposer_ready(void);
/* The same without resolving. */
bool interposer_resolved(void);

/* Brackets the probe's own allocations (dlsym, identification) so they are not counted as the
 * program's: enter() returns whether this is the outermost call. */
bool interposer_enter(void);
void interposer_leave(void);
