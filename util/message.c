/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>

#include "util/message.h"

int message_fail(char **ret, int r, const char *fmt, ...) {
        if (!ret)
                return r;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(ret, fmt, ap) < 0)
                *ret = NULL;
        va_end(ap);
        return r;
}
