/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "tests/fuzz/fuzz.h"

void fuzz_apply_edits(uint8_t *buf, size_t size, const uint8_t *edits, size_t n_edits) {
        if (size == 0)
                return;
        while (n_edits >= 3) {
                size_t offset = (edits[0] | (size_t) edits[1] << 8) % size;
                size_t length = edits[2];
                edits += 3;
                n_edits -= 3;
                if (length > n_edits)
                        length = n_edits;
                size_t fits = size - offset < length ? size - offset : length;
                memcpy(buf + offset, edits, fits);
                edits += length;
                n_edits -= length;
        }
}
