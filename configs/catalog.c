/* SPDX-License-Identifier: MIT */
/*
 * The allocator catalog is data, not code: a row (and the probe's row of its family,
 * probe/report.h) supports another allocator. tbbmalloc is preloaded through its proxy library,
 * the one that replaces malloc.
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

static const char *const jemalloc_complaints[] = { "<jemalloc>: Invalid conf", "<jemalloc>: Malformed conf",
                                                   "<jemalloc>: Conf string ends with key", NULL };
static const char *const mimalloc_complaints[] = { "mimalloc: warning: environment option",
                                                   "mimalloc: error: ", NULL };
/* "... 1 unrecognized flag(s):" and the flags on the next lines */
static const char *const scudo_complaints[] = { "Scudo WARNING: found ", NULL };

/* Builds from a release tarball (configure shipped) or a git checkout (autogen.sh makes it);
 * make builds the shared library only. */
#define CONFIGURE_OR_AUTOGEN "if [ -x ./configure ]; then ./configure; else ./autogen.sh && ./configure; fi"
static const char *const jemalloc_build[] = {
        "if [ -x ./configure ]; then ./configure; else ./autogen.sh; fi",
        "make -j\"$(nproc)\" build_lib_shared",
        NULL,
};
static const char *const mimalloc_build[] = {
        "cmake -S . -B out -DCMAKE_BUILD_TYPE=Release -DMI_BUILD_TESTS=OFF -DMI_BUILD_STATIC=OFF "
        "-DMI_BUILD_OBJECT=OFF",
        "cmake --build out -j\"$(nproc)\"",
        NULL,
};
static const char *const tcmalloc_build[] = { CONFIGURE_OR_AUTOGEN, "make -j\"$(nproc)\" libtcmalloc.la",
                                              NULL };
static const char *const tcmalloc_minimal_build[] = { CONFIGURE_OR_AUTOGEN,
                                                      "make -j\"$(nproc)\" libtcmalloc_minimal.la", NULL };

static const CatalogEntry catalog[] = {
        { .name = "glibc",
          .package = "libc6",
          .description = "the C library's own malloc (ptmalloc2); nothing preloaded",
          .settings = glibc_settings,
          .family = "glibc" },
        { .name = "jemalloc",
          .soname = "libjemalloc.so.2",
          .package = "libjemalloc2",
          .description = "jemalloc",
          .settings = jemalloc_settings,
          .family = "jemalloc",
          .complaints = jemalloc_complaints,
          .build_commands = jemalloc_build,
          .build_output = "lib/libjemalloc.so.2" },
        { .name = "mimalloc",
          .soname = "libmimalloc.so.2",
          .package = "libmimalloc2.0",
          .description = "Microsoft mimalloc",
          .settings = mimalloc_settings,
          .family = "mimalloc",
          .option_prefix = "MIMALLOC_",
          .option_names = CATALOG_OPTIONS_VERBOSE,
          .complaints = mimalloc_complaints,
          .build_commands = mimalloc_build,
          .build_output = "out/libmimalloc.so" },
        { .name = "tcmalloc",
          .soname = "libtcmalloc.so.4",
          .package = "libgoogle-perftools4",
          .description = "gperftools tcmalloc (full)",
          .settings = tcmalloc_settings,
          .family = "tcmalloc",
          .option_prefix = "TCMALLOC_",
          .option_names = CATALOG_OPTIONS_STRINGS,
          .build_commands = tcmalloc_build,
          .build_output = ".libs/libtcmalloc.so" },
        { .name = "tcmalloc_minimal",
          .soname = "libtcmalloc_minimal.so.4",
          .package = "libtcmalloc-minimal4",
          .description = "gperftools tcmalloc without profiler hooks",
          .settings = tcmalloc_settings,
          .family = "tcmalloc",
          .option_prefix = "TCMALLOC_",
          .option_names = CATALOG_OPTIONS_STRINGS,
          .build_commands = tcmalloc_minimal_build,
          .build_output = ".libs/libtcmalloc_minimal.so" },
        { .name = "tbbmalloc",
          .soname = "libtbbmalloc_proxy.so.2",
          .package = "libtbbmalloc2",
          .description = "oneTBB scalable allocator",
          .settings = tbbmalloc_settings,
          .family = "tbbmalloc" },
        { .name = "scudo",
          .soname = "libclang_rt.scudo_standalone-x86_64.so",
          .package = "libclang-rt-14-dev",
          .description = "LLVM's Scudo hardened allocator (compiler-rt, standalone)",
          .dir = "/usr/lib/llvm-*/lib/clang/*/lib/linux",
          .settings = scudo_settings,
          .family = "scudo",
          .complaints = scudo_complaints },
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

const CatalogEntry *catalog_find_family(const char *path) {
        const char *base = basename(path);
        for (const CatalogEntry *e = catalog; e->name; e++)
                if (e->soname && strstr(base, e->family))
                        return e;
        return NULL;
}

const CatalogEntry *catalog_entries(void) {
        return catalog;
}

/* "a, b, c": the names of the entries (only those with build defaults), into names once. */
static const char *list_names(char *names, size_t size, bool buildable) {
        if (names[0] == 0)
                for (const CatalogEntry *e = catalog; e->name; e++) {
                        if (buildable && !e->build_commands)
                                continue;
                        if (names[0])
                                strncat(names, ", ", size - strlen(names) - 1);
                        strncat(names, e->name, size - strlen(names) - 1);
                }
        return names;
}

const char *catalog_names(void) {
        static char names[256];
        return list_names(names, sizeof(names), false);
}

const char *catalog_build_families(void) {
        static char names[256];
        return list_names(names, sizeof(names), true);
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
