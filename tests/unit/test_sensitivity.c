/* Unit tests for sens: the rolling gate's sensitivity against Python's values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lane/sensitivity.h"
#include "tap.h"

#include "sens_vectors.h"

/* The same operations in the same order: the same double, or both absent. */
static int
same(double got, int present, double want)
{
	if (want == NULLV)
		return !present;
	return present && (got == want || fabs(got - want) <= 1e-15 * fabs(want));
}

int
main(void)
{
	for (size_t i = 0; i < sizeof sens_vectors / sizeof *sens_vectors; i++) {
		const __typeof__(sens_vectors[0]) *t = &sens_vectors[i];
		struct sens_noise ns;
		struct sens_gate g = { t->tp, t->ta, t->higher, (size_t)t->nb };
		struct sens_report r;
		int known, advised;

		sens_noise_of(&sens_data[t->off], (size_t)t->n, &ns);
		ok(ns.known && ns.n == (size_t)t->n && same(ns.median, 1, t->median) &&
		    same(ns.spread, 1, t->spread) && same(ns.level_spread, 1, t->level) &&
		    ns.shift == (t->shift != 0), "case %zu: %d values, median %.17g, "
		    "spread %.17g (want %.17g), level %.17g, shift %d", i, t->n, ns.median,
		    ns.spread, t->spread, ns.level_spread, ns.shift);
		sens_assess(&ns, &g, t->power, &r);
		known = r.advice != SENS_UNKNOWN;
		advised = r.advice == SENS_NOISY || r.advice == SENS_BLIND;
		is_str(sens_advice_name(r.advice), t->advice, "case %zu: advice", i);
		ok(same(r.far, known, t->far), "case %zu: false-alarm rate %.17g (want %.17g)",
		    i, r.far, t->far);
		ok(same(r.mde, known, t->mde), "case %zu: detectable regression %.17g (want %.17g)",
		    i, r.mde, t->mde);
		if (advised) {
			char d[32];

			snprintf(d, sizeof d, "%.2g", r.floor_percent);
			ok(strtod(d, NULL) == r.floor_percent && r.floor_percent > 0,
			    "case %zu: the suggested floor %.17g is two digits a config can say",
			    i, r.floor_percent);
		}
		ok(same(r.floor_percent, advised, t->floor_percent) &&
		    same(r.floor_absolute, advised, t->floor_absolute) &&
		    same(r.floor_mde, advised, t->floor_mde), "case %zu: suggested floors "
		    "%.17g, %.17g detect %.17g", i, r.floor_percent, r.floor_absolute, r.floor_mde);
	}
	{
		/* Fewer than five values, or a median that is not positive: unknown. */
		double four[] = { 1, 2, 3, 4 }, zero[] = { 0, 0, 0, 1, -1 };
		struct sens_noise ns;
		struct sens_gate g = { 0.08, 0.5, false, 5 };
		struct sens_report r;

		sens_noise_of(four, 4, &ns);
		ok(!ns.known && ns.n == 4, "four values: noise unknown");
		sens_assess(&ns, &g, 0.8, &r);
		is_str(sens_advice_name(r.advice), "unknown", "four values: advice unknown");
		sens_noise_of(zero, 5, &ns);
		ok(!ns.known && ns.n == 5, "a median of 0: noise unknown");
		sens_noise_of(four, 4, &ns);
		ns.known = true, ns.n = 5, ns.median = 10, ns.spread = 0.01;
		g.nb = 0;
		sens_assess(&ns, &g, 0.8, &r);
		is_str(sens_advice_name(r.advice), "unknown", "no baseline values: advice unknown");
	}
	{
		/*
		 * No measured spread (issue 22, item 7): values tied at the
		 * precision recorded are unknown noise, never a 0% floor.
		 */
		double flat[] = { 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6 };
		struct sens_noise ns;
		struct sens_gate g = { 0.05, 0.25, false, 5 };
		struct sens_report r;

		sens_noise_of(flat, 7, &ns);
		ok(!ns.known && ns.why == SENS_NO_SPREAD && ns.spread == 0 &&
		    strcmp(sens_noise_why(ns.why), "no_spread") == 0, "equal values: no spread, unknown");
		sens_assess(&ns, &g, 0.8, &r);
		ok(r.advice == SENS_UNKNOWN && r.floor_percent == 0 && r.floor_absolute == 0,
		    "equal values: no advice and no floor suggested");
		sens_noise_of(flat, 4, &ns);
		is_str(sens_noise_why(ns.why), "few_runs", "four values: few runs");
	}
	{
		/*
		 * A step and a trend inside the window (issue 22, item 6): 1%
		 * run-to-run noise (fixed draws), then +5% from the 12th run,
		 * or +1% a run. The noise stays within 1.5x of 1% and a shift is
		 * said; the noise of the values themselves is what it was not.
		 */
		/* 20 normal draws (Python's random.Random(1), 2 decimals): sd 0.98. */
		static const double z[] = { 1.29, 1.45, 0.07, -0.76, -1.09, 0.03, -1.02,
		    -1.44, 0.2, 0.13, 0.55, -0.91, 0.01, -0.06, -1.51, 0.54, 0.32, 2.39, 0.2,
		    -0.14 };
		double step[20], drift[20], flat[20];
		struct sens_noise ns;
		struct sens_gate g = { 0.08, 0.5, false, 5 };
		struct sens_report r;

		for (int i = 0; i < 20; i++) {
			double e = 0.01 * z[i];

			flat[i] = 10 * (1 + e);
			step[i] = 10 * (1 + e) * (i >= 12 ? 1.05 : 1);
			drift[i] = 10 * (1 + e) * (1 + 0.01 * i);
		}
		sens_noise_of(flat, 20, &ns);
		ok(ns.known && !ns.shift && ns.spread > 0.01 / 1.5 && ns.spread < 0.015,
		    "no change: noise %.4f, no shift", ns.spread);
		sens_noise_of(step, 20, &ns);
		ok(ns.known && ns.shift && ns.spread > 0.01 / 1.5 && ns.spread < 0.015 &&
		    ns.level_spread > 2 * ns.spread, "a 5%% step: noise %.4f (level %.4f), a shift",
		    ns.spread, ns.level_spread);
		sens_noise_of(drift, 20, &ns);
		ok(ns.known && ns.shift && ns.spread > 0.01 / 1.5 && ns.spread < 0.015,
		    "a 1%%-a-run drift: noise %.4f (level %.4f), a shift", ns.spread, ns.level_spread);
		sens_assess(&ns, &g, 0.8, &r);
		ok(r.advice == SENS_OK && r.far < 0.01, "a drift at 1%% noise is not noisy at 8%% "
		    "(false alarms %.4f)", r.far);
	}
	{
		/* The example: a gate that catches 7.2% four times in five. */
		struct sens_noise ns = { .n = 20, .known = true, .why = SENS_KNOWN, .median = 10.0 };
		struct sens_gate g = { 0.072, 0.5, false, 5 };

		ok(sens_mde(&ns, &g, 0.8) == 0.072 && sens_false_alarm(&ns, &g) == 0,
		    "without noise the percent floor is what it detects, without false alarms");
		g.ta = 1.0;
		ok(fabs(sens_mde(&ns, &g, 0.8) - 0.1) < 1e-15, "...or the absolute floor where it is wider");
	}
	{
		/*
		 * sens_rule_check: each rule's bound in both directions, a value
		 * just inside passes and one just outside fails. Window: mean 10,
		 * sample standard deviation sqrt(0.5) (zscore, linear space).
		 */
		double w[] = { 9, 10, 11, 10, 10 }, sd = sqrt(0.5);
		struct sens_verdict v;

		ok(sens_rule_check(SENS_RULE_ZSCORE, w, 5, 10 + 1.99 * sd, false, 2, &v) &&
		    !v.exceeded && fabs(v.z - 1.99) < 1e-12 && fabs(v.limit - (10 + 2 * sd)) < 1e-12 &&
		    v.n == 5, "zscore, lower is better: z 1.99 under 2 passes");
		ok(sens_rule_check(SENS_RULE_ZSCORE, w, 5, 10 + 2.01 * sd, false, 2, &v) &&
		    v.exceeded && fabs(v.z - 2.01) < 1e-12, "zscore, lower is better: z 2.01 fails");
		ok(sens_rule_check(SENS_RULE_ZSCORE, w, 5, 10 - 50 * sd, false, 2, &v) &&
		    !v.exceeded && v.z < 0, "zscore, lower is better: far better passes");
		ok(sens_rule_check(SENS_RULE_ZSCORE, w, 5, 10 - 1.99 * sd, true, 2, &v) &&
		    !v.exceeded && fabs(v.z - 1.99) < 1e-12 && fabs(v.limit - (10 - 2 * sd)) < 1e-12,
		    "zscore, higher is better: z 1.99 under 2 passes");
		ok(sens_rule_check(SENS_RULE_ZSCORE, w, 5, 10 - 2.01 * sd, true, 2, &v) &&
		    v.exceeded, "zscore, higher is better: z 2.01 fails");
		ok(sens_rule_check(SENS_RULE_ZSCORE, w, 5, 10 + 50 * sd, true, 2, &v) &&
		    !v.exceeded && v.z < 0, "zscore, higher is better: far better passes");
	}
	{
		/*
		 * prediction, log space: logs log(10) + {-0.01, 0, 0.01, 0, 0};
		 * bounds 10 exp(+-t(0.99, 4) s sqrt(1 + 1/5)), in 40 digits (mpmath,
		 * t from the closed form for 4 degrees of freedom: 3.7469473879791957).
		 */
		double w[5], up = 10.294490226662686, down = 9.7139341335232342;
		const double logs[] = { -0.01, 0, 0.01, 0, 0 };
		struct sens_verdict v;

		for (int i = 0; i < 5; i++)
			w[i] = 10 * exp(logs[i]);
		ok(sens_rule_check(SENS_RULE_PREDICTION, w, 5, up * (1 - 1e-9), false, 0.99, &v) &&
		    !v.exceeded && fabs(v.limit / up - 1) < 1e-12 && v.n == 5,
		    "prediction, lower is better: just under the bound passes");
		ok(sens_rule_check(SENS_RULE_PREDICTION, w, 5, up * (1 + 1e-9), false, 0.99, &v) &&
		    v.exceeded, "prediction, lower is better: just over the bound fails");
		ok(sens_rule_check(SENS_RULE_PREDICTION, w, 5, 1, false, 0.99, &v) && !v.exceeded,
		    "prediction, lower is better: far better passes");
		ok(sens_rule_check(SENS_RULE_PREDICTION, w, 5, down * (1 + 1e-9), true, 0.99, &v) &&
		    !v.exceeded && fabs(v.limit / down - 1) < 1e-12,
		    "prediction, higher is better: just over the bound passes");
		ok(sens_rule_check(SENS_RULE_PREDICTION, w, 5, down * (1 - 1e-9), true, 0.99, &v) &&
		    v.exceeded, "prediction, higher is better: just under the bound fails");
		ok(sens_rule_check(SENS_RULE_PREDICTION, w, 5, 100, true, 0.99, &v) && !v.exceeded,
		    "prediction, higher is better: far better passes");
	}
	{
		/*
		 * prediction in linear space where a value is not positive:
		 * mean 0.1, s 0.7416198487095663, t(0.9, 4) = 1.5332062740589441,
		 * the bounds in 40 digits as above.
		 */
		double w[] = { -1, 0, 1, 0, 0.5 };
		double up = 1.3455826652683668, down = -1.1455826652683668;
		struct sens_verdict v;

		ok(sens_rule_check(SENS_RULE_PREDICTION, w, 5, up - 1e-9, false, 0.9, &v) &&
		    !v.exceeded && fabs(v.limit - up) < 1e-12, "prediction, linear: under passes");
		ok(sens_rule_check(SENS_RULE_PREDICTION, w, 5, up + 1e-9, false, 0.9, &v) &&
		    v.exceeded, "prediction, linear: over fails");
		ok(sens_rule_check(SENS_RULE_PREDICTION, w, 5, down + 1e-9, true, 0.9, &v) &&
		    !v.exceeded && fabs(v.limit - down) < 1e-12, "prediction, linear, higher is "
		    "better: over passes");
		ok(sens_rule_check(SENS_RULE_PREDICTION, w, 5, down - 1e-9, true, 0.9, &v) &&
		    v.exceeded, "prediction, linear, higher is better: under fails");
	}
	{
		/* Where a rule cannot judge, it says so and the reference decides. */
		double four[] = { 1, 2, 3, 4 }, flat[] = { 7, 7, 7, 7, 7 },
		    odd[] = { 1, 2, NAN, 4, 5 }, w[] = { 9, 10, 11, 10, 10 };
		struct sens_verdict v;

		for (int r = SENS_RULE_PREDICTION; r <= SENS_RULE_ZSCORE; r++) {
			double p = r == SENS_RULE_ZSCORE ? 2 : 0.99;

			ok(!sens_rule_check(r, four, 4, 100, false, p, &v) && !v.exceeded && v.n == 4,
			    "%s: four values cannot judge", sens_rule_name(r));
			ok(!sens_rule_check(r, flat, 5, 100, false, p, &v) && !v.exceeded,
			    "%s: a window without spread cannot judge", sens_rule_name(r));
			ok(!sens_rule_check(r, odd, 5, 100, false, p, &v) &&
			    !sens_rule_check(r, w, 5, INFINITY, false, p, &v),
			    "%s: a value that is not finite cannot judge", sens_rule_name(r));
		}
	}
	return done_testing();
}
