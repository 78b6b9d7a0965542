/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/query.h"
#include "db/record.h"
#include "runner/host.h"
#include "runner/run.h"

/*
 * A run's recorded settings, listed once. The recorder (db/record.c) inserts a new run's row
 * from the fields that say how their value is obtained; the report reader (db/query-report.c)
 * reads every field with a member into the Report, and the run lists (db/query-runs.c) those in
 * Report.run; `show --format json` (cli/render-json.c) shows the fields with a JSON key in table
 * order, and the HTML report's Run table (cli/cmd-report.c) those with a label. A new setting is
 * one row here, its member in Report, its column in a migration (db/migrations.c) and the function
 * that obtains it; unit/fields checks that the schema and this table agree.
 */

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

/* What a new run is recorded from, with the ids of the rows it refers to. */
typedef struct RunSource {
        const Plan *plan;
        const Host *host;
        const RecordContext *ctx;
        int64_t experiment_id, spec_id, host_id;
} RunSource;

/* A value obtained for a new run: text (borrowed, or held in `owned`), an integer or a real;
 * `null` stores NULL. */
typedef struct RunValue {
        bool null;
        const char *text;
        char *owned;
        int64_t i;
        double d;
} RunValue;

typedef enum RunFieldType {
        RUN_FIELD_TEXT,         /* char *; SQL NULL read as "" */
        RUN_FIELD_TEXT_OR_NULL, /* char *; SQL NULL read as NULL */
        RUN_FIELD_JSON,         /* char * holding JSON or NULL; shown parsed */
        RUN_FIELD_INT,          /* int64_t */
        RUN_FIELD_U64,          /* uint64_t, stored as a signed 64-bit integer */
        RUN_FIELD_REAL,         /* double */
        RUN_FIELD_BOOL,         /* bool from an integer */
        RUN_FIELD_IS,           /* bool: the stored text is RunField.is */
        RUN_FIELD_CORRECTION,   /* Correction, stored by name (unknown names read as Holm's) */
} RunFieldType;

#define RUN_FIELD_NO_MEMBER SIZE_MAX

typedef struct RunField {
        const char *column; /* in `runs`; NULL for a value read from another table */
        RunFieldType type;
        size_t offset; /* of the member in Report, or RUN_FIELD_NO_MEMBER: recorded, never read */
        /* What the report's SELECT reads (over runs, experiments and hosts); NULL: runs.COLUMN */
        const char *select;
        /* A new run's value, or NULL: the column is not in the INSERT (written when the run ends,
         * or by insert_sql alone). Returns 0 or -ENOMEM. */
        int (*obtain)(const RunSource *src, RunValue *ret);
        /* The INSERT's expression for the column, "?" standing for the obtained value; NULL: "?" */
        const char *insert_sql;
        const char *is; /* RUN_FIELD_IS: the text that reads as true */
        /* The key in the JSON header of `show`, "host.NAME" inside its "host" object, or NULL */
        const char *json_key;
        /* How the JSON header shows it, or NULL: by its type (text, number, parsed JSON, null) */
        json_t *(*json)(const Report *rep, const struct RunField *f);
        /* The row of the HTML report's Run table and its place there (1 first), or NULL and 0 */
        const char *label;
        int label_rank;
} RunField;

extern const RunField run_fields[];
extern const size_t n_run_fields;

/* The field's member in rep. */
static inline void *run_field_in(const RunField *f, Report *rep) {
        return (char *) rep + f->offset;
}
static inline const void *run_field_of(const RunField *f, const Report *rep) {
        return (const char *) rep + f->offset;
}

/* Whether f is read into Report.run, the part of a run that run lists show. */
static inline bool run_field_in_summary(const RunField *f) {
        return f->offset != RUN_FIELD_NO_MEMBER && f->offset - offsetof(Report, run) < sizeof(RunSummary);
}

/* The field with this column or JSON key, or NULL. */
const RunField *run_field_by_column(const char *column);
const RunField *run_field_by_json_key(const char *key);

/* The SELECT's expressions of the fields read (summary_only: those in Report.run), comma
 * separated, in table order. NULL on ENOMEM. */
char *run_fields_select(bool summary_only);

/* Reads the fields run_fields_select(summary_only) listed from st's columns from `first` on
 * into object: a Report, or with summary_only a RunSummary. Returns 0, -ENOMEM. */
int run_fields_read(sqlite3_stmt *st, int first, bool summary_only, void *object);

/* Frees the text members of the fields read into object (as run_fields_read() takes it). */
void run_fields_free(void *object, bool summary_only);

/* A field's value in rep as the JSON header shows it (a new reference). */
json_t *run_field_json(const RunField *f, const Report *rep);

/* A field's value in rep as the report's Run table shows it (a number written into buf), or NULL
 * when it has none (a text not recorded). */
const char *run_field_text(const RunField *f, const Report *rep, char *buf, size_t size);

/* A list of strings as a JSON array's text (caller frees), or NULL on ENOMEM. */
char *json_strv_text(char *const *l);

/* Inserts a new run's row into `runs` from src; *ret_id gets its id. Returns 0, -ENOMEM, -EIO. */
int run_fields_insert(sqlite3 *db, const RunSource *src, int64_t *ret_id);
