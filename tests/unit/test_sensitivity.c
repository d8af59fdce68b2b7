/* Unit tests for sens: the rolling gate's sensitivity against Python's values. */
#include <math.h>
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
		    same(ns.spread, 1, t->spread), "case %zu: %d values, median %.17g, "
		    "spread %.17g (want %.17g)", i, t->n, ns.median, ns.spread, t->spread);
		sens_assess(&ns, &g, t->power, &r);
		known = r.advice != SENS_UNKNOWN;
		advised = r.advice == SENS_NOISY || r.advice == SENS_BLIND;
		is_str(sens_advice_name(r.advice), t->advice, "case %zu: advice", i);
		ok(same(r.far, known, t->far), "case %zu: false-alarm rate %.17g (want %.17g)",
		    i, r.far, t->far);
		ok(same(r.mde, known, t->mde), "case %zu: detectable regression %.17g (want %.17g)",
		    i, r.mde, t->mde);
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
		/* The example: a gate that catches 7.2% four times in five. */
		struct sens_noise ns = { 20, true, 10.0, 0.0 };
		struct sens_gate g = { 0.072, 0.5, false, 5 };

		ok(sens_mde(&ns, &g, 0.8) == 0.072 && sens_false_alarm(&ns, &g) == 0,
		    "without noise the percent floor is what it detects, without false alarms");
		g.ta = 1.0;
		ok(fabs(sens_mde(&ns, &g, 0.8) - 0.1) < 1e-15, "...or the absolute floor where it is wider");
	}
	return done_testing();
}
