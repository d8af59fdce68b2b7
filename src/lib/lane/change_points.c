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

	k->w = w;
	k->m = m;
	/* Only the upper triangle is ever read. */
	for (r = 0; r < m; r++)
		for (c = r + 1; c < m; c++)
			k->D[r * m + c] = fabs(w[r] - w[c]);
	/*
	 * triu(D, 1)[:-1, 1:]: T[r][c] = D[r][c + 1] for c >= r, else 0. V
	 * sums its columns and H its rows (prefix sums), each in numpy's
	 * order; the sums run side by side rather than one after another, and
	 * H below its diagonal (zeros) is never read, so never written.
	 */
	for (c = 0; c < m1; c++)
		k->V[c] = 0;
	for (r = 0; r < m1; r++)
		for (c = r; c < m1; c++)
			k->V[c] += k->D[r * m + c + 1];
	for (c = 0; c < m1; c++) {
		k->H[c * m1 + c] = 0.0 + k->D[c * m + c + 1];
		for (r = 0; r < c; r++)
			k->H[r * m1 + c] = k->H[r * m1 + c - 1] + k->D[r * m + c + 1];
	}
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

#define HS(t, u) H[(s + (t)) * m1 + s + (u)]
	for (j = 0; j < n; j++) {
		sub = 0;
		for (r = 0; r < s; r++)
			sub += k->D[r * m + s + 1 + j];
		acc += k->V[s + j] - sub;
		cv[j] = acc;
		col[j] = 0;
	}
	/*
	 * R[i][j]: column j of H summed from the bottom row up to row i + 1,
	 * read for j > i only. Below its diagonal H is +0.0, and adding +0.0
	 * to a sum of distances (never -0.0) leaves it as it is, so the terms
	 * below the diagonal are left out: R[i + 1][i + 1] is +0.0, and col[j]
	 * takes no row below j.
	 */
	if (n >= 2) {
		R[(n - 2) * n + n - 1] = HS(n - 1, n - 1);
		for (i = n - 2; i-- > 0;) {
			R[i * n + i + 1] = HS(i + 1, i + 1);
			for (j = i + 2; j < n; j++)
				R[i * n + j] = R[(i + 1) * n + j] + HS(i + 1, j);
		}
	}
	/*
	 * np.argmax: the first maximum, or the first NaN, after which nothing
	 * changes (so the search ends there). The first entry, Q[0][0], is
	 * where it starts.
	 */
	for (i = 0; i < n; i++) {
		for (j = i; j < n; j++)
			col[j] += HS(i, j);
		/* Below the diagonal Q is 0; the first such entry of the row counts. */
		if (i >= 1 && 0.0 > best) {
			best = 0.0;
			bi = i;
		}
		const double *cb = k->cb + i * k->window, *cc = k->cc + i * k->window;
		double prev = i >= 1 ? cv[i - 1] : 0.0;

		for (j = i; j < n; j++) {
			a = k->ca[j] * (col[j] - prev);
			b = i >= 1 ? cb[j] * prev : 0;
			c = j > i ? cc[j] * R[i * n + j] : 0;
			q = (a - b) - c;
			if ((i == 0 && j == 0) || q > best || isnan(q)) {
				best = q;
				bi = i;
				if (isnan(q))
					goto found;
			}
		}
	}
found:
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

/* A comparison made by an earlier merge over the same series. */
struct memo {
	size_t lo, idx, hi;	/* hi == 0: an empty slot */
	unsigned gen;		/* the last merge that used it */
	struct change_point cp;
};

/* What changes_split() and changes_merge_split() keep between calls. */
struct changes_cache {
	struct calc k;		/* k.window == 0: not allocated */
	struct memo *memo;
	size_t cap, n;
	unsigned gen;
	size_t compared, reused;	/* by the merge under way */
};

void
changes_split(const double *x, size_t n, size_t window, double alpha,
    struct changes_split *sp)
{
	size_t start = 0, step = window / 2, end, nw, last, i, *local, nweak = 0;
	size_t *weak = emalloc((n + 1) * sizeof *weak);
	bool *seen = ecalloc(n + 1, sizeof *seen), cut = false;
	struct cand *cache = emalloc((window + 2) * sizeof *cache);
	double *scratch = emalloc(window * sizeof *scratch);
	struct changes_cache *c;

	if (sp->cache == NULL)
		sp->cache = ecalloc(1, sizeof *sp->cache);
	c = sp->cache;
	if (c->k.window != window) {
		if (c->k.window != 0)
			calc_free(&c->k);
		calc_alloc(&c->k, window);
	}
	local = emalloc((window + 1) * sizeof *local);
	if (!(sp->n > 0 && sp->n <= n) && c->n > 0) {
		/* Not this series any more: its comparisons are no use. */
		free(c->memo);
		c->memo = NULL;
		c->cap = c->n = 0;
	}
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
		nw = detect(&c->k, x + start, end - start, alpha, local, cache, scratch);
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
	free(local);
	free(seen);
	free(cache);
	free(scratch);
}

void
changes_split_free(struct changes_split *sp)
{
	if (sp->cache != NULL) {
		if (sp->cache->k.window != 0)
			calc_free(&sp->cache->k);
		free(sp->cache->memo);
		free(sp->cache);
	}
	free(sp->early);
	free(sp->weak);
	memset(sp, 0, sizeof *sp);
}

static size_t
memo_slot(const struct changes_cache *c, size_t lo, size_t idx, size_t hi)
{
	unsigned long long h = (unsigned long long)lo * 0x9e3779b97f4a7c15ULL ^
	    (unsigned long long)idx * 0xc2b2ae3d27d4eb4fULL ^
	    (unsigned long long)hi * 0x165667b19e3779f9ULL;
	size_t i = (size_t)(h ^ (h >> 29)) & (c->cap - 1);

	while (c->memo[i].hi != 0 && (c->memo[i].lo != lo || c->memo[i].idx != idx ||
	    c->memo[i].hi != hi))
		i = (i + 1) & (c->cap - 1);
	return i;
}

/* Keeps the entries the last merge used (all of them when all is true). */
static void
memo_rehash(struct changes_cache *c, size_t cap, bool all)
{
	struct memo *old = c->memo;
	size_t ocap = c->cap;

	c->memo = ecalloc(cap, sizeof *c->memo);
	c->cap = cap;
	c->n = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].hi != 0 && (all || old[i].gen == c->gen)) {
			c->memo[memo_slot(c, old[i].lo, old[i].idx, old[i].hi)] = old[i];
			c->n++;
		}
	free(old);
}

/* compare(), or what an earlier call found for the same three positions. */
static void
compare_memo(struct changes_cache *c, const double *x, size_t lo, size_t idx, size_t hi,
    double *scratch, struct change_point *cp)
{
	struct memo *m;

	if (c == NULL) {
		compare(x, lo, idx, hi, scratch, cp);
		return;
	}
	if (2 * (c->n + 1) > c->cap)
		memo_rehash(c, c->cap ? 2 * c->cap : 256, true);
	m = &c->memo[memo_slot(c, lo, idx, hi)];
	if (m->hi == 0) {
		compare(x, lo, idx, hi, scratch, &m->cp);
		m->lo = lo;
		m->idx = idx;
		m->hi = hi;
		c->n++;
		c->compared++;
	} else
		c->reused++;
	m->gen = c->gen;
	*cp = m->cp;
}

static size_t
merge(const double *x, size_t n, const size_t *weak, size_t nweak, double pvalue,
    double min_magnitude, struct change_point *out, struct changes_cache *c)
{
	double *scratch = emalloc((n + 1) * sizeof *scratch);
	size_t cnt = nweak, w, i, r;

	if (c != NULL) {
		c->gen++;
		c->compared = c->reused = 0;
	}
	for (i = 0; i < nweak; i++)
		compare_memo(c, x, i > 0 ? weak[i - 1] : 0, weak[i],
		    i + 1 < nweak ? weak[i + 1] : n, scratch, &out[i]);
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
			compare_memo(c, x, r > 0 ? out[r - 1].index : 0, out[r].index,
			    r + 1 < cnt ? out[r + 1].index : n, scratch, &out[r]);
	}
	/* What this merge did not use, the next one will not either. */
	if (c != NULL && c->cap > 0)
		memo_rehash(c, c->cap, false);
	free(scratch);
	return cnt;
}

size_t
changes_merge(const double *x, size_t n, const size_t *weak, size_t nweak,
    double pvalue, double min_magnitude, struct change_point *out)
{
	return merge(x, n, weak, nweak, pvalue, min_magnitude, out, NULL);
}

size_t
changes_merge_split(const double *x, size_t n, struct changes_split *sp,
    double pvalue, double min_magnitude, struct change_point *out)
{
	size_t k;

	if (sp->cache == NULL)
		sp->cache = ecalloc(1, sizeof *sp->cache);
	k = merge(x, n, sp->weak, sp->nweak, pvalue, min_magnitude, out, sp->cache);
	sp->compared = sp->cache->compared;
	sp->reused = sp->cache->reused;
	return k;
}

static int
memo_cmp(const void *a, const void *b)
{
	const struct changes_memo *p = a, *q = b;

	if (p->cp.index != q->cp.index)
		return p->cp.index < q->cp.index ? -1 : 1;
	if (p->lo != q->lo)
		return p->lo < q->lo ? -1 : 1;
	return (p->hi > q->hi) - (p->hi < q->hi);
}

size_t
changes_memo_get(const struct changes_split *sp, struct changes_memo **out)
{
	const struct changes_cache *c = sp->cache;
	size_t k = 0;

	*out = NULL;
	if (c == NULL || c->n == 0)
		return 0;
	*out = emalloc(c->n * sizeof **out);
	for (size_t i = 0; i < c->cap; i++)
		if (c->memo[i].hi != 0) {
			(*out)[k].lo = c->memo[i].lo;
			(*out)[k].hi = c->memo[i].hi;
			(*out)[k++].cp = c->memo[i].cp;
		}
	qsort(*out, k, sizeof **out, memo_cmp);
	return k;
}

void
changes_memo_add(struct changes_split *sp, const struct changes_memo *m, size_t n)
{
	struct changes_cache *c;
	struct memo *e;
	size_t cap = 16;

	if (sp->cache == NULL)
		sp->cache = ecalloc(1, sizeof *sp->cache);
	c = sp->cache;
	/* Room for them all at once (a short series needs no more). */
	while (cap < 2 * (c->n + n + 1))
		cap *= 2;
	if (cap > c->cap)
		memo_rehash(c, cap, true);
	for (size_t i = 0; i < n; i++) {
		e = &c->memo[memo_slot(c, m[i].lo, m[i].cp.index, m[i].hi)];
		if (e->hi != 0)
			continue;
		e->lo = m[i].lo;
		e->idx = m[i].cp.index;
		e->hi = m[i].hi;
		e->gen = c->gen;
		e->cp = m[i].cp;
		e->cp.n_before = e->idx - e->lo;
		e->cp.n_after = e->hi - e->idx;
		c->n++;
	}
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
