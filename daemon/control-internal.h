/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "configs/spec.h"
#include "daemon/control.h"
#include "db/jobs.h"
#include "runner/plan.h"

/* What the control socket's transport (control.c) and its methods (control-methods.c) share,
 * and nothing else includes. */

typedef struct Connection Connection;

/* What the transport calls of the methods (control-methods.c, which is above it: the calls go
 * one way): the reply to method `name` with params (NULL for none, the reply NULL when it comes
 * later), and the turn of the loop that checks and stores the pending submissions
 * (Control.commit). */
typedef struct ControlMethods {
        json_t *(*call)(Connection *c, const char *name, json_t *params);
        int (*on_submissions)(sd_event_source *s, void *userdata);
} ControlMethods;

typedef struct PendingSubmission {
        Connection *connection; /* NULL once it closed: stored, not answered */
        Job job;
        Spec *spec;
        /* filled in by plan_submissions() */
        int result; /* 0, or -errno: refused with message (if set) */
        char *message;
} PendingSubmission;

struct Connection {
        Control *control;
        Connection *next;
        int fd;
        struct ucred peer;
        sd_event_source *io;
        sd_event_source *idle;
        char *in; /* grows by doubling up to CONTROL_MAX_MESSAGE: most requests are small */
        size_t in_size, in_allocated;
        char *out;
        size_t out_size, out_sent;
        int64_t waiting_for;   /* job id of a pending io.alloclab.Wait, or 0 */
        bool submitting;       /* its Submit waits for the next commit of submissions */
        uint64_t last_active;  /* CLOCK_MONOTONIC usec of the last byte read or accepted */
        uint64_t last_request; /* ... of the last whole request, or of the accept */
        bool closing;          /* close once the output is flushed */
        bool parked;           /* accepted while the table was full: not read until it has a slot */
};

struct Control {
        ControlContext ctx;
        const ControlMethods *methods;
        int fd;
        sd_event_source *accept;
        sd_event_source *accept_retry; /* while connections are parked: tries to give them slots */
        sd_event_source *unpark_soon;  /* a slot freed: the connection parked longest takes it */
        /* Parsed submissions not yet checked and stored: done together when the loop has
         * nothing else to do (one identity switch per submitter, one sync for a burst), and only
         * then answered. */
        PendingSubmission pending[CONTROL_MAX_CONNECTIONS];
        size_t n_pending;
        sd_event_source *commit;
        Connection *connections; /* the table: read and served */
        unsigned n_connections;
        Connection *parked, *parked_last; /* first come, first given a slot */
        unsigned n_parked;
        char scratch[CONTROL_INITIAL_INPUT]; /* see read_whole_requests() */
};

/* The transport's: an error reply; a reply queued on c (sent as far as the socket takes it);
 * c's buffered requests served; c's idle timer armed again. */
json_t *control_error_reply(const char *error, json_t *parameters);
void control_queue_reply(Connection *c, json_t *reply);
void control_process_input(Connection *c);
int control_arm_idle(Connection *c);

/* control_new() of the transport alone, serving methods. */
int control_transport_new(const ControlContext *ctx, const ControlMethods *methods, int listen_fd,
                          Control **ret);
