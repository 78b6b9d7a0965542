/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Answers of lookups remembered for moments: the result (0 or -errno) and an optional string,
 * under a string key. The daemon checks a burst of one submitter's specs with one memo and one
 * file identity, so that each library, directory and program is looked for once, not once per
 * submission (runner/plan.h). A full memo remembers nothing more; it never evicts.
 */

#define MEMO_SIZE 32

typedef struct Memo {
        size_t n;
        struct {
                char *key;
                int result;
                char *value; /* may be NULL */
        } entries[MEMO_SIZE];
} Memo;

/* A lookup: 0 with *ret_value (a new string, or NULL), or -errno. */
typedef int (*MemoLookup)(const void *userdata, char **ret_value);

/* key's answer: remembered in m, else lookup's (then remembered). m may be NULL: lookup answers.
 * ret_value may be NULL when the value is not wanted; else it gets a new string (or NULL).
 * Returns the lookup's result, or -ENOMEM. */
int memo_lookup(Memo *m, const char *key, MemoLookup lookup, const void *userdata, char **ret_value);

void memo_clear(Memo *m);
