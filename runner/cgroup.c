/* SPDX-License-Identifier: MIT */
/*
 * Cgroup v2 bookkeeping for runner/spawn.c. Everything here runs before a child starts or after
 * it was reaped, never while it runs. Only two kernel interfaces beyond mkdir/rmdir are needed:
 * cgroup.kill (5.14) to end a whole tree at once, and cgroup.events to see it empty.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "runner/cgroup.h"
#include "util/cleanup.h"
#include "util/io.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define RUN_PREFIX        "alloclab-"
/* The leaf a delegated runner moves into: a cgroup that hands controllers to its children may
 * not hold processes itself. */
#define CGROUP_RUNNER     "runner"
/* The leaf a service that took over its cgroup moves into (cgroup_take_delegation). */
#define CGROUP_SUPERVISOR "supervisor"
/* How long a killed tree may take to leave its cgroup before the directory is left behind. */
#define EMPTY_WAIT_MS     5000

static int write_at(int dir, const char *file, const char *text) {
        _cleanup_close_ int fd = openat(dir, file, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        size_t n = strlen(text);
        return write(fd, text, n) == (ssize_t) n ? 0 : negative_errno();
}

/* Reads a small file below dir into buf (NUL-terminated). Returns its length or -errno. */
static ssize_t read_at(int dir, const char *file, char *buf, size_t size) {
        _cleanup_close_ int fd = openat(dir, file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        ssize_t n = read_full(fd, buf, size - 1);
        if (n < 0)
                return n;
        buf[n] = 0;
        return n;
}

/* The value of `key` in a flat-keyed file ("key value" lines, as in cpu.stat). */
static int keyed_value(const char *text, const char *key, uint64_t *ret) {
        size_t len = strlen(key);
        for (const char *line = text; line && *line;
             line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
                if (strncmp(line, key, len) == 0 && line[len] == ' ') {
                        *ret = strtoull(line + len + 1, NULL, 10);
                        return 0;
                }
        return -ENOENT;
}

/* Records why the run goes without cgroups; returns 0 (that is not an error) or -ENOMEM. */
static __attribute__((format(printf, 2, 3))) int no_cgroup(CgroupRun *ret, const char *format, ...) {
        va_list ap;
        va_start(ap, format);
        int n = vasprintf(&ret->why_not, format, ap);
        va_end(ap);
        return n < 0 ? -ENOMEM : 0;
}

/* The mount point of the cgroup2 hierarchy and this process's cgroup in it, joined; returns 1
 * when that is the hierarchy's root, 0 otherwise, or -errno. */
static int own_cgroup(char **ret) {
        _cleanup_fclose_ FILE *mounts = fopen("/proc/self/mountinfo", "re");
        _cleanup_fclose_ FILE *self = fopen("/proc/self/cgroup", "re");
        if (!mounts || !self)
                return -ENOENT;
        char line[4096], mount[2048] = "", path[2048] = "";
        while (!mount[0] && fgets(line, sizeof(line), mounts)) {
                const char *sep = strstr(line, " - cgroup2 ");
                char point[2048];
                if (sep && sscanf(line, "%*s %*s %*s %*s %2047s", point) == 1)
                        snprintf(mount, sizeof(mount), "%s", point);
        }
        while (!path[0] && fgets(line, sizeof(line), self))
                if (strncmp(line, "0::", 3) == 0)
                        snprintf(path, sizeof(path), "%.*s", (int) strcspn(line + 3, "\n"), line + 3);
        if (!mount[0] || !path[0])
                return -ENOENT;
        bool root = strcmp(path, "/") == 0;
        return asprintf(ret, "%s%s", mount, root ? "" : path) < 0 ? -ENOMEM : root;
}

/* Run cgroups of alloclab processes that are gone (killed with SIGKILL, say): kill what they
 * left running and remove them. Best effort; a tree still dying is left for the next run. */
static void remove_stale(int base) {
        int fd = fcntl(base, F_DUPFD_CLOEXEC, 0);
        _cleanup_(closedirp) DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                safe_close(fd);
                return;
        }
        for (struct dirent *e; (e = readdir(d));) {
                char *end;
                if (strncmp(e->d_name, RUN_PREFIX, strlen(RUN_PREFIX)) != 0)
                        continue;
                long pid = strtol(e->d_name + strlen(RUN_PREFIX), &end, 10);
                if (*end || pid <= 0 || kill((pid_t) pid, 0) == 0 || errno != ESRCH)
                        continue;
                _cleanup_close_ int run = openat(base, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                int cfd = run >= 0 ? fcntl(run, F_DUPFD_CLOEXEC, 0) : -1;
                _cleanup_(closedirp) DIR *children = cfd >= 0 ? fdopendir(cfd) : NULL;
                if (!children) {
                        safe_close(cfd);
                        continue;
                }
                (void) write_at(run, "cgroup.kill", "1");
                for (struct dirent *c; (c = readdir(children));)
                        if (c->d_type == DT_DIR && c->d_name[0] != '.')
                                (void) unlinkat(run, c->d_name, AT_REMOVEDIR);
                (void) unlinkat(base, e->d_name, AT_REMOVEDIR);
        }
}

int cgroup_take_delegation(void) {
        _cleanup_free_ char *own = NULL;
        if (getenv(CGROUP_ROOT_ENV) || own_cgroup(&own) != 0)
                return 0;
        _cleanup_close_ int fd = open(own, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char procs[64], self[32];
        snprintf(self, sizeof(self), "%d\n", (int) getpid());
        /* The root cgroup may hold processes and hand out controllers at once; elsewhere only a
         * process that is alone in its cgroup may take it over. */
        if (fd < 0 || faccessat(fd, "cgroup.procs", W_OK, 0) < 0 ||
            read_at(fd, "cgroup.procs", procs, sizeof(procs)) < 0 || strcmp(procs, self) != 0)
                return 0;
        if ((mkdirat(fd, CGROUP_SUPERVISOR, 0755) < 0 && errno != EEXIST) ||
            write_at(fd, CGROUP_SUPERVISOR "/cgroup.procs", self) < 0)
                return negative_errno();
        char controllers[256];
        if (read_at(fd, "cgroup.controllers", controllers, sizeof(controllers)) > 0) {
                if (strstr(controllers, "memory"))
                        (void) write_at(fd, "cgroup.subtree_control", "+memory");
                if (strstr(controllers, "pids"))
                        (void) write_at(fd, "cgroup.subtree_control", "+pids");
        }
        return setenv(CGROUP_ROOT_ENV, own, 0) < 0 ? -ENOMEM : 1;
}

int cgroup_run_open(CgroupRun *ret) {
        *ret = (CgroupRun){ .fd = -1 };
        const char *root = getenv(CGROUP_ROOT_ENV);
        if (root && strcmp(root, "off") == 0)
                return no_cgroup(ret, "turned off (%s=off)", CGROUP_ROOT_ENV);
        _cleanup_free_ char *base = NULL;
        if (root && *root) {
                if (!(base = strdup(root)))
                        return -ENOMEM;
        } else if (own_cgroup(&base) < 0)
                return no_cgroup(ret, "no cgroup v2 hierarchy");
        _cleanup_close_ int base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct statfs fs;
        if (base_fd < 0 || fstatfs(base_fd, &fs) < 0)
                return no_cgroup(ret, "cannot open %s: %s", base, strerror(errno));
        if (fs.f_type != CGROUP2_SUPER_MAGIC)
                return no_cgroup(ret, "%s is not a cgroup v2 directory", base);
        remove_stale(base_fd);

        char name[64];
        snprintf(name, sizeof(name), RUN_PREFIX "%d", (int) getpid());
        if (mkdirat(base_fd, name, 0755) < 0 && errno != EEXIST)
                return no_cgroup(ret, "cannot create a cgroup in %s: %s", base, strerror(errno));
        int fd = openat(base_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || faccessat(fd, "cgroup.kill", W_OK, 0) < 0) {
                int err = errno;
                safe_close(fd);
                (void) unlinkat(base_fd, name, AT_REMOVEDIR);
                return err == ENOENT ? no_cgroup(ret, "%s has no cgroup.kill (Linux 5.14 or later)", base)
                                     : no_cgroup(ret, "cannot use a cgroup in %s: %s", base, strerror(err));
        }
        ret->fd = fd;
        if (asprintf(&ret->path, "%s/%s", base, name) < 0)
                return -ENOMEM;
        /* Children see memory.peak only when the run's cgroup hands them the controller. */
        ret->memory = write_at(fd, "cgroup.subtree_control", "+memory") == 0;
        ret->pids = write_at(fd, "cgroup.subtree_control", "+pids") == 0;
        return 0;
}

/* Removes the cgroup `name` below `parent` once its processes are gone. Killed processes leave
 * quickly, and cgroup.events signals POLLPRI on each change (until it is read again); the kernel
 * may also refuse the rmdir (EBUSY) for a moment after the last one left, while exited tasks
 * finish: retried every 10 ms, for EMPTY_WAIT_MS at most. */
static void remove_when_empty(int parent, const char *name) {
        char events_path[64];
        snprintf(events_path, sizeof(events_path), "%s/cgroup.events", name);
        _cleanup_close_ int events = openat(parent, events_path, O_RDONLY | O_CLOEXEC);
        for (int tries = 0;
             unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno == EBUSY && tries < EMPTY_WAIT_MS / 10;
             tries++) {
                char buf[256];
                ssize_t n = events >= 0 ? pread(events, buf, sizeof(buf) - 1, 0) : -1;
                buf[n > 0 ? n : 0] = 0;
                struct pollfd p = { .fd = events, .events = POLLPRI };
                (void) poll(&p, n > 0 && !strstr(buf, "populated 0") ? 1 : 0, 10);
        }
}

void cgroup_run_close(CgroupRun *c) {
        if (c->path) { /* fd is valid only with path: a zeroed CgroupRun holds nothing */
                remove_when_empty(c->fd, CGROUP_RUNNER);
                (void) rmdir(c->path);
                safe_close(c->fd);
        }
        free(c->path);
        free(c->why_not);
        *c = (CgroupRun){ .fd = -1 };
}

int cgroup_run_delegate(const CgroupRun *run, uid_t uid, gid_t gid) {
        if (!run->path)
                return 0;
        if (mkdirat(run->fd, CGROUP_RUNNER, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        char self[32];
        snprintf(self, sizeof(self), "%d", (int) getpid());
        int r = write_at(run->fd, CGROUP_RUNNER "/cgroup.procs", self);
        if (r < 0)
                return r;
        /* What cgroup v2 delegation hands over (Documentation/admin-guide/cgroup-v2.rst): the
         * directory and the files that move processes and enable controllers below it. */
        static const char *const delegated[] = { ".", "cgroup.procs", "cgroup.threads",
                                                 "cgroup.subtree_control" };
        for (size_t i = 0; i < ELEMENTSOF(delegated); i++)
                if (fchownat(run->fd, delegated[i], uid, gid, 0) < 0)
                        return negative_errno();
        return 0;
}

/* Writes a limit into a fresh child cgroup; 0 means none. */
static int limit(int fd, const char *file, uint64_t value) {
        char text[32];
        snprintf(text, sizeof(text), "%llu", (unsigned long long) value);
        return value ? write_at(fd, file, text) : 0;
}

int cgroup_child_new(const CgroupRun *run, size_t step, uint64_t memory_max, uint64_t pids_max,
                     char ret_name[static 32]) {
        if (!run->path)
                return -EOPNOTSUPP;
        snprintf(ret_name, 32, "step-%zu", step);
        if (mkdirat(run->fd, ret_name, 0755) < 0)
                return negative_errno();
        int fd = openat(run->fd, ret_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r = fd < 0 ? negative_errno() : 0;
        /* Without swap the limit is the limit: a tree past it is OOM-killed, it does not crawl. */
        if (r >= 0 && memory_max && (r = limit(fd, "memory.max", memory_max)) >= 0 &&
            faccessat(fd, "memory.swap.max", W_OK, 0) == 0)
                r = write_at(fd, "memory.swap.max", "0");
        if (r >= 0)
                r = limit(fd, "pids.max", pids_max);
        if (r < 0) {
                safe_close(fd);
                (void) unlinkat(run->fd, ret_name, AT_REMOVEDIR);
                return r;
        }
        return fd;
}

int cgroup_child_usage(int fd, CgroupUsage *ret) {
        *ret = (CgroupUsage){};
        char buf[4096];
        ssize_t n = read_at(fd, "cpu.stat", buf, sizeof(buf));
        if (n < 0)
                return (int) n;
        int r = keyed_value(buf, "usage_usec", &ret->cpu_us);
        if (r < 0)
                return r;
        if (read_at(fd, "memory.peak", buf, sizeof(buf)) > 0) {
                ret->have_peak = true;
                ret->peak_bytes = strtoull(buf, NULL, 10);
        }
        uint64_t events = 0;
        ret->oom_killed = read_at(fd, "memory.events", buf, sizeof(buf)) > 0 &&
                          keyed_value(buf, "oom_kill", &events) == 0 && events > 0;
        ret->pids_limited = read_at(fd, "pids.events", buf, sizeof(buf)) > 0 &&
                            keyed_value(buf, "max", &events) == 0 && events > 0;
        return 0;
}

int cgroup_child_processes(int fd) {
        char buf[16384]; /* a truncated list still counts past any sensible tree */
        ssize_t n = read_at(fd, "cgroup.procs", buf, sizeof(buf));
        if (n < 0)
                return (int) n;
        int count = 0;
        for (const char *p = buf; *p; p++)
                count += *p == '\n';
        return count;
}

int cgroup_child_kill(int fd) {
        return write_at(fd, "cgroup.kill", "1");
}

void cgroup_child_remove(const CgroupRun *run, int fd, const char *name) {
        if (fd < 0)
                return;
        (void) cgroup_child_kill(fd); /* nothing to kill after a clean exit: a no-op then */
        safe_close(fd);
        remove_when_empty(run->fd, name);
}
