/* SPDX-License-Identifier: MIT */
/*
 * Small I/O loops that every caller would otherwise write again.
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdint.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/io.h"

ssize_t read_full(int fd, void *buf, size_t size) {
        return read_full_at(fd, buf, size, -1);
}

ssize_t read_full_at(int fd, void *buf, size_t size, off_t offset) {
        size_t have = 0;
        while (have < size) {
                ssize_t n = offset < 0 ? read(fd, (char *) buf + have, size - have)
                                       : pread(fd, (char *) buf + have, size - have, offset + (off_t) have);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                have += (size_t) n;
        }
        return (ssize_t) have;
}

int write_full(int fd, const void *buf, size_t size) {
        for (size_t done = 0; done < size;) {
                ssize_t n = write(fd, (const char *) buf + done, size - done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                done += (size_t) n;
        }
        return 0;
}

int read_text_file(const char *path, size_t max, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        _cleanup_free_ char *buf = malloc(max + 2);
        if (!buf)
                return -ENOMEM;
        ssize_t n = read_full(fd, buf, max + 1);
        if (n < 0)
                return (int) n;
        if ((size_t) n > max)
                return -EFBIG;
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = (size_t) n;
        return 0;
}

int read_text_fd(int fd, size_t max, char **ret, size_t *ret_size) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if ((uint64_t) st.st_size > max)
                return -EFBIG;
        size_t size = (size_t) st.st_size;
        _cleanup_free_ char *buf = malloc(size + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t n = read_full_at(fd, buf, size, 0);
        if (n < 0)
                return (int) n;
        if ((size_t) n != size)
                return -EIO;
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int mkdir_parents(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *slash = strchr(p + 1, '/');; slash = strchr(slash + 1, '/')) {
                if (slash)
                        *slash = 0;
                if (p[0] && mkdir(p, mode) < 0 && errno != EEXIST)
                        return negative_errno();
                if (!slash)
                        return 0;
                *slash = '/';
        }
}

char *memstream_text(FILE *f, char **text) {
        if (fclose(f) != 0) { /* open_memstream() sets *text only here */
                free(*text);
                *text = NULL;
        }
        return *text;
}

int write_file_replacing(const char *path, const void *data, size_t size, const FileAccess *access) {
        _cleanup_free_ char *partial = NULL;
        if (asprintf(&partial, "%s.partial", path) < 0)
                return -ENOMEM;
        int fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, access ? 0600 : 0666);
        if (fd < 0)
                return -errno;
        int r = write_full(fd, data, size);
        if (r >= 0 && access && access->gid != (gid_t) -1 && fchown(fd, (uid_t) -1, access->gid) < 0)
                r = -errno;
        if (r >= 0 && access && fchmod(fd, access->mode) < 0)
                r = -errno;
        if (close(fd) < 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(partial, path) < 0)
                r = -errno;
        if (r < 0)
                (void) unlink(partial);
        return r;
}
