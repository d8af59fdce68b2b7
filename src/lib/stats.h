/*
 * stats: the statistics the gates need.
 */
#ifndef PERF_STATS_H
#define PERF_STATS_H

#include <stddef.h>

/*
 * The reference's median: sorts v[0..n) ascending in place; the middle
 * value for odd n, (a + b) / 2 of the two middle values for even n.
 * n must be at least 1.
 */
double stats_median(double *v, size_t n);

#endif
