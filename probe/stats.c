/* SPDX-License-Identifier: MIT */
/*
 * The allocator's own statistics at the started process's exit (PROBE_REQUEST_STATS), as the
 * allocator prints them, into the report's file after the report: jemalloc's malloc_stats_print
 * JSON, mimalloc's mi_stats_print_out text, glibc's malloc_info XML, tcmalloc's
 * MallocExtension_GetStats text. The runner reads and parses them (runner/allocator-stats.h).
 * Only the exit handler calls this, inside the probe: what printing allocates is not the
 * program's, and is not counted.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "probe/interposer.h"
#include "probe/report.h"

/* Appends text to the statistics, cut at PROBE_STATS_MAX. */
static void put(const char *text, size_t n) {
        uint64_t room = PROBE_STATS_MAX - report->stats_size;
        if (n > room) {
                n = (size_t) room;
                report->stats_truncated = 1;
        }
        if (n > 0 &&
            pwrite(report_fd, text, n, (off_t) (sizeof(ProbeReport) + report->stats_size)) == (ssize_t) n)
                report->stats_size += n;
}

static void put_jemalloc(void *opaque, const char *text) {
        (void) opaque;
        put(text, strlen(text));
}

static void put_mimalloc(const char *text, void *arg) {
        (void) arg;
        put(text, strlen(text));
}

static ssize_t put_stream(void *cookie, const char *buf, size_t size) {
        (void) cookie;
        put(buf, size);
        return (ssize_t) size;
}

typedef void (*JemallocStatsFn)(void (*)(void *, const char *), void *, const char *);
typedef void (*MimallocStatsFn)(void (*)(const char *, void *), void *);
typedef int (*GlibcInfoFn)(int, FILE *);
typedef void (*TcmallocStatsFn)(char *, int);

/* Each prints its allocator's statistics with put(); returns its PROBE_STATS_* form, or
 * PROBE_STATS_NONE when the allocator has no such call. */

static uint32_t jemalloc_stats(struct link_map *map, const char *prefix) {
        char name[64];
        join_text(name, sizeof(name), prefix, "malloc_stats_print");
        JemallocStatsFn print = (JemallocStatsFn) symbol_address(map, name);
        if (!print)
                return PROBE_STATS_NONE;
        print(put_jemalloc, NULL, "Ja"); /* JSON, the arenas merged (per arena: too long) */
        return PROBE_STATS_JEMALLOC_JSON;
}

static uint32_t mimalloc_stats(struct link_map *map, const char *prefix) {
        (void) prefix;
        MimallocStatsFn print = (MimallocStatsFn) symbol_address(map, "mi_stats_print_out");
        if (!print)
                return PROBE_STATS_NONE;
        print(put_mimalloc, NULL);
        return PROBE_STATS_MIMALLOC_TEXT;
}

static uint32_t glibc_stats(struct link_map *map, const char *prefix) {
        (void) prefix;
        GlibcInfoFn info = (GlibcInfoFn) symbol_address(map, "malloc_info");
        FILE *f = info ? fopencookie(NULL, "w", (cookie_io_functions_t){ .write = put_stream }) : NULL;
        if (!f)
                return PROBE_STATS_NONE;
        /* Its buffer is ours, not malloc's: malloc_info counts what is allocated as it prints, and
         * only the stream itself (a few hundred bytes) is the probe's. */
        static char buffer[4096];
        setvbuf(f, buffer, _IOFBF, sizeof(buffer));
        info(0, f);
        fclose(f);
        return PROBE_STATS_GLIBC_XML;
}

static uint32_t tcmalloc_stats(struct link_map *map, const char *prefix) {
        (void) prefix;
        TcmallocStatsFn stats = (TcmallocStatsFn) symbol_address(map, "MallocExtension_GetStats");
        size_t size = 1 << 18;
        char *buf = stats ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                          : MAP_FAILED;
        if (buf == MAP_FAILED)
                return PROBE_STATS_NONE;
        stats(buf, (int) size);
        put(buf, strnlen(buf, size));
        munmap(buf, size);
        return PROBE_STATS_TCMALLOC_TEXT;
}

void write_allocator_stats(struct link_map *map, uint32_t family, const char *prefix) {
        static const struct {
                uint32_t family;
                uint32_t (*print)(struct link_map *map, const char *prefix);
        } printers[] = {
                { PROBE_FAMILY_JEMALLOC, jemalloc_stats },
                { PROBE_FAMILY_MIMALLOC, mimalloc_stats },
                { PROBE_FAMILY_TCMALLOC, tcmalloc_stats },
                { PROBE_FAMILY_GLIBC, glibc_stats },
        };
        if (report_fd < 0)
                return; /* no runner to read them */
        report->stats_size = 0;
        report->stats_truncated = 0;
        for (size_t i = 0; i < sizeof(printers) / sizeof(printers[0]); i++)
                if (family & printers[i].family) {
                        report->stats_format = printers[i].print(map, prefix);
                        return;
                }
}
