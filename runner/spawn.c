/* SPDX-License-Identifier: MIT */
/*
 * Children are created by alloclab-spawner (runner/spawner.c), a small process of this one's,
 * so that a child's peak RSS is its own and not alloclab's (the spawner says why and how).
 * The spawner is started at the first spawn of a process (a forked alloclab starts its own) and
 * ends when this process closes its socket or dies. Per child: this process sends the request
 * (strings in a memfd, fds by SCM_RIGHTS), learns the child's pid, sleeps in one ppoll() on the
 * spawner's socket (and the cancel fd) until the spawner says the child ended, the deadline
 * passes (the tree is killed) or a stop comes, and gets the reap's status, rusage and time.
 *
 * The cgroup gives the tree's CPU time, peak memory and whatever the child left running.
 * RLIMIT_CORE is set to 0 in the runner once (runner/run.c), and children inherit it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner/cgroup.h"
#include "runner/spawn-wire.h"
#include "runner/spawn.h"
#include "util/cleanup.h"
#include "util/paths.h"
#include "util/clock.h"

/* This process's spawner: its socket, or -1 before the first spawn; owner, the process that
 * started it (a fork's copy of the socket is not the fork's to use). */
static struct {
        pid_t owner, pid;
        int sock;
} spawner = { .sock = -1 };

/* Starts alloclab-spawner with its socket at SPAWN_WIRE_SOCKET_FD, in a process group of its own
 * (a terminal's ^C is alloclab's to handle), every signal at its default, none blocked. */
static int spawner_start(void) {
        if (spawner.sock >= 0 && spawner.owner == getpid())
                return 0;
        if (spawner.sock >= 0)
                close(spawner.sock); /* the parent's, inherited across a fork */
        spawner.sock = -1;
        _cleanup_free_ char *path = paths_spawner();
        if (!path)
                return -ENOENT;
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        char parent[24];
        snprintf(parent, sizeof(parent), "%d", (int) getpid());
        char *argv[] = { (char *) "alloclab-spawner", parent, NULL }, *envp[] = { NULL };
        posix_spawn_file_actions_t actions;
        posix_spawnattr_t attr;
        sigset_t all, none;
        sigfillset(&all);
        sigemptyset(&none);
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attr);
        posix_spawn_file_actions_adddup2(&actions, pair[1], SPAWN_WIRE_SOCKET_FD);
        posix_spawnattr_setflags(&attr,
                                 POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setpgroup(&attr, 0);
        pid_t pid;
        int r = posix_spawn(&pid, path, &actions, &attr, argv, envp);
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
        close(pair[1]);
        if (r != 0) {
                close(pair[0]);
                return -r;
        }
        spawner.owner = getpid();
        spawner.pid = pid;
        spawner.sock = pair[0];
        return 0;
}

/* The spawner is gone (killed, or reaped by someone's waitpid(-1)): forget it, reap it if it is
 * this process's to reap. */
static void spawner_lost(void) {
        close(spawner.sock);
        spawner.sock = -1;
        (void) waitpid(spawner.pid, NULL, WNOHANG);
}

/* Writes each string of v (NULL-terminated, or NULL) with its NUL into f; returns how many. */
static uint32_t put_strings(FILE *f, char *const *v) {
        uint32_t n = 0;
        for (; v && v[n]; n++)
                fwrite(v[n], 1, strlen(v[n]) + 1, f);
        return n;
}

/* exe, cwd (if any), argv and envp, each NUL-terminated, in a memfd. Returns its fd or -errno. */
static int request_strings(const SpawnRequest *req, SpawnWireRequest *w) {
        int fd = memfd_create("alloclab-spawn", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        int copy = dup(fd);
        FILE *f = copy >= 0 ? fdopen(copy, "w") : NULL;
        if (!f) {
                if (copy >= 0)
                        close(copy);
                close(fd);
                return -ENOMEM;
        }
        put_strings(f, (char *const[]){ (char *) req->exe, (char *) req->cwd, NULL });
        w->n_argv = put_strings(f, req->argv);
        w->n_envp = put_strings(f, req->envp);
        long size = ftell(f);
        if (fclose(f) != 0 || size <= 0) {
                close(fd);
                return -EIO;
        }
        w->strings_size = (uint64_t) size;
        return fd;
}

/* Asks the spawner for req's child. Returns 0 with *ret_started, or -errno (-EPIPE,
 * -ECONNRESET: the spawner is gone). */
static int request_child(const SpawnRequest *req, int cgroup_fd, SpawnWireStarted *ret_started) {
        SpawnWireRequest w = {
                .has_cwd = req->cwd != NULL,
                .has_stdin = req->stdin_fd > 0,
                .has_probe = req->probe_fd >= 0,
                .has_cgroup = cgroup_fd >= 0,
                .cgroup_required = req->cgroup_required,
                .has_cpus = req->cpus != NULL,
                .has_timeline = req->timeline_period_ns > 0,
                .timeline_period_ns = req->timeline_period_ns,
        };
        if (req->cpus)
                w.cpus = *req->cpus;
        _cleanup_close_ int strings = request_strings(req, &w);
        if (strings < 0)
                return strings;
        int fds[SPAWN_WIRE_MAX_FDS] = { strings, req->stdout_fd, req->stderr_fd, req->metrics_fd };
        size_t n = SPAWN_WIRE_FD_STDIN;
        if (w.has_stdin)
                fds[n++] = req->stdin_fd;
        if (w.has_probe)
                fds[n++] = req->probe_fd;
        if (w.has_cgroup)
                fds[n++] = cgroup_fd;
        if (w.has_timeline)
                fds[n++] = req->timeline_fd;
        if (req->runner_cpus)
                (void) sched_setaffinity(spawner.pid, sizeof(cpu_set_t), req->runner_cpus);
        size_t got = 0;
        int r = wire_send(spawner.sock, &w, sizeof(w), fds, n);
        if (r >= 0)
                r = wire_recv(spawner.sock, ret_started, sizeof(*ret_started), NULL, 0, &got);
        if (r < 0)
                return r;
        if (ret_started->error < 0)
                return ret_started->error;
        return ret_started->exec_errno || ret_started->pid > 0 ? 0 : -EBADMSG;
}

/* Kills the child and everything it started: the cgroup when it has one, else its group. */
static void kill_tree(pid_t pid, CgroupRun *cgroup) {
        if (!cgroup || cgroup_children_kill(cgroup) < 0)
                kill(-pid, SIGKILL);
}

/* Sleeps until the spawner says the child ended (sock readable), the deadline passes or
 * cancel_fd is readable. No busy loop: one ppoll() per wakeup, and wakeups only come from EINTR
 * or one of those events. */
static SpawnEnd wait_child(int sock, int cancel_fd, uint64_t deadline) {
        struct pollfd fds[2] = {
                { .fd = sock, .events = POLLIN },
                { .fd = cancel_fd, .events = POLLIN },
        };
        for (;;) {
                uint64_t now = now_ns();
                if (now >= deadline)
                        return SPAWN_TIMEOUT;
                uint64_t left = deadline - now;
                struct timespec ts = { .tv_sec = (time_t) (left / 1000000000ULL),
                                       .tv_nsec = (long) (left % 1000000000ULL) };
                int n = ppoll(fds, cancel_fd >= 0 ? 2 : 1, &ts, NULL);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return SPAWN_CANCELED; /* cannot wait any more: treat as a stop */
                if (fds[0].revents)
                        return SPAWN_EXITED;
                if (n > 0 && fds[1].revents)
                        return SPAWN_CANCELED;
        }
}

int spawn_run(const SpawnRequest *req, SpawnResult *ret) {
        *ret = (SpawnResult){};
        int r;
        if (req->cpus && req->runner_cpus && sched_setaffinity(0, sizeof(cpu_set_t), req->runner_cpus) < 0)
                return -errno;

        /* The cgroup's counters before the child, for its share of them after. A spawner that
         * went away since the last child (someone's waitpid(-1) reaped it) is started again. */
        _cleanup_(cgroup_window_done) CgroupWindow window = { .peak_fd = -1 };
        SpawnWireStarted started = {};
        for (int attempt = 0;; attempt++) {
                if ((r = spawner_start()) < 0 ||
                    (req->cgroup && (r = cgroup_window_open(req->cgroup, spawner.pid, &window)) < 0))
                        return r;
                r = request_child(req, req->cgroup ? req->cgroup->children_fd : -1, &started);
                if ((r != -EPIPE && r != -ECONNRESET) || attempt > 0)
                        break;
                spawner_lost();
                cgroup_window_done(&window);
        }
        if (r < 0)
                return r;
        if (started.exec_errno) {
                ret->end = SPAWN_EXEC_FAILED;
                ret->exec_errno = started.exec_errno;
                return 0;
        }
        pid_t pid = started.pid;
        ret->in_cgroup = started.in_cgroup;
        int cgroup_fd = ret->in_cgroup ? req->cgroup->children_fd : -1;
        CgroupRun *cgroup = ret->in_cgroup ? req->cgroup : NULL;

        SpawnEnd end = wait_child(spawner.sock, req->cancel_fd, started.start_ns + req->timeout_ns);
        /* At a timeout the child itself is still there: the others are what it left running. */
        int others = -1;
        if (end != SPAWN_EXITED) {
                others = cgroup_fd >= 0 ? cgroup_child_processes(cgroup_fd) - 1 : -1;
                kill_tree(pid, cgroup);
        }

        /* The spawner reaps it, and says how it ended. */
        SpawnWireEnded ended;
        size_t no_fds;
        r = wire_recv(spawner.sock, &ended, sizeof(ended), NULL, 0, &no_fds);
        if (r < 0) {
                kill_tree(pid, cgroup);
                spawner_lost();
                return r;
        }
        int status = ended.status;
        ret->usage = ended.usage;
        ret->counters = ended.counters;
        ret->wall_ns = ended.end_ns - started.start_ns;

        if (end == SPAWN_EXITED && cgroup_fd >= 0)
                others = cgroup_child_processes(cgroup_fd);
        CgroupUsage tree = {};
        if (req->cgroup)
                (void) cgroup_window_close(&window, cgroup_fd >= 0 && others >= 0, &tree);
        const struct rusage *u = &ret->usage;
        ret->in_cgroup = tree.have_cpu;
        ret->tree_cpu_us = tree.have_cpu ? tree.cpu_us
                                         : (uint64_t) (u->ru_utime.tv_sec + u->ru_stime.tv_sec) * 1000000 +
                                                   (uint64_t) (u->ru_utime.tv_usec + u->ru_stime.tv_usec);
        ret->peak_from_cgroup = tree.have_peak;
        ret->tree_peak_kib = tree.have_peak ? tree.peak_bytes / 1024 : (uint64_t) u->ru_maxrss;
        ret->oom_killed = tree.oom_killed;
        ret->pids_limited = tree.pids_limited;
        if (tree.have_cpu) {
                ret->leftover_processes = (uint32_t) others;
                ret->leftover = others > 0;
        }
        /* Whatever the child left behind must not run into the next sample: the process group
         * now, the cgroup's (setsid() daemons too) in cgroup_children_empty(), next. */
        bool group_left = kill(-pid, SIGKILL) == 0;
        if (!ret->in_cgroup)
                ret->leftover = group_left;

        if (end != SPAWN_EXITED)
                ret->end = end;
        else if (WIFSIGNALED(status)) {
                ret->end = SPAWN_SIGNALED;
                ret->signal = WTERMSIG(status);
        } else {
                ret->end = SPAWN_EXITED;
                ret->exit_code = WEXITSTATUS(status);
        }
        return 0;
}

const char *spawn_describe_end(const SpawnResult *r, char *buf, size_t size) {
        if (r->end == SPAWN_EXITED)
                snprintf(buf, size, "exit code %d", r->exit_code);
        else if (r->end == SPAWN_SIGNALED)
                snprintf(buf, size, "killed by signal %d (%s)", r->signal, strsignal(r->signal));
        else if (r->end == SPAWN_EXEC_FAILED)
                snprintf(buf, size, "cannot execute: %s", strerror(r->exec_errno));
        else if (size > 0)
                buf[0] = 0;
        return buf;
}
