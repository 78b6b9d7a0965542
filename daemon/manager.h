/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "db/store.h"

/*
 * The job queue's life: starts the oldest queued job when nothing runs, hands it to a worker,
 * learns when it ended, recovers what a previous daemon left running, stops on request, and
 * publishes STATUS=. It knows nothing of the socket or the schedules: what it tells others goes
 * through ManagerEvents, which alloclabd.c wires up.
 */

typedef struct Manager Manager;

typedef struct ManagerEvents {
        void *userdata;
        /* A job ended (also one that failed to start): its waiters may be answered. */
        void (*job_finished)(void *userdata, int64_t job_id);
        /* The next scheduled firing for STATUS=, or (time_t) -1; may be NULL. */
        time_t (*next_scheduled)(void *userdata, const char **ret_experiment);
} ManagerEvents;

/* Starts the oldest queued job when nothing runs, once submissions have settled: preparing a
 * job (its files found and hashed, its run recorded) takes tens of milliseconds, which must not
 * stall the answers to a burst of submissions. The job starts when no request to start came for
 * START_SETTLE_USEC, and at the latest START_MAX_DELAY_USEC after the first. */
#define START_SETTLE_USEC    (20ULL * 1000)
#define START_MAX_DELAY_USEC (1000ULL * 1000)
/* A stopping daemon SIGKILLs the runner if it has not stopped by then. */
#define STOP_TIMEOUT_USEC    (8ULL * 1000000)

/* The store, the probe path and the machine name (the daemon's machine:, NULL: the host name)
 * are borrowed. Returns 0 or -errno. */
int manager_new(sd_event *event, Store *store, const char *probe_path, const char *machine,
                const ManagerEvents *events, Manager **ret);
Manager *manager_free(Manager *m);

/* Jobs the previous daemon left running are interrupted; those whose spec says resume: true
 * are queued again to continue their run. Logged, never fatal. */
void manager_recover(Manager *m);

/* Asks for the next queued job to start (see START_SETTLE_USEC). */
void manager_start_soon(Manager *m);

/* No new jobs; the running one is canceled as interrupted (killed after STOP_TIMEOUT_USEC), and
 * the event loop exits once it has ended, or at once when nothing runs. */
void manager_stop(Manager *m);
bool manager_stopping(const Manager *m);

/* Holds the queue (no job starts while held: the site is being published, which would share
 * the machine with a measurement), or releases it, starting the next job soon. */
void manager_hold(Manager *m, bool hold);

/* The running job's id, or 0. */
int64_t manager_running_job(const Manager *m);

/* Cancels the running job when it is job_id. Returns 0, or -ESRCH when it is not running. */
int manager_cancel(Manager *m, int64_t job_id);

/* Publishes STATUS= from the state (idle, the running job and its progress, the queue length,
 * the next scheduled firing); progress NULL keeps the running job's last. */
void manager_update_status(Manager *m, const char *progress);

/* The STATUS= text last published. */
const char *manager_status(const Manager *m);
