/* SPDX-License-Identifier: MIT */
/*
 * What memory_timeline (runner/timeline.h) costs: the spawner's CPU time per reading, and how
 * much a CPU-bound child slows down when the readings share its CPU, or run on another one (as
 * they do when the run pins CPUs: the spawner stays on the runner's).
 *
 *   build/bench/timeline-cost [ROUNDS]
 *
 * Per reading: a child that sleeps 2 s, read every 1 ms; the sampler's user + system time over
 * the readings taken. Slowdown: a child spinning for about 0.3 s, ROUNDS times (default 15)
 * each without readings and with readings every 20 ms and every 1 ms, interleaved, the child and
 * this process pinned to one CPU (shared), then to different CPUs (apart); the medians' ratio to
 * the run without readings, and the runs without readings' own spread (max/min) beside it.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/timeline-sampler.h"
#include "util/clock.h"

static double cpu_seconds(void) {
        struct rusage u;
        getrusage(RUSAGE_SELF, &u);
        return (double) (u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               (double) (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static void pin(int cpu) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        (void) sched_setaffinity(0, sizeof(set), &set);
}

/* Runs one child (spin: a CPU-bound loop; else sleep 2 s) on child_cpu, read every period_ns
 * (0: not read); returns its wall time in seconds and the readings taken in *ret_points. */
static double run_child(bool spin, int child_cpu, uint64_t period_ns, uint32_t *ret_points) {
        int out = memfd_create("timeline", MFD_CLOEXEC), metrics = memfd_create("metrics", MFD_CLOEXEC);
        uint64_t start = now_ns();
        pid_t pid = fork();
        if (pid == 0) {
                pin(child_cpu);
                if (!spin)
                        execl("/bin/sleep", "sleep", "2", (char *) NULL);
                volatile uint64_t x = 1;
                for (long i = 0; i < 300000000L; i++)
                        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                _exit(x == 0);
        }
        TimelineSampler s;
        if (period_ns) {
                sampler_begin(&s, out, metrics, -1, pid, start, period_ns);
                sampler_run(&s);
        }
        waitpid(pid, NULL, 0);
        double wall = (double) (now_ns() - start) / 1e9;
        *ret_points = period_ns ? s.head.n_points : 0;
        if (period_ns)
                sampler_end(&s);
        close(out);
        close(metrics);
        return wall;
}

static int by_value(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static double median(double *v, int n) {
        qsort(v, (size_t) n, sizeof(double), by_value);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
        int rounds = argc > 1 ? atoi(argv[1]) : 15;
        if (rounds < 3 || rounds > 1000)
                return 2;
        uint32_t points;
        double before = cpu_seconds();
        run_child(false, 0, 1000000, &points);
        printf("per reading: %.1f us of the sampler's CPU time (%u readings of a 1-process tree, every 1 "
               "ms)\n",
               (cpu_seconds() - before) / points * 1e6, points);

        static const uint64_t periods[] = { 0, 20000000, 1000000 };
        for (int apart = 0; apart < 2; apart++) {
                pin(0);
                double wall[3][1000];
                for (int r = 0; r < rounds; r++)
                        for (int p = 0; p < 3; p++)
                                wall[p][r] = run_child(true, apart ? 1 : 0, periods[p], &points);
                double lo = wall[0][0], hi = wall[0][0];
                for (int r = 0; r < rounds; r++) {
                        lo = wall[0][r] < lo ? wall[0][r] : lo;
                        hi = wall[0][r] > hi ? wall[0][r] : hi;
                }
                double none = median(wall[0], rounds);
                printf("%s spin without readings %.3f s (max/min %.3f); every 20 ms %.4fx; every 1 ms "
                       "%.4fx\n",
                       apart ? "apart, child on CPU 1, sampler on CPU 0:" : "shared, both on CPU 0:", none,
                       hi / lo, median(wall[1], rounds) / none, median(wall[2], rounds) / none);
        }
        return 0;
}
