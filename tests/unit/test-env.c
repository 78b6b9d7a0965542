/* SPDX-License-Identifier: MIT */
/*
 * Child environments are built from empty: only whitelisted caller variables, the spec's and
 * the variant's env (later layers win), LD_PRELOAD for that child only, nothing else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runner/env.h"
#include "util/strv.h"

static char *caller[] = {
        (char *) "PATH=/caller/bin",
        (char *) "HOME=/home/u",
        (char *) "LANG=C.UTF-8",
        (char *) "MALLOC_CONF=narenas:1",
        (char *) "LD_PRELOAD=/evil.so",
        (char *) "LD_LIBRARY_PATH=/evil",
        (char *) "GLIBC_TUNABLES=glibc.malloc.tcache_count=0",
        (char *) "MIMALLOC_VERBOSE=1",
        (char *) "TCMALLOC_RELEASE_RATE=0",
        (char *) "SECRET_TOKEN=abc",
        (char *) "PYTHONPATH=/x",
        NULL,
};

static void test_nothing_leaks(void **state) {
        (void) state;
        _cleanup_strv_free_ char **env = NULL;
        assert_int_equal(env_build(caller, NULL, NULL, NULL, &env), 0);
        assert_string_equal(env_get(env, "PATH"), "/caller/bin");
        assert_string_equal(env_get(env, "HOME"), "/home/u");
        assert_string_equal(env_get(env, "LANG"), "C.UTF-8");
        assert_string_equal(env_get(env, "ALLOCLAB_METRICS_FD"), "3");
        static const char *const leaked[] = { "MALLOC_CONF",    "LD_PRELOAD",       "LD_LIBRARY_PATH",
                                              "GLIBC_TUNABLES", "MIMALLOC_VERBOSE", "TCMALLOC_RELEASE_RATE",
                                              "SECRET_TOKEN",   "PYTHONPATH" };
        for (size_t i = 0; i < sizeof(leaked) / sizeof(leaked[0]); i++)
                assert_null(env_get(env, leaked[i]));
        assert_int_equal(strv_length(env), 4);
}

static void test_layers_override(void **state) {
        (void) state;
        char *spec_env[] = { (char *) "PATH=/spec/bin", (char *) "A=spec", (char *) "B=spec", NULL };
        char *variant_env[] = { (char *) "B=variant", (char *) "MALLOC_CONF=dirty_decay_ms:500", NULL };
        _cleanup_strv_free_ char **env = NULL;
        assert_int_equal(env_build(caller, spec_env, variant_env, "/usr/lib/libjemalloc.so.2", &env), 0);
        assert_string_equal(env_get(env, "PATH"), "/spec/bin");
        assert_string_equal(env_get(env, "A"), "spec");
        assert_string_equal(env_get(env, "B"), "variant");
        assert_string_equal(env_get(env, "MALLOC_CONF"), "dirty_decay_ms:500");
        assert_string_equal(env_get(env, "LD_PRELOAD"), "/usr/lib/libjemalloc.so.2");
        assert_null(env_get(env, "LD_LIBRARY_PATH"));
        /* Each key appears once. */
        for (size_t i = 0; env[i]; i++)
                for (size_t k = i + 1; env[k]; k++)
                        assert_true(strcspn(env[i], "=") != strcspn(env[k], "=") ||
                                    strncmp(env[i], env[k], strcspn(env[i], "=")) != 0);
}

static void test_default_path(void **state) {
        (void) state;
        char *empty[] = { NULL };
        _cleanup_strv_free_ char **env = NULL;
        assert_int_equal(env_build(empty, NULL, NULL, NULL, &env), 0);
        assert_string_equal(env_get(env, "PATH"), ENV_DEFAULT_PATH);
}

/* Three environments of different sizes and counts end up the same size, each padded. */
static void test_pad(void **state) {
        (void) state;
        char **a = strv_copy((char *const[]){ (char *) "PATH=/bin", NULL });
        char **b = strv_copy((char *const[]){ (char *) "PATH=/bin",
                                              (char *) "LD_PRELOAD=/usr/lib/libjemalloc.so.2",
                                              (char *) "X=1", NULL });
        char **c = NULL; /* no environment of this kind: left alone */
        char ***all[] = { &a, &b, &c };
        assert_int_equal(env_pad(all, 3), 0);
        assert_int_equal(env_stack_size(a), env_stack_size(b));
        assert_non_null(env_get(a, ENV_PAD_KEY));
        assert_string_equal(env_get(b, ENV_PAD_KEY), ""); /* the largest gets the empty pad */
        assert_null(c);
        assert_int_equal(env_stack_size((char *const[]){ (char *) "A=1", NULL }), 4 + 2 * sizeof(char *));
        strv_free(a);
        strv_free(b);
}

/* A pad of hundreds of kilobytes is split: one variable past the kernel's MAX_ARG_STRLEN (128 KiB)
 * made execve() fail with E2BIG for the variant with the small environment. Every remainder is
 * tried, down to a last variable that must be empty. */
static void test_pad_long(void **state) {
        (void) state;
        for (size_t extra = 0; extra < 40; extra++) {
                size_t len = 3 * ENV_PAD_CHUNK + 1000 + extra;
                char *big = malloc(len + 3);
                assert_non_null(big);
                memcpy(big, "B=", 2);
                memset(big + 2, 'b', len);
                big[len + 2] = 0;
                char **a = strv_copy((char *const[]){ (char *) "PATH=/bin", NULL });
                char **b = strv_copy((char *const[]){ (char *) "PATH=/bin", big, NULL });
                char ***all[] = { &a, &b };
                assert_int_equal(env_pad(all, 2), 0);
                assert_int_equal(env_stack_size(a), env_stack_size(b));
                for (char **e = a; *e; e++)
                        assert_true(strlen(*e) < strlen(ENV_PAD_KEY) + 8 + ENV_PAD_CHUNK);
                assert_non_null(env_get(a, ENV_PAD_KEY "4"));
                /* env_offset lengthens the first pad variable only, and stays below the limit. */
                char **shifted = NULL;
                assert_int_equal(env_offset(a, ENV_OFFSET_MAX, &shifted), 0);
                assert_int_equal(env_stack_size(shifted), env_stack_size(a) + ENV_OFFSET_MAX);
                assert_true(strlen(env_get(shifted, ENV_PAD_KEY)) < 131072 - 64);
                strv_free(shifted);
                strv_free(a);
                strv_free(b);
                free(big);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_nothing_leaks), cmocka_unit_test(test_layers_override),
                cmocka_unit_test(test_default_path),  cmocka_unit_test(test_pad),
                cmocka_unit_test(test_pad_long),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
