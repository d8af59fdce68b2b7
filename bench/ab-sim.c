/*
 * ab-sim: perf-ab's design simulated in process (make bench): jobs of a
 * fake benchmark with a true effect, noise and drift, run in perf-ab's
 * order and analysed by perf-ab's own library code at every look.
 *
 *   ab-sim [jobs] [seed]
 *
 * Prints one row per scenario: the share of jobs whose verdict was
 * slower, faster, equivalent or inconclusive, and the mean pairs run.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/ab.h"
#include "core/pyrandom.h"
#include "core/seqbound.h"

#define MAXP 30
#define MINP 5

struct scenario {
	const char *name;
	double effect, noise, drift, band;
	bool sequential, interleaved;
	double rho;		/* the spending function's; 0: fixed design at alpha */
};

static double
uniform(struct pyrandom *m)
{
	/* Python's random(): 53 bits. */
	uint32_t a = pyrandom_next(m) >> 5, b = pyrandom_next(m) >> 6;

	return (a * 67108864.0 + b) / 9007199254740992.0;
}

static double
gauss(struct pyrandom *m)
{
	double u = uniform(m), v = uniform(m);

	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

/* One job; returns the pairs run and sets *verdict. */
static int
job(const struct scenario *s, const double *level, struct pyrandom *m, uint64_t seed,
    const char **verdict)
{
	bool first[MAXP];
	double base[MAXP], head[MAXP];
	int runs = 2 * MAXP, pos = 0;
	struct ab_result r;

	ab_order(seed, MAXP, 1, first);
	for (int p = 0; p < MAXP; p++) {
		for (int side = 0; side < 2; side++) {
			/* side 0 runs first in the pair */
			bool is_head = s->interleaved ? (side == 0) == first[p] : false;
			int at = s->interleaved ? pos++ : (side == 0 ? p : MAXP + p);
			double v = 10.0 * (1 + s->drift * at / (runs - 1)) * exp(s->noise * gauss(m));

			if (!s->interleaved)
				is_head = side == 1;
			if (is_head)
				head[p] = v * (1 + s->effect);
			else
				base[p] = v;
		}
		if (!s->sequential || p + 1 < MINP)
			continue;
		ab_analyze(base, head, p + 1, false, s->band, 1 - level[p + 1 - MINP], &r);
		if (r.decided || p + 1 == MAXP) {
			*verdict = r.band_verdict;
			return p + 1;
		}
	}
	ab_analyze(base, head, MAXP, false, s->band, 1 - level[MAXP - MINP], &r);
	*verdict = r.band_verdict;
	return MAXP;
}

int
main(int argc, char *argv[])
{
	int jobs = argc > 1 ? atoi(argv[1]) : 1000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	static const struct scenario sc[] = {
		{ "(a) A/A, band 0", 0, 0.02, 0, 0, true, true, SEQBOUND_RHO },
		{ "(a) A/A, band 2%", 0, 0.02, 0, 0.02, true, true, SEQBOUND_RHO },
		{ "(a) A/A, fixed 30 pairs, band 0", 0, 0.02, 0, 0, false, true, 0 },
		{ "(b) 3% slower, band 0", 0.03, 0.02, 0, 0, true, true, SEQBOUND_RHO },
		{ "(b) 3% slower, band 1%", 0.03, 0.02, 0, 0.01, true, true, SEQBOUND_RHO },
		{ "(c) 5% drift, interleaved, band 0", 0, 0.02, 0.05, 0, true, true, SEQBOUND_RHO },
		{ "(c) 5% drift, base then head, band 0", 0, 0.02, 0.05, 0, false, false, 0 },
		{ "(d) 3% slower, fixed 30 pairs, band 0", 0.03, 0.02, 0, 0, false, true, 0 },
		{ "(d) 3% slower, fixed 30 pairs, band 1%", 0.03, 0.02, 0, 0.01, false, true, 0 },
		{ "rho 1 (Pocock-type): A/A, band 0", 0, 0.02, 0, 0, true, true, 1 },
		{ "rho 1 (Pocock-type): 3% slower, band 1%", 0.03, 0.02, 0, 0.01, true, true, 1 },
		{ "rho 3 (OBF-type): A/A, band 0", 0, 0.02, 0, 0, true, true, 3 },
		{ "rho 3 (OBF-type): 3% slower, band 1%", 0.03, 0.02, 0, 0.01, true, true, 3 },
	};
	double level[MAXP];
	struct pyrandom m;

	pyrandom_seed(&m, seed);
	printf("%-44s %7s %7s %7s %7s %6s\n", "scenario", "slower", "faster", "equiv",
	    "inconcl", "pairs");
	for (size_t i = 0; i < sizeof sc / sizeof *sc; i++) {
		int count[4] = { 0 }, pairs = 0;

		if (sc[i].rho > 0)
			seqbound_levels(0.05, sc[i].rho, MINP, MAXP, level);
		else
			for (int k = 0; k <= MAXP - MINP; k++)
				level[k] = 0.05;
		for (int j = 0; j < jobs; j++) {
			const char *v;

			pairs += job(&sc[i], level, &m, seed * 100000 + (uint64_t)j, &v);
			count[strcmp(v, "slower") == 0 ? 0 : strcmp(v, "faster") == 0 ? 1 :
			    strcmp(v, "equivalent") == 0 ? 2 : 3]++;
		}
		printf("%-44s %6.1f%% %6.1f%% %6.1f%% %6.1f%% %6.1f\n", sc[i].name,
		    100.0 * count[0] / jobs, 100.0 * count[1] / jobs, 100.0 * count[2] / jobs,
		    100.0 * count[3] / jobs, (double)pairs / jobs);
	}
	return 0;
}
