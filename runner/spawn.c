/* SPDX-License-Identifier: MIT */
/*
 * Child creation in two steps, so that nothing of it is timed:
 *   1. clone3() creates the child, directly inside its cgroup (CLONE_INTO_CGROUP) when it has
 *      one, with a pidfd (CLONE_PIDFD). Without clone3 (Linux < 5.3, seccomp), fork() and the
 *      child moves itself into the cgroup before exec. The child sets itself up with
 *      async-signal-safe calls only: its own process group; default signal dispositions and an
 *      empty mask; fd 0 /dev/null, fds 1 and 2 the caller's capture memfds, ENV_METRICS_FD the
 *      metrics memfd, PROBE_REPORT_FD the probe's report when probed, every other fd closed at
 *      exec; its CPUs; its cwd. Then it waits on a socket.
 *   2. The clock starts, the runner sends "go", the child execs. The socket is close-on-exec: the
 *      runner reads end-of-file when the exec succeeded, or the errno when it failed.
 * The runner waits on the pidfd; wait4() then gives the child's rusage, and the cgroup the
 * tree's CPU time, peak memory and whatever the child left running. RLIMIT_CORE is set to 0 in
 * the runner once (runner/run.c); children inherit it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe/report.h"
#include "runner/cgroup.h"
#include "runner/env.h"
#include "runner/spawn.h"
#include "util/cleanup.h"

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* The child's fds 1..PROBE_REPORT_FD are filled by dup2() in order; a source fd that is itself
 * one of those numbers would be overwritten before its turn. Sources are therefore moved above
 * SPAWN_FD_FLOOR first. */
#define SPAWN_FD_FLOOR 16

/* In the child: moves fd above SPAWN_FD_FLOOR when it is low enough to be clobbered. */
static int high_fd(int fd) {
        return fd < 0 || fd >= SPAWN_FD_FLOOR ? fd : fcntl(fd, F_DUPFD, SPAWN_FD_FLOOR);
}

/* In the child, between clone and exec: async-signal-safe calls only (the runner may have
 * threads, and its locks are in whatever state clone found them). Sends errno on the socket
 * and exits when a step fails. */
static _Noreturn void child_main(const SpawnRequest *req, int sock, bool move_into_cgroup) {
        int out = high_fd(req->stdout_fd), err = high_fd(req->stderr_fd);
        int metrics = high_fd(req->metrics_fd), probe = high_fd(req->probe_fd);
        int null = open("/dev/null", O_RDONLY);
        if (out < 0 || err < 0 || metrics < 0 || (req->probe_fd >= 0 && probe < 0) || null < 0 ||
            dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || dup2(metrics, ENV_METRICS_FD) < 0 ||
            (probe >= 0 && dup2(probe, PROBE_REPORT_FD) < 0))
                goto fail;
        /* Close-on-exec rather than closed: the socket must last until the exec. */
        if (close_range(probe >= 0 ? PROBE_REPORT_FD + 1 : ENV_METRICS_FD + 1, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
                goto fail;
        if (move_into_cgroup) {
                int procs = openat(req->cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
                if (procs < 0 || write(procs, "0", 1) != 1)
                        goto fail;
        }
        /* Its own process group: the fallback's way to find what it leaves behind. */
        if (setpgid(0, 0) < 0)
                goto fail;
        /* exec() resets caught signals by itself; ignored ones and the mask survive it. */
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        for (int sig = 1; sig < NSIG; sig++) {
                struct sigaction sa;
                if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &sa) == 0 &&
                    sa.sa_handler == SIG_IGN)
                        (void) sigaction(sig, &dfl, NULL);
        }
        sigset_t none;
        sigemptyset(&none);
        if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                goto fail;
        if (req->cpus && sched_setaffinity(0, sizeof(cpu_set_t), req->cpus) < 0)
                goto fail;
        if (req->cwd && chdir(req->cwd) < 0)
                goto fail;
        char go;
        if (read(sock, &go, 1) != 1)
                _exit(127); /* the runner is gone */
        execve(req->exe, req->argv, req->envp);
fail:;
        int e = errno;
        (void) !write(sock, &e, sizeof(e));
        _exit(127);
}

/* Creates the child, inside req->cgroup_fd when possible. Returns its pid (0 in the child,
 * which never returns) with *ret_pidfd, or -errno. */
static pid_t create_child(const SpawnRequest *req, int sock_child, int *ret_pidfd, bool *ret_in_cgroup) {
        int pidfd = -1;
        struct clone_args args = {
                .flags = CLONE_PIDFD | (req->cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0),
                .pidfd = (uint64_t) (uintptr_t) &pidfd,
                .exit_signal = SIGCHLD,
                .cgroup = req->cgroup_fd >= 0 ? (uint64_t) req->cgroup_fd : 0,
        };
        long pid = syscall(SYS_clone3, &args, sizeof(args));
        if (pid < 0 && req->cgroup_fd >= 0 && errno != ENOSYS && !req->cgroup_required) {
                /* The cgroup refused the child (permissions, a controller's limit): go without. */
                args.flags &= ~(uint64_t) CLONE_INTO_CGROUP;
                args.cgroup = 0;
                pid = syscall(SYS_clone3, &args, sizeof(args));
                *ret_in_cgroup = false;
        } else
                *ret_in_cgroup = req->cgroup_fd >= 0;
        bool moves_itself = false;
        if (pid < 0 && errno == ENOSYS) {
                pid = fork();
                moves_itself = *ret_in_cgroup;
        }
        if (pid < 0)
                return negative_errno();
        if (pid == 0)
                child_main(req, sock_child, moves_itself);
        if (pidfd < 0 && (pidfd = (int) syscall(SYS_pidfd_open, (pid_t) pid, 0)) < 0) {
                int r = negative_errno();
                kill((pid_t) pid, SIGKILL);
                waitpid((pid_t) pid, NULL, 0);
                return r;
        }
        *ret_pidfd = pidfd;
        return (pid_t) pid;
}

/* Kills the child and everything it started: the cgroup when it has one, else its group. */
static void kill_tree(pid_t pid, int cgroup_fd) {
        if (cgroup_fd < 0 || cgroup_child_kill(cgroup_fd) < 0)
                kill(-pid, SIGKILL);
}

/* Sleeps until the child exits, the deadline passes or cancel_fd is readable. No busy loop:
 * one ppoll() per wakeup, and wakeups only come from EINTR or one of those events. */
static SpawnEnd wait_child(int pidfd, int cancel_fd, uint64_t deadline) {
        struct pollfd fds[2] = {
                { .fd = pidfd, .events = POLLIN },
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
        int sock[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) < 0)
                return negative_errno();
        _cleanup_close_ int runner_end = sock[0];
        _cleanup_close_ int child_end = sock[1];
        if (req->cpus && req->runner_cpus && sched_setaffinity(0, sizeof(cpu_set_t), req->runner_cpus) < 0)
                return negative_errno();

        int pidfd_raw = -1;
        pid_t pid = create_child(req, child_end, &pidfd_raw, &ret->in_cgroup);
        if (pid < 0)
                return pid;
        _cleanup_close_ int pidfd = pidfd_raw;
        child_end = safe_close(child_end);
        int cgroup_fd = ret->in_cgroup ? req->cgroup_fd : -1;

        uint64_t start = now_ns();
        int exec_errno = 0;
        ssize_t n = send(runner_end, "g", 1, MSG_NOSIGNAL);
        if (n == 1)
                while ((n = recv(runner_end, &exec_errno, sizeof(exec_errno), 0)) < 0 && errno == EINTR)
                        ;
        if (n != 0) { /* no end-of-file: the child reported a failure, or died before its exec */
                kill_tree(pid, cgroup_fd);
                waitpid(pid, NULL, 0);
                ret->end = SPAWN_EXEC_FAILED;
                ret->exec_errno = n == (ssize_t) sizeof(exec_errno) ? exec_errno : EIO;
                return 0;
        }

        SpawnEnd end = wait_child(pidfd, req->cancel_fd, start + req->timeout_ns);
        /* At a timeout the child itself is still there: the others are what it left running. */
        int others = -1;
        if (end != SPAWN_EXITED) {
                others = cgroup_fd >= 0 ? cgroup_child_processes(cgroup_fd) - 1 : -1;
                kill_tree(pid, cgroup_fd);
        }

        int status = 0;
        while (wait4(pid, &status, 0, &ret->usage) < 0) {
                if (errno != EINTR)
                        return negative_errno();
        }
        ret->wall_ns = now_ns() - start;

        CgroupUsage tree;
        if (end == SPAWN_EXITED && cgroup_fd >= 0)
                others = cgroup_child_processes(cgroup_fd);
        if (cgroup_fd >= 0 && others >= 0 && cgroup_child_usage(cgroup_fd, &tree) == 0) {
                ret->tree_cpu_us = tree.cpu_us;
                ret->peak_from_cgroup = tree.have_peak;
                ret->tree_peak_kib =
                        tree.have_peak ? tree.peak_bytes / 1024 : (uint64_t) ret->usage.ru_maxrss;
                ret->leftover_processes = (uint32_t) others;
                ret->oom_killed = tree.oom_killed;
                ret->pids_limited = tree.pids_limited;
                ret->leftover = others > 0;
        } else {
                const struct rusage *u = &ret->usage;
                ret->in_cgroup = false;
                ret->tree_cpu_us = (uint64_t) (u->ru_utime.tv_sec + u->ru_stime.tv_sec) * 1000000 +
                                   (uint64_t) (u->ru_utime.tv_usec + u->ru_stime.tv_usec);
                ret->tree_peak_kib = (uint64_t) u->ru_maxrss;
        }
        /* Whatever the child left behind must not run into the next sample. */
        if (cgroup_fd >= 0)
                (void) cgroup_child_kill(cgroup_fd);
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
