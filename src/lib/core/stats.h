/*
 * stats: the statistics the gates need.
 */
#ifndef PERF_CORE_STATS_H
#define PERF_CORE_STATS_H

#include <stddef.h>

/*
 * The reference's median: sorts v[0..n) ascending in place; the middle
 * value for odd n, (a + b) / 2 of the two middle values for even n.
 * n must be at least 1.
 */
double stats_median(double *v, size_t n);

/*
 * The Student t quantile: the t with P(T <= t) = p for df degrees of
 * freedom (0 < p < 1, df > 0), from the regularized incomplete beta
 * function, to about 1e-12 relative.
 */
double stats_t_quantile(double p, double df);

/* P(T <= t) for the Student t distribution with df degrees of freedom. */
double stats_t_cdf(double t, double df);

/*
 * The median absolute deviation: the reference's median of |v[i] - m|,
 * m the median of v[0..n). v is not changed; n must be at least 1.
 */
double stats_mad(const double *v, size_t n);

/* P(Z <= z) for the standard normal distribution. */
double stats_norm_cdf(double z);

/*
 * The standard normal quantile: the z with P(Z <= z) = p (0 < p < 1), by
 * Wichura's algorithm AS241 as Python's statistics.NormalDist.inv_cdf
 * computes it, to about 1e-16 relative.
 */
double stats_norm_quantile(double p);

/*
 * The variance of the median of n independent standard normal values:
 * exact (numerical integration of the order statistics) for n <= 5, the
 * large-sample pi / (2 n) beyond. n must be at least 1.
 */
double stats_median_var(size_t n);

/*
 * P(|T| >= |t|), the two-sided p-value of a t statistic with df degrees of
 * freedom, to about 1e-12 relative down to the smallest doubles: 0 for an
 * infinite t, 1 for t = 0, NaN for a NaN t.
 */
double stats_t_two_sided(double t, double df);

#endif
