/* SPDX-License-Identifier: MIT */
/*
 * Small I/O loops that every caller would otherwise write again.
 */
#include <errno.h>
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
