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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "configs/daemon-config.h"
#include "configs/spec.h"
#include "daemon/control.h"
#include "daemon/daemon.h"
#include "daemon/scheduler.h"
#include "daemon/worker.h"
#include "db/jobs.h"
#include "runner/cgroup.h"
#include "util/cleanup.h"
#include "util/lockfile.h"
#include "util/paths.h"

#define STOP_TIMEOUT_USEC (8ULL * 1000000) /* SIGKILL the runner if it has not stopped by then */

static bool log_to_journal;
/* The system instance (root, or not --user): system paths for socket, database, specs, config. */
static bool system_instance;

static void logv(int priority, const LogContext *ctx, const char *fmt, va_list ap) {
        char message[1024];
        vsnprintf(message, sizeof(message), fmt, ap);
        if (!log_to_journal) {
                fprintf(stderr, "alloclabd: %s\n", message);
                return;
        }
        char fields[24][320];
        struct iovec iov[24];
        size_t n = 0;
#define FIELD(...)                                                                                          \
        do {                                                                                                \
                snprintf(fields[n], sizeof(fields[n]), __VA_ARGS__);                                        \
                iov[n] = (struct iovec){ .iov_base = fields[n], .iov_len = strlen(fields[n]) };             \
                n++;                                                                                        \
        } while (0)
        FIELD("PRIORITY=%i", priority);
        FIELD("SYSLOG_IDENTIFIER=alloclabd");
        if (ctx->message_id)
                FIELD("MESSAGE_ID=%s", ctx->message_id);
        if (ctx->run_id > 0)
                FIELD("RUN_ID=%lld", (long long) ctx->run_id);
        if (ctx->job_id > 0)
                FIELD("JOB_ID=%lld", (long long) ctx->job_id);
        if (ctx->experiment)
                FIELD("EXPERIMENT=%s", ctx->experiment);
        if (ctx->variant)
                FIELD("VARIANT=%s", ctx->variant);
        if (ctx->cell)
                FIELD("CELL=%s", ctx->cell);
        for (char *const *f = ctx->fields; f && *f && n < ELEMENTSOF(fields); f++)
                FIELD("%s", *f);
#undef FIELD
        char *text = NULL;
        if (asprintf(&text, "MESSAGE=%s", message) < 0)
                return;
        struct iovec all[ELEMENTSOF(iov) + 1];
        memcpy(all, iov, n * sizeof(struct iovec));
        all[n++] = (struct iovec){ .iov_base = text, .iov_len = strlen(text) };
        sd_journal_sendv(all, (int) n);
        free(text);
}

void daemon_log_context(int priority, const LogContext *ctx, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        logv(priority, ctx, fmt, ap);
        va_end(ap);
}

void daemon_log(int priority, int64_t run_id, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        logv(priority, &(LogContext){ .run_id = run_id }, fmt, ap);
        va_end(ap);
}

void daemon_log_change_point(const char *experiment, const char *metric, const HistorySeries *series,
                             const HistoryPoint *point) {
        const Comparison *c = &point->against;
        const char *change = history_change_word(point->change);
        char f[9][96];
        snprintf(f[0], sizeof(f[0]), "METRIC=%s", metric);
        snprintf(f[1], sizeof(f[1]), "CHANGE=%s", change);
        snprintf(f[2], sizeof(f[2]), "MEDIAN=%.9g", point->median);
        snprintf(f[3], sizeof(f[3]), "RATIO=%.6f", c->ratio);
        snprintf(f[4], sizeof(f[4]), "RATIO_CI_LOW=%.6f", c->lo);
        snprintf(f[5], sizeof(f[5]), "RATIO_CI_HIGH=%.6f", c->hi);
        snprintf(f[6], sizeof(f[6]), "P_VALUE=%.3g", c->p);
        snprintf(f[7], sizeof(f[7]), "BASELINE_FROM_RUN=%lld", (long long) point->baseline_from);
        snprintf(f[8], sizeof(f[8]), "BASELINE_RUNS=%zu", point->baseline_runs);
        char *fields[] = { f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], NULL };
        LogContext ctx = { .message_id = LOG_MESSAGE_CHANGE_POINT,
                           .run_id = point->run_id,
                           .experiment = experiment,
                           .variant = series->variant,
                           .cell = series->cell,
                           .fields = fields };
        daemon_log_context(
                point->change == HISTORY_REGRESSION ? LOG_WARNING : LOG_NOTICE, &ctx,
                "%s run %lld: %s [%s] %s: %s %.3fx [%.3f, %.3f] against runs %lld.. (%zu runs, p %.2g)",
                experiment, (long long) point->run_id, series->variant, series->cell, change, metric,
                c->ratio, c->lo, c->hi, (long long) point->baseline_from, point->baseline_runs, c->p);
}

void daemon_update_status(Daemon *d, const char *progress) {
        size_t queued = 0; /* a count, not a list: this runs after every submission */
        (void) jobs_count(d->store, JOB_QUEUED, &queued);
        const char *experiment = NULL;
        time_t next = scheduler_next(d->scheduler, &experiment);
        char when[64] = "";
        struct tm tm;
        if (next != (time_t) -1 && localtime_r(&next, &tm))
                strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
        if (d->worker)
                snprintf(d->progress, sizeof(d->progress), "%s; %zu queued",
                         progress ? progress : worker_experiment(d->worker), queued);
        else if (when[0])
                snprintf(d->progress, sizeof(d->progress), "idle; %zu queued; next scheduled %s at %s",
                         queued, experiment, when);
        else
                snprintf(d->progress, sizeof(d->progress), "idle; %zu queued", queued);
        sd_notifyf(false, "STATUS=%s", d->progress);
}

/* Starts the oldest queued job when nothing runs. Returns 0 or -errno (logged). */
static int start_next(Daemon *d) {
        while (!d->worker && !d->stopping) {
                Job job;
                int r = jobs_next_queued(d->store, &job);
                if (r == -ENOENT)
                        break;
                if (r < 0) {
                        daemon_log(LOG_ERR, 0, "cannot read the queue: %s", store_error(d->store));
                        return r;
                }
                int64_t id = job.id;
                r = worker_start(d, &job, &d->worker);
                job_done(&job);
                if (r == -EIO) {
                        /* The store cannot even mark it failed: taking it again would spin. The
                         * queue waits for the next submission, schedule or restart. */
                        daemon_log(LOG_ERR, 0, "the queue is paused: the database cannot be written");
                        break;
                }
                if (r < 0) {
                        /* That job is marked failed; tell its waiters and try the next. */
                        control_job_finished(d->control, id);
                        continue;
                }
        }
        daemon_update_status(d, NULL);
        return 0;
}

void daemon_job_finished(Daemon *d, int64_t job_id) {
        d->worker = worker_free(d->worker);
        (void) store_reserve(d->store); /* again, if a storage failure used it; fails while full */
        control_job_finished(d->control, job_id);
        if (d->stopping) {
                sd_event_exit(d->event, 0);
                return;
        }
        daemon_start_soon(d);
}

static int on_start(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        (void) s;
        (void) usec;
        d->start_requested = 0;
        (void) start_next(d); /* logged; an error must not disable the source */
        return 0;
}

void daemon_start_soon(Daemon *d) {
        uint64_t now = 0;
        (void) sd_event_now(d->event, CLOCK_MONOTONIC, &now);
        if (!d->start_requested)
                d->start_requested = now;
        uint64_t at = now + START_SETTLE_USEC;
        if (at > d->start_requested + START_MAX_DELAY_USEC)
                at = d->start_requested + START_MAX_DELAY_USEC;
        (void) sd_event_source_set_time(d->start, at);
        (void) sd_event_source_set_enabled(d->start, SD_EVENT_ONESHOT);
}

static int on_stop_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        (void) s;
        (void) usec;
        daemon_log(LOG_WARNING, 0, "the runner did not stop in time; killing it");
        if (d->worker)
                worker_kill(d->worker);
        return 0;
}

static int on_stop_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Daemon *d = userdata;
        if (d->stopping)
                return 0;
        d->stopping = true;
        sd_notify(false, "STOPPING=1");
        daemon_log(LOG_INFO, 0, "stopping on signal %u", si->ssi_signo);
        if (!d->worker)
                return sd_event_exit(d->event, 0);
        worker_cancel(d->worker, true);
        return sd_event_add_time_relative(sd_event_source_get_event(s), NULL, CLOCK_MONOTONIC,
                                          STOP_TIMEOUT_USEC, 0, on_stop_timeout, d);
}

static int on_hup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Daemon *d = userdata;
        (void) s;
        (void) si;
        daemon_log(LOG_INFO, 0, "SIGHUP: reloading scheduled specs");
        int r = scheduler_reload(d->scheduler);
        if (r < 0)
                daemon_log(LOG_ERR, 0, "cannot reload the schedules: %s", strerror(-r));
        daemon_update_status(d, NULL);
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
        "                 [--idle-timeout SECONDS] [--user]\n"
        "\n"
        "Queues and runs alloclab experiments one at a time; `alloclab submit/status/queue/cancel`\n"
        "talk to it. Socket: systemd socket activation, else --socket, $ALLOCLAB_SOCKET,\n"
        "/run/alloclab/control.sock as root or $XDG_RUNTIME_DIR/alloclab/control.sock with --user\n"
        "or as another user (--user also picks the user's database, specs and configuration).\n"
        "Database: --db, $ALLOCLAB_DB, else /var/lib/alloclab/results.db as root or the\n"
        "user's default ($XDG_DATA_HOME/alloclab/results.db).\n"
        "Scheduled specs: every *.yaml with schedule: in --specs-dir, else /etc/alloclab/specs.d as\n"
        "root or ~/.config/alloclab/specs.d; SIGHUP reloads them.\n"
        "Configuration: --config, else /etc/alloclab/alloclabd.yaml as root or\n"
        "~/.config/alloclab/alloclabd.yaml, if present; options override it.\n";

typedef struct Options {
        const char *config;
        const char *db;
        const char *specs_dir;
        const char *socket;
        const char *probe;
        uint64_t idle_timeout_usec;
        bool idle_timeout_set;
        bool user;
} Options;

static int parse_options(int argc, char **argv, Options *o) {
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },
                { "socket", required_argument, NULL, 's' },
                { "probe", required_argument, NULL, 'p' },
                { "idle-timeout", required_argument, NULL, 'i' },
                { "specs-dir", required_argument, NULL, 'S' },
                { "config", required_argument, NULL, 'c' },
                { "user", no_argument, NULL, 'u' },
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
                case 'i': {
                        double v = strtod(optarg, &end);
                        if (*end || !(v > 0) || v > 3600) {
                                fprintf(stderr, "alloclabd: --idle-timeout must be 0-3600 seconds\n");
                                return 2;
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
                        return 2;
                }
        }
        return optind == argc ? 0 : 2;
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
                daemon_log(LOG_ERR, 0, "%s", line ? line : "out of memory");
        }
        if (r < 0 && d.n_items == 0)
                daemon_log(LOG_ERR, 0, "cannot read %s: %s", path, strerror(-r));
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
                        daemon_log(LOG_WARNING, 0, "cannot restrict %s to 0640: %m", path);
        }
}

/* Jobs the previous daemon left running are interrupted; those whose spec says resume: true
 * are queued again to continue their run. */
static void recover_jobs(Daemon *d) {
        Job *jobs = NULL;
        size_t n = 0;
        if (jobs_recover(d->store, &jobs, &n) < 0) {
                daemon_log(LOG_ERR, 0, "cannot recover interrupted jobs: %s", store_error(d->store));
                return;
        }
        for (size_t i = 0; i < n; i++) {
                Job *j = &jobs[i];
                Diagnostics diag = {};
                Spec *spec = NULL;
                bool resume = spec_load_buffer(j->spec_path, j->spec_yaml, strlen(j->spec_yaml), &diag,
                                               &spec) >= 0 &&
                              spec->resume && j->run_id > 0;
                spec_free(spec);
                diag_clear(&diag);
                daemon_log(LOG_WARNING, j->run_id, "job %lld was interrupted by the previous daemon's end%s",
                           (long long) j->id, resume ? "; resuming its run" : "");
                if (!resume)
                        continue;
                free(j->trigger);
                j->trigger = strdup("resume");
                int64_t id;
                if (!j->trigger || jobs_add(d->store, j, &id) < 0)
                        daemon_log(LOG_ERR, j->run_id, "cannot queue the resumption of run %lld",
                                   (long long) j->run_id);
        }
        jobs_list_free(jobs, n);
}

static int run(int argc, char **argv) {
        Options o = { .idle_timeout_usec = CONTROL_DEFAULT_IDLE_USEC };
        int e = parse_options(argc, argv, &o);
        if (e != 0)
                return e == 1 ? EXIT_SUCCESS : 2;
        log_to_journal = getenv("JOURNAL_STREAM") != NULL;
        system_instance = geteuid() == 0 && !o.user;
        _cleanup_(daemon_config_freep) DaemonConfig *config = NULL;
        if (load_config(o.config, &config) < 0)
                return EXIT_FAILURE;
        /* Options win over the file. */
        if (!o.db)
                o.db = config->database;
        if (!o.socket)
                o.socket = config->socket;
        if (!o.specs_dir)
                o.specs_dir = config->specs_dir;
        if (!o.probe)
                o.probe = config->probe;
        if (!o.idle_timeout_set && config->idle_timeout_usec)
                o.idle_timeout_usec = config->idle_timeout_usec;

        /* Signals first: blocked before any other thread or source exists. */
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return EXIT_FAILURE;

        Daemon d = { .idle_timeout_usec = o.idle_timeout_usec };
        int r;
        _cleanup_free_ char *default_db = NULL, *socket_path = NULL;
        if (o.db)
                d.db_path = strdup(o.db);
        else if (system_instance && !(getenv("ALLOCLAB_DB") && *getenv("ALLOCLAB_DB")))
                d.db_path = strdup("/var/lib/alloclab/results.db");
        else
                d.db_path = store_default_path(); /* $ALLOCLAB_DB, else the user's data directory */
        d.probe_path = o.probe ? strdup(o.probe) : paths_probe();
        if (!d.db_path) {
                daemon_log(LOG_ERR, 0, "no database path (set --db)");
                return EXIT_FAILURE;
        }

        /* Under systemd with Delegate=yes the service's cgroup is ours: runs' cgroups go there, with
         * the memory and pids controllers when the system has them (runner/cgroup.h). */
        r = cgroup_take_delegation();
        if (r < 0)
                daemon_log(LOG_WARNING, 0, "cannot take over this service's cgroup: %s", strerror(-r));
        else if (r > 0)
                daemon_log(LOG_INFO, 0, "runs get their cgroups in %s", getenv(CGROUP_ROOT_ENV));

        /* Every user's results are in the system database: nothing of it is world readable, even
         * when the unit's UMask= is missing (an older unit, or a start by hand). */
        if (system_instance) {
                umask(0027);
                restrict_database(d.db_path);
        }
        _cleanup_free_ char *message = NULL;
        r = store_open(d.db_path, STORE_READ_WRITE, &d.store, &message);
        if (r < 0) {
                daemon_log(LOG_ERR, 0, "%s", message ? message : strerror(-r));
                errno = -r;
                return EXIT_FAILURE;
        }
        /* One measurer per database: a second daemon (or an alloclab run) must not measure into it
         * at the same time. Held until exit. */
        char holder[LOCKFILE_HOLDER_MAX];
        _cleanup_close_ int lock_fd = lockfile_take(d.db_path, "alloclabd", false, holder);
        if (lock_fd == -EWOULDBLOCK) {
                daemon_log(LOG_ERR, 0, "%s is in use by %s: not starting a second measurer on it", d.db_path,
                           holder[0] ? holder : "another process");
                errno = EBUSY;
                return EXIT_FAILURE;
        }
        if (lock_fd < 0)
                daemon_log(LOG_WARNING, 0, "cannot lock %s.lock: %s", d.db_path, strerror(-lock_fd));
        if ((r = store_reserve(d.store)) < 0)
                daemon_log(LOG_WARNING, 0, "cannot keep %d KiB in reserve next to %s: %s",
                           STORE_RESERVE_BYTES / 1024, d.db_path, strerror(-r));
        recover_jobs(&d);

        if ((r = sd_event_default(&d.event)) < 0 ||
            (r = sd_event_add_signal(d.event, NULL, SIGTERM, on_stop_signal, &d)) < 0 ||
            (r = sd_event_add_signal(d.event, NULL, SIGINT, on_stop_signal, &d)) < 0 ||
            (r = sd_event_add_signal(d.event, NULL, SIGHUP, on_hup, &d)) < 0 ||
            (r = sd_event_set_watchdog(d.event, true)) < 0 ||
            (r = sd_event_add_time(d.event, &d.start, CLOCK_MONOTONIC, 0, 0, on_start, &d)) < 0 ||
            /* below the commit of submissions (SD_EVENT_PRIORITY_IDLE): answers first */
            (r = sd_event_source_set_priority(d.start, SD_EVENT_PRIORITY_IDLE + 1)) < 0 ||
            (r = sd_event_source_set_enabled(d.start, SD_EVENT_OFF)) < 0) {
                daemon_log(LOG_ERR, 0, "cannot set up the event loop: %s", strerror(-r));
                return EXIT_FAILURE;
        }

        int listen_fd;
        char **names = NULL;
        int n = sd_listen_fds_with_names(true, &names);
        for (int i = 0; names && i < n; i++)
                free(names[i]);
        free(names);
        if (n > 0)
                listen_fd = SD_LISTEN_FDS_START;
        else {
                socket_path = o.socket ? strdup(o.socket) : paths_control_socket_for(system_instance);
                if (!socket_path) {
                        daemon_log(LOG_ERR, 0, "no socket path (set --socket or XDG_RUNTIME_DIR)");
                        return EXIT_FAILURE;
                }
                listen_fd = control_listen(socket_path, system_instance ? 0660 : 0600);
                if (listen_fd < 0) {
                        daemon_log(LOG_ERR, 0, "cannot listen on %s: %s", socket_path, strerror(-listen_fd));
                        return EXIT_FAILURE;
                }
                if (config->socket_group) {
                        struct group *g = getgrnam(config->socket_group);
                        if (!g || chown(socket_path, (uid_t) -1, g->gr_gid) < 0) {
                                daemon_log(LOG_ERR, 0, "cannot give %s to group %s: %s", socket_path,
                                           config->socket_group, g ? strerror(errno) : "no such group");
                                return EXIT_FAILURE;
                        }
                }
        }
        if ((r = control_new(&d, listen_fd, &d.control)) < 0) {
                daemon_log(LOG_ERR, 0, "cannot serve the socket: %s", strerror(-r));
                return EXIT_FAILURE;
        }

        _cleanup_free_ char *specs_dir = o.specs_dir ? strdup(o.specs_dir) : default_specs_dir();
        if (specs_dir && (r = scheduler_new(&d, specs_dir, &d.scheduler)) < 0) {
                daemon_log(LOG_ERR, 0, "cannot load the schedules: %s", strerror(-r));
                return EXIT_FAILURE;
        }

        sd_notify(false, "READY=1");
        daemon_log(LOG_INFO, 0, "ready: database %s, socket %s", d.db_path,
                   socket_path ? socket_path : "(activated)");
        daemon_start_soon(&d);
        r = sd_event_loop(d.event);

        d.scheduler = scheduler_free(d.scheduler);
        d.control = control_free(d.control);
        d.worker = worker_free(d.worker);
        sd_event_source_disable_unref(d.start);
        if (socket_path)
                (void) unlink(socket_path);
        store_free(d.store);
        sd_event_unref(d.event);
        free(d.db_path);
        free(d.probe_path);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char **argv) {
        int r = run(argc, argv);
        if (r == EXIT_FAILURE)
                sd_notifyf(false, "ERRNO=%i", errno > 0 ? errno : EIO);
        return r;
}
