/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/*
 * One ratio per machine, machines as the unit (alloclab fleet): each machine measured the ratio
 * of a variant to its baseline within its own run, with an interval; machines are never pooled
 * sample by sample. What they say together: the geometric mean with a t interval over the
 * machines (their spread, not their samples, makes its width: a random-effects view, in which
 * machines are drawn from a population), and whether they disagree beyond what their own
 * intervals allow (Cochran's Q on the log ratios, weighted by each interval's width).
 */

typedef struct MachineRatio {
        double ratio, lo, hi; /* the machine's ratio and its interval */
        double level;         /* that interval's confidence level (0.95) */
} MachineRatio;

typedef struct PooledRatio {
        size_t k;               /* machines */
        double geomean;         /* of the ratios */
        double lo, hi;          /* t interval at `level` over the machines' log ratios; NAN with k < 2 */
        double q, p, i_squared; /* Cochran's Q (k - 1 df), its p (chi-square, Wilson-Hilferty),
                                 * I^2 = (Q - df) / Q, at least 0; NAN with k < 2 */
} PooledRatio;

/* Pools m[0..k). An interval of width 0 (every sample equal) counts as a very narrow one.
 * Returns 0, or -EINVAL when a ratio or bound is not positive and finite. */
int pool_machine_ratios(const MachineRatio *m, size_t k, double level, PooledRatio *ret);
