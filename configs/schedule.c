/* SPDX-License-Identifier: MIT */
/*
 * Cron expressions as bit sets, and the next firing computed day by day in local time: for each
 * local date that matches the date fields, each matching (hour, minute) is turned into instants
 * with mktime() under both DST assumptions, and only instants whose localtime() gives back the
 * same wall-clock time count. That one rule makes skipped times never fire and repeated times
 * have two candidates, of which the first is the firing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "configs/schedule.h"
#include "util/units.h"

typedef struct FieldSpec {
        const char *name;
        int min, max;
        const char *const *names; /* optional symbolic values, index + names_base */
        int names_base;
} FieldSpec;

static const char *const month_names[] = { "jan", "feb", "mar", "apr", "may", "jun", "jul",
                                           "aug", "sep", "oct", "nov", "dec", NULL };
static const char *const weekday_names[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL };

static const FieldSpec fields[5] = {
        { "minute", 0, 59, NULL, 0 },
        { "hour", 0, 23, NULL, 0 },
        { "day-of-month", 1, 31, NULL, 0 },
        { "month", 1, 12, month_names, 1 },
        { "day-of-week", 0, 7, weekday_names, 0 }, /* 7 is Sunday too */
};

static int fail(ScheduleError *e, unsigned offset, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int fail(ScheduleError *e, unsigned offset, const char *fmt, ...) {
        if (e) {
                va_list ap;
                va_start(ap, fmt);
                e->offset = offset;
                vsnprintf(e->message, sizeof(e->message), fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

/* A number or a symbolic name at *p; advances *p. */
static int parse_value(const FieldSpec *f, const char **p, int *ret) {
        if (**p >= '0' && **p <= '9') {
                long v = 0;
                while (**p >= '0' && **p <= '9' && v < 1000)
                        v = v * 10 + (*(*p)++ - '0');
                *ret = (int) v;
                return 0;
        }
        for (int i = 0; f->names && f->names[i]; i++)
                if (strncasecmp(*p, f->names[i], 3) == 0) {
                        *p += 3;
                        *ret = i + f->names_base;
                        return 0;
                }
        return -EINVAL;
}

/* One field ("*", "1-5", "*\/15", "mon,wed", ...) of length len into a bit set. */
static int parse_field(const FieldSpec *f, const char *text, size_t len, unsigned offset, uint64_t *ret,
                       bool *ret_restricted, ScheduleError *e) {
        uint64_t bits = 0;
        const char *p = text, *end = text + len;
        *ret_restricted = !(len == 1 && text[0] == '*');
        while (p < end) {
                const char *item = p;
                int lo, hi, step = 1;
                if (*p == '*') {
                        lo = f->min;
                        hi = f->max == 7 ? 6 : f->max;
                        p++;
                } else {
                        if (parse_value(f, &p, &lo) < 0)
                                return fail(e, offset + (unsigned) (p - text),
                                            "%s field: expected a number%s", f->name,
                                            f->names ? " or a name" : "");
                        hi = lo;
                        if (p < end && *p == '-') {
                                p++;
                                if (parse_value(f, &p, &hi) < 0)
                                        return fail(e, offset + (unsigned) (p - text),
                                                    "%s field: expected the end of a range", f->name);
                        }
                }
                if (p < end && *p == '/') {
                        p++;
                        const char *s = p;
                        long v = 0;
                        while (p < end && *p >= '0' && *p <= '9' && v < 1000)
                                v = v * 10 + (*p++ - '0');
                        if (p == s || v < 1)
                                return fail(e, offset + (unsigned) (s - text),
                                            "%s field: expected a step of at least 1", f->name);
                        step = (int) v;
                }
                if (lo < f->min || hi > f->max || lo > hi)
                        return fail(e, offset + (unsigned) (item - text), "%s field: %.*s is outside %d-%d",
                                    f->name, (int) (p - item), item, f->min, f->max);
                for (int v = lo; v <= hi; v += step)
                        bits |= UINT64_C(1) << (f->max == 7 && v == 7 ? 0 : v);
                if (p < end && *p != ',')
                        return fail(e, offset + (unsigned) (p - text), "%s field: unexpected '%c'", f->name,
                                    *p);
                if (p < end)
                        p++;
                if (p == end && p[-1] == ',')
                        return fail(e, offset + (unsigned) (p - text), "%s field: empty list item", f->name);
        }
        *ret = bits;
        return 0;
}

void schedule_interval(int64_t seconds, Schedule *ret) {
        *ret = (Schedule){ .kind = SCHEDULE_INTERVAL, .interval_s = seconds };
}

static int parse_every(const char *text, Schedule *ret, ScheduleError *e) {
        const char *p = text + 5;
        while (*p == ' ')
                p++;
        double ns;
        if (units_parse(p, units_duration_ns, 1e9, &ns) < 0)
                return fail(e, (unsigned) (p - text),
                            "expected a duration such as 6h, 30m or 90s after 'every'");
        if (ns < SCHEDULE_MIN_INTERVAL_S * 1e9 || ns > (double) SCHEDULE_MAX_INTERVAL_S * 1e9)
                return fail(e, (unsigned) (p - text), "interval must be between 1s and 366d");
        schedule_interval((int64_t) (ns / 1e9), ret);
        return 0;
}

int schedule_parse(const char *text, Schedule *ret, ScheduleError *ret_error) {
        static const struct {
                const char *name;
                const char *expansion;
        } shortcuts[] = {
                { "@hourly", "0 * * * *" },   { "@daily", "0 0 * * *" },   { "@midnight", "0 0 * * *" },
                { "@weekly", "0 0 * * 0" },   { "@monthly", "0 0 1 * *" }, { "@yearly", "0 0 1 1 *" },
                { "@annually", "0 0 1 1 *" },
        };
        if (strncmp(text, "every ", 6) == 0 || strcmp(text, "every") == 0)
                return parse_every(text, ret, ret_error);
        if (text[0] == '@') {
                for (size_t i = 0; i < sizeof(shortcuts) / sizeof(shortcuts[0]); i++)
                        if (strcmp(text, shortcuts[i].name) == 0)
                                return schedule_parse(shortcuts[i].expansion, ret, ret_error);
                return fail(ret_error, 0,
                            "unknown shortcut '%s' (@hourly, @daily, @weekly, @monthly, @yearly)", text);
        }

        Schedule s = { .kind = SCHEDULE_CRON };
        uint64_t bits[5];
        bool restricted[5];
        const char *p = text;
        for (unsigned i = 0; i < 5; i++) {
                while (*p == ' ' || *p == '\t')
                        p++;
                if (!*p)
                        return fail(
                                ret_error, (unsigned) (p - text),
                                "expected 5 fields (minute hour day-of-month month day-of-week), found %u",
                                i);
                size_t len = strcspn(p, " \t");
                int r = parse_field(&fields[i], p, len, (unsigned) (p - text), &bits[i], &restricted[i],
                                    ret_error);
                if (r < 0)
                        return r;
                p += len;
        }
        while (*p == ' ' || *p == '\t')
                p++;
        if (*p)
                return fail(ret_error, (unsigned) (p - text), "more than 5 fields");
        s.minutes = bits[0];
        s.hours = (uint32_t) bits[1];
        s.days = (uint32_t) bits[2];
        s.months = (uint16_t) bits[3];
        s.weekdays = (uint8_t) bits[4];
        s.days_restricted = restricted[2];
        s.weekdays_restricted = restricted[4];
        *ret = s;
        return 0;
}

static bool date_matches(const Schedule *s, const struct tm *day) {
        if (!(s->months & (1u << (day->tm_mon + 1))))
                return false;
        bool dom = s->days & (1u << day->tm_mday), dow = s->weekdays & (1u << day->tm_wday);
        if (s->days_restricted && s->weekdays_restricted)
                return dom || dow;
        return dom && dow;
}

/* The first instant at which the local clock shows (day, hour, minute), or -1 if it never
 * does (a skipped time). Both DST assumptions are tried; an assumption is valid only if
 * localtime() gives back the same wall-clock time. */
static time_t first_instant(const struct tm *day, int hour, int minute) {
        time_t best = -1;
        for (int isdst = 0; isdst <= 1; isdst++) {
                struct tm want = *day;
                want.tm_hour = hour;
                want.tm_min = minute;
                want.tm_sec = 0;
                want.tm_isdst = isdst;
                time_t t = mktime(&want);
                struct tm got;
                if (t == (time_t) -1 || !localtime_r(&t, &got))
                        continue;
                if (got.tm_year != day->tm_year || got.tm_mon != day->tm_mon ||
                    got.tm_mday != day->tm_mday || got.tm_hour != hour || got.tm_min != minute)
                        continue;
                if (best == -1 || t < best)
                        best = t;
        }
        return best;
}

int schedule_next(const Schedule *s, time_t after, time_t *ret) {
        if (s->kind == SCHEDULE_INTERVAL) {
                *ret = after + (time_t) s->interval_s;
                return 0;
        }
        struct tm day;
        if (!localtime_r(&after, &day))
                return -EINVAL;
        for (int i = 0; i < SCHEDULE_SEARCH_DAYS; i++) {
                struct tm d = day;
                d.tm_mday += i;
                d.tm_hour = 12; /* noon: a time every date has, to normalize the date safely */
                d.tm_min = d.tm_sec = 0;
                d.tm_isdst = -1;
                if (mktime(&d) == (time_t) -1)
                        return -EINVAL;
                if (!date_matches(s, &d))
                        continue;
                for (int h = 0; h < 24; h++) {
                        if (!(s->hours & (1u << h)))
                                continue;
                        for (int m = 0; m < 60; m++) {
                                if (!(s->minutes & (UINT64_C(1) << m)))
                                        continue;
                                time_t t = first_instant(&d, h, m);
                                /* t <= after: passed, or its first occurrence did (repeated hour) */
                                if (t != -1 && t > after) {
                                        *ret = t;
                                        return 0;
                                }
                        }
                }
        }
        return -ENOENT;
}
