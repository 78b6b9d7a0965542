/* SPDX-License-Identifier: MIT */
/*
 * Publishing the daemon's site in a child process (daemon/publisher.h).
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>

#include "daemon/log.h"
#include "daemon/publisher.h"
#include "util/cleanup.h"
#include "util/paths.h"

struct Publisher {
        sd_event *event;
        Manager *manager;
        char *dir, *db_path;
        sd_event_source *child; /* the publish running, or NULL */
        pid_t pid;
        bool again; /* a job ended while it ran */
};

static void start(Publisher *p);

static int on_publish_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Publisher *p = userdata;
        (void) s;
        p->child = sd_event_source_disable_unref(p->child);
        p->pid = 0;
        if (si->si_code != CLD_EXITED || si->si_status != 0)
                log_message(LOG_WARNING, 0, "cannot publish the site in %s: alloclab publish %s %d", p->dir,
                            si->si_code == CLD_EXITED ? "exited with status" : "was killed by signal",
                            si->si_status);
        else
                log_message(LOG_INFO, 0, "published the site in %s", p->dir);
        if (p->again) {
                p->again = false;
                start(p);
        }
        if (!p->child)
                manager_hold(p->manager, false);
        return 0;
}

/* A site the daemon writes as root must not be a directory others may write to: they could put
 * a symbolic link where a page goes. */
static bool safe_dir(const Publisher *p) {
        struct stat st;
        if (stat(p->dir, &st) < 0)
                return true; /* made by alloclab publish, 0755 or as the database */
        if (!S_ISDIR(st.st_mode)) {
                log_message(LOG_WARNING, 0,
                            "not publishing the site in %s: it is not a directory (give publish_dir a "
                            "directory)",
                            p->dir);
                return false;
        }
        if (st.st_mode & (S_IWGRP | S_IWOTH)) {
                log_message(LOG_WARNING, 0,
                            "not publishing the site in %s: it is writable by group or others (chmod go-w, "
                            "or another publish_dir)",
                            p->dir);
                return false;
        }
        return true;
}

static void start(Publisher *p) {
        if (!safe_dir(p))
                return;
        _cleanup_free_ char *cli = paths_cli();
        if (!cli) {
                log_message(LOG_WARNING, 0,
                            "cannot publish the site in %s: the alloclab command is not found "
                            "(set ALLOCLAB_CLI)",
                            p->dir);
                return;
        }
        char *argv[] = { cli,        (char *) "publish", p->dir, (char *) "--db",
                         p->db_path, (char *) "--quiet", NULL };
        posix_spawnattr_t attr;
        sigset_t none;
        sigemptyset(&none);
        posix_spawnattr_init(&attr);
        posix_spawnattr_setsigmask(&attr, &none); /* the daemon's blocked signals are not the child's */
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
        extern char **environ;
        int r = -posix_spawn(&p->pid, cli, NULL, &attr, argv, environ);
        posix_spawnattr_destroy(&attr);
        if (r == 0 &&
            (r = sd_event_add_child(p->event, &p->child, p->pid, WEXITED, on_publish_exit, p)) < 0) {
                kill(p->pid, SIGKILL);
                waitpid(p->pid, NULL, 0);
        }
        if (r < 0) {
                p->pid = 0;
                log_message(LOG_WARNING, 0, "cannot publish the site in %s: %s", p->dir, strerror(-r));
                return;
        }
        manager_hold(p->manager, true);
}

void publisher_request(Publisher *p) {
        if (p->child)
                p->again = true;
        else
                start(p);
}

int publisher_new(sd_event *event, Manager *manager, const char *dir, const char *db_path, Publisher **ret) {
        Publisher *p = calloc(1, sizeof(Publisher));
        if (!p)
                return -ENOMEM;
        *p = (Publisher){
                .event = event, .manager = manager, .dir = strdup(dir), .db_path = strdup(db_path)
        };
        if (!p->dir || !p->db_path) {
                publisher_free(p);
                return -ENOMEM;
        }
        *ret = p;
        return 0;
}

Publisher *publisher_free(Publisher *p) {
        if (!p)
                return NULL;
        if (p->pid > 0) {
                kill(p->pid, SIGTERM);
                waitpid(p->pid, NULL, 0);
        }
        sd_event_source_disable_unref(p->child);
        free(p->dir);
        free(p->db_path);
        free(p);
        return NULL;
}
