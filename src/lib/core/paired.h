/*
 * paired: the statistics of paired log-ratios, written once for
 * perf-analyze(1) and perf-ab(1): the summary of the ratios, the Student t
 * interval of their mean logarithm, and the verdict of an interval against
 * an equivalence band (doc/campaign-report.md, "A cell").
 */
#ifndef PERF_CORE_PAIRED_H
#define PERF_CORE_PAIRED_H

#include <stdbool.h>

struct paired {
	int n;
	double mean_log;	/* mean of the natural logarithms */
	double sd_log;		/* sample standard deviation (n - 1); 0 when n < 2 */
	double geometric_mean;	/* exp(mean_log) */
	double median, min, max;	/* of the ratios */
	bool has_interval;	/* n >= 2 */
	double t, low, high;	/* t quantile; exp(mean_log -+ t sd_log / sqrt(n)) */
};

/*
 * Summarizes n >= 1 ratios (all positive and finite) and, when n >= 2,
 * the two-sided interval at the given confidence (0 < confidence < 1):
 * t is Student's t quantile at (1 + confidence) / 2 with n - 1 degrees of
 * freedom.
 */
void paired_summarize(const double *ratios, int n, double confidence, struct paired *s);

/*
 * The verdict of the interval [low, high] of a ratio that is above 1 when
 * the variant is better, against the band [1 / (1 + margin), 1 + margin]:
 * "faster" (low above the band), "slower" (high below it), "equivalent"
 * (inside it, edges included) or "inconclusive", with its reason
 * (interval_above_band, interval_below_band, interval_inside_band,
 * interval_crosses_band_edge) in *why.
 */
const char *paired_verdict(double low, double high, double margin, const char **why);

#endif
