/* SPDX-License-Identifier: MIT */
#pragma once

/* "Did you mean": the closest of candidates (NULL-terminated) to word within a small edit
 * distance (1 for words of up to 4 characters, else 2), or NULL. Names over 63 characters are
 * never close. */
const char *suggest_closest(const char *word, const char *const *candidates);
