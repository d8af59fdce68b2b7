/*
 * pyrandom: Python's random module, as far as the campaign order needs it: the
 * MT19937 generator seeded as random.Random(seed) seeds it, and
 * random.shuffle() (doc/campaign-report.md).
 */
#ifndef PERF_CORE_PYRANDOM_H
#define PERF_CORE_PYRANDOM_H

#include <stddef.h>
#include <stdint.h>

struct pyrandom {
	uint32_t s[624];
	int i;
};

/* random.Random(seed): init_by_array over the 32-bit words of the seed. */
void pyrandom_seed(struct pyrandom *m, uint64_t seed);
/* The next 32-bit output (genrand_uint32). */
uint32_t pyrandom_next(struct pyrandom *m);
/* random.Random._randbelow(n), n >= 1: rejection on the top bits. */
uint32_t pyrandom_below(struct pyrandom *m, uint32_t n);
/* random.shuffle(v) of n items of size bytes each. */
void pyrandom_shuffle(struct pyrandom *m, void *v, size_t n, size_t size);

#endif
