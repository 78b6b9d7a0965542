/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/*
 * metric: instructions where no PMU counts them (most virtual machines): each timed child runs
 * under valgrind's callgrind, which counts the instructions the program executes (its Ir) in
 * every process of the tree (--trace-children=yes), the preloaded allocator's included
 * (callgrind does not replace malloc). The count does not move with the neighbours, which is
 * what a CI gate on a shared runner needs; what it cannot see is in docs/spec.md (Counting
 * instructions). The smoke run goes without it: the probe proves the preload there, and the
 * reference output is the program's own.
 *
 * Each process writes its count to a log file of its own in a scratch directory
 * (--log-file=DIR/%p.%n); after the reap the runner sums the files' "Collected : N" lines and
 * empties the directory.
 */

typedef struct Callgrind {
        char *valgrind; /* the executable */
        char *log_dir;  /* scratch, removed by callgrind_free() */
        int log_dir_doomed;
} Callgrind;

/* Sets up counting with the valgrind executable at path: the scratch directory under $TMPDIR.
 * Returns 0 or -errno. */
int callgrind_new(const char *valgrind, Callgrind **ret);
void callgrind_free(Callgrind *cg);

/* The argv that runs exe with argv[1...] under callgrind; caller frees (strv_free). NULL on
 * ENOMEM. */
char **callgrind_argv(const Callgrind *cg, const char *exe, char *const *argv);

/* The instructions the last child's tree executed, summed over its processes' logs, which are
 * removed. Returns 0; -ENODATA when no process reported a count (valgrind could not start the
 * program, or was killed); -errno. */
int callgrind_collect(const Callgrind *cg, uint64_t *ret_instructions);
