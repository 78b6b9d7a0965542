/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "runner/quiet.h"

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

void quiet_read(QuietReading *ret) {
        *ret = (QuietReading){ NAN, NAN };
        FILE *f = fopen("/proc/pressure/cpu", "re");
        if (f) {
                double v;
                if (fscanf(f, "some avg10=%lf", &v) == 1)
                        ret->cpu_some_avg10 = v;
                fclose(f);
        }
        f = fopen("/proc/loadavg", "re");
        if (f) {
                double v;
                if (fscanf(f, "%lf", &v) == 1)
                        ret->load1 = v;
                fclose(f);
        }
}

bool quiet_enough(const SpecQuiet *q, const QuietReading *r) {
        if (q->max_cpu_some_avg10 >= 0 && !isnan(r->cpu_some_avg10) &&
            r->cpu_some_avg10 > q->max_cpu_some_avg10)
                return false;
        if (q->max_load1 >= 0 && !isnan(r->load1) && r->load1 > q->max_load1)
                return false;
        return true;
}

bool quiet_wait(const SpecQuiet *q, QuietReading *ret, uint64_t *ret_waited_ns) {
        uint64_t start = now_ns();
        for (;;) {
                quiet_read(ret);
                uint64_t waited = now_ns() - start;
                *ret_waited_ns = waited;
                if (quiet_enough(q, ret))
                        return true;
                if (waited >= q->max_wait_ns)
                        return false;
                nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
        }
}
