/* SPDX-License-Identifier: MIT */
/*
 * alloclabd's configuration file: every field read, an empty file is all defaults, and bad
 * files get FILE:LINE:COL diagnostics.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "configs/daemon-config.h"
#include "util/cleanup.h"

static char *write_config(const char *text) {
        char *path = strdup("/tmp/alloclabd-config-XXXXXX");
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        return path;
}

/* Loads text; returns the joined diagnostics ("" when it loaded) and the config in *ret. */
static char *load(const char *text, DaemonConfig **ret) {
        _cleanup_free_ char *path = write_config(text);
        Diagnostics d = { .file = strdup("c.yaml") };
        int r = daemon_config_load_file(path, &d, ret);
        unlink(path);
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);
        for (size_t i = 0; r < 0 && i < d.n_items; i++) {
                _cleanup_free_ char *line = diag_format(&d, i);
                fprintf(f, "%s%s", i ? "\n" : "", line);
        }
        fclose(f);
        diag_clear(&d);
        return out;
}

static void test_fields(void **state) {
        (void) state;
        _cleanup_(daemon_config_freep) DaemonConfig *c = NULL;
        _cleanup_free_ char *got = load("database: /var/lib/x.db\nspecs_dir: /etc/x\nsocket: /run/x.sock\n"
                                        "socket_group: alloclab\nidle_timeout: 2m\nprobe: /usr/lib/p.so\n"
                                        "machine: rack7-box\nprune_keep_last: 30\nprune_older_than: 90d\n"
                                        "publish_dir: /srv/alloclab\n",
                                        &c);
        assert_string_equal(got, "");
        assert_string_equal(c->database, "/var/lib/x.db");
        assert_string_equal(c->specs_dir, "/etc/x");
        assert_string_equal(c->socket, "/run/x.sock");
        assert_string_equal(c->socket_group, "alloclab");
        assert_int_equal(c->idle_timeout_usec, 120000000);
        assert_string_equal(c->probe, "/usr/lib/p.so");
        assert_string_equal(c->machine, "rack7-box");
        assert_int_equal(c->prune_keep_last, 30);
        assert_int_equal(c->prune_older_than_s, 90 * 86400);
        assert_string_equal(c->publish_dir, "/srv/alloclab");
}

static void test_empty(void **state) {
        (void) state;
        _cleanup_(daemon_config_freep) DaemonConfig *c = NULL;
        _cleanup_free_ char *got = load("", &c);
        assert_string_equal(got, "");
        assert_null(c->database);
        assert_int_equal(c->idle_timeout_usec, 0);
}

static void test_errors(void **state) {
        (void) state;
        DaemonConfig *c = NULL;
        _cleanup_free_ char *a = load("databse: /x.db\n", &c);
        assert_string_equal(a, "c.yaml:1:1: unknown key 'databse' (did you mean 'database'?)");
        _cleanup_free_ char *b = load("socket: run/x.sock\nidle_timeout: forever\n", &c);
        assert_string_equal(b,
                            "c.yaml:1:9: path 'run/x.sock' must be absolute\n"
                            "c.yaml:2:15: idle_timeout: cannot parse 'forever' (expected e.g. '30s', '2m')");
        _cleanup_free_ char *m = load("machine: rack 7\n", &c);
        assert_string_equal(
                m, "c.yaml:1:10: machine name 'rack 7' must be 1-64 letters, digits, '_', '-' or '.'");
        _cleanup_free_ char *p = load("prune_keep_last: 0\nprune_older_than: 90\n", &c);
        assert_string_equal(p,
                            "c.yaml:1:18: prune_keep_last must be between 1 and 1000000000, got 0\n"
                            "c.yaml:2:19: prune_older_than: cannot parse '90' (expected e.g. '90d', '12h')");
        _cleanup_free_ char *s = load("publish_dir: site\n", &c);
        assert_string_equal(s, "c.yaml:1:14: path 'site' must be absolute");
        _cleanup_free_ char *e = load("- database\n", &c);
        assert_string_equal(e, "c.yaml:1:1: configuration must be a mapping, got a list");
        assert_null(c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fields),
                cmocka_unit_test(test_empty),
                cmocka_unit_test(test_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
