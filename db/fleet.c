/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "db/fleet.h"
#include "db/sql.h"
#include "util/cleanup.h"
#include "util/strv.h"

Fleet *fleet_free(Fleet *f) {
        if (!f)
                return NULL;
        for (size_t i = 0; i < f->n_machines; i++) {
                FleetMachine *m = &f->machines[i];
                free(m->machine);
                free(m->hostname);
                free(m->fingerprint);
                free(m->hardware);
                free(m->slurm);
                free(m->slurm_cluster);
                free(m->spec_sha256);
                query_report_free(m->report);
        }
        free(f->machines);
        free(f->experiment);
        free(f);
        return NULL;
}

/* Per machine, its latest finished run by start time (the local id, the order of arrival,
 * breaks ties): SQLite takes the bare columns from the row of max(). */
static const char fleet_sql[] = "SELECT " STORE_SQL_MACHINE(
        "r",
        "h") " AS m, r.id, r.host_fingerprint, h.hostname,"
             " h.cpu_model || ', ' || h.cpus || ' CPUs, kernel ' || h.kernel || ', THP ' || h.thp,"
             " CASE WHEN r.slurm_job_id IS NOT NULL THEN coalesce(r.slurm_cluster || ':', '') || "
             "r.slurm_job_id"
             "  || coalesce(' on ' || r.slurm_node, '') || coalesce(' (' || r.slurm_partition || ')', '') "
             "END,"
             " max(r.started_at || printf(' %020d', r.id)), r.slurm_cluster, p.sha256"
             " FROM runs r JOIN hosts h ON h.id = r.host_id JOIN experiments x ON x.id = r.experiment_id"
             " JOIN specs p ON p.id = r.spec_id"
             " WHERE x.name = ?1 AND r.status = 'done'"
             " AND (?2 IS NULL OR r.slurm_job_id = ?2) AND (?3 IS NULL OR r.slurm_cluster = ?3)"
             " GROUP BY m ORDER BY m";

static int read_machine(Store *s, sqlite3_stmt *st, FleetMachine *m) {
        *m = (FleetMachine){ .machine = sql_text(st, 0),
                             .fingerprint = sql_text_or_null(st, 2),
                             .hostname = sql_text(st, 3),
                             .hardware = sql_text(st, 4),
                             .slurm = sql_text_or_null(st, 5),
                             .slurm_cluster = sql_text_or_null(st, 7),
                             .spec_sha256 = sql_text(st, 8) };
        if (!m->machine || !m->hostname || !m->hardware || !m->spec_sha256 ||
            (sqlite3_column_type(st, 2) != SQLITE_NULL && !m->fingerprint) ||
            (sqlite3_column_type(st, 5) != SQLITE_NULL && !m->slurm) ||
            (sqlite3_column_type(st, 7) != SQLITE_NULL && !m->slurm_cluster))
                return -ENOMEM;
        return query_report(s, sqlite3_column_int64(st, 1), NULL, &m->report);
}

int query_fleet(Store *s, const FleetQuery *q, Fleet **ret) {
        _cleanup_(fleet_freep) Fleet *f = calloc(1, sizeof(Fleet));
        if (!f || !(f->experiment = strdup(q->experiment)))
                return -ENOMEM;
        /* "CLUSTER:JOB" or "JOB" */
        const char *colon = q->slurm_job ? strrchr(q->slurm_job, ':') : NULL;
        _cleanup_free_ char *cluster = colon ? strndup(q->slurm_job, (size_t) (colon - q->slurm_job)) : NULL;
        if (colon && !cluster)
                return -ENOMEM;
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(s), fleet_sql, -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_text(st, 1, q->experiment, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, colon ? colon + 1 : q->slurm_job, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, cluster, -1, SQLITE_STATIC);
        int rc, r = 0;
        while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                FleetMachine *machines = realloc(f->machines, (f->n_machines + 1) * sizeof(FleetMachine));
                if (!machines) {
                        r = -ENOMEM;
                        break;
                }
                f->machines = machines;
                r = read_machine(s, st, &machines[f->n_machines++]);
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = -EIO;
        sqlite3_finalize(st);
        if (r < 0)
                return r;
        if (f->n_machines == 0)
                return -ENOENT;
        *ret = TAKE_PTR(f);
        return 0;
}

char **fleet_notes(const Fleet *f) {
        char **notes = NULL, *note;
        /* Two names of one host fingerprint: counted as two, and said (once per pair's later one). */
        for (size_t h = 0; h < f->n_machines; h++)
                for (size_t i = 0; i < h; i++)
                        if (f->machines[i].fingerprint && f->machines[h].fingerprint &&
                            strcmp(f->machines[i].fingerprint, f->machines[h].fingerprint) == 0) {
                                if (asprintf(&note,
                                             "machines %s and %s have one host fingerprint (%.12s): one "
                                             "machine "
                                             "under two names, or nodes cloned with one machine-id? They "
                                             "count as two",
                                             f->machines[i].machine, f->machines[h].machine,
                                             f->machines[h].fingerprint) < 0 ||
                                    strv_consume(&notes, note) < 0)
                                        return strv_free(notes);
                                break;
                        }
        /* Machines that ran different specs measured different things: said, not hidden. */
        size_t specs = 0;
        for (size_t h = 0; h < f->n_machines; h++) {
                bool seen = false;
                for (size_t i = 0; i < h && !seen; i++)
                        seen = strcmp(f->machines[i].spec_sha256, f->machines[h].spec_sha256) == 0;
                specs += !seen;
        }
        if (specs > 1 &&
            (asprintf(&note,
                      "these runs ran %zu different specs of %s (alloclab compare RUN_A RUN_B says how "
                      "they differ): their ratios are not of the same experiment everywhere",
                      specs, f->experiment) < 0 ||
             strv_consume(&notes, note) < 0))
                return strv_free(notes);
        return notes;
}
