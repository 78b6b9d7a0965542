/* SPDX-License-Identifier: MIT */
/*
 * The allocator catalog is data, not code: add a row to support another allocator.
 * tbbmalloc is preloaded through its proxy library, the one that replaces malloc.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "configs/catalog.h"
#include "util/cleanup.h"
#include "util/suggest.h"

/* What each allocator reads from the environment: glibc's malloc its MALLOC_ variables and the
 * glibc.malloc tunables (a preloaded allocator leaves both unread), Debian's jemalloc (built
 * without a prefix) MALLOC_CONF, the others their own prefix. */
static const char *const glibc_settings[] = {
        "MALLOC_ARENA_MAX=*",
        "MALLOC_ARENA_TEST=*",
        "MALLOC_CHECK_=*",
        "MALLOC_MMAP_MAX_=*",
        "MALLOC_MMAP_THRESHOLD_=*",
        "MALLOC_PERTURB_=*",
        "MALLOC_TOP_PAD_=*",
        "MALLOC_TRIM_THRESHOLD_=*",
        "GLIBC_TUNABLES=*glibc.malloc.*",
        NULL,
};
static const char *const jemalloc_settings[] = { "MALLOC_CONF=*", NULL };
static const char *const mimalloc_settings[] = { "MIMALLOC_*", NULL };
static const char *const tcmalloc_settings[] = { "TCMALLOC_*", NULL };
static const char *const tbbmalloc_settings[] = { "TBB_MALLOC_*", NULL };
static const char *const scudo_settings[] = { "SCUDO_OPTIONS=*", NULL };

static const CatalogEntry catalog[] = {
        { "glibc", NULL, "libc6", "the C library's own malloc (ptmalloc2); nothing preloaded", NULL,
          glibc_settings },
        { "jemalloc", "libjemalloc.so.2", "libjemalloc2", "jemalloc", NULL, jemalloc_settings },
        { "mimalloc", "libmimalloc.so.2", "libmimalloc2.0", "Microsoft mimalloc", NULL, mimalloc_settings },
        { "tcmalloc", "libtcmalloc.so.4", "libgoogle-perftools4", "gperftools tcmalloc (full)", NULL,
          tcmalloc_settings },
        { "tcmalloc_minimal", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4",
          "gperftools tcmalloc without profiler hooks", NULL, tcmalloc_settings },
        { "tbbmalloc", "libtbbmalloc_proxy.so.2", "libtbbmalloc2", "oneTBB scalable allocator", NULL,
          tbbmalloc_settings },
        { "scudo", "libclang_rt.scudo_standalone-x86_64.so", "libclang-rt-14-dev",
          "LLVM's Scudo hardened allocator (compiler-rt, standalone)",
          "/usr/lib/llvm-*/lib/clang/*/lib/linux", scudo_settings },
        {},
};

bool catalog_reads(const CatalogEntry *e, const char *entry) {
        for (const char *const *p = e->settings; p && *p; p++)
                if (fnmatch(*p, entry, 0) == 0)
                        return true;
        return false;
}

const CatalogEntry *catalog_reader(const char *entry) {
        for (const CatalogEntry *e = catalog; e->name; e++)
                if (catalog_reads(e, entry))
                        return e;
        return NULL;
}

const CatalogEntry *catalog_find(const char *name) {
        for (const CatalogEntry *e = catalog; e->name; e++)
                if (strcmp(e->name, name) == 0)
                        return e;
        return NULL;
}

/* The length of a shared object's name before ".so" (all of it without one). */
static size_t stem_length(const char *name) {
        const char *so = strstr(name, ".so");
        return so ? (size_t) (so - name) : strlen(name);
}

const CatalogEntry *catalog_find_file(const char *path) {
        const char *base = basename(path);
        size_t len = stem_length(base);
        for (const CatalogEntry *e = catalog; e->name; e++) {
                const char *soname = e->soname ? e->soname : "libc.so.6"; /* glibc's own */
                if (stem_length(soname) == len && strncmp(soname, base, len) == 0)
                        return e;
        }
        return NULL;
}

const CatalogEntry *catalog_entries(void) {
        return catalog;
}

const char *catalog_names(void) {
        static char names[256];
        if (names[0] == 0)
                for (const CatalogEntry *e = catalog; e->name; e++) {
                        if (e != catalog)
                                strncat(names, ", ", sizeof(names) - strlen(names) - 1);
                        strncat(names, e->name, sizeof(names) - strlen(names) - 1);
                }
        return names;
}

char *catalog_unknown(const char *name) {
        const char *names[ELEMENTSOF(catalog)] = {};
        size_t k = 0;
        for (const CatalogEntry *e = catalog; e->name; e++)
                names[k++] = e->name;
        const char *close = suggest_closest(name, names);
        char *said = NULL;
        if (asprintf(&said, "unknown allocator '%s'%s%s%s (known: %s; or an absolute path)", name,
                     close ? " (did you mean '" : "", close ? close : "", close ? "'?)" : "",
                     catalog_names()) < 0)
                return NULL;
        return said;
}
