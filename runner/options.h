/* SPDX-License-Identifier: MIT */
#pragma once

#include "runner/allocator.h"

/*
 * Allocator options an allocator does not know. Allocators read their options from the
 * environment and ignore names they do not know, silently: a MIMALLOC_ name of a newer mimalloc
 * or a misspelt one, a misspelt TCMALLOC_ flag, a GLIBC_TUNABLES entry the dynamic loader has
 * no tunable for. Each name is matched whole against the names its reader knows, as the reader
 * lists them: mimalloc's option table as MIMALLOC_VERBOSE=1 prints it ("option 'eager_commit'"),
 * with the deprecated names it still takes and says so; the loader's `--list-tunables`
 * ("glibc.malloc.arena_max"); gperftools' getenv names ("TCMALLOC_RELEASE_RATE") among the
 * strings of its file. Where a reader cannot be asked, nothing is rejected. (jemalloc checks
 * MALLOC_CONF itself and says so on stderr: options_complaint().)
 */

/* The options in env that the allocator a (or the dynamic loader, for GLIBC_TUNABLES) does not
 * know. Returns 0 with *ret_message NULL when all are known, else their count with *ret_message
 * naming each and the file ("MIMALLOC_STATS is not an option of FILE (version V): it would be
 * ignored"; several joined by "; ") and, unless ret_variable is NULL, *ret_variable the first
 * variable of env that names one ("MIMALLOC_STATS", "GLIBC_TUNABLES"), or -ENOMEM. */
int options_unknown(const Allocator *a, char *const *env, char **ret_message, char **ret_variable);

/* Whether the dynamic loader has a tunable of this name ("glibc.malloc.arena_max"); true when it
 * cannot be asked. */
bool options_tunable_known(const char *name);

/* What the allocator says of its configuration when started with envp (a child of /bin/sh -c :,
 * which allocates: the variant's environment, its LD_PRELOAD included), in its own words
 * (options_complaint()), or NULL: jemalloc checks MALLOC_CONF itself as the program starts,
 * Scudo SCUDO_OPTIONS at its first allocation. */
char *options_rejected(char *const *envp);

/* The first line of an allocator's stderr that complains about its configuration, in its own
 * words ("<jemalloc>: Invalid conf pair: narenaz:1"), or NULL. Given the environment it ran
 * with (envp, else NULL), a key jemalloc does not know gets the one it may have meant, from the
 * names that jemalloc lists ("... (did you mean narenas?)"). */
char *options_complaint(const char *stderr_text, char *const *envp);

/* Whether program (a path) serves most allocations from an allocator layer of its own that the
 * allocator under test never sees, given the value of PYTHONMALLOC in its environment (NULL:
 * unset): what to say of it ("serves objects up to 512 bytes from pymalloc's arenas ...; set
 * PYTHONMALLOC=malloc to route them to malloc"), or NULL. CPython is the one told by name. */
const char *options_own_layer(const char *program, const char *pythonmalloc);
