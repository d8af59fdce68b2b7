#include <string.h>

#include "core/pyrandom.h"

#define N 624
#define M 397

static void
init_genrand(struct pyrandom *m, uint32_t s)
{
	m->s[0] = s;
	for (int i = 1; i < N; i++)
		m->s[i] = 1812433253U * (m->s[i - 1] ^ (m->s[i - 1] >> 30)) + (uint32_t)i;
	m->i = N;
}

void
pyrandom_seed(struct pyrandom *m, uint64_t seed)
{
	uint32_t key[2];
	int klen = 0, i = 1, j = 0, k;

	/* Python: the absolute value's 32-bit words, least significant first. */
	key[klen++] = (uint32_t)seed;
	if (seed >> 32)
		key[klen++] = (uint32_t)(seed >> 32);
	init_genrand(m, 19650218U);
	for (k = N > klen ? N : klen; k > 0; k--) {
		m->s[i] = (m->s[i] ^ ((m->s[i - 1] ^ (m->s[i - 1] >> 30)) * 1664525U)) +
		    key[j] + (uint32_t)j;
		i++;
		j++;
		if (i >= N) {
			m->s[0] = m->s[N - 1];
			i = 1;
		}
		if (j >= klen)
			j = 0;
	}
	for (k = N - 1; k > 0; k--) {
		m->s[i] = (m->s[i] ^ ((m->s[i - 1] ^ (m->s[i - 1] >> 30)) * 1566083941U)) -
		    (uint32_t)i;
		i++;
		if (i >= N) {
			m->s[0] = m->s[N - 1];
			i = 1;
		}
	}
	m->s[0] = 0x80000000U;
}

uint32_t
pyrandom_next(struct pyrandom *m)
{
	uint32_t y;

	if (m->i >= N) {
		for (int k = 0; k < N; k++) {
			y = (m->s[k] & 0x80000000U) | (m->s[(k + 1) % N] & 0x7fffffffU);
			m->s[k] = m->s[(k + M) % N] ^ (y >> 1) ^ ((y & 1U) ? 0x9908b0dfU : 0U);
		}
		m->i = 0;
	}
	y = m->s[m->i++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680U;
	y ^= (y << 15) & 0xefc60000U;
	y ^= y >> 18;
	return y;
}

uint32_t
pyrandom_below(struct pyrandom *m, uint32_t n)
{
	int bits = 0;
	uint32_t r;

	while (bits < 32 && (n >> bits) != 0)
		bits++;
	do
		r = bits == 0 ? 0 : pyrandom_next(m) >> (32 - bits);
	while (r >= n);
	return r;
}

void
pyrandom_shuffle(struct pyrandom *m, void *v, size_t n, size_t size)
{
	unsigned char *p = v, tmp[256];

	for (size_t i = n; i-- > 1;) {
		size_t j = pyrandom_below(m, (uint32_t)i + 1);

		if (j == i)
			continue;
		for (size_t off = 0; off < size; off += sizeof tmp) {
			size_t c = size - off < sizeof tmp ? size - off : sizeof tmp;

			memcpy(tmp, p + i * size + off, c);
			memcpy(p + i * size + off, p + j * size + off, c);
			memcpy(p + j * size + off, tmp, c);
		}
	}
}
