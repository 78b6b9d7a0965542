/* SPDX-License-Identifier: MIT */
/*
 * Event-driven tree builder over libyaml. An explicit stack of open collections replaces
 * recursion, so depth is bounded by YAMLTREE_MAX_DEPTH rather than by the C stack. Aliases are
 * expanded by deep copy, charged against YAMLTREE_MAX_NODES, so an alias bomb stops at the limit.
 * Merge keys ("<<") are not special: they surface as an unknown key in the schema.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "configs/yamltree.h"
#include "util/cleanup.h"

typedef struct Anchor {
        char *name;
        YamlNode *node; /* borrowed from the tree */
} Anchor;

/* The keys of one open mapping, for the duplicate check: open addressing over indexes into the
 * mapping's keys (+1; 0 is empty), so that a mapping of n keys is checked in O(n), not O(n^2). */
typedef struct KeySet {
        uint32_t *slots;
        size_t n_slots; /* 0 or a power of two, at least twice the keys in it */
        size_t n_keys;
} KeySet;

typedef struct Builder {
        Diagnostics *diag;
        YamlNode *stack[YAMLTREE_MAX_DEPTH + 1];
        KeySet keysets[YAMLTREE_MAX_DEPTH + 1]; /* of the mapping at the same stack position */
        size_t depth;
        YamlNode *root;
        Anchor anchors[YAMLTREE_MAX_ALIASES];
        size_t n_anchors;
        size_t n_aliases;
        size_t n_nodes;
} Builder;

YamlNode *yamltree_node_free(YamlNode *n) {
        if (!n)
                return NULL;
        for (size_t i = 0; i < n->n_items; i++) {
                yamltree_node_free(n->items[i]);
                if (n->keys)
                        yamltree_node_free(n->keys[i]);
        }
        if (n->keys)
                yamltree_node_free(n->keys[n->n_items]); /* a key still waiting for its value */
        free(n->items);
        free(n->keys);
        free(n->value);
        free(n);
        return NULL;
}

bool yamltree_is_null(const YamlNode *n) {
        if (!n)
                return true;
        if (n->kind != YAMLTREE_NODE_SCALAR || n->quoted)
                return false;
        return strcmp(n->value, "") == 0 || strcmp(n->value, "~") == 0 || strcmp(n->value, "null") == 0 ||
               strcmp(n->value, "Null") == 0 || strcmp(n->value, "NULL") == 0;
}

const char *yamltree_kind_name(const YamlNode *n) {
        if (yamltree_is_null(n))
                return "null";
        switch (n->kind) {
        case YAMLTREE_NODE_SCALAR:
                return "a scalar";
        case YAMLTREE_NODE_SEQUENCE:
                return "a list";
        case YAMLTREE_NODE_MAPPING:
                return "a mapping";
        }
        return "?";
}

static int node_new(Builder *b, YamlKind kind, const yaml_mark_t *mark, YamlNode **ret) {
        if (++b->n_nodes > YAMLTREE_MAX_NODES)
                return diag_add(b->diag, (unsigned) mark->line + 1, (unsigned) mark->column + 1,
                                "document has more than %d nodes", YAMLTREE_MAX_NODES);
        YamlNode *n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        n->kind = kind;
        n->line = (unsigned) mark->line + 1;
        n->column = (unsigned) mark->column + 1;
        *ret = n;
        return 0;
}

static int node_copy(Builder *b, const YamlNode *src, const yaml_mark_t *mark, YamlNode **ret) {
        _cleanup_(yamltree_node_freep) YamlNode *n = NULL;
        int r = node_new(b, src->kind, mark, &n);
        if (r < 0)
                return r;
        n->line = src->line;
        n->column = src->column;
        n->quoted = src->quoted;
        n->quote = src->quote;
        if (src->value && !(n->value = strdup(src->value)))
                return -ENOMEM;
        if (src->n_items > 0) {
                n->items = calloc(src->n_items, sizeof(YamlNode *));
                if (!n->items)
                        return -ENOMEM;
                if (src->keys && !(n->keys = calloc(src->n_items + 1, sizeof(YamlNode *))))
                        return -ENOMEM;
        }
        for (size_t i = 0; i < src->n_items; i++) {
                /* Count as we go so a failure frees exactly what was copied. */
                r = node_copy(b, src->items[i], mark, &n->items[i]);
                if (r >= 0 && src->keys)
                        r = node_copy(b, src->keys[i], mark, &n->keys[i]);
                n->n_items = i + 1;
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(n);
        return 0;
}

static size_t key_hash(const char *s) { /* FNV-1a */
        size_t h = 1469598103934665603ULL;
        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 1099511628211ULL;
        return h;
}

/* The slot of `value` in set, or of the empty slot where it would go. */
static uint32_t *keyset_slot(const KeySet *set, const YamlNode *map, const char *value) {
        for (size_t i = key_hash(value) & (set->n_slots - 1);; i = (i + 1) & (set->n_slots - 1)) {
                uint32_t *slot = &set->slots[i];
                if (!*slot || strcmp(map->keys[*slot - 1]->value, value) == 0)
                        return slot;
        }
}

static int keyset_add(KeySet *set, const YamlNode *map, uint32_t index) {
        if (2 * (set->n_keys + 1) > set->n_slots) {
                KeySet grown = { .n_slots = set->n_slots ? 2 * set->n_slots : 16, .n_keys = set->n_keys };
                if (!(grown.slots = calloc(grown.n_slots, sizeof(uint32_t))))
                        return -ENOMEM;
                for (size_t i = 0; i < set->n_slots; i++)
                        if (set->slots[i])
                                *keyset_slot(&grown, map, map->keys[set->slots[i] - 1]->value) =
                                        set->slots[i];
                free(set->slots);
                *set = grown;
        }
        *keyset_slot(set, map, map->keys[index]->value) = index + 1;
        set->n_keys++;
        return 0;
}

static void keyset_clear(KeySet *set) {
        free(set->slots);
        *set = (KeySet){};
}

static int check_duplicate_key(Builder *b, const YamlNode *map, const YamlNode *key) {
        if (key->kind != YAMLTREE_NODE_SCALAR)
                return diag_add(b->diag, key->line, key->column, "mapping keys must be scalars");
        const KeySet *set = &b->keysets[b->depth - 1];
        const uint32_t *slot = set->n_slots ? keyset_slot(set, map, key->value) : NULL;
        if (slot && *slot)
                return diag_add(b->diag, key->line, key->column,
                                "duplicate key '%s' (first defined at line %u)", key->value,
                                map->keys[*slot - 1]->line);
        return 0;
}

/* Room for one more item in a collection being built: arrays grow by doubling (capacity is
 * implied by n_items: the next power of two), keys one further for the parked key. */
static int grow_collection(YamlNode *n) {
        size_t have = n->n_items;
        if (have != 0 && (have & (have - 1)) != 0)
                return 0; /* not full: capacity is the next power of two */
        size_t cap = have ? 2 * have : 1;
        YamlNode **items = realloc(n->items, cap * sizeof(YamlNode *));
        if (!items)
                return -ENOMEM;
        n->items = items;
        if (n->keys) {
                YamlNode **keys = realloc(n->keys, (cap + 1) * sizeof(YamlNode *));
                if (!keys)
                        return -ENOMEM;
                memset(keys + have + 1, 0, (cap - have) * sizeof(YamlNode *));
                n->keys = keys;
        }
        return 0;
}

/* Attaches a finished node to the open collection on top of the stack, or makes it the root.
 * Mapping keys are parked in keys[n_items] until their value arrives. */
static int attach(Builder *b, YamlNode *n) {
        if (b->depth == 0) {
                b->root = n;
                return 0;
        }
        YamlNode *parent = b->stack[b->depth - 1];
        bool mapping = parent->kind == YAMLTREE_NODE_MAPPING;
        int r = 0;
        if (mapping && !parent->keys[parent->n_items]) {
                r = check_duplicate_key(b, parent, n);
                if (r < 0) {
                        yamltree_node_free(n);
                        return r;
                }
                parent->keys[parent->n_items] = n;
                return 0;
        }
        if ((r = grow_collection(parent)) < 0) {
                yamltree_node_free(n);
                return r;
        }
        parent->items[parent->n_items++] = n;
        return mapping ? keyset_add(&b->keysets[b->depth - 1], parent, (uint32_t) (parent->n_items - 1)) : 0;
}

static int remember_anchor(Builder *b, const yaml_char_t *anchor, YamlNode *n, const yaml_mark_t *m) {
        if (!anchor)
                return 0;
        if (b->n_anchors >= YAMLTREE_MAX_ALIASES)
                return diag_add(b->diag, (unsigned) m->line + 1, (unsigned) m->column + 1,
                                "more than %d anchors", YAMLTREE_MAX_ALIASES);
        char *name = strdup((const char *) anchor);
        if (!name)
                return -ENOMEM;
        b->anchors[b->n_anchors++] = (Anchor){ .name = name, .node = n };
        return 0;
}

static int on_alias(Builder *b, const yaml_event_t *e) {
        const yaml_mark_t *m = &e->start_mark;
        if (++b->n_aliases > YAMLTREE_MAX_ALIASES)
                return diag_add(b->diag, (unsigned) m->line + 1, (unsigned) m->column + 1,
                                "more than %d aliases", YAMLTREE_MAX_ALIASES);
        for (size_t i = 0; i < b->n_anchors; i++) {
                if (strcmp(b->anchors[i].name, (const char *) e->data.alias.anchor) != 0)
                        continue;
                for (size_t k = 0; k < b->depth; k++)
                        if (b->stack[k] == b->anchors[i].node)
                                return diag_add(b->diag, (unsigned) m->line + 1, (unsigned) m->column + 1,
                                                "alias '*%s' refers to an enclosing node",
                                                e->data.alias.anchor);
                YamlNode *copy = NULL;
                int r = node_copy(b, b->anchors[i].node, m, &copy);
                if (r < 0)
                        return r;
                return attach(b, copy);
        }
        return diag_add(b->diag, (unsigned) m->line + 1, (unsigned) m->column + 1, "unknown alias '*%s'",
                        e->data.alias.anchor);
}

static int on_collection_start(Builder *b, const yaml_event_t *e, YamlKind kind) {
        const yaml_mark_t *m = &e->start_mark;
        if (b->depth >= YAMLTREE_MAX_DEPTH)
                return diag_add(b->diag, (unsigned) m->line + 1, (unsigned) m->column + 1,
                                "nesting deeper than %d levels", YAMLTREE_MAX_DEPTH);
        YamlNode *n = NULL;
        int r = node_new(b, kind, m, &n);
        if (r < 0)
                return r;
        if (kind == YAMLTREE_NODE_MAPPING && !(n->keys = calloc(1, sizeof(YamlNode *)))) {
                free(n);
                return -ENOMEM;
        }
        const yaml_char_t *anchor =
                kind == YAMLTREE_NODE_MAPPING ? e->data.mapping_start.anchor : e->data.sequence_start.anchor;
        r = remember_anchor(b, anchor, n, m);
        if (r < 0) {
                yamltree_node_free(n);
                return r;
        }
        b->stack[b->depth++] = n;
        return 0;
}

static int on_collection_end(Builder *b) {
        YamlNode *n = b->stack[--b->depth];
        keyset_clear(&b->keysets[b->depth]);
        return attach(b, n);
}

static int on_scalar(Builder *b, const yaml_event_t *e) {
        YamlNode *n = NULL;
        int r = node_new(b, YAMLTREE_NODE_SCALAR, &e->start_mark, &n);
        if (r < 0)
                return r;
        n->value = strndup((const char *) e->data.scalar.value, e->data.scalar.length);
        if (!n->value) {
                free(n);
                return -ENOMEM;
        }
        if (strlen(n->value) != e->data.scalar.length) {
                yamltree_node_free(n);
                return diag_add(b->diag, (unsigned) e->start_mark.line + 1,
                                (unsigned) e->start_mark.column + 1, "scalar contains a NUL byte");
        }
        n->quoted = e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        switch (e->data.scalar.style) {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE:
                n->quote = '\'';
                break;
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
                n->quote = '"';
                break;
        case YAML_LITERAL_SCALAR_STYLE:
        case YAML_FOLDED_SCALAR_STYLE:
                n->quote = '|';
                break;
        default:
                n->quote = 0;
        }
        r = remember_anchor(b, e->data.scalar.anchor, n, &e->start_mark);
        if (r < 0) {
                yamltree_node_free(n);
                return r;
        }
        return attach(b, n);
}

static void builder_done(Builder *b) {
        /* Open collections were never attached: free them bottom-up. */
        while (b->depth > 0) {
                YamlNode *n = b->stack[--b->depth];
                keyset_clear(&b->keysets[b->depth]);
                yamltree_node_free(n);
        }
        for (size_t i = 0; i < b->n_anchors; i++)
                free(b->anchors[i].name);
}

int yamltree_parse(const char *data, size_t size, Diagnostics *d, YamlNode **ret) {
        if (size > YAMLTREE_MAX_INPUT_BYTES)
                return diag_add(d, 1, 1, "spec is larger than %d bytes", YAMLTREE_MAX_INPUT_BYTES);

        yaml_parser_t parser;
        if (!yaml_parser_initialize(&parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *) data, size);

        Builder b = { .diag = d };
        unsigned documents = 0;
        int r = 0;
        for (bool done = false; !done && r >= 0;) {
                yaml_event_t e;
                if (!yaml_parser_parse(&parser, &e)) {
                        if (parser.error == YAML_READER_ERROR) {
                                /* The reader knows only the byte offset: count lines up to it. */
                                unsigned line = 1, column = 1;
                                for (size_t i = 0; i < parser.problem_offset && i < size; i++, column++)
                                        if (data[i] == '\n') {
                                                line++;
                                                column = 0;
                                        }
                                r = diag_add(d, line, column, "invalid UTF-8 (%s)",
                                             parser.problem ? parser.problem : "malformed input");
                                break;
                        }
                        const yaml_mark_t *m = &parser.problem_mark;
                        r = diag_add(d, (unsigned) m->line + 1, (unsigned) m->column + 1,
                                     "YAML syntax error: %s%s%s",
                                     parser.problem ? parser.problem : "malformed input",
                                     parser.context ? " " : "", parser.context ? parser.context : "");
                        break;
                }
                switch (e.type) {
                case YAML_STREAM_END_EVENT:
                        done = true;
                        break;
                case YAML_DOCUMENT_START_EVENT:
                        if (++documents > 1)
                                r = diag_add(d, (unsigned) e.start_mark.line + 1,
                                             (unsigned) e.start_mark.column + 1,
                                             "only one YAML document is allowed");
                        break;
                case YAML_MAPPING_START_EVENT:
                        r = on_collection_start(&b, &e, YAMLTREE_NODE_MAPPING);
                        break;
                case YAML_SEQUENCE_START_EVENT:
                        r = on_collection_start(&b, &e, YAMLTREE_NODE_SEQUENCE);
                        break;
                case YAML_MAPPING_END_EVENT:
                case YAML_SEQUENCE_END_EVENT:
                        r = on_collection_end(&b);
                        break;
                case YAML_SCALAR_EVENT:
                        r = on_scalar(&b, &e);
                        break;
                case YAML_ALIAS_EVENT:
                        r = on_alias(&b, &e);
                        break;
                default:
                        break;
                }
                yaml_event_delete(&e);
        }
        yaml_parser_delete(&parser);
        builder_done(&b);
        if (r < 0) {
                yamltree_node_free(b.root);
                return r;
        }
        *ret = b.root;
        return 0;
}
