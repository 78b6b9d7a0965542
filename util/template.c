/* SPDX-License-Identifier: MIT */
/*
 * Two passes over the template: one measures, one writes. The same function validates (the spec
 * loader calls it with ret == NULL) and expands (the planner), so both agree on the syntax.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

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

/* One pass: validates, and counts (out == NULL) or writes the expansion. Returns its length or
 * -EINVAL. With `uses`, placeholders are counted per name instead (uses[k] for names[k]; values
 * may then be NULL) and the length returned is that of the text around them. */
static ssize_t walk(const char *tmpl, const char *const *names, const char *const *values, size_t n,
                    char *out, size_t *uses, TemplateError *ret_error) {
        size_t length = 0;
        for (size_t i = 0; tmpl[i];) {
                const char *c = tmpl + i;
                const char *piece = c;
                size_t piece_len = 1;
                if ((c[0] == '{' && c[1] == '{') || (c[0] == '}' && c[1] == '}'))
                        i += 2;
                else if (c[0] == '}')
                        return fail(ret_error, TEMPLATE_STRAY_CLOSE, i, 1);
                else if (c[0] != '{')
                        i++;
                else {
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
                        i += len + 2;
                        if (uses) {
                                uses[k]++;
                                continue;
                        }
                        piece = values[k];
                        piece_len = strlen(values[k]);
                }
                if (out)
                        memcpy(out + length, piece, piece_len);
                length += piece_len;
        }
        return (ssize_t) length;
}

int template_expand(const char *tmpl, const char *const *names, const char *const *values, size_t n,
                    char **ret, TemplateError *ret_error) {
        ssize_t length = walk(tmpl, names, values, n, NULL, NULL, ret_error);
        if (length < 0)
                return (int) length;
        if (ret_error)
                ret_error->problem = TEMPLATE_OK;
        if (!ret)
                return 0;
        char *out = malloc((size_t) length + 1);
        if (!out)
                return -ENOMEM;
        (void) walk(tmpl, names, values, n, out, NULL, NULL);
        out[length] = 0;
        *ret = out;
        return 0;
}

int template_measure(const char *tmpl, const char *const *names, size_t n, size_t *ret_literal,
                     size_t *ret_uses) {
        if (n > 0)
                memset(ret_uses, 0, n * sizeof(size_t));
        ssize_t length = walk(tmpl, names, NULL, n, NULL, ret_uses, NULL);
        if (length < 0)
                return (int) length;
        *ret_literal = (size_t) length;
        return 0;
}

const char *template_problem_to_string(TemplateProblem p) {
        static const char *const table[] = {
                [TEMPLATE_OK] = "no problem",
                [TEMPLATE_UNCLOSED] = "unclosed '{' (write '{{' for a literal brace)",
                [TEMPLATE_STRAY_CLOSE] = "unmatched '}' (write '}}' for a literal brace)",
                [TEMPLATE_BAD_NAME] =
                        "placeholder is not a parameter name (write '{{' and '}}' for literal braces)",
                [TEMPLATE_UNDEFINED] = "undefined parameter",
        };
        return p < ELEMENTSOF(table) ? table[p] : "unknown problem";
}
