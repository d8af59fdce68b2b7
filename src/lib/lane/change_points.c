#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/num.h"
#include "lane/change_points.h"
#include "core/err.h"
#include "core/stats.h"

/* numpy reduces in buffers of this many elements. */
#define NP_BUFSIZE 8192

/* numpy's pairwise summation (pairwise_sum_DOUBLE), term for term. */
static double
pairwise(const double *a, size_t n)
{
	double r[8], res;
	size_t i, n2;

	if (n < 8) {
		res = 0;
		for (i = 0; i < n; i++)
			res += a[i];
		return res;
	}
	if (n <= 128) {
		for (i = 0; i < 8; i++)
			r[i] = a[i];
		for (i = 8; i < n - n % 8; i += 8)
			for (int j = 0; j < 8; j++)
				r[j] += a[i + j];
		res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
		for (; i < n; i++)
			res += a[i];
		return res;
	}
	n2 = n / 2;
	n2 -= n2 % 8;
	return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

/* np.sum of a contiguous float64 array. */
static double
np_sum(const double *a, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i += NP_BUFSIZE)
		s += pairwise(a + i, n - i < NP_BUFSIZE ? n - i : NP_BUFSIZE);
	return s;
}

/* np.mean, and np.std when n >= 2 (else 0.0, as Otava); scratch holds n. */
static void
np_mean_std(const double *a, size_t n, double *scratch, double *mean, double *std)
{
	double m = np_sum(a, n) / (double)n, d;

	*mean = m;
	*std = 0;
	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++) {
		d = a[i] - m;
		scratch[i] = d * d;
	}
	*std = sqrt(np_sum(scratch, n) / (double)n);
}

/*
 * Otava's TTestSignificanceTester.compare of x[lo..idx) and x[idx..hi):
 * SciPy's pooled two-sided t-test fed population deviations; p = 1 when
 * the two sides hold two points or fewer.
 */
static void
compare(const double *x, size_t lo, size_t idx, size_t hi, double *scratch,
    struct change_point *cp)
{
	size_t nl = idx - lo, nr = hi - idx;
	double df, svar, denom, t;

	cp->index = idx;
	cp->n_before = nl;
	cp->n_after = nr;
	np_mean_std(x + lo, nl, scratch, &cp->mean_before, &cp->std_before);
	np_mean_std(x + idx, nr, scratch, &cp->mean_after, &cp->std_after);
	if (nl + nr <= 2) {
		cp->pvalue = 1;
		return;
	}
	df = (double)nl + (double)nr - 2.0;
	svar = ((double)(nl - 1) * (cp->std_before * cp->std_before) +
	    (double)(nr - 1) * (cp->std_after * cp->std_after)) / df;
	denom = sqrt(svar * (1.0 / (double)nl + 1.0 / (double)nr));
	t = (cp->mean_before - cp->mean_after) / denom;
	cp->pvalue = stats_t_two_sided(t, df);
}

double
changes_forward(const struct change_point *cp)
{
	return cp->mean_before == 0 ? 0 : cp->mean_after / cp->mean_before - 1.0;
}

double
changes_magnitude(const struct change_point *cp)
{
	double f = fabs(changes_forward(cp));
	double b = fabs(cp->mean_after == 0 ? 0 : cp->mean_before / cp->mean_after - 1.0);

	return b > f ? b : f;	/* Python's max(f, b) */
}

bool
changes_fill(double *x, const bool *has, size_t n)
{
	size_t i, first = n;

	for (i = 0; i < n; i++)
		if (has[i]) {
			first = i;
			break;
		}
	if (first == n)
		return false;
	for (i = 0; i < first; i++)
		x[i] = x[first];
	for (i = first + 1; i < n; i++)
		if (!has[i])
			x[i] = x[i - 1];
	return true;
}

double
changes_first_pass(double p)
{
	return p < 0.05 ? p * 10 : p < 0.5 ? p * 2 : p;
}

/*
 * Otava's PairDistanceCalculator over one window w[0..m): the distances
 * D, their column sums V and row prefix sums H as numpy forms them, and
 * room for one interval's Q.
 */
struct calc {
	const double *w;
	size_t m, window;
	double *D, *V, *H, *R, *cv, *col;
	/* The coefficients of A, B and C, which depend on the positions only. */
	double *ca, *cb, *cc;
};

static void
calc_alloc(struct calc *k, size_t window)
{
	k->D = emalloc(window * window * sizeof *k->D);
	k->V = emalloc(window * sizeof *k->V);
	k->H = emalloc(window * window * sizeof *k->H);
	k->R = emalloc(window * window * sizeof *k->R);
	k->cv = emalloc(window * sizeof *k->cv);
	k->col = emalloc(window * sizeof *k->col);
	k->window = window;
	k->ca = emalloc(window * sizeof *k->ca);
	k->cb = emalloc(window * window * sizeof *k->cb);
	k->cc = emalloc(window * window * sizeof *k->cc);
	for (size_t i = 0; i < window; i++) {
		k->ca[i] = 2.0 / (double)(i + 2);
		for (size_t j = 0; j < window; j++) {
			k->cb[i * window + j] = i >= 1 && j >= i ?
			    (double)(2 * (j - i + 1)) / (double)((j + 2) * i) : 0;
			k->cc[i * window + j] = j > i ?
			    (double)(2 * (i + 1)) / (double)((j + 2) * (j - i)) : 0;
		}
	}
}

static void
calc_free(struct calc *k)
{
	free(k->D);
	free(k->V);
	free(k->H);
	free(k->R);
	free(k->cv);
	free(k->col);
	free(k->ca);
	free(k->cb);
	free(k->cc);
}

static void
calc_init(struct calc *k, const double *w, size_t m)
{
	size_t r, c, m1 = m - 1;
	double acc;

	k->w = w;
	k->m = m;
	for (r = 0; r < m; r++)
		for (c = 0; c < m; c++)
			k->D[r * m + c] = fabs(w[r] - w[c]);
	/* triu(D, 1)[:-1, 1:]: T[r][c] = D[r][c + 1] for c >= r, else 0. */
	for (c = 0; c < m1; c++) {
		acc = 0;
		for (r = 0; r <= c; r++)
			acc += k->D[r * m + c + 1];
		k->V[c] = acc;
	}
	for (r = 0; r < m1; r++) {
		acc = 0;
		for (c = 0; c < m1; c++) {
			if (c >= r)
				acc += k->D[r * m + c + 1];
			k->H[r * m1 + c] = acc;
		}
	}
}

/* np.argmax: the first maximum, or the first NaN. */
static bool
better(double q, double best, bool have)
{
	return !have || (!isnan(best) && (isnan(q) || q > best));
}

/*
 * The candidate of the interval [s, e) of the window (e - s >= 2): the
 * first maximum, in row-major order, of Otava's Q = A - B - C, computed
 * operation for operation as _get_Q_vals() computes it.
 */
static void
calc_candidate(struct calc *k, size_t s, size_t e, size_t *index, double *qhat)
{
	size_t m = k->m, m1 = m - 1, n = e - 1 - s, i, j, r, bi = 0;
	const double *H = k->H;
	double *R = k->R, *cv = k->cv, *col = k->col, acc = 0, sub, q, a, b, c, best = 0;
	bool have = false;

#define HS(t, u) H[(s + (t)) * m1 + s + (u)]
	for (j = 0; j < n; j++) {
		sub = 0;
		for (r = 0; r < s; r++)
			sub += k->D[r * m + s + 1 + j];
		acc += k->V[s + j] - sub;
		cv[j] = acc;
		col[j] = 0;
	}
	/* R[i][j]: column j of H summed from the bottom row up to row i + 1. */
	if (n >= 2) {
		for (j = 0; j < n; j++)
			R[(n - 2) * n + j] = HS(n - 1, j);
		for (i = n - 2; i-- > 0;)
			for (j = 0; j < n; j++)
				R[i * n + j] = R[(i + 1) * n + j] + HS(i + 1, j);
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++)
			col[j] += HS(i, j);
		/* Below the diagonal Q is 0; the first such entry of the row counts. */
		if (i >= 1 && better(0.0, best, have)) {
			best = 0.0;
			bi = i;
			have = true;
		}
		const double *cb = k->cb + i * k->window, *cc = k->cc + i * k->window;
		double prev = i >= 1 ? cv[i - 1] : 0.0;

		for (j = i; j < n; j++) {
			a = k->ca[j] * (col[j] - prev);
			b = i >= 1 ? cb[j] * prev : 0;
			c = j > i ? cc[j] * R[i * n + j] : 0;
			q = (a - b) - c;
			if (better(q, best, have)) {
				best = q;
				bi = i;
				have = true;
			}
		}
	}
#undef HS
	*index = bi + 1 + s;
	*qhat = best;
}

struct cand {
	size_t index;
	double qhat;
	bool valid;
};

/*
 * Otava's ChangePointDetector over the window w[0..m): candidates while
 * significant at alpha. Writes the change points (window positions,
 * sorted) to out and returns how many.
 */
static size_t
detect(struct calc *k, const double *w, size_t m, double alpha, size_t *out,
    struct cand *cache, double *scratch)
{
	size_t ncp = 0, t, bt, s, e;
	struct change_point cp;
	bool have;

	calc_init(k, w, m);
	cache[0].valid = false;
	for (;;) {
		have = false;
		bt = 0;
		for (t = 0; t <= ncp; t++) {
			s = t > 0 ? out[t - 1] : 0;
			e = t < ncp ? out[t] : m;
			if (e - s <= 1)
				continue;
			if (!cache[t].valid) {
				calc_candidate(k, s, e, &cache[t].index, &cache[t].qhat);
				cache[t].valid = true;
			}
			/* Python's max(): the first, unless a later one is greater. */
			if (!have || cache[t].qhat > cache[bt].qhat) {
				bt = t;
				have = true;
			}
		}
		if (!have)
			break;
		s = bt > 0 ? out[bt - 1] : 0;
		e = bt < ncp ? out[bt] : m;
		compare(w, s, cache[bt].index, e, scratch, &cp);
		if (!(cp.pvalue <= alpha))
			break;
		memmove(out + bt + 1, out + bt, (ncp - bt) * sizeof *out);
		memmove(cache + bt + 1, cache + bt, (ncp + 1 - bt) * sizeof *cache);
		out[bt] = cp.index;
		ncp++;
		cache[bt].valid = cache[bt + 1].valid = false;
	}
	return ncp;
}

void
changes_split(const double *x, size_t n, size_t window, double alpha,
    struct changes_split *sp)
{
	size_t start = 0, step = window / 2, end, nw, last, i, *local, nweak = 0;
	size_t *weak = emalloc((n + 1) * sizeof *weak);
	bool *seen = ecalloc(n + 1, sizeof *seen), cut = false;
	struct cand *cache = emalloc((window + 2) * sizeof *cache);
	double *scratch = emalloc(window * sizeof *scratch);
	struct calc k;

	calc_alloc(&k, window);
	local = emalloc((window + 1) * sizeof *local);
	if (sp->n > 0 && sp->n <= n) {
		start = sp->resume;
		for (i = 0; i < sp->nearly; i++) {
			weak[nweak++] = sp->early[i];
			seen[sp->early[i]] = true;
		}
	}
	while (start < n) {
		end = start + window < n ? start + window : n;
		if (!cut && start + window > n) {
			/* The first window the end cuts short: where an append resumes. */
			cut = true;
			sp->resume = start;
			sp->early = erealloc(sp->early, (nweak + 1) * sizeof *sp->early);
			memcpy(sp->early, weak, nweak * sizeof *weak);
			sp->nearly = nweak;
		}
		nw = detect(&k, x + start, end - start, alpha, local, cache, scratch);
		last = nw > 0 ? local[nw - 1] + start : 0;
		for (i = 0; i < nw; i++)
			if (!seen[local[i] + start]) {
				seen[local[i] + start] = true;
				weak[nweak++] = local[i] + start;
			}
		start = last > start + step ? last : start + step;
	}
	if (!cut) {
		sp->resume = 0;
		sp->nearly = 0;
	}
	qsort(weak, nweak, sizeof *weak, num_cmp_size);
	free(sp->weak);
	sp->weak = weak;
	sp->nweak = nweak;
	sp->n = n;
	calc_free(&k);
	free(local);
	free(seen);
	free(cache);
	free(scratch);
}

void
changes_split_free(struct changes_split *sp)
{
	free(sp->early);
	free(sp->weak);
	memset(sp, 0, sizeof *sp);
}

size_t
changes_merge(const double *x, size_t n, const size_t *weak, size_t nweak,
    double pvalue, double min_magnitude, struct change_point *out)
{
	double *scratch = emalloc((n + 1) * sizeof *scratch);
	size_t cnt = nweak, w, i, r;

	for (i = 0; i < nweak; i++)
		compare(x, i > 0 ? weak[i - 1] : 0, weak[i], i + 1 < nweak ? weak[i + 1] : n,
		    scratch, &out[i]);
	while (cnt > 0) {
		/* The weakest: the largest p-value (Python's max: first of equals). */
		for (w = 0, i = 1; i < cnt; i++)
			if (out[i].pvalue > out[w].pvalue)
				w = i;
		if (out[w].pvalue < pvalue) {
			for (w = 0, i = 1; i < cnt; i++)
				if (changes_magnitude(&out[i]) < changes_magnitude(&out[w]))
					w = i;
			if (changes_magnitude(&out[w]) > min_magnitude)
				break;
		}
		memmove(out + w, out + w + 1, (cnt - w - 1) * sizeof *out);
		cnt--;
		/*
		 * Otava recomputes the points now at w and w + 1 (the next one and
		 * the one after it), not w - 1, which keeps its old statistics.
		 */
		for (r = w; r < w + 2 && r < cnt; r++)
			compare(x, r > 0 ? out[r - 1].index : 0, out[r].index,
			    r + 1 < cnt ? out[r + 1].index : n, scratch, &out[r]);
	}
	free(scratch);
	return cnt;
}

size_t
changes_find(const double *x, size_t n, size_t window, double pvalue,
    double min_magnitude, struct change_point **out)
{
	struct changes_split sp = { 0 };
	size_t k;

	*out = NULL;
	if (n == 0)
		return 0;
	changes_split(x, n, window, changes_first_pass(pvalue), &sp);
	*out = emalloc((sp.nweak + 1) * sizeof **out);
	k = changes_merge(x, n, sp.weak, sp.nweak, pvalue, min_magnitude, *out);
	changes_split_free(&sp);
	if (k == 0) {
		free(*out);
		*out = NULL;
	}
	return k;
}
