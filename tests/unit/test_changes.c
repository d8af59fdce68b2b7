/*
 * Unit tests for changes: Otava's own results (tests/unit/gen-changes.py
 * ran Apache Otava on these series) reproduced exactly: the same weak and
 * final change points, bit-identical means and deviations, p-values within
 * 1e-12 of SciPy's.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lane/changes.h"
#include "core/stats.h"
#include "tap.h"

struct cv_point {
	size_t index;
	double mean_1, mean_2, std_1, std_2, pvalue;
};

struct cv_case {
	const char *name;
	size_t n, window;
	double pvalue, min_magnitude;
	const double *x;
	const unsigned char *has;
	size_t nweak;
	const size_t *weak;
	size_t ncp;
	const struct cv_point *cp;
};

#include "changes_vectors.h"

static bool
close_p(double got, double want)
{
	if (isnan(want))
		return isnan(got);
	if (want == 0)
		return got == 0;
	return fabs(got / want - 1) <= 1e-12;
}

/* One case: split, merge, and the incremental split equal to the full one. */
static void
check_case(const struct cv_case *c)
{
	double *x = malloc((c->n + 1) * sizeof *x);
	bool *has = malloc((c->n + 1) * sizeof *has), same;
	struct changes_split sp = { 0 }, inc = { 0 };
	struct change_point *cp = NULL;
	size_t k, i, bad = 0;

	for (i = 0; i < c->n; i++) {
		x[i] = c->x[i];
		has[i] = c->has[i];
	}
	changes_fill(x, has, c->n);
	changes_split(x, c->n, c->window, changes_first_pass(c->pvalue), &sp);
	same = sp.nweak == c->nweak;
	for (i = 0; same && i < sp.nweak; i++)
		same = sp.weak[i] == c->weak[i];
	ok(same, "%s: the %zu weak change points of the split step", c->name, c->nweak);

	k = changes_find(x, c->n, c->window, c->pvalue, c->min_magnitude, &cp);
	ok(k == c->ncp, "%s: %zu change points (got %zu)", c->name, c->ncp, k);
	for (i = 0; i < k && i < c->ncp; i++) {
		const struct cv_point *w = &c->cp[i];
		bad += cp[i].index != w->index || cp[i].mean_before != w->mean_1 ||
		    cp[i].mean_after != w->mean_2 || cp[i].std_before != w->std_1 ||
		    cp[i].std_after != w->std_2 || !close_p(cp[i].pvalue, w->pvalue);
		if (bad == 1 && (cp[i].index != w->index || !close_p(cp[i].pvalue, w->pvalue)))
			printf("# at %zu: index %zu want %zu, p %.17g want %.17g\n", i,
			    cp[i].index, w->index, cp[i].pvalue, w->pvalue);
	}
	ok(bad == 0, "%s: indexes, means and deviations exact, p-values to 1e-12", c->name);

	/* Grown a point at a time, resuming each time: the same weak points. */
	same = true;
	for (size_t n = 1; n <= c->n && n <= 400; n++) {
		changes_split(x, n, c->window, changes_first_pass(c->pvalue), &inc);
		if (n == c->n || n == 400) {
			struct changes_split full = { 0 };
			changes_split(x, n, c->window, changes_first_pass(c->pvalue), &full);
			same = inc.nweak == full.nweak && inc.resume == full.resume &&
			    memcmp(inc.weak, full.weak, inc.nweak * sizeof *inc.weak) == 0;
			changes_split_free(&full);
		}
	}
	ok(same, "%s: resumed split steps equal the full split", c->name);
	changes_split_free(&inc);
	changes_split_free(&sp);
	free(cp);
	free(x);
	free(has);
}

/* A deterministic generator for the append test (splitmix64). */
static uint64_t rng_state = 16;

static double
uniform(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double)(z >> 11) / 9007199254740992.0;
}

static double
gauss(void)
{
	return sqrt(-2 * log(1 - uniform())) * cos(2 * M_PI * uniform());
}

/*
 * What an incremental run keeps between processes: the split's resume
 * state and the comparisons of its last merge.
 */
struct kept {
	size_t n, resume, *early, nearly;
	struct changes_memo *memo;
	size_t nmemo;
};

/*
 * A split and merge in a fresh object given only what k kept (as
 * perf-changes --incremental, a process per append); k then keeps what
 * this one leaves. Returns the change points in out.
 */
static size_t
from_kept(const double *x, size_t n, size_t window, struct kept *k,
    struct change_point *out, size_t *compared, size_t *reused)
{
	struct changes_split s = { .n = k->n, .resume = k->resume, .nearly = k->nearly };
	size_t r;

	s.early = malloc((k->nearly + 1) * sizeof *s.early);
	if (k->nearly > 0)
		memcpy(s.early, k->early, k->nearly * sizeof *s.early);
	changes_split(x, n, window, 0.01, &s);
	changes_memo_add(&s, k->memo, k->nmemo);
	r = changes_merge_split(x, n, &s, 0.001, 0, out);
	*compared = s.compared;
	*reused = s.reused;
	free(k->memo);
	free(k->early);
	k->nmemo = changes_memo_get(&s, &k->memo);
	k->n = s.n;
	k->resume = s.resume;
	k->nearly = s.nearly;
	k->early = malloc((s.nearly + 1) * sizeof *k->early);
	if (s.nearly > 0)
		memcpy(k->early, s.early, s.nearly * sizeof *k->early);
	changes_split_free(&s);
	return r;
}

/*
 * 1,000 random appends (1 to 5 points each, steps and drifts, several
 * windows): the resumed split and its merge (reusing the comparisons of
 * the merges before) equal a full run every time, and so does a fresh
 * split given only what the last one kept and its merge's comparisons
 * (as a process per append), which then compares exactly what the
 * object kept in memory compares.
 */
static void
check_appends(void)
{
	size_t cap = 4000, n = 0, appends = 0, bad = 0, bad_kept = 0, made = 0,
	    reused = 0, bad_count = 0;
	double *x = malloc(cap * sizeof *x), level = 100;
	static const size_t windows[] = { 50, 7, 30, 2 };

	for (size_t w = 0; w < 4; w++) {
		struct changes_split inc = { 0 };
		struct kept kept = { 0 };
		n = 0;
		for (size_t a = 0; a < 250; a++, appends++) {
			size_t k = 1 + (size_t)(uniform() * 5);
			for (size_t i = 0; i < k && n < cap; i++) {
				if (uniform() < 0.03)
					level *= 1 + 0.1 * gauss();
				x[n] = level + gauss() + 0.01 * (double)n;
				n++;
			}
			struct changes_split full = { 0 };
			struct change_point *a1 = malloc((n + 1) * sizeof *a1),
			    *a2 = malloc((n + 1) * sizeof *a2), *a3 = malloc((n + 1) * sizeof *a3);
			size_t c3, r3;
			changes_split(x, n, windows[w], 0.01, &inc);
			changes_split(x, n, windows[w], 0.01, &full);
			size_t k1 = changes_merge_split(x, n, &inc, 0.001, 0, a1);
			size_t k2 = changes_merge(x, n, full.weak, full.nweak, 0.001, 0, a2);
			size_t k3 = from_kept(x, n, windows[w], &kept, a3, &c3, &r3);
			bad += inc.nweak != full.nweak || inc.resume != full.resume ||
			    inc.nearly != full.nearly || k1 != k2 ||
			    memcmp(inc.weak, full.weak, inc.nweak * sizeof *inc.weak) != 0 ||
			    memcmp(a1, a2, k1 * sizeof *a1) != 0;
			bad_kept += k3 != k2 || memcmp(a3, a2, k2 * sizeof *a3) != 0;
			bad_count += c3 != inc.compared || r3 != inc.reused;
			made += c3;
			reused += r3;
			changes_split_free(&full);
			free(a1);
			free(a2);
			free(a3);
		}
		changes_split_free(&inc);
		free(kept.early);
		free(kept.memo);
	}
	ok(appends == 1000 && bad == 0, "%zu random appends: the resumed analysis equals "
	    "a full one every time (%zu differ)", appends, bad);
	ok(bad_kept == 0 && bad_count == 0 && reused > 4 * made, "the same from what a "
	    "previous process kept, comparisons included: %zu differ, %zu compare otherwise "
	    "than in memory; %zu comparisons made, %zu reused", bad_kept, bad_count, made,
	    reused);
	free(x);
}

/*
 * The split step's candidate in plain loops, the reference the lanes of
 * changes_candidate() are held to: Otava's _get_Q_vals() over the window
 * w[0..m) and its interval [s, e), every sum in numpy's order, no lanes,
 * no shortcuts.
 */
static void
scalar_candidate(const double *w, size_t m, size_t s, size_t e, size_t *index, double *qhat)
{
	size_t m1 = m - 1, n = e - 1 - s, r, c, i, j, bi = 0;
	double *T = calloc(m1 * m1, sizeof *T), *V = calloc(m1, sizeof *V);
	double *A = calloc(m1, sizeof *A), *H = calloc(m1 * m1, sizeof *H);
	double *cv = calloc(n, sizeof *cv), *R = calloc(n * n, sizeof *R);
	double *col = calloc(n, sizeof *col), best = -INFINITY, acc = 0, q;

	/* T = triu(D, 1)[:-1, 1:]; H its cumsum along rows. */
	for (r = 0; r < m1; r++)
		for (c = 0; c < m1; c++) {
			T[r * m1 + c] = c >= r ? fabs(w[r] - w[c + 1]) : 0.0;
			H[r * m1 + c] = (c > 0 ? H[r * m1 + c - 1] : 0.0) + T[r * m1 + c];
		}
	/* Each column of T: V over all rows, A over the rows above s. */
	for (c = 0; c < m1; c++)
		for (r = 0; r < m1; r++) {
			V[c] += T[r * m1 + c];
			if (r < s)
				A[c] += T[r * m1 + c];
		}
	for (j = 0; j < n; j++) {
		acc += V[s + j] - A[s + j];
		cv[j] = acc;
	}
	/* R[i][j]: column j of the interval's H summed from the bottom to row i + 1. */
	for (j = 0; j < n; j++)
		for (i = n - 1; i-- > 0;)
			R[i * n + j] = R[(i + 1) * n + j] + H[(s + i + 1) * m1 + s + j];
	for (i = 0; i < n; i++) {
		double prev = i >= 1 ? cv[i - 1] : 0.0, di = (double)i;

		for (j = 0; j < n; j++) {
			double dj = (double)j, a, b, cc;

			col[j] += H[(s + i) * m1 + s + j];
			if (j < i) {
				q = 0.0;
			} else {
				a = 2.0 / (dj + 2) * (col[j] - prev);
				b = i >= 1 ? 2.0 * (dj - di + 1) / ((dj + 2) * di) * prev : 0.0;
				cc = j > i ? 2.0 * (di + 1) / ((dj + 2) * (dj - di)) * R[i * n + j] : 0.0;
				q = a - b - cc;
			}
			if (isnan(q) || q > best) {
				best = q;
				bi = i;
			}
			if (isnan(q))
				goto done;
		}
	}
done:
	*index = bi + 1 + s;
	*qhat = best;
	free(T);
	free(V);
	free(A);
	free(H);
	free(cv);
	free(R);
	free(col);
}

/* A 64-bit xorshift: the same random series on every machine. */
static uint64_t
next_random(uint64_t *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return *st;
}

/*
 * changes_candidate() against scalar_candidate() on random windows of 2
 * to 48 points (in windows of their size and larger), every interval:
 * continuous values, values of a few levels (ties), steps, and constants.
 */
static void
check_lanes(void)
{
	uint64_t st = 0x9e3779b97f4a7c15u;
	double w[48];
	size_t cases = 0, bad = 0, m, s, e, k, i, want_i, got_i;
	double want_q, got_q;

	for (k = 0; k < 240; k++) {
		m = 2 + next_random(&st) % 47;
		for (i = 0; i < m; i++) {
			uint64_t u = next_random(&st);

			switch (k % 4) {
			case 0:	/* continuous */
				w[i] = 10 + (double)(u >> 11) * 0x1p-53;
				break;
			case 1:	/* a few levels: ties everywhere */
				w[i] = (double)(u % 4) * 0.25;
				break;
			case 2:	/* a step, with ties and noise */
				w[i] = (i < m / 2 ? 10 : 12) + (double)(u % 3) * 0.1;
				break;
			default:	/* constant */
				w[i] = 7.5;
			}
		}
		for (s = 0; s + 2 <= m; s++)
			for (e = s + 2; e <= m; e++) {
				size_t window = m + (k % 3 == 0 ? k % 7 : 0);

				scalar_candidate(w, m, s, e, &want_i, &want_q);
				changes_candidate(w, m, window, s, e, &got_i, &got_q);
				cases++;
				if (got_i != want_i || memcmp(&got_q, &want_q, sizeof got_q) != 0) {
					if (bad++ < 5)
						printf("# m %zu [%zu, %zu): lanes %zu %.17g, scalar %zu %.17g\n",
						    m, s, e, got_i, got_q, want_i, want_q);
				}
			}
	}
	ok(bad == 0 && cases > 50000, "the split step's lanes equal plain loops, bit for bit, "
	    "on %zu random intervals (%zu differ)", cases, bad);
}

int
main(void)
{
	size_t i, worst_i = 0;
	double worst = 0, r;
	struct change_point cp;

	for (i = 0; i < sizeof cv_cases / sizeof *cv_cases; i++)
		check_case(&cv_cases[i]);
	check_appends();

	for (i = 0; i < sizeof cv_t / sizeof *cv_t; i++) {
		r = fabs(stats_t_two_sided(cv_t[i].t, cv_t[i].df) / cv_t[i].p - 1);
		if (r > worst) {
			worst = r;
			worst_i = i;
		}
	}
	ok(worst <= 1e-12, "two-sided t p-values within 1e-12 of SciPy on %zu values "
	    "(worst %.3g at t=%g, df=%g)", sizeof cv_t / sizeof *cv_t, worst,
	    cv_t[worst_i].t, cv_t[worst_i].df);
	ok(stats_t_two_sided(0, 5) == 1 && stats_t_two_sided(INFINITY, 5) == 0 &&
	    stats_t_two_sided(-INFINITY, 5) == 0 && isnan(stats_t_two_sided(NAN, 5)),
	    "t = 0 gives 1, an infinite t 0, NaN stays NaN");

	{
		double x[] = { 0, 0, 0, 0, 0 };
		bool has[] = { false, false, true, false, false };
		x[2] = 7;
		ok(changes_fill(x, has, 5) && x[0] == 7 && x[1] == 7 && x[3] == 7 && x[4] == 7,
		    "missing values: back-filled before the first, forward-filled after");
		memset(has, 0, sizeof has);
		ok(!changes_fill(x, has, 5), "a series with no value is not analysed");
	}
	ok(changes_first_pass(0.001) == 0.001 * 10 && changes_first_pass(0.1) == 0.2 &&
	    changes_first_pass(0.7) == 0.7, "first-pass p-value as Otava: 10x, 2x, 1x");
	cp = (struct change_point){ .mean_before = 0, .mean_after = 2 };
	ok(changes_forward(&cp) == 0 && changes_magnitude(&cp) == 1,
	    "a zero mean before: forward change 0, magnitude from the other side");
	check_lanes();
	return done_testing();
}
