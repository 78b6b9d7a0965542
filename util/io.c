/* SPDX-License-Identifier: MIT */
/*
 * Small I/O loops that every caller would otherwise write again.
 */
#include <errno.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/io.h"

ssize_t read_full(int fd, void *buf, size_t size) {
        size_t have = 0;
        while (have < size) {
                ssize_t n = read(fd, (char *) buf + have, size - have);
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
