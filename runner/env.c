/* SPDX-License-Identifier: MIT */
/*
 * Environment construction for children. Later layers override earlier ones key by key, so a
 * spec can set PATH or LANG for its program; LD_PRELOAD is always last and always ours.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/env.h"
#include "util/cleanup.h"
#include "util/strv.h"

const char *const env_whitelist[] = {
        "PATH",        "HOME",     "USER",       "LOGNAME", "LANG",       "LANGUAGE",
        "LC_ALL",      "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY",
        "LC_MESSAGES", "TZ",       "TERM",       "TMPDIR",  NULL,
};

const char *env_get(char *const *env, const char *key) {
        ssize_t i = strv_env_find(env, key, strlen(key));
        return i < 0 ? NULL : strchr(env[i], '=') + 1;
}

static int apply(char ***env, char *const *layer) {
        for (size_t i = 0; layer && layer[i]; i++) {
                const char *eq = strchr(layer[i], '=');
                if (!eq)
                        continue;
                _cleanup_free_ char *key = strndup(layer[i], (size_t) (eq - layer[i]));
                if (!key)
                        return -ENOMEM;
                int r = strv_env_set(env, key, eq + 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

int env_build(char *const *caller_env, char *const *spec_env, char *const *variant_env, const char *preload,
              char ***ret) {
        _cleanup_strv_free_ char **env = NULL;
        int r;

        for (size_t i = 0; env_whitelist[i]; i++) {
                const char *v = env_get(caller_env, env_whitelist[i]);
                if (v && (r = strv_env_set(&env, env_whitelist[i], v)) < 0)
                        return r;
        }
        if (!env_get(env, "PATH") && (r = strv_env_set(&env, "PATH", ENV_DEFAULT_PATH)) < 0)
                return r;
        if ((r = apply(&env, spec_env)) < 0 || (r = apply(&env, variant_env)) < 0)
                return r;

        char fd[16];
        snprintf(fd, sizeof(fd), "%d", ENV_METRICS_FD);
        if ((r = strv_env_set(&env, "ALLOCLAB_METRICS_FD", fd)) < 0)
                return r;
        if (preload && (r = strv_env_set(&env, "LD_PRELOAD", preload)) < 0)
                return r;
        if (!env && !(env = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret = TAKE_PTR(env);
        return 0;
}

size_t env_stack_size(char *const *env) {
        size_t size = sizeof(char *); /* the terminating NULL */
        for (char *const *e = env; e && *e; e++)
                size += strlen(*e) + 1 + sizeof(char *);
        return size;
}

int env_offset(char *const *env, size_t extra, char ***ret) {
        _cleanup_strv_free_ char **copy = strv_copy(env);
        if (!copy)
                return -ENOMEM;
        const char *pad = env_get(env, ENV_PAD_KEY);
        size_t have = pad ? strlen(pad) : 0;
        _cleanup_free_ char *value = malloc(have + extra + 1);
        if (!value)
                return -ENOMEM;
        memset(value, 'x', have + extra);
        value[have + extra] = 0;
        int r = strv_env_set(&copy, ENV_PAD_KEY, value);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(copy);
        return 0;
}

/* The name of the k-th pad variable (k from 1): ALLOCLAB_PAD, ALLOCLAB_PAD2, ... */
static void pad_key(unsigned k, char key[static 32]) {
        if (k == 1)
                snprintf(key, 32, "%s", ENV_PAD_KEY);
        else
                snprintf(key, 32, "%s%u", ENV_PAD_KEY, k);
}

/* What a pad variable with an empty value adds to env_stack_size(). */
static size_t pad_overhead(unsigned k) {
        char key[32];
        pad_key(k, key);
        return strlen(key) + 2 + sizeof(char *);
}

/* Adds exactly `need` bytes of env_stack_size() (at least pad_overhead(1)) in pad variables of at
 * most ENV_PAD_CHUNK bytes each. */
static int add_pad(char ***env, size_t need) {
        for (unsigned k = 1; need > 0; k++) {
                size_t fill = need - pad_overhead(k);
                if (fill > ENV_PAD_CHUNK) {
                        /* What is left must make a whole variable: at least an empty one. */
                        size_t rest = fill - ENV_PAD_CHUNK;
                        fill = ENV_PAD_CHUNK - (rest < pad_overhead(k + 1) ? pad_overhead(k + 1) - rest : 0);
                }
                _cleanup_free_ char *value = malloc(fill + 1);
                if (!value)
                        return -ENOMEM;
                memset(value, 'x', fill);
                value[fill] = 0;
                char key[32];
                pad_key(k, key);
                int r = strv_env_set(env, key, value);
                if (r < 0)
                        return r;
                need -= pad_overhead(k) + fill;
        }
        return 0;
}

int env_pad(char ***envs[], size_t n) {
        /* With an empty value the pad adds its key, "=", the terminator and a pointer. */
        const size_t minimum = pad_overhead(1);
        size_t target = 0;
        for (size_t i = 0; i < n; i++)
                if (envs[i] && *envs[i] && env_stack_size(*envs[i]) + minimum > target)
                        target = env_stack_size(*envs[i]) + minimum;
        for (size_t i = 0; i < n; i++) {
                if (!envs[i] || !*envs[i])
                        continue;
                int r = add_pad(envs[i], target - env_stack_size(*envs[i]));
                if (r < 0)
                        return r;
        }
        return 0;
}
