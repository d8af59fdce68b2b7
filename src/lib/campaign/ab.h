/*
 * ab: the paired base-versus-head A/B of perf-ab(1), apart from running
 * anything: the balanced seeded order of the pairs, the sequential
 * design (sequential_bound.h), and the analysis of one metric at one look, the
 * paired statistics being perf-analyze's own (paired.h).
 */
#ifndef PERF_CAMPAIGN_AB_H
#define PERF_CAMPAIGN_AB_H

#include <stdbool.h>
#include <stdint.h>

#include "campaign/paired.h"

/*
 * The order: pairs go in couples; for couple k and each of nconfigs
 * configs in turn, Python's random.shuffle() of the two blocks [AB, BA]
 * with the generator random.Random(seed), so that every two pairs of a
 * config hold one of each and a drift during the job cancels. Fills
 * head_first[pair * nconfigs + config] for pair = 0 .. pairs - 1.
 */
void ab_order(uint64_t seed, int pairs, int nconfigs, bool *head_first);

/* The looks after min .. max pairs and their nominal levels. */
struct ab_design {
	double alpha;
	int min, max;
	double *level;		/* [n - min]: the look after n pairs */
};

void ab_design_init(struct ab_design *d, double alpha, int min, int max);
void ab_design_free(struct ab_design *d);
/* The confidence of the interval at the look after n pairs (min <= n <= max). */
double ab_confidence(const struct ab_design *d, int n);

/* One metric at one look. */
struct ab_result {
	struct paired g;	/* of the ratios oriented so that above 1 is better */
	double ratio, low, high;	/* head / base: geometric mean and interval */
	double confidence;
	double mde;		/* minimum detectable change, a fraction; < 0 unknown */
	const char *verdict, *why;
	bool decided;		/* slower, faster or equivalent */
};

/*
 * Analyses n >= 1 pairs of positive finite values of a metric: the
 * improvement ratios are base / head when lower is better, head / base
 * when higher is better, summarized and judged by paired_summarize() and
 * paired_verdict() with margin band, so that the verdict is
 * perf-analyze's on the same pairs; "inconclusive" (fewer_than_two_pairs)
 * when n < 2. The minimum detectable change is the true change that
 * would be found slower (or faster) with probability 0.8 at this n:
 * exp(log(1 + band) + (t_conf + t_0.8) sd / sqrt(n)) - 1.
 */
void ab_analyze(const double *base, const double *head, int n, bool higher_is_better,
    double band, double confidence, struct ab_result *r);

#endif
