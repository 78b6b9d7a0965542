/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * The null distributions of the two rank statistics alloclab tests with, as counts of pairs:
 * the rank-sum statistic (Mann-Whitney U: of the m x n pairs of two independent samples, how many
 * lie one way) and the signed-rank statistic (of the n(n+1)/2 Walsh averages of n paired
 * differences, how many lie one way). Exact up to RANKS_EXACT_MAX values (counted from their
 * generating functions); beyond, the normal approximation with a continuity correction.
 */

#define RANKS_EXACT_MAX 50 /* values (both samples, or pairs) up to which the distribution is exact */

typedef struct RankNull {
        double *cdf;  /* exact: cdf[t] = P(T <= t), t = 0..pairs; NULL: normal approximation */
        size_t pairs; /* the statistic's range: 0..pairs */
        double mean, sd;
} RankNull;

/* The rank-sum statistic's distribution for samples of m and n values (m, n > 0). Returns 0 or
 * -ENOMEM. */
int rank_null_rank_sum(RankNull *ret, size_t m, size_t n);

/* The signed-rank statistic's distribution for n pairs (n > 0). Returns 0 or -ENOMEM. */
int rank_null_signed_rank(RankNull *ret, size_t n);

void rank_null_done(RankNull *r);

/* P(T <= t). */
double rank_null_cdf(const RankNull *r, size_t t);

/* The largest t with P(T <= t) < tail, plus one: the 1-based rank, counted from either end, of
 * the pair that bounds the interval inverting a two-sided test at 2 * tail. 0 when even
 * P(T <= 0) reaches tail (no interval narrower than everything). */
size_t rank_null_bound(const RankNull *r, double tail);

/* The smallest two-sided p the test can give: 2 P(T <= 0), at most 1. */
double rank_null_smallest_p(const RankNull *r);
