/* SPDX-License-Identifier: MIT */
/*
 * Schedules: parsing (with the offset of each error) and next firings, in UTC and across both
 * daylight-saving changes of a European time zone (given as a POSIX TZ rule, so no time-zone
 * database is needed).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "configs/schedule.h"

static void set_tz(const char *tz) {
        setenv("TZ", tz, 1);
        tzset();
}

/* "2026-03-28T11:00:00Z" -> time_t */
static time_t utc(const char *text) {
        struct tm tm = {};
        assert_non_null(strptime(text, "%Y-%m-%dT%H:%M:%SZ", &tm));
        return timegm(&tm);
}

static void expect_next(const char *expr, const char *after, const char *expected) {
        Schedule s;
        ScheduleError e;
        if (schedule_parse(expr, &s, &e) < 0)
                fail_msg("%s: %s", expr, e.message);
        time_t t;
        assert_int_equal(schedule_next(&s, utc(after), &t), 0);
        char got[32];
        strftime(got, sizeof(got), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
        if (strcmp(got, expected) != 0)
                fail_msg("'%s' after %s: expected %s, got %s", expr, after, expected, got);
}

static void expect_error(const char *expr, unsigned offset, const char *message) {
        Schedule s;
        ScheduleError e;
        assert_int_equal(schedule_parse(expr, &s, &e), -EINVAL);
        if (e.offset != offset || strcmp(e.message, message) != 0)
                fail_msg("'%s': expected %u '%s', got %u '%s'", expr, offset, message, e.offset, e.message);
}

static void test_parse_errors(void **state) {
        (void) state;
        expect_error("0 3 * *", 7,
                     "expected 5 fields (minute hour day-of-month month day-of-week), found 4");
        expect_error("61 3 * * *", 0, "minute field: 61 is outside 0-59");
        expect_error("0 3-1 * * *", 2, "hour field: 3-1 is outside 0-23");
        expect_error("0 3 * foo *", 6, "month field: expected a number or a name");
        expect_error("*/0 * * * *", 2, "minute field: expected a step of at least 1");
        expect_error("0 3 * * * *", 10, "more than 5 fields");
        expect_error("0 3 * * 1,", 10, "day-of-week field: empty list item");
        expect_error("@fortnightly", 0,
                     "unknown shortcut '@fortnightly' (@hourly, @daily, @weekly, @monthly, @yearly)");
        expect_error("every 6 parsecs", 6, "expected a duration such as 6h, 30m or 90s after 'every'");
        expect_error("every 0s", 6, "interval must be between 1s and 366d");
}

static void test_utc(void **state) {
        (void) state;
        set_tz("UTC0");
        expect_next("0 3 * * *", "2026-11-30T01:00:00Z", "2026-11-30T03:00:00Z");
        expect_next("0 3 * * *", "2026-11-30T03:00:00Z", "2026-12-01T03:00:00Z"); /* strictly after */
        expect_next("*/15 * * * *", "2026-11-30T10:07:00Z", "2026-11-30T10:15:00Z");
        expect_next("0 0 1 jan *", "2026-11-30T00:00:00Z", "2027-01-01T00:00:00Z");
        expect_next("30 9 * * mon-fri", "2026-11-28T12:00:00Z", "2026-11-30T09:30:00Z"); /* Sat -> Mon */
        expect_next("0 0 * * 7", "2026-11-30T00:00:00Z", "2026-12-06T00:00:00Z");        /* 7 = Sunday */
        /* Both day fields restricted: the 13th or a Friday, whichever comes first. */
        expect_next("0 0 13 * fri", "2026-11-30T00:00:00Z", "2026-12-04T00:00:00Z");
        expect_next("0 0 13 * fri", "2026-12-11T12:00:00Z", "2026-12-13T00:00:00Z");
        expect_next("@weekly", "2026-11-30T00:00:00Z", "2026-12-06T00:00:00Z");
        expect_next("every 6h", "2026-11-30T00:00:00Z", "2026-11-30T06:00:00Z");

        Schedule s;
        time_t t;
        assert_int_equal(schedule_parse("0 0 31 2 *", &s, NULL), 0);
        assert_int_equal(schedule_next(&s, utc("2026-01-01T00:00:00Z"), &t), -ENOENT);
}

static void test_dst(void **state) {
        (void) state;
        /* Central European time: CET (UTC+1), CEST (UTC+2) from the last Sunday of March 02:00
         * to the last Sunday of October 03:00. In 2026: 29 March and 25 October. */
        set_tz("CET-1CEST,M3.5.0,M10.5.0/3");

        /* Spring: 02:30 does not exist on 29 March, so that day does not fire. */
        expect_next("30 2 * * *", "2026-03-28T11:00:00Z", "2026-03-30T00:30:00Z");
        /* 03:00 exists (the clock jumps from 02:00 to 03:00 CEST = 01:00 UTC). */
        expect_next("0 3 * * *", "2026-03-28T11:00:00Z", "2026-03-29T01:00:00Z");
        /* The day before and after keep their offsets. */
        expect_next("0 12 * * *", "2026-03-28T00:00:00Z", "2026-03-28T11:00:00Z");
        expect_next("0 12 * * *", "2026-03-29T00:00:00Z", "2026-03-29T10:00:00Z");

        /* Autumn: 02:30 happens twice on 25 October (CEST, then CET); it fires once, first. */
        expect_next("30 2 * * *", "2026-10-24T11:00:00Z", "2026-10-25T00:30:00Z");
        expect_next("30 2 * * *", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z");
        /* Half-hourly through the repeated hour: its second pass does not fire again. */
        expect_next("*/30 * * * *", "2026-10-25T00:45:00Z", "2026-10-25T02:00:00Z");
        /* An interval is elapsed time, not wall-clock time. */
        expect_next("every 1h", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_errors),
                cmocka_unit_test(test_utc),
                cmocka_unit_test(test_dst),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
