#include <stdlib.h>

#include "stats.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
stats_median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	if (n % 2 == 1)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2;
}
