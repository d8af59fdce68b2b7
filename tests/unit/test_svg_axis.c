/* Unit tests for svgaxis: nice linear ticks, 1-2-5 log ticks, their labels. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/svg_axis.h"
#include "tap.h"

/* The axis' labels joined by spaces. */
static const char *
joined(const struct svgaxis *a)
{
	static char s[SVGAXIS_MAX * SVGAXIS_LABEL];

	s[0] = '\0';
	for (int i = 0; i < a->n; i++) {
		if (i > 0)
			strcat(s, " ");
		strcat(s, a->label[i]);
	}
	return s;
}

/* Labels pairwise different, values ascending. */
static int
distinct(const struct svgaxis *a)
{
	for (int i = 0; i < a->n; i++)
		for (int j = i + 1; j < a->n; j++)
			if (strcmp(a->label[i], a->label[j]) == 0 || !(a->v[j] > a->v[i]))
				return 0;
	return 1;
}

/* Every value has mantissa 1, 2 or 5, and each such value in range is there. */
static int
is_125(const struct svgaxis *a, double lo, double hi)
{
	int want = 0;

	for (int e = -12; e <= 12; e++)
		for (int k = 0; k < 3; k++) {
			double v = (k == 0 ? 1 : k == 1 ? 2 : 5) * pow(10, e);
			want += v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9);
		}
	for (int i = 0; i < a->n; i++) {
		double m = a->v[i] / pow(10, floor(log10(a->v[i]) + 1e-9));
		if (fabs(m - 1) > 1e-9 && fabs(m - 2) > 1e-9 && fabs(m - 5) > 1e-9)
			return 0;
	}
	return a->n == want;
}

int
main(void)
{
	struct svgaxis a;
	char s[SVGAXIS_LABEL];

	/* The case: values that agree to three decimals. */
	svgaxis_linear(&a, 0.0051, 0.0054, 3);
	is_str(joined(&a), "0.0051 0.0052 0.0053 0.0054", "0.0051..0.0054: four decimals, not 0.005 four times");
	ok(a.step == 0.0001 || fabs(a.step - 0.0001) < 1e-18, "step 0.0001");
	svgaxis_linear(&a, 0.00502, 0.00536, 6);
	is_str(joined(&a), "0.00500 0.00505 0.00510 0.00515 0.00520 0.00525 0.00530 0.00535 0.00540",
	    "step 0.00005: five decimals");
	svgaxis_linear(&a, 1.3, 1.47, 4);
	is_str(joined(&a), "1.30 1.35 1.40 1.45 1.50", "step 0.05: two decimals, trailing zeros kept");
	svgaxis_linear(&a, 30.2, 34.1, 4);
	is_str(joined(&a), "30 31 32 33 34 35", "step 1: no decimals");
	ok(a.lo == 30 && a.hi == 35, "the domain is widened to whole steps");
	svgaxis_linear(&a, 0.3, 0.9, 6);
	is_str(joined(&a), "0.3 0.4 0.5 0.6 0.7 0.8 0.9", "bounds on a multiple stay (0.3/0.1 is 2.999...)");
	svgaxis_linear(&a, 12, 12, 4);
	is_str(joined(&a), "11.4 11.6 11.8 12.0 12.2 12.4 12.6", "one value: 5%% each side");
	svgaxis_linear(&a, 0, 0, 4);
	is_str(joined(&a), "-1.0 -0.5 0.0 0.5 1.0", "zero: 1 each side, never -0");
	svgaxis_linear(&a, -0.012, 0.007, 4);
	is_str(joined(&a), "-0.015 -0.010 -0.005 0.000 0.005 0.010", "negative values; 0.000, not minus zero");
	svgaxis_linear(&a, 10000, 10600, 4);
	is_str(joined(&a), "10000 10200 10400 10600", "large values: no decimals");
	svgaxis_linear(&a, NAN, 3, 4);
	ok(a.lo == 0 && a.hi == 1 && a.n >= 2, "non-finite bounds give [0, 1]");
	svgaxis_linear(&a, 5, 1, 4);
	ok(a.lo <= 1 && a.hi >= 5 && distinct(&a), "reversed bounds are swapped");

	/* Labels differ for many ranges, targets and magnitudes. */
	{
		int bad = 0, cases = 0;

		for (int e = -6; e <= 9; e++)
			for (double lo = 1; lo < 10; lo += 0.37)
				for (double w = 1e-6; w <= 100; w *= 3.1)
					for (int target = 2; target <= 10; target += 2) {
						double l = lo * pow(10, e), h = l + w * pow(10, e);

						for (int sign = 0; sign < 2; sign++) {
							double x0 = sign ? -h : l, x1 = sign ? -l : h;
							svgaxis_linear(&a, x0, x1, target);
							cases++;
							if (!distinct(&a) || a.lo > x0 + a.step * 1e-6 ||
							    a.hi < x1 - a.step * 1e-6 || a.n < 2 ||
							    a.n > 3 * target + 3) {
								if (bad++ < 5)
									printf("# [%g, %g] target %d: %s\n", x0, x1,
									    target, joined(&a));
							}
						}
					}
		ok(bad == 0, "%d of %d linear ranges have distinct ascending labels covering the data", cases - bad, cases);
	}

	/* Log axes: 1-2-5. */
	svgaxis_log(&a, 1, 1000, 3);
	is_str(joined(&a), "1 2 5 10 20 50 100 200 500 1000", "1..1000: every 1-2-5 step");
	svgaxis_log(&a, 0.002, 0.06, 3);
	is_str(joined(&a), "0.002 0.005 0.01 0.02 0.05", "below one: the decimals each value needs");
	svgaxis_log(&a, 7.2, 130, 3);
	is_str(joined(&a), "10 20 50 100", "7.2..130 (not only 50 and 100)");
	svgaxis_log(&a, 8, 28, 3);
	is_str(joined(&a), "8 9 10 15 20", "under a decade: finer steps when 1-2-5 gives too few");
	svgaxis_log(&a, 11, 28, 3);
	is_str(joined(&a), "15 20", "finer still, only what is in range");
	svgaxis_log(&a, 1.2, 1.4, 1);
	is_str(joined(&a), "", "nothing in range: no ticks");
	svgaxis_log(&a, 0, 10, 3);
	ok(a.n == 0, "a log axis from 0 has no ticks");
	{
		int bad = 0, cases = 0;

		for (double lo = 1e-4; lo < 1e5; lo *= 1.7)
			for (double r = 1.5; r < 1e6; r *= 2.3) {
				cases++;
				svgaxis_log(&a, lo, lo * r, 0);
				if (!distinct(&a) || !is_125(&a, lo, lo * r)) {
					if (bad++ < 5)
						printf("# [%g, %g]: %s\n", lo, lo * r, joined(&a));
				}
				svgaxis_log(&a, lo, lo * r, 4);
				if (!distinct(&a))
					bad++;
			}
		ok(bad == 0, "%d of %d log ranges: every 1-2-5 value, distinct labels", cases - bad, cases);
	}

	svgaxis_format(s, -0.0001, 2);
	is_str(s, "0.00", "format: never -0");
	svgaxis_format(s, 2.675, 2);
	is_str(s, "2.67", "format: the double's exact value rounds (2.675 is below)");

	ok(svgaxis_decimals(0.005) == 3 && svgaxis_decimals(0.01) == 2 &&
	    svgaxis_decimals(0.2) == 1 && svgaxis_decimals(1) == 0 && svgaxis_decimals(50) == 0,
	    "decimals from the step");
	ok(svgaxis_text_width("06-30 01:00", 10) >= 50, "a time label is about 55 px at 10 px");
	is_str(svgaxis_anchor(350, 60, 0, 360), "end", "a label past the right edge ends at its tick");
	is_str(svgaxis_anchor(10, 60, 0, 360), "start", "a label past the left edge starts at its tick");
	is_str(svgaxis_anchor(180, 60, 0, 360), "middle", "else centred");
	/*
	 * The campaign figure's ratio axis (domain padded 8%, at least 0.01;
	 * 470 px from 200; ticks 42 px apart), as its hand-picked ticks were.
	 */
	{
		static const struct { double lo, hi; const char *want; } rc[] = {
			{ 1, 1, "0.98 1 1.02" },
			{ 0.9, 1.1, "0.9 0.95 0.98 1 1.05 1.1" },
			{ 0.5, 2, "0.5 0.67 0.8 0.95 1 1.25 1.5 2" },
			{ 0.1, 100, "0.1 0.25 0.67 1 3 10 50" },
			{ 0.97, 1.3, "0.95 0.98 1 1.05 1.1 1.25" },
			{ 0.05, 1, "0.1 0.2 0.5 0.8 1" },
		};

		for (size_t i = 0; i < sizeof rc / sizeof *rc; i++) {
			double lo = log10(rc[i].lo), hi = log10(rc[i].hi);

			svgaxis_pad(&lo, &hi, 0.08, 0.01);
			svgaxis_ratio(&a, lo, hi, 200, 470, 42);
			is_str(joined(&a), rc[i].want, "ratio axis over [%g, %g]", rc[i].lo, rc[i].hi);
			ok(distinct(&a), "ratio axis over [%g, %g]: distinct labels", rc[i].lo, rc[i].hi);
		}
	}
	{
		double lo = 0, hi = 1;

		svgaxis_pad(&lo, &hi, 0.06, 0.02);
		ok(fabs(lo + 0.06) < 1e-12 && fabs(hi - 1.06) < 1e-12, "pad: a fraction of the span each side");
		lo = hi = 2;
		svgaxis_pad(&lo, &hi, 0.06, 0.02);
		ok(fabs(lo - 1.98) < 1e-12 && fabs(hi - 2.02) < 1e-12, "pad: at least the minimum");
	}
	return done_testing();
}
