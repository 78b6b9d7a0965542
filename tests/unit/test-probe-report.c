/* SPDX-License-Identifier: MIT */
/*
 * Decoding probe reports: an untouched report means the probe never loaded; a report of
 * another layout is refused; strings are re-terminated and counts clamped; per-thread slots
 * are summed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner/probe-report.h"
#include "util/cleanup.h"

static ProbeReport *map_report(int fd) {
        void *m = mmap(NULL, sizeof(ProbeReport), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        assert_true(m != MAP_FAILED);
        return m;
}

static void test_untouched(void **state) {
        (void) state;
        _cleanup_close_ int fd = probe_report_memfd(0);
        assert_true(fd >= 0);
        ProbeResult r;
        assert_int_equal(probe_report_decode(fd, &r), 0);
        assert_false(r.loaded);
        assert_int_equal(r.threads, 0);
}

static void test_sealed(void **state) {
        (void) state;
        _cleanup_close_ int fd = probe_report_memfd(0);
        /* The probe relies on these seals to recognise the runner's descriptor. */
        assert_int_equal(ftruncate(fd, 1), -1);
        assert_int_equal(errno, EPERM);
}

static void test_requests(void **state) {
        (void) state;
        /* The runner's request is in place before the probe maps the report. */
        _cleanup_close_ int fd = probe_report_memfd(PROBE_REQUEST_COUNTERS);
        ProbeReport *m = map_report(fd);
        assert_int_equal(m->requests, PROBE_REQUEST_COUNTERS);
        assert_int_equal(m->magic, 0);
        munmap(m, sizeof(ProbeReport));
}

static void test_other_layout(void **state) {
        (void) state;
        _cleanup_close_ int fd = probe_report_memfd(0);
        ProbeReport *m = map_report(fd);
        m->magic = PROBE_REPORT_MAGIC;
        m->version = PROBE_REPORT_VERSION + 1;
        m->size = sizeof(ProbeReport);
        m->state = PROBE_STATE_LOADED;
        ProbeResult r;
        assert_int_equal(probe_report_decode(fd, &r), -EBADMSG);
        m->version = PROBE_REPORT_VERSION;
        m->size = sizeof(ProbeReport) - 8;
        assert_int_equal(probe_report_decode(fd, &r), -EBADMSG);
        munmap(m, sizeof(ProbeReport));
}

static void test_hostile_contents(void **state) {
        (void) state;
        _cleanup_close_ int fd = probe_report_memfd(0);
        ProbeReport *m = map_report(fd);
        m->magic = PROBE_REPORT_MAGIC;
        m->version = PROBE_REPORT_VERSION;
        m->size = sizeof(ProbeReport);
        m->state = PROBE_STATE_LOADED | PROBE_STATE_EXITED | PROBE_STATE_LIVE_BYTES;
        memset(m->effective_path, 'x', sizeof(m->effective_path)); /* no terminator */
        m->n_options = 1000;
        m->n_libraries = 1000;
        m->n_slots = 70; /* more threads than slots: the last slot is shared */
        m->slots[0].calls[PROBE_MALLOC] = 5;
        m->slots[PROBE_MAX_SLOTS - 1].calls[PROBE_MALLOC] = 7;
        m->slots[1].live_bytes = 4096;
        m->peak_live_bytes = 1024; /* older than the final live total: the peak is at least that */
        ProbeResult r;
        assert_int_equal(probe_report_decode(fd, &r), 0);
        assert_true(r.loaded);
        assert_true(r.exited);
        assert_int_equal(strlen(r.report.effective_path), PROBE_PATH_MAX - 1);
        assert_int_equal(r.report.n_options, PROBE_MAX_OPTIONS);
        assert_int_equal(r.report.n_libraries, PROBE_MAX_LIBRARIES);
        assert_int_equal(r.calls[PROBE_MALLOC], 12);
        assert_int_equal(r.threads, 70);
        assert_int_equal(r.live_bytes, 4096);
        assert_int_equal(r.peak_live_bytes, 4096);
        assert_true(r.live_measured);
        munmap(m, sizeof(ProbeReport));
}

/* Found by tests/fuzz/fuzz-probe-report: a report without the probe's magic is the program's
 * doing (a program the probe did not enter keeps the descriptor), and none of it may reach the
 * readers of the result; per-thread live bytes that overflow when summed wrap, as the probe's
 * own counters do, instead of being undefined. */
static void test_written_without_probe(void **state) {
        (void) state;
        _cleanup_close_ int fd = probe_report_memfd(0);
        ProbeReport *m = map_report(fd);
        m->n_libraries = 0xffffffff;
        m->n_options = 0xffffffff;
        memset(m->effective_path, 'x', sizeof(m->effective_path));
        ProbeResult r;
        assert_int_equal(probe_report_decode(fd, &r), 0);
        assert_false(r.loaded);
        assert_int_equal(r.report.n_libraries, 0);
        assert_int_equal(r.report.n_options, 0);
        assert_int_equal(r.report.effective_path[0], 0);

        m->magic = PROBE_REPORT_MAGIC;
        m->version = PROBE_REPORT_VERSION;
        m->size = sizeof(ProbeReport);
        m->state = PROBE_STATE_LOADED;
        m->n_slots = 2;
        m->slots[0].live_bytes = INT64_MAX;
        m->slots[1].live_bytes = 2;
        assert_int_equal(probe_report_decode(fd, &r), 0);
        assert_int_equal(r.live_bytes, INT64_MIN + 1);
        munmap(m, sizeof(ProbeReport));
}

static void test_names(void **state) {
        (void) state;
        assert_string_equal(probe_family_name(PROBE_FAMILY_GLIBC), "glibc");
        assert_string_equal(probe_family_name(PROBE_FAMILY_GLIBC | PROBE_FAMILY_TBBMALLOC), "tbbmalloc");
        assert_string_equal(probe_family_name(0), "none");
        assert_string_equal(probe_function_name(PROBE_POSIX_MEMALIGN), "posix_memalign");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_untouched),
                cmocka_unit_test(test_sealed),
                cmocka_unit_test(test_other_layout),
                cmocka_unit_test(test_hostile_contents),
                cmocka_unit_test(test_requests),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_written_without_probe),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
