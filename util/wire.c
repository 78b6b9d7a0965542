/* SPDX-License-Identifier: MIT */
/*
 * The wire format is deliberately dull: little-endian fixed widths, strings as a u32 length
 * (UINT32_MAX for absent) and bytes. Both ends are the same build, but nothing read is trusted:
 * every length is checked against what is left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/wire.h"

static void put(WireWriter *w, const void *p, size_t n) {
        if (w->failed)
                return;
        if (w->size + n > w->capacity) {
                size_t cap = w->capacity ? w->capacity : 256;
                while (cap < w->size + n)
                        cap *= 2;
                uint8_t *d = realloc(w->data, cap);
                if (!d) {
                        w->failed = true;
                        return;
                }
                w->data = d;
                w->capacity = cap;
        }
        memcpy(w->data + w->size, p, n);
        w->size += n;
}

static void put_le(WireWriter *w, uint64_t v, unsigned bytes) {
        uint8_t b[8];
        for (unsigned i = 0; i < bytes; i++)
                b[i] = (uint8_t) (v >> (8 * i));
        put(w, b, bytes);
}

void wire_put_u8(WireWriter *w, uint8_t v) {
        put_le(w, v, 1);
}

void wire_put_u32(WireWriter *w, uint32_t v) {
        put_le(w, v, 4);
}

void wire_put_u64(WireWriter *w, uint64_t v) {
        put_le(w, v, 8);
}

void wire_put_i64(WireWriter *w, int64_t v) {
        put_le(w, (uint64_t) v, 8);
}

void wire_put_f64(WireWriter *w, double v) {
        uint64_t bits;
        memcpy(&bits, &v, sizeof(bits));
        put_le(w, bits, 8);
}

void wire_put_str(WireWriter *w, const char *s) {
        if (!s) {
                wire_put_u32(w, UINT32_MAX);
                return;
        }
        size_t n = strlen(s);
        if (n > WIRE_MAX_STRING)
                n = WIRE_MAX_STRING;
        wire_put_u32(w, (uint32_t) n);
        put(w, s, n);
}

void wire_put_bytes(WireWriter *w, const void *p, size_t n) {
        put(w, p, n);
}

void wire_writer_done(WireWriter *w) {
        free(w->data);
        *w = (WireWriter){};
}

static const uint8_t *take(WireReader *r, size_t n) {
        if (r->failed || n > r->size - r->pos) {
                r->failed = true;
                return NULL;
        }
        const uint8_t *p = r->data + r->pos;
        r->pos += n;
        return p;
}

static uint64_t get_le(WireReader *r, unsigned bytes) {
        const uint8_t *p = take(r, bytes);
        uint64_t v = 0;
        for (unsigned i = 0; p && i < bytes; i++)
                v |= (uint64_t) p[i] << (8 * i);
        return v;
}

uint8_t wire_get_u8(WireReader *r) {
        return (uint8_t) get_le(r, 1);
}

uint32_t wire_get_u32(WireReader *r) {
        return (uint32_t) get_le(r, 4);
}

uint64_t wire_get_u64(WireReader *r) {
        return get_le(r, 8);
}

int64_t wire_get_i64(WireReader *r) {
        return (int64_t) get_le(r, 8);
}

double wire_get_f64(WireReader *r) {
        uint64_t bits = get_le(r, 8);
        double v;
        memcpy(&v, &bits, sizeof(v));
        return v;
}

char *wire_get_str(WireReader *r) {
        uint32_t n = wire_get_u32(r);
        if (r->failed || n == UINT32_MAX)
                return NULL;
        if (n > WIRE_MAX_STRING) {
                r->failed = true;
                return NULL;
        }
        const uint8_t *p = take(r, n);
        if (!p || memchr(p, 0, n)) {
                r->failed = true;
                return NULL;
        }
        char *s = strndup((const char *) p, n);
        if (!s)
                r->failed = true;
        return s;
}

void wire_get_bytes(WireReader *r, void *p, size_t n) {
        const uint8_t *src = take(r, n);
        if (src)
                memcpy(p, src, n);
        else
                memset(p, 0, n);
}

int wire_reader_end(const WireReader *r) {
        return r->failed || r->pos != r->size ? -EBADMSG : 0;
}
