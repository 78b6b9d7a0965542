/* SPDX-License-Identifier: MIT */
/*
 * What the run field table (run-field.c) drives: the runs INSERT of a new run, the SELECT and
 * reading of the report and the run lists, and a field's value in the JSON header and the
 * report's Run table. Nothing here names a field.
 */
#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/run-field.h"
#include "db/sql.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/text.h"

#define NO_MEMBER RUN_FIELD_NO_MEMBER

static const RunField *find(const char *column, const char *json_key) {
        for (size_t i = 0; i < n_run_fields; i++) {
                const RunField *f = &run_fields[i];
                if ((column && f->column && strcmp(f->column, column) == 0) ||
                    (json_key && f->json_key && strcmp(f->json_key, json_key) == 0))
                        return f;
        }
        return NULL;
}

const RunField *run_field_by_column(const char *column) {
        return find(column, NULL);
}

const RunField *run_field_by_json_key(const char *key) {
        return find(NULL, key);
}

static bool is_read(const RunField *f, bool summary_only) {
        return f->offset != NO_MEMBER && (!summary_only || run_field_in_summary(f));
}

/* The member of f in object: a Report, or with summary_only the RunSummary of one. */
static void *member(const RunField *f, void *object, bool summary_only) {
        return (char *) object + f->offset - (summary_only ? offsetof(Report, run) : 0);
}

char *run_fields_select(bool summary_only) {
        char *sql = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&sql, &size);
        if (!out)
                return NULL;
        const char *comma = "";
        for (size_t i = 0; i < n_run_fields; i++) {
                const RunField *f = &run_fields[i];
                if (!is_read(f, summary_only))
                        continue;
                if (f->select)
                        fprintf(out, "%s%s", comma, f->select);
                else
                        fprintf(out, "%sruns.%s", comma, f->column);
                comma = ", ";
        }
        return memstream_text(out, &sql);
}

static bool is_text(const RunField *f) {
        return f->type == RUN_FIELD_TEXT || f->type == RUN_FIELD_TEXT_OR_NULL || f->type == RUN_FIELD_JSON;
}

int run_fields_read(sqlite3_stmt *st, int first, bool summary_only, void *object) {
        int col = first;
        for (size_t i = 0; i < n_run_fields; i++) {
                const RunField *f = &run_fields[i];
                if (!is_read(f, summary_only))
                        continue;
                void *m = member(f, object, summary_only);
                /* the text of a field stored by name (a number is not turned into text first) */
                const char *t = f->type == RUN_FIELD_IS || f->type == RUN_FIELD_CORRECTION
                                        ? (const char *) sqlite3_column_text(st, col)
                                        : NULL;
                switch (f->type) {
                case RUN_FIELD_TEXT:
                        if (!(*(char **) m = sql_text(st, col)))
                                return -ENOMEM;
                        break;
                case RUN_FIELD_TEXT_OR_NULL:
                case RUN_FIELD_JSON:
                        *(char **) m = sql_text_or_null(st, col);
                        if (!*(char **) m && sqlite3_column_type(st, col) != SQLITE_NULL)
                                return -ENOMEM;
                        break;
                case RUN_FIELD_INT:
                        *(int64_t *) m = sqlite3_column_int64(st, col);
                        break;
                case RUN_FIELD_U64:
                        *(uint64_t *) m = (uint64_t) sqlite3_column_int64(st, col);
                        break;
                case RUN_FIELD_REAL:
                        *(double *) m = sqlite3_column_double(st, col);
                        break;
                case RUN_FIELD_BOOL:
                        *(bool *) m = sqlite3_column_int(st, col) != 0;
                        break;
                case RUN_FIELD_IS:
                        *(bool *) m = t && strcmp(t, f->is) == 0;
                        break;
                case RUN_FIELD_CORRECTION: {
                        int c = t ? correction_from_string(t) : -1;
                        *(Correction *) m = c >= 0 ? (Correction) c : CORRECTION_HOLM;
                        break;
                }
                }
                col++;
        }
        return 0;
}

void run_fields_free(void *object, bool summary_only) {
        for (size_t i = 0; i < n_run_fields; i++) {
                const RunField *f = &run_fields[i];
                if (is_read(f, summary_only) && is_text(f)) {
                        char **m = member(f, object, summary_only);
                        free(*m);
                        *m = NULL;
                }
        }
}

json_t *run_field_json(const RunField *f, const Report *rep) {
        if (f->json)
                return f->json(rep, f);
        const void *m = run_field_of(f, rep);
        const char *t = is_text(f) ? *(char *const *) m : NULL;
        switch (f->type) {
        case RUN_FIELD_TEXT:
        case RUN_FIELD_TEXT_OR_NULL:
                return t ? json_string(t) : json_null();
        case RUN_FIELD_JSON: {
                json_t *parsed = t ? json_loads(t, 0, NULL) : NULL;
                return parsed ? parsed : json_null();
        }
        case RUN_FIELD_INT:
                return json_integer((json_int_t) * (const int64_t *) m);
        case RUN_FIELD_U64:
                return json_integer((json_int_t) * (const uint64_t *) m);
        case RUN_FIELD_REAL:
                return json_real(*(const double *) m);
        case RUN_FIELD_BOOL:
        case RUN_FIELD_IS:
                return json_boolean(*(const bool *) m);
        case RUN_FIELD_CORRECTION:
                return json_string(correction_to_string(*(const Correction *) m));
        }
        return json_null();
}

const char *run_field_text(const RunField *f, const Report *rep, char *buf, size_t size) {
        const void *m = run_field_of(f, rep);
        switch (f->type) {
        case RUN_FIELD_TEXT:
        case RUN_FIELD_TEXT_OR_NULL:
        case RUN_FIELD_JSON:
                return *(char *const *) m;
        case RUN_FIELD_INT:
                snprintf(buf, size, "%lld", (long long) *(const int64_t *) m);
                break;
        case RUN_FIELD_U64:
                snprintf(buf, size, "%llu", (unsigned long long) *(const uint64_t *) m);
                break;
        case RUN_FIELD_REAL:
                snprintf(buf, size, "%g", *(const double *) m);
                break;
        case RUN_FIELD_BOOL:
        case RUN_FIELD_IS:
                snprintf(buf, size, "%s", *(const bool *) m ? "yes" : "no");
                break;
        case RUN_FIELD_CORRECTION:
                snprintf(buf, size, "%s", correction_to_string(*(const Correction *) m));
                break;
        }
        return buf;
}

static bool is_inserted(const RunField *f) {
        return f->column && (f->obtain || f->insert_sql);
}

static char *insert_sql(void) {
        char *sql = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&sql, &size);
        if (!out)
                return NULL;
        fputs("INSERT INTO runs (", out);
        const char *comma = "";
        for (size_t i = 0; i < n_run_fields; i++)
                if (is_inserted(&run_fields[i])) {
                        fprintf(out, "%s%s", comma, run_fields[i].column);
                        comma = ", ";
                }
        fputs(") VALUES (", out);
        comma = "";
        for (size_t i = 0; i < n_run_fields; i++)
                if (is_inserted(&run_fields[i])) {
                        fprintf(out, "%s%s", comma, run_fields[i].insert_sql ?: "?");
                        comma = ", ";
                }
        fputs(")", out);
        return memstream_text(out, &sql);
}

/* Binds f's value for src as parameter i of st. Text from outside (a file name, a label, a
 * variable) is stored as text_storable() keeps it. */
static int bind(sqlite3_stmt *st, int i, const RunField *f, const RunSource *src) {
        RunValue v = {};
        int r = f->obtain(src, &v);
        _cleanup_free_ char *owned = v.owned;
        if (r < 0)
                return r;
        if (v.null)
                return sqlite3_bind_null(st, i) == SQLITE_OK ? 0 : -ENOMEM;
        bool oom = false;
        _cleanup_free_ char *stored = is_text(f) ? text_storable(v.text, &oom) : NULL;
        if (oom)
                return -ENOMEM;
        switch (f->type) {
        case RUN_FIELD_INT:
        case RUN_FIELD_U64:
        case RUN_FIELD_BOOL:
                r = sqlite3_bind_int64(st, i, v.i);
                break;
        case RUN_FIELD_REAL:
                r = sqlite3_bind_double(st, i, v.d);
                break;
        default:
                r = sqlite3_bind_text(st, i, stored ? stored : v.text, -1, SQLITE_TRANSIENT);
        }
        return r == SQLITE_OK ? 0 : -ENOMEM;
}

int run_fields_insert(sqlite3 *db, const RunSource *src, int64_t *ret_id) {
        _cleanup_free_ char *sql = insert_sql();
        if (!sql)
                return -ENOMEM;
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                return sql_failed(db);
        int r = 0, i = 1;
        for (size_t k = 0; k < n_run_fields && r >= 0; k++) {
                const RunField *f = &run_fields[k];
                if (is_inserted(f) && f->obtain)
                        r = bind(st, i++, f, src);
        }
        if (r >= 0)
                r = sql_step_bound(db, st, ret_id);
        sqlite3_finalize(st);
        return r;
}
