/* SPDX-License-Identifier: MIT */
/*
 * One decoder for every question (is it clean, how is it shown): a UTF-8 sequence is taken
 * whole when it is well formed (shortest form, no surrogate, at most U+10FFFF), else its first
 * byte stands alone and is escaped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/io.h"
#include "util/text.h"

/* Length of the UTF-8 sequence its first byte announces, or 0 for a byte that starts none. */
static size_t sequence_length(unsigned char b) {
        return b < 0x80                 ? 1
               : b >= 0xc2 && b <= 0xdf ? 2
               : b >= 0xe0 && b <= 0xef ? 3
               : b >= 0xf0 && b <= 0xf4 ? 4
                                        : 0;
}

/* Length of the well-formed sequence at s (n bytes available), its code point in *ret; 0 when it
 * is not well formed; SIZE_MAX when the n bytes are a well-formed beginning of one. */
static size_t decode(const unsigned char *s, size_t n, uint32_t *ret) {
        size_t len = sequence_length(s[0]);
        if (len == 0)
                return 0;
        uint32_t c = len == 1 ? s[0] : s[0] & (0x7f >> len);
        for (size_t i = 1; i < len; i++) {
                if (i == n)
                        return SIZE_MAX;
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

static bool is_noncharacter(uint32_t c) {
        return (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe;
}

static bool is_control(uint32_t c) {
        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x061c || c == 0x180e ||
               (c >= 0x200b && c <= 0x200f) || c == 0x2028 || c == 0x2029 || (c >= 0x202a && c <= 0x202e) ||
               (c >= 0x2060 && c <= 0x206f) || c == 0xfeff || is_noncharacter(c);
}

bool text_is_clean(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        size_t n = strlen(s);
        while (n > 0) {
                uint32_t c;
                size_t len = decode(p, n, &c);
                if (len == 0 || len == SIZE_MAX || is_control(c))
                        return false;
                p += len;
                n -= len;
        }
        return true;
}

/* Whether an ASCII byte passes as it is. */
static bool plain(unsigned char b, unsigned flags) {
        if (b >= 0x20 && b < 0x7f)
                return b != '\\' || !(flags & TEXT_ESCAPE_BACKSLASH);
        return (flags & TEXT_KEEP_LAYOUT) && (b == '\n' || b == '\t');
}

size_t text_show(FILE *f, const char *s, size_t n, unsigned flags) {
        const unsigned char *p = (const unsigned char *) s;
        while (n > 0) {
                /* Plain ASCII in one write: most text is nothing else. */
                size_t run = 0;
                while (run < n && p[run] < 0x80 && plain(p[run], flags))
                        run++;
                if (run > 0) {
                        fwrite(p, 1, run, f);
                        p += run;
                        n -= run;
                        continue;
                }
                uint32_t c = 0;
                size_t len = decode(p, n, &c);
                if (len == SIZE_MAX && (flags & TEXT_PARTIAL))
                        return n; /* the rest of a sequence comes with the next piece */
                if (len == 0 || len == SIZE_MAX || (c < 0x80 && c != '\\')) {
                        fprintf(f, "\\x%02x", *p);
                        len = 1;
                } else if (c == '\\')
                        fputs("\\\\", f);
                else if (is_control(c))
                        fprintf(f, "\\u{%04x}", c);
                else
                        fwrite(p, 1, len, f);
                p += len;
                n -= len;
        }
        return 0;
}

void text_put_shown(FILE *f, const char *s) {
        (void) text_show(f, s, strlen(s), TEXT_ESCAPE_BACKSLASH);
}

char *text_shown_as(const char *s, unsigned flags) {
        if (!s)
                return NULL;
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);
        if (!f)
                return NULL;
        (void) text_show(f, s, strlen(s), flags & ~TEXT_PARTIAL);
        return memstream_text(f, &out);
}

char *text_shown(const char *s) {
        return text_shown_as(s, TEXT_ESCAPE_BACKSLASH);
}

char *text_storable(const char *s, bool *oom) {
        char *copy = !s ? NULL : text_is_clean(s) ? strdup(s) : text_shown(s);
        *oom |= s && !copy;
        return copy;
}
