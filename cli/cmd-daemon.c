/* SPDX-License-Identifier: MIT */
/*
 * The daemon's clients: `alloclab submit`, `status`, `queue`, `cancel`. One request, one reply
 * over the control socket (docs/protocol.md); `submit --wait` then waits for the job with
 * io.alloclab.Wait and prints the stored run like `alloclab show`.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/check.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/render.h"
#include "db/query.h"
#include "util/accounts.h"
#include "util/cleanup.h"
#include "util/protocol.h"
#include "util/paths.h"
#include "util/text.h"

extern char **environ;

#define CLIENT_REPLY_MAX  (16 * 1024 * 1024)
#define CLIENT_TIMEOUT_MS 30000

typedef struct Client {
        const char *command;
        char *socket_path;
        int fd;
} Client;

static void client_done(Client *c) {
        free(c->socket_path);
        safe_close(c->fd);
}

static int client_connect(Client *c, const char *socket_path) {
        c->fd = -1;
        c->socket_path = socket_path ? strdup(socket_path) : paths_control_socket();
        if (!c->socket_path) {
                cli_error(c->command, "no socket path: set --socket, ALLOCLAB_SOCKET or XDG_RUNTIME_DIR");
                return EXIT_ENVIRONMENT;
        }
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(c->socket_path) >= sizeof(sa.sun_path)) {
                cli_error(c->command, "socket path too long: %s", c->socket_path);
                return EXIT_ENVIRONMENT;
        }
        strcpy(sa.sun_path, c->socket_path);
        c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (c->fd >= 0 && connect(c->fd, (struct sockaddr *) &sa, sizeof(sa)) == 0)
                return EXIT_OK;
        int e = errno;
        if (e == EACCES || e == EPERM) {
                /* The socket is there: the daemon's users are its owner and its group. */
                struct stat st;
                char readers[2 * ACCOUNT_NAME_MAX + 32];
                if (stat(c->socket_path, &st) == 0) {
                        account_readers(&st, readers, sizeof(readers));
                        cli_error(c->command, "you may not use the daemon's socket %s (%s): it is for %s",
                                  c->socket_path, strerror(e), readers);
                } else /* not even its directory: who may is not to be seen from here */
                        cli_error(
                                c->command,
                                "you may not reach the daemon's socket %s (%s): ask whoever runs alloclabd "
                                "for access",
                                c->socket_path, strerror(e));
        } else {
                /* ECONNREFUSED from a file that is no socket: a mistyped ALLOCLAB_SOCKET or --socket. */
                struct stat st;
                if (e == ECONNREFUSED && stat(c->socket_path, &st) == 0 && !S_ISSOCK(st.st_mode))
                        cli_error(c->command, "%s is not a socket (is ALLOCLAB_SOCKET or --socket right?)",
                                  c->socket_path);
                else
                        cli_error(c->command, "no daemon is running at %s (start alloclabd): %s",
                                  c->socket_path, strerror(e));
        }
        return EXIT_ENVIRONMENT;
}

/* Why a daemon closes a connection it has not answered (docs/protocol.md, limits). */
#define DAEMON_CLOSED_HINT                                                                                  \
        " (it does when it stops, and to the newest connections of the user who holds the most when "       \
        "it holds too many: have you many open?)"

/* Sends {"method": M, "parameters": P} (taking P). Returns 0 or -1 (reported). */
static int client_send(Client *c, const char *method, json_t *params) {
        json_t *request = json_pack("{s:s, s:o}", "method", method, "parameters", params);
        _cleanup_free_ char *text = request ? json_dumps(request, JSON_COMPACT) : NULL;
        json_decref(request);
        if (!text) {
                cli_error(c->command, "out of memory");
                return -1;
        }
        size_t n = strlen(text) + 1;
        if (n > PROTOCOL_MAX_REQUEST) { /* the daemon would close the connection mid-send */
                cli_error(c->command,
                          "the request is %.1f MiB as JSON, more than the daemon takes (1 MiB)%s",
                          n / 1048576.0,
                          strcmp(method, "io.alloclab.Submit") == 0
                                  ? ": the spec and this environment, escaped, are too large; make the spec "
                                    "or the environment smaller, or measure with alloclab run"
                                  : "");
                return -1;
        }
        for (size_t sent = 0; sent < n;) {
                ssize_t k = send(c->fd, text + sent, n - sent, MSG_NOSIGNAL);
                if (k < 0) {
                        cli_error(c->command, "cannot talk to the daemon: %m%s",
                                  errno == EPIPE || errno == ECONNRESET ? DAEMON_CLOSED_HINT : "");
                        return -1;
                }
                sent += (size_t) k;
        }
        return 0;
}

/* Reads one reply; timeout_ms < 0 waits indefinitely. on_idle (optional) is called each
 * idle_ms while waiting. Returns the reply or NULL (reported). */
static json_t *client_receive(Client *c, int timeout_ms, int idle_ms, void (*on_idle)(void *),
                              void *userdata) {
        _cleanup_free_ char *reply = NULL;
        size_t size = 0;
        int waited = 0;
        for (;;) {
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                int slice = on_idle ? idle_ms : timeout_ms;
                int r = poll(&p, 1, slice);
                if (r == 0 && on_idle) {
                        on_idle(userdata);
                        waited += idle_ms;
                        if (timeout_ms < 0 || waited < timeout_ms)
                                continue;
                }
                if (r == 0) {
                        cli_error(c->command, "the daemon did not answer within %d s", timeout_ms / 1000);
                        return NULL;
                }
                if (r < 0 && errno == EINTR)
                        continue;
                char buf[65536];
                ssize_t k = r < 0 ? -1 : read(c->fd, buf, sizeof(buf));
                if (k <= 0 || size + (size_t) k > CLIENT_REPLY_MAX) {
                        /* Closed with our request unread: a reset, not an end of file. */
                        cli_error(c->command, "the daemon closed the connection%s",
                                  k == 0 || (k < 0 && errno == ECONNRESET) ? DAEMON_CLOSED_HINT : "");
                        return NULL;
                }
                char *grown = realloc(reply, size + (size_t) k);
                if (!grown)
                        return NULL;
                reply = grown;
                memcpy(reply + size, buf, (size_t) k);
                size += (size_t) k;
                if (reply[size - 1] == 0)
                        break;
        }
        json_error_t err;
        json_t *j = json_loads(reply, 0, &err);
        if (!j)
                cli_error(c->command, "unreadable reply from the daemon: %s", err.text);
        return j;
}

static json_t *client_call(Client *c, const char *method, json_t *params, int timeout_ms) {
        return client_send(c, method, params) < 0 ? NULL : client_receive(c, timeout_ms, 0, NULL, NULL);
}

/* The daemon's errors in words (docs/protocol.md), with the job they name when they name one,
 * and the exit status each gives (a job the command line named that is not there, or no longer
 * runs, is a usage error); others are shown by name and exit EXIT_ENVIRONMENT. */
static const struct {
        const char *error, *plain;
        const char *before_job, *after_job; /* around the job's number, when the reply names it */
        int exit_status;
} error_words[] = {
        { "io.alloclab.NoSuchJob", "no such job", "no job ", "", EXIT_USAGE },
        { "io.alloclab.JobFinished", "the job has ended already", "job ", " has ended already", EXIT_USAGE },
        { "io.alloclab.PermissionDenied", "permission denied: only its submitter or root may do that", NULL,
          NULL, EXIT_USAGE },
        { "io.alloclab.ShuttingDown", "the daemon is shutting down", NULL, NULL, EXIT_ENVIRONMENT },
        { "io.alloclab.StoreFailed", "the daemon cannot use its database", NULL, NULL, EXIT_ENVIRONMENT },
        { "io.alloclab.PlanFailed", "the daemon cannot run this spec", NULL, NULL, EXIT_ENVIRONMENT },
        { "io.alloclab.InvalidParameter", "the daemon refused the request", NULL, NULL, EXIT_USAGE },
        { "io.alloclab.InvalidRequest", "the daemon did not understand the request", NULL, NULL,
          EXIT_ENVIRONMENT },
        { "io.alloclab.MethodNotFound",
          "the daemon does not know this request (is alloclabd older than alloclab?)", NULL, NULL,
          EXIT_ENVIRONMENT },
        { "io.alloclab.MessageTooLarge", "the request is larger than the daemon takes", NULL, NULL,
          EXIT_ENVIRONMENT },
};

/* Prints a reply's error, "no job 99", not "io.alloclab.NoSuchJob", and returns its exit status;
 * EXIT_OK when the reply is no error. */
static int reply_failed(const char *command, json_t *reply) {
        const char *error = json_string_value(json_object_get(reply, "error"));
        if (!error)
                return EXIT_OK;
        int status = EXIT_ENVIRONMENT;
        json_t *parameters = json_object_get(reply, "parameters");
        const char *message = json_string_value(json_object_get(parameters, "message"));
        json_t *job = json_object_get(parameters, "job");
        char words[256];
        snprintf(words, sizeof(words), "%s", error);
        for (size_t i = 0; i < ELEMENTSOF(error_words); i++) {
                if (strcmp(error, error_words[i].error) != 0)
                        continue;
                status = error_words[i].exit_status;
                if (error_words[i].before_job && json_is_integer(job))
                        snprintf(words, sizeof(words), "%s%lld%s", error_words[i].before_job,
                                 (long long) json_integer_value(job), error_words[i].after_job);
                else
                        snprintf(words, sizeof(words), "%s", error_words[i].plain);
        }
        cli_error(command, "%s%s%s", words, message ? ": " : "", message ? message : "");
        return status;
}

/* --socket, --format (where ret_format is given) and the extra options (-w sets *ret_flag). */
static int parse_socket_option(const char *command, int argc, char **argv, const char *extra_short,
                               const struct option *extra, const char **ret_socket, bool *ret_flag,
                               OutputFormat *ret_format) {
        struct option options[8] = { { "socket", required_argument, NULL, 's' },
                                     { "format", required_argument, NULL, 'f' } };
        size_t n = 2;
        for (size_t i = 0; extra && extra[i].name && n < 7; i++)
                options[n++] = extra[i];
        char shorts[16];
        snprintf(shorts, sizeof(shorts), "s:f:%s", extra_short);
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, shorts, options, NULL)) >= 0;) {
                if (c == 's')
                        *ret_socket = optarg;
                else if (c == 'f' && ret_format) {
                        if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0) {
                                cli_error(command, "%s prints a table or JSON (--format table|json)",
                                          command);
                                return EXIT_USAGE;
                        }
                        *ret_format = strcmp(optarg, "json") == 0 ? FORMAT_JSON : FORMAT_TABLE;
                } else if (c == 'w' && ret_flag)
                        *ret_flag = true;
                else {
                        cli_error(command, "unknown option (see alloclab %s --help)", command);
                        return EXIT_USAGE;
                }
        }
        return EXIT_OK;
}

static void show_progress(void *userdata) {
        Client *status = userdata;
        json_t *reply = client_call(status, "io.alloclab.Status", json_object(), CLIENT_TIMEOUT_MS);
        const char *text =
                json_string_value(json_object_get(json_object_get(reply, "parameters"), "progress"));
        if (text) {
                output_raw(stderr, "\r\033[K");
                fputs(text, stderr);
        }
        json_decref(reply);
}

static const char submit_usage[] =
        "Usage: alloclab submit SPEC [--wait] [--socket PATH]\n"
        "\n"
        "Queues SPEC with the daemon (alloclabd), which runs it as you, from this directory, with\n"
        "this environment's whitelisted variables. The spec is validated first (as alloclab check).\n"
        "With --wait, waits for the job and prints its result table.\n"
        "Exit status: as alloclab run for --wait (0, 1 samples failed, 9 a variant excluded, 5\n"
        "canceled or interrupted); 3 invalid spec; 4 no daemon or daemon error, or the job failed\n"
        "with nothing failing or excluded (the daemon's disk full, say).\n";

/* The exit status of a job that ended with status, failures of its samples failing and
 * excluded of its variants' cells excluded (-1 each: not known): as alloclab run's, where a run
 * that failed with nothing failing or excluded failed for its environment (the daemon's disk
 * full). */
static int job_exit(const char *status, int64_t failures, int64_t excluded) {
        if (failures < 0 || excluded < 0)
                return EXIT_FAILURES;
        int e = cli_run_status(failures, excluded);
        return e == EXIT_OK && strcmp(status, "failed") == 0 ? EXIT_ENVIRONMENT : e;
}

/* Prints the run of a job that ended, from the daemon's database. A submitter who cannot read
 * it is told so; its exit status then follows what the daemon said of the run (its failures and
 * exclusions, -1 each when it did not say). */
static int print_run(const char *db_path, int64_t run_id, const char *status, int64_t failures,
                     int64_t excluded) {
        if (access(db_path, R_OK) < 0) {
                int e = errno;
                struct stat st;
                printf("run %lld %s; its table is in %s, which you cannot read (%s)", (long long) run_id,
                       status, db_path, strerror(e));
                if (e == EACCES && stat(db_path, &st) == 0) {
                        char readers[2 * ACCOUNT_NAME_MAX + 32];
                        account_readers(&st, readers, sizeof(readers));
                        printf(": it is for %s, or run it yourself with alloclab run\n", readers);
                } else
                        printf(": run it yourself with alloclab run to see it\n");
                return job_exit(status, failures, excluded);
        }
        _cleanup_(store_freep) Store *store = NULL;
        if (cli_open_store("submit", db_path, STORE_READ_ONLY, &store) != EXIT_OK)
                return EXIT_ENVIRONMENT;
        _cleanup_(query_report_freep) Report *rep = NULL;
        int r = query_report(store, run_id, NULL, &rep);
        if (r < 0) {
                cli_error("submit", "cannot read run %lld from %s: %s", (long long) run_id, db_path,
                          r == -EIO ? store_error(store) : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        render_for(FORMAT_TABLE)(stdout, rep);
        return job_exit(status, rep->run.n_failures, rep->run.n_excluded);
}

int cmd_submit(int argc, char **argv) {
        if (cli_wants_help(argc, argv, submit_usage))
                return EXIT_OK;
        const char *socket_path = NULL;
        bool wait = false;
        static const struct option extra[] = { { "wait", no_argument, NULL, 'w' }, {} };
        int e = parse_socket_option("submit", argc, argv, "w", extra, &socket_path, &wait, NULL);
        if (e != EXIT_OK)
                return e;
        if (optind + 1 != argc) {
                cli_error("submit", "expected exactly one SPEC argument");
                return EXIT_USAGE;
        }
        const char *spec_arg = argv[optind];
        /* Checked here as alloclab check checks it, so that both say the same of a bad spec. */
        _cleanup_(spec_freep) Spec *spec = NULL;
        if ((e = cli_load_spec("submit", spec_arg, &spec)) != EXIT_OK)
                return e;
        /* Allocator options as check judges them, where this user can plan the spec here; what
         * only the daemon can judge (its cgroups, the submitter's files as the daemon opens
         * them) it says itself. */
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_free_ char *unused = NULL;
        if (cli_plan_for_check(spec, &plan, &unused) >= 0 &&
            (e = cli_check_options("submit", plan)) != EXIT_OK)
                return e;
        /* The daemon refuses names with control characters, which root's queue would print. */
        if (!text_is_clean(spec_arg)) {
                _cleanup_free_ char *shown = text_shown(spec_arg);
                cli_error("submit",
                          "the spec's path '%s' holds control characters or is not UTF-8: rename it",
                          shown ? shown : "?");
                return EXIT_SPEC;
        }
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd))) {
                cli_error("submit", "cannot determine the current directory: %m");
                return EXIT_ENVIRONMENT;
        }
        if (!text_is_clean(cwd)) {
                _cleanup_free_ char *shown = text_shown(cwd);
                cli_error("submit", "the current directory '%s' holds control characters or is not UTF-8",
                          shown ? shown : "?");
                return EXIT_ENVIRONMENT;
        }
        json_t *env = json_array();
        for (char **v = environ; *v; v++)
                json_array_append_new(env, json_string(*v));

        _cleanup_(client_done) Client c = { .command = "submit" };
        if ((e = client_connect(&c, socket_path)) != EXIT_OK) {
                json_decref(env);
                return e;
        }
        mode_t mask = umask(0);
        umask(mask);
        json_t *reply =
                client_call(&c, "io.alloclab.Submit",
                            json_pack("{s:s, s:s, s:s, s:o, s:I}", "spec_path", spec_arg, "spec",
                                      spec->source, "cwd", cwd, "env", env, "umask", (json_int_t) mask),
                            CLIENT_TIMEOUT_MS);
        if (!reply)
                return EXIT_ENVIRONMENT;
        const char *error = json_string_value(json_object_get(reply, "error"));
        if (error && strcmp(error, "io.alloclab.SpecInvalid") == 0) {
                size_t i;
                json_t *line;
                json_array_foreach(json_object_get(json_object_get(reply, "parameters"), "diagnostics"), i,
                                   line) fprintf(stderr, "%s\n", json_string_value(line));
                json_decref(reply);
                return EXIT_SPEC;
        }
        if ((e = reply_failed("submit", reply)) != EXIT_OK) {
                json_decref(reply);
                return e;
        }
        json_int_t job = json_integer_value(json_object_get(json_object_get(reply, "parameters"), "job"));
        json_decref(reply);
        if (!wait) {
                printf("job %lld queued\n", (long long) job);
                return EXIT_OK;
        }
        fprintf(stderr, "job %lld queued; waiting\n", (long long) job);
        /* A progress line from a second connection while the first waits (on a terminal). */
        _cleanup_(client_done) Client watcher = { .command = "submit", .fd = -1 };
        bool progress = isatty(STDERR_FILENO) && client_connect(&watcher, socket_path) == EXIT_OK;
        reply = client_send(&c, "io.alloclab.Wait", json_pack("{s:I}", "job", job)) < 0
                        ? NULL
                        : client_receive(&c, -1, 1000, progress ? show_progress : NULL, &watcher);
        if (progress)
                output_raw(stderr, "\r\033[K");
        if (!reply || (e = reply_failed("submit", reply)) != EXIT_OK) {
                json_decref(reply);
                return reply ? e : EXIT_ENVIRONMENT;
        }
        json_t *p = json_object_get(reply, "parameters");
        const char *status = json_string_value(json_object_get(p, "status"));
        const char *message = json_string_value(json_object_get(p, "message"));
        json_int_t run = json_integer_value(json_object_get(p, "run_id"));
        fprintf(stderr, "job %lld %s%s%s\n", (long long) job, status ? status : "?", message ? ": " : "",
                message ? message : "");
        bool ended_early = !status || strcmp(status, "canceled") == 0 || strcmp(status, "interrupted") == 0;
        json_t *failures = json_object_get(p, "failures"), *excluded = json_object_get(p, "excluded");
        int64_t n_failures = json_is_integer(failures) ? json_integer_value(failures) : -1;
        int64_t n_excluded = json_is_integer(excluded) ? json_integer_value(excluded) : -1;
        char final[32];
        snprintf(final, sizeof(final), "%s", status ? status : "?");
        json_decref(reply);
        json_t *st = client_call(&c, "io.alloclab.Status", json_object(), CLIENT_TIMEOUT_MS);
        const char *db =
                st ? json_string_value(json_object_get(json_object_get(st, "parameters"), "database"))
                   : NULL;
        e = run > 0 && db ? print_run(db, run, final, n_failures, n_excluded)
                          : job_exit(final, n_failures, n_excluded);
        json_decref(st);
        return ended_early ? EXIT_INTERRUPTED : e;
}

/* status, queue and schedules: one call to the daemon, printed for people by print(), or with
 * --format json as the reply's parameters (their fields: docs/protocol.md). */
static int query_daemon(const char *command, const char *usage, const char *method, int argc, char **argv,
                        void (*print)(json_t *parameters, const Client *c)) {
        if (cli_wants_help(argc, argv, usage))
                return EXIT_OK;
        const char *socket_path = NULL;
        OutputFormat format = FORMAT_TABLE;
        int e = parse_socket_option(command, argc, argv, "", NULL, &socket_path, NULL, &format);
        if (e != EXIT_OK)
                return e;
        if (optind != argc) {
                cli_error(command, "takes no arguments (see alloclab %s --help)", command);
                return EXIT_USAGE;
        }
        _cleanup_(client_done) Client c = { .command = command };
        if ((e = client_connect(&c, socket_path)) != EXIT_OK)
                return e;
        json_auto_t *reply = client_call(&c, method, json_object(), CLIENT_TIMEOUT_MS);
        if (!reply)
                return EXIT_ENVIRONMENT;
        if ((e = reply_failed(command, reply)) != EXIT_OK)
                return e;
        json_t *parameters = json_object_get(reply, "parameters");
        if (format == FORMAT_JSON) {
                if (json_dumpf(parameters, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
                        return EXIT_ENVIRONMENT;
                fputc('\n', stdout);
        } else
                print(parameters, &c);
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_ENVIRONMENT;
}

static const char status_usage[] = "Usage: alloclab status [--socket PATH] [--format table|json]\n\nThe "
                                   "daemon's state: idle or the running "
                                   "job, and how many jobs are queued.\n";

static void print_status(json_t *p, const Client *c) {
        json_t *running = json_object_get(p, "running");
        printf("alloclabd %s at %s: %s", json_string_value(json_object_get(p, "version")), c->socket_path,
               json_string_value(json_object_get(p, "state")));
        if (json_is_object(running)) {
                /* Another user's job comes without its spec, run and submitter (docs/protocol.md). */
                const char *spec = json_string_value(json_object_get(running, "spec_path")),
                           *submitter = json_string_value(json_object_get(running, "submitter"));
                json_int_t run = json_integer_value(json_object_get(running, "run_id"));
                printf(" job %lld", (long long) json_integer_value(json_object_get(running, "id")));
                if (spec && spec[0] == '(')
                        printf(" %s", spec);
                else {
                        printf(" (%s", spec ? spec : "?");
                        if (run > 0)
                                printf(", run %lld", (long long) run);
                        if (submitter && strcmp(submitter, "-") != 0)
                                printf(", submitted by %s", submitter);
                        fputc(')', stdout);
                }
        }
        printf("; %lld queued; database %s\n", (long long) json_integer_value(json_object_get(p, "queued")),
               json_string_value(json_object_get(p, "database")));
        const char *progress = json_string_value(json_object_get(p, "progress"));
        if (progress && *progress)
                printf("%s\n", progress);
}

int cmd_status(int argc, char **argv) {
        return query_daemon("status", status_usage, "io.alloclab.Status", argc, argv, print_status);
}

static const char queue_usage[] =
        "Usage: alloclab queue [--socket PATH] [--format table|json]\n\nThe daemon's "
        "jobs, 50 at most: queued and running ones first, then the latest ended ones, newest first.\n";

static void print_queue(json_t *p, const Client *c) {
        (void) c;
        printf("%-6s %-12s %-6s %-10s %-25s %s\n", "JOB", "STATUS", "RUN", "USER", "SUBMITTED", "SPEC");
        size_t i;
        json_t *j;
        json_array_foreach(json_object_get(p, "jobs"), i, j) {
                const char *user = json_string_value(json_object_get(j, "submitter"));
                char run[24] = "-"; /* none yet, or another user's */
                json_int_t run_id = json_integer_value(json_object_get(j, "run_id"));
                if (run_id > 0)
                        snprintf(run, sizeof(run), "%lld", (long long) run_id);
                printf("%-6lld %-12s %-6s %-10s %-25s %s\n",
                       (long long) json_integer_value(json_object_get(j, "id")),
                       json_string_value(json_object_get(j, "status")), run, user ? user : "?",
                       json_string_value(json_object_get(j, "submitted_at")),
                       json_string_value(json_object_get(j, "spec_path")));
        }
}

int cmd_queue(int argc, char **argv) {
        return query_daemon("queue", queue_usage, "io.alloclab.Queue", argc, argv, print_queue);
}

static const char cancel_usage[] =
        "Usage: alloclab cancel JOB [--socket PATH]\n\nCancels a queued job, or stops a "
        "running one (its run is kept as interrupted).\n";

int cmd_cancel(int argc, char **argv) {
        if (cli_wants_help(argc, argv, cancel_usage))
                return EXIT_OK;
        const char *socket_path = NULL;
        int e = parse_socket_option("cancel", argc, argv, "", NULL, &socket_path, NULL, NULL);
        if (e != EXIT_OK)
                return e;
        unsigned long long job;
        if (optind + 1 != argc || cli_parse_uint(argv[optind], INT64_MAX, &job) < 0) {
                cli_error("cancel", "expected one JOB number");
                return EXIT_USAGE;
        }
        _cleanup_(client_done) Client c = { .command = "cancel" };
        if ((e = client_connect(&c, socket_path)) != EXIT_OK)
                return e;
        json_t *reply = client_call(&c, "io.alloclab.Cancel", json_pack("{s:I}", "job", (json_int_t) job),
                                    CLIENT_TIMEOUT_MS);
        if (!reply || (e = reply_failed("cancel", reply)) != EXIT_OK) {
                json_decref(reply);
                return reply ? e : EXIT_ENVIRONMENT;
        }
        json_decref(reply);
        printf("job %llu canceled\n", job);
        return EXIT_OK;
}

static const char schedules_usage[] =
        "Usage: alloclab schedules [--socket PATH] [--format table|json]\n\nThe daemon's scheduled specs: "
        "experiment, schedule, next firing, spec file.\n";

static void print_schedules(json_t *p, const Client *c) {
        (void) c;
        printf("%-24s %-20s %-26s %s\n", "EXPERIMENT", "SCHEDULE", "NEXT", "SPEC");
        size_t i;
        json_t *s;
        json_array_foreach(json_object_get(p, "schedules"), i, s) {
                const char *next = json_string_value(json_object_get(s, "next"));
                printf("%-24s %-20s %-26s %s\n", json_string_value(json_object_get(s, "experiment")),
                       json_string_value(json_object_get(s, "schedule")), next ? next : "never",
                       json_string_value(json_object_get(s, "spec_path")));
        }
}

int cmd_schedules(int argc, char **argv) {
        return query_daemon("schedules", schedules_usage, "io.alloclab.Schedules", argc, argv,
                            print_schedules);
}
