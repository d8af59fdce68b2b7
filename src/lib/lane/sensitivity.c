#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/stats.h"
#include "lane/sensitivity.h"

/*
 * The factor that makes the scale of n values' successive differences
 * unbiased at normal noise (simulated, 100,000 windows each; 1 + 0.09/n
 * from 21 values on).
 */
static double
small_sample(size_t n)
{
	static const double b[] = { 1.200, 1.091, 1.079, 1.043, 1.043, 1.024, 1.024,
	    1.015, 1.017, 1.010, 1.013, 1.007, 1.009, 1.009, 1.007, 1.004 };

	if (n < SENS_MIN_RUNS)
		n = SENS_MIN_RUNS;
	if (n <= 20)
		return b[n - SENS_MIN_RUNS];
	return 1 + 0.09 / (double)n;
}

/*
 * The run-to-run scale of v[0..n) (n >= 2, in window order): the median
 * of |d - median(d)| over the successive differences d, over
 * 0.6745 sqrt(2). A step moves one difference and the median of the rest
 * not at all; a steady trend moves every difference by the same amount,
 * which the median of the differences takes out.
 */
static double
difference_scale(const double *v, size_t n)
{
	double *d = emalloc((n - 1) * sizeof *d), m, s;

	for (size_t i = 1; i < n; i++)
		d[i - 1] = v[i] - v[i - 1];
	m = stats_mad(d, n - 1);
	s = m / (0.6744897501960817 * M_SQRT2);
	free(d);
	return s;
}

/*
 * How many times the run-to-run spread the level spread of n values must
 * be to say a step or trend lies among them (simulated at normal noise:
 * without a change, 3% of windows of 10 values pass it, 1.5% of 20, 0.3%
 * of 40; with a step of five times the noise halfway, 70%, 96% and
 * nearly all). Fewer than SENS_SHIFT_RUNS values never say so.
 */
static double
shift_ratio(size_t n)
{
	return 1.5 + 10 / (double)n;
}

void
sens_noise_of(const double *v, size_t n, struct sens_noise *out)
{
	double *w;

	memset(out, 0, sizeof *out);
	out->n = n;
	out->why = SENS_FEW_RUNS;
	if (n < SENS_MIN_RUNS)
		return;
	w = emalloc(n * sizeof *w);
	for (size_t i = 0; i < n; i++)
		w[i] = v[i];
	out->median = stats_median(w, n);
	free(w);
	out->why = SENS_NOT_POSITIVE;
	if (!(out->median > 0))
		return;
	out->level_spread = 1.4826 * stats_mad(v, n) / out->median;
	out->spread = small_sample(n) * difference_scale(v, n) / out->median;
	out->why = SENS_NO_SPREAD;
	if (!isfinite(out->spread) || !isfinite(out->level_spread) || !(out->spread > 0)) {
		out->spread = out->level_spread = 0;
		return;
	}
	out->why = SENS_KNOWN;
	out->known = true;
	out->shift = n >= SENS_SHIFT_RUNS && out->level_spread > shift_ratio(n) * out->spread;
}

/*
 * The two conditions in log space: each a floor L on the log ratio (a
 * regression is positive) and the standard deviation s of that ratio.
 */
struct cond {
	double floor, sd;
};

static void
conditions(const struct sens_noise *ns, const struct sens_gate *g, struct cond c[2])
{
	double s = ns->spread, v = stats_median_var(g->nb);
	double a = g->ta / ns->median, k;

	if (!g->higher) {
		c[0].floor = 1 + g->tp > 0 ? log1p(g->tp) : -INFINITY;
		c[1].floor = 1 + a > 0 ? log1p(a) : -INFINITY;
		k = 1 + a > 0 ? 1 / ((1 + a) * (1 + a)) : 1;
	} else {
		c[0].floor = 1 - g->tp > 0 ? -log1p(-g->tp) : INFINITY;
		c[1].floor = 1 - a > 0 ? -log1p(-a) : INFINITY;
		k = 1 - a > 0 ? 1 / ((1 - a) * (1 - a)) : 1;
	}
	c[0].sd = s * sqrt(1 + v);
	c[1].sd = s * sqrt(1 + v * k);
}

/*
 * The degrees of freedom of the noise estimate: the scale of the
 * successive differences of n normal values scatters like the standard
 * deviation of 0.3 (n - 1) + 0.4 values (fitted by simulation from 5 to
 * 100 values), taken to the nearest integer (2 at 5 values, 6 at 20).
 * Noise is known from SENS_MIN_RUNS values on, so never fewer than 2.
 */
static int
noise_df(size_t n)
{
	int df;

	if (n < SENS_MIN_RUNS)
		n = SENS_MIN_RUNS;
	df = (int)floor(0.3 * (double)(n - 1) + 0.9);
	return df < 2 ? 2 : df;
}

/* E sqrt(X / df) for X chi-square with df degrees of freedom. */
static double
chi_mean(int df)
{
	double r = df % 2 ? 1 / sqrt(M_PI) : sqrt(M_PI) / 2;

	/* Gamma((df + 1) / 2) / Gamma(df / 2), up from df = 1 or 2. */
	for (int k = df % 2 ? 1 : 2; k < df; k += 2)
		r *= (k + 1.0) / k;
	return sqrt(2.0 / df) * r;
}

/*
 * P(T > t) for T Student t with df >= 1 (an integer) degrees of freedom,
 * t >= 0, in the closed form of Abramowitz and Stegun 26.7.3-4, which a
 * Python transcription computes to the same double.
 */
static double
t_upper(double t, int df)
{
	double th = atan(t / sqrt((double)df)), c = cos(th), c2 = c * c, a, term = 1;

	if (df % 2) {
		a = 0;
		if (df > 1) {
			a = 1;
			for (int k = 1; k < (df - 1) / 2; k++) {
				term *= c2 * (2 * k) / (2 * k + 1);
				a += term;
			}
			a *= sin(th) * c;
		}
		a = 2 / M_PI * (th + a);
	} else {
		a = 1;
		for (int k = 1; k < df / 2; k++) {
			term *= c2 * (2 * k - 1) / (2 * k);
			a += term;
		}
		a *= sin(th);
	}
	return (1 - a) / 2;
}

/* The t >= 0 with t_upper(t, df) = p (0 < p < 0.5), by bisection. */
static double
t_upper_quantile(double p, int df)
{
	double lo = 0, hi = 1, mid;

	while (t_upper(hi, df) > p)
		hi *= 2;
	for (int i = 0; i < 200; i++) {
		mid = (lo + hi) / 2;
		if (mid <= lo || mid >= hi)
			break;
		if (t_upper(mid, df) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/*
 * The chance that the log ratio, normal with standard deviation sd, is
 * over floor. sd comes from a spread estimated on n runs, and a chance is
 * not linear in it: the chance at the estimate, averaged over the
 * estimate's scatter, is below the chance at the true noise wherever it
 * is over a few percent (by a point or two at 10% noise). So this is
 * the unbiased estimate of the chance for an estimate that scatters like
 * a chi with df = noise_df(n) degrees of freedom, scaled to the chi's
 * mean: with u = floor / (sd chi_mean(df)),
 * P(T(df - 1) > u sqrt((df - 1) / (df - u^2))) for 0 <= u < sqrt(df), 0
 * from there, and 1 minus the chance at -u for u < 0 (Rao-Blackwell: the
 * chance that one of df normal values is over the floor, given their sum
 * of squares). A floor of 0 is not exceeded by a constant.
 */
static double
exceed(const struct cond *c, int df, double cm)
{
	double u, a, r;

	if (!(c->sd > 0))
		return c->floor < 0 ? 1 : 0;
	u = c->floor / (c->sd * cm);
	a = fabs(u);
	r = a * a < df ? t_upper(a * sqrt((df - 1.0) / (df - a * a)), df - 1) : 0;
	return u >= 0 ? r : 1 - r;
}

double
sens_false_alarm(const struct sens_noise *ns, const struct sens_gate *g)
{
	struct cond c[2];
	int df = noise_df(ns->n);
	double cm = chi_mean(df);

	conditions(ns, g, c);
	return fmin(exceed(&c[0], df, cm), exceed(&c[1], df, cm));
}

/* The log ratio as a regression fraction, never below 0. */
static double
as_regression(double x, bool higher)
{
	double d = higher ? -expm1(-x) : expm1(x);

	return d > 0 ? d : 0;
}

double
sens_mde(const struct sens_noise *ns, const struct sens_gate *g, double power)
{
	struct cond c[2];
	double z = stats_norm_quantile(power);

	conditions(ns, g, c);
	return as_regression(fmax(c[0].floor + z * c[0].sd, c[1].floor + z * c[1].sd),
	    g->higher);
}

/* The percent floor whose own false-alarm rate is rate. */
static double
sens_floor_for(const struct sens_noise *ns, const struct sens_gate *g, double rate)
{
	struct cond c[2];
	int df = noise_df(ns->n);
	double t, u;

	/* exceed() solved for u: the floor whose chance is rate. */
	conditions(ns, g, c);
	t = t_upper_quantile(rate, df - 1);
	u = t * sqrt(df / (df - 1.0 + t * t));
	return as_regression(u * chi_mean(df) * c[0].sd, g->higher);
}

/*
 * x (> 0) to two significant digits, up or down, as a config would spell
 * it: 0.1397 up is 0.14, 0.0163 down is 0.016. The digits are divided
 * (or multiplied) by an exact power of ten, so the double is the one the
 * decimal reads as; a product a hair over an integer is not rounded up.
 */
static double
two_digits(double x, bool up)
{
	int k;
	double p, y;

	if (!(x > 0) || !isfinite(x))
		return x;
	k = 1 - (int)floor(log10(x));
	if (k > 22 || k < -22)
		return x;
	p = pow(10, abs(k));
	y = k >= 0 ? x * p : x / p;
	y = up ? ceil(y - 1e-9) : floor(y + 1e-9);
	return k >= 0 ? y / p : y * p;
}

void
sens_assess(const struct sens_noise *ns, const struct sens_gate *g, double power,
    struct sens_report *out)
{
	struct sens_gate better = *g;

	out->advice = SENS_UNKNOWN;
	out->far = out->mde = 0;
	out->floor_percent = out->floor_absolute = out->floor_mde = 0;
	if (!ns->known || g->nb == 0)
		return;
	out->far = sens_false_alarm(ns, g);
	out->mde = sens_mde(ns, g, power);
	if (out->far > SENS_NOISY_RATE)
		out->advice = SENS_NOISY;
	else if (out->mde > 2 * g->tp)
		out->advice = SENS_BLIND;
	else {
		out->advice = SENS_OK;
		return;
	}
	/*
	 * The floors a config can say, rounded the safe way (the percent up,
	 * a narrower absolute down); the absolute floor stays unless it is
	 * what blinds the gate.
	 */
	better.tp = out->floor_percent = two_digits(sens_floor_for(ns, g, SENS_TARGET_RATE),
	    true);
	better.ta = fmin(g->ta, better.tp * ns->median);
	if (better.ta < g->ta)
		better.ta = two_digits(better.ta, false);
	out->floor_absolute = better.ta;
	out->floor_mde = sens_mde(ns, &better, power);
}

const char *
sens_advice_name(enum sens_advice a)
{
	static const char *const names[] = { "unknown", "ok", "noisy", "blind" };

	return names[a];
}

const char *
sens_noise_why(enum sens_why w)
{
	static const char *const names[] = { "few_runs", "median_not_positive", "no_spread",
	    NULL };

	return names[w];
}

const char *
sens_rule_name(enum sens_rule r)
{
	static const char *const names[] = { "reference", "prediction", "zscore" };

	return names[r];
}

bool
sens_rule_check(enum sens_rule rule, const double *v, size_t n, double cur,
    bool higher, double param, struct sens_verdict *out)
{
	bool logs = rule == SENS_RULE_PREDICTION && cur > 0, spread = false;
	double sum = 0, ss = 0, mean, sd, x, k;

	memset(out, 0, sizeof *out);
	out->n = n;
	if (n < SENS_MIN_RUNS || !isfinite(cur))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			return false;
		logs = logs && v[i] > 0;
		spread = spread || v[i] != v[0];
	}
	/* Equal values: no spread (their logs' sum may leave a rounding one). */
	if (!spread)
		return false;
	/* Sums in window order, so a transcription adds the same way. */
	for (size_t i = 0; i < n; i++)
		sum += logs ? log(v[i]) : v[i];
	mean = sum / (double)n;
	for (size_t i = 0; i < n; i++) {
		x = (logs ? log(v[i]) : v[i]) - mean;
		ss += x * x;
	}
	sd = sqrt(ss / (double)(n - 1));
	if (!(sd > 0) || !isfinite(sd))
		return false;
	x = logs ? log(cur) : cur;
	if (rule == SENS_RULE_ZSCORE) {
		out->z = (higher ? mean - x : x - mean) / sd;
		out->exceeded = out->z > param;
		out->limit = higher ? mean - param * sd : mean + param * sd;
		return true;
	}
	k = stats_t_quantile(param, (double)(n - 1)) * sd * sqrt(1 + 1 / (double)n);
	out->limit = higher ? mean - k : mean + k;
	out->exceeded = higher ? x < out->limit : x > out->limit;
	if (logs)
		out->limit = exp(out->limit);
	return true;
}
