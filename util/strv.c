/* SPDX-License-Identifier: MIT */
/*
 * String vectors: the shape of argv and envp. Kept tiny on purpose; callers that need
 * ordering or uniqueness build it on top (see strv_env_set()).
 */
#include <errno.h>
#include <string.h>
#include <sys/types.h>

#include "util/strv.h"

char **strv_free(char **l) {
        if (!l)
                return NULL;
        for (char **p = l; *p; p++)
                free(*p);
        free(l);
        return NULL;
}

size_t strv_length(char *const *l) {
        size_t n = 0;
        while (l && l[n])
                n++;
        return n;
}

int strv_consume(char ***l, char *s) {
        size_t n = strv_length(*l);
        char **m = realloc(*l, (n + 2) * sizeof(char *));
        if (!m)
                return -ENOMEM;
        m[n] = s;
        m[n + 1] = NULL;
        *l = m;
        return 0;
}

int strv_append(char ***l, const char *s) {
        char *c = strdup(s);
        if (!c)
                return -ENOMEM;
        int r = strv_consume(l, c);
        if (r < 0)
                free(c);
        return r;
}

char **strv_copy(char *const *l) {
        if (!l)
                return NULL;
        char **c = calloc(strv_length(l) + 1, sizeof(char *));
        if (!c)
                return NULL;
        for (size_t i = 0; l[i]; i++)
                if (!(c[i] = strdup(l[i])))
                        return strv_free(c);
        return c;
}

ssize_t strv_env_find(char *const *l, const char *key, size_t key_len) {
        for (size_t i = 0; l && l[i]; i++)
                if (strncmp(l[i], key, key_len) == 0 && l[i][key_len] == '=')
                        return (ssize_t) i;
        return -1;
}

int strv_env_set(char ***l, const char *key, const char *value) {
        char *kv;
        if (asprintf(&kv, "%s=%s", key, value) < 0)
                return -ENOMEM;
        ssize_t i = strv_env_find(*l, key, strlen(key));
        if (i >= 0) {
                free((*l)[i]);
                (*l)[i] = kv;
                return 0;
        }
        int r = strv_consume(l, kv);
        if (r < 0)
                free(kv);
        return r;
}

bool strv_contains(char *const *l, const char *s) {
        for (size_t i = 0; l && l[i]; i++)
                if (strcmp(l[i], s) == 0)
                        return true;
        return false;
}

int strv_append_list(char ***l, const char *list) {
        for (const char *p = list;; p++) {
                size_t n = strcspn(p, ",");
                char *item = n ? strndup(p, n) : NULL;
                if (n && (!item || strv_consume(l, item) < 0))
                        return -ENOMEM;
                p += n;
                if (!*p)
                        return 0;
        }
}
