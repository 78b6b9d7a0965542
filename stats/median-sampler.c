/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stats/median-sampler.h"
#include "util/rng.h"

/* A uniform double in [0, 1) from the generator's top 53 bits. */
static double uniform(uint64_t *rng) {
        return (double) (rng_next(rng) >> 11) * 0x1.0p-53;
}

/*
 * P(X <= k - 1) and P(X >= k) for X ~ Binomial(n, p), each accurate where it is small: the
 * smaller tail is summed outward from its end next to k, where its terms are largest and only
 * shrink, until they no longer change the sum; the other is its complement. log_choose is
 * log C(n, k - 1).
 */
static void binomial_tails(size_t n, size_t k, double p, double log_choose, double *ret_below,
                           double *ret_above) {
        if (p <= 0 || p >= 1) {
                *ret_below = p <= 0 ? 1 : 0; /* every draw is 0, or every draw is n */
                *ret_above = 1 - *ret_below;
                return;
        }
        double lp = log(p), lq = log1p(-p), odds = p / (1 - p), sum = 0;
        if ((double) k - 1 < (double) n * p) { /* k - 1 lies below the mean: sum P(X <= k - 1) down */
                size_t i = k - 1;
                double term = exp(log_choose + (double) i * lp + (double) (n - i) * lq);
                for (;;) {
                        sum += term;
                        if (i == 0 || term < sum * 1e-17)
                                break;
                        term *= (double) i / (double) (n - i + 1) / odds;
                        i--;
                }
                *ret_below = fmin(sum, 1);
                *ret_above = 1 - *ret_below;
        } else { /* sum P(X >= k) up, from C(n, k) = C(n, k - 1) (n - k + 1) / k */
                size_t i = k;
                double term = exp(log_choose + log((double) (n - k + 1) / (double) k) + (double) i * lp +
                                  (double) (n - i) * lq);
                for (;;) {
                        sum += term;
                        if (i == n || term < sum * 1e-17)
                                break;
                        term *= (double) (n - i) / (double) (i + 1) * odds;
                        i++;
                }
                *ret_above = fmin(sum, 1);
                *ret_below = 1 - *ret_above;
        }
}

/*
 * For even n, the probability that the (k+1)-th smallest draw lies above position j given that
 * the k-th lies at j: exactly k draws at or below j, at least one of them at j, over the
 * probability that the k-th lies at j. log_choose_k is log C(n, k).
 */
static double upper_middle_above(const MedianSampler *s, size_t j, double log_choose_k) {
        size_t n = s->n, k = s->k;
        if (j == n)
                return 0;
        double nn = (double) n, jj = (double) j;
        double log_joint = log_choose_k + (double) k * log(jj / nn) +
                           (double) (n - k) * log((nn - jj) / nn) + log(-expm1((double) k * log1p(-1 / jj)));
        /* P(the k-th lies at j), from whichever tail keeps its digits. */
        double at = s->above[j] < 0.5 ? s->above[j] - s->above[j - 1] : s->below[j - 1] - s->below[j];
        return at > 0 ? fmin(1, exp(log_joint) / at) : 0;
}

int median_sampler_init(MedianSampler *s, double *sorted, size_t n) {
        *s = (MedianSampler){ .sorted = sorted, .n = n, .k = (n + 1) / 2 };
        s->below = malloc((n + 1) * sizeof(double));
        s->above = malloc((n + 1) * sizeof(double));
        s->upper_above = n % 2 ? NULL : malloc((n + 1) * sizeof(double));
        if (!s->sorted || !s->below || !s->above || (n % 2 == 0 && !s->upper_above)) {
                median_sampler_done(s);
                return -ENOMEM;
        }
        double log_choose = lgamma((double) n + 1) - lgamma((double) s->k) - lgamma((double) (n - s->k) + 2);
        for (size_t j = 0; j <= n; j++)
                binomial_tails(n, s->k, (double) j / (double) n, log_choose, &s->below[j], &s->above[j]);
        for (size_t j = 1; s->upper_above && j <= n; j++)
                s->upper_above[j] =
                        upper_middle_above(s, j, log_choose + log((double) (n - s->k + 1) / (double) s->k));
        return 0;
}

void median_sampler_done(MedianSampler *s) {
        free(s->sorted);
        free(s->below);
        free(s->above);
        free(s->upper_above);
        *s = (MedianSampler){};
}

/* The position (1-based) of the k-th smallest of n draws: the smallest j with
 * P(it is at most j) > v, that is below[j] < 1 - v. */
static size_t draw_position(const MedianSampler *s, uint64_t *rng) {
        double w = 1 - uniform(rng); /* (0, 1] */
        size_t lo = 1, hi = s->n;    /* below[n] = 0 < w: the answer is in [lo, hi] */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (s->below[mid] < w)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return lo;
}

double median_sampler_draw(const MedianSampler *s, uint64_t *rng) {
        size_t j = draw_position(s, rng);
        if (s->n % 2)
                return s->sorted[j - 1];
        size_t upper = j;
        if (uniform(rng) < s->upper_above[j]) {
                /* The other n - k draws fall uniformly above j; the smallest of them, by inversion of
                 * P(all m of them >= t) = (1 - t)^m. */
                double v = 1 - uniform(rng), m = (double) (s->n - s->k);
                upper = j + 1 + (size_t) ((double) (s->n - j) * -expm1(log(v) / m));
                if (upper > s->n)
                        upper = s->n;
        }
        return (s->sorted[j - 1] + s->sorted[upper - 1]) / 2;
}
