/* SPDX-License-Identifier: MIT */
/*
 * Control connections. Each connection has an input buffer (at most CONTROL_MAX_MESSAGE), an
 * output buffer, an idle timer, and the peer's credentials from SO_PEERCRED. Requests are
 * handled in order as whole NUL-terminated messages; a request that is not a JSON object with a
 * "method" string gets an error reply, a too large one closes the connection. Nothing a client
 * sends can block the loop: reads and writes are non-blocking and bounded.
 */
#include <assert.h>
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "configs/spec.h"
#include "daemon/control-internal.h"
#include "daemon/control.h"
#include "daemon/identity.h"
#include "daemon/log.h"
#include "db/jobs.h"
#include "runner/cgroup.h"
#include "runner/plan.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "util/text.h"
#include "util/clock.h"

static void connection_free(Connection *c) {
        Control *ctl = c->control;
        for (size_t i = 0; i < ctl->n_pending; i++)
                if (ctl->pending[i].connection == c)
                        ctl->pending[i].connection = NULL;
        Connection **list = c->parked ? &ctl->parked : &ctl->connections, *before = NULL;
        for (Connection **p = list; *p; before = *p, p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        if (c->parked) {
                ctl->n_parked--;
                if (ctl->parked_last == c)
                        ctl->parked_last = before;
        } else
                ctl->n_connections--;
        (void) sd_event_source_set_enabled(ctl->accept, SD_EVENT_ON); /* paused for want of fds */
        /* A slot freed: the connection parked longest takes it, once this turn of the loop is done
         * (a connection is freed in the middle of much). */
        if (!c->parked && ctl->parked)
                (void) sd_event_source_set_enabled(ctl->unpark_soon, SD_EVENT_ONESHOT);
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->idle);
        safe_close(c->fd);
        free(c->in);
        free(c->out);
        free(c);
}

Control *control_free(Control *c) {
        if (!c)
                return NULL;
        while (c->parked)
                connection_free(c->parked);
        while (c->connections)
                connection_free(c->connections);
        sd_event_source_disable_unref(c->accept);
        sd_event_source_disable_unref(c->accept_retry);
        sd_event_source_disable_unref(c->unpark_soon);
        sd_event_source_disable_unref(c->commit);
        for (size_t i = 0; i < c->n_pending; i++) {
                job_done(&c->pending[i].job);
                spec_free(c->pending[i].spec);
        }
        safe_close(c->fd);
        free(c);
        return NULL;
}

int control_arm_idle(Connection *c) {
        uint64_t timeout = c->control->ctx.idle_timeout_usec;
        /* A client waiting for its job is not idle. */
        bool busy = c->waiting_for || c->submitting;
        int r = sd_event_source_set_enabled(c->idle, busy ? SD_EVENT_OFF : SD_EVENT_ONESHOT);
        if (r >= 0 && !busy)
                r = sd_event_source_set_time_relative(c->idle, timeout);
        return r;
}

static size_t pending_output(const Connection *c) {
        return c->out_size - c->out_sent;
}

/* A client that does not read its replies is not read from either: its output stays bounded. */
static int update_events(Connection *c) {
        bool readable = !c->closing && pending_output(c) < CONTROL_MAX_PENDING_OUTPUT;
        uint32_t events = (pending_output(c) ? EPOLLOUT : 0) | (readable ? EPOLLIN : 0);
        return sd_event_source_set_io_events(c->io, events);
}

/* Sends what the socket takes of the pending output. Returns 0 or -errno of a broken
 * connection. */
static int send_output(Connection *c) {
        if (!pending_output(c))
                return 0;
        ssize_t n = send(c->fd, c->out + c->out_sent, pending_output(c), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        c->out_sent += (size_t) n;
        if (c->out_sent == c->out_size)
                c->out_sent = c->out_size = 0;
        return 0;
}

void control_queue_reply(Connection *c, json_t *reply) {
        char *text = json_dumps(reply, JSON_COMPACT);
        json_decref(reply);
        if (!text) {
                c->closing = true;
                return;
        }
        size_t n = strlen(text) + 1; /* with the NUL terminator */
        if (c->out_sent > 0) {       /* what was sent makes room: the buffer holds only what is pending */
                memmove(c->out, c->out + c->out_sent, pending_output(c));
                c->out_size -= c->out_sent;
                c->out_sent = 0;
        }
        char *out = realloc(c->out, c->out_size + n);
        if (!out) {
                free(text);
                c->closing = true;
                return;
        }
        memcpy(out + c->out_size, text, n);
        c->out = out;
        c->out_size += n;
        free(text);
        /* Most replies fit the socket's buffer at once: no turn of the loop waits for EPOLLOUT. */
        if (send_output(c) < 0) {
                c->out_size = c->out_sent = 0;
                c->closing = true;
        }
        (void) update_events(c);
}

json_t *control_error_reply(const char *error, json_t *parameters) {
        return json_pack("{s:s, s:o}", "error", error, "parameters",
                         parameters ? parameters : json_object());
}

static void handle_request(Connection *c, const char *text) {
        (void) sd_event_now(c->control->ctx.event, CLOCK_MONOTONIC, &c->last_request);
        json_error_t err;
        json_t *request = json_loads(text, 0, &err);
        const char *name = json_string_value(json_object_get(request, "method"));
        json_t *reply;
        if (!json_is_object(request) || !name)
                reply = control_error_reply(
                        "io.alloclab.InvalidRequest",
                        json_pack("{s:s}", "message", request ? "expected {\"method\": ...}" : err.text));
        else
                reply = c->control->methods->call(c, name, json_object_get(request, "parameters"));
        json_decref(request);
        if (reply)
                control_queue_reply(c, reply);
}

/* Handles the complete messages at the start of buf, as long as the connection may go on.
 * Returns the number of bytes taken. */
static size_t serve(Connection *c, char *buf, size_t size) {
        size_t start = 0;
        for (;;) {
                char *nul = start < size ? memchr(buf + start, 0, size - start) : NULL;
                if (!nul || c->waiting_for || c->submitting ||
                    pending_output(c) >= CONTROL_MAX_PENDING_OUTPUT)
                        return start;
                handle_request(c, buf + start);
                start = (size_t) (nul - buf) + 1;
        }
}

/* Takes every complete message out of the input buffer. */
void control_process_input(Connection *c) {
        if (c->in_size == 0)
                return; /* nothing buffered, maybe no buffer at all */
        size_t start = serve(c, c->in, c->in_size);
        memmove(c->in, c->in + start, c->in_size - start);
        c->in_size -= start;
}

/* Makes room for the next read: a full buffer doubles, up to CONTROL_MAX_MESSAGE. */
static int grow_input(Connection *c) {
        if (c->in_size < c->in_allocated)
                return 0;
        size_t size = c->in_allocated ? 2 * c->in_allocated : CONTROL_INITIAL_INPUT;
        if (size > CONTROL_MAX_MESSAGE)
                size = CONTROL_MAX_MESSAGE;
        char *in = realloc(c->in, size);
        if (!in)
                return -ENOMEM;
        c->in = in;
        c->in_allocated = size;
        return 0;
}

/* With nothing buffered: a request usually arrives whole, so it is read into the control's
 * scratch buffer and served from there; only what is left over (a request cut short, or one
 * that must wait) is copied into the connection's own buffer. A burst of submitters costs no
 * input buffer each. Returns 0, or -errno when the connection is to be closed (end of file). */
static int read_whole_requests(Connection *c) {
        Control *ctl = c->control;
        ssize_t n = read(c->fd, ctl->scratch, sizeof(ctl->scratch));
        if (n == 0)
                return -ECONNRESET;
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        (void) sd_event_now(ctl->ctx.event, CLOCK_MONOTONIC, &c->last_active);
        size_t used = serve(c, ctl->scratch, (size_t) n), left = (size_t) n - used;
        if (left > 0) {
                if (c->in_allocated < left) {
                        char *in = realloc(c->in, CONTROL_INITIAL_INPUT);
                        if (!in)
                                return -ENOMEM;
                        c->in = in;
                        c->in_allocated = CONTROL_INITIAL_INPUT;
                }
                memcpy(c->in, ctl->scratch + used, left);
                c->in_size = left;
        }
        (void) control_arm_idle(c);
        return 0;
}

static int on_connection(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Connection *c = userdata;
        (void) s;
        if (c->parked) { /* only a hang-up is watched: a client that gave up frees its place */
                if (revents & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
                        connection_free(c);
                return 0;
        }
        if (revents & EPOLLIN) {
                if (c->in_size >= CONTROL_MAX_MESSAGE) {
                        control_queue_reply(
                                c, control_error_reply("io.alloclab.MessageTooLarge",
                                                       json_pack("{s:i, s:s}", "limit", CONTROL_MAX_MESSAGE,
                                                                 "message", "a request is at most 1 MiB")));
                        c->closing = true;
                } else if (c->in_size == 0) {
                        if (read_whole_requests(c) < 0) {
                                connection_free(c);
                                return 0;
                        }
                } else if (grow_input(c) < 0) {
                        connection_free(c);
                        return 0;
                } else {
                        ssize_t n = read(fd, c->in + c->in_size, c->in_allocated - c->in_size);
                        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                                connection_free(c);
                                return 0;
                        }
                        if (n > 0) {
                                (void) sd_event_now(c->control->ctx.event, CLOCK_MONOTONIC, &c->last_active);
                                c->in_size += (size_t) n;
                                control_process_input(c);
                                (void) control_arm_idle(c);
                        }
                }
        }
        if (revents & (EPOLLOUT | EPOLLHUP | EPOLLERR)) { /* a hung-up peer fails the send */
                if (send_output(c) < 0) {
                        connection_free(c);
                        return 0;
                }
                /* Room again: the requests that waited for it. */
                if (pending_output(c) < CONTROL_MAX_PENDING_OUTPUT && !c->closing)
                        control_process_input(c);
        }
        if (c->closing && c->out_size == 0) {
                connection_free(c);
                return 0;
        }
        (void) update_events(c);
        return 0;
}

static int on_idle(sd_event_source *s, uint64_t usec, void *userdata) {
        Connection *c = userdata;
        (void) s;
        (void) usec;
        connection_free(c);
        return 0;
}

/* Whether a connection may be closed to make room: it has been quiet for
 * CONTROL_EVICT_AFTER_USEC, waits for no job, has no reply on its way and no request bytes that
 * the kernel holds for it (sent, but not read yet). */
static bool is_idle(const Connection *c, uint64_t now) {
        int unread = 0;
        return now >= c->last_active + CONTROL_EVICT_AFTER_USEC && !c->waiting_for && !c->submitting &&
               pending_output(c) == 0 && ioctl(c->fd, FIONREAD, &unread) == 0 && unread == 0;
}

/* Who holds how many connections of a list: the table, or the parked ones. */
typedef struct Tally {
        uid_t uid[CONTROL_MAX_PARKED];
        unsigned held[CONTROL_MAX_PARKED];
        size_t n;
} Tally;

_Static_assert(CONTROL_MAX_PARKED >= CONTROL_MAX_CONNECTIONS, "a Tally holds the table's users too");

static void tally_list(const Connection *list, Tally *t) {
        t->n = 0;
        for (const Connection *c = list; c; c = c->next) {
                size_t i = 0;
                while (i < t->n && t->uid[i] != c->peer.uid)
                        i++;
                if (i == t->n) {
                        if (t->n == ELEMENTSOF(t->uid))
                                continue;
                        t->uid[t->n] = c->peer.uid;
                        t->held[t->n++] = 0;
                }
                t->held[i]++;
        }
}

static unsigned tally_of(const Tally *t, uid_t uid) {
        for (size_t i = 0; i < t->n; i++)
                if (t->uid[i] == uid)
                        return t->held[i];
        return 0;
}

/* The user who holds the most, and how many in *ret_most; uid when nobody holds any. */
static uid_t tally_busiest(const Tally *t, uid_t uid, unsigned *ret_most) {
        unsigned most = 0;
        uid_t busiest = uid;
        for (size_t i = 0; i < t->n; i++)
                if (t->held[i] > most) {
                        most = t->held[i];
                        busiest = t->uid[i];
                }
        *ret_most = most;
        return busiest;
}

/* Whether another user than uid's holds more of list's connections than uid's user: the one who
 * holds the most, in *ret_busiest, with list's tally and the two counts. The rule both the table
 * and the parked list close connections by: only a busier user's, never one's own. */
static bool busier_user(const Connection *list, uid_t uid, Tally *ret_tally, uid_t *ret_busiest,
                        unsigned *ret_most, unsigned *ret_mine) {
        tally_list(list, ret_tally);
        *ret_busiest = tally_busiest(ret_tally, uid, ret_most);
        *ret_mine = tally_of(ret_tally, uid);
        return *ret_busiest != uid && *ret_mine < *ret_most;
}

/* Whether a connection may give its slot to another user's: it has sent no whole request for
 * CONTROL_STALE_USEC (a client trickling a request byte by byte never does; one that has just
 * connected is about to), and is not submitting. */
static bool is_stale(const Connection *c, uint64_t now) {
        return !c->submitting && now >= c->last_request + CONTROL_STALE_USEC;
}

/* The connection to close for one of uid when the table is full: the idle one quiet longest
 * (unless `fifo`: then idle slots go to the connections parked longest, by unpark()); else, when
 * uid holds fewer connections than another user, that user's connection whose last whole
 * request is oldest, if it is stale, or if that user holds more than a fair share of the table
 * (the table divided among its users and uid's): users who keep every slot busy with requests,
 * alone or together, must not lock the others out. Never one that is submitting. NULL: none may
 * be closed. */
static Connection *victim_for(const Control *ctl, uid_t uid, bool fifo) {
        uint64_t now = 0;
        (void) sd_event_now(ctl->ctx.event, CLOCK_MONOTONIC, &now);
        Connection *idle = NULL;
        for (Connection *c = ctl->connections; c && !fifo; c = c->next)
                if (is_idle(c, now) && (!idle || c->last_active < idle->last_active))
                        idle = c;
        if (idle)
                return idle;
        Tally t;
        uid_t busiest;
        unsigned most, mine;
        if (!busier_user(ctl->connections, uid, &t, &busiest, &most, &mine))
                return NULL;
        unsigned share = CONTROL_MAX_CONNECTIONS / (unsigned) (t.n + (mine == 0));
        Connection *oldest = NULL;
        for (Connection *c = ctl->connections; c; c = c->next)
                if (c->peer.uid == busiest && !c->submitting &&
                    (!oldest || c->last_request < oldest->last_request))
                        oldest = c;
        return oldest && (is_stale(oldest, now) || most > share) ? oldest : NULL;
}

/* Moves c from the parked list into the table, where it is read and served, with an idle
 * timer; serves what it has sent already. */
static void activate(Connection *c) {
        Control *ctl = c->control;
        Connection **p = &ctl->parked, *before = NULL;
        while (*p != c) {
                before = *p;
                p = &(*p)->next;
        }
        *p = c->next;
        if (ctl->parked_last == c)
                ctl->parked_last = before;
        ctl->n_parked--;
        c->parked = false;
        c->next = ctl->connections;
        ctl->connections = c;
        ctl->n_connections++;
        (void) sd_event_now(ctl->ctx.event, CLOCK_MONOTONIC, &c->last_active);
        c->last_request = c->last_active;
        if (sd_event_source_set_io_events(c->io, EPOLLIN) < 0 ||
            sd_event_add_time_relative(ctl->ctx.event, &c->idle, CLOCK_MONOTONIC, ctl->ctx.idle_timeout_usec,
                                       0, on_idle, c) < 0) {
                connection_free(c);
                return;
        }
        /* A client sends its request right after connecting: read it now rather than after
         * another turn of the loop (a no-op when nothing is there yet). */
        (void) on_connection(c->io, c->fd, EPOLLIN, c);
}

/* Whether parked connection c gets a slot now, closing a victim_for() it if need be. */
static bool give_slot(Control *ctl, Connection *c, bool fifo) {
        if (ctl->n_connections >= CONTROL_MAX_CONNECTIONS) {
                Connection *victim = victim_for(ctl, c->peer.uid, fifo);
                if (!victim)
                        return false;
                connection_free(victim);
        }
        activate(c);
        return true;
}

/* Gives the connection parked longest the free slots and those that idle connections make, and
 * every parked connection the slots that other users' stale or excess connections make
 * (victim_for()): one user's parked crowd must not keep another user's connection behind it.
 * While some stay parked, or accepting is paused, looks again in CONTROL_EVICT_AFTER_USEC. */
static int unpark(Control *ctl) {
        while (ctl->parked && give_slot(ctl, ctl->parked, false))
                ;
        for (Connection *c = ctl->parked, *next; c; c = next) {
                next = c->next;
                (void) give_slot(ctl, c, true);
        }
        bool paused = sd_event_source_get_enabled(ctl->accept, NULL) <= 0;
        if (!ctl->parked && !paused)
                return sd_event_source_set_enabled(ctl->accept_retry, SD_EVENT_OFF);
        if (sd_event_source_get_enabled(ctl->accept_retry, NULL) > 0)
                return 0;
        int r = sd_event_source_set_time_relative(ctl->accept_retry, CONTROL_EVICT_AFTER_USEC);
        return r < 0 ? r : sd_event_source_set_enabled(ctl->accept_retry, SD_EVENT_ONESHOT);
}

static int on_unpark(sd_event_source *s, void *userdata) {
        (void) s;
        return unpark(userdata);
}

/* Also where accepting resumes after a pause for want of descriptors. */
static int on_unpark_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Control *ctl = userdata;
        (void) s;
        (void) usec;
        (void) sd_event_source_set_enabled(ctl->accept, SD_EVENT_ON);
        return unpark(ctl);
}

/* With CONTROL_MAX_PARKED parked, the parked connection to close for a newcomer of uid: the
 * newest of the user who holds the most of them, unless that is uid's user (or uid holds as
 * many): NULL, the newcomer goes. One user's crowd of connections, however large, then keeps
 * nobody else waiting in the listen backlog (it did past 64 + 768). */
static Connection *parked_victim(const Control *ctl, uid_t uid) {
        Tally t;
        uid_t busiest;
        unsigned most, mine;
        if (!busier_user(ctl->parked, uid, &t, &busiest, &most, &mine))
                return NULL;
        Connection *newest = NULL;
        for (Connection *c = ctl->parked; c; c = c->next)
                if (c->peer.uid == busiest && !c->submitting)
                        newest = c;
        return newest;
}

/* Accepts one connection. It is parked (an fd and a little memory, watched only for a hang-up)
 * behind those parked before it, and gets a slot at once when none are, or when it takes the
 * slot of a stale connection of a user who holds more than its user (victim_for()). With
 * CONTROL_MAX_PARKED parked, it takes the place of a parked_victim(), or is closed. Returns
 * false when there was none to accept, or accepting pauses: the process is out of descriptors
 * (the next ones wait in the listen backlog). */
static bool accept_one(Control *ctl, int fd) {
        _cleanup_close_ int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                        (void) sd_event_source_set_enabled(ctl->accept, SD_EVENT_OFF);
                return false;
        }
        struct ucred peer = {};
        socklen_t len = sizeof(peer);
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &peer, &len) < 0)
                return true;
        if (ctl->n_parked >= CONTROL_MAX_PARKED) {
                Connection *victim = parked_victim(ctl, peer.uid);
                if (!victim)
                        return true; /* closed: its user holds the most */
                connection_free(victim);
        }
        Connection *c = calloc(1, sizeof(Connection));
        if (!c)
                return true;
        *c = (Connection){ .control = ctl, .fd = TAKE_FD(cfd), .parked = true, .peer = peer };
        if (ctl->parked_last)
                ctl->parked_last->next = c;
        else
                ctl->parked = c;
        ctl->parked_last = c;
        ctl->n_parked++;
        if (sd_event_add_io(ctl->ctx.event, &c->io, c->fd, EPOLLRDHUP, on_connection, c) < 0) {
                connection_free(c);
                return true;
        }
        (void) give_slot(ctl, c, ctl->parked != c);
        return true;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Control *ctl = userdata;
        (void) s;
        (void) revents;
        /* A few per turn of the loop: a burst is accepted in fewer turns, and the connections
         * already open still get theirs. */
        for (unsigned k = 0; k < CONTROL_ACCEPT_BATCH && accept_one(ctl, fd); k++)
                ;
        return unpark(ctl);
}

int control_transport_new(const ControlContext *ctx, const ControlMethods *methods, int listen_fd,
                          Control **ret) {
        Control *c = calloc(1, sizeof(Control));
        if (!c) {
                safe_close(listen_fd);
                return -ENOMEM;
        }
        c->ctx = *ctx;
        c->methods = methods;
        c->fd = listen_fd;
        if (fcntl(listen_fd, F_SETFL, O_NONBLOCK) < 0) {
                control_free(c);
                return negative_errno();
        }
        int r = sd_event_add_io(ctx->event, &c->accept, listen_fd, EPOLLIN, on_accept, c);
        /* Submissions are stored when nothing else is pending: a burst shares one commit. */
        if (r >= 0 && (r = sd_event_add_defer(ctx->event, &c->commit, methods->on_submissions, c)) >= 0 &&
            (r = sd_event_source_set_priority(c->commit, SD_EVENT_PRIORITY_IDLE)) >= 0)
                r = sd_event_source_set_enabled(c->commit, SD_EVENT_OFF);
        if (r >= 0 && (r = sd_event_add_defer(ctx->event, &c->unpark_soon, on_unpark, c)) >= 0)
                r = sd_event_source_set_enabled(c->unpark_soon, SD_EVENT_OFF);
        if (r >= 0 && (r = sd_event_add_time_relative(ctx->event, &c->accept_retry, CLOCK_MONOTONIC,
                                                      CONTROL_EVICT_AFTER_USEC, 0, on_unpark_timer, c)) >= 0)
                r = sd_event_source_set_enabled(c->accept_retry, SD_EVENT_OFF);
        if (r < 0) {
                control_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

int control_listen(const char *path, mode_t mode, pid_t *ret_peer) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = 0;
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
        }
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        /* A socket left by a daemon that died is replaced; one a live daemon answers on is not. */
        _cleanup_close_ int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (probe >= 0 && connect(probe, (struct sockaddr *) &sa, sizeof(sa)) == 0) {
                struct ucred peer = {};
                socklen_t len = sizeof(peer);
                *ret_peer = getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 ? peer.pid : 0;
                return -EADDRINUSE;
        }
        (void) unlink(path);
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || chmod(path, mode) < 0 ||
            listen(fd, SOMAXCONN) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}
