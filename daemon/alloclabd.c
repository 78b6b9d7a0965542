/* SPDX-License-Identifier: MIT */
/*
 * alloclabd: the service that queues and runs experiments, one at a time.
 *
 * Single-threaded on sd-event. Signals are blocked before anything else and handled by the
 * loop; runners are watched as child sources; the control socket comes from systemd socket
 * activation or is bound here. READY=1 is sent once the database is open, interrupted jobs are
 * recovered and the socket listens; STATUS= follows the running job's progress; the watchdog is
 * fed by the loop (sd_event_set_watchdog), including while a child is being measured, since
 * measuring happens in the runner process.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <syslog.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "configs/daemon-config.h"
#include "configs/schema.h"
#include "configs/spec.h"
#include "daemon/control.h"
#include "daemon/log.h"
#include "daemon/manager.h"
#include "daemon/publisher.h"
#include "daemon/scheduler.h"
#include "db/prune.h"
#include "runner/cgroup.h"
#include "util/cleanup.h"
#include "util/lockfile.h"
#include "util/paths.h"

/* The system instance (root, or not --user): system paths for socket, database, specs, config. */
static bool system_instance;

/* What the daemon is made of; main wires them together (control and scheduler call the manager,
 * the manager tells them back through its events). */
typedef struct Daemon {
        sd_event *event;
        Store *store;
        char *db_path;
        char *probe_path;
        char *machine; /* --machine or the configuration's machine:, or NULL: the host name */
        /* The configuration's retention, applied after each finished job (retain: it is set) */
        PruneQuery retention;
        bool retain;
        Manager *manager;
        Publisher *publisher; /* publish_dir: the site published after each finished job; or NULL */
        Control *control;
        Scheduler *scheduler;
        char *socket_path; /* bound here (not socket activation): unlinked at exit */
        int lock_fd;       /* the database's measurer lock */
} Daemon;

/* Tears down in the order that keeps each part's borrowed pointers valid. */
static void daemon_done(Daemon *d) {
        control_free(d->control);
        scheduler_free(d->scheduler);
        publisher_free(d->publisher);
        manager_free(d->manager);
        if (d->socket_path)
                (void) unlink(d->socket_path);
        free(d->socket_path);
        store_free(d->store);
        sd_event_unref(d->event);
        free(d->db_path);
        free(d->probe_path);
        free(d->machine);
        safe_close(d->lock_fd); /* last: the database is closed */
}

/* The configuration's retention, after each finished job. */
static void prune(Daemon *d) {
        if (!d->retain)
                return;
        /* The pages freed go to the runs that follow: the file stops growing (alloclab prune
         * gives them back, with VACUUM, which would hold the daemon up for seconds). */
        PruneTally tally;
        int r = store_prune(d->store, &d->retention, &tally);
        if (r < 0)
                log_message(LOG_WARNING, 0, "cannot prune old runs: %s", store_error(d->store));
        else if (tally.runs > 0)
                log_message(LOG_INFO, 0, "pruned %zu old run%s (%lld samples)", tally.runs,
                            tally.runs == 1 ? "" : "s", (long long) tally.samples);
}

/* Retention, then the site: it shows what is kept. */
static void on_job_finished(void *userdata, int64_t job_id) {
        Daemon *d = userdata;
        if (d->control)
                control_job_finished(d->control, job_id);
        prune(d);
        if (d->publisher)
                publisher_request(d->publisher);
}

static time_t on_next_scheduled(void *userdata, const char **ret_experiment) {
        Daemon *d = userdata;
        return d->scheduler ? scheduler_next(d->scheduler, ret_experiment) : (time_t) -1;
}

static int on_stop_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Daemon *d = userdata;
        (void) s;
        if (manager_stopping(d->manager))
                return 0;
        sd_notify(false, "STOPPING=1");
        log_message(LOG_INFO, 0, "stopping on signal %u", si->ssi_signo);
        manager_stop(d->manager);
        return 0;
}

static int on_hup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Daemon *d = userdata;
        (void) s;
        (void) si;
        log_message(LOG_INFO, 0, "SIGHUP: reloading scheduled specs");
        int r = d->scheduler ? scheduler_reload(d->scheduler) : 0;
        if (r < 0)
                log_message(LOG_ERR, 0, "cannot reload the schedules: %s", strerror(-r));
        manager_update_status(d->manager, NULL);
        return 0;
}

/* Default specs directory: /etc/alloclab/specs.d as root, else ~/.config/alloclab/specs.d. */
static char *default_specs_dir(void) {
        if (system_instance)
                return strdup("/etc/alloclab/specs.d");
        const char *config = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        char *p = NULL;
        if (config && config[0] == '/') {
                if (asprintf(&p, "%s/alloclab/specs.d", config) < 0)
                        return NULL;
        } else if (home && asprintf(&p, "%s/.config/alloclab/specs.d", home) < 0)
                return NULL;
        return p;
}

static const char usage[] =
        "Usage: alloclabd [--config FILE] [--db PATH] [--socket PATH] [--specs-dir DIR] [--probe PATH]\n"
        "                 [--idle-timeout SECONDS] [--machine NAME] [--publish-dir DIR] [--user]\n"
        "\n"
        "Queues and runs alloclab experiments one at a time; `alloclab submit/status/queue/cancel`\n"
        "talk to it. Socket: systemd socket activation, else --socket, $ALLOCLAB_SOCKET,\n"
        "/run/alloclab/control.sock as root or $XDG_RUNTIME_DIR/alloclab/control.sock with --user\n"
        "or as another user (--user also picks the user's database, specs and configuration).\n"
        "Database: --db, $ALLOCLAB_DB, else /var/lib/alloclab/results.db as root or the\n"
        "user's default ($XDG_DATA_HOME/alloclab/results.db).\n"
        "Scheduled specs: every *.yaml with schedule: in --specs-dir, else /etc/alloclab/specs.d as\n"
        "root or ~/.config/alloclab/specs.d; SIGHUP reloads them.\n"
        "Runs are filed under --machine NAME, else the configuration's machine:, else the host\n"
        "name (docs/fleet.md).\n"
        "After each finished job the site of the database is published into --publish-dir DIR, else\n"
        "the configuration's publish_dir:, if given (alloclab publish, docs/site.md).\n"
        "Configuration: --config, else /etc/alloclab/alloclabd.yaml as root or\n"
        "~/.config/alloclab/alloclabd.yaml, if present; options override it.\n";

typedef struct Options {
        const char *config;
        const char *db;
        const char *specs_dir;
        const char *socket;
        const char *probe;
        const char *machine;
        const char *publish_dir;
        uint64_t idle_timeout_usec;
        bool idle_timeout_set;
        bool user;
} Options;

/* Returns 0 to go on, 1 when done (--help, --version), -EINVAL for a usage error (said). */
static int parse_options(int argc, char **argv, Options *o) {
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },
                { "socket", required_argument, NULL, 's' },
                { "probe", required_argument, NULL, 'p' },
                { "machine", required_argument, NULL, 'm' },
                { "idle-timeout", required_argument, NULL, 'i' },
                { "specs-dir", required_argument, NULL, 'S' },
                { "config", required_argument, NULL, 'c' },
                { "user", no_argument, NULL, 'u' },
                { "publish-dir", required_argument, NULL, 'P' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'v' },
                {},
        };
        for (int c; (c = getopt_long(argc, argv, "", options, NULL)) >= 0;) {
                char *end;
                switch (c) {
                case 'd':
                        o->db = optarg;
                        break;
                case 's':
                        o->socket = optarg;
                        break;
                case 'S':
                        o->specs_dir = optarg;
                        break;
                case 'c':
                        o->config = optarg;
                        break;
                case 'u':
                        o->user = true;
                        break;
                case 'p':
                        o->probe = optarg;
                        break;
                case 'P':
                        if (optarg[0] != '/') {
                                fprintf(stderr, "alloclabd: --publish-dir must be an absolute path\n");
                                return -EINVAL;
                        }
                        o->publish_dir = optarg;
                        break;
                case 'm':
                        if (!schema_is_identifier(optarg, true)) {
                                fprintf(stderr, "alloclabd: --machine must be 1-64 letters, digits, '_', "
                                                "'-' or '.'\n");
                                return -EINVAL;
                        }
                        o->machine = optarg;
                        break;
                case 'i': {
                        double v = strtod(optarg, &end);
                        if (*end || !(v > 0) || v > 3600) {
                                fprintf(stderr, "alloclabd: --idle-timeout must be 0-3600 seconds\n");
                                return -EINVAL;
                        }
                        o->idle_timeout_usec = (uint64_t) (v * 1e6);
                        o->idle_timeout_set = true;
                        break;
                }
                case 'h':
                        printf("%s", usage);
                        return 1;
                case 'v':
                        printf("alloclabd %s\n", ALLOCLAB_VERSION);
                        return 1;
                default:
                        return -EINVAL;
                }
        }
        return optind == argc ? 0 : -EINVAL;
}

/* The configuration file: --config (must exist), else the default path if it exists. */
static int load_config(const char *explicit, DaemonConfig **ret) {
        _cleanup_free_ char *fallback = NULL;
        const char *path = explicit;
        if (!path) {
                const char *config = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
                if (system_instance)
                        fallback = strdup("/etc/alloclab/alloclabd.yaml");
                else if (config && config[0] == '/' &&
                         asprintf(&fallback, "%s/alloclab/alloclabd.yaml", config) < 0)
                        return -ENOMEM;
                else if (!fallback && home &&
                         asprintf(&fallback, "%s/.config/alloclab/alloclabd.yaml", home) < 0)
                        return -ENOMEM;
                if (!fallback || access(fallback, F_OK) < 0) {
                        *ret = calloc(1, sizeof(DaemonConfig));
                        return *ret ? 0 : -ENOMEM;
                }
                path = fallback;
        }
        Diagnostics d = {};
        int r = daemon_config_load_file(path, &d, ret);
        for (size_t i = 0; i < d.n_items; i++) {
                _cleanup_free_ char *line = diag_format(&d, i);
                log_message(LOG_ERR, 0, "%s", line ? line : "out of memory");
        }
        if (r < 0 && d.n_items == 0)
                log_message(LOG_ERR, 0, "cannot read %s: %s", path, strerror(-r));
        diag_clear(&d);
        return r;
}

/* The database and its WAL files: 0640, group alloclab where it exists (its members may use the
 * daemon, and read results with the CLI), root otherwise; also for a database an older daemon
 * created world readable. Failures are logged: the daemon still serves. Called before the store
 * is opened: closing any descriptor of the database drops this process's SQLite locks on it. */
static void restrict_database(const char *db_path) {
        struct group *g = getgrnam("alloclab");
        static const char *const suffixes[] = { "", "-wal", "-shm" };
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s%s", db_path, suffixes[i]) < 0)
                        return;
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0)
                        continue;
                if (fchmod(fd, 0640) < 0 || (g && fchown(fd, 0, g->gr_gid) < 0))
                        log_message(LOG_WARNING, 0, "cannot restrict %s to 0640: %m", path);
        }
}

/* The control socket systemd passed, if any: one stream socket, else refused. Returns the fd,
 * -ENOENT when none was passed, or -errno. */
static int activated_socket(void) {
        int n = sd_listen_fds(true);
        if (n <= 0)
                return n < 0 ? n : -ENOENT;
        if (n > 1) {
                log_message(LOG_ERR, 0, "systemd passed %d sockets; alloclabd.socket has one", n);
                return -E2BIG;
        }
        int r = sd_is_socket(SD_LISTEN_FDS_START, AF_UNIX, SOCK_STREAM, 1);
        if (r <= 0) {
                log_message(LOG_ERR, 0, "the socket systemd passed is not a listening Unix stream socket");
                return r < 0 ? r : -ENOTSOCK;
        }
        return SD_LISTEN_FDS_START;
}

/* The socket systemd passed, else one bound at the socket path. Returns the fd or -errno
 * (logged); *ret_path is the path bound here, to unlink at exit. */
static int listen_socket(const Options *o, const DaemonConfig *config, char **ret_path) {
        int fd = activated_socket();
        if (fd != -ENOENT)
                return fd;
        _cleanup_free_ char *path =
                o->socket ? strdup(o->socket) : paths_control_socket_for(system_instance);
        if (!path) {
                log_message(LOG_ERR, 0, "no socket path (set --socket or XDG_RUNTIME_DIR)");
                return -EINVAL;
        }
        pid_t peer = 0;
        fd = control_listen(path, system_instance ? 0660 : 0600, &peer);
        if (fd == -EADDRINUSE)
                log_message(LOG_ERR, 0,
                            "cannot listen on %s: alloclabd, pid %d, answers on it (stop it first, or "
                            "give this one another --socket and --db)",
                            path, (int) peer);
        else if (fd < 0)
                log_message(LOG_ERR, 0, "cannot listen on %s: %s", path, strerror(-fd));
        if (fd < 0)
                return fd;
        if (config->socket_group) {
                struct group *g = getgrnam(config->socket_group);
                if (!g || chown(path, (uid_t) -1, g->gr_gid) < 0) {
                        int r = g ? negative_errno() : -ENOENT;
                        log_message(LOG_ERR, 0, "cannot give %s to group %s: %s", path, config->socket_group,
                                    g ? strerror(-r) : "no such group");
                        (void) unlink(path);
                        safe_close(fd);
                        return r;
                }
        }
        *ret_path = TAKE_PTR(path);
        return fd;
}

/* Sets up, serves until stopped, tears down. Returns 0 or -errno (logged). */
/* Options win over the file. */
static void apply_config(Options *o, const DaemonConfig *config) {
        if (!o->db)
                o->db = config->database;
        if (!o->socket)
                o->socket = config->socket;
        if (!o->specs_dir)
                o->specs_dir = config->specs_dir;
        if (!o->probe)
                o->probe = config->probe;
        if (!o->machine)
                o->machine = config->machine;
        if (!o->publish_dir)
                o->publish_dir = config->publish_dir;
        if (!o->idle_timeout_set && config->idle_timeout_usec)
                o->idle_timeout_usec = config->idle_timeout_usec;
}

/* Signals first: blocked before any other thread or source exists. */
static int block_signals(void) {
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGCHLD);
        return sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ? log_error_errno(-errno, "cannot block signals") : 0;
}

static int choose_paths(Daemon *d, const Options *o) {
        if (o->db)
                d->db_path = strdup(o->db);
        else if (system_instance && !(getenv("ALLOCLAB_DB") && *getenv("ALLOCLAB_DB")))
                d->db_path = strdup("/var/lib/alloclab/results.db");
        else
                d->db_path = store_default_path(); /* $ALLOCLAB_DB, else the user's data directory */
        d->probe_path = o->probe ? strdup(o->probe) : paths_probe();
        if (o->machine && !(d->machine = strdup(o->machine)))
                return log_error_errno(-ENOMEM, "cannot keep the machine name");
        if (!d->db_path) {
                log_message(LOG_ERR, 0, "no database path (set --db)");
                return -EINVAL;
        }
        return 0;
}

/* Under systemd with Delegate=yes the service's cgroup is ours: runs' cgroups go there, with the
 * memory and pids controllers when the system has them (runner/cgroup.h). */
static void take_delegation(void) {
        int r = cgroup_take_delegation();
        if (r < 0)
                log_message(LOG_WARNING, 0, "cannot take over this service's cgroup: %s", strerror(-r));
        else if (r > 0)
                log_message(LOG_INFO, 0, "runs get their cgroups in %s", getenv(CGROUP_ROOT_ENV));
}

/* Opens the database and takes its measurer lock, held until exit: a second daemon (or an
 * alloclab run) must not measure into it at the same time. */
static int open_database(Daemon *d) {
        /* Every user's results are in the system database: nothing of it is world readable, even
         * when the unit's UMask= is missing (an older unit, or a start by hand). */
        if (system_instance) {
                umask(0027);
                restrict_database(d->db_path);
        }
        _cleanup_free_ char *message = NULL;
        int r = store_open(d->db_path, STORE_READ_WRITE, &d->store, &message);
        if (r < 0) {
                log_message(LOG_ERR, 0, "%s", message ? message : strerror(-r));
                return r;
        }
        char holder[LOCKFILE_HOLDER_MAX];
        d->lock_fd = lockfile_take(d->db_path, "alloclabd", false, holder);
        if (d->lock_fd == -EWOULDBLOCK) {
                log_message(LOG_ERR, 0, "%s is in use by %s: not starting a second measurer on it",
                            d->db_path, holder[0] ? holder : "another process");
                return -EBUSY;
        }
        if (d->lock_fd < 0)
                log_message(LOG_WARNING, 0, "cannot lock %s.lock: %s", d->db_path, strerror(-d->lock_fd));
        if ((r = store_reserve(d->store)) < 0)
                log_message(LOG_WARNING, 0, "cannot keep %d KiB in reserve next to %s: %s",
                            STORE_RESERVE_BYTES / 1024, d->db_path, strerror(-r));
        return 0;
}

/* The event loop with its signals, the job manager and the scheduler. */
static int start_parts(Daemon *d, const Options *o) {
        ManagerEvents events = { .userdata = d,
                                 .job_finished = on_job_finished,
                                 .next_scheduled = on_next_scheduled };
        int r;
        if ((r = sd_event_default(&d->event)) < 0 ||
            (r = sd_event_add_signal(d->event, NULL, SIGTERM, on_stop_signal, d)) < 0 ||
            (r = sd_event_add_signal(d->event, NULL, SIGINT, on_stop_signal, d)) < 0 ||
            (r = sd_event_add_signal(d->event, NULL, SIGHUP, on_hup, d)) < 0 ||
            (r = sd_event_set_watchdog(d->event, true)) < 0 ||
            (r = manager_new(d->event, d->store, d->probe_path, d->machine, &events, &d->manager)) < 0)
                return log_error_errno(r, "cannot set up the event loop");
        manager_recover(d->manager);
        if (o->publish_dir &&
            (r = publisher_new(d->event, d->manager, o->publish_dir, d->db_path, &d->publisher)) < 0)
                return log_error_errno(r, "cannot set up publishing");
        _cleanup_free_ char *specs_dir = o->specs_dir ? strdup(o->specs_dir) : default_specs_dir();
        if (specs_dir && (r = scheduler_new(d->event, d->store, d->manager, specs_dir, &d->scheduler)) < 0)
                return log_error_errno(r, "cannot load the schedules");
        return 0;
}

static int run(Options *o) {
        log_open(getenv("JOURNAL_STREAM") != NULL);
        system_instance = geteuid() == 0 && !o->user;
        _cleanup_(daemon_config_freep) DaemonConfig *config = NULL;
        int r = load_config(o->config, &config);
        if (r < 0)
                return r;
        apply_config(o, config);
        _cleanup_(daemon_done) Daemon d = {
                .lock_fd = -1,
                .retention = { .keep_last = config->prune_keep_last,
                               .older_than_s = config->prune_older_than_s },
                .retain = config->prune_keep_last || config->prune_older_than_s,
        };
        if ((r = block_signals()) < 0 || (r = choose_paths(&d, o)) < 0)
                return r;
        /* The socket first: a daemon that answers on it already is found before anything is made
         * (a second one pointed at it left a database behind). */
        _cleanup_close_ int listen_fd = listen_socket(o, config, &d.socket_path);
        if (listen_fd < 0)
                return listen_fd;
        take_delegation();
        if ((r = open_database(&d)) < 0 || (r = start_parts(&d, o)) < 0)
                return r;
        ControlContext control = { .event = d.event,
                                   .store = d.store,
                                   .manager = d.manager,
                                   .scheduler = d.scheduler,
                                   .db_path = d.db_path,
                                   .probe_path = d.probe_path,
                                   .idle_timeout_usec = o->idle_timeout_usec };
        if ((r = control_new(&control, TAKE_FD(listen_fd), &d.control)) < 0)
                return log_error_errno(r, "cannot serve the socket");
        sd_notify(false, "READY=1");
        log_message(LOG_INFO, 0, "ready: database %s, socket %s%s%s", d.db_path,
                    d.socket_path ? d.socket_path : "(activated)", o->publish_dir ? ", site " : "",
                    o->publish_dir ? o->publish_dir : "");
        manager_start_soon(d.manager);
        if ((r = sd_event_loop(d.event)) < 0)
                return log_error_errno(r, "the event loop failed");
        return 0;
}

int main(int argc, char **argv) {
        Options o = { .idle_timeout_usec = CONTROL_DEFAULT_IDLE_USEC };
        int r = parse_options(argc, argv, &o);
        if (r != 0)
                return r > 0 ? EXIT_SUCCESS : 2;
        r = run(&o);
        if (r < 0) {
                sd_notifyf(false, "ERRNO=%i", -r);
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}
