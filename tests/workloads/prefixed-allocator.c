/* SPDX-License-Identifier: MIT */
/*
 * liballoclab-prefixed.so: a stand-in for a jemalloc built with a symbol prefix (as Rust's
 * jemallocator builds it): the malloc family and mallctl under the prefix pfx_, served by a
 * bump allocator of its own. Lets the tests check forward mode and prefixed-jemalloc
 * identification without a prefixed jemalloc package. Memory is never reused; test programs are
 * short. One function, pfx_valloc, allocates through the global malloc: in forward mode that is
 * the probe again, which forwards back here, a nested call the probe must not count.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define HEADER 16

static char arena[64 << 20] __attribute__((aligned(64)));
static size_t used;

static void *bump(size_t size, size_t alignment) {
        if (alignment < HEADER)
                alignment = HEADER;
        size_t start = (used + HEADER + alignment - 1) & ~(alignment - 1);
        if (size > sizeof(arena) || start + size > sizeof(arena))
                return NULL;
        used = start + size;
        ((size_t *) (arena + start))[-1] = size;
        return arena + start;
}

void *pfx_malloc(size_t n) {
        return bump(n, 16);
}

/* Changes errno, as free() was allowed to before POSIX.1-2024: the probe must keep it. */
void pfx_free(void *p) {
        (void) p;
        errno = EIO;
}

void *pfx_calloc(size_t n, size_t size) {
        if (size && n > SIZE_MAX / size)
                return NULL;
        return bump(n * size, 16); /* static memory, never reused: already zero */
}

size_t pfx_malloc_usable_size(void *p) {
        return p ? ((size_t *) p)[-1] : 0;
}

void *pfx_realloc(void *p, size_t n) {
        void *q = bump(n, 16);
        if (q && p)
                memcpy(q, p, pfx_malloc_usable_size(p) < n ? pfx_malloc_usable_size(p) : n);
        return q;
}

int pfx_posix_memalign(void **p, size_t alignment, size_t n) {
        void *q = bump(n, alignment);
        if (!q)
                return ENOMEM;
        *p = q;
        return 0;
}

/* A page-aligned block carved out of a global malloc() block (never freed, like every block
 * here), with the header pfx_malloc_usable_size reads. */
void *pfx_valloc(size_t n) {
        const size_t page = 4096;
        if (n > SIZE_MAX - page - HEADER)
                return NULL;
        char *block = malloc(n + page + HEADER);
        if (!block)
                return NULL;
        char *q = (char *) (((uintptr_t) block + HEADER + page - 1) & ~(uintptr_t) (page - 1));
        ((size_t *) q)[-1] = n;
        return q;
}

/* Answers "version" and "opt.narenas" the way jemalloc's mallctl does. */
int pfx_mallctl(const char *name, void *old, size_t *oldlen, void *new, size_t newlen) {
        (void) new;
        (void) newlen;
        if (strcmp(name, "version") == 0 && old && oldlen && *oldlen == sizeof(const char *)) {
                *(const char **) old = "5.3.0-prefixed-test";
                return 0;
        }
        if (strcmp(name, "opt.narenas") == 0 && old && oldlen && *oldlen == sizeof(unsigned)) {
                *(unsigned *) old = 7;
                return 0;
        }
        return ENOENT;
}
