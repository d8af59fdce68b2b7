/*
 * bisect-sim: perf-bisect's decisions (src/lib/campaign/bisect.c) on
 * simulated runs, in process: N seeded bisects of a history of C commits
 * with one step of S (a fraction: 0.05 is 5% slower) at a random commit,
 * each run's time exp(ln(10 s) + step + noise), the noise normal with
 * standard deviation SIGMA of the log. Beside it, the bisects without
 * statistics: plain git bisect (one run per commit, bad when slower than
 * the midpoint of good and bad, each measured once) and a fixed-repeat
 * bisect (the same with the mean of R runs per commit).
 *
 *   bisect-sim [-t] N C S SIGMA [SEED]
 *
 * prints one line: "method right% mean_runs" for each method (-t: only
 * perf-bisect's, as "right mean_runs", for the tests).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/bisect.h"

#define FIXED_REPEATS 10

/* splitmix64, then Box-Muller: a normal deviate. */
static uint64_t state;

static double
uniform(void)
{
	uint64_t z = (state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double
normal(void)
{
	return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

static double step, sigma;
static int culprit;

/* One run of commit c. */
static double
run(int c)
{
	return 10.0 * exp((c >= culprit ? step : 0) + sigma * normal());
}

static double
mean_run(int c, int r)
{
	double s = 0;

	for (int i = 0; i < r; i++)
		s += run(c);
	return s / r;
}

/* git bisect run with a script that runs the commit r times. */
static int
plain(int n, int r, long *runs)
{
	double g = mean_run(0, r), b = mean_run(n, r), cut = (g + b) / 2;
	int lo = 0, hi = n;

	*runs += 2L * r;
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;
		bool bad = (mean_run(mid, r) > cut) == (b > g);

		*runs += r;
		if (bad)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

static int
ours(int n, uint64_t seed, long *runs)
{
	struct bisect_conf c = {
		.n = n, .alpha = 0.05, .confirm_rounds = 12, .probe_min = 3, .probe_max = 24,
		.max_culprits = 4, .seed = seed,
	};
	struct bisect *b = bisect_new(&c);
	struct bisect_round r;
	struct bisect_culprit k;
	enum bisect_state st;
	int found = 0;

	while ((st = bisect_next(b, &r)) == BISECT_ROUND) {
		double v[3];

		for (int i = 0; i < r.nruns; i++)
			v[i] = run(r.commit[i]);
		bisect_record(b, v);
		if (bisect_runs(b) > 3000)
			break;
	}
	if (st == BISECT_FOUND && bisect_culprits(b, &k, 1) >= 1)
		found = k.commit;
	*runs += bisect_runs(b);
	bisect_free(b);
	return found;
}

int
main(int argc, char *argv[])
{
	bool terse = argc > 1 && strcmp(argv[1], "-t") == 0;
	int a = terse ? 2 : 1, trials, n, right[3] = { 0 };
	long runs[3] = { 0 };
	uint64_t seed;

	if (argc - a < 4) {
		fprintf(stderr, "usage: bisect-sim [-t] N C S SIGMA [SEED]\n");
		return 2;
	}
	trials = atoi(argv[a]);
	n = atoi(argv[a + 1]);
	step = log1p(atof(argv[a + 2]));
	sigma = atof(argv[a + 3]);
	seed = argc - a > 4 ? strtoull(argv[a + 4], NULL, 10) : 1;
	for (int t = 0; t < trials; t++) {
		state = (seed + (uint64_t)t) * 0x2545f4914f6cdd1dULL;
		culprit = 1 + (int)(uniform() * n);
		right[0] += ours(n, seed + (uint64_t)t, &runs[0]) == culprit;
		if (terse)
			continue;
		right[1] += plain(n, 1, &runs[1]) == culprit;
		right[2] += plain(n, FIXED_REPEATS, &runs[2]) == culprit;
	}
	if (terse) {
		printf("%d %.1f\n", right[0], (double)runs[0] / trials);
		return 0;
	}
	printf("%-28s %6.1f%% %8.1f\n", "perf-bisect", 100.0 * right[0] / trials,
	    (double)runs[0] / trials);
	printf("%-28s %6.1f%% %8.1f\n", "git bisect run (1 run)", 100.0 * right[1] / trials,
	    (double)runs[1] / trials);
	printf("%-28s %6.1f%% %8.1f\n", "fixed-repeat bisect (10)", 100.0 * right[2] / trials,
	    (double)runs[2] / trials);
	return 0;
}
