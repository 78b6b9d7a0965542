/* SPDX-License-Identifier: MIT */
/*
 * Child creation the way posix_spawn() does it (clone with CLONE_VM | CLONE_VFORK: the cost does
 * not grow with alloclab's size, and the runner sleeps until the exec), but with clone3(), so
 * that the child starts directly inside its cgroup (CLONE_INTO_CGROUP) with a pidfd
 * (CLONE_PIDFD). glibc 2.36 has neither posix_spawnattr_setcgroup_np nor a clone3 wrapper that
 * runs a function on a stack of its own, so a few lines of assembly do that (x86-64).
 *
 * The child sets itself up with async-signal-safe calls only, on its own stack, sharing the
 * runner's memory: its own process group; default dispositions for every signal the runner
 * handles or ignores, then an empty mask; fd 0 /dev/null, fds 1 and 2 the caller's capture
 * memfds, ENV_METRICS_FD the metrics memfd, PROBE_REPORT_FD the probe's report when probed,
 * every other fd closed at exec; its CPUs; its cwd. A failing step leaves its errno in the
 * runner's memory. The clock runs from just before the clone to just after the reap.
 *
 * Elsewhere (another architecture, Linux < 5.3 without clone3) the child is fork()ed, moves
 * itself into its cgroup, sets itself up and waits on a socket; the clock starts when the
 * runner sends "go", and the close-on-exec socket reports the exec. That path keeps the setup
 * out of the clock, but the exec then tears down a copy of alloclab's address space inside it.
 *
 * wait4() gives the child's rusage, the cgroup the tree's CPU time, peak memory and whatever
 * the child left running. RLIMIT_CORE is set to 0 in the runner once (runner/run.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
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

/* What the child needs, in the runner's memory. */
typedef struct ChildPlan {
        const SpawnRequest *req;
        sigset_t handled;      /* signals the runner catches or ignores: default in the child */
        int sock;              /* fork path: wait for "go" here and report a failure here; else -1 */
        int cgroup_fd;         /* the cgroup to create the child in, or -1 */
        bool move_into_cgroup; /* fork path: join cgroup_fd before the exec */
        int failed_errno;      /* clone3 path: the errno of a failed step, 0 after a good exec */
} ChildPlan;

/* In the child: moves fd above SPAWN_FD_FLOOR when it is low enough to be clobbered. */
static int high_fd(int fd) {
        return fd < 0 || fd >= SPAWN_FD_FLOOR ? fd : fcntl(fd, F_DUPFD, SPAWN_FD_FLOOR);
}

/* In the child, between clone and exec: async-signal-safe calls only. Returns only on failure,
 * with errno set. */
static void child_setup_and_exec(ChildPlan *plan) {
        const SpawnRequest *req = plan->req;
        int out = high_fd(req->stdout_fd), err = high_fd(req->stderr_fd);
        int metrics = high_fd(req->metrics_fd), probe = high_fd(req->probe_fd);
        int in = req->stdin_fd > 0 ? high_fd(req->stdin_fd) : open("/dev/null", O_RDONLY);
        if (out < 0 || err < 0 || metrics < 0 || (req->probe_fd >= 0 && probe < 0) || in < 0 ||
            dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || dup2(metrics, ENV_METRICS_FD) < 0 ||
            (probe >= 0 && dup2(probe, PROBE_REPORT_FD) < 0))
                return;
        /* Close-on-exec rather than closed: the fork path's socket must last until the exec. */
        if (close_range(probe >= 0 ? PROBE_REPORT_FD + 1 : ENV_METRICS_FD + 1, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
                return;
        if (plan->move_into_cgroup) {
                int procs = openat(plan->cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
                if (procs < 0 || write(procs, "0", 1) != 1)
                        return;
        }
        /* Its own process group: the fallback's way to find what it leaves behind. */
        if (setpgid(0, 0) < 0)
                return;
        /* Signals are blocked since before the clone: no handler of the runner's can run here. */
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        for (int sig = 1; sig < NSIG; sig++)
                if (sigismember(&plan->handled, sig) == 1)
                        (void) sigaction(sig, &dfl, NULL);
        sigset_t none;
        sigemptyset(&none);
        if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                return;
        if (req->cpus && sched_setaffinity(0, sizeof(cpu_set_t), req->cpus) < 0)
                return;
        if (req->cwd && chdir(req->cwd) < 0)
                return;
        char go;
        if (plan->sock >= 0 && read(plan->sock, &go, 1) != 1)
                _exit(127); /* the runner is gone */
        execve(req->exe, req->argv, req->envp);
}

static int child_main(void *p) {
        ChildPlan *plan = p;
        child_setup_and_exec(plan);
        int e = errno;
        if (plan->sock >= 0)
                (void) !write(plan->sock, &e, sizeof(e));
        else
                plan->failed_errno = e ? e : EIO; /* the runner reads it once this process is gone */
        _exit(127);
}

#if defined(__x86_64__)
/* The child runs here, one at a time (the runner waits for each exec). */
static char child_stack[64 * 1024] __attribute__((aligned(16)));

/* clone3() with the child on child_stack running fn(arg), then exit(its result). A raw syscall
 * cannot return into C code on a new stack, hence the assembly: in the child (rax 0) it calls
 * fn with the stack pointer the kernel set (the stack's 16-byte-aligned top). Returns the pid
 * or -errno. */
static long clone3_on_stack(struct clone_args *args, int (*fn)(void *), void *arg) {
        long ret;
        register long r8 __asm__("r8") = (long) fn;
        register long r9 __asm__("r9") = (long) arg;
        __asm__ volatile("syscall\n\t"
                         "test %%rax, %%rax\n\t"
                         "jnz 1f\n\t"
                         "xor %%ebp, %%ebp\n\t"
                         "mov %%r9, %%rdi\n\t"
                         "call *%%r8\n\t"
                         "mov %%eax, %%edi\n\t"
                         "mov %[exit], %%eax\n\t"
                         "syscall\n\t"
                         "hlt\n"
                         "1:"
                         : "=a"(ret)
                         : "a"((long) SYS_clone3), "D"(args), "S"(sizeof(*args)), "r"(r8),
                           "r"(r9), [exit] "i"(SYS_exit)
                         : "rcx", "r11", "memory", "cc");
        return ret;
}
#endif

/* Creates the child, inside plan->cgroup_fd when possible (falling back to no cgroup unless
 * req->cgroup_required). With clone3 on a stack the child has exec'd (or failed: see
 * plan->failed_errno) when this returns; on the fork path it waits for "go" on plan->sock.
 * Returns the pid with *ret_pidfd, or -errno. */
static pid_t create_child(ChildPlan *plan, int *ret_pidfd, bool *ret_in_cgroup, bool *ret_forked) {
        const SpawnRequest *req = plan->req;
        int pidfd = -1;
        long pid = -ENOSYS;
        *ret_in_cgroup = plan->cgroup_fd >= 0;
        *ret_forked = false;
#if defined(__x86_64__)
        if (plan->sock < 0) {
                struct clone_args args = {
                        .flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD |
                                 (plan->cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0),
                        .pidfd = (uint64_t) (uintptr_t) &pidfd,
                        .exit_signal = SIGCHLD,
                        .stack = (uint64_t) (uintptr_t) child_stack,
                        .stack_size = sizeof(child_stack),
                        .cgroup = plan->cgroup_fd >= 0 ? (uint64_t) plan->cgroup_fd : 0,
                };
                pid = clone3_on_stack(&args, child_main, plan);
                if (pid < 0 && pid != -ENOSYS && plan->cgroup_fd >= 0 && !req->cgroup_required) {
                        /* The cgroup refused the child (permissions, a controller's limit). */
                        args.flags &= ~(uint64_t) CLONE_INTO_CGROUP;
                        args.cgroup = 0;
                        *ret_in_cgroup = false;
                        pid = clone3_on_stack(&args, child_main, plan);
                }
                if (pid != -ENOSYS) {
                        if (pid < 0)
                                return (pid_t) pid;
                        *ret_pidfd = pidfd;
                        return (pid_t) pid;
                }
        }
#endif
        /* The fork path: the caller made plan->sock a socket. */
        if (plan->sock < 0)
                return -ENOSYS;
        *ret_forked = true;
        plan->move_into_cgroup = plan->cgroup_fd >= 0;
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0)
                child_main(plan);
        if ((pidfd = (int) syscall(SYS_pidfd_open, (pid_t) pid, 0)) < 0) {
                int r = negative_errno();
                kill((pid_t) pid, SIGKILL);
                waitpid((pid_t) pid, NULL, 0);
                return r;
        }
        *ret_pidfd = pidfd;
        return (pid_t) pid;
}

/* Kills the child and everything it started: the cgroup when it has one, else its group. */
static void kill_tree(pid_t pid, CgroupRun *cgroup) {
        if (!cgroup || cgroup_children_kill(cgroup) < 0)
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
        int r;
        ChildPlan plan = { .req = req,
                           .sock = -1,
                           .cgroup_fd = req->cgroup ? req->cgroup->children_fd : -1 };
        sigemptyset(&plan.handled);
        for (int sig = 1; sig < NSIG; sig++) {
                struct sigaction sa;
                if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &sa) == 0 &&
                    sa.sa_handler != SIG_DFL)
                        sigaddset(&plan.handled, sig);
        }
        if (req->cpus && req->runner_cpus && sched_setaffinity(0, sizeof(cpu_set_t), req->runner_cpus) < 0)
                return negative_errno();

        /* The cgroup's counters before the child, for its share of them after. */
        _cleanup_(cgroup_window_done) CgroupWindow window = { .peak_fd = -1 };
        if (req->cgroup && (r = cgroup_window_open(req->cgroup, &window)) < 0)
                return r;

        /* No signal may reach the child before it reset the runner's handlers. */
        sigset_t all, old;
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, &old);
        int pidfd_raw = -1;
        bool forked;
        uint64_t start = now_ns();
        pid_t pid = create_child(&plan, &pidfd_raw, &ret->in_cgroup, &forked);
        _cleanup_close_ int sock_runner = -1;
        if (pid == -ENOSYS) { /* no clone3 here: the fork path, with its socket */
                int sock[2];
                if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) < 0) {
                        sigprocmask(SIG_SETMASK, &old, NULL);
                        return negative_errno();
                }
                sock_runner = sock[0];
                plan.sock = sock[1];
                pid = create_child(&plan, &pidfd_raw, &ret->in_cgroup, &forked);
                safe_close(plan.sock);
        }
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (pid < 0)
                return pid;
        _cleanup_close_ int pidfd = pidfd_raw;
        int cgroup_fd = ret->in_cgroup ? plan.cgroup_fd : -1;
        CgroupRun *cgroup = ret->in_cgroup ? req->cgroup : NULL;

        int exec_errno = plan.failed_errno;
        if (forked) {
                start = now_ns();
                ssize_t n = send(sock_runner, "g", 1, MSG_NOSIGNAL);
                if (n == 1)
                        while ((n = recv(sock_runner, &exec_errno, sizeof(exec_errno), 0)) < 0 &&
                               errno == EINTR)
                                ;
                /* No end-of-file: the child reported a failure, or died before its exec. */
                if (n != 0 && n != (ssize_t) sizeof(exec_errno))
                        exec_errno = EIO;
        }
        if (exec_errno) {
                kill_tree(pid, cgroup);
                waitpid(pid, NULL, 0);
                ret->end = SPAWN_EXEC_FAILED;
                ret->exec_errno = exec_errno;
                return 0;
        }

        SpawnEnd end = wait_child(pidfd, req->cancel_fd, start + req->timeout_ns);
        /* At a timeout the child itself is still there: the others are what it left running. */
        int others = -1;
        if (end != SPAWN_EXITED) {
                others = cgroup_fd >= 0 ? cgroup_child_processes(cgroup_fd) - 1 : -1;
                kill_tree(pid, cgroup);
        }

        int status = 0;
        while (wait4(pid, &status, 0, &ret->usage) < 0) {
                if (errno != EINTR)
                        return negative_errno();
        }
        ret->wall_ns = now_ns() - start;

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
