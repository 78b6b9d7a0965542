/* SPDX-License-Identifier: MIT */
/*
 * Key-level differences of two spec texts: changed values, keys on one side only, lists item by
 * item or whole, layout and comments ignored, and the cap on the number of lines.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "configs/specdiff.h"
#include "util/strv.h"

/* The lines joined by '\n'. */
static char *diff(const char *a, const char *b) {
        char **lines = NULL;
        assert_int_equal(spec_diff(a, b, "run 1", "run 2", &lines), 0);
        size_t size = 1;
        for (char **l = lines; *l; l++)
                size += strlen(*l) + 1;
        char *text = calloc(1, size);
        for (char **l = lines; *l; l++) {
                strcat(text, *l);
                strcat(text, "\n");
        }
        strv_free(lines);
        return text;
}

static void test_changes(void **state) {
        (void) state;
        char *d = diff(
                "experiment: x\nsamples: 7\nallocators:\n  je: {preload: jemalloc, env: {MALLOC_CONF: "
                "\"narenas:2\"}}\n  tbb: {preload: tbbmalloc}\nparams: {n: [1, 2]}\n",
                "experiment: x   # the same\nsamples: 10\nallocators:\n  je:\n    preload: jemalloc\n    "
                "env: {MALLOC_CONF: 'narenas:4'}\nparams: {n: [1, 2, 3]}\nwarmup: 2\n");
        assert_string_equal(d, "samples: 7 -> 10\n"
                               "allocators.je.env.MALLOC_CONF: narenas:2 -> narenas:4\n"
                               "allocators.tbb: only in run 1 ({preload: tbbmalloc})\n"
                               "params.n: [1, 2] -> [1, 2, 3]\n"
                               "warmup: only in run 2 (2)\n");
        free(d);
        d = diff("a: 1 # comment\nb: [x, y]\n", "b: [x, 'y']\na: \"1\"\n");
        assert_string_equal(d, "");
        free(d);
        d = diff("a: ~\nb: {c: 1}\n", "a: 5\nb: [1]\n");
        assert_string_equal(d, "a: null -> 5\nb: {c: 1} -> [1]\n");
        free(d);
}

/* Settings compared by what they mean: a default spelled out, or a value written another way, is
 * no difference; a different value, a variant's name or a string still is. */
static void test_effective_values(void **state) {
        (void) state;
        char *d = diff("experiment: x\ncommand: [a]\nallocators: {glibc: {}}\n",
                       "experiment: x\ncommand: [a]\nallocators: {glibc: {}}\nwarmup: 1\nsamples: 7\n"
                       "order: interleaved\ntimeout: 10m\n");
        assert_string_equal(d, "");
        free(d);
        d = diff("experiment: x\nmetrics: {a: {pattern: 'x ([0-9]+)'}, b: {better: higher}}\n",
                 "experiment: x\nmetrics:\n  b: {better: higher}\n"
                 "  a: {pattern: 'x ([0-9]+)', from: stdout, better: lower}\n");
        assert_string_equal(d, "");
        free(d);
        d = diff("experiment: x\ntimeout: 1m\nalpha: 0.05\n",
                 "experiment: x\ntimeout: 60000ms\nalpha: 5e-2\n");
        assert_string_equal(d, "");
        free(d);
        d = diff("experiment: x\nwarmup: 1\nsamples: auto\nbaseline: a\ndescription: d\n",
                 "experiment: x\nwarmup: 2\nsamples: {min: 5, max: 30}\nbaseline: b\n"
                 "quiet: {max_cpu_some_avg10: 10}\n");
        assert_string_equal(d, "warmup: 1 -> 2\nsamples: auto -> {min: 5, max: 30}\nbaseline: a -> b\n"
                               "description: only in run 1 (d)\n"
                               /* a quiet mapping waits (max_wait 10s), the default never does */
                               "quiet: only in run 2 ({max_cpu_some_avg10: 10})\n");
        free(d);
}

static void test_cap(void **state) {
        (void) state;
        char a[4096] = "", b[4096] = "";
        for (int i = 0; i < 30; i++) {
                snprintf(a + strlen(a), sizeof(a) - strlen(a), "k%02d: %d\n", i, i);
                snprintf(b + strlen(b), sizeof(b) - strlen(b), "k%02d: %d\n", i, i + 1);
        }
        char **lines = NULL;
        assert_int_equal(spec_diff(a, b, "A", "B", &lines), 0);
        assert_int_equal(strv_length(lines), SPECDIFF_MAX_LINES + 1);
        assert_string_equal(lines[SPECDIFF_MAX_LINES], "... and 10 more");
        strv_free(lines);
        assert_int_equal(spec_diff("a: [", "a: 1", "A", "B", &lines), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_changes),
                cmocka_unit_test(test_effective_values),
                cmocka_unit_test(test_cap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
