/*
 * Unit tests for seqbound and ab: the bound against known properties, the
 * order's balance, and a fast subset of bench/ab-sim (make bench holds the
 * full table): A/A jobs stay near alpha, a 3% slowdown at 2% noise is
 * found, a drift cancels when interleaved, and the sequential stop saves
 * pairs.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "campaign/ab.h"
#include "core/pyrandom.h"
#include "core/seqbound.h"
#include "tap.h"

#define MINP 5
#define MAXP 30

static double
gauss(struct pyrandom *m)
{
	double u = ((pyrandom_next(m) >> 5) * 67108864.0 + (pyrandom_next(m) >> 6)) / 9007199254740992.0;
	double v = ((pyrandom_next(m) >> 5) * 67108864.0 + (pyrandom_next(m) >> 6)) / 9007199254740992.0;

	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

/* One interleaved sequential job; returns the pairs run, sets *slower. */
static int
job(const struct ab_design *d, struct pyrandom *m, uint64_t seed, double effect, double drift,
    double band, bool *slower)
{
	bool first[MAXP];
	double base[MAXP], head[MAXP];
	struct ab_result r;
	int pos = 0;

	ab_order(seed, MAXP, 1, first);
	for (int p = 0; p < MAXP; p++) {
		for (int s = 0; s < 2; s++) {
			bool is_head = (s == 0) == first[p];
			double v = 10 * (1 + drift * pos++ / (2 * MAXP - 1)) * exp(0.02 * gauss(m));

			if (is_head)
				head[p] = v * (1 + effect);
			else
				base[p] = v;
		}
		if (p + 1 < MINP)
			continue;
		ab_analyze(base, head, p + 1, false, band, ab_confidence(d, p + 1), &r);
		if (r.decided || p + 1 == MAXP) {
			*slower = strcmp(r.verdict, "slower") == 0 || strcmp(r.verdict, "faster") == 0;
			if (effect > 0)
				*slower = strcmp(r.verdict, "slower") == 0;
			return p + 1;
		}
	}
	return MAXP;
}

/* One case of ab_verdict(): the improvement interval, the direction, verdict and reason. */
static void
verdict_is(double low, double high, bool hib, const char *want, const char *why_want)
{
	const char *why, *v = ab_verdict(low, high, hib, 0.08, &why);

	ok(strcmp(v, want) == 0 && strcmp(why, why_want) == 0,
	    "ab_verdict(%g, %g, %s): %s (%s), got %s (%s)", low, high,
	    hib ? "higher is better" : "lower is better", want, why_want, v, why);
}

/*
 * The verdicts and reasons in head / base space: a latency 5.8% slower
 * (improvement 1 / 1.076 .. 1 / 1.039) is slower within the band, its
 * interval above 1; one beyond the band is slower with the interval above
 * the band, never below it.
 */
static void
verdicts(void)
{
	verdict_is(1 / 1.076, 1 / 1.039, false, "slower_within_band", "interval_inside_band_above_1");
	verdict_is(1.039, 1.076, true, "faster_within_band", "interval_inside_band_above_1");
	verdict_is(1 / 1.076, 1 / 1.039, true, "slower_within_band", "interval_inside_band_below_1");
	verdict_is(1.039, 1.076, false, "faster_within_band", "interval_inside_band_below_1");
	verdict_is(0.98, 1.01, false, "equivalent", "interval_inside_band");
	verdict_is(1 / 1.15, 1 / 1.10, false, "slower", "interval_above_band");
	verdict_is(1 / 1.15, 1 / 1.10, true, "slower", "interval_below_band");
	verdict_is(1.10, 1.15, false, "faster", "interval_below_band");
	verdict_is(1.10, 1.15, true, "faster", "interval_above_band");
	verdict_is(1.01, 1.15, false, "inconclusive", "interval_crosses_band_edge");
	ok(strcmp(ab_verdict_label("slower_within_band"), "slower, within band") == 0 &&
	    strcmp(ab_verdict_label("equivalent"), "equivalent") == 0, "the verdicts' labels");
	/* A metric of unknown direction (issue 24): told as what changed, never slower. */
	ok(strcmp(ab_undirected("slower"), "higher") == 0 &&
	    strcmp(ab_undirected("faster"), "lower") == 0 &&
	    strcmp(ab_undirected("slower_within_band"), "higher_within_band") == 0 &&
	    strcmp(ab_undirected("faster_within_band"), "lower_within_band") == 0 &&
	    strcmp(ab_undirected("equivalent"), "equivalent") == 0 &&
	    strcmp(ab_undirected("inconclusive"), "inconclusive") == 0,
	    "ab_undirected: slower is higher, faster lower, the rest as they are");
	ok(strcmp(ab_verdict_label("higher_within_band"), "higher, within band") == 0 &&
	    strcmp(ab_verdict_label("lower_within_band"), "lower, within band") == 0,
	    "the undirected verdicts' labels");
}

int
main(void)
{
	struct ab_design d;
	double level[MAXP - MINP + 1], rho1[MAXP - MINP + 1];
	bool order[2 * 3 * 10], s;
	int fp = 0, hit = 0, pairs = 0, driftfp = 0, balanced = 1;
	struct pyrandom m;

	seqbound_levels(0.05, 1.0, MINP, MAXP, rho1);
	seqbound_levels(0.05, SEQBOUND_RHO, MINP, MAXP, level);
	ok(level[0] > 0 && level[0] <= 0.05 * pow(5.0 / 30, 2) + 1e-12,
	    "the first look spends at most alpha (5/30)^2");
	ok(level[MAXP - MINP] < 0.05 && level[MAXP - MINP] > 0.01,
	    "the last look's level is below alpha, well above Bonferroni's");
	for (int k = 1; k <= MAXP - MINP; k++)
		if (!(level[k] > level[k - 1] * 0.8))
			balanced = 0;
	ok(balanced, "the levels grow with the looks (rho 2)");
	ok(rho1[0] > level[0], "rho 1 spends more at the first look than rho 2");

	ab_order(7, 10, 3, order);
	balanced = 1;
	for (int k = 0; k < 5; k++)
		for (int c = 0; c < 3; c++)
			if (order[(2 * k) * 3 + c] == order[(2 * k + 1) * 3 + c])
				balanced = 0;
	ok(balanced, "every couple of pairs holds one AB and one BA per config");

	ab_design_init(&d, 0.05, MINP, MAXP);
	ok(fabs(ab_confidence(&d, MINP) - (1 - level[0])) < 1e-15, "the design's confidence");
	pyrandom_seed(&m, 99);
	for (int j = 0; j < 300; j++) {
		job(&d, &m, (uint64_t)j, 0, 0, 0, &s);
		fp += s;
		pairs += job(&d, &m, (uint64_t)j, 0.03, 0, 0.01, &s);
		hit += s;
		job(&d, &m, (uint64_t)j, 0, 0.05, 0, &s);
		driftfp += s;
	}
	printf("# A/A %d/300, 3%% found %d/300 in %.1f pairs, drift %d/300\n", fp, hit,
	    pairs / 300.0, driftfp);
	/* 300 jobs: alpha 5% has a standard error of 1.3 points. */
	ok(fp <= 27, "A/A false positives (band 0) stay near alpha");
	ok(hit >= 270, "a 3%% slowdown at 2%% noise is found in 90%% of jobs (band 1%%)");
	ok(pairs <= 300 * 21, "the sequential stop runs at least 30%% fewer pairs than 30");
	ok(driftfp <= 27, "a 5%% drift cancels when interleaved");
	ab_design_free(&d);
	verdicts();
	return done_testing();
}
