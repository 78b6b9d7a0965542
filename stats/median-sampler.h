/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * The bootstrap distribution of a sample's median, drawn from directly. Resampling n values with
 * replacement and taking the median is, for the sorted sample, choosing which positions the
 * resample's middle order statistics land on, and those positions have a known distribution: the
 * k-th smallest draw lies at position j or below exactly when at least k of the n draws do, a
 * Binomial(n, j/n) tail (Efron, 1982). So one draw costs a binary search
 * over a table of n binomial tails instead of n draws and a walk: the same distribution as
 * resampling, at O(log n) per resample.
 */
typedef struct MedianSampler {
        double *sorted; /* the sample, ascending */
        size_t n;
        double *below;       /* below[j]: P(fewer than k of n draws fall at or below position j), j = 0..n */
        double *above;       /* 1 - below[j], each computed from its own (smaller) tail */
        double *upper_above; /* even n: P(the upper middle lies above j | the lower middle lies at j) */
        size_t k;            /* the lower middle order statistic, 1-based: (n + 1) / 2 */
} MedianSampler;

/* sorted[0..n) ascending, n > 0, from malloc(): the sampler takes it over (and frees it, also
 * when it fails). Returns 0 or -ENOMEM. */
int median_sampler_init(MedianSampler *s, double *sorted, size_t n);
void median_sampler_done(MedianSampler *s);

/* The median of one bootstrap resample, drawing from *rng (util/rng.h). */
double median_sampler_draw(const MedianSampler *s, uint64_t *rng);
