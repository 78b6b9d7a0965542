/* SPDX-License-Identifier: MIT */
/*
 * spawn-loop PROGRAM RUNS: the floor for measuring a child from outside. posix_spawn() plus
 * waitpid() in a tight loop, nothing else, timed with CLOCK_MONOTONIC around each child; prints
 * the median in seconds. bench/harness-overhead.sh compares alloclab against it.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static int compare(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

int main(int argc, char **argv) {
        if (argc != 3) {
                fprintf(stderr, "usage: spawn-loop PROGRAM RUNS\n");
                return 2;
        }
        long runs = atol(argv[2]);
        if (runs < 1)
                return 2;
        double *t = malloc((size_t) runs * sizeof(double));
        if (!t)
                return 1;
        char *args[] = { argv[1], NULL };
        for (long i = 0; i < runs; i++) {
                struct timespec a, b;
                pid_t pid;
                int status;
                clock_gettime(CLOCK_MONOTONIC, &a);
                if (posix_spawn(&pid, argv[1], NULL, NULL, args, environ) != 0 ||
                    waitpid(pid, &status, 0) < 0)
                        return 1;
                clock_gettime(CLOCK_MONOTONIC, &b);
                t[i] = (double) (b.tv_sec - a.tv_sec) + (double) (b.tv_nsec - a.tv_nsec) / 1e9;
        }
        qsort(t, (size_t) runs, sizeof(double), compare);
        printf("%.9f\n", runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2);
        free(t);
        return 0;
}
