/* SPDX-License-Identifier: MIT */
/* util/text.c: what may come in as a name or path, and how text from outside is shown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "util/cleanup.h"
#include "util/text.h"

static void test_clean(void **state) {
        (void) state;
        assert_true(text_is_clean(""));
        assert_true(text_is_clean("/home/ana/specs/sort 2.yaml"));
        assert_true(text_is_clean("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80")); /* é € and an emoji */
        static const char *const unclean[] = {
                "a\x1b[2Jb",         /* clear the screen */
                "a\x1b]0;owned\x07", /* set the window title */
                "line\nforged",      /* a second log line */
                "tab\there",         /* C0 */
                "del\x7f",           /* DEL */
                "c1 \xc2\x9b"
                "31m",                    /* U+009B, CSI for some terminals */
                "bidi \xe2\x80\xae",      /* U+202E right-to-left override */
                "isolate \xe2\x81\xa6",   /* U+2066 */
                "mark \xe2\x80\x8f",      /* U+200F */
                "line \xe2\x80\xa8sep",   /* U+2028 */
                "xml \xef\xbf\xbe",       /* U+FFFE, refused by XML readers */
                "xml \xef\xb7\x90",       /* U+FDD0 */
                "plane \xf0\x9f\xbf\xbf", /* U+1FFFF */
                "latin1 \xe9t\xe9",       /* not UTF-8 */
                "overlong \xc0\xaf",      /* '/' in two bytes */
                "surrogate \xed\xa0\x80",
                "truncated \xe2\x82",
                "beyond \xf4\x90\x80\x80",
        };
        for (size_t i = 0; i < sizeof(unclean) / sizeof(*unclean); i++)
                if (text_is_clean(unclean[i]))
                        fail_msg("'%s' taken as clean", unclean[i]);
}

static void test_shown(void **state) {
        (void) state;
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "plain caf\xc3\xa9", "plain caf\xc3\xa9" },
                { "\x1b[2J\x1b]0;t\x07", "\\x1b[2J\\x1b]0;t\\x07" },
                { "a\nb\r\tc", "a\\x0ab\\x0d\\x09c" },
                { "back\\slash", "back\\\\slash" },
                { "\xc2\x9b"
                  "31m",
                  "\\u{009b}31m" },
                { "\xe2\x80\xae"
                  "evil",
                  "\\u{202e}evil" },
                { "\xe9t\xe9", "\\xe9t\\xe9" },
                { "\xe2\x82", "\\xe2\\x82" },
                { "\x7f", "\\x7f" },
                { "\xef\xbf\xbf", "\\u{ffff}" },
                /* Characters that show as nothing: a zero-width space, a word joiner, a BOM. */
                { "p=\xe2\x80\x8bx", "p=\\u{200b}x" },
                { "a\xe2\x81\xa0"
                  "b",
                  "a\\u{2060}b" },
                { "\xef\xbb\xbf"
                  "name",
                  "\\u{feff}name" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
                _cleanup_free_ char *got = text_shown(cases[i].in);
                assert_non_null(got);
                assert_string_equal(got, cases[i].out);
                /* What is shown is clean. */
                assert_true(text_is_clean(got));
        }
        assert_null(text_shown(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_clean),
                cmocka_unit_test(test_shown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
