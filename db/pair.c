/* SPDX-License-Identifier: MIT */
/*
 * Comparability: the host fingerprint (hostname, kernel, CPU model and count, glibc, THP), the
 * spec's sha256, the experiment and metric, each variant's allocator file (sha256), and the
 * cells and variants themselves. Any difference is reported, never hidden; whether it matters
 * is for the reader to judge, so the changes are computed all the same.
 */
#include <errno.h>
#include <math.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/specdiff.h"
#include "db/pair.h"
#include "db/sql.h"
#include "stats/changepoint.h"
#include "stats/sampleset.h"
#include "stats/stats.h"
#include "stats/student.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "util/text.h"

/* The fields of a run that decide comparability, in the order of IDENTITY_SELECT. */
static const char *const identity_fields[] = {
        "experiment", "metric", "machine", "host name", "kernel",
        "CPU model",  "CPUs",   "glibc",   "THP",       "spec (sha256)",
};
#define N_IDENTITY    (sizeof(identity_fields) / sizeof(identity_fields[0]))
#define IDENTITY_SPEC (N_IDENTITY - 1)
#define IDENTITY_SELECT                                                                                     \
        "SELECT x.name, r.metric, " STORE_SQL_MACHINE(                                                      \
                "r", "h") ", h.hostname, h.kernel, h.cpu_model,"                                            \
                          " h.cpus, h.glibc, h.thp, sp.sha256"                                              \
                          " FROM runs r JOIN experiments x ON x.id = r.experiment_id JOIN hosts h ON h.id " \
                          "= r.host_id"                                                                     \
                          " JOIN specs sp ON sp.id = r.spec_id WHERE r.id = ?1"

typedef struct Identity {
        char *field[N_IDENTITY];
} Identity;

static void identity_done(Identity *id) {
        for (size_t i = 0; i < N_IDENTITY; i++)
                free(id->field[i]);
}

static int row_identity(sqlite3_stmt *st, void *userdata) {
        Identity *id = userdata;
        for (size_t i = 0; i < N_IDENTITY; i++) {
                const unsigned char *t = sqlite3_column_text(st, (int) i);
                if (!(id->field[i] = strdup(t ? (const char *) t : "")))
                        return -ENOMEM;
        }
        return 0;
}

/* Appends one line, formatted, to the differences. */
__attribute__((format(printf, 2, 3))) static int differ(RunPair *p, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *raw = NULL;
        int n = vasprintf(&raw, fmt, ap);
        va_end(ap);
        /* A difference is a line, whatever the texts compared hold (a spec's description). */
        char *line = n < 0 ? NULL : text_shown_as(raw, 0);
        if (!line)
                return -ENOMEM;
        int r = strv_consume(&p->differences, line);
        if (r < 0)
                free(line);
        return r;
}

/* One text column of a variant's row (NULL stays NULL: runs older than the column). */
static int variant_file(sqlite3 *db, const char *column, int64_t run, const char *variant, char **ret) {
        sqlite3_stmt *st;
        char *sql = sqlite3_mprintf("SELECT %s FROM variants v JOIN allocators a ON a.id = v.allocator_id"
                                    " WHERE v.run_id = ?1 AND v.name = ?2",
                                    column);
        int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
        if (rc != SQLITE_OK)
                return rc == SQLITE_NOMEM ? -ENOMEM : -EIO;
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_text(st, 2, variant, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        const unsigned char *t = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
        *ret = t ? strdup((const char *) t) : NULL;
        sqlite3_finalize(st);
        if (rc != SQLITE_ROW)
                return -EIO;
        return t && !*ret ? -ENOMEM : 0;
}

static int row_facts(sqlite3_stmt *st, void *userdata) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        *(json_t **) userdata = t ? json_loads((const char *) t, 0, NULL) : NULL;
        return 0;
}

/* The host facts beyond the hosts table (runner/host.h), fact by fact. */
static int differ_in_facts(Store *s, RunPair *p) {
        json_auto_t *fa = NULL, *fb = NULL;
        int r;
        if ((r = sql_each_row(store_db(s), "SELECT host_facts FROM runs WHERE id = ?1", p->a->run.id,
                              row_facts, &fa)) < 0 ||
            (r = sql_each_row(store_db(s), "SELECT host_facts FROM runs WHERE id = ?1", p->b->run.id,
                              row_facts, &fb)) < 0)
                return r;
        const char *key;
        json_t *value;
        json_object_foreach(fa, key, value) {
                /* Runs filed under one machine name were named, or imported (--machine-policy
                 * accept), as one machine: its machine-id alone (a reinstall, a new cloud instance
                 * of the same hardware) makes no other machine. */
                if (strcmp(key, "machine_id") == 0 && strcmp(p->a->run.machine, p->b->run.machine) == 0)
                        continue;
                const char *a = json_string_value(value), *b = json_string_value(json_object_get(fb, key));
                if (a && b && strcmp(a, b) != 0 && (r = differ(p, "host %s: %s -> %s", key, a, b)) < 0)
                        return r;
        }
        return 0;
}

static int row_text(sqlite3_stmt *st, void *userdata) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        return (*(char **) userdata = strdup(t ? (const char *) t : "")) ? 0 : -ENOMEM;
}

/* The two specs' texts differ: key by key what changed (configs/specdiff.h); nothing when only
 * comments or layout differ. */
static int differ_in_spec(Store *s, RunPair *p) {
        static const char sql[] =
                "SELECT sp.yaml FROM runs r JOIN specs sp ON sp.id = r.spec_id WHERE r.id = ?1";
        _cleanup_free_ char *ya = NULL, *yb = NULL;
        _cleanup_strv_free_ char **lines = NULL;
        int r;
        if ((r = sql_each_row(store_db(s), sql, p->a->run.id, row_text, &ya)) < 0 ||
            (r = sql_each_row(store_db(s), sql, p->b->run.id, row_text, &yb)) < 0)
                return r;
        char name_a[32], name_b[32];
        snprintf(name_a, sizeof(name_a), "run %lld", (long long) p->a->run.id);
        snprintf(name_b, sizeof(name_b), "run %lld", (long long) p->b->run.id);
        if (!ya || !yb || spec_diff(ya, yb, name_a, name_b, &lines) < 0)
                return differ(p, "spec: the texts differ");
        /* Only comments or layout: the same experiment, measured the same way. A variant's
         * revision to build at is what is compared (RunPair.revisions). */
        for (char **l = lines; *l; l++)
                if (!(strncmp(*l, "allocators.", 11) == 0 && strstr(*l, ".build.rev: ")) &&
                    (r = differ(p, "spec %s", *l)) < 0)
                        return r;
        return 0;
}

static ssize_t find(char **names, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(names[i], name) == 0)
                        return (ssize_t) i;
        return -1;
}

/* Names in `from` that `in` lacks, as differences ("variant jemalloc: only in run 3"). */
static int only_in(RunPair *p, const char *kind, char **from, size_t n_from, char **in, size_t n_in,
                   int64_t run) {
        for (size_t i = 0; i < n_from; i++) {
                if (find(in, n_in, from[i]) >= 0)
                        continue;
                int r = differ(p, "%s %s: only in run %lld", kind, from[i], (long long) run);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* What differs in a variant's files between the runs: its allocator file and its program; of a
 * variant built from source, the build's setup, while its revision is what is compared. */
static int differ_in_variant(Store *s, RunPair *p, const char *variant) {
        static const struct {
                const char *column, *what, *how;
        } files[] = {
                /* What a build's result depends on besides the revision (db/migrations.c 27). */
                { "json_extract(v.build, '$.source') || ' ' || json_extract(v.build, '$.commands') || ' ' ||"
                  " json_extract(v.build, '$.output') || ' ' || json_extract(v.build, '$.compiler') ||"
                  " ifnull(' ' || json_extract(v.build, '$.variables'), '')",
                  "allocator build", "" },
                { "a.sha256", "allocator file", " (sha256)" },
                { "v.program_sha256", "program", " (sha256)" },
        };
        static const char revision[] = "json_extract(v.build, '$.describe') || ' (' || "
                                       "substr(json_extract(v.build, '$.commit'), 1, 7) || ')'";
        _cleanup_free_ char *ra = NULL, *rb = NULL;
        int r;
        if ((r = variant_file(store_db(s), revision, p->a->run.id, variant, &ra)) < 0 ||
            (r = variant_file(store_db(s), revision, p->b->run.id, variant, &rb)) < 0)
                return r;
        bool rebuilt = ra && rb && strcmp(ra, rb) != 0;
        if (rebuilt) {
                char *line = NULL;
                if (asprintf(&line, "%s: %s -> %s", variant, ra, rb) < 0 ||
                    strv_consume(&p->revisions, line) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *sa = NULL, *sb = NULL;
                if (rebuilt && strcmp(files[i].column, "a.sha256") == 0)
                        continue; /* another revision, another file */
                if ((r = variant_file(store_db(s), files[i].column, p->a->run.id, variant, &sa)) < 0 ||
                    (r = variant_file(store_db(s), files[i].column, p->b->run.id, variant, &sb)) < 0)
                        return r;
                if (sa && sb && strcmp(sa, sb) != 0 &&
                    (r = differ(p, "%s of %s%s: %s -> %s", files[i].what, variant, files[i].how, sa, sb)) <
                            0)
                        return r;
        }
        return 0;
}

static int find_differences(Store *s, RunPair *p) {
        const Report *a = p->a, *b = p->b;
        _cleanup_(identity_done) Identity ia = {}, ib = {};
        int r;
        if ((r = sql_each_row(store_db(s), IDENTITY_SELECT, a->run.id, row_identity, &ia)) < 0 ||
            (r = sql_each_row(store_db(s), IDENTITY_SELECT, b->run.id, row_identity, &ib)) < 0)
                return r;
        for (size_t i = 0; i < N_IDENTITY; i++) {
                if (!ia.field[i] || !ib.field[i] || strcmp(ia.field[i], ib.field[i]) == 0)
                        continue;
                r = i == IDENTITY_SPEC
                            ? differ_in_spec(s, p)
                            : differ(p, "%s: %s -> %s", identity_fields[i], ia.field[i], ib.field[i]);
                if (r < 0)
                        return r;
        }

        for (size_t v = 0; v < a->n_variants; v++) {
                if (find(b->variant_names, b->n_variants, a->variant_names[v]) < 0)
                        continue;
                if ((r = differ_in_variant(s, p, a->variant_names[v])) < 0)
                        return r;
        }
        if ((r = differ_in_facts(s, p)) < 0)
                return r;
        if ((r = only_in(p, "variant", a->variant_names, a->n_variants, b->variant_names, b->n_variants,
                         a->run.id)) < 0 ||
            (r = only_in(p, "variant", b->variant_names, b->n_variants, a->variant_names, a->n_variants,
                         b->run.id)) < 0 ||
            (r = only_in(p, "cell", a->cell_labels, a->n_cells, b->cell_labels, b->n_cells, a->run.id)) <
                    0 ||
            (r = only_in(p, "cell", b->cell_labels, b->n_cells, a->cell_labels, a->n_cells, b->run.id)) < 0)
                return r;
        return 0;
}

/* Without earlier runs, the best estimate of how much a run's median moves is run A's A/A check
 * (spec aa_check), when it has one: its noise floor, as `show` states it (the widest cell's
 * interval of the copy against the baseline, as far as it reaches from 1), read as that many
 * standard errors (z at the interval's level) of a ratio of two medians (sqrt 2 of one median's).
 * The spread is then the larger of that and the prior; p->aa_floor says it was used. */
static int spread_from_aa(Store *s, RunPair *p) {
        if (p->a->aa_variant == SIZE_MAX)
                return 0;
        _cleanup_(query_report_freep) Report *rep = NULL;
        int r = query_report(s, p->a->run.id, p->a->run.metric, &rep);
        if (r < 0)
                return r;
        double floor = 0; /* the widest cell's, as show states it */
        for (size_t c = 0; c < rep->n_cells; c++)
                if (isfinite(query_noise_floor(rep, c)))
                        floor = fmax(floor, log1p(query_noise_floor(rep, c)));
        double alpha = rep->interval_alpha > 0 ? rep->interval_alpha : rep->alpha;
        double implied = floor / (student_quantile(alpha, 1e6) * sqrt(2));
        if (!(floor > 0) || !(implied > p->spread.spread))
                return 0;
        p->aa_floor = expm1(floor);
        p->spread.spread = implied;
        return 0;
}

/* The between-run spread that two runs' values are compared with: from the history of A's
 * experiment on A's host up to the older of the two runs, the newer left out (without one, the
 * prior's alone): A against B and B against A are judged alike, as the older run against the
 * newer, and a change in the newer run never counts as noise; of the runs' stored medians, or (relative) of
 * the same within-run ratios that are compared, each run's median of its rounds' ratios (history
 * --relative). */
static int between_runs(Store *s, RunPair *p) {
        _cleanup_(history_freep) History *h = NULL;
        int64_t older = p->a->run.id < p->b->run.id ? p->a->run.id : p->b->run.id,
                newer = p->a->run.id < p->b->run.id ? p->b->run.id : p->a->run.id;
        HistoryQuery q = { .experiment = p->a->run.experiment,
                           .metric = p->a->run.metric,
                           /* Relative reads every sample of the runs: as many runs as a change
                            * point is judged against, which keeps compare under 20 ms on the
                            * 1,000,000 samples of bench/scale.sh (20 runs: 28 ms). */
                           .last = p->relative ? HISTORY_WINDOW : HISTORY_DEFAULT_RUNS,
                           .until_run = older,
                           .medians_only = !p->relative,
                           .relative = p->relative };
        int r = query_history(s, &q, &h);
        if (r == -ENOENT)
                changepoint_pool_spread(0, 0, &p->spread.spread, &p->spread.df);
        else if (r < 0 || (r = history_spread(h, p->a->run.machine, newer, &p->spread)) < 0)
                return r;
        return p->spread.runs == 0 ? spread_from_aa(s, p) : 0;
}

static SampleSet entry_set(const ReportEntry *e) {
        return (SampleSet){ .values = e->values, .rounds = e->rounds, .n = e->n_values };
}

/* A run's value of variant v in cell c, and its log standard error within the run
 * (stats_median_se): its median, or (relative) its ratio to the cell's baseline round by round
 * (sampleset_round_ratio, as history --relative); NAN when there is none. */
static double run_value(const RunPair *p, const Report *r, size_t c, size_t v, double *ret_se) {
        const ReportEntry *e = &r->entries[c * r->n_variants + v];
        double value = NAN;
        *ret_se = 0;
        if (p->relative) {
                SampleSet base = entry_set(&r->entries[c * r->n_variants + r->baseline]), x = entry_set(e);
                if (sampleset_round_ratio(&base, &x, &value, ret_se) < 0)
                        value = NAN;
        } else if (e->n_values > 0 && e->stats.median > 0) {
                value = e->stats.median;
                *ret_se = stats_median_se(e->stats.mad, e->stats.n) / value;
        }
        return value;
}

/* A change's two values: the runs' medians, or (relative) their within-run ratios. */
static bool change_values(const RunPair *p, PairChange *x) {
        x->value_a = run_value(p, p->a, x->cell_a, x->variant_a, &x->se_a);
        x->value_b = run_value(p, p->b, x->cell_b, x->variant_b, &x->se_b);
        return x->value_a > 0 && x->value_b > 0;
}

/* The changes with a comparison, for compare_family(). */
typedef struct PairFamily {
        const RunPair *pair;
        PairChange **members;
} PairFamily;

/* Member i, B's value against A's. */
static int change_member(void *userdata, size_t i, const CompareRule *rule, Comparison *ret) {
        const PairFamily *f = userdata;
        const PairChange *x = f->members[i];
        /* A run whose own values scatter more than runs usually move (a busy moment) is not
         * judged by the calmer runs' spread: never less than the two runs' own errors say. */
        double own = sqrt((x->se_a * x->se_a + x->se_b * x->se_b) / 2);
        return compare_run_medians(x->value_a, x->value_b, fmax(f->pair->spread.spread, own),
                                   f->pair->spread.df, rule, ret);
}

static int compute_changes(Store *s, RunPair *p) {
        const Report *a = p->a, *b = p->b;
        p->changes = calloc(a->n_cells * a->n_variants + 1, sizeof(PairChange));
        _cleanup_free_ Comparison **family = calloc(a->n_cells * a->n_variants + 1, sizeof(Comparison *));
        _cleanup_free_ PairChange **members = calloc(a->n_cells * a->n_variants + 1, sizeof(PairChange *));
        if (!p->changes || !family || !members)
                return -ENOMEM;
        p->baseline = p->relative ? a->variant_names[a->baseline] : NULL;
        int r = between_runs(s, p);
        if (r < 0)
                return r;
        size_t n = 0;
        for (size_t c = 0; c < a->n_cells; c++) {
                ssize_t cb = find(b->cell_labels, b->n_cells, a->cell_labels[c]);
                for (size_t v = 0; v < a->n_variants && cb >= 0; v++) {
                        ssize_t vb = find(b->variant_names, b->n_variants, a->variant_names[v]);
                        if (vb < 0 || (p->relative && v == a->baseline))
                                continue;
                        PairChange *x = &p->changes[p->n_changes++];
                        *x = (PairChange){
                                .cell_a = c, .variant_a = v, .cell_b = (size_t) cb, .variant_b = (size_t) vb
                        };
                        if ((x->has_comparison = change_values(p, x))) {
                                members[n] = x;
                                family[n++] = &x->comparison;
                        }
                }
        }
        /* Every change of the pair is one family: each test at the level its size leaves. */
        p->rule = (CompareRule){
                .min_effect = a->min_effect, .alpha = a->alpha, .correction = a->correction, .tests = n
        };
        PairFamily f = { p, members };
        for (size_t i = 0; i < n; i++)
                (void) change_member(&f, i, &p->rule, family[i]);
        return compare_family(family, n, &p->rule, change_member, &f);
}

int query_run_pair(Store *s, int64_t a, int64_t b, bool relative, RunPair **ret, int64_t *ret_missing) {
        _cleanup_(run_pair_freep) RunPair *p = calloc(1, sizeof(RunPair));
        if (!p || !(p->differences = calloc(1, sizeof(char *))))
                return -ENOMEM;
        p->relative = relative;
        int r = query_report_values(s, a, NULL, &p->a);
        if (r == -ENOENT)
                *ret_missing = a;
        if (r >= 0 && (r = query_report_values(s, b, p->a->run.metric, &p->b)) == -ENOENT)
                *ret_missing = b;
        if (r < 0 || (r = find_differences(s, p)) < 0 || (r = compute_changes(s, p)) < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

RunPair *run_pair_free(RunPair *p) {
        if (!p)
                return NULL;
        query_report_free(p->a);
        query_report_free(p->b);
        strv_free(p->differences);
        strv_free(p->revisions);
        free(p->changes);
        free(p);
        return NULL;
}
