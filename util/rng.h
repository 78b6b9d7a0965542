/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/* A fresh seed for a run whose spec names none: random, and below 2^63 so that it is stored as a
 * non-negative SQLite integer. */
uint64_t rng_seed(void);

/* Deterministic 64-bit generator (splitmix64): the same state gives the same sequence, so that
 * shuffles and bootstrap intervals depend only on the seed. */
uint64_t rng_next(uint64_t *state);
