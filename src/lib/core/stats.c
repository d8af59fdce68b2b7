#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/err.h"
#include "core/num.h"
#include "core/stats.h"

double
stats_median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, num_cmp_double);
	if (n % 2 == 1)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The continued fraction of the incomplete beta function (modified Lentz),
 * in double precision. beta_cf_ext() below is the same fraction in long
 * double; they stay two on purpose: stats_t_quantile() through this one
 * gives the t quantiles that perf-analyze's reports and golden files hold
 * (3.1824463052837015 for 3 degrees of freedom), and the long double one
 * moves their last digits (...7024) without making the quantile more
 * exact (its Newton search stops at 1e-15 relative either way).
 */
static double
beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-16;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h, num, del;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 10000; m++) {
		num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		d = 1 + num * d;
		c = 1 + num / c;
		d = fabs(d) < tiny ? 1 / tiny : 1 / d;
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		d = fabs(d) < tiny ? 1 / tiny : 1 / d;
		c = fabs(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

/* The regularized incomplete beta function I_x(a, b). */
static double
beta_inc(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

/*
 * beta_cf() in extended precision: for large a and x near 1 the terms of
 * the continued fraction cancel, and double precision would keep only 11
 * or 12 digits of the t distribution's tail.
 */
static long double
beta_cf_ext(long double a, long double b, long double x)
{
	const long double tiny = 1e-300L, eps = 2e-19L;
	long double c = 1, d = 1 - (a + b) * x / (a + 1), h, num, del;

	if (fabsl(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 100000; m++) {
		num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		d = 1 + num * d;
		c = 1 + num / c;
		d = fabsl(d) < tiny ? 1 / tiny : 1 / d;
		c = fabsl(c) < tiny ? tiny : c;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		d = fabsl(d) < tiny ? 1 / tiny : 1 / d;
		c = fabsl(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabsl(del - 1) < eps)
			break;
	}
	return h;
}

/* The tail of Stirling's series for log Gamma(z), z >= 10. */
static long double
stirling_tail(long double z)
{
	long double r = 1 / (z * z);

	return (1.0L / 12 - r * (1.0L / 360 - r * (1.0L / 1260 - r * (1.0L / 1680 -
	    r * (1.0L / 1188 - r * (691.0L / 360360 - r * (1.0L / 156 -
	    r * (3617.0L / 122400)))))))) / z;
}

/*
 * log Gamma(a + 1/2) - log Gamma(a), without the cancellation of two
 * large lgamma() values when a is large.
 */
static long double
lgamma_half_ratio(long double a)
{
	if (a < 10)
		return lgammal(a + 0.5L) - lgammal(a);
	return a * log1pl(0.5L / a) - 0.5L + 0.5L * logl(a) + stirling_tail(a + 0.5L) -
	    stirling_tail(a);
}

double
stats_t_two_sided(double t, double df)
{
	long double a = (long double)df / 2, t2 = (long double)t * t, x, y, lx, lf;

	if (isnan(t) || isnan(df))
		return NAN;
	if (t == 0)
		return 1;
	if (isinf(t))
		return 0;
	/* p = I_x(df/2, 1/2), x = df / (df + t^2), with y = 1 - x computed apart. */
	x = df / (df + t2);
	y = t2 / (df + t2);
	lx = isinf(t2) ? logl(df) - logl(t2) : -log1pl(t2 / df);
	lf = lgamma_half_ratio(a) - 0.5L * logl(3.141592653589793238462643383279503L) +
	    a * lx + 0.5L * logl(y);
	if (x < (a + 1) / (a + 2.5L))
		return (double)(expl(lf) * beta_cf_ext(a, 0.5L, x) / a);
	return (double)(1 - expl(lf) * beta_cf_ext(0.5L, a, y) / 0.5L);
}

double
stats_t_cdf(double t, double df)
{
	double tail = 0.5 * beta_inc(df / 2, 0.5, df / (df + t * t));

	return t >= 0 ? 1 - tail : tail;
}

double
stats_t_quantile(double p, double df)
{
	double lo = 0, hi = 1, mid, pdf, t, step;
	bool upper = p >= 0.5;
	double q = upper ? p : 1 - p;

	if (q == 0.5)
		return 0;
	/* Bracket, then Newton steps kept inside the bracket. */
	while (stats_t_cdf(hi, df) < q)
		hi *= 2;
	t = (lo + hi) / 2;
	for (int i = 0; i < 200; i++) {
		double f = stats_t_cdf(t, df) - q;

		if (f < 0)
			lo = t;
		else
			hi = t;
		pdf = exp(lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * log(df * M_PI) -
		    (df + 1) / 2 * log1p(t * t / df));
		step = f / pdf;
		mid = t - step;
		if (!(mid > lo && mid < hi))
			mid = (lo + hi) / 2;
		if (fabs(mid - t) <= 1e-15 * fabs(t) || hi - lo <= 1e-15 * hi) {
			t = mid;
			break;
		}
		t = mid;
	}
	return upper ? t : -t;
}

double
stats_mad(const double *v, size_t n)
{
	double *d = emalloc(n * sizeof *d), m, mad;

	for (size_t i = 0; i < n; i++)
		d[i] = v[i];
	m = stats_median(d, n);
	for (size_t i = 0; i < n; i++)
		d[i] = fabs(v[i] - m);
	mad = stats_median(d, n);
	free(d);
	return mad;
}

double
stats_norm_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

double
stats_norm_quantile(double p)
{
	double q = p - 0.5, r, num, den, x;

	if (fabs(q) <= 0.425) {
		r = 0.180625 - q * q;
		num = (((((((2.5090809287301226727e+3 * r +
		    3.3430575583588128105e+4) * r +
		    6.7265770927008700853e+4) * r +
		    4.5921953931549871457e+4) * r +
		    1.3731693765509461125e+4) * r +
		    1.9715909503065514427e+3) * r +
		    1.3314166789178437745e+2) * r +
		    3.3871328727963666080e+0) * q;
		den = (((((((5.2264952788528545610e+3 * r +
		    2.8729085735721942674e+4) * r +
		    3.9307895800092710610e+4) * r +
		    2.1213794301586595867e+4) * r +
		    5.3941960214247511077e+3) * r +
		    6.8718700749205790830e+2) * r +
		    4.2313330701600911252e+1) * r +
		    1.0);
		return num / den;
	}
	r = q <= 0 ? p : 1.0 - p;
	r = sqrt(-log(r));
	if (r <= 5.0) {
		r = r - 1.6;
		num = (((((((7.74545014278341407640e-4 * r +
		    2.27238449892691845833e-2) * r +
		    2.41780725177450611770e-1) * r +
		    1.27045825245236838258e+0) * r +
		    3.64784832476320460504e+0) * r +
		    5.76949722146069140550e+0) * r +
		    4.63033784615654529590e+0) * r +
		    1.42343711074968357734e+0);
		den = (((((((1.05075007164441684324e-9 * r +
		    5.47593808499534494600e-4) * r +
		    1.51986665636164571966e-2) * r +
		    1.48103976427480074590e-1) * r +
		    6.89767334985100004550e-1) * r +
		    1.67638483018380384940e+0) * r +
		    2.05319162663775882187e+0) * r +
		    1.0);
	} else {
		r = r - 5.0;
		num = (((((((2.01033439929228813265e-7 * r +
		    2.71155556874348757815e-5) * r +
		    1.24266094738807843860e-3) * r +
		    2.65321895265761230930e-2) * r +
		    2.96560571828504891230e-1) * r +
		    1.78482653991729133580e+0) * r +
		    5.46378491116411436990e+0) * r +
		    6.65790464350110377720e+0);
		den = (((((((2.04426310338993978564e-15 * r +
		    1.42151175831644588870e-7) * r +
		    1.84631831751005468180e-5) * r +
		    7.86869131145613259100e-4) * r +
		    1.48753612908506148525e-2) * r +
		    1.36929880922735805310e-1) * r +
		    5.99832206555887937690e-1) * r +
		    1.0);
	}
	x = num / den;
	return q < 0 ? -x : x;
}

double
stats_median_var(size_t n)
{
	/* tests/unit/gen-sens-vectors.py integrates these (Simpson's rule). */
	static const double exact[] = { 1.0, 0.5, 0.448671104578207,
	    0.29819961840458, 0.286833661605877 };

	if (n <= sizeof exact / sizeof *exact)
		return exact[n - 1];
	return M_PI / (2.0 * (double)n);
}
