/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "configs/diag.h"
#include "configs/yamltree.h"
#include "util/units.h"

/*
 * Declarative schemas for YAML files: a table of fields (key, parser, offset, required) per
 * mapping, and parsers for the value types alloclab uses. Every problem goes into the loader's
 * Diagnostics with the position of the node at fault; parsers then return -EINVAL (or -ENOMEM)
 * and loading continues with the next key.
 */

typedef struct Loader {
        Diagnostics *diag;
        void *userdata; /* state of the particular kind of file being loaded */
} Loader;

/* Parses node n into field (the struct being filled + the field's offset). */
typedef int (*FieldParser)(Loader *l, const YamlNode *n, void *field);

/* The most keys a mapping's field table has (the spec's top level: about 45). */
#define SCHEMA_MAX_FIELDS 96

typedef struct Field {
        const char *key;
        FieldParser parse;
        size_t offset;
        bool required;
} Field;

/* Records a problem at n (line 1, column 1 when n is NULL). Returns -EINVAL or -ENOMEM. */
int schema_error(Loader *l, const YamlNode *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "unknown WHAT 'word'", with "(did you mean '...'?)" when a candidate is close. */
int schema_error_unknown(Loader *l, const YamlNode *n, const char *what, const char *word,
                         const char *const *candidates);

int schema_expect_scalar(Loader *l, const YamlNode *n, const char *what);
int schema_expect_kind(Loader *l, const YamlNode *n, YamlKind kind, const char *what);

/* 1-64 characters: letters, '_', digits after the first; with allow_punct also '-', '.' and
 * leading digits. */
bool schema_is_identifier(const char *s, bool allow_punct);

int schema_parse_uint(Loader *l, const YamlNode *n, const char *what, uint64_t min, uint64_t max,
                      uint64_t *ret);

/* A quantity with units (util/units.h) within [min, max], into a uint64_t. */
int schema_parse_quantity(Loader *l, const YamlNode *n, const char *what, const Unit *units,
                          double bare_factor, const char *example, uint64_t min, uint64_t max,
                          uint64_t *ret);

/* A scalar into a newly allocated char* field (replacing its previous value). */
int schema_parse_string(Loader *l, const YamlNode *n, void *field);

/* One of words (NULL-terminated); a word with ':' ("file:PATH") takes an argument, returned
 * in *ret_arg. */
int schema_parse_keyword(Loader *l, const YamlNode *n, const char *what, const char *const *words,
                         unsigned *ret, const char **ret_arg);

/* A mapping through a field table into base: unknown keys (with suggestions) and missing
 * required keys are errors. */
int schema_parse_fields(Loader *l, const YamlNode *n, const char *what, const Field *fields, size_t n_fields,
                        void *base);
