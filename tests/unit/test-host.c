/* SPDX-License-Identifier: MIT */
/*
 * The host fingerprint: every fact that affects comparability changes it (THP modes, the
 * kernel, a cpufreq setting), the host name alone does not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner/host.h"

static void replace(char **field, const char *value) {
        free(*field);
        *field = strdup(value);
}

static void test_fingerprint(void **state) {
        (void) state;
        Host h;
        assert_int_equal(host_read(&h), 0);
        for (int f = 0; f < _HOST_FACT_MAX; f++)
                assert_non_null(h.facts[f]); /* read, or "unknown" */
        assert_int_equal(strlen(h.fingerprint), 64);
        char first[SHA256_HEX_SIZE];
        memcpy(first, h.fingerprint, sizeof(first));

        host_fingerprint(&h);
        assert_string_equal(h.fingerprint, first); /* a pure function of the facts */
        replace(&h.hostname, "renamed");
        host_fingerprint(&h);
        assert_string_equal(h.fingerprint, first);

        replace(&h.thp, strcmp(h.thp, "always") == 0 ? "never" : "always");
        host_fingerprint(&h);
        assert_string_not_equal(h.fingerprint, first);
        char thp[SHA256_HEX_SIZE];
        memcpy(thp, h.fingerprint, sizeof(thp));
        replace(&h.facts[HOST_THP_DEFRAG], "defer+madvise-changed");
        host_fingerprint(&h);
        assert_string_not_equal(h.fingerprint, thp);
        host_done(&h);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fingerprint),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
