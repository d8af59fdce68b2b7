/* Unit tests for stats. */
#include <math.h>

#include "core/stats.h"
#include "tap.h"

#include "sens_vectors.h"

int
main(void)
{
	double a[] = { 3, 1, 2 }, b[] = { 10.0, 10.2 }, c[] = { 4.6, 4.4 },
	    d[] = { 9900.0, 10100.0 }, e[] = { 8.0, 8.2 }, f[] = { 5 },
	    g[] = { 7, 3, 6, 4, 5 };

	ok(stats_median(a, 3) == 2, "odd count: the middle value");
	ok(stats_median(b, 2) == (10.0 + 10.2) / 2, "even count: (a + b) / 2");
	ok(stats_median(c, 2) == 4.5, "4.6 and 4.4 give 4.5");
	ok(stats_median(d, 2) == 10000.0, "memory median");
	ok(stats_median(e, 2) == (8.0 + 8.2) / 2, "dit median");
	ok(stats_median(f, 1) == 5, "a single value");
	ok(stats_median(g, 5) == 5, "five values");
	{
		/* The values, to 1e-9 relative (they have 10 digits). */
		static const struct { double p, df, t; } q[] = {
			{ 0.975, 4, 2.776445105 }, { 0.975, 9, 2.262157163 },
			{ 0.95, 2, 2.919985580 }, { 0.975, 1, 12.706204736 },
			{ 0.995, 30, 2.749995654 }, { 0.975, 1000, 1.962339081 },
			/* scipy.stats.t.ppf, 17 digits */
			{ 0.975, 29, 2.0452296421327034 }, { 0.9, 5, 1.4758840488244813 },
			{ 0.5, 7, 0 }, { 0.025, 4, -2.7764451051977987 },
		};
		for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
			double t = stats_t_quantile(q[i].p, q[i].df);

			ok(q[i].t == 0 ? t == 0 : fabs(t / q[i].t - 1) < 1e-9,
			    "t(%g, %g) = %.12f (want %.10f)", q[i].p, q[i].df, t, q[i].t);
		}
		ok(fabs(stats_t_cdf(2.776445105197799, 4) - 0.975) < 1e-13, "the cdf inverts the quantile");
	}
	/* Python's NormalDist: the same algorithm (AS241) gives the same double. */
	for (size_t i = 0; i < sizeof quantile_vectors / sizeof *quantile_vectors; i++)
		ok(stats_norm_quantile(quantile_vectors[i].p) == quantile_vectors[i].z,
		    "z(%.17g) = %.17g (want %.17g)", quantile_vectors[i].p,
		    stats_norm_quantile(quantile_vectors[i].p), quantile_vectors[i].z);
	/* Python computes 0.5 (1 + erf(z / sqrt 2)); here erfc keeps the tails exact. */
	for (size_t i = 0; i < sizeof cdf_vectors / sizeof *cdf_vectors; i++)
		ok(fabs(stats_norm_cdf(cdf_vectors[i].z) - cdf_vectors[i].p) <= 2e-16,
		    "Phi(%g) = %.17g (want %.17g)", cdf_vectors[i].z,
		    stats_norm_cdf(cdf_vectors[i].z), cdf_vectors[i].p);
	for (size_t i = 0; i < sizeof mad_vectors / sizeof *mad_vectors; i++) {
		const double *v = &mad_data[mad_vectors[i].off];
		double before = v[0];

		ok(stats_mad(v, (size_t)mad_vectors[i].n) == mad_vectors[i].mad && v[0] == before,
		    "MAD of %d values = %.17g (want %.17g), values untouched", mad_vectors[i].n,
		    stats_mad(v, (size_t)mad_vectors[i].n), mad_vectors[i].mad);
	}
	for (size_t n = 1; n <= 5; n++)
		ok(fabs(stats_median_var(n) - median_var_vectors[n - 1]) < 1e-12,
		    "Var(median of %zu normals) = %.15f (integral %.15f)", n, stats_median_var(n),
		    median_var_vectors[n - 1]);
	ok(fabs(stats_median_var(101) - M_PI / 202) < 1e-15, "large n: pi / (2 n)");
	return done_testing();
}
