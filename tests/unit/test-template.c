/* SPDX-License-Identifier: MIT */
/*
 * Template syntax: {name} substitution, {{ and }} escapes, and each error with its offset.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "util/template.h"

static const char *const names[] = { "n", "width" };
static const char *const values[] = { "100", "8" };

static void expect(const char *tmpl, const char *out) {
        char *s = NULL;
        TemplateError e;
        assert_int_equal(template_expand(tmpl, names, values, 2, &s, &e), 0);
        assert_string_equal(s, out);
        free(s);
}

static void expect_error(const char *tmpl, TemplateProblem p, size_t offset) {
        char *s = NULL;
        TemplateError e;
        assert_int_equal(template_expand(tmpl, names, values, 2, &s, &e), -EINVAL);
        assert_null(s);
        assert_int_equal(e.problem, p);
        assert_int_equal(e.offset, offset);
}

static void test_expand(void **state) {
        (void) state;
        expect("", "");
        expect("plain", "plain");
        expect("{n}", "100");
        expect("n={n} w={width}", "n=100 w=8");
        expect("{{'k': {n}}}", "{'k': 100}");
        expect("{{n}}", "{n}");
        expect("'x'*(i%{width})", "'x'*(i%8)");
}

static void test_errors(void **state) {
        (void) state;
        expect_error("a{n", TEMPLATE_UNCLOSED, 1);
        expect_error("a}b", TEMPLATE_STRAY_CLOSE, 1);
        expect_error("{}", TEMPLATE_BAD_NAME, 0);
        expect_error("x{1a}", TEMPLATE_BAD_NAME, 1);
        expect_error("{n} {m}", TEMPLATE_UNDEFINED, 5);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_expand),
                cmocka_unit_test(test_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
