/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "db/fleet.h"
#include "util/cleanup.h"

Fleet *fleet_free(Fleet *f) {
        if (!f)
                return NULL;
        for (size_t i = 0; i < f->n_hosts; i++) {
                free(f->hosts[i].hostname);
                free(f->hosts[i].fingerprint);
                query_report_free(f->hosts[i].report);
        }
        free(f->hosts);
        free(f->experiment);
        free(f);
        return NULL;
}

int query_fleet(Store *s, const char *experiment, Fleet **ret) {
        _cleanup_(fleet_freep) Fleet *f = calloc(1, sizeof(Fleet));
        if (!f || !(f->experiment = strdup(experiment)))
                return -ENOMEM;
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(
                    store_db(s),
                    /* SQLite takes the bare column from the row of max() */
                    "SELECT h.hostname, max(r.id), r.host_fingerprint FROM runs r"
                    " JOIN hosts h ON h.id = r.host_id"
                    " JOIN experiments x ON x.id = r.experiment_id"
                    " WHERE x.name = ? AND r.status = 'done' GROUP BY h.hostname ORDER BY h.hostname",
                    -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_text(st, 1, experiment, -1, SQLITE_STATIC);
        int rc, r = 0;
        while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                FleetHost *hosts = realloc(f->hosts, (f->n_hosts + 1) * sizeof(FleetHost));
                if (!hosts) {
                        r = -ENOMEM;
                        break;
                }
                f->hosts = hosts;
                FleetHost *h = &hosts[f->n_hosts++];
                const char *fingerprint = (const char *) sqlite3_column_text(st, 2);
                *h = (FleetHost){ .hostname = strdup((const char *) sqlite3_column_text(st, 0)),
                                  .fingerprint = fingerprint ? strdup(fingerprint) : NULL };
                if (!h->hostname || (fingerprint && !h->fingerprint))
                        r = -ENOMEM;
                if (r >= 0)
                        r = query_report(s, sqlite3_column_int64(st, 1), NULL, &h->report);
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = -EIO;
        sqlite3_finalize(st);
        if (r < 0)
                return r;
        if (f->n_hosts == 0)
                return -ENOENT;
        *ret = TAKE_PTR(f);
        return 0;
}
