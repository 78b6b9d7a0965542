/* SPDX-License-Identifier: MIT */
/*
 * Statistics for comparisons. Ranks use average ranks for ties; p-values use the normal
 * approximation with tie correction and a 0.5 continuity correction, which is what the usual
 * references call "asymptotic"; exact small-sample tables are not used. The bootstrap draws
 * from rng_next() so results depend only on the data and the seed.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/compare.h"
#include "stats/median-sampler.h"
#include "stats/stats.h"
#include "util/cleanup.h"
#include "util/rng.h"

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

/*
 * One sample's values in ascending order, each with its index in the sample: sorted once, it
 * gives the median, the ranks of the rank-sum test (by merging two of them), the median sampler
 * of independent samples and the paired bootstrap's medians without sorting each resample: a
 * resample of rounds is how often each index was drawn, and its median is found by walking the
 * sorted values until the counts pass the middle, O(n) per resample instead of O(n log n).
 */
typedef struct Ranked {
        double value;
        size_t index;
} Ranked;

typedef struct SortedSample {
        Ranked *by_value;
        size_t n;
} SortedSample;

static int cmp_ranked(const void *a, const void *b) {
        return cmp_double(&((const Ranked *) a)->value, &((const Ranked *) b)->value);
}

static int sorted_init(SortedSample *s, const double *x, size_t n) {
        *s = (SortedSample){ .by_value = malloc((n ? n : 1) * sizeof(Ranked)), .n = n };
        if (!s->by_value)
                return -ENOMEM;
        bool ascending = true;
        for (size_t i = 0; i < n; i++) {
                s->by_value[i] = (Ranked){ x[i], i };
                ascending = ascending && (i == 0 || x[i - 1] <= x[i]);
        }
        if (!ascending) /* history hands its pools over sorted */
                qsort(s->by_value, n, sizeof(Ranked), cmp_ranked);
        return 0;
}

static void sorted_done(SortedSample *s) {
        free(s->by_value);
}

/* The median, as stats_median_sorted() gives it. */
static double sorted_median(const SortedSample *s) {
        const Ranked *v = s->by_value;
        size_t n = s->n;
        return n % 2 ? v[n / 2].value : (v[n / 2 - 1].value + v[n / 2].value) / 2;
}

/* Draws n indices of 0..n-1 into counts (a multiply and shift maps the 64-bit draw onto 0..n-1
 * without a division). */
static void draw(unsigned *counts, size_t n, uint64_t *rng) {
        memset(counts, 0, n * sizeof(unsigned));
        for (size_t i = 0; i < n; i++)
                counts[(size_t) (((unsigned __int128) rng_next(rng) * n) >> 64)]++;
}

/* The median of the resample that counts describes. */
static double counted_median(const SortedSample *s, const unsigned *counts) {
        const Ranked *v = s->by_value;
        size_t k = (s->n - 1) / 2, seen = 0, i = 0; /* k: the lower middle position */
        while (seen + counts[v[i].index] <= k)
                seen += counts[v[i++].index];
        double low = v[i].value;
        if (s->n % 2 || seen + counts[v[i].index] > k + 1)
                return low; /* odd n, or both middle positions hold this value */
        while (counts[v[++i].index] == 0)
                ;
        return (low + v[i].value) / 2;
}

static void swap_double(double *a, double *b) {
        double t = *a;
        *a = *b;
        *b = t;
}

/* Moves the k-th smallest of v[0..n) to v[k], smaller ones before it and larger ones after
 * (Hoare's selection with a median-of-three pivot): O(n) where sorting all of v would take
 * O(n log n), and the same value as sorting would put there. */
static void select_kth(double *v, size_t n, size_t k) {
        ptrdiff_t left = 0, right = (ptrdiff_t) n - 1, target = (ptrdiff_t) k;
        while (right > left) {
                ptrdiff_t mid = left + (right - left) / 2;
                if (v[mid] < v[left])
                        swap_double(&v[mid], &v[left]);
                if (v[right] < v[left])
                        swap_double(&v[right], &v[left]);
                if (v[right] < v[mid])
                        swap_double(&v[right], &v[mid]);
                double pivot = v[mid];
                ptrdiff_t i = left, j = right;
                while (i <= j) {
                        while (v[i] < pivot)
                                i++;
                        while (v[j] > pivot)
                                j--;
                        if (i <= j)
                                swap_double(&v[i++], &v[j--]);
                }
                /* Now v[left..j] <= pivot <= v[i..right], and whatever lies between equals it. */
                if (target <= j)
                        right = j;
                else if (target >= i)
                        left = i;
                else
                        return;
        }
}

void compare_percentile_interval(double *values, size_t n, double level, double *lo, double *hi) {
        double tail = (1 - level) / 2;
        size_t a = (size_t) floor(tail * (double) (n - 1)), b = (size_t) ceil((1 - tail) * (double) (n - 1));
        b = b < n ? b : n - 1;
        select_kth(values, n, a);
        *lo = values[a];
        /* Everything from a on is at least values[a]: the upper one is among them. */
        select_kth(values + a, n - a, b - a);
        *hi = values[b];
}

void compare_median_order_interval(const double *sorted, size_t n, double level, double *ret_lo,
                                   double *ret_hi) {
        /* The largest j with P(Binomial(n, 1/2) < j) <= (1 - level) / 2: then [x(j), x(n-j+1)]
         * (1-based order statistics) covers the median with probability at least `level`. */
        double tail = (1 - level) / 2, cdf = 0, log_pmf = -(double) n * M_LN2; /* log P(X = 0) */
        size_t j = 0;
        for (size_t i = 0; i < n; i++) {
                double pmf = exp(log_pmf);
                if (cdf + pmf > tail)
                        break;
                cdf += pmf;
                j = i + 1;
                log_pmf += log((double) (n - i) /
                               (double) (i + 1)); /* C(n, i + 1) = C(n, i) (n - i) / (i + 1) */
        }
        size_t low = j > 0 ? j - 1 : 0; /* 0-based */
        *ret_lo = sorted[low];
        *ret_hi = sorted[n - 1 - low];
}

static int sampler_of(const SortedSample *s, MedianSampler *ret) {
        double *sorted = malloc(s->n * sizeof(double));
        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < s->n; i++)
                sorted[i] = s->by_value[i].value;
        return median_sampler_init(ret, sorted, s->n);
}

/* compare_ratio_ci() of two sorted samples: their resamples' medians drawn directly
 * (stats/median-sampler.h). */
static int ratio_ci(const SortedSample *a, const SortedSample *b, uint64_t seed, unsigned resamples,
                    double level, double *ret_lo, double *ret_hi) {
        _cleanup_free_ double *ratios = malloc(resamples * sizeof(double));
        _cleanup_(median_sampler_done) MedianSampler ma = {}, mb = {};
        if (!ratios || sampler_of(a, &ma) < 0 || sampler_of(b, &mb) < 0)
                return -ENOMEM;
        uint64_t rng = seed;
        for (unsigned i = 0; i < resamples; i++) {
                double median_a = median_sampler_draw(&ma, &rng);
                double median_b = median_sampler_draw(&mb, &rng);
                ratios[i] = median_a != 0 ? median_b / median_a : NAN;
        }
        compare_percentile_interval(ratios, resamples, level, ret_lo, ret_hi);
        return 0;
}

int compare_ratio_ci(const double *a, size_t na, const double *b, size_t nb, uint64_t seed,
                     unsigned resamples, double level, double *ret_lo, double *ret_hi) {
        if (na == 0 || nb == 0 || resamples == 0)
                return -EINVAL;
        _cleanup_(sorted_done) SortedSample sa = {}, sb = {};
        if (sorted_init(&sa, a, na) < 0 || sorted_init(&sb, b, nb) < 0)
                return -ENOMEM;
        return ratio_ci(&sa, &sb, seed, resamples, level, ret_lo, ret_hi);
}

/* Average ranks (1-based) of values into ranks[index]; returns sum over tie groups of t^3 - t. */
static double rank(Ranked *r, size_t n, double *ranks) {
        qsort(r, n, sizeof(Ranked), cmp_ranked);
        double ties = 0;
        for (size_t i = 0; i < n;) {
                size_t j = i;
                while (j + 1 < n && r[j + 1].value == r[i].value)
                        j++;
                double average = (double) (i + j) / 2 + 1;
                for (size_t k = i; k <= j; k++)
                        ranks[r[k].index] = average;
                double t = (double) (j - i + 1);
                ties += t * t * t - t;
                i = j + 1;
        }
        return ties;
}

/* Two-sided p-value of a normal statistic with a continuity correction. */
static double two_sided_p(double statistic, double mean, double sd) {
        if (sd <= 0)
                return 1;
        double z = (fabs(statistic - mean) - 0.5) / sd;
        if (z < 0)
                z = 0;
        return erfc(z / sqrt(2));
}

/*
 * The exact two-sided p of a rank statistic: the probability, over every equally likely way the
 * ranks could have fallen, that a sum of ranks is at least as far from its mean as the observed
 * one. ranks[0..n) are the (average, so tie-aware) ranks; with `pick` > 0 the statistic sums
 * `pick` of them chosen without replacement (rank-sum: which values are sample a's), with
 * pick == 0 each rank is in or out on its own (signed-rank: which differences are positive).
 * Ranks are whole or halves, so doubled they count exactly; the counts are doubles, exact
 * below 2^53, which COMPARE_EXACT_MAX keeps them under. Returns 0 or -ENOMEM.
 */
static int exact_p(const double *ranks, size_t n, size_t pick, double observed, double *ret_p) {
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
                total += (size_t) llround(2 * ranks[i]);
        size_t rows = pick ? pick + 1 : 1, width = total + 1;
        _cleanup_free_ double *ways = calloc(rows * width, sizeof(double)); /* ways[k][sum] */
        if (!ways)
                return -ENOMEM;
        ways[0] = 1;
        for (size_t i = 0; i < n; i++) {
                size_t r = (size_t) llround(2 * ranks[i]);
                /* Rows and sums descending, so that each rank counts once in a way. */
                for (size_t k = rows; k-- > (pick ? 1 : 0);) {
                        double *to = &ways[k * width];
                        const double *from = pick ? to - width : to;
                        for (size_t sum = total + 1; sum-- > r;)
                                to[sum] += from[sum - r];
                }
        }
        const double *last = &ways[(rows - 1) * width];
        /* The mean of the doubled sum: pick/n of the total, or half of it. */
        double mean = pick ? (double) total * (double) pick / (double) n : (double) total / 2;
        double distance = fabs(2 * observed - mean) - 1e-9, all = 0, tail = 0;
        for (size_t sum = 0; sum <= total; sum++) {
                all += last[sum];
                if (fabs((double) sum - mean) >= distance)
                        tail += last[sum];
        }
        *ret_p = all > 0 ? fmin(1, tail / all) : 1;
        return 0;
}

/* The rank-sum test of two sorted samples: merging them ranks both at once. The ranks are kept
 * (a's, then b's, by index) only for the exact p. */
static int rank_sum_test(const SortedSample *a, const SortedSample *b, double *ret_u, double *ret_p) {
        size_t na = a->n, nb = b->n, n = na + nb, i = 0, j = 0;
        _cleanup_free_ double *ranks = n <= COMPARE_EXACT_MAX ? malloc(n * sizeof(double)) : NULL;
        if (n <= COMPARE_EXACT_MAX && !ranks)
                return -ENOMEM;
        const Ranked *va = a->by_value, *vb = b->by_value;
        double ties = 0, ra = 0; /* sum over tie groups of t^3 - t; a's rank sum (exact: halves) */
        while (i < na || j < nb) {
                /* The next group of equal values, from both sides; at least one value. */
                size_t first_a = i, first_b = j;
                double v;
                if (j == nb || (i < na && va[i].value <= vb[j].value))
                        for (v = va[i++].value; i < na && va[i].value == v;)
                                i++;
                else
                        v = vb[j].value;
                while (j < nb && vb[j].value == v)
                        j++;
                if (j == first_b && i == first_a)
                        j++; /* a NaN of b's equals nothing: a group of its own */
                size_t first = first_a + first_b, last = i + j - 1;
                double average = (double) (first + last) / 2 + 1, t = (double) (last - first + 1);
                ra += average * (double) (i - first_a);
                ties += t * t * t - t;
                for (size_t k = first_a; ranks && k < i; k++)
                        ranks[va[k].index] = average;
                for (size_t k = first_b; ranks && k < j; k++)
                        ranks[na + vb[k].index] = average;
        }
        double u = ra - (double) na * (double) (na + 1) / 2;
        *ret_u = u;
        if (ranks)
                return exact_p(ranks, n, na, ra, ret_p);
        double mean = (double) na * (double) nb / 2;
        double variance =
                (double) na * (double) nb / 12 * ((double) (n + 1) - ties / ((double) n * (double) (n - 1)));
        *ret_p = two_sided_p(u, mean, sqrt(variance));
        return 0;
}

int compare_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *ret_u,
                         double *ret_p) {
        if (na == 0 || nb == 0)
                return -EINVAL;
        _cleanup_(sorted_done) SortedSample sa = {}, sb = {};
        if (sorted_init(&sa, a, na) < 0 || sorted_init(&sb, b, nb) < 0)
                return -ENOMEM;
        return rank_sum_test(&sa, &sb, ret_u, ret_p);
}

int compare_wilcoxon(const double *a, const double *b, size_t n, double *ret_w, double *ret_p) {
        _cleanup_free_ Ranked *r = malloc((n ? n : 1) * sizeof(Ranked));
        _cleanup_free_ double *ranks = malloc((n ? n : 1) * sizeof(double));
        _cleanup_free_ double *d = malloc((n ? n : 1) * sizeof(double));
        if (!r || !ranks || !d)
                return -ENOMEM;
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
                if (b[i] - a[i] != 0) {
                        d[m] = b[i] - a[i];
                        r[m] = (Ranked){ fabs(d[m]), m };
                        m++;
                }
        if (m == 0)
                return -EINVAL;
        double ties = rank(r, m, ranks);
        double plus = 0, minus = 0;
        for (size_t i = 0; i < m; i++)
                *(d[i] > 0 ? &plus : &minus) += ranks[i];
        *ret_w = plus < minus ? plus : minus;
        if (m <= COMPARE_EXACT_MAX)
                return exact_p(ranks, m, 0, plus, ret_p);
        double mm = (double) m;
        double mean = mm * (mm + 1) / 4;
        double variance = mm * (mm + 1) * (2 * mm + 1) / 24 - ties / 48;
        *ret_p = two_sided_p(*ret_w, mean, sqrt(variance));
        return 0;
}

double compare_smallest_p(size_t n, bool rounds) {
        if (n == 0)
                return 1;
        double p = 2;
        if (rounds && n >= COMPARE_MIN_PAIRS) /* signed-rank: every pair one way, 2 / 2^n */
                for (size_t i = 0; i < n; i++)
                        p /= 2;
        else /* rank-sum: the two samples fully apart, 2 / C(2n, n) */
                for (size_t i = 1; i <= n; i++)
                        p *= (double) i / (double) (n + i);
        return fmin(1, p);
}

unsigned compare_samples_needed(double alpha, bool rounds) {
        unsigned n = 1;
        while (n < 1000 && compare_smallest_p(n, rounds) >= alpha)
                n++;
        return n;
}

int compare_outliers(const double *x, size_t n, bool *ret_flags) {
        memset(ret_flags, 0, n * sizeof(bool));
        if (n == 0)
                return 0;
        _cleanup_free_ double *copy = malloc(n * sizeof(double));
        if (!copy)
                return -ENOMEM;
        memcpy(copy, x, n * sizeof(double));
        Stats s;
        if (stats_compute(copy, n, &s) < 0)
                return -ENOMEM;
        int flagged = 0;
        for (size_t i = 0; i < n; i++) {
                double deviation = fabs(x[i] - s.median);
                bool outlier = s.mad > 0 ? 0.6745 * deviation / s.mad > COMPARE_OUTLIER_Z : deviation > 0;
                ret_flags[i] = outlier;
                flagged += outlier;
        }
        return flagged;
}

/* The verdict rule of compare.h, shared by both designs. */
static void decide(Comparison *c, double min_effect, double alpha) {
        bool significant = c->p < alpha && (c->lo > 1 || c->hi < 1) && fabs(c->ratio - 1) >= min_effect;
        c->verdict = !significant ? VERDICT_SAME : c->ratio < 1 ? VERDICT_LOWER : VERDICT_HIGHER;
}

static int independent(const double *base, size_t nb, const double *x, size_t nx, uint64_t seed,
                       double min_effect, double alpha, bool screen, Comparison *ret) {
        if (nb == 0 || nx == 0)
                return -EINVAL;
        _cleanup_(sorted_done) SortedSample sb = {}, sx = {};
        if (sorted_init(&sb, base, nb) < 0 || sorted_init(&sx, x, nx) < 0)
                return -ENOMEM;
        double mb = sorted_median(&sb);
        if (mb == 0)
                return -EINVAL;
        Comparison c = { .ratio = sorted_median(&sx) / mb, .lo = NAN, .hi = NAN };
        double u;
        int r = rank_sum_test(&sb, &sx, &u, &c.p);
        if (r < 0)
                return r;
        bool candidate = c.p < alpha && fabs(c.ratio - 1) >= min_effect;
        if ((!screen || candidate) &&
            (r = ratio_ci(&sb, &sx, seed, COMPARE_RESAMPLES, COMPARE_LEVEL, &c.lo, &c.hi)) < 0)
                return r;
        decide(&c, min_effect, alpha); /* NAN bounds compare false: never a difference */
        *ret = c;
        return 0;
}

int compare_to_baseline(const double *base, size_t nb, const double *x, size_t nx, uint64_t seed,
                        double min_effect, double alpha, Comparison *ret) {
        return independent(base, nb, x, nx, seed, min_effect, alpha, false, ret);
}

int compare_screen_to_baseline(const double *base, size_t nb, const double *x, size_t nx, uint64_t seed,
                               double min_effect, double alpha, Comparison *ret) {
        return independent(base, nb, x, nx, seed, min_effect, alpha, true, ret);
}

int compare_paired_to_baseline(const double *base, const double *x, size_t n, uint64_t seed,
                               double min_effect, double alpha, Comparison *ret) {
        if (n == 0)
                return -EINVAL;
        _cleanup_free_ unsigned *counts = malloc(n * sizeof(unsigned));
        _cleanup_free_ double *ratios = malloc(COMPARE_RESAMPLES * sizeof(double));
        _cleanup_(sorted_done) SortedSample sb = {}, sx = {};
        if (!counts || !ratios || sorted_init(&sb, base, n) < 0 || sorted_init(&sx, x, n) < 0)
                return -ENOMEM;
        double mb = sorted_median(&sb);
        if (mb == 0)
                return -EINVAL;
        Comparison c = { .ratio = sorted_median(&sx) / mb, .paired = true };
        /* Resampling whole rounds keeps each pair together: one draw of rounds, both medians. */
        uint64_t rng = seed;
        for (unsigned i = 0; i < COMPARE_RESAMPLES; i++) {
                draw(counts, n, &rng);
                double b = counted_median(&sb, counts);
                ratios[i] = b != 0 ? counted_median(&sx, counts) / b : NAN;
        }
        compare_percentile_interval(ratios, COMPARE_RESAMPLES, COMPARE_LEVEL, &c.lo, &c.hi);
        double w;
        int r = compare_wilcoxon(base, x, n, &w, &c.p);
        if (r == -EINVAL) /* every pair equal: no difference at all */
                c.p = 1;
        else if (r < 0)
                return r;
        decide(&c, min_effect, alpha);
        *ret = c;
        return 0;
}

/* z with P(Z <= z) = p for a standard normal Z, 0.5 <= p < 1, by bisection on erfc. */
static double normal_quantile(double p) {
        double lo = 0, hi = 40;
        for (int i = 0; i < 200; i++) {
                double mid = (lo + hi) / 2;
                if (1 - erfc(mid / sqrt(2)) / 2 < p)
                        lo = mid;
                else
                        hi = mid;
        }
        return (lo + hi) / 2;
}

int compare_geomean(const Comparison *const *c, size_t n, double level, double *ret_mean, double *ret_lo,
                    double *ret_hi) {
        if (n == 0)
                return -EINVAL;
        double z = normal_quantile(1 - (1 - level) / 2), sum = 0, variance = 0;
        for (size_t i = 0; i < n; i++) {
                sum += log(c[i]->ratio);
                if (c[i]->lo > 0 && c[i]->hi > 0) {
                        double se = (log(c[i]->hi) - log(c[i]->lo)) / (2 * z);
                        variance += se * se;
                }
        }
        double mean = sum / (double) n, se = sqrt(variance) / (double) n;
        *ret_mean = exp(mean);
        *ret_lo = n == 1 ? c[0]->lo : exp(mean - z * se); /* one cell: its own interval */
        *ret_hi = n == 1 ? c[0]->hi : exp(mean + z * se);
        return 0;
}

const char *comparison_test(const Comparison *c) {
        return c->paired ? "wilcoxon" : "mann-whitney";
}

const char *verdict_word(Verdict v, bool time_metric) {
        switch (v) {
        case VERDICT_LOWER:
                return time_metric ? "faster" : "lower";
        case VERDICT_HIGHER:
                return time_metric ? "slower" : "higher";
        default:
                return "~";
        }
}
