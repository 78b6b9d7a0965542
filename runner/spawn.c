/* SPDX-License-Identifier: MIT */
/*
 * Child creation with posix_spawn(): glibc implements it with clone(CLONE_VM|CLONE_VFORK), so
 * starting a child costs the same whatever the size of this process, and every step between
 * clone and exec happens inside libc, async-signal-safe. The child gets:
 *   fd 0 /dev/null, fds 1 and 2 the caller's capture memfds, fd ENV_METRICS_FD the metrics
 *   memfd, PROBE_REPORT_FD the probe's report when probed, nothing else (closefrom); an empty signal mask
 * and default dispositions; its own process group (so a timeout kills grandchildren too); the prepared cwd.
 * RLIMIT_CORE is set to 0 in the runner itself once (runner/run.c), children inherit it.
 *
 * The pidfd is opened right after the spawn; the child cannot have been reaped yet, so it names
 * the right process. wait4() after the pidfd turns readable gives that child's rusage.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "probe/report.h"
#include "runner/env.h"
#include "runner/spawn.h"
#include "util/cleanup.h"

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static int pidfd_open_compat(pid_t pid) {
        return (int) syscall(SYS_pidfd_open, pid, 0);
}

/* The child's fds 1..PROBE_REPORT_FD are filled by dup2() in order; a source fd that is itself
 * one of those numbers would be overwritten before its turn. Sources are therefore moved above
 * SPAWN_FD_FLOOR first. */
#define SPAWN_FD_FLOOR 16

typedef struct SpawnSetup {
        posix_spawnattr_t attr;
        posix_spawn_file_actions_t actions;
        bool have_attr, have_actions;
        int moved[4]; /* duplicates made above SPAWN_FD_FLOOR, closed after the spawn */
        size_t n_moved;
} SpawnSetup;

static void spawn_setup_done(SpawnSetup *s) {
        if (s->have_attr)
                posix_spawnattr_destroy(&s->attr);
        if (s->have_actions)
                posix_spawn_file_actions_destroy(&s->actions);
        for (size_t i = 0; i < s->n_moved; i++)
                safe_close(s->moved[i]);
}

/* Returns fd, or a duplicate above SPAWN_FD_FLOOR when fd is low enough to be clobbered. */
static int high_fd(SpawnSetup *s, int fd) {
        if (fd < 0 || fd >= SPAWN_FD_FLOOR)
                return fd;
        int dup = fcntl(fd, F_DUPFD_CLOEXEC, SPAWN_FD_FLOOR);
        if (dup < 0)
                return negative_errno();
        s->moved[s->n_moved++] = dup;
        return dup;
}

static int spawn_setup(const SpawnRequest *req, SpawnSetup *s) {
        int r;
        if ((r = posix_spawnattr_init(&s->attr)) != 0)
                return -r;
        s->have_attr = true;
        if ((r = posix_spawn_file_actions_init(&s->actions)) != 0)
                return -r;
        s->have_actions = true;

        /* exec() resets caught signals by itself; only ignored ones survive it, so only those
         * need resetting, which saves the child a sigaction() per signal inside the clock. */
        sigset_t none, ignored;
        sigemptyset(&none);
        sigemptyset(&ignored);
        for (int sig = 1; sig < NSIG; sig++) {
                struct sigaction sa;
                if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
                        sigaddset(&ignored, sig);
        }
        if ((r = posix_spawnattr_setflags(&s->attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                            POSIX_SPAWN_SETSIGDEF)) != 0 ||
            (r = posix_spawnattr_setpgroup(&s->attr, 0)) != 0 ||
            (r = posix_spawnattr_setsigmask(&s->attr, &none)) != 0 ||
            (r = posix_spawnattr_setsigdefault(&s->attr, &ignored)) != 0)
                return -r;

        int out = high_fd(s, req->stdout_fd), err = high_fd(s, req->stderr_fd);
        int metrics = high_fd(s, req->metrics_fd), probe = high_fd(s, req->probe_fd);
        if (out < 0 || err < 0 || metrics < 0 || (req->probe_fd >= 0 && probe < 0))
                return out < 0 ? out : err < 0 ? err : metrics < 0 ? metrics : probe;
        posix_spawn_file_actions_t *a = &s->actions;
        if ((r = posix_spawn_file_actions_addopen(a, 0, "/dev/null", O_RDONLY, 0)) != 0 ||
            (r = posix_spawn_file_actions_adddup2(a, out, 1)) != 0 ||
            (r = posix_spawn_file_actions_adddup2(a, err, 2)) != 0 ||
            (r = posix_spawn_file_actions_adddup2(a, metrics, ENV_METRICS_FD)) != 0)
                return -r;
        if (probe >= 0 && (r = posix_spawn_file_actions_adddup2(a, probe, PROBE_REPORT_FD)) != 0)
                return -r;
        int first_closed = req->probe_fd >= 0 ? PROBE_REPORT_FD + 1 : ENV_METRICS_FD + 1;
        if ((r = posix_spawn_file_actions_addclosefrom_np(a, first_closed)) != 0)
                return -r;
        if (req->cwd && (r = posix_spawn_file_actions_addchdir_np(a, req->cwd)) != 0)
                return -r;
        return 0;
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
        _cleanup_(spawn_setup_done) SpawnSetup setup = {};
        int r = spawn_setup(req, &setup);
        if (r < 0)
                return r;

        *ret = (SpawnResult){};
        /* posix_spawn has no affinity attribute: the child inherits the runner's, so the runner
         * steps onto the child's CPUs for the spawn and off them as soon as it returns. */
        if (req->cpus && sched_setaffinity(0, sizeof(cpu_set_t), req->cpus) < 0)
                return negative_errno();
        pid_t pid;
        uint64_t start = now_ns();
        r = posix_spawn(&pid, req->exe, &setup.actions, &setup.attr, req->argv, req->envp);
        if (req->cpus && req->runner_cpus)
                (void) sched_setaffinity(0, sizeof(cpu_set_t), req->runner_cpus);
        if (r != 0) {
                ret->end = SPAWN_EXEC_FAILED;
                ret->exec_errno = r;
                return 0;
        }
        _cleanup_close_ int pidfd = pidfd_open_compat(pid);
        if (pidfd < 0) {
                r = negative_errno();
                kill(-pid, SIGKILL);
                waitpid(pid, NULL, 0);
                return r;
        }

        SpawnEnd end = wait_child(pidfd, req->cancel_fd, start + req->timeout_ns);
        if (end != SPAWN_EXITED)
                kill(-pid, SIGKILL);

        int status = 0;
        while (wait4(pid, &status, 0, &ret->usage) < 0) {
                if (errno != EINTR)
                        return negative_errno();
        }
        ret->wall_ns = now_ns() - start;

        /* Whatever the child left behind in its group must not run into the next sample. */
        ret->leftover = kill(-pid, SIGKILL) == 0;

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
