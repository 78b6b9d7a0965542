/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Diagnostics of a loaded file: every problem found, each with a 1-based line and column, in
 * the order found. The loader keeps going after a problem where it can, so one `alloclab check`
 * shows all of them. Callers print them as "FILE:LINE:COL: message".
 */

#define DIAG_MAX_ITEMS 50 /* more than this is noise; the rest is counted, not stored */

typedef struct Diag {
        unsigned line;
        unsigned column;
        char *message;
} Diag;

typedef struct Diagnostics {
        char *file; /* as the user named it */
        Diag *items;
        size_t n_items;
        size_t n_dropped;
} Diagnostics;

/* Records a problem. Returns -EINVAL (so callers can `return diag_add(...)`) or -ENOMEM. */
int diag_add(Diagnostics *d, unsigned line, unsigned column, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* The same with a va_list. */
int diag_addv(Diagnostics *d, unsigned line, unsigned column, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));

/* Formats item i as "FILE:LINE:COL: message" into a new string, or NULL on -ENOMEM. */
char *diag_format(const Diagnostics *d, size_t i);

void diag_clear(Diagnostics *d);
