/* SPDX-License-Identifier: MIT */
/*
 * alloclab-spawner: the process that creates alloclab's children, one at a time, on request
 * (runner/spawn.c starts it; runner/spawn-wire.h is what they say).
 *
 * Why a process of its own: a child is created the way posix_spawn() does it (clone with
 * CLONE_VM | CLONE_VFORK: the cost does not grow with the creator's size, and the creator
 * sleeps until the exec), and at the exec Linux records the high-water RSS of the address space
 * the child leaves into the child's ru_maxrss. Created by alloclab, every child's peak RSS would
 * be at least alloclab's (5 MiB for `true`). This program is linked statically, holds nothing
 * but one request at a time, and resets its own high-water mark before each child
 * (/proc/self/clear_refs), so the floor it leaves is its own resident size, about half a MiB,
 * below what any dynamically linked program has of its own.
 *
 * With clone3() the child starts directly inside its cgroup (CLONE_INTO_CGROUP); glibc 2.36 has no clone3
 * wrapper that runs a function on a stack of its own, so a few lines of assembly do that (x86-64). The child
 * sets itself up with async-signal-safe calls only, on its own stack, sharing this process's memory: its own
 * process group; fd 0 /dev/null or the given stdin, fds 1 and 2 the capture memfds, ENV_METRICS_FD the
 * metrics memfd, PROBE_REPORT_FD the probe's report when probed, every other fd closed at exec; its CPUs;
 * its cwd; every signal at its default. A failing step leaves its errno in this process's memory. This
 * process ignores the signals that stop alloclab (ignored_signals), which alloclab handles, and blocks none
 * (alloclab starts it with none blocked); it dies with alloclab (SIGKILL).
 *
 * Elsewhere (another architecture, Linux < 5.3 without clone3) the child is fork()ed, moves
 * itself into its cgroup, sets itself up and waits on a socket; the clock starts when this
 * process sends "go", and the close-on-exec socket reports the exec.
 *
 * The clock runs from just before the child's creation to just after its reap, here; alloclab
 * sleeps until this process says the child ended (one process wakes at the child's exit, not
 * two), and kills the tree at a timeout or a stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe/report.h"
#include "runner/counters.h"
#include "runner/env.h"
#include "runner/spawn-wire.h"
#include "runner/timeline-sampler.h"
#include "util/clock.h"

/* The child's fds 1..PROBE_REPORT_FD are filled by dup2() in order; a source fd that is itself
 * one of those numbers would be overwritten before its turn. Sources are therefore moved above
 * SPAWN_FD_FLOOR first. */
#define SPAWN_FD_FLOOR 16

/* One child: what it needs, in this process's memory. */
typedef struct ChildPlan {
        const char *exe, *cwd;
        char **argv, **envp;
        int stdin_fd, stdout_fd, stderr_fd, metrics_fd, probe_fd; /* stdin, probe: -1 for none */
        const cpu_set_t *cpus;                                    /* or NULL */
        int cgroup_fd;                                            /* the cgroup to create it in, or -1 */
        bool cgroup_required;
        int sock;              /* fork path: wait for "go" here and report a failure here; else -1 */
        bool move_into_cgroup; /* fork path: join cgroup_fd before the exec */
        int failed_errno;      /* clone3 path: the errno of a failed step, 0 after a good exec */
} ChildPlan;

/* Signals this process ignores, and its children take at their defaults again: those that
 * whoever stops alloclab may send to every process of the job (scancel, a terminal's ^C,
 * systemd's stop), which are alloclab's to handle: it ends the child and records the run. */
static const int ignored_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE };

/* In the child: moves fd above SPAWN_FD_FLOOR when it is low enough to be clobbered. */
static int high_fd(int fd) {
        return fd < 0 || fd >= SPAWN_FD_FLOOR ? fd : fcntl(fd, F_DUPFD, SPAWN_FD_FLOOR);
}

/* In the child, between clone and exec: async-signal-safe calls only. Returns only on failure,
 * with errno set. */
static void child_setup_and_exec(ChildPlan *plan) {
        int out = high_fd(plan->stdout_fd), err = high_fd(plan->stderr_fd);
        int metrics = high_fd(plan->metrics_fd), probe = high_fd(plan->probe_fd);
        int in = plan->stdin_fd >= 0 ? high_fd(plan->stdin_fd) : open("/dev/null", O_RDONLY);
        if (out < 0 || err < 0 || metrics < 0 || (plan->probe_fd >= 0 && probe < 0) || in < 0 ||
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
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        for (size_t i = 0; i < sizeof(ignored_signals) / sizeof(ignored_signals[0]); i++)
                if (sigaction(ignored_signals[i], &dfl, NULL) < 0)
                        return;
        if (plan->cpus && sched_setaffinity(0, sizeof(cpu_set_t), plan->cpus) < 0)
                return;
        if (plan->cwd && chdir(plan->cwd) < 0)
                return;
        char go;
        if (plan->sock >= 0 && read(plan->sock, &go, 1) != 1)
                _exit(127); /* the spawner is gone */
        execve(plan->exe, plan->argv, plan->envp);
}

static int child_main(void *p) {
        ChildPlan *plan = p;
        child_setup_and_exec(plan);
        int e = errno;
        if (plan->sock >= 0)
                (void) !write(plan->sock, &e, sizeof(e));
        else
                plan->failed_errno = e ? e : EIO; /* the spawner reads it once this process is gone */
        _exit(127);
}

#if defined(__x86_64__)
/* The child runs here, one at a time (the spawner waits for each exec). */
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
 * plan->cgroup_required). With clone3 on a stack the child has exec'd (or failed: see
 * plan->failed_errno) when this returns; on the fork path it waits for "go" on plan->sock.
 * Returns the pid, or -errno. */
static pid_t create_child(ChildPlan *plan, bool *ret_in_cgroup, bool *ret_forked) {
        long pid = -ENOSYS;
        *ret_in_cgroup = plan->cgroup_fd >= 0;
        *ret_forked = false;
#if defined(__x86_64__)
        if (plan->sock < 0) {
                struct clone_args args = {
                        .flags = CLONE_VM | CLONE_VFORK | (plan->cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0),
                        .exit_signal = SIGCHLD,
                        .stack = (uint64_t) (uintptr_t) child_stack,
                        .stack_size = sizeof(child_stack),
                        .cgroup = plan->cgroup_fd >= 0 ? (uint64_t) plan->cgroup_fd : 0,
                };
                pid = clone3_on_stack(&args, child_main, plan);
                if (pid < 0 && pid != -ENOSYS && plan->cgroup_fd >= 0 && !plan->cgroup_required) {
                        /* The cgroup refused the child (permissions, a controller's limit). */
                        args.flags &= ~(uint64_t) CLONE_INTO_CGROUP;
                        args.cgroup = 0;
                        *ret_in_cgroup = false;
                        pid = clone3_on_stack(&args, child_main, plan);
                }
                if (pid != -ENOSYS)
                        return (pid_t) pid;
        }
#endif
        /* The fork path: the caller made plan->sock a socket. */
        if (plan->sock < 0)
                return -ENOSYS;
        *ret_forked = true;
        plan->move_into_cgroup = plan->cgroup_fd >= 0;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                child_main(plan);
        return (pid_t) pid;
}

/* Creates the child of plan and says how it started (also into *ret_started): its pid, or the
 * errno of its failed exec (reaped), or the spawner's own error. Returns the pid, or 0 when
 * there is no child to reap, or -errno when alloclab cannot be told. */
static pid_t start_child(int sock, ChildPlan *plan, SpawnWireStarted *ret_started) {
        SpawnWireStarted started = {};
        bool forked = false, in_cgroup = false;
        started.start_ns = now_ns();
        pid_t pid = create_child(plan, &in_cgroup, &forked);
        if (pid == -ENOSYS) { /* no clone3 here: the fork path, with its socket */
                int pair[2];
                if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                        pid = -errno;
                else {
                        plan->sock = pair[1];
                        pid = create_child(plan, &in_cgroup, &forked);
                        close(pair[1]);
                        plan->sock = -1;
                        if (pid > 0) {
                                started.start_ns = now_ns();
                                ssize_t n = send(pair[0], "g", 1, MSG_NOSIGNAL);
                                if (n == 1)
                                        while ((n = recv(pair[0], &plan->failed_errno,
                                                         sizeof(plan->failed_errno), 0)) < 0 &&
                                               errno == EINTR)
                                                ;
                                /* No end-of-file: the child reported a failure, or died before
                                 * its exec. */
                                if (n != 0 && n != (ssize_t) sizeof(plan->failed_errno))
                                        plan->failed_errno = EIO;
                        }
                        close(pair[0]);
                }
        }
        started.pid = pid > 0 ? pid : 0;
        started.in_cgroup = in_cgroup;
        if (pid < 0)
                started.error = pid;
        else if (plan->failed_errno) {
                started.exec_errno = plan->failed_errno;
                waitpid(pid, NULL, 0);
                pid = 0;
        }
        *ret_started = started;
        int r = wire_send(sock, &started, sizeof(started), NULL, 0);
        return r < 0 ? r : pid > 0 ? pid : 0;
}

/* A request's strings (exe, cwd, argv, envp) from its memfd into *ret_buf, and the vectors
 * into plan. Returns 0 or -errno. */
static int read_strings(int fd, const SpawnWireRequest *req, ChildPlan *plan, char **ret_buf) {
        if (req->strings_size == 0 || req->strings_size > (64u << 20) || req->n_argv == 0)
                return -EINVAL;
        char *buf = malloc(req->strings_size);
        char **vec = calloc((size_t) req->n_argv + req->n_envp + 2, sizeof(char *));
        if (!buf || !vec) {
                free(buf);
                free(vec);
                return -ENOMEM;
        }
        *ret_buf = buf;
        plan->argv = vec;
        plan->envp = vec + req->n_argv + 1;
        size_t got = 0;
        while (got < req->strings_size) {
                ssize_t n = pread(fd, buf + got, req->strings_size - got, (off_t) got);
                if (n <= 0)
                        return n < 0 ? -errno : -EBADMSG;
                got += (size_t) n;
        }
        if (buf[got - 1] != 0)
                return -EBADMSG;
        /* exe, [cwd,] argv..., envp...: each string ends at its NUL. */
        size_t head = req->has_cwd ? 2 : 1, want = head + req->n_argv + req->n_envp, n = 0;
        char *heads[2] = {};
        for (char *at = buf; at < buf + got && n < want; at += strlen(at) + 1, n++) {
                if (n < head)
                        heads[n] = at;
                else if (n - head < req->n_argv)
                        plan->argv[n - head] = at;
                else
                        plan->envp[n - head - req->n_argv] = at;
        }
        if (n != want)
                return -EBADMSG;
        plan->exe = heads[0];
        plan->cwd = heads[1];
        return 0;
}

/* Resets this process's high-water RSS to what it holds now (Linux 4.0): the request just
 * served is freed, and the next child must not inherit its peak. */
static void forget_peak(void) {
        int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
                (void) !write(fd, "5", 1);
                close(fd);
        }
}

/* Serves one request: creates its child, says how it started, reaps it and says how it ended.
 * Returns 0, or -errno when alloclab cannot be told (then this process ends). */
static int serve(int sock, const SpawnWireRequest *req, int *fds, size_t n_fds) {
        size_t want =
                SPAWN_WIRE_FD_STDIN + req->has_stdin + req->has_probe + req->has_cgroup + req->has_timeline;
        ChildPlan plan = { .stdin_fd = -1, .probe_fd = -1, .cgroup_fd = -1, .sock = -1 };
        char *buf = NULL;
        int r = n_fds == want ? read_strings(fds[SPAWN_WIRE_FD_STRINGS], req, &plan, &buf) : -EBADMSG;
        pid_t pid = 0;
        int cgroup_fd = -1, timeline_fd = -1;
        SpawnWireStarted started = {};
        CounterSet counters; /* the child's, inherited (runner/counters.h) */
        counters_open(&counters);
        if (r < 0) {
                SpawnWireStarted failed = { .error = r };
                r = wire_send(sock, &failed, sizeof(failed), NULL, 0);
        } else {
                size_t next = SPAWN_WIRE_FD_STDIN;
                plan.stdout_fd = fds[SPAWN_WIRE_FD_STDOUT];
                plan.stderr_fd = fds[SPAWN_WIRE_FD_STDERR];
                plan.metrics_fd = fds[SPAWN_WIRE_FD_METRICS];
                plan.stdin_fd = req->has_stdin ? fds[next++] : -1;
                plan.probe_fd = req->has_probe ? fds[next++] : -1;
                plan.cgroup_fd = cgroup_fd = req->has_cgroup ? fds[next++] : -1;
                timeline_fd = req->has_timeline ? fds[next++] : -1;
                plan.cgroup_required = req->cgroup_required;
                plan.cpus = req->has_cpus ? &req->cpus : NULL;
                r = pid = start_child(sock, &plan, &started);
        }
        free(plan.argv);
        free(buf);
        /* The sampler keeps what it reads until the reap: the metrics file, the cgroup, its memfd. */
        TimelineSampler sampler;
        bool sampling = pid > 0 && timeline_fd >= 0;
        if (sampling)
                sampler_begin(&sampler, timeline_fd, fds[SPAWN_WIRE_FD_METRICS],
                              started.in_cgroup ? cgroup_fd : -1, pid, started.start_ns,
                              req->timeline_period_ns);
        for (size_t i = 0; i < n_fds; i++)
                if (!sampling ||
                    (fds[i] != timeline_fd && fds[i] != cgroup_fd && i != SPAWN_WIRE_FD_METRICS))
                        close(fds[i]);
        if (pid <= 0) {
                counters_close(&counters);
                return r < 0 ? r : 0;
        }
        forget_peak();
        if (sampling && sampler_active(&sampler))
                sampler_run(&sampler);
        SpawnWireEnded ended = {};
        while (wait4(pid, &ended.status, 0, &ended.usage) < 0)
                if (errno != EINTR)
                        return -errno;
        ended.end_ns = now_ns();
        counters_read(&counters, &ended.counters);
        counters_close(&counters);
        if (sampling) {
                sampler_end(&sampler);
                close(timeline_fd);
                close(fds[SPAWN_WIRE_FD_METRICS]);
                if (cgroup_fd >= 0)
                        close(cgroup_fd);
        }
        return wire_send(sock, &ended, sizeof(ended), NULL, 0);
}

int main(int argc, char **argv) {
        /* Started by alloclab (runner/spawn.c) with its socket at SPAWN_WIRE_SOCKET_FD, in a
         * process group of its own, default signal dispositions and an empty mask; it dies with
         * alloclab (argv[1], its pid, tells a parent that died before the prctl). Nothing else
         * may stop it: alloclab must get every child's end. */
        if (argc != 2 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != (pid_t) atol(argv[1]))
                return 1;
        close_range(SPAWN_WIRE_SOCKET_FD + 1, ~0U, 0);
        struct sigaction ign = { .sa_handler = SIG_IGN };
        for (size_t i = 0; i < sizeof(ignored_signals) / sizeof(ignored_signals[0]); i++)
                (void) sigaction(ignored_signals[i], &ign, NULL);
        forget_peak();
        for (;;) {
                SpawnWireRequest req;
                int fds[SPAWN_WIRE_MAX_FDS];
                size_t n_fds = 0;
                int r = wire_recv(SPAWN_WIRE_SOCKET_FD, &req, sizeof(req), fds, SPAWN_WIRE_MAX_FDS, &n_fds);
                if (r == -ECONNRESET)
                        return 0; /* alloclab is done */
                if (r == -EBADMSG) {
                        SpawnWireStarted refused = { .error = r };
                        r = wire_send(SPAWN_WIRE_SOCKET_FD, &refused, sizeof(refused), NULL, 0);
                        if (r < 0)
                                return 1;
                        continue;
                }
                if (r < 0 || serve(SPAWN_WIRE_SOCKET_FD, &req, fds, n_fds) < 0)
                        return 1;
        }
}
