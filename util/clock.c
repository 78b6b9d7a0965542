/* SPDX-License-Identifier: MIT */
#include <time.h>

#include "util/clock.h"

uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

uint64_t now_usec(void) {
        return now_ns() / 1000;
}
