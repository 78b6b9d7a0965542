/* SPDX-License-Identifier: MIT */
#pragma once

#include "runner/allocator.h"

/*
 * Allocator options an allocator does not know. Allocators read their options from the
 * environment and ignore names they do not know, silently: a MIMALLOC_ name of a newer mimalloc,
 * a misspelt TCMALLOC_ flag, a GLIBC_TUNABLES entry the dynamic loader has no tunable for. Each
 * name is looked for in the file that would read it, as the string its reader compares with:
 * mimalloc's option table ("arena_eager_commit" for MIMALLOC_ARENA_EAGER_COMMIT), gperftools'
 * getenv names ("TCMALLOC_RELEASE_RATE"), the loader's tunable list ("glibc.malloc.arena_max").
 * A known name is always found; a typo that happens to be the tail of a known name is missed.
 * (jemalloc's MALLOC_CONF is checked by jemalloc itself, which says so on stderr.)
 */

/* The first option in env that the allocator a (or the dynamic loader, for GLIBC_TUNABLES)
 * does not know. Returns 0 with *ret_message NULL when all are known, 1 with *ret_message
 * naming the option and the file, or -ENOMEM. An unreadable file counts as knowing all. */
int options_unknown(const Allocator *a, char *const *env, char **ret_message);
