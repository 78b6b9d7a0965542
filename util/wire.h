/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Typed binary messages between alloclab processes (runner -> daemon). Writers append
 * fixed-width little-endian integers, doubles and length-prefixed strings; readers take them in
 * the same order with bounds checks, and a message is only accepted when it was consumed
 * exactly (wire_reader_end()). A failure sticks: later reads return zeros and the final check
 * reports it, so decoders need no error test after every field.
 */

#define WIRE_MAX_STRING (1024 * 1024)

typedef struct WireWriter {
        uint8_t *data;
        size_t size, capacity;
        bool failed; /* out of memory */
} WireWriter;

void wire_put_u8(WireWriter *w, uint8_t v);
void wire_put_u32(WireWriter *w, uint32_t v);
void wire_put_u64(WireWriter *w, uint64_t v);
void wire_put_i64(WireWriter *w, int64_t v);
void wire_put_f64(WireWriter *w, double v);
/* s may be NULL (sent as absent, read back as NULL). */
void wire_put_str(WireWriter *w, const char *s);
void wire_put_bytes(WireWriter *w, const void *p, size_t n);

/* Frees the buffer and resets. */
void wire_writer_done(WireWriter *w);

typedef struct WireReader {
        const uint8_t *data;
        size_t size, pos;
        bool failed; /* short message, or a field out of range */
} WireReader;

static inline WireReader wire_reader(const void *data, size_t size) {
        return (WireReader){ .data = data, .size = size };
}

uint8_t wire_get_u8(WireReader *r);
uint32_t wire_get_u32(WireReader *r);
uint64_t wire_get_u64(WireReader *r);
int64_t wire_get_i64(WireReader *r);
double wire_get_f64(WireReader *r);
/* A new string (or NULL if sent as absent, or on failure). Strings containing NUL bytes or
 * longer than WIRE_MAX_STRING fail the reader. */
char *wire_get_str(WireReader *r);
/* Copies exactly n bytes into p (zeros on failure). */
void wire_get_bytes(WireReader *r, void *p, size_t n);

/* 0 when every field was read and nothing is left over; -EBADMSG otherwise. */
int wire_reader_end(const WireReader *r);
