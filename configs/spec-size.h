/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "configs/spec.h"

/*
 * What a spec's children take once every {param} is expanded, computed from the lengths of the
 * parameter values without expanding anything, so that a spec whose expansion would not fit is
 * refused before a byte of it is written (a 340 KB spec can expand to gigabytes).
 *
 * Every template grows with the length of the values it names, so the cell that gives each
 * parameter its longest value gives every template its longest expansion at once: the longest
 * child of a variant is the sum of its strings' longest expansions.
 */

/* One argument or environment string "KEY=VALUE", its NUL included: the kernel's MAX_ARG_STRLEN
 * (32 pages of 4 KiB); execve() fails with E2BIG past it. */
#define SPEC_MAX_ARG_STRLEN  131072
/* A path (cwd, stdin, verify: file:), its NUL included: PATH_MAX. */
#define SPEC_MAX_PATH_BYTES  4096
/* One child's arguments and environment as execve() counts them (each string with its NUL and
 * a pointer). Linux allows a quarter of the stack limit, 2 MiB under the usual 8 MiB: the other
 * half is left for the caller's variables alloclab passes on, LD_PRELOAD and its own. */
#define SPEC_MAX_CHILD_BYTES (1024 * 1024)
/* Every job's arguments, environments (each twice: with and without the probe) and paths, which
 * a plan holds in memory at once, built in the daemon's loop for a submitted spec. */
#define SPEC_MAX_PLAN_BYTES  (128 * 1024 * 1024)

/* A template's (or a vector's) expansions: the longest over the matrix's cells, and all of
 * them summed over the cells. Both saturate at SIZE_MAX. */
typedef struct SpecExtent {
        size_t longest;
        size_t total;
} SpecExtent;

/* Of one template string (without its NUL). The spec's templates must be valid (a loaded spec's
 * are); returns 0, or -EINVAL for a template that is not. */
int spec_size_template(const Spec *s, const char *tmpl, SpecExtent *ret);

/* Of an argument vector as execve() counts it: each string with its NUL and a pointer. */
int spec_size_argv(const Spec *s, char *const *argv, SpecExtent *ret);

/* Of what variant v's children get from the spec's env and the variant's (the variant's
 * variables replacing the spec's of the same name), counted as spec_size_argv() counts. */
int spec_size_env(const Spec *s, size_t v, SpecExtent *ret);

/* Of a literal argument vector (no templates: the calibration command), as spec_size_argv()
 * counts. */
size_t spec_size_literal_argv(char *const *argv);

/* a + b and a * b, at most SIZE_MAX. */
size_t spec_size_add(size_t a, size_t b);
size_t spec_size_mul(size_t a, size_t b);
