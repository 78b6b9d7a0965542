/* SPDX-License-Identifier: MIT */
/*
 * Resolves allocator names to files. Catalog sonames are looked up in the multiarch and
 * standard library directories, in the dynamic linker's order, rather than by dlopen():
 * alloclab must never load the allocators it measures into itself.
 * Versions come from dpkg's status database (the package that owns the file); the probe
 * reports the allocator's own idea of its version at run time.
 */
#include <errno.h>
#include <glob.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/allocator.h"
#include "util/cleanup.h"

static const char *const library_dirs[] = {
        "/usr/local/lib/" ALLOCLAB_MULTIARCH,
        "/usr/local/lib",
        "/lib/" ALLOCLAB_MULTIARCH,
        "/usr/lib/" ALLOCLAB_MULTIARCH,
        "/lib64",
        "/usr/lib64",
        "/lib",
        "/usr/lib",
        NULL,
};

static int search_library(const void *userdata, char **ret_path) {
        const CatalogEntry *e = userdata;
        const char *soname = e->soname;
        if (e->dir) { /* the newest match: glob sorts, and llvm-15 comes after llvm-14 */
                _cleanup_free_ char *pattern = NULL;
                if (asprintf(&pattern, "%s/%s", e->dir, soname) < 0)
                        return -ENOMEM;
                glob_t g;
                int r = glob(pattern, 0, NULL, &g);
                *ret_path = r == 0 && g.gl_pathc > 0 ? strdup(g.gl_pathv[g.gl_pathc - 1]) : NULL;
                bool found = r == 0 && g.gl_pathc > 0;
                if (r == 0)
                        globfree(&g);
                if (found)
                        return *ret_path ? 0 : -ENOMEM;
        }
        for (size_t i = 0; library_dirs[i]; i++) {
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s/%s", library_dirs[i], soname) < 0)
                        return -ENOMEM;
                if (faccessat(AT_FDCWD, p, R_OK, AT_EACCESS) == 0) {
                        *ret_path = TAKE_PTR(p);
                        return 0;
                }
        }
        *ret_path = NULL;
        return -ENOENT;
}

int allocator_find_library(const CatalogEntry *e, Memo *memo, char **ret_path) {
        char key[256];
        snprintf(key, sizeof(key), "library %s", e->soname);
        *ret_path = NULL;
        return memo_lookup(memo, key, search_library, e, ret_path);
}

/* Version of an installed Debian package, from /var/lib/dpkg/status. */
static char *package_version(const char *package) {
        _cleanup_fclose_ FILE *f = fopen("/var/lib/dpkg/status", "re");
        if (!f)
                return NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        bool in_stanza = false;
        size_t plen = strlen(package);
        while (getline(&line, &cap, f) > 0) {
                if (line[0] == '\n') {
                        in_stanza = false;
                        continue;
                }
                if (strncmp(line, "Package: ", 9) == 0)
                        in_stanza = strncmp(line + 9, package, plen) == 0 && line[9 + plen] == '\n';
                else if (in_stanza && strncmp(line, "Version: ", 9) == 0) {
                        line[strcspn(line, "\n")] = 0;
                        return strdup(line + 9);
                }
        }
        return NULL;
}

int allocator_resolve(const char *preload, Allocator *ret) {
        return allocator_resolve_as(preload, true, NULL, ret);
}

int allocator_resolve_as(const char *preload, bool identify, Memo *memo, Allocator *ret) {
        Allocator a = {};
        int r;

        if (!preload)
                preload = "glibc";
        if (!(a.name = strdup(preload)))
                return -ENOMEM;
        if (preload[0] == '/') {
                struct stat st;
                r = faccessat(AT_FDCWD, preload, R_OK, AT_EACCESS) < 0 || stat(preload, &st) < 0
                            ? negative_errno()
                    : S_ISDIR(st.st_mode) ? -EISDIR
                                          : 0;
                if (r < 0) {
                        allocator_done(&a);
                        return r;
                }
                if (!(a.path = realpath(preload, NULL))) {
                        allocator_done(&a);
                        return -ENOMEM;
                }
                /* The very file a catalog name would preload is that allocator, by its name and
                 * package version (a copy or a build elsewhere stays a path). */
                const CatalogEntry *e = catalog_find_file(a.path);
                _cleanup_free_ char *found = NULL, *real = NULL;
                if (e && e->soname && allocator_find_library(e, memo, &found) >= 0 &&
                    (real = realpath(found, NULL)) && strcmp(real, a.path) == 0) {
                        char *name = strdup(e->name);
                        if (!name) {
                                allocator_done(&a);
                                return -ENOMEM;
                        }
                        free(a.name);
                        a.name = name;
                        a.entry = e;
                }
        } else {
                a.entry = catalog_find(preload);
                if (!a.entry) {
                        allocator_done(&a);
                        return -EINVAL; /* the spec loader already rejected this */
                }
                if (a.entry->soname) {
                        r = allocator_find_library(a.entry, memo, &a.path);
                        if (r < 0) {
                                *ret = (Allocator){ .entry = a.entry };
                                allocator_done(&a);
                                return r;
                        }
                }
        }

        if (!identify) {
                strcpy(a.sha256, "unknown");
                if (!(a.version = strdup("unknown"))) {
                        allocator_done(&a);
                        return -ENOMEM;
                }
                *ret = a;
                return 0;
        }
        /* glibc: identify the C library this alloclab was built against and runs with. */
        _cleanup_free_ char *libc = NULL;
        const char *hashed = a.path;
        if (!hashed) {
                static const CatalogEntry libc_so = { .name = "glibc", .soname = "libc.so.6" };
                if (allocator_find_library(&libc_so, memo, &libc) < 0)
                        libc = NULL;
                hashed = libc;
        }
        if (!hashed || sha256_file_hex(hashed, a.sha256) < 0)
                strcpy(a.sha256, "unknown");
        if (a.entry && a.entry->soname == NULL)
                a.version = strdup(gnu_get_libc_version());
        else if (a.entry)
                a.version = package_version(a.entry->package);
        if (!a.version && !(a.version = strdup("unknown"))) {
                allocator_done(&a);
                return -ENOMEM;
        }
        *ret = a;
        return 0;
}

void allocator_done(Allocator *a) {
        free(a->name);
        free(a->path);
        free(a->version);
        *a = (Allocator){};
}
