/* SPDX-License-Identifier: MIT */
/*
 * The counts come from generating functions: the rank-sum statistic's is the Gaussian binomial
 * [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), the signed-rank statistic's
 * prod_{i=1..n} (1 + q^i). Counts stay below C(50, 25) ~ 1.3e14 and 2^50, exact in doubles.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stats/ranks.h"

/* Turns counts[0..=pairs] into the cumulative distribution. */
static void to_cdf(double *counts, size_t pairs) {
        double total = 0;
        for (size_t t = 0; t <= pairs; t++)
                total += counts[t];
        double running = 0;
        for (size_t t = 0; t <= pairs; t++) {
                running += counts[t];
                counts[t] = running / total;
        }
}

int rank_null_rank_sum(RankNull *ret, size_t m, size_t n) {
        double mm = (double) m, nn = (double) n;
        *ret = (RankNull){ .pairs = m * n, .mean = mm * nn / 2, .sd = sqrt(mm * nn * (mm + nn + 1) / 12) };
        if (m + n > RANKS_EXACT_MAX)
                return 0;
        /* Room for the product before each division: degree m n, and m more. */
        double *c = calloc(m * n + m + 1, sizeof(double));
        if (!c)
                return -ENOMEM;
        c[0] = 1;
        for (size_t i = 1, degree = 0; i <= m; i++) {
                /* Times (1 - q^(n+i)), then divided by (1 - q^i): [n+i choose i]_q, whole again
                 * (the division runs over the product's whole degree, leaving zeros above). */
                size_t a = n + i;
                for (size_t t = degree + a + 1; t-- > a;)
                        c[t] -= c[t - a];
                for (size_t t = i; t <= degree + a; t++)
                        c[t] += c[t - i];
                degree += n;
        }
        to_cdf(c, m * n);
        ret->cdf = c;
        return 0;
}

int rank_null_signed_rank(RankNull *ret, size_t n) {
        double nn = (double) n;
        *ret = (RankNull){ .pairs = n * (n + 1) / 2,
                           .mean = nn * (nn + 1) / 4,
                           .sd = sqrt(nn * (nn + 1) * (2 * nn + 1) / 24) };
        if (n > RANKS_EXACT_MAX)
                return 0;
        double *c = calloc(ret->pairs + 1, sizeof(double));
        if (!c)
                return -ENOMEM;
        c[0] = 1;
        for (size_t i = 1, degree = 0; i <= n; i++) { /* times (1 + q^i) */
                degree += i;
                for (size_t t = degree + 1; t-- > i;)
                        c[t] += c[t - i];
        }
        to_cdf(c, ret->pairs);
        ret->cdf = c;
        return 0;
}

void rank_null_done(RankNull *r) {
        free(r->cdf);
        r->cdf = NULL;
}

double rank_null_cdf(const RankNull *r, size_t t) {
        if (t >= r->pairs)
                return 1;
        if (r->cdf)
                return r->cdf[t];
        return erfc(-((double) t + 0.5 - r->mean) / (r->sd * M_SQRT2)) / 2;
}

size_t rank_null_bound(const RankNull *r, double tail) {
        /* The cdf rises with t: the first t at which it reaches tail, by bisection. */
        size_t lo = 0, hi = r->pairs;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (rank_null_cdf(r, mid) < tail)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

double rank_null_smallest_p(const RankNull *r) {
        return fmin(1, 2 * rank_null_cdf(r, 0));
}
