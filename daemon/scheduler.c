/* SPDX-License-Identifier: MIT */
/*
 * Scheduled experiments: every *.yaml in the specs directory that carries `schedule:`.
 *
 * One CLOCK_REALTIME timer is armed for the earliest next firing. When a spec is due, a job is
 * queued for it (as the owner of the spec file, from the file's directory), unless one is
 * already queued or running: a schedule never runs two at once and never piles up. Each firing
 * is stored, so after downtime a missed firing is caught up once at start-up (as systemd's
 * Persistent=true does). SIGHUP reloads the directory; a bad spec is logged with its
 * FILE:LINE:COL and skipped, the others stay scheduled.
 *
 * A spec runs as its file's owner, so the owner is read from the very descriptor that is parsed
 * (opened without following symlinks), and files whose owner does not say who wrote them are
 * refused: symlinks, hard links, files writable by others, and every file of a directory that
 * others may write to without the sticky bit. It runs with its owner's groups (the account's),
 * never with its file's group, and a file whose group its owner is not in is refused too: a
 * setgid directory of group root made a user's spec run with gid 0. File names with control
 * characters are refused, since they are shown in root's terminal and in the log.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "configs/spec.h"
#include "daemon/identity.h"
#include "daemon/log.h"
#include "daemon/scheduler.h"
#include "db/jobs.h"
#include "util/accounts.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "util/text.h"

#define SCHEDULER_MAX_SPECS 1024

typedef struct Scheduled {
        char *path;
        Spec *spec;
        uid_t uid;
        gid_t gid;
        time_t next;
} Scheduled;

struct Scheduler {
        sd_event *event;
        Store *store;
        Manager *manager;
        char *dir;
        Scheduled *items;
        size_t n_items;
        sd_event_source *timer;
};

static void items_clear(Scheduler *s) {
        for (size_t i = 0; i < s->n_items; i++) {
                free(s->items[i].path);
                spec_free(s->items[i].spec);
        }
        free(s->items);
        s->items = NULL;
        s->n_items = 0;
}

Scheduler *scheduler_free(Scheduler *s) {
        if (!s)
                return NULL;
        items_clear(s);
        sd_event_source_disable_unref(s->timer);
        free(s->dir);
        free(s);
        return NULL;
}

static int by_name(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Queues a job for a due spec, as the spec file's owner, in the file's directory. */
static int enqueue(Scheduler *s, Scheduled *it, time_t now) {
        bool active = false;
        int r = jobs_active_for_spec(s->store, it->path, &active);
        if (r < 0)
                return r;
        (void) jobs_schedule_fired(s->store, it->path, now);
        if (active) {
                log_message(LOG_INFO, 0, "%s is due but its previous job has not ended: skipped", it->path);
                return 0;
        }
        _cleanup_free_ char *dir = strdup(it->path);
        if (!dir)
                return -ENOMEM;
        *strrchr(dir, '/') = 0;
        struct passwd *pw = getpwuid(it->uid);
        _cleanup_strv_free_ char **env = NULL;
        if (strv_env_set(&env, "PATH", "/usr/local/bin:/usr/bin:/bin") < 0 ||
            (pw &&
             (strv_env_set(&env, "HOME", pw->pw_dir) < 0 || strv_env_set(&env, "USER", pw->pw_name) < 0 ||
              strv_env_set(&env, "LOGNAME", pw->pw_name) < 0)))
                return -ENOMEM;
        Job job = {
                .spec_path = it->path,
                .spec_yaml = it->spec->source,
                .env = env,
                .cwd = dir[0] ? dir : (char *) "/",
                .uid = it->uid,
                .gid = it->gid,
                .umask = JOB_DEFAULT_UMASK, /* a file does not say its owner's */
                .submitter = pw ? pw->pw_name : NULL,
                .trigger = (char *) "schedule",
        };
        int64_t id;
        r = jobs_add(s->store, &job, &id);
        if (r < 0)
                return r;
        log_message(LOG_INFO, 0, "scheduled job %lld queued for %s (%s)", (long long) id, it->path,
                    it->spec->schedule_text);
        return 0;
}

static int arm(Scheduler *s);

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        Scheduler *s = userdata;
        (void) src;
        (void) usec;
        time_t now = time(NULL);
        for (size_t i = 0; i < s->n_items; i++) {
                Scheduled *it = &s->items[i];
                if (it->next > now)
                        continue;
                int r = enqueue(s, it, now);
                if (r < 0)
                        log_message(LOG_ERR, 0, "cannot queue %s: %s", it->path, strerror(-r));
                if (schedule_next(&it->spec->schedule, now, &it->next) < 0)
                        it->next = (time_t) -1; /* never again */
        }
        manager_start_soon(s->manager);
        return arm(s);
}

/* Arms the timer for the earliest firing (or disables it). */
static int arm(Scheduler *s) {
        time_t earliest = (time_t) -1;
        for (size_t i = 0; i < s->n_items; i++)
                if (s->items[i].next != (time_t) -1 &&
                    (earliest == (time_t) -1 || s->items[i].next < earliest))
                        earliest = s->items[i].next;
        if (earliest == (time_t) -1)
                return s->timer ? sd_event_source_set_enabled(s->timer, SD_EVENT_OFF) : 0;
        uint64_t usec = (uint64_t) earliest * 1000000ULL;
        if (!s->timer)
                return sd_event_add_time(s->event, &s->timer, CLOCK_REALTIME, usec, 0, on_timer, s);
        int r = sd_event_source_set_time(s->timer, usec);
        return r < 0 ? r : sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
}

/* Whose spec a file is, from the descriptor that is parsed (never from a second lookup of the
 * path, which another user could swap in between). Returns 0 with the uid and gid to run as,
 * or a negative errno with *ret_why saying why the file is refused. */
static int spec_owner(const struct stat *dir, int fd, uid_t *ret_uid, gid_t *ret_gid, const char **ret_why) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        *ret_why = !S_ISREG(st.st_mode)                       ? "not a regular file"
                   : st.st_mode & (S_IWGRP | S_IWOTH)         ? "writable by others than its owner"
                   : st.st_nlink != 1                         ? "has more than one name (hard link)"
                   : geteuid() != 0 && st.st_uid != geteuid() ? "not owned by the daemon's user"
                   /* In a shared sticky directory a file can only be its owner's; elsewhere only
                    * the directory's owner (or root) puts files in it. */
                   : st.st_uid != dir->st_uid && st.st_uid != 0 && !(dir->st_mode & S_ISVTX)
                           ? "not owned by the directory's owner"
                           : NULL;
        if (*ret_why)
                return -EPERM;
        if (geteuid() != 0) {
                *ret_uid = geteuid();
                *ret_gid = getegid();
                return 0;
        }
        /* The owner's groups, from the account (initgroups in the worker): a setgid directory
         * gives its files its own group, which their owners need not be in. */
        int r = identity_account_group(st.st_uid, st.st_gid, ret_gid);
        static char why[256]; /* *ret_why until the next call (the loop's only) */
        if (r == -ENOENT)
                snprintf(why, sizeof(why), "its owner, uid %u, has no account to take groups from",
                         (unsigned) st.st_uid);
        else if (r == -EPERM) {
                char owner[ACCOUNT_NAME_MAX], group[ACCOUNT_NAME_MAX];
                account_user_name(st.st_uid, owner);
                account_group_name(st.st_gid, group);
                snprintf(why, sizeof(why),
                         "its group %s is not one of the groups of its owner %s (chgrp it to one of them)",
                         group, owner);
        }
        *ret_why = r == -ENOENT || r == -EPERM ? why : NULL;
        if (r < 0)
                return r;
        *ret_uid = st.st_uid;
        return 0;
}

/* Loads one file of the directory; returns 1 when it was added, 0 when skipped (logged). */
static int load_one(Scheduler *s, int dir_fd, const struct stat *dir, const char *name, time_t now) {
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/%s", s->dir, name) < 0)
                return -ENOMEM;
        /* O_NOFOLLOW: a symlink is refused, not followed to someone else's file. O_NONBLOCK: a
         * FIFO does not hang the loop (it is refused by its type). */
        _cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0) {
                log_message(LOG_ERR, 0, "skipping %s: %s", path,
                            errno == ELOOP ? "a symbolic link (put the spec itself there)"
                                           : strerror(errno));
                return 0;
        }
        uid_t uid;
        gid_t gid;
        const char *why = NULL;
        int r = spec_owner(dir, fd, &uid, &gid, &why);
        if (r < 0) {
                log_message(LOG_ERR, 0, "skipping %s: %s", path, why ? why : strerror(-r));
                return 0;
        }
        Diagnostics d = {};
        Spec *spec = NULL;
        r = spec_load_fd(fd, path, &d, &spec);
        if (r < 0) {
                for (size_t i = 0; i < d.n_items; i++) {
                        _cleanup_free_ char *line = diag_format(&d, i);
                        log_message(LOG_ERR, 0, "skipping scheduled spec: %s", line ? line : path);
                }
                if (d.n_items == 0)
                        log_message(LOG_ERR, 0, "skipping %s: %s", path, strerror(-r));
                diag_clear(&d);
                return 0;
        }
        diag_clear(&d);
        if (!spec->has_schedule) {
                spec_free(spec);
                return 0;
        }
        Scheduled it = { .spec = spec, .uid = uid, .gid = gid, .path = TAKE_PTR(path) };
        /* Catch up once: a firing missed while the daemon was down happens now. */
        time_t last;
        if (jobs_schedule_last(s->store, it.path, &last) == 0 &&
            schedule_next(&spec->schedule, last, &it.next) == 0 && it.next <= now)
                it.next = now;
        else if (schedule_next(&spec->schedule, now, &it.next) < 0)
                it.next = (time_t) -1;
        Scheduled *grown = realloc(s->items, (s->n_items + 1) * sizeof(Scheduled));
        if (!grown) {
                free(it.path);
                spec_free(spec);
                return -ENOMEM;
        }
        s->items = grown;
        s->items[s->n_items++] = it;
        return 1;
}

int scheduler_reload(Scheduler *s) {
        items_clear(s);
        _cleanup_close_ int dir_fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_(closedirp) DIR *dir = NULL;
        struct stat st;
        if (dir_fd < 0 || fstat(dir_fd, &st) < 0) {
                log_message(LOG_INFO, 0, "no specs directory %s: nothing scheduled", s->dir);
                return arm(s);
        }
        /* Anyone who may replace a file in the directory could choose whose spec it is. */
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
                log_message(
                        LOG_ERR, 0,
                        "not loading %s: it is writable by group or others and not sticky (chmod o-w,g-w "
                        "or +t)",
                        s->dir);
                return arm(s);
        }
        int listing = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        if (listing < 0 || !(dir = fdopendir(listing))) {
                safe_close(listing);
                log_message(LOG_ERR, 0, "cannot list %s: %s", s->dir, strerror(errno));
                return arm(s);
        }
        char *names[SCHEDULER_MAX_SPECS];
        size_t n = 0;
        for (struct dirent *e; (e = readdir(dir)) && n < SCHEDULER_MAX_SPECS;) {
                size_t len = strlen(e->d_name);
                if (e->d_name[0] == '.' || !((len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0) ||
                                             (len > 4 && strcmp(e->d_name + len - 4, ".yml") == 0)))
                        continue;
                if (!text_is_clean(e->d_name)) {
                        log_message(LOG_ERR, 0,
                                    "skipping %s/%s: its name holds control characters or is not UTF-8",
                                    s->dir, e->d_name); /* shown escaped */
                        continue;
                }
                if (!(names[n] = strdup(e->d_name)))
                        break;
                n++;
        }
        qsort(names, n, sizeof(char *), by_name);
        time_t now = time(NULL);
        size_t loaded = 0;
        int r = 0;
        for (size_t i = 0; i < n; i++) {
                if (r >= 0) {
                        r = load_one(s, dir_fd, &st, names[i], now);
                        loaded += r > 0;
                }
                free(names[i]);
        }
        if (r < 0)
                return r;
        log_message(LOG_INFO, 0, "%zu scheduled spec(s) from %s", loaded, s->dir);
        return arm(s);
}

int scheduler_new(sd_event *event, Store *store, Manager *manager, const char *dir, Scheduler **ret) {
        Scheduler *s = calloc(1, sizeof(Scheduler));
        if (!s || !(s->dir = strdup(dir))) {
                free(s);
                return -ENOMEM;
        }
        s->event = event;
        s->store = store;
        s->manager = manager;
        int r = scheduler_reload(s);
        if (r < 0) {
                scheduler_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

json_t *scheduler_list(const Scheduler *s) {
        json_t *list = json_array();
        for (size_t i = 0; s && i < s->n_items; i++) {
                const Scheduled *it = &s->items[i];
                char next[32] = "";
                struct tm tm;
                if (it->next != (time_t) -1 && localtime_r(&it->next, &tm))
                        strftime(next, sizeof(next), "%Y-%m-%dT%H:%M:%S%z", &tm);
                json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s?, s:I}", "spec_path", it->path,
                                                      "experiment", it->spec->experiment, "schedule",
                                                      it->spec->schedule_text, "next", next[0] ? next : NULL,
                                                      "uid", (json_int_t) it->uid));
        }
        return list;
}

time_t scheduler_next(const Scheduler *s, const char **ret_experiment) {
        time_t earliest = (time_t) -1;
        for (size_t i = 0; s && i < s->n_items; i++)
                if (s->items[i].next != (time_t) -1 &&
                    (earliest == (time_t) -1 || s->items[i].next < earliest)) {
                        earliest = s->items[i].next;
                        *ret_experiment = s->items[i].spec->experiment;
                }
        return earliest;
}
