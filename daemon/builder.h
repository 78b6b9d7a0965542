/* SPDX-License-Identifier: MIT */
#pragma once

#include <systemd/sd-event.h>

#include "configs/spec.h"
#include "db/jobs.h"
#include "runner/build.h"

/*
 * A job's builds from source (spec build:, runner/build.h), made before its plan by a process of
 * the daemon's: it becomes the submitter (git and the build never run as root), enters the
 * submitter's directory and umask, and resolves and builds each variant in a cgroup of its own
 * under the spec's limits, each command under the spec's timeout, into the submitter's build
 * cache. The daemon's loop goes on meanwhile; when the builder has exited, `done` gets one
 * BuildOutcome per variant of the spec (nothing for a variant that does not build).
 */

typedef struct Builder Builder;

/* outcomes: spec->n_variants of them, the callee's to free (build_outcome_done); NULL with error
 * < 0 (-ECANCELED: builder_cancel() stopped it) and message (or NULL) saying why. The builder
 * may be freed from here. */
typedef void (*BuilderDone)(void *userdata, BuildOutcome *outcomes, int error, const char *message);

/* Starts the builds of job's spec (both borrowed: they outlive the builder). Returns 0, or
 * -errno with *ret_message when the builder cannot start (a limit the cgroup cannot hold). */
int builder_start(sd_event *event, const Job *job, const Spec *spec, BuilderDone done, void *userdata,
                  Builder **ret, char **ret_message);

/* SIGTERM: the running command is killed and the builder ends (done gets -ECANCELED). */
void builder_cancel(Builder *b);
/* SIGKILL, at the daemon's last resort; its cgroup is emptied when it is freed. */
void builder_kill(Builder *b);

Builder *builder_free(Builder *b);
static inline void builder_freep(Builder **b) {
        builder_free(*b);
}
