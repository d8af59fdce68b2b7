/* Unit tests for mt: Python's random.Random, bit for bit (values from CPython 3.11). */
#include <stdint.h>
#include <string.h>

#include "core/pyrandom.h"
#include "tap.h"

int
main(void)
{
	static const int want37[] = { 16, 21, 8, 18, 33, 6, 20, 28, 14, 22, 11, 9, 15, 36, 27,
	    31, 34, 13, 10, 23, 19, 32, 25, 24, 17, 29, 5, 1, 12, 7, 30, 4, 2, 35, 3, 0, 26 };
	static const int want10[] = { 7, 3, 2, 8, 5, 6, 9, 4, 0, 1 };
	struct pyrandom m;
	int v[37];
	uint32_t a, b, c;

	pyrandom_seed(&m, 42);
	a = pyrandom_next(&m);
	b = pyrandom_next(&m);
	c = pyrandom_next(&m);
	ok(a == 2746317213U && b == 478163327U && c == 107420369U,
	    "seed 42: 2746317213, 478163327, 107420369 (doc/campaign-report.md)");
	for (int i = 0; i < 10; i++)
		v[i] = i;
	pyrandom_seed(&m, 42);
	pyrandom_shuffle(&m, v, 10, sizeof *v);
	ok(memcmp(v, want10, sizeof want10) == 0, "shuffle(range(10)) with seed 42");
	for (int i = 0; i < 37; i++)
		v[i] = i;
	pyrandom_seed(&m, 20261012);
	pyrandom_shuffle(&m, v, 37, sizeof *v);
	ok(memcmp(v, want37, sizeof want37) == 0, "shuffle(range(37)) with the seed's example seed");
	pyrandom_seed(&m, INT64_MAX);
	a = pyrandom_next(&m);
	b = pyrandom_next(&m);
	ok(a == 1359979423U && b == 2819855560U, "a seed of two 32-bit words (2^63-1)");
	pyrandom_seed(&m, 0);
	a = pyrandom_next(&m);
	b = pyrandom_next(&m);
	ok(a == 3626764237U && b == 1654615998U, "seed 0");
	pyrandom_seed(&m, 42);
	for (int i = 0; i < 2000; i++)
		pyrandom_next(&m);	/* past one state refill */
	ok(pyrandom_below(&m, 1) == 0, "below(1) is 0");
	return done_testing();
}
