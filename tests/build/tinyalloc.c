/* SPDX-License-Identifier: MIT */
/*
 * tinyalloc: a small allocator for the tests of building from source (tests/integration/build.sh
 * makes a git repository of it and commits changes to TINY_EXTRA_WORK). Power-of-two size
 * classes up to 4 KiB on free lists, under one spin lock; anything larger or more aligned gets
 * its own mapping. Every block has a 32-byte header before it. TINY_EXTRA_WORK adds that many
 * empty loop iterations to each malloc: a regression to find.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef TINY_EXTRA_WORK
#define TINY_EXTRA_WORK 0
#endif

#define CLASSES   9 /* 16 .. 4096 */
#define LARGE     255
#define CHUNK     (1u << 20)
#define ALIGNMENT 16

typedef struct Header {
        void *base;    /* large: the mapping */
        size_t length; /* large: its length */
        size_t size;   /* usable bytes */
        size_t klass;  /* size class, or LARGE */
} Header;

typedef struct Free {
        struct Free *next;
} Free;

static Free *free_lists[CLASSES];
static char *chunk, *chunk_end;
static int lock;

static void acquire(void) {
        while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
                ;
}

static void release(void) {
        __atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

static void *large(size_t size, size_t align) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        size_t length = (size + align + sizeof(Header) + page - 1) & ~(page - 1);
        if (size > SIZE_MAX / 2 || length < size) {
                errno = ENOMEM;
                return NULL;
        }
        char *base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) {
                errno = ENOMEM;
                return NULL;
        }
        uintptr_t user = ((uintptr_t) base + sizeof(Header) + align - 1) & ~(uintptr_t) (align - 1);
        Header *h = (Header *) user - 1;
        *h = (Header){ base, length, length - (user - (uintptr_t) base), LARGE };
        return (void *) user;
}

static void *allocate(size_t size, size_t align) {
        for (volatile unsigned i = 0; i < TINY_EXTRA_WORK; i++)
                ;
        if (align > ALIGNMENT || size > (4096u))
                return large(size, align < ALIGNMENT ? ALIGNMENT : align);
        size_t klass = 0;
        while ((16u << klass) < size)
                klass++;
        acquire();
        Free *f = free_lists[klass];
        if (f) {
                free_lists[klass] = f->next;
                release();
                return f;
        }
        size_t need = sizeof(Header) + (16u << klass);
        if (!chunk || (size_t) (chunk_end - chunk) < need) {
                char *c = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (c == MAP_FAILED) {
                        release();
                        errno = ENOMEM;
                        return NULL;
                }
                chunk = c;
                chunk_end = c + CHUNK;
        }
        Header *h = (Header *) chunk;
        chunk += need;
        release();
        *h = (Header){ NULL, 0, 16u << klass, klass };
        return h + 1;
}

void *malloc(size_t size) {
        return allocate(size, ALIGNMENT);
}

void free(void *p) {
        if (!p)
                return;
        Header *h = (Header *) p - 1;
        if (h->klass == LARGE) {
                munmap(h->base, h->length);
                return;
        }
        Free *f = p;
        acquire();
        f->next = free_lists[h->klass];
        free_lists[h->klass] = f;
        release();
}

void *calloc(size_t n, size_t size) {
        if (size && n > SIZE_MAX / size) {
                errno = ENOMEM;
                return NULL;
        }
        /* Not malloc(): GCC turns malloc followed by a memset of zeroes into a call of calloc. */
        void *p = allocate(n * size, ALIGNMENT);
        return p ? memset(p, 0, n * size) : NULL;
}

size_t malloc_usable_size(void *p) {
        return p ? ((Header *) p - 1)->size : 0;
}

void *realloc(void *old, size_t size) {
        if (!old)
                return malloc(size);
        if (size <= malloc_usable_size(old))
                return old;
        void *p = malloc(size);
        if (p) {
                memcpy(p, old, malloc_usable_size(old));
                free(old);
        }
        return p;
}

int posix_memalign(void **ret, size_t align, size_t size) {
        if (align < sizeof(void *) || (align & (align - 1)))
                return EINVAL;
        void *p = allocate(size, align);
        if (!p)
                return ENOMEM;
        *ret = p;
        return 0;
}

void *aligned_alloc(size_t align, size_t size) {
        if (align == 0 || (align & (align - 1))) {
                errno = EINVAL;
                return NULL;
        }
        return allocate(size, align);
}

void *memalign(size_t align, size_t size) {
        return aligned_alloc(align, size);
}

void *valloc(size_t size) {
        return allocate(size, (size_t) sysconf(_SC_PAGESIZE));
}

void *pvalloc(size_t size) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        return allocate((size + page - 1) & ~(page - 1), page);
}
