/* SPDX-License-Identifier: MIT */
/*
 * The ratios behind an estimate are never listed: n m of them (or n(n+1)/2 Walsh averages) would
 * be a million for two samples of a thousand. They form a set sorted implicitly by the two sorted
 * samples, whose members at or below a value are counted in one pass (two pointers), so the k-th
 * smallest is found by bisecting over the doubles themselves, at most 64 counts: O(n) memory and
 * O(64 n) time for every order statistic of the set (compare the median-of-pairwise-differences
 * algorithms of Monahan, 1984). The counts, taken at the ratio 1, are also the test statistics.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/compare.h"
#include "stats/ranks.h"
#include "stats/stats.h"
#include "stats/student.h"
#include "util/cleanup.h"

/* The implicit set: every combine(x[j], base[i]) (cross), or every combine(d[i], d[j]) with
 * i <= j (Walsh), of ascending arrays. combine is a ratio (or a geometric mean of two ratios) on
 * positive values, a difference (or a mean) otherwise; it rises with its first argument and, for
 * cross, falls with its second, which is what the counting needs. */
typedef struct PairSet {
        const double *x, *base; /* Walsh: x only */
        size_t nx, nb;
        bool walsh, ratio;
} PairSet;

static double combine(const PairSet *s, double a, double b) {
        if (s->walsh)
                return s->ratio ? sqrt(a * b) : (a + b) / 2;
        return s->ratio ? a / b : a - b;
}

static size_t pair_count(const PairSet *s) {
        return s->walsh ? s->nx * (s->nx + 1) / 2 : s->nx * s->nb;
}

/* How many members are <= t (or < t when strict). */
static size_t count_below(const PairSet *s, double t, bool strict) {
#define BELOW(v) (strict ? (v) < t : (v) <= t)
        size_t count = 0;
        if (!s->walsh) {
                /* For each x[j], the base values that keep the member below t are a suffix of
                 * base, whose start only moves right as x[j] grows. */
                size_t first = 0;
                for (size_t j = 0; j < s->nx; j++) {
                        while (first < s->nb && !BELOW(combine(s, s->x[j], s->base[first])))
                                first++;
                        count += s->nb - first;
                }
                return count;
        }
        /* For each i, the j >= i that keep it below t are a prefix up to last, which only moves
         * left as i grows. */
        ptrdiff_t last = (ptrdiff_t) s->nx - 1;
        for (size_t i = 0; i < s->nx; i++) {
                while (last >= (ptrdiff_t) i && !BELOW(combine(s, s->x[i], s->x[last])))
                        last--;
                if (last < (ptrdiff_t) i)
                        break;
                count += (size_t) (last - (ptrdiff_t) i + 1);
        }
        return count;
#undef BELOW
}

/* Doubles as unsigned integers in the same order (negative ones reversed), for bisection. */
static uint64_t order_key(double v) {
        uint64_t u;
        memcpy(&u, &v, sizeof(u));
        return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

static double key_value(uint64_t k) {
        uint64_t u = k >> 63 ? k & ~(UINT64_C(1) << 63) : ~k;
        double v;
        memcpy(&v, &u, sizeof(v));
        return v;
}

/* The k-th smallest member (1 <= k <= pair_count): the smallest double with at least k members
 * at or below it, which is a member. */
static double kth(const PairSet *s, size_t k) {
        size_t nb = s->walsh ? s->nx : s->nb;
        const double *b = s->walsh ? s->x : s->base;
        double smallest = combine(s, s->x[0], s->walsh ? b[0] : b[nb - 1]);
        double largest = combine(s, s->x[s->nx - 1], s->walsh ? b[nb - 1] : b[0]);
        uint64_t lo = order_key(smallest), hi = order_key(largest);
        while (lo < hi) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (count_below(s, key_value(mid), false) >= k)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return key_value(lo);
}

/* The median of the set: the Hodges-Lehmann estimate (for an even count, the middle two's mean
 * by combine: on ratios their geometric mean, the mean of their logs). */
static double set_median(const PairSet *s) {
        size_t n = pair_count(s);
        double low = kth(s, (n + 1) / 2);
        if (n % 2)
                return low;
        double high = kth(s, n / 2 + 1);
        return s->ratio ? sqrt(low * high) : (low + high) / 2;
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

double compare_test_alpha(const CompareRule *rule) {
        size_t tests = rule->tests ? rule->tests : 1;
        return rule->correction == CORRECTION_NONE ? rule->alpha : rule->alpha / (double) tests;
}

double compare_smallest_p(size_t n, bool paired) {
        if (n == 0)
                return 1;
        double p = 2;
        if (paired) /* signed-rank: every round one way, 2 / 2^n */
                for (size_t i = 0; i < n; i++)
                        p /= 2;
        else /* rank-sum: the two samples fully apart, 2 / C(2n, n) */
                for (size_t i = 1; i <= n; i++)
                        p *= (double) i / (double) (n + i);
        return fmin(1, p);
}

bool compare_pairs(size_t n, const CompareRule *rule) {
        return n >= COMPARE_MIN_PAIRS && compare_smallest_p(n, true) < compare_test_alpha(rule) / 4;
}

bool compare_can_decide(size_t n, bool rounds, const CompareRule *rule) {
        double best = rule->correction == CORRECTION_BH ? rule->alpha : compare_test_alpha(rule);
        return compare_smallest_p(n, rounds && compare_pairs(n, rule)) < best;
}

unsigned compare_samples_needed(bool rounds, const CompareRule *rule) {
        unsigned n = 1;
        while (n < 1000 && !compare_can_decide(n, rounds, rule))
                n++;
        return n;
}

/*
 * Estimate, interval, test and detectable change from the set s and the null distribution of
 * its count statistic. neutral is "no difference" (1 for ratios, 0 for differences); scale turns
 * a difference into a fraction of the baseline (1 for ratios).
 */
static void estimate(const PairSet *s, const RankNull *null, double neutral, double scale,
                     const CompareRule *rule, Comparison *c) {
        size_t n = pair_count(s);
        double mid = set_median(s);
        /* The two one-sided counts at "no difference", ties there counted against a decision:
         * the interval excludes neutral from above exactly when its lower bound's rank k exceeds
         * the members at or below neutral, i.e. when P(T <= that count) < alpha / 2. */
        size_t at_or_below = count_below(s, neutral, false);
        size_t at_or_above = n - count_below(s, neutral, true);
        c->p = fmin(1, 2 * fmin(rank_null_cdf(null, at_or_below), rank_null_cdf(null, at_or_above)));
        c->p_adjusted = c->p;
        double interval_alpha = rule->interval_alpha > 0 ? rule->interval_alpha : rule->alpha;
        size_t k = rank_null_bound(null, interval_alpha / 2);
        double lo = k > 0 ? kth(s, k) : s->ratio ? 0 : -INFINITY;
        double hi = k > 0 ? kth(s, n + 1 - k) : INFINITY;
        if (s->ratio) {
                c->ratio = mid, c->lo = lo, c->hi = hi;
        } else {
                c->ratio = 1 + mid / scale, c->lo = 1 + lo / scale, c->hi = 1 + hi / scale;
        }
        /* The interval's half-width on the log (or fraction) scale read as z standard errors;
         * a change is found with COMPARE_POWER when it lies z_test + z_power of them out. */
        double test_alpha = compare_test_alpha(rule);
        double half = s->ratio ? (log(c->hi) - log(c->lo)) / 2 : (c->hi - c->lo) / 2;
        double se = half / normal_quantile(1 - interval_alpha / 2);
        double reach = (normal_quantile(1 - test_alpha / 2) + normal_quantile(COMPARE_POWER)) * se;
        bool can = rank_null_smallest_p(null) < test_alpha && isfinite(se);
        c->detectable = !can ? INFINITY : s->ratio ? expm1(reach) : reach;
}

/* Ascending copies of values, and whether they are all positive (ratios) or not (differences). */
static double *sorted_copy(const double *v, size_t n) {
        double *copy = malloc(n * sizeof(double));
        if (!copy)
                return NULL;
        memcpy(copy, v, n * sizeof(double));
        stats_sort(copy, n);
        return copy;
}

static bool all_positive(const double *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!(v[i] > 0))
                        return false;
        return true;
}

int compare_independent(const double *base, size_t nb, const double *x, size_t nx, const CompareRule *rule,
                        Comparison *ret) {
        if (nb == 0 || nx == 0)
                return -EINVAL;
        _cleanup_free_ double *sb = sorted_copy(base, nb), *sx = sorted_copy(x, nx);
        if (!sb || !sx)
                return -ENOMEM;
        PairSet s = {
                .x = sx, .base = sb, .nx = nx, .nb = nb, .ratio = all_positive(sb, 1) && all_positive(sx, 1)
        };
        double scale = 1;
        if (!s.ratio && (scale = fabs(stats_median_sorted(sb, nb))) == 0)
                return -EINVAL;
        _cleanup_(rank_null_done) RankNull null = {};
        if (rank_null_rank_sum(&null, nb, nx) < 0)
                return -ENOMEM;
        Comparison c = { .test = COMPARE_TEST_RANK_SUM };
        estimate(&s, &null, s.ratio ? 1 : 0, scale, rule, &c);
        *ret = c;
        return 0;
}

int compare_paired(const double *base, const double *x, size_t n, const CompareRule *rule, Comparison *ret) {
        if (n == 0)
                return -EINVAL;
        bool ratio = all_positive(base, n) && all_positive(x, n);
        _cleanup_free_ double *d = malloc(n * sizeof(double)), *sb = sorted_copy(base, n);
        if (!d || !sb)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                d[i] = ratio ? x[i] / base[i] : x[i] - base[i];
        stats_sort(d, n);
        double scale = 1;
        if (!ratio && (scale = fabs(stats_median_sorted(sb, n))) == 0)
                return -EINVAL;
        _cleanup_(rank_null_done) RankNull null = {};
        if (rank_null_signed_rank(&null, n) < 0)
                return -ENOMEM;
        PairSet s = { .x = d, .nx = n, .walsh = true, .ratio = ratio };
        Comparison c = { .test = COMPARE_TEST_SIGNED_RANK };
        estimate(&s, &null, ratio ? 1 : 0, scale, rule, &c);
        *ret = c;
        return 0;
}

int compare_run_medians(double ma, double mb, double spread, double df, const CompareRule *rule,
                        Comparison *ret) {
        if (!(ma > 0) || !(mb > 0) || !(spread > 0) || !(df > 0))
                return -EINVAL;
        /* Each log median strays from its level by spread: their difference by spread sqrt 2. */
        double distance = log(mb / ma), se = spread * M_SQRT2;
        double reach =
                student_quantile(rule->interval_alpha > 0 ? rule->interval_alpha : rule->alpha, df) * se;
        double power = student_quantile(compare_test_alpha(rule), df) +
                       student_quantile(2 * (1 - COMPARE_POWER), df);
        *ret = (Comparison){ .ratio = mb / ma,
                             .lo = exp(distance - reach),
                             .hi = exp(distance + reach),
                             .p = student_p(fabs(distance) / se, df),
                             .detectable = expm1(power * se),
                             .test = COMPARE_TEST_RUNS };
        ret->p_adjusted = ret->p;
        return 0;
}

int compare_ratio_only(const double *base, size_t nb, const double *x, size_t nx, Comparison *ret) {
        CompareRule any = { .alpha = 0.05, .correction = CORRECTION_NONE, .tests = 1 };
        int r = compare_independent(base, nb, x, nx, &any, ret);
        if (r < 0)
                return r;
        ret->lo = ret->hi = ret->p = ret->p_adjusted = NAN;
        ret->detectable = INFINITY;
        ret->test = COMPARE_TEST_NONE;
        ret->verdict = VERDICT_INCONCLUSIVE;
        return 0;
}

static int cmp_by_p(const void *a, const void *b) {
        const Comparison *x = *(Comparison *const *) a, *y = *(Comparison *const *) b;
        return (x->p > y->p) - (x->p < y->p);
}

double compare_correct(Comparison *const *c, size_t n, Correction correction, double alpha) {
        _cleanup_free_ Comparison **by_p = malloc((n ? n : 1) * sizeof(Comparison *));
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
                c[i]->p_adjusted = c[i]->p;
                if (by_p && c[i]->test != COMPARE_TEST_NONE)
                        by_p[m++] = c[i];
        }
        if (!by_p || correction == CORRECTION_NONE || m < 2)
                return alpha; /* out of memory: unadjusted, which errs toward verdicts; never reached in
                                 practice */
        qsort(by_p, m, sizeof(Comparison *), cmp_by_p);
        if (correction == CORRECTION_HOLM) /* step down: max over the smaller ones of (m - j) p */
                for (size_t j = 0; j < m; j++) {
                        double adjusted = fmin(1, (double) (m - j) * by_p[j]->p);
                        by_p[j]->p_adjusted = j > 0 ? fmax(adjusted, by_p[j - 1]->p_adjusted) : adjusted;
                }
        else /* Benjamini-Hochberg, step up: min over the larger ones of m p / rank */
                for (size_t j = m; j-- > 0;) {
                        double adjusted = fmin(1, (double) m * by_p[j]->p / (double) (j + 1));
                        by_p[j]->p_adjusted = j + 1 < m ? fmin(adjusted, by_p[j + 1]->p_adjusted) : adjusted;
                }
        size_t rejected = 0;
        while (rejected < m && by_p[rejected]->p_adjusted < alpha)
                rejected++;
        if (correction == CORRECTION_HOLM)
                return rejected < m ? alpha / (double) (m - rejected) : alpha;
        return (double) (rejected ? rejected : 1) * alpha / (double) m;
}

int compare_family(Comparison *const *c, size_t n, CompareRule *rule,
                   int (*recompute)(void *userdata, size_t i, const CompareRule *rule, Comparison *ret),
                   void *userdata) {
        rule->interval_alpha = compare_correct(c, n, rule->correction, rule->alpha);
        for (size_t i = 0; i < n; i++) {
                if (rule->interval_alpha != rule->alpha) {
                        double adjusted = c[i]->p_adjusted;
                        int r = recompute(userdata, i, rule, c[i]);
                        if (r < 0)
                                return r;
                        c[i]->p_adjusted = adjusted;
                }
                compare_decide(c[i], rule);
        }
        return 0;
}

void compare_decide(Comparison *c, const CompareRule *rule) {
        if (c->test == COMPARE_TEST_NONE) {
                c->verdict = VERDICT_INCONCLUSIVE;
                return;
        }
        bool difference = c->p_adjusted < rule->alpha && (c->lo > 1 || c->hi < 1) &&
                          fabs(c->ratio - 1) >= rule->min_effect;
        bool within = c->lo >= 1 - rule->min_effect && c->hi <= 1 + rule->min_effect;
        c->verdict = difference ? (c->ratio < 1 ? VERDICT_LOWER : VERDICT_HIGHER)
                     : within   ? VERDICT_SAME
                                : VERDICT_INCONCLUSIVE;
}

int compare_to_baseline(const double *base, size_t nb, const double *x, size_t nx, const CompareRule *rule,
                        Comparison *ret) {
        int r = compare_independent(base, nb, x, nx, rule, ret);
        if (r >= 0)
                compare_decide(ret, rule);
        return r;
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

int compare_geomean(const Comparison *const *c, size_t n, double level, double *ret_mean, double *ret_lo,
                    double *ret_hi) {
        if (n == 0)
                return -EINVAL;
        double z = normal_quantile(1 - (1 - level) / 2), sum = 0, variance = 0;
        for (size_t i = 0; i < n; i++) {
                sum += log(c[i]->ratio);
                if (c[i]->test == COMPARE_TEST_NONE)
                        variance = NAN; /* no interval of its own: none for the mean */
                else if (c[i]->lo > 0 && isfinite(c[i]->hi))
                        variance += pow((log(c[i]->hi) - log(c[i]->lo)) / (2 * z), 2);
                else
                        variance += INFINITY; /* a cell the test could not bound */
        }
        double mean = sum / (double) n, se = sqrt(variance) / (double) n;
        *ret_mean = exp(mean);
        *ret_lo = n == 1 ? c[0]->lo : exp(mean - z * se); /* one cell: its own interval */
        *ret_hi = n == 1 ? c[0]->hi : exp(mean + z * se);
        return 0;
}

const char *comparison_test(const Comparison *c) {
        switch (c->test) {
        case COMPARE_TEST_SIGNED_RANK:
                return "wilcoxon";
        case COMPARE_TEST_RANK_SUM:
                return "mann-whitney";
        case COMPARE_TEST_RUNS:
                return "runs-t";
        default:
                return "none";
        }
}

const char *verdict_word(Verdict v, bool time_metric) {
        switch (v) {
        case VERDICT_LOWER:
                return time_metric ? "faster" : "lower";
        case VERDICT_HIGHER:
                return time_metric ? "slower" : "higher";
        case VERDICT_SAME:
                return "same";
        default:
                return "inconclusive";
        }
}

const char *verdict_mark(Verdict v, bool time_metric) {
        return v == VERDICT_INCONCLUSIVE ? "~" : verdict_word(v, time_metric);
}

static const char *const correction_names[_CORRECTION_MAX] = {
        [CORRECTION_HOLM] = "holm",
        [CORRECTION_BH] = "bh",
        [CORRECTION_NONE] = "none",
};

const char *correction_to_string(Correction c) {
        return c >= 0 && c < _CORRECTION_MAX ? correction_names[c] : NULL;
}

int correction_from_string(const char *s) {
        for (Correction c = 0; c < _CORRECTION_MAX; c++)
                if (s && strcmp(s, correction_names[c]) == 0)
                        return c;
        return -1;
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
                bool outlier = s.mad > 0 ? 0.6745 * deviation / s.mad > COMPARE_OUTLIER_Z
                                         : deviation > COMPARE_OUTLIER_FLAT * fabs(s.median);
                ret_flags[i] = outlier;
                flagged += outlier;
        }
        return flagged;
}
