/* SPDX-License-Identifier: MIT */
/*
 * Everything here runs after the child was reaped, outside the timed region. Files are read
 * in bounded chunks: no output, however large or sparse, costs more than a chunk of memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h> /* memfd_create */
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "runner/output.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/strv.h"
#include "util/text.h"

int output_memfd(const char *name) {
        int fd = memfd_create(name, MFD_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

/* Outputs are read in chunks of this size with pread(): memory stays bounded whatever the
 * file's size, and a sparse memfd's holes read as zeros without being allocated (mapping one
 * would fault in a page per hole). */
#define OUTPUT_CHUNK (256 * 1024)

int output_size(int fd, uint64_t *ret) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        *ret = (uint64_t) st.st_size;
        return 0;
}

/* Reads the first max bytes of fd (from offset 0) into a new NUL-terminated buffer; returns its
 * length, or -errno. */
static ssize_t read_prefix(int fd, size_t max, char **ret) {
        _cleanup_free_ char *buf = malloc(max + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t have = read_full_at(fd, buf, max, 0);
        if (have < 0)
                return have;
        buf[have] = 0;
        *ret = TAKE_PTR(buf);
        return have;
}

int output_digest(int fd, uint64_t limit, Digest *ret) {
        uint64_t size;
        int r = output_size(fd, &size);
        if (r < 0)
                return r;
        *ret = (Digest){ .size = size };
        if (size > limit)
                return -EFBIG;
        _cleanup_free_ unsigned char *buf = malloc(OUTPUT_CHUNK);
        XXH3_state_t *state = XXH3_createState();
        if (!buf || !state) {
                XXH3_freeState(state);
                return -ENOMEM;
        }
        XXH3_128bits_reset(state);
        for (uint64_t at = 0; at < size;) {
                ssize_t n = read_full_at(fd, buf, OUTPUT_CHUNK, (off_t) at);
                if (n <= 0) { /* shrunk under us, or an I/O error */
                        r = n < 0 ? (int) n : -EIO;
                        break;
                }
                XXH3_128bits_update(state, buf, (size_t) n);
                at += (uint64_t) n;
        }
        XXH128_hash_t h = XXH3_128bits_digest(state);
        XXH3_freeState(state);
        if (r < 0)
                return r;
        snprintf(ret->hex, sizeof(ret->hex), "%016llx%016llx", (unsigned long long) h.high64,
                 (unsigned long long) h.low64);
        return 0;
}

int output_first_difference(int a, int b, uint64_t *ret_offset) {
        uint64_t size_a, size_b;
        int r;
        if ((r = output_size(a, &size_a)) < 0 || (r = output_size(b, &size_b)) < 0)
                return r;
        uint64_t n = size_a < size_b ? size_a : size_b, at = 0;
        _cleanup_free_ unsigned char *pa = malloc(OUTPUT_CHUNK), *pb = malloc(OUTPUT_CHUNK);
        if (!pa || !pb)
                return -ENOMEM;
        while (at < n) {
                size_t want = n - at < OUTPUT_CHUNK ? (size_t) (n - at) : OUTPUT_CHUNK;
                ssize_t ra = read_full_at(a, pa, want, (off_t) at),
                        rb = read_full_at(b, pb, want, (off_t) at);
                if (ra < 0 || rb < 0)
                        return (int) (ra < 0 ? ra : rb);
                size_t got = (size_t) (ra < rb ? ra : rb), i = 0;
                if (got == 0)
                        break; /* shrunk under us: the difference is here */
                while (i < got && pa[i] == pb[i])
                        i++;
                at += i;
                if (i < got)
                        break;
        }
        *ret_offset = at;
        return 0;
}

int output_line_at(int fd, uint64_t offset, uint64_t *ret_line, char *buf, size_t size) {
        _cleanup_free_ char *chunk = malloc(OUTPUT_CHUNK);
        if (!chunk)
                return -ENOMEM;
        uint64_t line = 1, start = 0; /* the line that holds offset, and where it starts */
        for (uint64_t at = 0; at < offset;) {
                size_t want = offset - at < OUTPUT_CHUNK ? (size_t) (offset - at) : OUTPUT_CHUNK;
                ssize_t got = read_full_at(fd, chunk, want, (off_t) at);
                if (got < 0)
                        return (int) got;
                if (got == 0)
                        break;
                for (ssize_t i = 0; i < got; i++)
                        if (chunk[i] == '\n') {
                                line++;
                                start = at + (uint64_t) i + 1;
                        }
                at += (uint64_t) got;
        }
        ssize_t got = size > 1 ? read_full_at(fd, buf, size - 1, (off_t) start) : 0;
        if (got < 0)
                return (int) got;
        buf[got] = 0;
        buf[strcspn(buf, "\n")] = 0;
        *ret_line = line;
        return 0;
}

/* Opens cwd as a directory fd into *ret, or sets AT_FDCWD for NULL (which cleanup leaves
 * alone). Returns 0 or -errno. */
static int open_cwd(const char *cwd, int *ret) {
        *ret = cwd ? open(cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : AT_FDCWD;
        return *ret == -1 ? negative_errno() : 0;
}

int output_copy_file(const char *path, const char *cwd, uint64_t limit) {
        _cleanup_close_ int dir = -1;
        int r = open_cwd(cwd, &dir);
        if (r < 0)
                return r;
        _cleanup_close_ int in = openat(dir, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (in < 0)
                return negative_errno();
        struct stat st;
        if (fstat(in, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EINVAL; /* a FIFO or device would never end, or never be the same twice */
        _cleanup_close_ int out = output_memfd("alloclab-oracle");
        if (out < 0)
                return out;
        /* One byte past the limit tells a file that is too large, whatever fstat said. */
        for (uint64_t copied = 0; copied <= limit;) {
                uint64_t left = limit + 1 - copied;
                ssize_t n = sendfile(out, in, NULL, left < (1 << 20) ? (size_t) left : 1 << 20);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        return TAKE_FD(out);
                copied += (uint64_t) n;
        }
        return -EFBIG;
}

int output_remove_file(const char *path, const char *cwd) {
        _cleanup_close_ int dir = -1;
        int r = open_cwd(cwd, &dir);
        if (r < 0)
                return r;
        if (unlinkat(dir, path, 0) < 0 && errno != ENOENT)
                return negative_errno();
        return 0;
}

int output_metric_set(Metric **list, size_t *n, const char *name, double value, char **ret_why) {
        for (size_t k = 0; k < *n; k++)
                if (strcmp((*list)[k].name, name) == 0) { /* reported again: the last value counts */
                        (*list)[k].value = value;
                        return 0;
                }
        if (*n >= OUTPUT_MAX_METRICS)
                return asprintf(ret_why, "more than %d metrics in one sample", OUTPUT_MAX_METRICS) < 0
                               ? -ENOMEM
                               : -E2BIG;
        Metric *grown = realloc(*list, (*n + 1) * sizeof(Metric));
        if (!grown)
                return -ENOMEM;
        *list = grown;
        snprintf(grown[*n].name, sizeof(grown[*n].name), "%s", name);
        grown[(*n)++].value = value;
        return 0;
}

int output_metric_add_own(Metric **list, size_t *n, size_t reported, const char *name, double value,
                          const char *from, char **ret_why) {
        for (size_t i = 0; i < reported; i++)
                if (strcmp((*list)[i].name, name) == 0)
                        return asprintf(ret_why, "the program reported %s, a name %s gives its own figure",
                                        name, from) < 0
                                       ? -ENOMEM
                                       : -EEXIST;
        return output_metric_set(list, n, name, value, ret_why);
}

/* The whole of a captured output, mapped (to match patterns across it): the caller has checked
 * that it is within the spec's output_limit. *ret NULL when empty; unmap with munmap(). */
static int map_output(int fd, const char **ret, size_t *ret_size) {
        uint64_t size;
        int r = output_size(fd, &size);
        if (r < 0)
                return r;
        *ret = NULL;
        *ret_size = (size_t) size;
        if (size == 0)
                return 0;
        const char *text = mmap(NULL, (size_t) size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (text == MAP_FAILED)
                return negative_errno();
        *ret = text;
        return 0;
}

int output_match_metric(int fd, const char *pattern, double *ret_value, char **ret_why) {
        *ret_why = NULL;
        const char *text;
        size_t size;
        int r = map_output(fd, &text, &size);
        if (r < 0 || !text)
                return r;
        regex_t re;
        if (regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE) != 0) {
                munmap((void *) text, size);
                return -EINVAL; /* the spec's loader compiled it */
        }
        /* The last match: a program that prints its figure once per round ends with the total. */
        regmatch_t m[2], last[2] = { { -1, -1 }, { -1, -1 } };
        for (regoff_t at = 0; at <= (regoff_t) size;) {
                m[0] = (regmatch_t){ .rm_so = at, .rm_eo = (regoff_t) size };
                if (regexec(&re, text, 2, m, REG_STARTEND) != 0) /* within m[0], no NUL needed */
                        break;
                memcpy(last, m, sizeof(last));
                /* On to the next line: one value per line, and an empty match cannot loop. */
                const char *nl = memchr(text + m[0].rm_eo, '\n', (size_t) size - (size_t) m[0].rm_eo);
                if (!nl)
                        break;
                at = (regoff_t) (nl - text) + 1;
        }
        regfree(&re);
        r = 0;
        if (last[0].rm_so >= 0) {
                const regmatch_t *v = re.re_nsub > 0 ? &last[1] : &last[0];
                size_t len = v->rm_so >= 0 ? (size_t) (v->rm_eo - v->rm_so) : 0;
                char num[64] = "";
                if (len < sizeof(num))
                        memcpy(num, text + v->rm_so, len), num[len] = 0;
                char *e = NULL;
                errno = 0;
                double value = len > 0 && len < sizeof(num) ? strtod(num, &e) : NAN;
                if (e && *e == 0 && errno == 0 && isfinite(value)) {
                        *ret_value = value;
                        r = 1;
                } else {
                        char excerpt[48];
                        snprintf(excerpt, sizeof(excerpt), "%.*s", (int) (len < 40 ? len : 40),
                                 v->rm_so >= 0 ? text + v->rm_so : "");
                        _cleanup_free_ char *shown = text_shown(excerpt);
                        r = !shown || asprintf(ret_why,
                                               "the pattern matched '%s%s', which is not a finite number",
                                               shown, len > 40 ? "..." : "") < 0
                                    ? -ENOMEM
                                    : -EBADMSG;
                }
        }
        munmap((void *) text, (size_t) size);
        return r;
}

int output_without_lines(int fd, char *const *patterns, uint64_t *ret_left_out) {
        const char *text;
        size_t size;
        int r = map_output(fd, &text, &size);
        if (r < 0)
                return r;
        size_t n = strv_length(patterns);
        _cleanup_free_ regex_t *re = calloc(n + 1, sizeof(regex_t));
        _cleanup_close_ int kept = output_memfd("alloclab-verified");
        size_t compiled = 0;
        r = !re ? -ENOMEM : kept < 0 ? kept : 0;
        for (; r >= 0 && compiled < n; compiled++)
                if (regcomp(&re[compiled], patterns[compiled], REG_EXTENDED | REG_NEWLINE | REG_NOSUB) != 0)
                        r = -EINVAL; /* the spec's loader compiled them */
        uint64_t left_out = 0;
        size_t span = 0; /* where the lines kept since the last one left out start */
        for (size_t at = 0; r >= 0 && text && at < size;) {
                const char *nl = memchr(text + at, '\n', size - at);
                size_t end = nl ? (size_t) (nl - text) + 1 : size; /* the line with its newline */
                bool ignored = false;
                for (size_t i = 0; i < n && !ignored; i++) {
                        regmatch_t m = { .rm_so = (regoff_t) at, .rm_eo = (regoff_t) (nl ? end - 1 : end) };
                        ignored = regexec(&re[i], text, 1, &m, REG_STARTEND) == 0;
                }
                if (ignored) {
                        left_out++;
                        r = write_full(kept, text + span, at - span);
                        span = end;
                }
                at = end;
        }
        if (r >= 0 && text)
                r = write_full(kept, text + span, size - span);
        for (size_t i = 0; i < compiled; i++)
                regfree(&re[i]);
        if (text)
                munmap((void *) text, size);
        if (r < 0)
                return r;
        if (ret_left_out)
                *ret_left_out = left_out;
        return TAKE_FD(kept);
}

static bool metric_name_ok(const char *s, size_t len) {
        if (len == 0 || len > OUTPUT_METRIC_NAME_MAX)
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '.'))
                        return false;
        }
        return true;
}

/* The reason of a line that output_parse_metrics() refuses: its number and an excerpt, escaped. */
static int bad_line(char **ret_why, size_t line, const char *text, size_t len, const char *what) {
        char excerpt[48];
        snprintf(excerpt, sizeof(excerpt), "%.*s", (int) (len < 40 ? len : 40), text);
        _cleanup_free_ char *shown = text_shown(excerpt);
        if (!shown ||
            asprintf(ret_why, "metrics line %zu '%s%s': %s", line, shown, len > 40 ? "..." : "", what) < 0)
                *ret_why = NULL;
        return -EBADMSG;
}

void phase_marks_free(PhaseMark *marks, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(marks[i].name);
        free(marks);
}

/* A `phase NAME` line's mark, ending at byte end of the file. */
static int add_mark(PhaseMark **marks, size_t *n, const char *name, size_t len, uint64_t end,
                    char **ret_why) {
        if (*n >= OUTPUT_MAX_MARKS)
                return asprintf(ret_why, "more than %d phase marks in one sample", OUTPUT_MAX_MARKS) < 0
                               ? -ENOMEM
                               : -E2BIG;
        PhaseMark *grown = realloc(*marks, (*n + 1) * sizeof(PhaseMark));
        if (!grown)
                return -ENOMEM;
        *marks = grown;
        if (!(grown[*n].name = strndup(name, len)))
                return -ENOMEM;
        grown[(*n)++].end = end;
        return 0;
}

/* One line of the metrics file: `NAME VALUE`, or `phase NAME` ending at byte end of the file. */
static int parse_line(const char *p, size_t len, size_t line, uint64_t end, Metric **list, size_t *n,
                      PhaseMark **marks, size_t *n_marks, char **ret_why) {
        const char *sp = memchr(p, ' ', len);
        if (!sp && len == 5 && memcmp(p, "phase", 5) == 0)
                return bad_line(ret_why, line, p, len, "a phase mark needs the phase's name: phase NAME");
        if (!sp)
                return bad_line(ret_why, line, p, len, "not NAME VALUE");
        size_t name_len = (size_t) (sp - p), rest_len = len - name_len - 1;
        if (name_len == 5 && memcmp(p, "phase", 5) == 0) {
                if (!metric_name_ok(sp + 1, rest_len) || rest_len > OUTPUT_PHASE_NAME_MAX)
                        return bad_line(ret_why, line, p, len,
                                        "a phase's name is 1-" STRINGIFY(
                                                OUTPUT_PHASE_NAME_MAX) " letters, digits, '_', '-' or '.'");
                return add_mark(marks, n_marks, sp + 1, rest_len, end, ret_why);
        }
        if (!metric_name_ok(p, name_len))
                return bad_line(
                        ret_why, line, p, len,
                        "a name is 1-" STRINGIFY(OUTPUT_METRIC_NAME_MAX) " letters, digits, '_', '-' or "
                                                                         "'.'");
        char num[64];
        if (rest_len == 0 || rest_len >= sizeof(num))
                return bad_line(ret_why, line, p, len, "the value is not a number");
        memcpy(num, sp + 1, rest_len);
        num[rest_len] = 0;
        char *e;
        errno = 0;
        double v = strtod(num, &e);
        if (*e || errno != 0 || !isfinite(v))
                return bad_line(ret_why, line, p, len, "the value is not a finite number");
        char name[OUTPUT_METRIC_NAME_MAX + 1];
        memcpy(name, p, name_len);
        name[name_len] = 0;
        return output_metric_set(list, n, name, v, ret_why);
}

int output_parse_metrics(int fd, Metric **ret, size_t *ret_n, PhaseMark **ret_marks, size_t *ret_n_marks,
                         char **ret_why) {
        uint64_t size;
        int r = output_size(fd, &size);
        if (r < 0)
                return r;
        *ret = NULL;
        *ret_n = 0;
        *ret_marks = NULL;
        *ret_n_marks = 0;
        *ret_why = NULL;
        if (size > OUTPUT_MAX_METRICS_BYTES)
                return asprintf(ret_why, "the metrics fd got %" PRIu64 " bytes, more than %d", size,
                                OUTPUT_MAX_METRICS_BYTES) < 0
                               ? -ENOMEM
                               : -E2BIG;
        _cleanup_free_ char *text = NULL;
        ssize_t have = read_prefix(fd, (size_t) size, &text);
        if (have < 0)
                return (int) have;
        _cleanup_free_ Metric *list = NULL;
        PhaseMark *marks = NULL;
        size_t n = 0, n_marks = 0, line = 0;
        const char *p = text, *end = p + have;
        for (const char *next; p < end && r >= 0; p = next) {
                line++;
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *line_end = nl ? nl : end;
                next = nl ? nl + 1 : end;
                if (line_end != p) /* not an empty line */
                        r = parse_line(p, (size_t) (line_end - p), line, (uint64_t) (line_end - text), &list,
                                       &n, &marks, &n_marks, ret_why);
        }
        if (r < 0) {
                phase_marks_free(marks, n_marks);
                return r;
        }
        *ret = TAKE_PTR(list);
        *ret_n = n;
        *ret_marks = marks;
        *ret_n_marks = n_marks;
        return 0;
}

/* The first max bytes of fd as a string as small as what was read, or NULL when empty. */
static char *excerpt(int fd, size_t max) {
        _cleanup_free_ char *buf = NULL;
        ssize_t n = read_prefix(fd, max, &buf);
        return n > 0 ? strndup(buf, (size_t) n) : NULL;
}

char *output_excerpt_all(int fd) {
        return excerpt(fd, OUTPUT_SCAN_MAX);
}

char *output_excerpt(int fd) {
        return excerpt(fd, OUTPUT_STDERR_EXCERPT);
}
