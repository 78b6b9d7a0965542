/* SPDX-License-Identifier: MIT */
/*
 * alloclab-workload-ownmalloc: a program that carries its own allocator (a bump allocator in
 * the executable), like programs that link one statically. A preloaded allocator cannot serve
 * its malloc: the executable comes first in symbol lookup. Prints a fixed line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

static char heap[1 << 24] __attribute__((aligned(64)));
static size_t used;

void *malloc(size_t size) {
        size_t start = (used + 15) & ~(size_t) 15;
        if (size > sizeof(heap) - start) {
                errno = ENOMEM;
                return NULL;
        }
        used = start + size;
        return heap + start;
}

void free(void *p) {
        (void) p;
}

void *calloc(size_t n, size_t size) {
        if (size && n > (size_t) -1 / size)
                return NULL;
        return malloc(n * size); /* the heap is static, hence zeroed, and never reused */
}

void *realloc(void *old, size_t size) {
        void *p = malloc(size);
        if (p && old)
                memmove(p, old, size); /* may read past the old block, but stays inside heap */
        return p;
}

int main(void) {
        char *s = malloc(32);
        strcpy(s, "own allocator");
        printf("%s\n", s);
        return 0;
}
