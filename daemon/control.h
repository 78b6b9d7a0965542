/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "daemon/manager.h"
#include "daemon/scheduler.h"
#include "db/store.h"
#include "util/protocol.h"

/*
 * The control socket: varlink-style JSON objects terminated by NUL over a Unix stream socket.
 * Methods io.alloclab.{Ping,Submit,Status,Queue,Cancel,Wait}; see docs/protocol.md.
 */

#define CONTROL_MAX_MESSAGE        PROTOCOL_MAX_REQUEST /* a larger request closes the connection */
#define CONTROL_INITIAL_INPUT      (16 * 1024)          /* a connection's input buffer to begin with */
/* Connections read and served at once; past this, a new one is parked (its fd kept, nothing read)
 * until one of them closes, goes idle, or (for another user's) stops sending whole requests. */
#define CONTROL_MAX_CONNECTIONS    64
/* Past this, a newcomer takes the place of the newest parked connection of the user who holds
 * the most of them, or is closed when that is its own user. With the table's and the daemon's
 * own, the descriptors stay below the usual RLIMIT_NOFILE of 1024. */
#define CONTROL_MAX_PARKED         768
/* A connection without a whole request for this long may give its slot to another user's: one
 * that has just connected is about to send its request, one that trickles bytes never does. */
#define CONTROL_STALE_USEC         (100ULL * 1000)
#define CONTROL_ACCEPT_BATCH       16                /* connections accepted per turn of the loop */
#define CONTROL_DEFAULT_IDLE_USEC  (30ULL * 1000000) /* silence after which a connection is closed */
/* When every connection slot is taken, one that has sent nothing for this long is closed to
 * give its slot to the connection parked longest. */
#define CONTROL_EVICT_AFTER_USEC   (500ULL * 1000)
/* Replies not yet taken by a client: past this, its further requests wait unread until it reads
 * (and the idle timer closes a client that never does). One reply is at most CONTROL_MAX_REPLY. */
#define CONTROL_MAX_PENDING_OUTPUT (1024 * 1024)
#define CONTROL_MAX_REPLY          (1024 * 1024)
#define CONTROL_MAX_SPEC_PATH      4096 /* PATH_MAX */
/* Submissions are planned (as alloclab check) in the loop: after this long in one turn the rest
 * wait for the next, so that a burst of large specs does not keep others unanswered. */
#define CONTROL_PLAN_BUDGET_USEC   (50ULL * 1000)

typedef struct Control Control;

/* What the socket serves from (borrowed; they outlive the Control). */
typedef struct ControlContext {
        sd_event *event;
        Store *store;
        Manager *manager;
        const Scheduler *scheduler;
        const char *db_path;    /* for io.alloclab.Status */
        const char *probe_path; /* for checking a submission as its job will run */
        uint64_t idle_timeout_usec;
} ControlContext;

/* Serves listen_fd (taking ownership). Returns 0 or -errno. */
int control_new(const ControlContext *ctx, int listen_fd, Control **ret);
Control *control_free(Control *c);

/* Answers the connections waiting for job_id to end (io.alloclab.Wait). */
void control_job_finished(Control *c, int64_t job_id);

/* Creates, binds and listens on path (its directory is created; a stale socket replaced).
 * Returns the fd, -EADDRINUSE when a process answers on path (its pid in *ret_peer, 0 when not
 * known), or -errno. */
int control_listen(const char *path, mode_t mode, pid_t *ret_peer);
