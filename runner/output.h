/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "runner/timeline.h"

/*
 * Child output after the clock stopped: capture files (memfds), their XXH3-128 digests, the
 * first difference against the oracle, and the metrics a child reports on ENV_METRICS_FD.
 */

#define OUTPUT_HASH_HEX_SIZE     33 /* 128 bits as hex, plus NUL */
#define OUTPUT_MAX_METRICS       64 /* per sample; more is an error */
#define OUTPUT_MAX_METRICS_BYTES 65536
#define OUTPUT_METRIC_NAME_MAX   64
#define OUTPUT_MAX_MARKS         64   /* phase marks per sample */
#define OUTPUT_PHASE_NAME_MAX    51   /* a phase's name: mem_at_NAME_bytes is a metric's name */
#define OUTPUT_STDERR_EXCERPT    2048 /* bytes of stderr kept for a failed sample */

typedef struct Digest {
        uint64_t size;
        char hex[OUTPUT_HASH_HEX_SIZE];
} Digest;

typedef struct Metric {
        char name[OUTPUT_METRIC_NAME_MAX + 1];
        double value;
} Metric;

/* The size of the file behind fd. Returns 0 or -errno. */
int output_size(int fd, uint64_t *ret);

/* A fresh, empty capture file. Returns an O_CLOEXEC fd or -errno. */
int output_memfd(const char *name);

/* Digest of the whole content of fd (from offset 0, read in bounded chunks). ret->size is set
 * in every case; a file larger than limit is not read and gives -EFBIG. Returns 0 or -errno. */
int output_digest(int fd, uint64_t limit, Digest *ret);

/* Byte offset of the first difference between two files (the shorter length when one is a
 * prefix of the other). Returns 0 or -errno. */
int output_first_difference(int a, int b, uint64_t *ret_offset);

/* The line of fd that holds byte offset (1-based, into *ret_line) and up to size - 1 bytes of
 * it from its start into buf, NUL-terminated; an offset at the end names the line after the
 * last. Returns 0 or -errno. */
int output_line_at(int fd, uint64_t offset, uint64_t *ret_line, char *buf, size_t size);

/* Copies a regular file into a new memfd (to keep an oracle that the next run will overwrite).
 * Returns the memfd, -EFBIG when the file holds more than limit bytes (nothing past the limit
 * is read), -EINVAL when it is not a regular file, or -errno. */
int output_copy_file(const char *path, const char *cwd, uint64_t limit);

/* Removes path (relative to cwd, or alloclab's cwd when NULL) if it exists. Returns 0 or -errno. */
int output_remove_file(const char *path, const char *cwd);

/* Parses "NAME VALUE" lines, and the program's phase marks, "phase NAME" lines (memory_timeline,
 * runner/timeline.h). Returns 0 with the metrics in *ret and the marks in *ret_marks (caller frees
 * both), -EBADMSG for a malformed line, -E2BIG past the limits, with the reason in *ret_why
 * (caller frees; NULL for want of memory). */
int output_parse_metrics(int fd, Metric **ret, size_t *ret_n, PhaseMark **ret_marks, size_t *ret_n_marks,
                         char **ret_why);
void phase_marks_free(PhaseMark *marks, size_t n);

/* Sets metric name to value in the list (the last value of a name counts). Returns 0, -E2BIG
 * past OUTPUT_MAX_METRICS (with the reason in *ret_why), -ENOMEM. */
int output_metric_set(Metric **list, size_t *n, const char *name, double value, char **ret_why);

/* The same for a figure alloclab adds to the program's metrics (list[0..reported) are the
 * program's): -EEXIST when the program reported that name itself, with the reason naming `from`
 * (the spec key or the feature the figure comes from). */
int output_metric_add_own(Metric **list, size_t *n, size_t reported, const char *name, double value,
                          const char *from, char **ret_why);

/* The value a spec's metric pattern (POSIX ERE, matched line by line) reads from the output in
 * fd: its group's text, or the whole match without a group, at the last line that matches.
 * Returns 1 with *ret_value, 0 when no line matches, -EBADMSG when the text is not a finite
 * number (the reason in *ret_why, caller frees), -errno. */
int output_match_metric(int fd, const char *pattern, double *ret_value, char **ret_why);

/* A new memfd holding the output in fd without the lines that match any of patterns (POSIX
 * EREs, strv; the spec's verify_ignore), the lines it left out counted into *ret_left_out (may be
 * NULL). fd is within the spec's output_limit. Returns the fd or -errno. */
int output_without_lines(int fd, char *const *patterns, uint64_t *ret_left_out);

/* The first OUTPUT_SCAN_MAX bytes of fd as a NUL-terminated string (NULL when empty), for
 * scanning stderr for allocator complaints. */
#define OUTPUT_SCAN_MAX (256 * 1024)
char *output_excerpt_all(int fd);

/* First OUTPUT_STDERR_EXCERPT bytes of fd as a NUL-terminated string (NULL when empty). */
char *output_excerpt(int fd);
