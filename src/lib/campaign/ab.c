#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/ab.h"
#include "core/err.h"
#include "core/pyrandom.h"
#include "core/seqbound.h"
#include "core/stats.h"

void
ab_order(uint64_t seed, int pairs, int nconfigs, bool *head_first)
{
	struct pyrandom m;

	pyrandom_seed(&m, seed);
	for (int k = 0; 2 * k < pairs; k++)
		for (int c = 0; c < nconfigs; c++) {
			int blocks[2] = { 0, 1 };	/* 0: AB, base first; 1: BA */

			pyrandom_shuffle(&m, blocks, 2, sizeof *blocks);
			for (int i = 0; i < 2 && 2 * k + i < pairs; i++)
				head_first[(2 * k + i) * nconfigs + c] = blocks[i] == 1;
		}
}

void
ab_design_init(struct ab_design *d, double alpha, int min, int max)
{
	d->alpha = alpha;
	d->min = min;
	d->max = max;
	d->level = ecalloc((size_t)(max - min + 1), sizeof *d->level);
	seqbound_levels(alpha, SEQBOUND_RHO, min, max, d->level);
}

void
ab_design_free(struct ab_design *d)
{
	free(d->level);
	d->level = NULL;
}

double
ab_confidence(const struct ab_design *d, int n)
{
	return 1 - d->level[n - d->min];
}

const char *
ab_verdict(double low, double high, bool higher_is_better, double band, const char **why)
{
	const char *v = paired_verdict(low, high, band, why);
	bool above;		/* head / base lies above the band, or above 1 */

	if (strcmp(v, "slower") == 0 || strcmp(v, "faster") == 0) {
		above = (strcmp(v, "slower") == 0) != higher_is_better;
		*why = above ? "interval_above_band" : "interval_below_band";
		return v;
	}
	if (strcmp(v, "equivalent") != 0)
		return v;
	if (low > 1) {
		v = "faster_within_band";
		above = higher_is_better;
	} else if (high < 1) {
		v = "slower_within_band";
		above = !higher_is_better;
	} else
		return v;
	*why = above ? "interval_inside_band_above_1" : "interval_inside_band_below_1";
	return v;
}

const char *
ab_verdict_label(const char *verdict)
{
	if (strcmp(verdict, "slower_within_band") == 0)
		return "slower, within band";
	if (strcmp(verdict, "faster_within_band") == 0)
		return "faster, within band";
	if (strcmp(verdict, "higher_within_band") == 0)
		return "higher, within band";
	if (strcmp(verdict, "lower_within_band") == 0)
		return "lower, within band";
	return verdict;
}

const char *
ab_undirected(const char *verdict)
{
	static const char *const map[][2] = { { "slower", "higher" }, { "faster", "lower" },
	    { "slower_within_band", "higher_within_band" },
	    { "faster_within_band", "lower_within_band" } };

	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (strcmp(verdict, map[i][0]) == 0)
			return map[i][1];
	return verdict;
}

void
ab_analyze(const double *base, const double *head, int n, bool higher_is_better,
    double band, double confidence, struct ab_result *r)
{
	double *g = ecalloc((size_t)n + 1, sizeof *g);

	memset(r, 0, sizeof *r);
	for (int i = 0; i < n; i++)
		g[i] = higher_is_better ? head[i] / base[i] : base[i] / head[i];
	paired_summarize(g, n, confidence, &r->g);
	free(g);
	r->confidence = confidence;
	r->ratio = higher_is_better ? r->g.geometric_mean : 1 / r->g.geometric_mean;
	r->mde = -1;
	if (!r->g.has_interval) {
		r->verdict = r->band_verdict = "inconclusive";
		r->why = "fewer_than_two_pairs";
		return;
	}
	r->low = higher_is_better ? r->g.low : 1 / r->g.high;
	r->high = higher_is_better ? r->g.high : 1 / r->g.low;
	r->band_verdict = paired_verdict(r->g.low, r->g.high, band, &r->why);
	r->verdict = ab_verdict(r->g.low, r->g.high, higher_is_better, band, &r->why);
	r->decided = strcmp(r->band_verdict, "inconclusive") != 0;
	r->mde = exp(log1p(band) + (r->g.t + stats_t_quantile(0.8, n - 1)) * r->g.sd_log /
	    sqrt((double)n)) - 1;
}
