/*
 * bisect: the decisions of perf-bisect(1), apart from running anything.
 * The commits are indices 0 .. n along the first-parent history, 0 the
 * good commit and n the bad one. The caller asks bisect_next() which
 * commits the next round runs, in which order, runs them and hands the
 * values to bisect_record(); a commit that cannot be prepared is handed
 * to bisect_skip() instead. The same calls drive the program and the
 * simulation of bench/bisect-sim.c.
 *
 * The method. A segment (lo, hi] holds the change hi - lo. Each round of
 * its search runs lo, a probe (mid) and hi in a balanced seeded order
 * (the six orders of a block of six rounds shuffled with Python's
 * random.shuffle); d = ln(hi) - ln(lo) estimates the change delta and s =
 * 2 ln(mid) - ln(lo) - ln(hi) has mean +delta when mid behaves as hi and
 * -delta as lo, drift shared by the round cancelling. The noise sigma of
 * one run's log value is pooled from every round of the job (d has
 * variance 2 sigma^2, s 6 sigma^2 around its probe's mean). After
 * confirm_rounds rounds the change must be there (|mean d| beyond the
 * Student t quantile at 1 - alpha/2 of its standard error), else the
 * segment did not reproduce. A probe is then decided by a Wald sequential
 * test on s between mean -delta and +delta (log-likelihood ratio delta
 * sum(s) / (3 sigma^2)) at error alpha / log2(hi - lo) on each side,
 * after at least probe_min rounds of it and confirm_rounds / 2 of the
 * segment; at probe_max rounds it is decided by
 * the sign and flagged weak. When one commit is left, its share of the
 * whole change is measured by pairs of it and its parent (AB/BA blocks),
 * with a sequential test of share 1 against share 1/2; a share found
 * partial bisects the rest of the segment, (lo, parent] and (culprit, hi],
 * each of which must reproduce on its own.
 */
#ifndef PERF_CAMPAIGN_BISECT_H
#define PERF_CAMPAIGN_BISECT_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct bisect_conf {
	int n;			/* commits after good: bad is commit n (n >= 1) */
	double alpha;		/* the whole bisect's error (0 < alpha < 0.5) */
	double probe_alpha;	/* each probe's; 0: alpha / log2(hi - lo) */
	int confirm_rounds;	/* rounds before the change must show (>= 2) */
	int probe_min, probe_max;	/* rounds per probe (1 <= min <= max) */
	int max_culprits;	/* segments bisected at most (>= 1) */
	uint64_t seed;		/* of the order */
	const char *const *names;	/* commit names for the events, or NULL */
	/* Each event as a JSON object (which the callee owns), or NULL. */
	void (*event)(void *ctx, cJSON *ev);
	void *ctx;
};

/* A round: the commits to run, in this order. */
struct bisect_round {
	int commit[3];
	int nruns;
	const char *kind;	/* "probe" or "share" */
};

enum bisect_state {
	BISECT_ROUND,		/* run the round */
	BISECT_FOUND,		/* done, one culprit or more */
	BISECT_NOT_REPRODUCED,	/* the change was not there */
	BISECT_NO_CULPRIT,	/* every commit that could be one was skipped */
};

struct bisect;

struct bisect *bisect_new(const struct bisect_conf *conf);
void bisect_free(struct bisect *b);

/* What to do next: BISECT_ROUND fills r. */
enum bisect_state bisect_next(struct bisect *b, struct bisect_round *r);
/* The values (positive, finite) of the round bisect_next() gave, in its order. */
void bisect_record(struct bisect *b, const double *values);
/*
 * Commit c could not be prepared: it is never run again and the round
 * bisect_next() gave is dropped. Returns false when c is 0 or n.
 */
bool bisect_skip(struct bisect *b, int c);

/* The rounds and runs recorded so far. */
int bisect_rounds(const struct bisect *b);
long bisect_runs(const struct bisect *b);

/* A culprit: commit index; 0 when none. bisect_culprits() gives them by share, the largest first. */
struct bisect_culprit {
	int commit, parent;
	double share, low, high;	/* of the whole change, with its interval */
	bool partial;		/* share well below 1: the rest was bisected */
	bool weak;		/* a probe on its way was decided by the sign */
	int nskipped;		/* skipped commits that may be it instead */
};

int bisect_culprits(const struct bisect *b, struct bisect_culprit *out, int max);
/* Whether any probe was decided by the sign at probe_max. */
int bisect_weak_decisions(const struct bisect *b);
/* delta of the whole range (ln bad - ln good) and the pooled sigma. */
double bisect_delta(const struct bisect *b);
double bisect_sigma(const struct bisect *b);

/*
 * The report's parts: every probe decided, and the culprits, as JSON
 * arrays (names from the conf, else indices).
 */
cJSON *bisect_probes_json(const struct bisect *b);
cJSON *bisect_culprits_json(const struct bisect *b);

#endif
