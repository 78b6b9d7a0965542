/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <string.h>

#include "util/suggest.h"

/* Levenshtein distance of short identifiers (SIZE_MAX past 63 characters). */
static size_t edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        if (la > 63 || lb > 63)
                return SIZE_MAX;
        size_t prev[64], cur[64];
        for (size_t j = 0; j <= lb; j++)
                prev[j] = j;
        for (size_t i = 1; i <= la; i++) {
                cur[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
                        size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
                        cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
                }
                memcpy(prev, cur, (lb + 1) * sizeof(size_t));
        }
        return prev[lb];
}

const char *suggest_closest(const char *word, const char *const *candidates) {
        const char *best = NULL;
        size_t best_d = SIZE_MAX, limit = strlen(word) <= 4 ? 1 : 2;
        for (size_t i = 0; candidates[i]; i++) {
                size_t d = edit_distance(word, candidates[i]);
                if (d <= limit && d < best_d) {
                        best = candidates[i];
                        best_d = d;
                }
        }
        return best;
}
