/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/stat parsing. The command name (field 2) may contain spaces and parentheses, so
 * fields are counted from the last ')'.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/proc.h"

int proc_start_time(pid_t pid, uint64_t *ret) {
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return n < 0 ? negative_errno() : -EIO;
        buf[n] = 0;
        char *p = strrchr(buf, ')');
        if (!p)
                return -EBADMSG;
        /* After ') ' come fields 3..; each turn moves to the space before the next field, the
         * last to the one before field 22, the start time (field 21 is always 0). */
        for (int field = 3; field <= 22; field++) {
                p = strchr(p + 1, ' ');
                if (!p)
                        return -EBADMSG;
        }
        char *end;
        unsigned long long v = strtoull(p + 1, &end, 10);
        if (end == p + 1)
                return -EBADMSG;
        *ret = v;
        return 0;
}
