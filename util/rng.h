/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/* A fresh seed for a run whose spec names none: random, and below 2^63 so that it is stored as a
 * non-negative SQLite integer. */
uint64_t rng_seed(void);

/* Deterministic 64-bit generator (splitmix64): the same state gives the same sequence, so that
 * shuffles (randomized order, env_offset) depend only on the seed. Inline: tests draw it often. */
static inline uint64_t rng_next(uint64_t *state) {
        uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}
