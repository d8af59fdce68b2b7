#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "lane/sensitivity.h"
#include "core/stats.h"

/* Croux and Rousseeuw's factor that makes 1.4826 MAD unbiased for n values. */
static double
small_sample(size_t n)
{
	static const double b[] = { 1, 1.196, 1.495, 1.363, 1.206, 1.200, 1.140,
	    1.129, 1.107 };

	if (n <= 9)
		return b[n - 1];
	return (double)n / ((double)n - 0.8);
}

void
sens_noise_of(const double *v, size_t n, struct sens_noise *out)
{
	double *w;

	out->n = n;
	out->known = false;
	out->median = out->spread = 0;
	if (n < SENS_MIN_RUNS)
		return;
	w = emalloc(n * sizeof *w);
	for (size_t i = 0; i < n; i++)
		w[i] = v[i];
	out->median = stats_median(w, n);
	free(w);
	if (!(out->median > 0))
		return;
	out->spread = 1.4826 * stats_mad(v, n) / out->median;
	out->known = isfinite(out->spread);
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
	double s = ns->spread * small_sample(ns->n), v = stats_median_var(g->nb);
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

/* P(N(0, sd^2) > floor); a floor of 0 is not exceeded by a constant. */
static double
exceed(const struct cond *c)
{
	if (c->sd > 0)
		return 0.5 * erfc(c->floor / c->sd / M_SQRT2);
	return c->floor < 0 ? 1 : 0;
}

double
sens_false_alarm(const struct sens_noise *ns, const struct sens_gate *g)
{
	struct cond c[2];

	conditions(ns, g, c);
	return fmin(exceed(&c[0]), exceed(&c[1]));
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

	conditions(ns, g, c);
	return as_regression(stats_norm_quantile(1 - rate) * c[0].sd, g->higher);
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
	/* The absolute floor stays unless it is what blinds the gate. */
	better.tp = out->floor_percent = sens_floor_for(ns, g, SENS_TARGET_RATE);
	better.ta = out->floor_absolute = fmin(g->ta, better.tp * ns->median);
	out->floor_mde = sens_mde(ns, &better, power);
}

const char *
sens_advice_name(enum sens_advice a)
{
	static const char *const names[] = { "unknown", "ok", "noisy", "blind" };

	return names[a];
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
