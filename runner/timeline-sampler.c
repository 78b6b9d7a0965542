/* SPDX-License-Identifier: MIT */
/*
 * The spawner's side of memory_timeline (runner/timeline.h): reads the child's tree's memory at
 * its exec and at each tick until the reap, and writes what it read into the request's memfd
 * after it. Linked into the static alloclab-spawner: plain system calls, no allocation while the
 * child runs (the readings go into static arrays, given back to the kernel after each child, so
 * that the spawner's resident size, the floor of the next child's peak RSS, does not grow).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runner/timeline-sampler.h"
#include "util/clock.h"

/* The tree's processes followed without a cgroup (by their children files), at most. */
#define SAMPLER_MAX_PIDS 1024

static TimelinePoint points[TIMELINE_MAX_POINTS] __attribute__((aligned(4096)));
static TimelineSize sizes[TIMELINE_MAX_SIZES];
static pid_t pids[SAMPLER_MAX_PIDS];
static char text[16384];

/* The whole of a small /proc or cgroup file from its start into text; returns its length or -1. */
static ssize_t read_text(int fd) {
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -1;
        size_t got = 0;
        for (;;) {
                ssize_t n = read(fd, text + got, sizeof(text) - 1 - got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -1;
                if (n == 0 || (got += (size_t) n) == sizeof(text) - 1)
                        break;
        }
        text[got] = 0;
        return (ssize_t) got;
}

static ssize_t read_path(const char *path) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        ssize_t n = read_text(fd);
        close(fd);
        return n;
}

/* Appends the pids of the whitespace-separated list in text to pids[*n]. */
static void add_pids(size_t *n) {
        for (char *p = text, *end; *p && *n < SAMPLER_MAX_PIDS; p = end) {
                long v = strtol(p, &end, 10);
                if (end == p)
                        break;
                if (v > 0)
                        pids[(*n)++] = (pid_t) v;
        }
}

/* The tree's processes without a cgroup: the child, then every child of every thread of each
 * process found (/proc/PID/task/TID/children). Returns how many are in pids[]. */
static size_t tree_pids(pid_t root) {
        size_t n = 0;
        pids[n++] = root;
        for (size_t i = 0; i < n; i++) {
                char path[64];
                snprintf(path, sizeof(path), "/proc/%d/task", (int) pids[i]);
                int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dir < 0)
                        continue;
                char buf[4096];
                long got;
                while ((got = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0)
                        for (long at = 0; at < got;) {
                                struct dirent64 *d = (struct dirent64 *) (buf + at);
                                at += d->d_reclen;
                                if (d->d_name[0] == '.')
                                        continue;
                                snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", (int) pids[i],
                                         d->d_name);
                                if (read_path(path) > 0)
                                        add_pids(&n);
                        }
                close(dir);
        }
        return n;
}

/* The tree's resident memory in KiB from /proc/PID/statm, or -1 when no process could be read. */
static int64_t tree_statm_kib(const TimelineSampler *s) {
        size_t n;
        if (s->procs_fd >= 0) {
                n = 0;
                if (read_text(s->procs_fd) >= 0)
                        add_pids(&n);
        } else
                n = tree_pids(s->pid);
        int64_t kib = -1;
        for (size_t i = 0; i < n; i++) {
                char path[48];
                snprintf(path, sizeof(path), "/proc/%d/statm", (int) pids[i]);
                unsigned long size, resident;
                /* A process without an address space (exiting, a zombie) reads 0: not a reading. */
                if (read_path(path) > 0 && sscanf(text, "%lu %lu", &size, &resident) == 2 && size > 0)
                        kib = (kib < 0 ? 0 : kib) + (int64_t) (resident * (unsigned long) s->page_kib);
        }
        return kib;
}

static int64_t tree_kib(const TimelineSampler *s) {
        if (s->memory_fd < 0)
                return tree_statm_kib(s);
        if (read_text(s->memory_fd) <= 0)
                return -1;
        return (int64_t) (strtoull(text, NULL, 10) / 1024);
}

/* Keeps every other reading (the first and the last kept): the period doubles. */
static void thin_out(TimelineSampler *s) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < s->head.n_points; i += 2)
                points[n++] = points[i];
        s->head.n_points = n;
        s->head.period_ns *= 2;
        s->head.thinned++;
}

/* One tick: the metrics file's size, then the memory (the order timeline.h relies on). */
static void sample(TimelineSampler *s) {
        uint32_t t_ms = (uint32_t) ((now_ns() - s->start_ns) / 1000000);
        struct stat st;
        if (fstat(s->metrics_fd, &st) == 0 && (uint64_t) st.st_size > s->metrics_size &&
            s->head.n_sizes < TIMELINE_MAX_SIZES) {
                s->metrics_size = (uint64_t) st.st_size;
                sizes[s->head.n_sizes++] = (TimelineSize){ t_ms, (uint32_t) s->metrics_size };
        }
        int64_t kib = tree_kib(s);
        if (kib < 0)
                return; /* between the tree's processes, or gone: no reading */
        if (s->head.n_points == TIMELINE_MAX_POINTS)
                thin_out(s);
        points[s->head.n_points++] =
                (TimelinePoint){ t_ms, (uint32_t) (kib > UINT32_MAX ? UINT32_MAX : kib) };
}

void sampler_begin(TimelineSampler *s, int out_fd, int metrics_fd, int cgroup_fd, pid_t pid,
                   uint64_t start_ns, uint64_t period_ns) {
        *s = (TimelineSampler){ .out_fd = out_fd,
                                .metrics_fd = metrics_fd,
                                .memory_fd = -1,
                                .procs_fd = -1,
                                .pidfd = -1,
                                .pid = pid,
                                .start_ns = start_ns };
        s->head.period_ns = period_ns < TIMELINE_MIN_PERIOD_NS ? TIMELINE_MIN_PERIOD_NS : period_ns;
        long page = sysconf(_SC_PAGESIZE);
        s->page_kib = page >= 1024 ? (uint32_t) (page / 1024) : 4;
        s->pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (s->pidfd < 0) {
                s->head.error = -errno; /* Linux < 5.3: the reap cannot be waited for with a timeout */
                return;
        }
        if (cgroup_fd >= 0) {
                s->memory_fd = openat(cgroup_fd, "memory.current", O_RDONLY | O_CLOEXEC);
                if (s->memory_fd < 0)
                        s->procs_fd = openat(cgroup_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
        }
        s->head.source = s->memory_fd >= 0 ? TIMELINE_CGROUP : TIMELINE_PROC;
        sample(s); /* at the exec */
}

bool sampler_active(const TimelineSampler *s) {
        return s->pidfd >= 0;
}

void sampler_run(TimelineSampler *s) {
        uint64_t next = s->start_ns + s->head.period_ns;
        for (;;) {
                uint64_t now = now_ns();
                if (now >= next) {
                        sample(s);
                        /* A late tick is not made up for: the next one is the next in the future. */
                        uint64_t period = s->head.period_ns;
                        next += ((now_ns() - next) / period + 1) * period;
                        continue;
                }
                uint64_t left = next - now;
                struct timespec ts = { .tv_sec = (time_t) (left / 1000000000ULL),
                                       .tv_nsec = (long) (left % 1000000000ULL) };
                struct pollfd fd = { .fd = s->pidfd, .events = POLLIN };
                int n = ppoll(&fd, 1, &ts, NULL);
                if (n > 0 || (n < 0 && errno != EINTR))
                        return; /* it exited (or cannot be waited for: the caller's wait4 does) */
        }
}

void sampler_end(TimelineSampler *s) {
        if (s->head.n_points == 0 && s->head.error == 0)
                s->head.error = -ESRCH; /* no process of the tree could be read */
        if (s->head.error < 0)
                s->head.source = TIMELINE_NONE;
        (void) !pwrite(s->out_fd, &s->head, sizeof(s->head), 0);
        off_t at = sizeof(s->head);
        (void) !pwrite(s->out_fd, points, s->head.n_points * sizeof(TimelinePoint), at);
        at += (off_t) (s->head.n_points * sizeof(TimelinePoint));
        (void) !pwrite(s->out_fd, sizes, s->head.n_sizes * sizeof(TimelineSize), at);
        /* The readings' pages go back: they would raise the next child's floor (see above). */
        (void) madvise(points, sizeof(points), MADV_DONTNEED);
        if (s->pidfd >= 0)
                close(s->pidfd);
        if (s->memory_fd >= 0)
                close(s->memory_fd);
        if (s->procs_fd >= 0)
                close(s->procs_fd);
}
