#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/num.h"
#include "core/paired.h"
#include "core/stats.h"

void
paired_summarize(const double *ratios, int n, double confidence, struct paired *s)
{
	double *sorted = ecalloc((size_t)n + 1, sizeof *sorted), mean = 0, sd = 0, h;

	memset(s, 0, sizeof *s);
	s->n = n;
	for (int i = 0; i < n; i++)
		mean += log(ratios[i]);
	mean /= n;
	if (n >= 2) {
		for (int i = 0; i < n; i++)
			sd += (log(ratios[i]) - mean) * (log(ratios[i]) - mean);
		sd = sqrt(sd / (n - 1));
	}
	memcpy(sorted, ratios, (size_t)n * sizeof *sorted);
	if (n > 1)
		qsort(sorted, (size_t)n, sizeof *sorted, num_cmp_double);
	s->mean_log = mean;
	s->sd_log = sd;
	s->geometric_mean = exp(mean);
	s->median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	s->min = sorted[0];
	s->max = sorted[n - 1];
	free(sorted);
	if (n >= 2) {
		s->has_interval = true;
		s->t = stats_t_quantile((1 + confidence) / 2, n - 1);
		h = s->t * sd / sqrt((double)n);
		s->low = exp(mean - h);
		s->high = exp(mean + h);
	}
}

const char *
paired_verdict(double low, double high, double margin, const char **why)
{
	double band_hi = 1 + margin, band_lo = 1 / (1 + margin);

	if (low > band_hi) {
		*why = "interval_above_band";
		return "faster";
	}
	if (high < band_lo) {
		*why = "interval_below_band";
		return "slower";
	}
	if (low >= band_lo && high <= band_hi) {
		*why = "interval_inside_band";
		return "equivalent";
	}
	*why = "interval_crosses_band_edge";
	return "inconclusive";
}
