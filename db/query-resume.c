/* SPDX-License-Identifier: MIT */
/*
 * What resuming a run reads back: its spec, seed and counts, the machine it ran on, and what it
 * had done (db/record.c continues it).
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/query-internal.h"
#include "db/run-field.h"
#include "db/sql.h"
#include "runner/metric.h"
#include "util/cleanup.h"
#include "util/io.h"

void resume_info_done(ResumeInfo *r) {
        free(r->spec_path);
        free(r->spec_yaml);
        free(r->status);
        free(r->hostname);
        free(r->host_fingerprint);
        *r = (ResumeInfo){};
}

int resume_info_check_here(const ResumeInfo *info, char **ret_message) {
        _cleanup_(host_done) Host host = {};
        int r = host_read(&host);
        if (r < 0)
                return r;
        /* Runs of schema 9 and before have no fingerprint: their host name must do. */
        if (info->host_fingerprint ? strcmp(info->host_fingerprint, host.fingerprint) == 0
                                   : strcmp(info->hostname, host.hostname) == 0)
                return 0;
        if (asprintf(ret_message,
                     "it was measured on %s (fingerprint %.12s), and this is %s (%.12s): a run continues "
                     "only on the machine it started on",
                     info->hostname, info->host_fingerprint ? info->host_fingerprint : "unknown",
                     host.hostname, host.fingerprint) < 0)
                *ret_message = NULL;
        return -EXDEV;
}

int query_resume_info(Store *s, int64_t run_id, ResumeInfo *ret) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(
                    store_db(s),
                    "SELECT r.spec_path, sp.yaml, r.status, r.seed, r.samples, r.warmup, h.hostname,"
                    " r.host_fingerprint FROM runs r JOIN specs sp ON sp.id = r.spec_id"
                    " JOIN hosts h ON h.id = r.host_id WHERE r.id = ?",
                    -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_int64(st, 1, run_id);
        int r = -ENOENT;
        if (sqlite3_step(st) == SQLITE_ROW) {
                *ret = (ResumeInfo){ .spec_path = sql_text(st, 0),
                                     .spec_yaml = sql_text(st, 1),
                                     .status = sql_text(st, 2),
                                     .seed = (uint64_t) sqlite3_column_int64(st, 3),
                                     .samples = (unsigned) sqlite3_column_int64(st, 4),
                                     .warmup = (unsigned) sqlite3_column_int64(st, 5),
                                     .hostname = sql_text(st, 6),
                                     .host_fingerprint = sql_text_or_null(st, 7) };
                r = ret->spec_path && ret->spec_yaml && ret->status && ret->hostname ? 0 : -ENOMEM;
        }
        sqlite3_finalize(st);
        return r;
}

/* Runs sql (?1 = run id) and hands each row to row(). */
static int each_prior_row(Store *s, const char *sql, int64_t run_id, const Plan *plan, RunPrior *prior,
                          int (*row)(sqlite3_stmt *st, const Plan *plan, RunPrior *prior)) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_int64(st, 1, run_id);
        int rc, r = 0;
        while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
                r = row(st, plan, prior);
        if (r >= 0 && rc != SQLITE_DONE)
                r = -EIO;
        sqlite3_finalize(st);
        return r;
}

static int row_done(sqlite3_stmt *st, const Plan *plan, RunPrior *prior) {
        int64_t step = sqlite3_column_int64(st, 0);
        if (step < 0 || (size_t) step >= plan->n_steps)
                return -EBADMSG;
        prior->done[step] = true;
        return 0;
}

static int row_excluded(sqlite3_stmt *st, const Plan *plan, RunPrior *prior) {
        int64_t c = sqlite3_column_int64(st, 0), v = sqlite3_column_int64(st, 1);
        if (c < 0 || v < 0 || (size_t) c >= plan->n_cells || (size_t) v >= plan->n_variants)
                return -EBADMSG;
        prior->excluded[(size_t) c * plan->n_variants + (size_t) v] = true;
        return 0;
}

static int add_value(RunPrior *prior, int64_t cell, int64_t variant, const char *metric, double value) {
        PriorValue *grown = realloc(prior->values, (prior->n_values + 1) * sizeof(PriorValue));
        if (!grown)
                return -ENOMEM;
        prior->values = grown;
        PriorValue *pv = &prior->values[prior->n_values++];
        *pv = (PriorValue){ .cell = (uint32_t) cell, .variant = (uint32_t) variant, .value = value };
        snprintf(pv->metric, sizeof(pv->metric), "%s", metric);
        return 0;
}

/* Columns 2... are the built-in metrics in order (builtin_columns()). */
static int row_builtin(sqlite3_stmt *st, const Plan *plan, RunPrior *prior) {
        int64_t c = sqlite3_column_int64(st, 0), v = sqlite3_column_int64(st, 1);
        if (c < 0 || v < 0 || (size_t) c >= plan->n_cells || (size_t) v >= plan->n_variants)
                return -EBADMSG;
        for (size_t i = 0; i < N_BUILTIN_METRICS; i++) {
                if (sqlite3_column_type(st, 2 + (int) i) == SQLITE_NULL)
                        continue; /* a counter this machine could not count */
                int r = add_value(prior, c, v, builtin_metric_name(&builtin_metrics[i]),
                                  sqlite3_column_double(st, 2 + (int) i));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Every measured sample's built-in metrics, after its cell and variant. NULL on ENOMEM. */
static char *builtin_columns_sql(void) {
        char *sql = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&sql, &size);
        if (!f)
                return NULL;
        fputs("SELECT c.position, v.position", f);
        for (size_t i = 0; i < N_BUILTIN_METRICS; i++)
                fprintf(f, ", %s", builtin_metrics[i].sql);
        fputs(MEASURED_SAMPLES, f);
        return memstream_text(f, &sql);
}

static int row_reported(sqlite3_stmt *st, const Plan *plan, RunPrior *prior) {
        int64_t c = sqlite3_column_int64(st, 0), v = sqlite3_column_int64(st, 1);
        const char *name = (const char *) sqlite3_column_text(st, 2);
        if (c < 0 || v < 0 || (size_t) c >= plan->n_cells || (size_t) v >= plan->n_variants || !name ||
            strlen(name) > OUTPUT_METRIC_NAME_MAX)
                return -EBADMSG;
        return add_value(prior, c, v, name, sqlite3_column_double(st, 3));
}

int query_prior(Store *s, int64_t run_id, const Plan *plan, RunPrior *prior) {
        *prior = (RunPrior){};
        prior->done = calloc(plan->n_steps ? plan->n_steps : 1, sizeof(bool));
        prior->excluded = calloc(plan->n_cells * plan->n_variants, sizeof(bool));
        if (!prior->done || !prior->excluded) {
                run_prior_done(prior);
                return -ENOMEM;
        }
        _cleanup_free_ char *builtin_sql = builtin_columns_sql();
        if (!builtin_sql) {
                run_prior_done(prior);
                return -ENOMEM;
        }
        int r;
        if ((r = each_prior_row(s,
                                "SELECT step FROM samples WHERE run_id = ?1"
                                " UNION ALL SELECT step FROM calibration WHERE run_id = ?1",
                                run_id, plan, prior, row_done)) < 0 ||
            (r = each_prior_row(
                     s,
                     "SELECT c.position, v.position FROM exclusions e JOIN cells c ON c.id = e.cell_id"
                     " JOIN variants v ON v.id = e.variant_id WHERE e.run_id = ?1",
                     run_id, plan, prior, row_excluded)) < 0 ||
            (r = each_prior_row(s, builtin_sql, run_id, plan, prior, row_builtin)) < 0 ||
            (r = each_prior_row(s, "SELECT c.position, v.position, m.name, m.value" MEASURED_METRICS, run_id,
                                plan, prior, row_reported)) < 0) {
                run_prior_done(prior);
                return r;
        }
        return 0;
}
