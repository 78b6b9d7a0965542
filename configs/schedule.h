/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/*
 * When an experiment runs by itself: a 5-field cron expression in local time, or a fixed
 * interval. Parsing reports the column of the offending field; computing the next firing
 * handles daylight-saving changes (see schedule_next()).
 */

#define SCHEDULE_MIN_INTERVAL_S 1
#define SCHEDULE_MAX_INTERVAL_S (366LL * 24 * 3600)
#define SCHEDULE_SEARCH_DAYS    (5 * 366) /* "31 2 *" and the like never fire: stop looking */

typedef enum ScheduleKind {
        SCHEDULE_CRON,
        SCHEDULE_INTERVAL,
} ScheduleKind;

typedef struct Schedule {
        ScheduleKind kind;
        /* cron: allowed values as bit sets */
        uint64_t minutes;         /* bits 0..59 */
        uint32_t hours;           /* bits 0..23 */
        uint32_t days;            /* bits 1..31 */
        uint16_t months;          /* bits 1..12 */
        uint8_t weekdays;         /* bits 0..6, Sunday = 0 */
        bool days_restricted;     /* day-of-month field was not "*" */
        bool weekdays_restricted; /* day-of-week field was not "*" */
        /* interval */
        int64_t interval_s;
} Schedule;

typedef struct ScheduleError {
        unsigned offset; /* byte offset in the expression where the problem is */
        char message[128];
} ScheduleError;

/*
 * Parses "MIN HOUR DOM MON DOW" (each field "*", N, N-M, lists "a,b", steps "*" + "/S" or
 * "N-M/S", month and weekday names jan..dec and sun..sat, weekday 7 = Sunday), the shortcuts
 * @hourly @daily @weekly @monthly @yearly, or "every DURATION" ("every 6h", "every 90s").
 * Returns 0, or -EINVAL with *ret_error filled.
 */
int schedule_parse(const char *text, Schedule *ret, ScheduleError *ret_error);

/* An interval schedule of `seconds`. */
void schedule_interval(int64_t seconds, Schedule *ret);

/*
 * The first firing strictly after `after`, in *ret.
 *   cron: the earliest instant whose local wall-clock time matches. A wall-clock time that does
 *   not exist on that day (the hour skipped when clocks go forward) does not fire; one that
 *   occurs twice (clocks go back) fires once, at its first occurrence. Day-of-month and
 *   day-of-week, when both are restricted, match if either does (as cron does).
 *   interval: after + interval.
 * Returns 0, or -ENOENT when a cron expression never fires within SCHEDULE_SEARCH_DAYS.
 */
int schedule_next(const Schedule *s, time_t after, time_t *ret);
