/* SPDX-License-Identifier: MIT */
/*
 * Collects loader diagnostics; formatting is here so every caller prints them the same way.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "configs/diag.h"
#include "util/cleanup.h"
#include "util/text.h"

int diag_add(Diagnostics *d, unsigned line, unsigned column, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = diag_addv(d, line, column, fmt, ap);
        va_end(ap);
        return r;
}

int diag_addv(Diagnostics *d, unsigned line, unsigned column, const char *fmt, va_list ap) {
        if (d->n_items >= DIAG_MAX_ITEMS) {
                d->n_dropped++;
                return -EINVAL;
        }
        Diag *items = realloc(d->items, (d->n_items + 1) * sizeof(Diag));
        if (!items)
                return -ENOMEM;
        d->items = items;

        /* One line whatever the spec's values hold: a newline in one would forge a diagnostic. */
        _cleanup_free_ char *raw = NULL;
        if (vasprintf(&raw, fmt, ap) < 0)
                return -ENOMEM;
        char *m = text_shown_as(raw, 0);
        if (!m)
                return -ENOMEM;
        d->items[d->n_items++] = (Diag){ .line = line, .column = column, .message = m };
        return -EINVAL;
}

char *diag_format(const Diagnostics *d, size_t i) {
        _cleanup_free_ char *file = text_shown_as(d->file ? d->file : "<spec>", 0);
        char *s;
        if (!file || asprintf(&s, "%s:%u:%u: %s", file, d->items[i].line, d->items[i].column,
                              d->items[i].message) < 0)
                return NULL;
        return s;
}

void diag_clear(Diagnostics *d) {
        for (size_t i = 0; i < d->n_items; i++)
                free(d->items[i].message);
        free(d->items);
        free(d->file);
        *d = (Diagnostics){};
}
