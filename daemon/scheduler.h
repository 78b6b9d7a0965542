/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "daemon/manager.h"
#include "db/store.h"

/*
 * Specs with `schedule:` in the specs directory, queued when due (see scheduler.c).
 */

typedef struct Scheduler Scheduler;

/* Loads dir (a missing directory schedules nothing) and arms the timer; due specs are queued in
 * store and started through manager. The arguments are borrowed. */
int scheduler_new(sd_event *event, Store *store, Manager *manager, const char *dir, Scheduler **ret);

/* Re-reads the directory (SIGHUP). */
int scheduler_reload(Scheduler *s);

Scheduler *scheduler_free(Scheduler *s);

/* [{spec_path, experiment, schedule, next, uid}] for io.alloclab.Schedules. */
json_t *scheduler_list(const Scheduler *s);

/* The earliest next firing and its experiment, or (time_t) -1. */
time_t scheduler_next(const Scheduler *s, const char **ret_experiment);
