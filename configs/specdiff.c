/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/spec.h"
#include "configs/specdiff.h"
#include "configs/yamltree.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/strv.h"

#define RENDER_MAX 60 /* characters of a value shown whole; longer ones end in "..." */

typedef struct Diff {
        const char *name_a, *name_b; /* what the two sides are called: "run 3" */
        char **lines;
        size_t n, more; /* lines kept, and those left out past SPECDIFF_MAX_LINES */
} Diff;

/* A node in flow style on one line, cut at RENDER_MAX: "7", "[1, 2]", "{a: 1}". */
static void render(const YamlNode *n, FILE *f) {
        if (!n || yamltree_is_null(n)) {
                fputs("null", f);
                return;
        }
        if (n->kind == YAMLTREE_NODE_SCALAR) {
                fputs(n->value, f);
                return;
        }
        fputc(n->kind == YAMLTREE_NODE_SEQUENCE ? '[' : '{', f);
        for (size_t i = 0; i < n->n_items; i++) {
                if (i)
                        fputs(", ", f);
                if (n->kind == YAMLTREE_NODE_MAPPING) {
                        render(n->keys[i], f);
                        fputs(": ", f);
                }
                render(n->items[i], f);
        }
        fputc(n->kind == YAMLTREE_NODE_SEQUENCE ? ']' : '}', f);
}

static char *rendered(const YamlNode *n) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        render(n, f);
        if (!memstream_text(f, &text))
                return NULL;
        if (size > RENDER_MAX)
                strcpy(text + RENDER_MAX - 3, "...");
        return text;
}

/* Appends a line: "PATH: X -> Y", or with only set, "PATH: only in ONLY (X)". */
static int add(Diff *d, const char *path, const YamlNode *x, const YamlNode *y, const char *only) {
        if (d->n >= SPECDIFF_MAX_LINES) {
                d->more++;
                return 0;
        }
        _cleanup_free_ char *rx = rendered(x), *ry = rendered(y), *line = NULL;
        if (!rx || !ry)
                return -ENOMEM;
        if ((only ? asprintf(&line, "%s: only in %s (%s)", path, only, rx)
                  : asprintf(&line, "%s: %s -> %s", path, rx, ry)) < 0)
                return -ENOMEM;
        int r = strv_consume(&d->lines, line);
        if (r < 0)
                return r;
        line = NULL; /* the list has it */
        d->n++;
        return 0;
}

static bool same_scalar(const YamlNode *x, const YamlNode *y) {
        return x->kind == YAMLTREE_NODE_SCALAR && y->kind == YAMLTREE_NODE_SCALAR &&
               strcmp(x->value, y->value) == 0;
}

static int compare(Diff *d, const char *path, const YamlNode *x, const YamlNode *y);

static int diff_mappings(Diff *d, const char *path, const YamlNode *x, const YamlNode *y) {
        int r;
        for (int side = 0; side < 2; side++) {
                const YamlNode *from = side ? y : x, *other = side ? x : y;
                for (size_t i = 0; i < from->n_items; i++) {
                        const YamlNode *match = NULL;
                        for (size_t k = 0; k < other->n_items && !match; k++)
                                if (same_scalar(from->keys[i], other->keys[k]))
                                        match = other->items[k];
                        _cleanup_free_ char *key = rendered(from->keys[i]), *sub = NULL;
                        if (!key || asprintf(&sub, "%s%s%s", path, *path ? "." : "", key) < 0)
                                return -ENOMEM;
                        /* A spec's setting written another way, or its default spelled out, is
                         * the same setting. */
                        if (!*path && (r = spec_same_setting(key, from->items[i], match)) != 0) {
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        if (!match)
                                r = add(d, sub, from->items[i], NULL, side ? d->name_b : d->name_a);
                        else
                                r = side ? 0 : compare(d, sub, from->items[i], match);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int compare(Diff *d, const char *path, const YamlNode *x, const YamlNode *y) {
        bool null_x = !x || yamltree_is_null(x), null_y = !y || yamltree_is_null(y);
        if (null_x || null_y)
                return null_x && null_y ? 0 : add(d, *path ? path : "(document)", x, y, NULL);
        if (x->kind == YAMLTREE_NODE_MAPPING && y->kind == YAMLTREE_NODE_MAPPING)
                return diff_mappings(d, path, x, y);
        if (x->kind == YAMLTREE_NODE_SEQUENCE && y->kind == YAMLTREE_NODE_SEQUENCE &&
            x->n_items == y->n_items) {
                for (size_t i = 0; i < x->n_items; i++) {
                        _cleanup_free_ char *sub = NULL;
                        if (asprintf(&sub, "%s[%zu]", path, i) < 0)
                                return -ENOMEM;
                        int r = compare(d, sub, x->items[i], y->items[i]);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        if (same_scalar(x, y))
                return 0;
        return add(d, *path ? path : "(document)", x, y, NULL);
}

int spec_diff(const char *a, const char *b, const char *name_a, const char *name_b, char ***ret) {
        Diagnostics diag = {};
        _cleanup_(yamltree_node_freep) YamlNode *x = NULL, *y = NULL;
        int r = yamltree_parse(a, strlen(a), &diag, &x);
        if (r >= 0)
                r = yamltree_parse(b, strlen(b), &diag, &y);
        diag_clear(&diag);
        if (r < 0)
                return r;
        Diff d = { .name_a = name_a, .name_b = name_b };
        r = compare(&d, "", x, y);
        char *more = NULL;
        if (r >= 0 && d.more && asprintf(&more, "... and %zu more", d.more) < 0)
                r = -ENOMEM;
        if (more && (r = strv_consume(&d.lines, more)) < 0)
                free(more);
        if (r >= 0 && !d.lines && !(d.lines = calloc(1, sizeof(char *))))
                r = -ENOMEM;
        if (r < 0) {
                strv_free(d.lines);
                return r;
        }
        *ret = d.lines;
        return 0;
}
