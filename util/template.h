/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/*
 * Parameter substitution in commands, environment values and cwd.
 * Syntax: "{name}" is replaced by the value of parameter name; "{{" and "}}" stand for literal
 * braces (the rule of Python's str.format, so Python one-liners read as they would in Python).
 */

typedef enum TemplateProblem {
        TEMPLATE_OK,
        TEMPLATE_UNCLOSED,    /* "{" without a matching "}" */
        TEMPLATE_STRAY_CLOSE, /* "}" that is neither "}}" nor closes a placeholder */
        TEMPLATE_BAD_NAME,    /* "{...}" whose content is not an identifier */
        TEMPLATE_UNDEFINED,   /* "{name}" for a name that is not a parameter */
} TemplateProblem;

typedef struct TemplateError {
        TemplateProblem problem;
        size_t offset; /* byte offset of the placeholder or brace in the template */
        size_t length; /* length of the offending name (TEMPLATE_UNDEFINED, TEMPLATE_BAD_NAME) */
} TemplateError;

/*
 * Expands tmpl with n (names[i], values[i]) pairs. On success returns 0 and a new string in
 * *ret (ret may be NULL to only validate). Returns -EINVAL with *ret_error filled for syntax
 * and undefined names, -ENOMEM on allocation failure.
 */
int template_expand(const char *tmpl, const char *const *names, const char *const *values, size_t n,
                    char **ret, TemplateError *ret_error);

/*
 * What tmpl expands to, without expanding it: *ret_literal gets the bytes outside placeholders
 * ("{{" counts as the one brace it stands for) and ret_uses[k] (n entries) how many placeholders
 * name names[k], so that the length of an expansion is literal + sum(uses[k] * strlen(value k)),
 * known before a byte is written. Returns 0, or -EINVAL for a template template_expand refuses.
 */
int template_measure(const char *tmpl, const char *const *names, size_t n, size_t *ret_literal,
                     size_t *ret_uses);

/* A short English description of a problem, for error messages. */
const char *template_problem_to_string(TemplateProblem p);
