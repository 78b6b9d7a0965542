/* SPDX-License-Identifier: MIT */
/*
 * What the event counters (runner/counters.h) cost the spawner per child, outside the clock:
 * opening the set, reading it after the reap and closing it, N times (default 2000), against
 * the same loop with nothing in it.
 *
 *   build/bench/counters-cost [N]
 */
#include <stdio.h>
#include <stdlib.h>

#include "runner/counters.h"
#include "util/clock.h"

int main(int argc, char **argv) {
        long n = argc > 1 ? atol(argv[1]) : 2000;
        if (n <= 0)
                return 2;
        CounterSet set;
        CounterValues values;
        uint64_t start = now_ns();
        for (long i = 0; i < n; i++) {
                counters_open(&set);
                counters_read(&set, &values);
                counters_close(&set);
        }
        double per_child_us = (double) (now_ns() - start) / (double) n / 1e3;
        counters_open(&set);
        unsigned opened = 0;
        for (int c = 0; c < N_COUNTERS; c++)
                opened += set.fd[c] >= 0;
        counters_close(&set);
        printf("%u of %d counters open here; open + read + close: %.1f us per child\n", opened, N_COUNTERS,
               per_child_us);
        return 0;
}
