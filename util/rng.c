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

uint64_t rng_next(uint64_t *state) {
        uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}
