/* SPDX-License-Identifier: MIT */
/*
 * Publishing a site incrementally (cli/publish.h): which pages there are, which of them changed
 * since the last publish, and writing those whole.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/report-page.h"
#include "cli/publish.h"
#include "cli/site-pages.h"
#include "cli/site.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/message.h"
#include "util/sha256.h"
#include "util/strv.h"

#define SITE_MANIFEST ".alloclab-site"
#define MANIFEST_MAX  (64 << 20)

/* --- keys: what a page shows, in a line ------------------------------------------------------ */

static void key_add(Sha256 *h, const char *s) {
        sha256_update(h, s ? s : "-", strlen(s ? s : "-"));
        sha256_update(h, "|", 1);
}

/* A run as its pages show it: a run that changes (goes on, ends, is pruned, relabelled) has
 * another key. */
static void key_run(Sha256 *h, const RunSummary *run) {
        char counts[128];
        snprintf(counts, sizeof(counts), "%lld %lld %lld %lld %lld", (long long) run->id,
                 (long long) run->n_runs, (long long) run->n_failures, (long long) run->n_excluded,
                 (long long) run->n_cells);
        key_add(h, counts);
        key_add(h, run->uuid);
        key_add(h, run->status);
        key_add(h, run->ended_at);
        key_add(h, run->pruned_at);
        key_add(h, run->label);
        key_add(h, run->commit);
        key_add(h, run->machine);
        key_add(h, run->metric);
}

static void key_start(Sha256 *h, const char *path) {
        sha256_init(h);
        key_add(h, ALLOCLAB_VERSION);
        key_add(h, path);
}

static void key_end(Sha256 *h, char hex[SHA256_HEX_SIZE]) {
        uint8_t digest[SHA256_DIGEST_SIZE];
        sha256_final(h, digest);
        for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
                snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}

/* --- the manifest: each page's key when it was written ---------------------------------------- */

typedef struct Manifest {
        char **paths, **keys; /* strv, parallel */
        char **seen;          /* paths this publish planned */
} Manifest;

static void manifest_done(Manifest *m) {
        strv_free(m->paths);
        strv_free(m->keys);
        strv_free(m->seen);
}

/* Lines "KEY PATH"; a missing or unreadable manifest is an empty one (every page is written). */
static int manifest_read(const char *dir, Manifest *m) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        if (asprintf(&path, "%s/" SITE_MANIFEST, dir) < 0)
                return -ENOMEM;
        if (read_text_file(path, MANIFEST_MAX, &text, NULL) < 0)
                return 0;
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                char *space = strchr(line, ' ');
                if (!space || space - line != SHA256_HEX_SIZE - 1)
                        continue;
                *space = 0;
                if (strv_append(&m->keys, line) < 0 || strv_append(&m->paths, space + 1) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static const char *manifest_key(const Manifest *m, const char *path) {
        for (size_t i = 0; m->paths && m->paths[i]; i++)
                if (strcmp(m->paths[i], path) == 0)
                        return m->keys[i];
        return NULL;
}

/* The pages planned, or after a failure every page known (those not reached keep their keys). */
static int manifest_write(const char *dir, const Manifest *m, bool all, const FileAccess *access) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f || asprintf(&path, "%s/" SITE_MANIFEST, dir) < 0) {
                if (f)
                        fclose(f);
                return -ENOMEM;
        }
        for (size_t i = 0; m->paths && m->paths[i]; i++)
                if (all || strv_contains(m->seen, m->paths[i]))
                        fprintf(f, "%s %s\n", m->keys[i], m->paths[i]);
        if (!memstream_text(f, &text))
                return -ENOMEM;
        return write_file_replacing(path, text, size, access);
}

static int manifest_set(Manifest *m, const char *path, const char *key) {
        for (size_t i = 0; m->paths && m->paths[i]; i++)
                if (strcmp(m->paths[i], path) == 0) {
                        char *copy = strdup(key);
                        if (!copy)
                                return -ENOMEM;
                        free(m->keys[i]);
                        m->keys[i] = copy;
                        return 0;
                }
        return strv_append(&m->paths, path) < 0 || strv_append(&m->keys, key) < 0 ? -ENOMEM : 0;
}

/* --- writing ---------------------------------------------------------------------------------- */

typedef struct Page {
        const char *path; /* relative to the site's root */
        int (*write)(FILE *f, const Site *site, const void *what);
        const void *what;
} Page;

typedef struct Publish {
        const Site *site;
        const char *dir;
        FileAccess files; /* as the database: its readers read the site, no one else */
        mode_t dir_mode;
        Manifest manifest;
        SiteResult result;
        char **message;
} Publish;

static bool in_group(gid_t gid) {
        gid_t groups[NGROUPS_MAX];
        int n = getgroups(NGROUPS_MAX, groups);
        for (int i = 0; i < n; i++)
                if (groups[i] == gid)
                        return true;
        return false;
}

/* The site's files and directories readable by those who may read the database (its mode's
 * read bits, its group): a site of the system daemon's database is for the group that reads it,
 * as the database is, and a user's own database makes a site as readable as it. */
static int access_of_database(Publish *p, Store *store) {
        struct stat st;
        if (stat(store_path(store), &st) < 0)
                return -errno;
        p->files = (FileAccess){ .mode = (st.st_mode & 0444) | 0200,
                                 .gid = st.st_gid == getegid() ? (gid_t) -1 : st.st_gid };
        if (p->files.gid != (gid_t) -1 && geteuid() != 0 && !in_group(st.st_gid)) {
                /* Its group is not ours to give the pages: no group reads them. */
                p->files.gid = (gid_t) -1;
                p->files.mode &= ~(mode_t) 0040;
        }
        p->dir_mode = p->files.mode | (p->files.mode & 0444) >> 2;
        return 0;
}

/* path (a page, or a directory of the site: dir_mode) with the site's access, whatever it had: a
 * database made private since the last publish makes its site private too. */
static int give_access(const Publish *p, const char *path, bool dir) {
        struct stat st;
        mode_t mode = dir ? p->dir_mode : p->files.mode;
        if (lstat(path, &st) < 0)
                return -errno;
        if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
                return dir ? -ENOTDIR : 0; /* not ours: a page goes over it by rename */
        if ((st.st_mode & 07777) != mode && chmod(path, mode) < 0)
                return -errno;
        if (p->files.gid != (gid_t) -1 && st.st_gid != p->files.gid &&
            chown(path, (uid_t) -1, p->files.gid) < 0)
                return -errno;
        return 0;
}

/* A directory of the site, made when missing, with the site's access. */
static int make_dir(const Publish *p, const char *path) {
        int r = access(path, F_OK) == 0 ? 0 : mkdir_parents(path, p->dir_mode);
        return r < 0 ? r : give_access(p, path, true);
}

/* The site's directories (cli/site.c names the pages in them). */
static const char *const site_dirs[] = { "run", "experiment", "fleet", "suite" };

/* A site goes into a new or empty directory, or one that holds a site published before: never
 * over files of someone's own (their index.html). */
static int check_dir(const char *dir, char **ret_message) {
        struct stat st;
        if (stat(dir, &st) < 0)
                return errno == ENOENT ? 0 : message_fail(ret_message, -errno, "cannot use %s: %m", dir);
        if (!S_ISDIR(st.st_mode))
                return message_fail(ret_message, -ENOTDIR,
                                    "%s is not a directory: give a directory for the site", dir);
        _cleanup_free_ char *manifest = NULL;
        if (asprintf(&manifest, "%s/" SITE_MANIFEST, dir) < 0)
                return -ENOMEM;
        if (access(manifest, F_OK) == 0)
                return 0;
        DIR *d = opendir(dir);
        if (!d)
                return message_fail(ret_message, -errno, "cannot read %s: %m", dir);
        struct dirent *e;
        bool empty = true;
        while (empty && (e = readdir(d)))
                empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
        closedir(d);
        return empty ? 0
                     : message_fail(ret_message, -EEXIST,
                                    "%s holds files alloclab publish did not write (it has no " SITE_MANIFEST
                                    "): give a new or empty directory for the site",
                                    dir);
}

/* Writes the page unless its key is the one it was written with and its file is there; replaces
 * the file only when its content changed. */
static int publish_page(Publish *p, const Page *page, const char *key) {
        _cleanup_free_ char *file = NULL, *text = NULL, *old = NULL;
        if (asprintf(&file, "%s/%s", p->dir, page->path) < 0)
                return -ENOMEM;
        p->result.pages++;
        if (strv_append(&p->manifest.seen, page->path) < 0)
                return -ENOMEM;
        const char *known = manifest_key(&p->manifest, page->path);
        if (known && strcmp(known, key) == 0 && access(file, F_OK) == 0) {
                int r = give_access(p, file, false);
                return r < 0 ? message_fail(p->message, r, "cannot set the access of %s: %s", file,
                                            strerror(-r))
                             : 0;
        }
        size_t size = 0, old_size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        int r = page->write(f, p->site, page->what);
        if (!memstream_text(f, &text) && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return message_fail(p->message, r, "cannot make %s: %s", page->path, strerror(-r));
        bool same = read_text_file(file, size + 1, &old, &old_size) >= 0 && old_size == size &&
                    memcmp(old, text, size) == 0;
        if (!same) {
                _cleanup_free_ char *parent = strdup(file);
                if (!parent)
                        return -ENOMEM;
                *strrchr(parent, '/') = 0;
                if ((r = make_dir(p, parent)) < 0 ||
                    (r = write_file_replacing(file, text, size, &p->files)) < 0)
                        return message_fail(p->message, r, "cannot write %s: %s", file, strerror(-r));
                p->result.written++;
        }
        return manifest_set(&p->manifest, page->path, key);
}

static int write_run(FILE *f, const Site *site, const void *what) {
        const RunSummary *run = what;
        char experiment[512], nav[1024];
        site_experiment_path(run->experiment, experiment, sizeof(experiment));
        snprintf(nav, sizeof(nav),
                 "<a href=\"../index.html\">all experiments</a><a href=\"../%s\">timelines</a>", experiment);
        ReportPageOptions o = { .nav = nav };
        int64_t missing;
        return report_page_write(f, site->store, run->id, &o, &missing);
}

static int write_index(FILE *f, const Site *site, const void *what) {
        (void) what;
        return site_index_page(f, site);
}

static int write_experiment(FILE *f, const Site *site, const void *what) {
        return site_experiment_page(f, site, what);
}

static int write_fleet(FILE *f, const Site *site, const void *what) {
        return site_fleet_page(f, site, what);
}

static int write_suite(FILE *f, const Site *site, const void *what) {
        return site_suite_page(f, site, what);
}

/* A page whose key is made of these runs (all of the site's with experiment NULL and no list). */
static int publish_of_runs(Publish *p, const Page *page, const char *experiment,
                           const RunSummary *const *list, size_t n) {
        Sha256 h;
        char key[SHA256_HEX_SIZE];
        key_start(&h, page->path);
        if (list)
                for (size_t i = 0; i < n; i++)
                        key_run(&h, list[i]);
        else
                for (size_t i = 0; i < p->site->n_runs; i++)
                        if (!experiment || strcmp(p->site->runs[i].experiment, experiment) == 0)
                                key_run(&h, &p->site->runs[i]);
        key_end(&h, key);
        return publish_page(p, page, key);
}

/* Pages of the manifest this publish did not plan: of runs or experiments gone. */
static int remove_stale(Publish *p) {
        for (size_t i = 0; p->manifest.paths && p->manifest.paths[i]; i++) {
                if (strv_contains(p->manifest.seen, p->manifest.paths[i]))
                        continue;
                _cleanup_free_ char *file = NULL;
                if (asprintf(&file, "%s/%s", p->dir, p->manifest.paths[i]) < 0)
                        return -ENOMEM;
                if (unlink(file) == 0)
                        p->result.removed++;
        }
        return 0;
}

int publish_site(Store *store, const char *dir, SiteResult *ret, char **ret_message) {
        _cleanup_(site_done) Site site = {};
        Publish p = { .site = &site, .dir = dir, .message = ret_message };
        int r = access_of_database(&p, store);
        if (r < 0)
                return message_fail(ret_message, r, "cannot read %s: %s", store_path(store), strerror(-r));
        if ((r = check_dir(dir, ret_message)) < 0)
                return r;
        if ((r = make_dir(&p, dir)) < 0)
                return message_fail(ret_message, r, "cannot make %s: %s", dir, strerror(-r));
        for (size_t i = 0; i < ELEMENTSOF(site_dirs); i++) { /* those a page may not be written into now */
                _cleanup_free_ char *sub = NULL;
                if (asprintf(&sub, "%s/%s", dir, site_dirs[i]) < 0)
                        return -ENOMEM;
                if (access(sub, F_OK) == 0 && (r = give_access(&p, sub, true)) < 0)
                        return message_fail(ret_message, r, "cannot set the access of %s: %s", sub,
                                            strerror(-r));
        }
        if ((r = site_load(store, &site)) < 0 || (r = manifest_read(dir, &p.manifest)) < 0) {
                manifest_done(&p.manifest);
                return message_fail(ret_message, r, "cannot read the database: %s", strerror(-r));
        }
        char path[512];
        for (size_t i = 0; r >= 0 && i < site.n_runs; i++) {
                const RunSummary *run = &site.runs[i];
                r = publish_of_runs(&p,
                                    &(Page){ site_run_path(run->id, path, sizeof(path)), write_run, run },
                                    NULL, &run, 1);
        }
        for (char **e = site.experiments; r >= 0 && e && *e; e++) {
                r = publish_of_runs(
                        &p, &(Page){ site_experiment_path(*e, path, sizeof(path)), write_experiment, *e },
                        *e, NULL, 0);
                if (r >= 0)
                        r = publish_of_runs(
                                &p, &(Page){ site_fleet_path(*e, path, sizeof(path)), write_fleet, *e }, *e,
                                NULL, 0);
        }
        for (size_t i = 0; r >= 0 && i < site.n_suites; i++) {
                const SiteSuite *suite = &site.suites[i];
                r = publish_of_runs(
                        &p, &(Page){ site_suite_path(suite, path, sizeof(path)), write_suite, suite }, NULL,
                        suite->runs, suite->n_runs);
        }
        if (r >= 0)
                r = publish_of_runs(&p, &(Page){ "index.html", write_index, NULL }, NULL, NULL, 0);
        /* The manifest is written even after a failure: the pages written keep their keys. */
        int k = r >= 0 ? remove_stale(&p) : 0;
        if (k >= 0)
                k = manifest_write(dir, &p.manifest, r < 0, &p.files);
        if (k < 0 && r >= 0)
                r = message_fail(ret_message, k, "cannot write %s/" SITE_MANIFEST ": %s", dir, strerror(-k));
        manifest_done(&p.manifest);
        *ret = p.result;
        return r;
}
