/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "configs/diag.h"

/*
 * A YAML document as a small tree that remembers where every node came from. Built from
 * libyaml's event stream (not its document loader) so that every limit is enforced while
 * parsing: input size, nesting depth, aliases, node count, and duplicate mapping keys.
 */

#define YAMLTREE_MAX_INPUT_BYTES (1024 * 1024)
#define YAMLTREE_MAX_DEPTH       16
#define YAMLTREE_MAX_ALIASES     32
#define YAMLTREE_MAX_NODES       100000

typedef enum YamlKind {
        YAMLTREE_NODE_SCALAR,
        YAMLTREE_NODE_SEQUENCE,
        YAMLTREE_NODE_MAPPING,
} YamlKind;

typedef struct YamlNode YamlNode;
struct YamlNode {
        YamlKind kind;
        unsigned line, column; /* 1-based */
        /* scalar */
        char *value;
        bool quoted; /* a quoted or block scalar is never null/bool/number-like */
        char quote;  /* '\'' or '"' for flow-quoted scalars, '|' for block ones, 0 for plain */
        /* sequence: items; mapping: keys[i] -> items[i] */
        YamlNode **items;
        YamlNode **keys;
        size_t n_items;
};

/*
 * Parses one YAML document. On success *ret is the root (NULL for an empty document) and 0 is
 * returned. On a syntax error or a limit, the problem is added to d and -EINVAL returned.
 */
int yamltree_parse(const char *data, size_t size, Diagnostics *d, YamlNode **ret);

YamlNode *yamltree_node_free(YamlNode *n);
static inline void yamltree_node_freep(YamlNode **n) {
        yamltree_node_free(*n);
}

/* True for a plain scalar that YAML reads as null: "", "~", "null", "Null", "NULL". */
bool yamltree_is_null(const YamlNode *n);

/* "a string", "a list", "a mapping", "null": for "expected X, got Y" messages. */
const char *yamltree_kind_name(const YamlNode *n);
