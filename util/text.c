/* SPDX-License-Identifier: MIT */
/*
 * One decoder for both questions (is it clean, how is it shown): a UTF-8 sequence is taken
 * whole when it is well formed (shortest form, no surrogate, at most U+10FFFF), else its first
 * byte stands alone and is escaped.
 */
#include <stdint.h>
#include <stdlib.h>

#include "util/io.h"
#include "util/text.h"

/* Length of the well-formed UTF-8 sequence at s (its code point in *ret), or 0. */
static size_t decode(const unsigned char *s, uint32_t *ret) {
        size_t len = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
                                                              : s[0] >= 0xf0 && s[0] <= 0xf4       ? 4
                                                                                                   : 0;
        if (len == 0)
                return 0;
        uint32_t c = len == 1 ? s[0] : s[0] & (0x7f >> len);
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                c = (c << 6) | (s[i] & 0x3f);
        }
        static const uint32_t shortest[] = { 0, 0, 0x80, 0x800, 0x10000 };
        if (c < shortest[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
                return 0;
        *ret = c;
        return len;
}

static bool is_control(uint32_t c) {
        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x200e || c == 0x200f ||
               (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

bool text_is_clean(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        while (*p) {
                uint32_t c;
                size_t len = decode(p, &c);
                if (len == 0 || is_control(c))
                        return false;
                p += len;
        }
        return true;
}

void text_put_shown(FILE *f, const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        while (*p) {
                uint32_t c = 0;
                size_t len = decode(p, &c);
                if (len == 0 || (c < 0x80 && is_control(c))) {
                        fprintf(f, "\\x%02x", *p);
                        len = 1;
                } else if (c == '\\')
                        fputs("\\\\", f);
                else if (is_control(c))
                        fprintf(f, "\\u{%04x}", c);
                else
                        fwrite(p, 1, len, f);
                p += len;
        }
}

char *text_shown(const char *s) {
        if (!s)
                return NULL;
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);
        if (!f)
                return NULL;
        text_put_shown(f, s);
        return memstream_text(f, &out);
}
