/* SPDX-License-Identifier: MIT */
/* A linear table: a memo holds the few files a burst of specs names. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/memo.h"

int memo_lookup(Memo *m, const char *key, MemoLookup lookup, const void *userdata, char **ret_value) {
        char *value = NULL;
        int r;
        size_t i = 0;
        while (m && i < m->n && strcmp(m->entries[i].key, key) != 0)
                i++;
        if (m && i < m->n) {
                r = m->entries[i].result;
                if (ret_value && m->entries[i].value && !(value = strdup(m->entries[i].value)))
                        return -ENOMEM;
        } else {
                r = lookup(userdata, &value);
                if (r == -ENOMEM)
                        return r;
                if (m && m->n < MEMO_SIZE) {
                        char *k = strdup(key), *v = value ? strdup(value) : NULL;
                        if (!k || (value && !v)) {
                                free(k);
                                free(v);
                                free(value);
                                return -ENOMEM;
                        }
                        m->entries[m->n++] = (typeof(m->entries[0])){ .key = k, .result = r, .value = v };
                }
        }
        if (ret_value)
                *ret_value = value;
        else
                free(value);
        return r;
}

void memo_clear(Memo *m) {
        for (size_t i = 0; i < m->n; i++) {
                free(m->entries[i].key);
                free(m->entries[i].value);
        }
        *m = (Memo){};
}
