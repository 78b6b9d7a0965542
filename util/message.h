/* SPDX-License-Identifier: MIT */
#pragma once

/* Returns r, the error, after formatting what went wrong into *ret (when ret is not NULL; *ret is
 * NULL when out of memory): how a function gives an error code with the words for it. */
int message_fail(char **ret, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
