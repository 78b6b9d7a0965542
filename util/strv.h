/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/cleanup.h"

/*
 * NULL-terminated string vectors (argv, envp). Every strv here owns its strings.
 */

char **strv_free(char **l);
static inline void strv_freep(char ***l) {
        strv_free(*l);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)

size_t strv_length(char *const *l);

/* Appends a copy of s. Returns 0 or -ENOMEM; *l is unchanged on failure. */
int strv_append(char ***l, const char *s);

/* Appends s itself, taking ownership on success only. */
int strv_consume(char ***l, char *s);

/* Deep copy. Returns NULL on allocation failure (or when l is NULL). */
char **strv_copy(char *const *l);

/* Index of the "KEY=..." entry in an environment vector, or -1. */
ssize_t strv_env_find(char *const *l, const char *key, size_t key_len);

/* Sets KEY=VALUE, replacing an existing KEY. Returns 0 or -ENOMEM. */
int strv_env_set(char ***l, const char *key, const char *value);

/* Whether l holds s. */
bool strv_contains(char *const *l, const char *s);

/* Appends the non-empty items of a comma-separated list to *l. Returns 0 or -ENOMEM. */
int strv_append_list(char ***l, const char *list);
