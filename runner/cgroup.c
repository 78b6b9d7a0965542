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
#include <sys/file.h>
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
/* A run's directories are its own: another user who could open one could flock it (see
 * lock_run_dir()) and take the name from the run, or keep a dead run's tree. */
#define RUN_DIR_MODE      0700
/* The leaf a delegated runner moves into: a cgroup that hands controllers to its children may
 * not hold processes itself. */
#define CGROUP_RUNNER     "runner"
/* The leaf a service that took over its cgroup moves into (cgroup_take_delegation). */
#define CGROUP_SUPERVISOR "supervisor"
/* The cgroup every child of a run is created in, one after the other (see cgroup.h). */
#define CGROUP_CHILDREN   "children"
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

/* This process's cgroup in the cgroup v1 hierarchy that carries `controller`, or in the cgroup v2
 * hierarchy for NULL: the mount point and the path in it, joined. Returns 1 when that is the
 * hierarchy's root, 0 otherwise, or -errno. */
static int own_cgroup(const char *controller, char **ret) {
        _cleanup_fclose_ FILE *mounts = fopen("/proc/self/mountinfo", "re");
        _cleanup_fclose_ FILE *self = fopen("/proc/self/cgroup", "re");
        if (!mounts || !self)
                return -ENOENT;
        char line[4096], mount[2048] = "", path[2048] = "", word[64], padded[1100];
        snprintf(word, sizeof(word), ",%s,", controller ? controller : "");
        while (!mount[0] && fgets(line, sizeof(line), mounts)) {
                /* "ID PARENT MAJ:MIN ROOT POINT OPTIONS ... - TYPE SOURCE SUPER-OPTIONS" */
                char point[2048], type[16], options[1024] = "";
                const char *sep = strstr(line, " - ");
                if (!sep || sscanf(line, "%*s %*s %*s %*s %2047s", point) != 1 ||
                    sscanf(sep, " - %15s %*s %1023s", type, options) < 1)
                        continue;
                snprintf(padded, sizeof(padded), ",%s,", options);
                if (controller ? strcmp(type, "cgroup") == 0 && strstr(padded, word)
                               : strcmp(type, "cgroup2") == 0)
                        snprintf(mount, sizeof(mount), "%s", point);
        }
        /* "ID:CONTROLLERS:PATH", the controllers empty for cgroup v2 */
        while (!path[0] && fgets(line, sizeof(line), self)) {
                char *controllers = strchr(line, ':'),
                     *rest = controllers ? strchr(controllers + 1, ':') : NULL;
                if (!rest)
                        continue;
                snprintf(padded, sizeof(padded), ",%.*s,", (int) (rest - controllers - 1), controllers + 1);
                if (controller ? strstr(padded, word) != NULL : rest == controllers + 1)
                        snprintf(path, sizeof(path), "%.*s", (int) strcspn(rest + 1, "\n"), rest + 1);
        }
        if (!mount[0] || !path[0])
                return -ENOENT;
        bool root = strcmp(path, "/") == 0;
        return asprintf(ret, "%s%s", mount, root ? "" : path) < 0 ? -ENOMEM : root;
}

/* A directory stream over fd's directory that leaves fd open (fdopendir() takes the descriptor
 * it is given). NULL with errno set on failure. */
static DIR *open_dir_of(int fd) {
        int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (dup < 0)
                return NULL;
        DIR *d = fdopendir(dup);
        if (!d) {
                int saved = errno;
                close(dup);
                errno = saved;
                return NULL;
        }
        rewinddir(d); /* the duplicate shares fd's position, at the end after an earlier listing */
        return d;
}

/* How deep remove_tree() follows cgroups a workload made below its own: deeper ones stay. */
#define TREE_MAX_DEPTH 16

/* Waits until the cgroup behind fd holds no process (cgroup.events "populated 0"), at most
 * EMPTY_WAIT_MS: killed processes leave quickly, and cgroup.events signals POLLPRI on each change. */
static void wait_empty(int fd) {
        _cleanup_close_ int events = openat(fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
        for (int waited = 0; events >= 0 && waited < EMPTY_WAIT_MS; waited++) {
                char buf[256];
                ssize_t n = pread(events, buf, sizeof(buf) - 1, 0);
                buf[n > 0 ? n : 0] = 0;
                if (n <= 0 || strstr(buf, "populated 0"))
                        return;
                (void) poll(&(struct pollfd){ .fd = events, .events = POLLPRI }, 1, 1);
        }
}

static void remove_tree_at(int parent, const char *name, unsigned depth);

/* Removes every cgroup below fd, deepest first (their processes must be gone already). */
static void remove_subtrees(int fd, unsigned depth) {
        _cleanup_(closedirp) DIR *d = open_dir_of(fd);
        if (!d)
                return;
        for (struct dirent *e; (e = readdir(d));)
                if (e->d_type == DT_DIR && e->d_name[0] != '.')
                        remove_tree_at(fd, e->d_name, depth + 1);
}

/* Kills everything in the cgroup `name` below `parent` and in the cgroups below it (cgroup.kill
 * is recursive), waits for them to leave, then removes the directories bottom-up: a cgroup with
 * a cgroup below it cannot be removed, and retrying that (EBUSY) used to stall for seconds. The
 * kernel may refuse the rmdir of an empty leaf for a moment while exited tasks finish: retried
 * every millisecond, at most EMPTY_WAIT_MS in all. */
static void remove_tree_at(int parent, const char *name, unsigned depth) {
        _cleanup_close_ int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 || depth > TREE_MAX_DEPTH)
                return;
        (void) write_at(fd, "cgroup.kill", "1");
        wait_empty(fd);
        remove_subtrees(fd, depth);
        for (int tries = 0;
             unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno == EBUSY && tries < EMPTY_WAIT_MS; tries++)
                (void) poll(NULL, 0, 1);
}

/* Kills and removes every cgroup below fd: whatever their names (a forked runner may have
 * replaced the children's cgroup of the plan its parent holds), and whatever a workload made. */
static void remove_children_of(int fd) {
        remove_subtrees(fd, 0);
}

/* Whether name is a run cgroup's: RUN_PREFIX, a PID, '-', a number, and nothing else (others
 * may name cgroups alloclab-something). */
static bool is_run_name(const char *name) {
        if (strncmp(name, RUN_PREFIX, strlen(RUN_PREFIX)) != 0)
                return false;
        const char *p = name + strlen(RUN_PREFIX);
        size_t pid = strspn(p, "0123456789");
        return pid > 0 && p[pid] == '-' && p[pid + 1] &&
               strspn(p + pid + 1, "0123456789") == strlen(p + pid + 1);
}

/* Run cgroups of alloclab processes that are gone (killed with SIGKILL, say) below base: kill
 * what they left running and remove them, depth first. A run holds an flock on its cgroup
 * directory for as long as it lives (lock_run_dir()): one whose lock can be taken is stale. The
 * PID in the name is no test of that: in a PID namespace that shares the cgroup tree (a Slurm
 * step, unshare -p, a container) every other run's PID looks dead, and their children were
 * killed mid-sample. The lock is held while the tree is removed. */
static void remove_stale_in(int base) {
        _cleanup_(closedirp) DIR *d = open_dir_of(base);
        if (!d)
                return;
        for (struct dirent *e; (e = readdir(d));) {
                if (!is_run_name(e->d_name))
                        continue;
                _cleanup_close_ int fd =
                        openat(base, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
                        continue;
                remove_tree_at(base, e->d_name, 0);
        }
}

/* Takes the run's lock on its new cgroup directory `name` (fd) in base: held by fd, and by every
 * process that inherits it, until the run closes it. Returns 0, or -EAGAIN when the directory is
 * not the run's to keep: another alloclab holds the lock (it found the directory between mkdir
 * and this lock, unlocked, and is removing it) or removed it already. */
static int lock_run_dir(int base, const char *name, int fd) {
        struct stat mine, now;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EAGAIN : negative_errno();
        if (fstat(fd, &mine) < 0 || fstatat(base, name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
            mine.st_ino != now.st_ino)
                return -EAGAIN;
        return 0;
}

int cgroup_take_delegation(void) {
        _cleanup_free_ char *own = NULL;
        if (getenv(CGROUP_ROOT_ENV) || own_cgroup(NULL, &own) != 0)
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

bool cgroup_run_pids_v1(CgroupRun *run) {
        _cleanup_free_ char *home = NULL;
        if (!run->path || run->pids || own_cgroup("pids", &home) < 0)
                return run->pids;
        int home_fd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (home_fd < 0)
                return false;
        const char *name = strrchr(run->path, '/') + 1; /* the same name as in v2 */
        int fd = -1;
        if ((mkdirat(home_fd, name, RUN_DIR_MODE) < 0 && errno != EEXIST) ||
            (fd = openat(home_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
            lock_run_dir(home_fd, name, fd) < 0 || faccessat(fd, "pids.max", W_OK, 0) < 0 ||
            faccessat(home_fd, "cgroup.procs", W_OK, 0) < 0) {
                safe_close(fd);
                (void) unlinkat(home_fd, name, AT_REMOVEDIR);
                safe_close(home_fd);
                return false;
        }
        run->pids_v1_fd = fd;
        run->pids_home_fd = home_fd;
        return run->pids = true;
}

/* Where run cgroups are made: $ALLOCLAB_CGROUP_ROOT, else this process's cgroup. Returns 0 and
 * a new string, -ENOENT (none, or turned off), -ENOMEM. */
static int run_base(char **ret) {
        const char *root = getenv(CGROUP_ROOT_ENV);
        if (root && strcmp(root, "off") == 0)
                return -ENOENT;
        if (root && *root)
                return (*ret = strdup(root)) ? 0 : -ENOMEM;
        int r = own_cgroup(NULL, ret);
        return r < 0 ? r : 0;
}

void cgroup_remove_stale(void) {
        static const char *const hierarchies[] = { NULL, "pids" }; /* v2, and v1's pids */
        for (size_t i = 0; i < ELEMENTSOF(hierarchies); i++) {
                _cleanup_free_ char *base = NULL;
                if ((hierarchies[i] ? own_cgroup(hierarchies[i], &base) : run_base(&base)) < 0)
                        continue;
                _cleanup_close_ int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0)
                        remove_stale_in(fd);
        }
}

int cgroup_run_open(CgroupRun *ret) {
        *ret = (CgroupRun){ .fd = -1, .children_fd = -1, .pids_v1_fd = -1, .pids_home_fd = -1 };
        const char *root = getenv(CGROUP_ROOT_ENV);
        if (root && strcmp(root, "off") == 0)
                return no_cgroup(ret, "turned off (%s=off)", CGROUP_ROOT_ENV);
        _cleanup_free_ char *base = NULL;
        int q = run_base(&base);
        if (q == -ENOMEM)
                return q;
        if (q < 0)
                return no_cgroup(ret, "no cgroup v2 hierarchy");
        _cleanup_close_ int base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct statfs fs;
        if (base_fd < 0 || fstatfs(base_fd, &fs) < 0)
                return no_cgroup(ret, "cannot open %s: %s", base, strerror(errno));
        if (fs.f_type != CGROUP2_SUPER_MAGIC)
                return no_cgroup(ret, "%s is not a cgroup v2 directory", base);

        /* One per plan: the daemon builds a plan per job, and a job's cgroup may still be going
         * while the next one's is made. A name another alloclab took from under us (see
         * lock_run_dir()) is given up for the next. */
        static unsigned plans;
        char name[64];
        int fd = -1;
        for (unsigned tries = 0; fd < 0; tries++) {
                snprintf(name, sizeof(name), RUN_PREFIX "%d-%u", (int) getpid(), plans++);
                if (mkdirat(base_fd, name, RUN_DIR_MODE) < 0 && errno != EEXIST)
                        return no_cgroup(ret, "cannot create a cgroup in %s: %s", base, strerror(errno));
                if ((fd = openat(base_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 && errno != ENOENT)
                        break;
                int r = fd < 0 ? -EAGAIN : lock_run_dir(base_fd, name, fd);
                if (r < 0) {
                        fd = safe_close(fd);
                        if (r != -EAGAIN || tries >= 8)
                                return no_cgroup(ret, "cannot lock a cgroup in %s: %s", base,
                                                 r == -EAGAIN ? "others keep taking it" : strerror(-r));
                }
        }
        if (fd < 0 || faccessat(fd, "cgroup.kill", W_OK, 0) < 0) {
                int err = errno;
                safe_close(fd);
                (void) unlinkat(base_fd, name, AT_REMOVEDIR);
                return err == ENOENT ? no_cgroup(ret, "%s has no cgroup.kill (Linux 5.14 or later)", base)
                                     : no_cgroup(ret, "cannot use a cgroup in %s: %s", base, strerror(err));
        }
        /* Children see memory.peak only when the run's cgroup hands them the controller. */
        bool memory = write_at(fd, "cgroup.subtree_control", "+memory") == 0;
        bool pids = write_at(fd, "cgroup.subtree_control", "+pids") == 0;
        snprintf(ret->children_name, sizeof(ret->children_name), "%s", CGROUP_CHILDREN);
        if ((mkdirat(fd, CGROUP_CHILDREN, RUN_DIR_MODE) < 0 && errno != EEXIST) ||
            (ret->children_fd = openat(fd, CGROUP_CHILDREN, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                int err = errno;
                safe_close(fd);
                (void) unlinkat(base_fd, name, AT_REMOVEDIR);
                return no_cgroup(ret, "cannot create a cgroup in %s/%s: %s", base, name, strerror(err));
        }
        ret->fd = fd;
        ret->memory = memory;
        ret->pids = pids;
        return asprintf(&ret->path, "%s/%s", base, name) < 0 ? -ENOMEM : 0;
}

void cgroup_run_close(CgroupRun *c) {
        if (c->path) { /* the fds are valid only with path: a zeroed CgroupRun holds nothing */
                safe_close(c->children_fd);
                remove_children_of(c->fd);
                (void) rmdir(c->path);
                safe_close(c->fd);
                if (c->pids_v1_fd >= 0) {
                        (void) unlinkat(c->pids_home_fd, strrchr(c->path, '/') + 1, AT_REMOVEDIR);
                        safe_close(c->pids_v1_fd);
                        safe_close(c->pids_home_fd);
                }
        }
        free(c->path);
        free(c->why_not);
        *c = (CgroupRun){ .fd = -1, .children_fd = -1, .pids_v1_fd = -1, .pids_home_fd = -1 };
}

int cgroup_run_delegate(const CgroupRun *run, uid_t uid, gid_t gid) {
        if (!run->path)
                return 0;
        if (mkdirat(run->fd, CGROUP_RUNNER, RUN_DIR_MODE) < 0 && errno != EEXIST)
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
        /* The children's cgroup is made by root before the runner takes the user's identity:
         * all of it goes to the user (cgroup.kill, memory.peak for its per-child reset, ...). */
        _cleanup_(closedirp) DIR *d = open_dir_of(run->children_fd);
        if (!d)
                return negative_errno();
        for (struct dirent *e; (e = readdir(d));)
                if (strcmp(e->d_name, "..") != 0 && fchownat(run->children_fd, e->d_name, uid, gid, 0) < 0)
                        return negative_errno();
        return 0;
}

/* Writes a limit into the children's cgroup; 0 means none. */
static int limit(int fd, const char *file, uint64_t value) {
        char text[32];
        snprintf(text, sizeof(text), "%llu", (unsigned long long) value);
        return value ? write_at(fd, file, text) : 0;
}

int cgroup_run_limit(CgroupRun *run, uint64_t memory_max, uint64_t pids_max) {
        int r = 0;
        run->memory_max = memory_max;
        run->pids_max = pids_max;
        /* Without swap the limit is the limit: a tree past it is OOM-killed, it does not crawl. */
        if (memory_max && (r = limit(run->children_fd, "memory.max", memory_max)) >= 0 &&
            faccessat(run->children_fd, "memory.swap.max", W_OK, 0) == 0)
                r = write_at(run->children_fd, "memory.swap.max", "0");
        /* In v1 the runner joins the cgroup too, while its child runs: one more. */
        if (r >= 0)
                r = run->pids_v1_fd >= 0 ? limit(run->pids_v1_fd, "pids.max", pids_max ? pids_max + 1 : 0)
                                         : limit(run->children_fd, "pids.max", pids_max);
        return r;
}

/* The counters a window subtracts: cpu.stat usage_usec, memory.events oom_kill, pids.events max. */
/* The value of key in a flat-keyed file below fd; 0 when the file (its controller) or the key
 * is missing. */
static uint64_t keyed_file(int fd, const char *file, const char *key) {
        char buf[4096];
        uint64_t v = 0;
        if (read_at(fd, file, buf, sizeof(buf)) > 0)
                (void) keyed_value(buf, key, &v);
        return v;
}

static void counters(int fd, uint64_t *cpu_us, uint64_t *oom_kills, uint64_t *pids_max) {
        *cpu_us = keyed_file(fd, "cpu.stat", "usage_usec");
        *oom_kills = keyed_file(fd, "memory.events", "oom_kill");
        *pids_max = keyed_file(fd, "pids.events", "max");
}

/* Moves process pid into the cgroup behind fd (cgroup.procs). */
static int join(int fd, pid_t pid) {
        char text[32];
        snprintf(text, sizeof(text), "%d", (int) pid);
        return write_at(fd, "cgroup.procs", text);
}

int cgroup_window_open(const CgroupRun *run, pid_t creator, CgroupWindow *ret) {
        *ret = (CgroupWindow){ .run = run, .peak_fd = -1, .creator = creator };
        if (run->children_fd >= 0) {
                counters(run->children_fd, &ret->cpu_us, &ret->oom_kills, &ret->pids_max_events);
                /* memory.peak resets for the descriptor that writes it (Linux 6.12); where it
                 * cannot be reset, a peak over several children would be no child's: none. */
                int peak = openat(run->children_fd, "memory.peak", O_RDWR | O_CLOEXEC);
                if (peak >= 0 && write(peak, "reset", 5) == 5)
                        ret->peak_fd = peak;
                else
                        safe_close(peak);
        }
        if (run->pids_v1_fd >= 0 && run->pids_max) {
                ret->pids_v1_max_events = keyed_file(run->pids_v1_fd, "pids.events", "max");
                int r = join(run->pids_v1_fd, creator);
                if (r < 0)
                        return r; /* the limit would not hold */
                ret->joined_v1 = true;
        }
        return 0;
}

void cgroup_window_done(CgroupWindow *w) {
        w->peak_fd = safe_close(w->peak_fd);
        if (w->joined_v1)
                (void) join(w->run->pids_home_fd, w->creator);
        w->joined_v1 = false;
}

int cgroup_window_close(CgroupWindow *w, bool in_children, CgroupUsage *ret) {
        *ret = (CgroupUsage){};
        const CgroupRun *run = w->run;
        uint64_t cpu_us, oom_kills, pids_max;
        if (in_children && run->children_fd >= 0) {
                counters(run->children_fd, &cpu_us, &oom_kills, &pids_max);
                ret->have_cpu = true;
                ret->cpu_us = cpu_us - w->cpu_us;
                ret->oom_killed = oom_kills > w->oom_kills;
                ret->pids_limited = pids_max > w->pids_max_events;
                char buf[64];
                ssize_t n = w->peak_fd >= 0 ? pread(w->peak_fd, buf, sizeof(buf) - 1, 0) : -1;
                if (n > 0) {
                        buf[n] = 0;
                        ret->have_peak = true;
                        ret->peak_bytes = strtoull(buf, NULL, 10);
                }
        }
        if (w->joined_v1)
                ret->pids_limited |=
                        keyed_file(run->pids_v1_fd, "pids.events", "max") > w->pids_v1_max_events;
        cgroup_window_done(w);
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

int cgroup_children_kill(CgroupRun *run) {
        run->killed = true;
        return write_at(run->children_fd, "cgroup.kill", "1");
}

/* Replaces a killed children's cgroup with a fresh one (see cgroup.h); without one the next
 * children go without a cgroup, or the run stops when its limits need one. */
static void replace_children(CgroupRun *run) {
        char old[sizeof(run->children_name)];
        memcpy(old, run->children_name, sizeof(old));
        run->children_fd = safe_close(run->children_fd);
        remove_tree_at(run->fd, old, 0);
        snprintf(run->children_name, sizeof(run->children_name), "%s-%u", CGROUP_CHILDREN,
                 ++run->generation);
        if (mkdirat(run->fd, run->children_name, RUN_DIR_MODE) < 0 ||
            (run->children_fd = openat(run->fd, run->children_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
                    0 ||
            cgroup_run_limit(run, run->memory_max, run->pids_max) < 0)
                run->children_fd = safe_close(run->children_fd);
        run->killed = false;
}

void cgroup_children_empty(CgroupRun *run) {
        if (run->children_fd < 0)
                return;
        char buf[256];
        if (read_at(run->children_fd, "cgroup.events", buf, sizeof(buf)) > 0 && !strstr(buf, "populated 0"))
                (void) cgroup_children_kill(run);
        /* A killed cgroup is replaced (see cgroup.h); removing it waits until it is empty. */
        if (run->killed)
                replace_children(run);
        else if (run->children_fd >= 0)
                remove_subtrees(run->children_fd, 0); /* cgroups the child made below its own */
        /* The pids controller releases a process when it is reaped, not when it exits: an orphan
         * the child left (reparented to init, which may take a while) still counts against the
         * next child's pids_max. Wait for those charges to go, bounded, outside the clock. */
        if (run->pids_max)
                for (int waited = 0; waited < EMPTY_WAIT_MS; waited++) {
                        int fd = run->pids_v1_fd >= 0 ? run->pids_v1_fd : run->children_fd;
                        char current[32];
                        if (fd < 0 || read_at(fd, "pids.current", current, sizeof(current)) <= 0 ||
                            strtoull(current, NULL, 10) == 0)
                                break;
                        (void) poll(NULL, 0, 1);
                }
}
