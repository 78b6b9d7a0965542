/* SPDX-License-Identifier: MIT */
/*
 * One pass over the template, writing into a memstream. The same function validates (the spec
 * loader calls it with ret == NULL) and expands (the planner), so both agree on the syntax.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/template.h"

static bool is_ident(const char *s, size_t len) {
        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
                if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
                        return false;
        }
        return true;
}

static int fail(TemplateError *e, TemplateProblem p, size_t offset, size_t length) {
        if (e)
                *e = (TemplateError){ .problem = p, .offset = offset, .length = length };
        return -EINVAL;
}

int template_expand(const char *tmpl, const char *const *names, const char *const *values, size_t n,
                    char **ret, TemplateError *ret_error) {
        _cleanup_free_ char *out = NULL;
        size_t out_len = 0;
        _cleanup_fclose_ FILE *f = NULL;

        if (ret) {
                f = open_memstream(&out, &out_len);
                if (!f)
                        return -ENOMEM;
        }

        for (size_t i = 0; tmpl[i];) {
                const char *c = tmpl + i;
                if ((c[0] == '{' && c[1] == '{') || (c[0] == '}' && c[1] == '}')) {
                        if (f)
                                fputc(c[0], f);
                        i += 2;
                        continue;
                }
                if (c[0] == '}')
                        return fail(ret_error, TEMPLATE_STRAY_CLOSE, i, 1);
                if (c[0] != '{') {
                        if (f)
                                fputc(c[0], f);
                        i++;
                        continue;
                }
                const char *close = strchr(c + 1, '}');
                if (!close)
                        return fail(ret_error, TEMPLATE_UNCLOSED, i, 1);
                size_t len = (size_t) (close - c - 1);
                if (!is_ident(c + 1, len))
                        return fail(ret_error, TEMPLATE_BAD_NAME, i, len + 2);
                size_t k = 0;
                while (k < n && !(strlen(names[k]) == len && memcmp(names[k], c + 1, len) == 0))
                        k++;
                if (k == n)
                        return fail(ret_error, TEMPLATE_UNDEFINED, i + 1, len);
                if (f)
                        fputs(values[k], f);
                i += len + 2;
        }

        if (ret) {
                if (fflush(f) != 0 || ferror(f))
                        return -ENOMEM;
                fclose(TAKE_PTR(f));
                *ret = TAKE_PTR(out);
        }
        if (ret_error)
                ret_error->problem = TEMPLATE_OK;
        return 0;
}

const char *template_problem_to_string(TemplateProblem p) {
        static const char *const table[] = {
                [TEMPLATE_OK] = "no problem",
                [TEMPLATE_UNCLOSED] = "unclosed '{' (write '{{' for a literal brace)",
                [TEMPLATE_STRAY_CLOSE] = "unmatched '}' (write '}}' for a literal brace)",
                [TEMPLATE_BAD_NAME] = "placeholder is not a parameter name",
                [TEMPLATE_UNDEFINED] = "undefined parameter",
        };
        return p < ELEMENTSOF(table) ? table[p] : "unknown problem";
}
