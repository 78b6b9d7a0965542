/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "configs/catalog.h"
#include "configs/spec-text.h"
#include "configs/yamltree.h"
#include "util/cleanup.h"
#include "util/io.h"

void spec_text_scalar(FILE *f, const char *s) {
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(f, "\\%c", *p);
                else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\x%02x", *p);
                else
                        fputc(*p, f);
        }
        fputc('"', f);
}

void spec_text_list(FILE *f, char *const *l) {
        fputc('[', f);
        for (size_t i = 0; l && l[i]; i++) {
                if (i > 0)
                        fputs(", ", f);
                spec_text_scalar(f, l[i]);
        }
        fputc(']', f);
}

/* The length of the name between braces at s (just after '{') when it is one of names, else 0. */
static size_t named_reference(const char *s, char *const *names) {
        size_t n = strcspn(s, "}");
        if (!s[n])
                return 0;
        for (size_t i = 0; names && names[i]; i++)
                if (strcspn(names[i], "=") == n && strncmp(names[i], s, n) == 0)
                        return n;
        return 0;
}

void spec_text_template(FILE *f, const char *s, char *const *names) {
        char *text = NULL;
        size_t size = 0;
        FILE *t = open_memstream(&text, &size);
        if (!t)
                return;
        for (const char *p = s; *p; p++) {
                size_t n;
                if (*p == '{' && (n = named_reference(p + 1, names)) > 0) {
                        fprintf(t, "{%.*s}", (int) n, p + 1);
                        p += n + 1;
                } else if (*p == '{' || *p == '}')
                        fprintf(t, "%c%c", *p, *p);
                else
                        fputc(*p, t);
        }
        if (memstream_text(t, &text))
                spec_text_scalar(f, text);
        free(text);
}

char *spec_text_variant_name(const char *preload) {
        const char *base = basename(preload);
        char *name = strndup(base, strcspn(base, "."));
        /* A catalog allocator's file whose name does not say which (libclang_rt for scudo) is named
         * as the catalog names it; libjemalloc stays libjemalloc, apart from the name jemalloc. */
        const CatalogEntry *e = strchr(preload, '/') ? catalog_find_file(preload) : NULL;
        if (name && e && !strstr(name, e->name)) {
                free(name);
                return strdup(e->name);
        }
        return name;
}

bool spec_text_name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
               c == '-' || c == '.';
}

void spec_text_name(char *buf, size_t size, const char *prefix, const char *src, size_t len) {
        size_t k = (size_t) snprintf(buf, size, "%s", prefix);
        for (size_t i = 0; i < len && k + 1 < size && k < 64; i++)
                buf[k++] = spec_text_name_char(src[i]) ? src[i] : '_';
        buf[k] = 0;
}

/* A node in flow style: every scalar double-quoted but a plain null, which stays null. */
static void emit_flow(FILE *f, const YamlNode *n) {
        if (!n || yamltree_is_null(n)) {
                fputs("null", f);
                return;
        }
        if (n->kind == YAMLTREE_NODE_SCALAR) {
                spec_text_scalar(f, n->value);
                return;
        }
        bool map = n->kind == YAMLTREE_NODE_MAPPING;
        fputc(map ? '{' : '[', f);
        for (size_t i = 0; i < n->n_items; i++) {
                if (i > 0)
                        fputs(", ", f);
                if (map) {
                        spec_text_scalar(f, n->keys[i]->value);
                        fputs(": ", f);
                }
                emit_flow(f, n->items[i]);
        }
        fputc(map ? '}' : ']', f);
}

/* A variant's mapping with its build at rev (the other keys as written). */
static void emit_variant_at(FILE *f, const YamlNode *variant, const char *rev) {
        fputc('{', f);
        for (size_t i = 0; i < variant->n_items; i++) {
                const YamlNode *key = variant->keys[i], *value = variant->items[i];
                fprintf(f, "%s", i > 0 ? ", " : "");
                spec_text_scalar(f, key->value);
                fputs(": ", f);
                if (strcmp(key->value, "build") != 0 || value->kind != YAMLTREE_NODE_MAPPING) {
                        emit_flow(f, value);
                        continue;
                }
                fputc('{', f);
                for (size_t k = 0; k < value->n_items; k++) {
                        if (strcmp(value->keys[k]->value, "rev") == 0)
                                continue;
                        spec_text_scalar(f, value->keys[k]->value);
                        fputs(": ", f);
                        emit_flow(f, value->items[k]);
                        fputs(", ", f);
                }
                fputs("\"rev\": ", f);
                spec_text_scalar(f, rev);
                fputc('}', f);
        }
        fputc('}', f);
}

int spec_text_revisions(const char *source, size_t size, const char *experiment, const char *variant,
                        const char *const names[2], const char *const revs[2], char **ret) {
        _cleanup_(diag_clear) Diagnostics d = {};
        _cleanup_(yamltree_node_freep) YamlNode *root = NULL;
        int r = yamltree_parse(source, size, &d, &root);
        if (r < 0)
                return r;
        const YamlNode *allocators = NULL, *chosen = NULL;
        for (size_t i = 0; root && root->kind == YAMLTREE_NODE_MAPPING && i < root->n_items; i++)
                if (strcmp(root->keys[i]->value, "allocators") == 0)
                        allocators = root->items[i];
        for (size_t i = 0;
             allocators && allocators->kind == YAMLTREE_NODE_MAPPING && i < allocators->n_items; i++)
                if (strcmp(allocators->keys[i]->value, variant) == 0)
                        chosen = allocators->items[i];
        if (!chosen || chosen->kind != YAMLTREE_NODE_MAPPING)
                return -ENOENT;
        static const char *const replaced[] = { "experiment", "allocators", "baseline", "reference",
                                                "aa_check",   "schedule",   NULL };
        char *text = NULL;
        size_t text_size = 0;
        FILE *f = open_memstream(&text, &text_size);
        if (!f)
                return -ENOMEM;
        fputs("experiment: ", f);
        spec_text_scalar(f, experiment);
        fputc('\n', f);
        for (size_t i = 0; i < root->n_items; i++) {
                bool skip = false;
                for (const char *const *k = replaced; *k; k++)
                        skip |= strcmp(root->keys[i]->value, *k) == 0;
                if (skip)
                        continue;
                spec_text_scalar(f, root->keys[i]->value);
                fputs(": ", f);
                emit_flow(f, root->items[i]);
                fputc('\n', f);
        }
        fputs("allocators:\n", f);
        for (size_t i = 0; i < 2; i++) {
                fputs("  ", f);
                spec_text_scalar(f, names[i]);
                fputs(": ", f);
                emit_variant_at(f, chosen, revs[i]);
                fputc('\n', f);
        }
        fputs("baseline: ", f);
        spec_text_scalar(f, names[0]);
        fputc('\n', f);
        return (*ret = memstream_text(f, &text)) ? 0 : -ENOMEM;
}

/* The variant name of SOURCE@REV: the source's last directory and the revision ("jemalloc-v5.3"). */
static char *built_variant_name(const char *allocator, const char *at) {
        const char *end = at;
        while (end > allocator && end[-1] == '/')
                end--;
        const char *start = end;
        while (start > allocator && start[-1] != '/')
                start--;
        _cleanup_free_ char *joined = NULL;
        if (asprintf(&joined, "%.*s-%s", (int) (end - start), start, at[1] ? at + 1 : "tree") < 0)
                return NULL;
        char name[65];
        spec_text_name(name, sizeof(name), "", joined, strlen(joined));
        return strdup(name);
}

char *spec_text_variant_open(FILE *f, const char *item) {
        const char *eq = strchr(item, '=');
        const char *allocator = eq ? eq + 1 : item, *at = strrchr(allocator, '@');
        char *variant = eq   ? strndup(item, (size_t) (eq - item))
                        : at ? built_variant_name(allocator, at)
                             : spec_text_variant_name(allocator);
        fputs("\n  ", f);
        spec_text_scalar(f, variant ? variant : "");
        if (at) { /* SOURCE@REV: built from source at REV; SOURCE@: the tree as it is */
                _cleanup_free_ char *source = strndup(allocator, (size_t) (at - allocator));
                fputs(": {build: {source: ", f);
                spec_text_scalar(f, source ? source : "");
                if (at[1]) {
                        fputs(", rev: ", f);
                        spec_text_scalar(f, at + 1);
                }
                fputs("}", f);
        } else {
                fputs(": {preload: ", f);
                spec_text_scalar(f, allocator);
        }
        return variant;
}
