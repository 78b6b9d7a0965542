/* SPDX-License-Identifier: MIT */
/*
 * The declarative schema machinery shared by every YAML file alloclab reads (specs, the daemon's
 * configuration): field tables, typed value parsers, and errors with the node's position and a
 * "did you mean" for near-miss names. Parsers report into the Loader's Diagnostics and return
 * -EINVAL, so one pass finds every problem.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/schema.h"
#include "util/cleanup.h"
#include "util/suggest.h"

int schema_error(Loader *l, const YamlNode *n, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = diag_addv(l->diag, n ? n->line : 1, n ? n->column : 1, fmt, ap);
        va_end(ap);
        return r;
}

int schema_error_unknown(Loader *l, const YamlNode *n, const char *what, const char *word,
                         const char *const *candidates) {
        const char *s = suggest_closest(word, candidates);
        if (s)
                return schema_error(l, n, "unknown %s '%s' (did you mean '%s'?)", what, word, s);
        return schema_error(l, n, "unknown %s '%s'", what, word);
}

int schema_expect_scalar(Loader *l, const YamlNode *n, const char *what) {
        if (!n || yamltree_is_null(n) || n->kind != YAMLTREE_NODE_SCALAR)
                return schema_error(l, n, "%s must be a scalar, got %s", what, yamltree_kind_name(n));
        return 0;
}

int schema_expect_kind(Loader *l, const YamlNode *n, YamlKind kind, const char *what) {
        if (!n || yamltree_is_null(n) || n->kind != kind)
                return schema_error(l, n, "%s must be %s, got %s", what,
                                    kind == YAMLTREE_NODE_MAPPING ? "a mapping" : "a list",
                                    yamltree_kind_name(n));
        return 0;
}

bool schema_is_identifier(const char *s, bool allow_punct) {
        if (!*s || strlen(s) > 64)
                return false;
        for (const char *p = s; *p; p++) {
                bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
                          (p > s && *p >= '0' && *p <= '9') ||
                          (allow_punct && (*p == '-' || *p == '.' || (*p >= '0' && *p <= '9')));
                if (!ok)
                        return false;
        }
        return true;
}

int schema_parse_uint(Loader *l, const YamlNode *n, const char *what, uint64_t min, uint64_t max,
                      uint64_t *ret) {
        int r = schema_expect_scalar(l, n, what);
        if (r < 0)
                return r;
        const char *s = n->value;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (*s < '0' || *s > '9' || *end || errno == ERANGE)
                return schema_error(l, n, "%s must be an integer from %" PRIu64 " to %" PRIu64 ", got '%s'",
                                    what, min, max, s);
        if (v < min || v > max)
                return schema_error(l, n, "%s must be between %" PRIu64 " and %" PRIu64 ", got %llu", what,
                                    min, max, v);
        *ret = v;
        return 0;
}

/* A quantity with units (util/units.h) within [min, max]. */
int schema_parse_quantity(Loader *l, const YamlNode *n, const char *what, const Unit *units,
                          double bare_factor, const char *example, uint64_t min, uint64_t max,
                          uint64_t *ret) {
        int r = schema_expect_scalar(l, n, what);
        if (r < 0)
                return r;
        double v;
        if (units_parse(n->value, units, bare_factor, &v) < 0)
                return schema_error(l, n, "%s: cannot parse '%s' (expected e.g. %s)", what, n->value,
                                    example);
        if (v < (double) min || v > (double) max) {
                char low[32], high[32];
                units_format((double) min, units, low, sizeof(low));
                units_format((double) max, units, high, sizeof(high));
                return schema_error(l, n, "%s '%s' is out of range: from %s to %s", what, n->value, low,
                                    high);
        }
        *ret = (uint64_t) v;
        return 0;
}

int schema_parse_string(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "value");
        if (r < 0)
                return r;
        char *s = strdup(n->value);
        if (!s)
                return -ENOMEM;
        free(*(char **) field);
        *(char **) field = s;
        return 0;
}

/* Matches a scalar against a NULL-terminated keyword table. A keyword with a ':' ("file:PATH")
 * takes an argument: the scalar must start with the part up to ':' and the rest is returned in
 * *ret_arg. */
int schema_parse_keyword(Loader *l, const YamlNode *n, const char *what, const char *const *words,
                         unsigned *ret, const char **ret_arg) {
        int r = schema_expect_scalar(l, n, what);
        if (r < 0)
                return r;
        for (unsigned i = 0; words[i]; i++) {
                const char *colon = strchr(words[i], ':');
                size_t len = colon ? (size_t) (colon - words[i]) + 1 : 0;
                if (colon && strncmp(n->value, words[i], len) == 0) {
                        if (n->value[len] == 0)
                                return schema_error(l, n, "%s '%s' needs a value after ':'", what, n->value);
                        *ret = i;
                        *ret_arg = n->value + len;
                        return 0;
                }
                if (!colon && strcmp(n->value, words[i]) == 0) {
                        *ret = i;
                        return 0;
                }
        }
        char list[256] = "";
        for (unsigned i = 0; words[i]; i++) {
                if (i > 0)
                        strncat(list, ", ", sizeof(list) - strlen(list) - 1);
                strncat(list, words[i], sizeof(list) - strlen(list) - 1);
        }
        const char *s = suggest_closest(n->value, words);
        if (s)
                return schema_error(l, n, "unknown %s '%s' (did you mean '%s'?); expected one of: %s", what,
                                    n->value, s, list);
        return schema_error(l, n, "unknown %s '%s'; expected one of: %s", what, n->value, list);
}

int schema_parse_fields(Loader *l, const YamlNode *n, const char *what, const Field *fields, size_t n_fields,
                        void *base) {
        int r = schema_expect_kind(l, n, YAMLTREE_NODE_MAPPING, what);
        if (r < 0)
                return r;
        /* Every key a suggestion can name (the spec's top level has more than 40). */
        const char *names[SCHEMA_MAX_FIELDS + 1] = {};
        for (size_t i = 0; i < n_fields && i < SCHEMA_MAX_FIELDS; i++)
                names[i] = fields[i].key;

        for (size_t i = 0; i < n->n_items; i++) {
                const Field *f = NULL;
                for (size_t k = 0; k < n_fields && !f; k++)
                        if (strcmp(fields[k].key, n->keys[i]->value) == 0)
                                f = &fields[k];
                int q = f ? f->parse(l, n->items[i], (char *) base + f->offset)
                          : schema_error_unknown(l, n->keys[i], "key", n->keys[i]->value, names);
                if (q == -ENOMEM)
                        return q;
                if (q < 0)
                        r = q;
        }
        for (size_t k = 0; k < n_fields; k++) {
                if (!fields[k].required)
                        continue;
                bool found = false;
                for (size_t i = 0; i < n->n_items && !found; i++)
                        found = strcmp(fields[k].key, n->keys[i]->value) == 0;
                if (!found)
                        r = schema_error(l, n, "missing required key '%s'", fields[k].key);
        }
        return r;
}
