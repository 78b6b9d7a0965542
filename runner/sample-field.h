/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "runner/run.h"

/*
 * A sample's fields, listed once. The stream (runner/stream.c) carries every field from the
 * runner process to the recorder; the recorder (db/record.c) stores each field with a column in
 * that column of `samples`; `alloclab export --what samples` (db/export.c) shows the exported
 * ones in table order. A new field is one row here, its member in Sample and its column in a
 * migration (db/migrations.c); unit/fields checks that the schema and this table agree, and
 * unit/stream that every field survives the stream.
 *
 * Not in the table: the step a sample belongs to (its key: run, cell, variant, phase, round,
 * step), reported metrics and the probe's report, which have tables of their own.
 */

typedef enum SampleFieldType {
        SAMPLE_FIELD_BOOL,   /* bool; exported as true/false */
        SAMPLE_FIELD_INT,    /* int */
        SAMPLE_FIELD_U32,    /* uint32_t */
        SAMPLE_FIELD_U64,    /* uint64_t (stored as a signed 64-bit integer) */
        SAMPLE_FIELD_I64,    /* int64_t */
        SAMPLE_FIELD_LONG,   /* long (struct rusage) */
        SAMPLE_FIELD_DOUBLE, /* double */
        SAMPLE_FIELD_TEXT,   /* char *, owned by the sample; NULL stored as NULL */
        SAMPLE_FIELD_USEC,   /* struct timeval, stored in microseconds */
        SAMPLE_FIELD_DIGEST, /* a Digest's hex text; "" stored as NULL */
        SAMPLE_FIELD_SOURCE, /* bool: "cgroup" when true, else "rusage" */
        SAMPLE_FIELD_STATUS, /* SampleStatus, stored by name */
        SAMPLE_FIELD_END,    /* SpawnEnd */
} SampleFieldType;

typedef struct SampleField {
        const char *column; /* in `samples`; NULL: carried to the recorder, not stored */
        SampleFieldType type;
        size_t offset; /* of the member in Sample */
        /* NULL: always stored; else the column is NULL when this says the value means nothing
         * (an exit code of a killed child, the quiet guard's readings when it was not asked) */
        bool (*meaningful)(const Sample *s);
        bool exported; /* a column of export --what samples; the order here is the export's */
} SampleField;

extern const SampleField sample_fields[];
extern const size_t n_sample_fields;

/* The field's member in s. */
static inline void *sample_field_in(const SampleField *f, Sample *s) {
        return (char *) s + f->offset;
}
static inline const void *sample_field_of(const SampleField *f, const Sample *s) {
        return (const char *) s + f->offset;
}

/* Whether f's value in s is stored (not NULL). */
static inline bool sample_field_meaningful(const SampleField *f, const Sample *s) {
        return !f->meaningful || f->meaningful(s);
}
