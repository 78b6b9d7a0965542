/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/export.h"
#include "db/sql.h"
#include "runner/sample-field.h"
#include "runner/timeline.h"
#include "util/cleanup.h"
#include "util/io.h"

static json_t *column_json(sqlite3_stmt *st, int i) {
        switch (sqlite3_column_type(st, i)) {
        case SQLITE_INTEGER:
                return json_integer(sqlite3_column_int64(st, i));
        case SQLITE_FLOAT:
                return json_real(sqlite3_column_double(st, i));
        case SQLITE_NULL:
                return json_null();
        default:
                return json_string((const char *) sqlite3_column_text(st, i));
        }
}

/* The columns before the sample's fields: its key, with names instead of ids. */
static const struct {
        const char *name;
        const char *expression;
} key_columns[] = {
        { "run_id", "s.run_id" },   { "experiment", "x.name" }, { "cell", "c.label" },
        { "variant", "v.name" },    { "allocator", "a.name" },  { "phase", "s.phase" },
        { "round", "s.round + 1" },
};

/* The key columns, every exported field of runner/sample-field.c in its order, then the cell's
 * parameters and the sample id (for the metrics). */
static char *sample_select_sql(void) {
        char *sql = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&sql, &size);
        if (!f)
                return NULL;
        fputs("SELECT", f);
        for (size_t i = 0; i < ELEMENTSOF(key_columns); i++)
                fprintf(f, "%s %s", i ? "," : "", key_columns[i].expression);
        for (size_t i = 0; i < n_sample_fields; i++)
                if (sample_fields[i].exported)
                        fprintf(f, ", s.%s", sample_fields[i].column);
        fputs(", c.params, s.id FROM samples s JOIN runs r ON r.id = s.run_id"
              " JOIN experiments x ON x.id = r.experiment_id JOIN cells c ON c.id = s.cell_id"
              " JOIN variants v ON v.id = s.variant_id JOIN allocators a ON a.id = v.allocator_id"
              " WHERE s.run_id = ?1 ORDER BY s.id",
              f);
        return memstream_text(f, &sql);
}

typedef struct SampleTable {
        json_t *columns;   /* names, in order */
        json_t *params;    /* parameter names, in first-seen order */
        json_t *metrics;   /* reported metric names, sorted */
        json_t *rows;      /* the rows, in sample order */
        json_t *by_sample; /* sample id -> row, for the metrics */
} SampleTable;

/* "param:NAME", "metric:NAME": the column of a parameter or a reported metric. */
static const char *prefixed(char *buf, size_t size, const char *prefix, const json_t *name) {
        snprintf(buf, size, "%s:%s", prefix, json_string_value(name));
        return buf;
}

static int row_param_names(sqlite3_stmt *st, void *userdata) {
        SampleTable *t = userdata;
        json_t *params = json_loads((const char *) sqlite3_column_text(st, 0), 0, NULL);
        if (!json_is_object(params)) {
                json_decref(params);
                return -EBADMSG;
        }
        const char *key;
        json_t *value;
        json_object_foreach(params, key, value) {
                size_t i;
                json_t *known;
                bool seen = false;
                json_array_foreach(t->params, i, known) seen |= strcmp(json_string_value(known), key) == 0;
                if (!seen)
                        json_array_append_new(t->params, json_string(key));
        }
        json_decref(params);
        return 0;
}

static int row_metric_name(sqlite3_stmt *st, void *userdata) {
        SampleTable *t = userdata;
        return json_array_append_new(t->metrics, column_json(st, 0)) < 0 ? -ENOMEM : 0;
}

static int row_sample(sqlite3_stmt *st, void *userdata) {
        SampleTable *t = userdata;
        json_t *row = json_object();
        if (!row)
                return -ENOMEM;
        int n = 0;
        for (size_t i = 0; i < ELEMENTSOF(key_columns); i++, n++)
                json_object_set_new(row, key_columns[i].name, column_json(st, n));
        for (size_t i = 0; i < n_sample_fields; i++) {
                const SampleField *f = &sample_fields[i];
                if (!f->exported)
                        continue;
                bool flag = f->type == SAMPLE_FIELD_BOOL && sqlite3_column_type(st, n) != SQLITE_NULL;
                json_object_set_new(row, f->column,
                                    flag ? json_boolean(sqlite3_column_int(st, n)) : column_json(st, n));
                n++;
        }

        json_t *params = json_loads((const char *) sqlite3_column_text(st, (int) n), 0, NULL);
        size_t i;
        json_t *name;
        char key[256];
        json_array_foreach(t->params, i, name) {
                json_t *value = json_object_get(params, json_string_value(name));
                json_object_set(row, prefixed(key, sizeof(key), "param", name), value ? value : json_null());
        }
        json_decref(params);
        json_array_foreach(t->metrics, i, name)
                json_object_set_new(row, prefixed(key, sizeof(key), "metric", name), json_null());

        char id[32];
        snprintf(id, sizeof(id), "%lld", (long long) sqlite3_column_int64(st, (int) n + 1));
        json_object_set(t->by_sample, id, row);
        return json_array_append_new(t->rows, row) < 0 ? -ENOMEM : 0;
}

static int row_metric_value(sqlite3_stmt *st, void *userdata) {
        SampleTable *t = userdata;
        char id[32], key[256];
        snprintf(id, sizeof(id), "%lld", (long long) sqlite3_column_int64(st, 0));
        json_auto_t *name = column_json(st, 1);
        prefixed(key, sizeof(key), "metric", name);
        json_t *row = json_object_get(t->by_sample, id);
        if (!row)
                return -EBADMSG;
        return json_object_set_new(row, key, json_real(sqlite3_column_double(st, 2))) < 0 ? -ENOMEM : 0;
}

/* memory_timeline's readings of a sample as the JSON rows' "memory_timeline": {source, period_ns, thinned,
 * points: [[t_ms, KiB], ...], marks: [{name, t_ms}] or null}; CSV has only its figures (metric:). */
static int row_timeline(sqlite3_stmt *st, void *userdata) {
        SampleTable *t = userdata;
        char id[32];
        snprintf(id, sizeof(id), "%lld", (long long) sqlite3_column_int64(st, 0));
        json_t *row = json_object_get(t->by_sample, id);
        if (!row)
                return -EBADMSG;
        _cleanup_(timeline_done) Timeline tl = {};
        int r = timeline_decode(sqlite3_column_blob(st, 3), (size_t) sqlite3_column_bytes(st, 3),
                                (const char *) sqlite3_column_text(st, 4), &tl);
        if (r < 0)
                return r;
        bool oom;
        json_t *points = json_array(), *marks = timeline_marks_json(&tl, &oom);
        for (size_t i = 0; points && i < tl.n_points; i++)
                json_array_append_new(points, json_pack("[I, I]", (json_int_t) tl.points[i].t_ms,
                                                        (json_int_t) tl.points[i].kib));
        if (!points || oom) {
                json_decref(points);
                return -ENOMEM;
        }
        json_t *timeline =
                json_pack("{s:s, s:I, s:I, s:o, s:o}", "source", (const char *) sqlite3_column_text(st, 1),
                          "period_ns", (json_int_t) sqlite3_column_int64(st, 2), "thinned",
                          (json_int_t) sqlite3_column_int64(st, 5), "points", points, "marks",
                          marks ? marks : json_null());
        return json_object_set_new(row, "memory_timeline", timeline) < 0 ? -ENOMEM : 0;
}

int export_samples(Store *s, int64_t run_id, json_t **ret) {
        json_auto_t *columns = json_array(), *params = json_array(), *metrics = json_array(),
                    *rows = json_array(), *by_sample = json_object();
        if (!columns || !params || !metrics || !rows || !by_sample)
                return -ENOMEM;
        SampleTable t = { columns, params, metrics, rows, by_sample };

        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(s), "SELECT 1 FROM runs WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_int64(st, 1, run_id);
        int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc == SQLITE_DONE)
                return -ENOENT;
        if (rc != SQLITE_ROW)
                return -EIO;

        _cleanup_free_ char *select = sample_select_sql();
        if (!select)
                return -ENOMEM;
        int r;
        sqlite3 *db = store_db(s);
        if ((r = sql_each_row(db, "SELECT params FROM cells WHERE run_id = ?1 ORDER BY position", run_id,
                              row_param_names, &t)) < 0 ||
            (r = sql_each_row(
                     db,
                     "SELECT DISTINCT m.name FROM sample_metrics m JOIN samples s ON s.id = m.sample_id"
                     " WHERE s.run_id = ?1 ORDER BY m.name",
                     run_id, row_metric_name, &t)) < 0 ||
            (r = sql_each_row(db, select, run_id, row_sample, &t)) < 0 ||
            (r = sql_each_row(db,
                              "SELECT m.sample_id, m.name, m.value FROM sample_metrics m"
                              " JOIN samples s ON s.id = m.sample_id WHERE s.run_id = ?1",
                              run_id, row_metric_value, &t)) < 0 ||
            (r = sql_each_row(
                     db,
                     "SELECT tl.sample_id, tl.source, tl.period_ns, tl.points, tl.marks, tl.thinned FROM "
                     "sample_timelines tl"
                     " JOIN samples s ON s.id = tl.sample_id WHERE s.run_id = ?1",
                     run_id, row_timeline, &t)) < 0)
                return r;

        for (size_t k = 0; k < ELEMENTSOF(key_columns); k++)
                json_array_append_new(columns, json_string(key_columns[k].name));
        for (size_t k = 0; k < n_sample_fields; k++)
                if (sample_fields[k].exported)
                        json_array_append_new(columns, json_string(sample_fields[k].column));
        size_t i;
        json_t *name;
        char key[256];
        json_array_foreach(params, i, name)
                json_array_append_new(columns, json_string(prefixed(key, sizeof(key), "param", name)));
        json_array_foreach(metrics, i, name)
                json_array_append_new(columns, json_string(prefixed(key, sizeof(key), "metric", name)));
        *ret = json_pack("{s:O, s:O}", "columns", columns, "rows", rows);
        return *ret ? 0 : -ENOMEM;
}

int export_import_cpu(Store *s, int64_t run_id, json_t **ret) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(s), "SELECT import_cpu FROM runs WHERE id = ?", -1, &st, NULL) !=
            SQLITE_OK)
                return -EIO;
        sqlite3_bind_int64(st, 1, run_id);
        int rc = sqlite3_step(st), r = rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : -EIO;
        const char *text = r == 0 ? (const char *) sqlite3_column_text(st, 0) : NULL;
        *ret = text ? json_loads(text, 0, NULL) : NULL;
        if (text && !*ret)
                r = -ENOMEM;
        sqlite3_finalize(st);
        return r;
}
