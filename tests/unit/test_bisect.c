/*
 * Unit tests for bisect (perf-bisect's decisions): the balanced order of
 * a round, the pooled estimates, skips, a change that is not there, two
 * culprits, and a fast seeded subset of bench/bisect-sim (make bench holds
 * the full table): 64 commits, a 5% step, 2% noise.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "campaign/bisect.h"
#include "core/pyrandom.h"
#include "tap.h"

static struct pyrandom rng;

static double
gauss(void)
{
	double u = ((pyrandom_next(&rng) >> 5) * 67108864.0 + (pyrandom_next(&rng) >> 6)) /
	    9007199254740992.0;
	double v = ((pyrandom_next(&rng) >> 5) * 67108864.0 + (pyrandom_next(&rng) >> 6)) /
	    9007199254740992.0;

	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

/* The history: the log speed of each commit. */
static double speed[129];

static void
steps(int n, int at1, double s1, int at2, double s2)
{
	for (int c = 0; c <= n; c++)
		speed[c] = (at1 > 0 && c >= at1 ? log1p(s1) : 0) + (at2 > 0 && c >= at2 ? log1p(s2) : 0);
}

static struct bisect_conf
conf(int n, uint64_t seed)
{
	struct bisect_conf c = {
		.n = n, .alpha = 0.05, .confirm_rounds = 12, .probe_min = 3, .probe_max = 24,
		.max_culprits = 4, .seed = seed,
	};

	return c;
}

/* Runs a bisect to its end; skip: a commit whose setup fails, or 0. */
static enum bisect_state
simulate(struct bisect *b, double noise, int skip, long *runs)
{
	struct bisect_round r;
	enum bisect_state st;

	while ((st = bisect_next(b, &r)) == BISECT_ROUND && bisect_runs(b) < 5000) {
		double v[3];
		bool skipped = false;

		for (int i = 0; i < r.nruns; i++)
			if (r.commit[i] == skip && !skipped)
				skipped = bisect_skip(b, skip);
		if (skipped)
			continue;
		for (int i = 0; i < r.nruns; i++)
			v[i] = 10 * exp(speed[r.commit[i]] + noise * gauss());
		bisect_record(b, v);
	}
	*runs = bisect_runs(b);
	return st;
}

/* Every block of six probe rounds holds each order of good, mid and bad once. */
static void
test_order(void)
{
	struct bisect_conf c = conf(64, 7);
	struct bisect *b = bisect_new(&c);
	struct bisect_round r;
	bool balanced = true;
	int seen[3][3] = { { 0 } };

	steps(64, 0, 0, 0, 0);
	for (int k = 0; k < 12; k++) {
		double v[3] = { 10, 10, 10 };

		if (bisect_next(b, &r) != BISECT_ROUND || r.nruns != 3)
			balanced = false;
		for (int i = 0; i < 3; i++)
			seen[k / 6][i] += (r.commit[i] == 0) * (i + 1);
		bisect_record(b, v);
	}
	for (int blk = 0; blk < 2; blk++)
		/* good is first twice, second twice and third twice: 2 * (1 + 2 + 3). */
		balanced = balanced && seen[blk][0] + seen[blk][1] + seen[blk][2] == 12 &&
		    seen[blk][0] == 2 && seen[blk][1] == 4 && seen[blk][2] == 6;
	ok(balanced, "each block of six rounds runs good first, second and third twice");
	bisect_free(b);
}

int
main(void)
{
	struct bisect_culprit k[4];
	struct bisect_conf c;
	struct bisect *b;
	enum bisect_state st;
	long runs, total = 0;
	int right = 0, n;

	test_order();

	/* A 5% step at commit 37, 2% noise. */
	pyrandom_seed(&rng, 1);
	steps(64, 37, 0.05, 0, 0);
	c = conf(64, 1);
	b = bisect_new(&c);
	st = simulate(b, 0.02, 0, &runs);
	n = bisect_culprits(b, k, 4);
	ok(st == BISECT_FOUND && n >= 1 && k[0].commit == 37 && k[0].parent == 36,
	    "a 5%% step at commit 37 is found (%d culprits, first %d)", n, n ? k[0].commit : -1);
	ok(n >= 1 && k[0].low < 1 && k[0].high > 0.7, "its share's interval holds 1 (%.2f-%.2f)",
	    n ? k[0].low : 0, n ? k[0].high : 0);
	ok(fabs(bisect_delta(b) - log(1.05)) < 0.015 && fabs(bisect_sigma(b) - 0.02) < 0.006,
	    "delta and sigma pooled from the rounds (%.4f, %.4f)", bisect_delta(b),
	    bisect_sigma(b));
	bisect_free(b);

	/* The first probe (commit 32) cannot be set up. */
	pyrandom_seed(&rng, 2);
	b = bisect_new(&c);
	st = simulate(b, 0.02, 32, &runs);
	n = bisect_culprits(b, k, 4);
	ok(st == BISECT_FOUND && n >= 1 && k[0].commit == 37,
	    "a commit that cannot be set up is skipped, the culprit still found");
	bisect_free(b);

	/* A skipped commit just before the culprit is a candidate too. */
	pyrandom_seed(&rng, 3);
	b = bisect_new(&c);
	st = simulate(b, 0.02, 36, &runs);
	n = bisect_culprits(b, k, 4);
	ok(st == BISECT_FOUND && n >= 1 && k[0].commit == 37 && k[0].parent == 35 &&
	    k[0].nskipped == 1, "a skipped parent makes the culprit ambiguous with it");
	bisect_free(b);

	/* No change: not reproduced after the confirmation rounds. */
	pyrandom_seed(&rng, 4);
	steps(64, 0, 0, 0, 0);
	b = bisect_new(&c);
	st = simulate(b, 0.02, 0, &runs);
	ok(st == BISECT_NOT_REPRODUCED && bisect_rounds(b) == 12,
	    "good and bad at the same speed: not reproduced after 12 rounds (%ld runs)", runs);
	bisect_free(b);

	/* Two 5% steps: each is a culprit with about half the change. */
	pyrandom_seed(&rng, 5);
	steps(64, 37, 0.05, 50, 0.05);
	b = bisect_new(&c);
	st = simulate(b, 0.02, 0, &runs);
	n = bisect_culprits(b, k, 4);
	ok(st == BISECT_FOUND && n == 2 && ((k[0].commit == 37 && k[1].commit == 50) ||
	    (k[0].commit == 50 && k[1].commit == 37)), "two steps, two culprits (%d: %d, %d)",
	    n, n > 0 ? k[0].commit : -1, n > 1 ? k[1].commit : -1);
	ok(n >= 1 && (k[0].partial || (n > 1 && k[1].partial)) && k[0].share < 0.8,
	    "the first found is partial, its share about one half (%.2f)", n ? k[0].share : 0);
	bisect_free(b);

	/* A fast subset of bench/bisect-sim: 200 bisects at 5% and 2%. */
	steps(64, 0, 0, 0, 0);
	for (int t = 0; t < 200; t++) {
		int at;

		pyrandom_seed(&rng, 1000 + (uint64_t)t);
		at = 1 + (int)pyrandom_below(&rng, 64);
		steps(64, at, 0.05, 0, 0);
		c = conf(64, (uint64_t)t);
		b = bisect_new(&c);
		st = simulate(b, 0.02, 0, &runs);
		right += st == BISECT_FOUND && bisect_culprits(b, k, 1) >= 1 && k[0].commit == at;
		total += runs;
		bisect_free(b);
	}
	ok(right >= 190, "200 seeded bisects: the right commit in at least 95%% (%d)", right);
	ok(total < 200 * 120, "mean cost under 120 runs (%.1f)", total / 200.0);
	return done_testing();
}
