/* SPDX-License-Identifier: MIT */
/* One message with its fds over a SOCK_SEQPACKET socket: runner/spawn-wire.h. Compiled into
 * alloclab and into alloclab-spawner. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runner/spawn-wire.h"

int wire_send(int sock, const void *msg, size_t size, const int *fds, size_t n_fds) {
        union {
                char buf[CMSG_SPACE(sizeof(int) * SPAWN_WIRE_MAX_FDS)];
                struct cmsghdr align;
        } control = {};
        struct iovec iov = { .iov_base = (void *) msg, .iov_len = size };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        if (n_fds > SPAWN_WIRE_MAX_FDS)
                return -EINVAL;
        if (n_fds > 0) {
                mh.msg_control = control.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        for (;;) {
                ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
                if (n == (ssize_t) size)
                        return 0;
                if (n >= 0)
                        return -EIO;
                if (errno != EINTR)
                        return -errno;
        }
}

int wire_recv(int sock, void *msg, size_t size, int *fds, size_t max_fds, size_t *ret_n_fds) {
        union {
                char buf[CMSG_SPACE(sizeof(int) * SPAWN_WIRE_MAX_FDS)];
                struct cmsghdr align;
        } control;
        struct iovec iov = { .iov_base = msg, .iov_len = size };
        struct msghdr mh = { .msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = control.buf,
                             .msg_controllen = sizeof(control.buf) };
        ssize_t n;
        while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0)
                if (errno != EINTR)
                        return -errno;
        size_t got = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < k; i++) {
                                int fd;
                                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                                if (got < max_fds)
                                        fds[got++] = fd;
                                else
                                        (void) close(fd);
                        }
                }
        *ret_n_fds = got;
        if (n == 0)
                return -ECONNRESET; /* the other end is gone */
        if ((size_t) n != size || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                for (size_t i = 0; i < got; i++)
                        (void) close(fds[i]);
                *ret_n_fds = 0;
                return -EBADMSG;
        }
        return 0;
}
