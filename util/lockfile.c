/* SPDX-License-Identifier: MIT */
/* The measurement lock of a database (see lockfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/lockfile.h"

bool lockfile_held(const char *db_path) {
        char path[4096];
        if ((size_t) snprintf(path, sizeof(path), "%s.lock", db_path) >= sizeof(path))
                return true; /* in doubt: someone may */
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return false; /* never made: nobody has measured into it */
        return flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
}

int lockfile_take(const char *db_path, const char *holder, bool wait, char ret_holder[LOCKFILE_HOLDER_MAX]) {
        char path[4096];
        if ((size_t) snprintf(path, sizeof(path), "%s.lock", db_path) >= sizeof(path))
                return -ENAMETOOLONG;
        _cleanup_close_ int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return negative_errno();
        ret_holder[0] = 0;
        while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
                if (errno == EINTR)
                        continue;
                if (errno != EWOULDBLOCK)
                        return negative_errno();
                ssize_t n = pread(fd, ret_holder, LOCKFILE_HOLDER_MAX - 1, 0);
                ret_holder[n > 0 ? n : 0] = 0;
                ret_holder[strcspn(ret_holder, "\n")] = 0;
                return -EWOULDBLOCK;
        }
        char text[LOCKFILE_HOLDER_MAX];
        int n = snprintf(text, sizeof(text), "%s, pid %d\n", holder, (int) getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t) n, 0) != n)
                return negative_errno();
        return TAKE_FD(fd);
}
