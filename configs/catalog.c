/* SPDX-License-Identifier: MIT */
/*
 * The allocator catalog is data, not code: add a row to support another allocator.
 * tbbmalloc is preloaded through its proxy library, the one that replaces malloc.
 */
#include <string.h>

#include "configs/catalog.h"

static const CatalogEntry catalog[] = {
        { "glibc", NULL, "libc6", "the C library's own malloc (ptmalloc2); nothing preloaded", NULL },
        { "jemalloc", "libjemalloc.so.2", "libjemalloc2", "jemalloc", NULL },
        { "mimalloc", "libmimalloc.so.2", "libmimalloc2.0", "Microsoft mimalloc", NULL },
        { "tcmalloc", "libtcmalloc.so.4", "libgoogle-perftools4", "gperftools tcmalloc (full)", NULL },
        { "tcmalloc_minimal", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4",
          "gperftools tcmalloc without profiler hooks", NULL },
        { "tbbmalloc", "libtbbmalloc_proxy.so.2", "libtbbmalloc2", "oneTBB scalable allocator", NULL },
        { "scudo", "libclang_rt.scudo_standalone-x86_64.so", "libclang-rt-14-dev",
          "LLVM's Scudo hardened allocator (compiler-rt, standalone)",
          "/usr/lib/llvm-*/lib/clang/*/lib/linux" },
        {},
};

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
