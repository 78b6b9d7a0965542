/* SPDX-License-Identifier: MIT */
/*
 * Pre-flight against real files: system programs and libraries, a script and its interpreter,
 * and crafted files that are not what they claim (truncated ELF, garbage), which must be judged
 * without reading out of bounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner/allocator.h"
#include "runner/preflight.h"
#include "util/cleanup.h"

static char dir[] = "/tmp/alloclab-preflight-XXXXXX";

static int setup(void **state) {
        (void) state;
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
        (void) state;
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static char *write_file(const char *name, const void *data, size_t size, mode_t mode) {
        char *path;
        assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, size), (ssize_t) size);
        close(fd);
        assert_int_equal(chmod(path, mode), 0);
        return path;
}

static void test_dynamic_program_passes(void **state) {
        (void) state;
        _cleanup_free_ char *why = NULL, *jemalloc = NULL;
        assert_int_equal(allocator_find_library(catalog_find("jemalloc"), NULL, &jemalloc), 0);
        assert_int_equal(preflight_check("/bin/true", NULL, &why), 0);
        assert_int_equal(preflight_check("/bin/true", jemalloc, &why), 0);
        assert_null(why);
}

/* A memo answers the second lookup of a soname from the first, found or not. */
static void test_library_memo(void **state) {
        (void) state;
        Memo memo = {};
        _cleanup_free_ char *first = NULL, *second = NULL, *missing = NULL;
        const CatalogEntry none = { .name = "none", .soname = "libno-such-allocator.so.9" };
        assert_int_equal(allocator_find_library(catalog_find("jemalloc"), &memo, &first), 0);
        assert_int_equal(allocator_find_library(catalog_find("jemalloc"), &memo, &second), 0);
        assert_string_equal(first, second);
        assert_int_equal(allocator_find_library(&none, &memo, &missing), -ENOENT);
        assert_null(missing);
        assert_int_equal(allocator_find_library(&none, &memo, &missing), -ENOENT);
        assert_int_equal(memo.n, 2);
        assert_string_equal(memo.entries[0].key, "library libjemalloc.so.2");
        assert_string_equal(memo.entries[0].value, first);
        assert_int_equal(memo.entries[1].result, -ENOENT);
        memo_clear(&memo);
        assert_int_equal(memo.n, 0);
}

static void test_library_without_malloc(void **state) {
        (void) state;
        _cleanup_free_ char *why = NULL, *libxxhash = NULL;
        const CatalogEntry xxhash = { .name = "xxhash", .soname = "libxxhash.so.0" };
        assert_int_equal(allocator_find_library(&xxhash, NULL, &libxxhash), 0);
        assert_int_equal(preflight_check("/bin/true", libxxhash, &why), 1);
        _cleanup_free_ char *expected = NULL;
        assert_true(asprintf(&expected, "%s does not define malloc: it cannot replace the malloc family",
                             libxxhash) > 0);
        assert_string_equal(why, expected);
}

static void test_setuid_script_interpreter(void **state) {
        (void) state;
        /* A setuid copy of a real program, and a script whose interpreter is that copy. */
        _cleanup_free_ char *copy = NULL, *script = NULL, *why = NULL, *expected = NULL;
        assert_true(asprintf(&copy, "%s/setuid-true", dir) > 0);
        char cmd[512];
        snprintf(cmd, sizeof(cmd), "cp /bin/true '%s' && chmod 4755 '%s'", copy, copy);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(preflight_check(copy, NULL, &why), 1);
        assert_true(
                asprintf(&expected,
                         "%s is setuid: the loader runs it in secure-execution mode and ignores LD_PRELOAD",
                         copy) > 0);
        assert_string_equal(why, expected);

        char text[600];
        int n = snprintf(text, sizeof(text), "#!%s -x\necho hi\n", copy);
        script = write_file("script.sh", text, (size_t) n, 0755);
        free(why);
        why = NULL;
        assert_int_equal(preflight_check(script, NULL, &why), 1);
        assert_string_equal(why, expected); /* judged by its interpreter */
}

static void test_crafted_files(void **state) {
        (void) state;
        /* A truncated ELF header and random bytes: not judged (the smoke run will meet them),
         * and above all not read out of bounds (ASan builds check that). */
        static const unsigned char truncated[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0 };
        unsigned char junk[4096];
        for (size_t i = 0; i < sizeof(junk); i++)
                junk[i] = (unsigned char) (i * 131 + 7);
        memcpy(junk, "\177ELF\2\1\1", 7);
        _cleanup_free_ char *a = write_file("truncated", truncated, sizeof(truncated), 0755);
        _cleanup_free_ char *b = write_file("junk", junk, sizeof(junk), 0755);
        _cleanup_free_ char *why = NULL;
        assert_int_equal(preflight_check(a, NULL, &why), 0);
        assert_int_equal(preflight_check(b, NULL, &why), 0);
        assert_int_equal(preflight_check(a, a, &why), 1);
        assert_non_null(strstr(why, "is not a 64-bit ELF shared object"));
        free(why);
        why = NULL;
        assert_int_equal(preflight_check("/nonexistent/program", NULL, &why), -ENOENT);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_dynamic_program_passes),
                cmocka_unit_test(test_library_memo),
                cmocka_unit_test(test_library_without_malloc),
                cmocka_unit_test(test_setuid_script_interpreter),
                cmocka_unit_test(test_crafted_files),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
