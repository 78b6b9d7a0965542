/* SPDX-License-Identifier: MIT */
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/rng.h"

uint64_t rng_seed(void) {
        uint64_t seed;
        if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                seed = (uint64_t) ts.tv_nsec ^ ((uint64_t) ts.tv_sec << 20) ^ ((uint64_t) getpid() << 40);
        }
        return seed >> 1;
}
