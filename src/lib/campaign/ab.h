/*
 * ab: the paired base-versus-head A/B of perf-ab(1), apart from running
 * anything: the balanced seeded order of the pairs, the sequential
 * design (core/seqbound.h), and the analysis of one metric at one look, the
 * paired statistics being perf-analyze's own (core/paired.h).
 */
#ifndef PERF_CAMPAIGN_AB_H
#define PERF_CAMPAIGN_AB_H

#include <stdbool.h>
#include <stdint.h>

#include "core/paired.h"

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
	const char *verdict, *why;	/* ab_verdict(): in head / base space */
	const char *band_verdict;	/* perf-analyze's: slower, faster, equivalent, inconclusive */
	bool decided;		/* band_verdict is not inconclusive */
};

/*
 * The verdict of the interval [low, high] of the improvement ratio (above
 * 1 when the head is better) against the band [1 / (1 + band), 1 + band]:
 * paired_verdict()'s, with "equivalent" split by where the interval lies
 * against 1, and the reason in *why told as the report shows the ratio
 * (head / base, above 1 when a latency is slower or a throughput faster):
 *   slower, faster       the interval wholly beyond the band on the worse
 *                        (better) side: interval_above_band or
 *                        interval_below_band, as it lies;
 *   slower_within_band,  inside the band (edges included) and wholly on
 *   faster_within_band   one side of 1: interval_inside_band_above_1 or
 *                        interval_inside_band_below_1;
 *   equivalent           inside the band and containing 1:
 *                        interval_inside_band;
 *   inconclusive         across an edge of the band:
 *                        interval_crosses_band_edge.
 * Only slower fails the gate.
 */
const char *ab_verdict(double low, double high, bool higher_is_better, double band,
    const char **why);

/* How a verdict reads in a table: "slower, within band" for slower_within_band. */
const char *ab_verdict_label(const char *verdict);

/*
 * The verdict of a metric of unknown direction (analysed as lower is
 * better) as it is told: "higher" for slower, "lower" for faster, and so
 * "higher_within_band", "lower_within_band"; the others as they are. It
 * never reads as slower, so it never fails the A/B.
 */
const char *ab_undirected(const char *verdict);

/*
 * Analyses n >= 1 pairs of positive finite values of a metric: the
 * improvement ratios are base / head when lower is better, head / base
 * when higher is better, summarized and judged by paired_summarize() and
 * paired_verdict() with margin band, so that band_verdict is
 * perf-analyze's on the same pairs, and the verdict is ab_verdict()'s;
 * both "inconclusive" (fewer_than_two_pairs) when n < 2. The minimum detectable change is the true change that
 * would be found slower (or faster) with probability 0.8 at this n:
 * exp(log(1 + band) + (t_conf + t_0.8) sd / sqrt(n)) - 1.
 */
void ab_analyze(const double *base, const double *head, int n, bool higher_is_better,
    double band, double confidence, struct ab_result *r);

#endif
