/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Scope-bound cleanup and ownership transfer, the one idiom every module uses:
 *   _cleanup_free_ char *s = NULL;  ... return TAKE_PTR(s);
 * A cleanup function receives a pointer to the variable and must accept NULL/-1.
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

#define TAKE_PTR(p)                                                                                         \
        ({                                                                                                  \
                __typeof__(p) _ptr_ = (p);                                                                  \
                (p) = NULL;                                                                                 \
                _ptr_;                                                                                      \
        })

#define TAKE_FD(fd)                                                                                         \
        ({                                                                                                  \
                int _fd_ = (fd);                                                                            \
                (fd) = -1;                                                                                  \
                _fd_;                                                                                       \
        })

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* The larger of two values of one type (each evaluated twice: no side effects). */
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* A macro's value as a string literal. */
#define STRINGIFY(x)  STRINGIFY_(x)
#define STRINGIFY_(x) #x

/* Declares `static inline void name##p(type **p)` that calls func(*p) when *p is non-NULL. */
#define DEFINE_POINTER_CLEANUP(type, func)                                                                  \
        static inline void func##p(type **p) {                                                              \
                if (*p)                                                                                     \
                        func(*p);                                                                           \
        }

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

/* close() that keeps errno, for cleanup paths. */
static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -1;
}
static inline void closep(int *fd) {
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Converts a libc "-1 and errno" failure into -errno, never 0. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}
