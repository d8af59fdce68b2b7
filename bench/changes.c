/*
 * changes: what perf-changes's detection costs and how it behaves, for
 * make bench (built against libperf.a).
 *
 *   changes alarms DIST       false alarms per 1,000 points at p = 0.001 on
 *                             10,000 points of pure noise (gauss or lognormal),
 *                             10 series
 *   changes delay SIGMAS      median points after a step of SIGMAS standard
 *                             deviations until it is reported (50 trials)
 *   changes speed FILE        seconds for 100,000 points of one series
 *                             (written to FILE, one value a line, for Otava)
 *                             and for one incremental append to 10,000 points
 *                             (median and 90th percentile of 1,000 appends)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lane/changes.h"

static unsigned long long state = 0x9e3779b97f4a7c15ULL;

static double
uniform(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return ((double)(state >> 11) + 0.5) / 9007199254740992.0;
}

static double
gauss(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
alarms(const char *dist)
{
	size_t n = 10000, total = 0;
	double *x = malloc(n * sizeof *x);
	struct change_point *cp;

	for (int s = 0; s < 10; s++) {
		for (size_t i = 0; i < n; i++)
			x[i] = strcmp(dist, "lognormal") == 0 ? exp(3 + 0.3 * gauss()) :
			    100 + gauss();
		total += changes_find(x, n, 50, 0.001, 0, &cp);
		free(cp);
	}
	printf("%.3f\n", (double)total / (10.0 * (double)n) * 1000);
	free(x);
}

/* Points after a step at 200 until a change point within 2 of it is found. */
static void
delay(double sigmas)
{
	size_t step = 200, max = 400, trials = 50;
	double *x = malloc(max * sizeof *x), d[50];

	for (size_t t = 0; t < trials; t++) {
		struct changes_split sp = { 0 };
		struct change_point *cp = malloc((max + 1) * sizeof *cp);
		size_t n, k, found = 0;

		for (size_t i = 0; i < max; i++)
			x[i] = 100 + (i >= step ? sigmas : 0) + gauss();
		for (n = step + 1; n <= max && !found; n++) {
			changes_split(x, n, 50, changes_first_pass(0.001), &sp);
			k = changes_merge(x, n, sp.weak, sp.nweak, 0.001, 0, cp);
			for (size_t i = 0; i < k; i++)
				if (cp[i].index + 2 >= step && cp[i].index <= step + 2)
					found = n - step;
		}
		d[t] = found ? (double)found : INFINITY;
		changes_split_free(&sp);
		free(cp);
	}
	qsort(d, trials, sizeof *d, cmp_double);
	printf("%g\n", (d[trials / 2 - 1] + d[trials / 2]) / 2);
	free(x);
}

static void
speed(const char *file)
{
	size_t n = 100000, m = 10000, reps = 1000;
	double *x = malloc(n * sizeof *x), t0, t1, level = 100;
	struct change_point *cp;
	struct changes_split sp = { 0 };
	FILE *fp = fopen(file, "w");

	for (size_t i = 0; i < n; i++) {
		if (i % 1000 == 0)
			level = 100 + 3 * (double)(i / 1000 % 3);
		x[i] = level + gauss();
		if (fp != NULL)
			fprintf(fp, "%.17g\n", x[i]);
	}
	if (fp != NULL)
		fclose(fp);
	t0 = now();
	size_t k = changes_find(x, n, 50, 0.001, 0, &cp);
	t1 = now();
	free(cp);
	printf("%.4f %zu\n", t1 - t0, k);
	/*
	 * Appends of one point up to 10,000 points, each timed: the resumed
	 * split step and the merge that reuses the comparisons of the one
	 * before; the median and the 90th percentile.
	 */
	changes_split(x, m - reps, 50, changes_first_pass(0.001), &sp);
	changes_merge_split(x, m - reps, &sp, 0.001, 0, cp = malloc((m + 1) * sizeof *cp));
	double *t = malloc(reps * sizeof *t);
	for (size_t a = m - reps + 1; a <= m; a++) {
		t0 = now();
		changes_split(x, a, 50, changes_first_pass(0.001), &sp);
		changes_merge_split(x, a, &sp, 0.001, 0, cp);
		t[a - (m - reps + 1)] = now() - t0;
	}
	qsort(t, reps, sizeof *t, cmp_double);
	printf("%.6f %.6f\n", (t[reps / 2 - 1] + t[reps / 2]) / 2, t[reps * 9 / 10]);
	free(t);
	changes_split_free(&sp);
	free(cp);
	free(x);
}

int
main(int argc, char *argv[])
{
	if (argc == 3 && strcmp(argv[1], "alarms") == 0)
		alarms(argv[2]);
	else if (argc == 3 && strcmp(argv[1], "delay") == 0)
		delay(atof(argv[2]));
	else if (argc == 3 && strcmp(argv[1], "speed") == 0)
		speed(argv[2]);
	else {
		fprintf(stderr, "usage: changes alarms gauss|lognormal | delay SIGMAS | speed FILE\n");
		return 2;
	}
	return 0;
}
