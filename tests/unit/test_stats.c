/* Unit tests for stats. */
#include <math.h>

#include "stats.h"
#include "tap.h"

int
main(void)
{
	double a[] = { 3, 1, 2 }, b[] = { 10.0, 10.2 }, c[] = { 4.6, 4.4 },
	    d[] = { 9900.0, 10100.0 }, e[] = { 8.0, 8.2 }, f[] = { 5 },
	    g[] = { 7, 3, 6, 4, 5 };

	ok(stats_median(a, 3) == 2, "odd count: the middle value");
	ok(stats_median(b, 2) == (10.0 + 10.2) / 2, "even count: (a + b) / 2");
	ok(stats_median(c, 2) == 4.5, "4.6 and 4.4 give 4.5 (6.1 example)");
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
	return done_testing();
}
