/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A child's environment, built from empty: a short whitelist of the caller's variables that
 * programs need to behave normally (documented in docs/spec.md), then the spec's env, then the
 * variant's env, then LD_PRELOAD and ALLOCLAB_METRICS_FD. Nothing else of the caller leaks in:
 * no MALLOC_CONF, no LD_*, no GLIBC_TUNABLES unless the spec sets them.
 */

/* The caller variables passed through, NULL-terminated. */
extern const char *const env_whitelist[];

/* The fd number at which a child finds its metrics channel. */
#define ENV_METRICS_FD 3

/* PATH used when the caller has none. */
#define ENV_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/*
 * Builds the environment. spec_env and variant_env are expanded KEY=VALUE vectors (may be
 * NULL); preload is the file to preload or NULL. Returns 0 and a new strv in *ret, or -ENOMEM.
 */
int env_build(char *const *caller_env, char *const *spec_env, char *const *variant_env, const char *preload,
              char ***ret);

/* The variable that pads every child's environment to the same size. */
#define ENV_PAD_KEY "ALLOCLAB_PAD"

/* What an environment occupies at the top of a new process's stack: its strings with their
 * terminators, and the pointer array with its NULL. */
size_t env_stack_size(char *const *env);

/* The most bytes of one pad variable's value: with ENV_OFFSET_MAX added it stays far below the
 * kernel's limit on one variable (MAX_ARG_STRLEN, 128 KiB). */
#define ENV_PAD_CHUNK 65536

/*
 * Appends ALLOCLAB_PAD=xxx... to each of the n environments (NULL entries are skipped) so that
 * all of them have the same env_stack_size(): strings of different lengths shift the initial
 * stack, and that alone can change timings, so variants should differ only in what they set.
 * A pad longer than ENV_PAD_CHUNK goes on in ALLOCLAB_PAD2, ALLOCLAB_PAD3, ...
 * Returns 0 or -ENOMEM.
 */
int env_pad(char ***envs[], size_t n);

/* The largest offset of spec env_offset: random, in bytes (hyperfine draws from the same range). */
#define ENV_OFFSET_MAX 4096

/* A copy of a padded environment whose ALLOCLAB_PAD is `extra` bytes longer: the same shift of
 * the initial stack for every variant of a round. Returns 0 and a new strv, or -ENOMEM. */
int env_offset(char *const *env, size_t extra, char ***ret);

/* Value of key in an environment vector, or NULL. */
const char *env_get(char *const *env, const char *key);
