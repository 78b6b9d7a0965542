/* SPDX-License-Identifier: MIT */
/*
 * Sizes of a spec's expansions from the lengths of its parameter values (spec-size.h). A
 * template's expansion in one cell is its literal text plus, for each placeholder, the length of
 * the value it names; summed over the cross product, each value of a parameter with k values
 * occurs in cells / k cells. Nothing here allocates: the figures exist before the expansion.
 */
#include <errno.h>
#include <string.h>

#include "configs/spec-size.h"
#include "util/strv.h"
#include "util/template.h"

size_t spec_size_add(size_t a, size_t b) {
        size_t sum;
        return __builtin_add_overflow(a, b, &sum) ? SIZE_MAX : sum;
}

size_t spec_size_mul(size_t a, size_t b) {
        size_t product;
        return __builtin_mul_overflow(a, b, &product) ? SIZE_MAX : product;
}

int spec_size_template(const Spec *s, const char *tmpl, SpecExtent *ret) {
        const char *names[SPEC_MAX_PARAMS];
        size_t uses[SPEC_MAX_PARAMS], literal;
        for (size_t i = 0; i < s->n_params; i++)
                names[i] = s->params[i].name;
        int r = template_measure(tmpl, names, s->n_params, &literal, uses);
        if (r < 0)
                return r;
        size_t cells = spec_n_cells(s);
        SpecExtent e = { .longest = literal, .total = spec_size_mul(literal, cells) };
        for (size_t i = 0; i < s->n_params; i++) {
                if (uses[i] == 0)
                        continue;
                const SpecParam *p = &s->params[i];
                size_t longest = 0, sum = 0;
                for (size_t k = 0; k < p->n_values; k++) {
                        size_t len = strlen(p->values[k]);
                        longest = len > longest ? len : longest;
                        sum += len; /* at most the spec's size */
                }
                e.longest = spec_size_add(e.longest, spec_size_mul(uses[i], longest));
                e.total = spec_size_add(e.total,
                                        spec_size_mul(uses[i], spec_size_mul(sum, cells / p->n_values)));
        }
        *ret = e;
        return 0;
}

/* Adds one execve() string (its NUL and its pointer too) to *sum. */
static int add_string(const Spec *s, const char *tmpl, size_t fixed, SpecExtent *sum) {
        SpecExtent e;
        int r = spec_size_template(s, tmpl, &e);
        if (r < 0)
                return r;
        size_t overhead = fixed + 1 + sizeof(char *);
        sum->longest = spec_size_add(sum->longest, spec_size_add(e.longest, overhead));
        sum->total =
                spec_size_add(sum->total, spec_size_add(e.total, spec_size_mul(overhead, spec_n_cells(s))));
        return 0;
}

int spec_size_argv(const Spec *s, char *const *argv, SpecExtent *ret) {
        SpecExtent sum = {};
        for (size_t i = 0; argv && argv[i]; i++) {
                int r = add_string(s, argv[i], 0, &sum);
                if (r < 0)
                        return r;
        }
        *ret = sum;
        return 0;
}

size_t spec_size_literal_argv(char *const *argv) {
        size_t sum = 0;
        for (size_t i = 0; argv && argv[i]; i++)
                sum = spec_size_add(sum, strlen(argv[i]) + 1 + sizeof(char *));
        return sum;
}

/* KEY=VALUE: the key and '=' are literal (never templated), the value a template. */
static int add_variable(const Spec *s, const char *entry, SpecExtent *sum) {
        const char *eq = strchr(entry, '=');
        if (!eq)
                return -EINVAL;
        return add_string(s, eq + 1, (size_t) (eq - entry) + 1, sum);
}

int spec_size_env(const Spec *s, size_t v, SpecExtent *ret) {
        char *const *own = s->variants[v].env;
        SpecExtent sum = {};
        int r;
        for (size_t i = 0; s->env && s->env[i]; i++) {
                size_t key = strcspn(s->env[i], "=");
                if (strv_env_find(own, s->env[i], key) >= 0)
                        continue; /* the variant's value replaces it */
                if ((r = add_variable(s, s->env[i], &sum)) < 0)
                        return r;
        }
        for (size_t i = 0; own && own[i]; i++)
                if ((r = add_variable(s, own[i], &sum)) < 0)
                        return r;
        *ret = sum;
        return 0;
}
