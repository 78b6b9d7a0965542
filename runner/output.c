/* SPDX-License-Identifier: MIT */
/*
 * Everything here runs after the child was reaped, outside the timed region. Files are read
 * through mmap so that hashing a large output costs no copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "runner/output.h"
#include "util/cleanup.h"

int output_memfd(const char *name) {
        int fd = memfd_create(name, MFD_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

typedef struct Mapping {
        void *data;
        size_t size;
} Mapping;

static void mapping_done(Mapping *m) {
        if (m->data && m->data != MAP_FAILED)
                munmap(m->data, m->size);
}

static int map_fd(int fd, Mapping *ret) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        *ret = (Mapping){ .size = (size_t) st.st_size };
        if (ret->size == 0)
                return 0;
        ret->data = mmap(NULL, ret->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (ret->data == MAP_FAILED) {
                ret->data = NULL;
                return negative_errno();
        }
        return 0;
}

int output_digest(int fd, Digest *ret) {
        _cleanup_(mapping_done) Mapping m = {};
        int r = map_fd(fd, &m);
        if (r < 0)
                return r;
        XXH128_hash_t h = XXH3_128bits(m.data ? m.data : "", m.size);
        ret->size = m.size;
        snprintf(ret->hex, sizeof(ret->hex), "%016llx%016llx", (unsigned long long) h.high64,
                 (unsigned long long) h.low64);
        return 0;
}

int output_first_difference(int a, int b, uint64_t *ret_offset) {
        _cleanup_(mapping_done) Mapping ma = {}, mb = {};
        int r;
        if ((r = map_fd(a, &ma)) < 0 || (r = map_fd(b, &mb)) < 0)
                return r;
        size_t n = ma.size < mb.size ? ma.size : mb.size, i = 0;
        const unsigned char *pa = ma.data, *pb = mb.data;
        while (i < n && pa[i] == pb[i])
                i++;
        *ret_offset = i;
        return 0;
}

/* Opens cwd as a directory fd into *ret, or sets AT_FDCWD for NULL (which cleanup leaves
 * alone). Returns 0 or -errno. */
static int open_cwd(const char *cwd, int *ret) {
        *ret = cwd ? open(cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : AT_FDCWD;
        return *ret == -1 ? negative_errno() : 0;
}

int output_copy_file(const char *path, const char *cwd) {
        _cleanup_close_ int dir = -1;
        int r = open_cwd(cwd, &dir);
        if (r < 0)
                return r;
        _cleanup_close_ int in = openat(dir, path, O_RDONLY | O_CLOEXEC);
        if (in < 0)
                return negative_errno();
        _cleanup_close_ int out = output_memfd("alloclab-oracle");
        if (out < 0)
                return out;
        for (;;) {
                ssize_t n = sendfile(out, in, NULL, 1 << 20);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
        }
        return TAKE_FD(out);
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

int output_parse_metrics(int fd, Metric **ret, size_t *ret_n) {
        _cleanup_(mapping_done) Mapping m = {};
        int r = map_fd(fd, &m);
        if (r < 0)
                return r;
        *ret = NULL;
        *ret_n = 0;
        if (m.size > OUTPUT_MAX_METRICS_BYTES)
                return -E2BIG;
        _cleanup_free_ Metric *list = NULL;
        size_t n = 0;
        const char *p = m.data, *end = p + m.size;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *line_end = nl ? nl : end;
                const char *sp = memchr(p, ' ', (size_t) (line_end - p));
                if (line_end == p) { /* empty line */
                        p = line_end + 1;
                        continue;
                }
                if (!sp || !metric_name_ok(p, (size_t) (sp - p)))
                        return -EBADMSG;
                char num[64];
                size_t num_len = (size_t) (line_end - sp - 1);
                if (num_len == 0 || num_len >= sizeof(num))
                        return -EBADMSG;
                memcpy(num, sp + 1, num_len);
                num[num_len] = 0;
                char *e;
                errno = 0;
                double v = strtod(num, &e);
                if (*e || errno != 0 || !isfinite(v))
                        return -EBADMSG;
                size_t name_len = (size_t) (sp - p), k = 0;
                while (k < n &&
                       !(strlen(list[k].name) == name_len && memcmp(list[k].name, p, name_len) == 0))
                        k++;
                if (k < n) { /* reported again: the last value counts */
                        list[k].value = v;
                        p = line_end + 1;
                        continue;
                }
                if (n >= OUTPUT_MAX_METRICS)
                        return -E2BIG;
                Metric *grown = realloc(list, (n + 1) * sizeof(Metric));
                if (!grown)
                        return -ENOMEM;
                list = grown;
                memcpy(list[n].name, p, (size_t) (sp - p));
                list[n].name[sp - p] = 0;
                list[n].value = v;
                n++;
                p = line_end + 1;
        }
        *ret = TAKE_PTR(list);
        *ret_n = n;
        return 0;
}

char *output_excerpt_all(int fd) {
        _cleanup_(mapping_done) Mapping m = {};
        if (map_fd(fd, &m) < 0 || m.size == 0)
                return NULL;
        return strndup(m.data, m.size < OUTPUT_SCAN_MAX ? m.size : OUTPUT_SCAN_MAX);
}

char *output_excerpt(int fd) {
        char buf[OUTPUT_STDERR_EXCERPT + 1];
        ssize_t n = pread(fd, buf, OUTPUT_STDERR_EXCERPT, 0);
        if (n <= 0)
                return NULL;
        buf[n] = 0;
        return strndup(buf, (size_t) n);
}
