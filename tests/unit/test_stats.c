/* Unit tests for stats. */
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
	return done_testing();
}
