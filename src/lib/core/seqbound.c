#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/pyrandom.h"
#include "core/seqbound.h"
#include "core/stats.h"

/* Grid step, in units of one pair's standard deviation. */
#define STEP 0.02
/* The increment's density is cut at this many standard deviations. */
#define KERNEL_SD 8.0

/* Seeded paths of the Student t calibration. */
#define PATHS 40000

/* P(Z > z) for a standard normal Z. */
static double
upper_tail(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

/*
 * The mass of density f (on grid x_i = (i - mid) * STEP) beyond +-b, by
 * the trapezoid rule with the cell that holds b split linearly.
 */
static double
mass_beyond(const double *f, int len, int mid, double b)
{
	double m = 0, pos, frac, fb;
	int i0;

	pos = b / STEP;
	i0 = (int)floor(pos);
	if (i0 + 1 >= len - mid)
		return 0;
	frac = pos - i0;
	for (int s = -1; s <= 1; s += 2) {
		const double *g = f + mid;
		double a0 = g[s * i0], a1 = g[s * (i0 + 1)];

		fb = a0 + (a1 - a0) * frac;
		m += (fb + a1) / 2 * (1 - frac) * STEP;
		for (int i = i0 + 1; i + 1 < len - mid; i++)
			m += (g[s * i] + g[s * (i + 1)]) / 2 * STEP;
	}
	return m;
}

static double
gauss(struct pyrandom *m)
{
	double u = ((pyrandom_next(m) >> 5) * 67108864.0 + (pyrandom_next(m) >> 6)) / 9007199254740992.0;
	double v = ((pyrandom_next(m) >> 5) * 67108864.0 + (pyrandom_next(m) >> 6)) / 9007199254740992.0;

	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

/* The share of the paths whose |t| crosses a look's bound at levels lambda * level. */
static double
crossing(const float *t, int looks, int min, const double *level, double lambda)
{
	double *bound = ecalloc((size_t)looks, sizeof *bound);
	int crossed = 0;

	for (int k = 0; k < looks; k++)
		bound[k] = stats_t_quantile(1 - lambda * level[k] / 2, min + k - 1);
	for (int p = 0; p < PATHS; p++)
		for (int k = 0; k < looks; k++)
			if (t[(size_t)p * (size_t)looks + (size_t)k] > bound[k]) {
				crossed++;
				break;
			}
	free(bound);
	return (double)crossed / PATHS;
}

/*
 * Matching each look's nominal level alone lets the overall rate of the
 * t statistics exceed alpha (about 5.5% for 0.05 with looks at 5 .. 30
 * pairs: with few degrees of freedom the looks are less correlated than
 * the normal recursion assumes). So every level is scaled by the one
 * factor lambda <= 1 that brings the share of seeded normal paths
 * crossing a bound down to alpha.
 */
static void
calibrate_t(double alpha, int min, int max, double *level)
{
	int looks = max - min + 1;
	float *t = ecalloc((size_t)PATHS * (size_t)looks, sizeof *t);
	double lo = 0, hi = 1;
	struct pyrandom m;

	pyrandom_seed(&m, 20250101);
	for (int p = 0; p < PATHS; p++) {
		double sum = 0, sq = 0;

		for (int n = 1; n <= max; n++) {
			double x = gauss(&m), mean, var;

			sum += x;
			sq += x * x;
			if (n < min)
				continue;
			mean = sum / n;
			var = (sq - n * mean * mean) / (n - 1);
			t[(size_t)p * (size_t)looks + (size_t)(n - min)] =
			    var > 0 ? (float)(fabs(mean) / sqrt(var / n)) : 0;
		}
	}
	if (crossing(t, looks, min, level, 1) > alpha) {
		for (int it = 0; it < 30; it++) {
			double mid = (lo + hi) / 2;

			if (crossing(t, looks, min, level, mid) > alpha)
				hi = mid;
			else
				lo = mid;
		}
		for (int k = 0; k < looks; k++)
			level[k] *= lo;
	}
	free(t);
}

void
seqbound_levels(double alpha, double rho, int min, int max, double *level)
{
	int looks = max - min + 1;
	int half = (int)ceil((KERNEL_SD * sqrt((double)max) + KERNEL_SD) / STEP);
	int len = 2 * half + 1, kh = (int)ceil(KERNEL_SD / STEP), mid = half;
	double *f = ecalloc((size_t)len, sizeof *f), *g = ecalloc((size_t)len, sizeof *g);
	double *kern = ecalloc((size_t)(2 * kh + 1), sizeof *kern);
	double spent = 0, sd = sqrt((double)min);

	/* At the first look the sum of min pairs is N(0, min). */
	for (int i = 0; i < len; i++) {
		double x = (i - mid) * STEP;

		f[i] = exp(-x * x / (2 * min)) / (sd * sqrt(2 * M_PI));
	}
	for (int j = -kh; j <= kh; j++)
		kern[j + kh] = exp(-(j * STEP) * (j * STEP) / 2) / sqrt(2 * M_PI) * STEP;
	for (int k = 0; k < looks; k++) {
		int n = min + k;
		double target = alpha * pow((double)n / max, rho) - spent, lo = 0, hi = 40, c;

		if (target <= 0) {
			c = hi;
		} else {
			/* Bisection on the boundary in the z scale. */
			for (int it = 0; it < 100; it++) {
				c = (lo + hi) / 2;
				if (mass_beyond(f, len, mid, c * sqrt((double)n)) > target)
					lo = c;
				else
					hi = c;
			}
			c = (lo + hi) / 2;
		}
		spent += mass_beyond(f, len, mid, c * sqrt((double)n));
		level[k] = 2 * upper_tail(c);
		if (k + 1 == looks)
			break;
		/* Paths that crossed stop here; the rest take one more pair. */
		for (int i = 0; i < len; i++)
			if (fabs((i - mid) * STEP) > c * sqrt((double)n))
				f[i] = 0;
		for (int i = 0; i < len; i++) {
			double acc = 0;
			int jlo = i - (len - 1) > -kh ? i - (len - 1) : -kh;
			int jhi = i < kh ? i : kh;

			for (int j = jlo; j <= jhi; j++)
				acc += f[i - j] * kern[j + kh];
			g[i] = acc;
		}
		memcpy(f, g, (size_t)len * sizeof *f);
	}
	free(f);
	free(g);
	free(kern);
	calibrate_t(alpha, min, max, level);
}
