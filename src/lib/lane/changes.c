#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/num.h"
#include "core/stats.h"
#include "lane/changes.h"

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
 * Otava's TTestSignificanceTester.compare of x[lo..idx) and x[idx..hi)
 * up to the t statistic: SciPy's pooled t-test fed population deviations.
 * Fills cp but its p-value and returns true, or, when the two sides hold
 * two points or fewer, sets the p-value to 1 and returns false.
 */
static bool
compare_t(const double *x, size_t lo, size_t idx, size_t hi, double *scratch,
    struct change_point *cp, double *t, double *df)
{
	size_t nl = idx - lo, nr = hi - idx;
	double svar, denom;

	cp->index = idx;
	cp->n_before = nl;
	cp->n_after = nr;
	np_mean_std(x + lo, nl, scratch, &cp->mean_before, &cp->std_before);
	np_mean_std(x + idx, nr, scratch, &cp->mean_after, &cp->std_after);
	if (nl + nr <= 2) {
		cp->pvalue = 1;
		return false;
	}
	*df = (double)nl + (double)nr - 2.0;
	svar = ((double)(nl - 1) * (cp->std_before * cp->std_before) +
	    (double)(nr - 1) * (cp->std_after * cp->std_after)) / *df;
	denom = sqrt(svar * (1.0 / (double)nl + 1.0 / (double)nr));
	*t = (cp->mean_before - cp->mean_after) / denom;
	return true;
}

/* Otava's compare: compare_t() and the two-sided p-value. */
static void
compare(const double *x, size_t lo, size_t idx, size_t hi, double *scratch,
    struct change_point *cp)
{
	double t, df;

	if (compare_t(x, lo, idx, hi, scratch, cp, &t, &df))
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
 * Lanes: two doubles side by side, which GCC and Clang compile to SSE2
 * on x86-64 and to scalar code elsewhere. They serve loops whose
 * iterations are independent sums and products: each lane does what one
 * iteration of the scalar loop does, the same operations in the same
 * order (C11 leaves contraction off, so no fused multiply-add either),
 * so every value is the same bits as the scalar loop's.
 */
typedef double v2d __attribute__((vector_size(16)));
typedef int64_t v2i __attribute__((vector_size(16)));

static v2d
load2(const double *p)
{
	v2d v;

	memcpy(&v, p, sizeof v);
	return v;
}

static void
store2(double *p, v2d v)
{
	memcpy(p, &v, sizeof v);
}

static v2d
splat2(double x)
{
	return (v2d){ x, x };
}

/* fabs() in each lane: it clears the sign bit and nothing else. */
static v2d
fabs2(v2d v)
{
	return (v2d)((v2i)v & (v2i){ INT64_MAX, INT64_MAX });
}

/*
 * Otava's PairDistanceCalculator over one window w[0..m): with D[r][c] =
 * |w[r] - w[c]| and T = triu(D, 1)[:-1, 1:] (T[r][c] = D[r][c + 1] for c
 * >= r, else 0), the column sums of T and its row prefix sums H as numpy
 * forms them, and room for one interval's Q. Every table has rows of
 * window doubles.
 */
struct calc {
	const double *w;
	size_t m, window;
	/*
	 * P[r][c]: column c of T summed over rows 0..r - 1, row after row as
	 * np.sum(axis=0) adds them, so that V[c] (the whole column) is
	 * P[c + 1][c]; row 0 (no rows) is +0.0 throughout.
	 */
	double *P;
	double *H, *R, *cv, *col, *q;
	/* The coefficients of A, B and C (coefs_of()), shared. */
	const double *ca, *cb, *cc;
	/*
	 * For each df (an index), the largest |t| seen whose p-value was
	 * above alpha (-1: none yet) and the smallest whose p-value was below
	 * it (NaN: none yet), beyond stats_t_two_sided()'s error both.
	 */
	double alpha, *t_above, *t_below;
};

/*
 * The coefficients of A, B and C for one window size: they depend on the
 * positions only, so they are made once, the first time a window of that
 * size is analysed, and shared by every series and thread (never freed).
 */
struct coefs {
	size_t window;
	double *ca, *cb, *cc;
	struct coefs *next;
};

static struct coefs *coef_list;
static pthread_mutex_t coef_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct coefs *
coefs_of(size_t window)
{
	struct coefs *t;

	pthread_mutex_lock(&coef_lock);
	for (t = coef_list; t != NULL && t->window != window; t = t->next)
		;
	if (t != NULL) {
		pthread_mutex_unlock(&coef_lock);
		return t;
	}
	t = ecalloc(1, sizeof *t);
	t->window = window;
	t->ca = emalloc(window * sizeof *t->ca);
	t->cb = emalloc(window * window * sizeof *t->cb);
	t->cc = emalloc(window * window * sizeof *t->cc);
	/*
	 * Their upper triangles (j >= i), the part that is read:
	 * cb[i][j] = 2(j - i + 1) / ((j + 2)i) but 0 in row 0, and cc[i][j] =
	 * 2(i + 1) / ((j + 2)(j - i)) but 0 on the diagonal. Two entries at a
	 * time: the integers are exact in doubles, and so the quotient of a
	 * lane is the quotient of the integers, correctly rounded.
	 */
	for (size_t i = 0; i < window; i++) {
		double *cb = t->cb + i * window, *cc = t->cc + i * window, di = (double)i;
		v2d j2 = { di + 1, di + 2 };
		size_t j;

		t->ca[i] = 2.0 / (di + 2);
		cb[i] = i >= 1 ? 2.0 / ((di + 2) * di) : 0;
		cc[i] = 0;
		for (j = i + 1; j + 2 <= window; j += 2, j2 += 2.0) {
			store2(cb + j, i >= 1 ? 2.0 * (j2 - di + 1) / ((j2 + 2) * di) : splat2(0.0));
			store2(cc + j, 2.0 * (di + 1) / ((j2 + 2) * (j2 - di)));
		}
		if (j < window) {
			cb[j] = i >= 1 ? 2.0 * ((double)j - di + 1) / (((double)j + 2) * di) : 0;
			cc[j] = 2.0 * (di + 1) / (((double)j + 2) * ((double)j - di));
		}
	}
	t->next = coef_list;
	coef_list = t;
	pthread_mutex_unlock(&coef_lock);
	return t;
}

static void
calc_alloc(struct calc *k, size_t window)
{
	const struct coefs *t = coefs_of(window);

	k->P = emalloc(window * window * sizeof *k->P);
	for (size_t c = 0; c < window; c++)
		k->P[c] = 0.0;
	k->H = emalloc(window * window * sizeof *k->H);
	k->R = emalloc(window * window * sizeof *k->R);
	k->cv = emalloc(window * sizeof *k->cv);
	k->col = emalloc(window * sizeof *k->col);
	k->q = emalloc(window * sizeof *k->q);
	k->window = window;
	k->ca = t->ca;
	k->cb = t->cb;
	k->cc = t->cc;
	k->t_above = emalloc(window * sizeof *k->t_above);
	k->t_below = emalloc(window * sizeof *k->t_below);
	k->alpha = NAN;
}

static void
calc_free(struct calc *k)
{
	free(k->P);
	free(k->H);
	free(k->R);
	free(k->cv);
	free(k->col);
	free(k->q);
	free(k->t_above);
	free(k->t_below);
}

/*
 * Column c of rows r..r + 3 of T's sums (see calc_rows4()), the lanes
 * of the rows that start left of c masked by live.
 */
static inline void
calc_rows4_column(struct calc *k, size_t r, size_t c, v2d *h01, v2d *h23,
    v2i live01, v2i live23)
{
	const double *w = k->w;
	size_t W = k->window;
	double *h = k->H + r * W + c, *p = k->P + r * W + c, sum;
	v2d x = splat2(w[c + 1]);
	v2d d01 = (v2d)((v2i)fabs2((v2d){ w[r], w[r + 1] } - x) & live01);
	v2d d23 = (v2d)((v2i)fabs2((v2d){ w[r + 2], w[r + 3] } - x) & live23);

	*h01 += d01;
	*h23 += d23;
	h[0] = (*h01)[0];
	h[W] = (*h01)[1];
	h[2 * W] = (*h23)[0];
	h[3 * W] = (*h23)[1];
	sum = p[0];
	p[W] = sum += d01[0];
	p[2 * W] = sum += d01[1];
	p[3 * W] = sum += d23[0];
	p[4 * W] = sum + d23[1];
}

/*
 * Rows r..r + 3 of T's sums (r + 4 <= m - 1): H's rows, four rows in four
 * lanes, and with them rows r + 1..r + 4 of P, each column's sum adding
 * the four rows' distances one after another.
 *
 * Lane l (row r + l) adds nothing before column r + l, its diagonal: its
 * sum stays +0.0 (what H holds below the diagonal) and starts there as
 * 0.0 + T[r + l][r + l], as np.cumsum does. The columns of P left of
 * r + l add +0.0 there too, to entries that are never read.
 */
static void
calc_rows4(struct calc *k, size_t r)
{
	static const v2i live01[3] = { { -1, 0 }, { -1, -1 }, { -1, -1 } };
	static const v2i live23[3] = { { 0, 0 }, { 0, 0 }, { -1, 0 } };
	v2d h01 = splat2(0.0), h23 = splat2(0.0);
	size_t c;

	for (c = r; c < r + 3; c++)
		calc_rows4_column(k, r, c, &h01, &h23, live01[c - r], live23[c - r]);
	for (; c < k->m - 1; c++)
		calc_rows4_column(k, r, c, &h01, &h23, (v2i){ -1, -1 }, (v2i){ -1, -1 });
}

static void
calc_init(struct calc *k, const double *w, size_t m)
{
	size_t r, c, m1 = m - 1, W = k->window;
	double *P = k->P, *H = k->H, d;

	k->w = w;
	k->m = m;
	/*
	 * A row's prefix sums are one after another, and so are a column's
	 * sums, so the rows of H go side by side in lanes, four at a time,
	 * and the columns of P take their four terms one after another.
	 */
	for (r = 0; r + 4 <= m1; r += 4)
		calc_rows4(k, r);
	for (; r < m1; r++)
		for (c = r; c < m1; c++) {
			d = fabs(w[r] - w[c + 1]);
			H[r * W + c] = (c > r ? H[r * W + c - 1] : 0.0) + d;
			P[(r + 1) * W + c] = P[r * W + c] + d;
		}
}

/*
 * Q[i][j] (j >= i) of an interval as _get_Q_vals() computes it, for a
 * lane or a scalar: ca[j] * (col[j] - prev) is A, cb[i][j] * prev is B
 * and cc[i][j] * R[i][j] is C.
 */
#define Q_OF(ca, col, prev, cb, cc, r) \
	((((ca) * ((col) - (prev))) - ((cb) * (prev))) - ((cc) * (r)))

/*
 * Rows i - 2 and i - 1 of R (rows of W doubles from r) from row i below
 * them, with h the rows i - 1 and i of H (see calc_candidate()). The
 * columns, each its own sum, go two by two.
 */
static void
calc_r_rows2(double *r, const double *h, size_t i, size_t n, size_t W)
{
	double *r1 = r + W;
	const double *below = r + 2 * W, *h1 = h + W;
	size_t j;

	r[i - 2] = 0.0;
	r1[i - 1] = 0.0;
	r[i - 1] = r1[i - 1] + h[i - 1];
	for (j = i; j + 2 <= n; j += 2) {
		v2d v = load2(below + j) + load2(h1 + j);

		store2(r1 + j, v);
		store2(r + j, v + load2(h + j));
	}
	for (; j < n; j++) {
		r1[j] = below[j] + h1[j];
		r[j] = r1[j] + h[j];
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
	size_t W = k->window, n = e - 1 - s, i, j, bi = 0;
	const double *H = k->H + s * W + s, *P = k->P, *ca = k->ca;
	double *R = k->R, *cv = k->cv, *col = k->col, *q = k->q, acc = 0, best;
	v2i keep;	/* lanes all of whose entries are <= best (so not NaN) */
	bool more;	/* the entry after the last pair is > best or NaN */
	bool nan;
	double top;

	/*
	 * cv: the cumulative sums of the columns of T's block below the
	 * interval's first row, each column V[s + j] less its part above
	 * (P[s][s + j], +0.0 when s is 0), which is what Otava subtracts.
	 */
	for (j = 0; j < n; j++) {
		acc += P[(s + j + 1) * W + s + j] - P[s * W + s + j];
		cv[j] = acc;
		col[j] = 0;
	}
	/*
	 * R[i][j]: column j of H (from row s) summed from the bottom row up
	 * to row i + 1, read for j > i; R[i][i] is +0.0. Below its diagonal
	 * H is +0.0, and adding +0.0 to a sum of distances (never -0.0) leaves
	 * it as it is, so the terms below the diagonal are left out: each
	 * column's sum starts as R[j][j] + H[j][j], which is 0.0 + H[j][j].
	 */
	i = n - 1;
	R[i * W + i] = 0.0;
	if (i % 2 == 1) {
		/* Row n - 2 on its own, so that the pairs of rows end at row 0. */
		R[(i - 1) * W + i - 1] = 0.0;
		R[(i - 1) * W + i] = R[i * W + i] + H[i * W + i];
		i--;
	}
	for (; i >= 2; i -= 2)
		calc_r_rows2(R + (i - 2) * W, H + (i - 1) * W, i, n, W);
	/*
	 * Q row by row, two entries at a time; col[j] sums column j of H from
	 * the top. Otava's B and C are 0 where _get_Q_vals() leaves them out:
	 * row 0 (cb[0][j] and prev are +0.0) and the diagonal (cc[i][i] and
	 * R[i][i] are +0.0), and a - +0.0 - +0.0 is the a - 0 - 0 Otava
	 * computes there, so every entry is the same expression.
	 *
	 * np.argmax: the first maximum, or the first NaN, after which nothing
	 * changes (so the search ends there). Starting from -inf is starting
	 * from the first entry, Q[0][0]: it is either greater than -inf or
	 * -inf itself. Only the row of the maximum and its value matter, so a
	 * row is scanned in order only when some entry of it is greater than
	 * the maximum so far, or NaN.
	 */
	best = -INFINITY;
	for (i = 0; i < n; i++) {
		const double *h = H + i * W, *cb = k->cb + i * W, *cc = k->cc + i * W;
		const double *Ri = R + i * W;
		double prev = i >= 1 ? cv[i - 1] : 0.0;
		v2d prev2 = splat2(prev), best2, cl, qv;

		/* Below the diagonal Q is 0; the first such entry of the row counts. */
		if (i >= 1 && 0.0 > best) {
			best = 0.0;
			bi = i;
		}
		best2 = splat2(best);
		keep = (v2i){ -1, -1 };
		more = false;
		for (j = i; j + 2 <= n; j += 2) {
			cl = load2(col + j) + load2(h + j);
			store2(col + j, cl);
			qv = Q_OF(load2(ca + j), cl, prev2, load2(cb + j), load2(cc + j),
			    load2(Ri + j));
			store2(q + j, qv);
			keep &= (v2i)(qv <= best2);
		}
		for (; j < n; j++) {
			col[j] += h[j];
			q[j] = Q_OF(ca[j], col[j], prev, cb[j], cc[j], Ri[j]);
			more |= q[j] > best || isnan(q[j]);
		}
		if (!more && (keep[0] & keep[1]) != 0)
			continue;
		/*
		 * The row in order, without a branch an entry could mislead:
		 * top takes each entry greater than it, as best would, and a
		 * NaN (which no comparison lets in) is looked for apart.
		 */
		top = best;
		nan = false;
		for (j = i; j < n; j++) {
			top = q[j] > top ? q[j] : top;
			nan |= isnan(q[j]);
		}
		if (nan) {
			for (j = i; !isnan(q[j]); j++)
				continue;
			best = q[j];
			bi = i;
			break;
		}
		if (top > best) {
			best = top;
			bi = i;
		}
	}
	*index = bi + 1 + s;
	*qhat = best;
}

void
changes_candidate(const double *w, size_t m, size_t window, size_t s, size_t e,
    size_t *index, double *qhat)
{
	struct calc k;

	calc_alloc(&k, window);
	calc_init(&k, w, m);
	calc_candidate(&k, s, e, index, qhat);
	calc_free(&k);
}

struct cand {
	size_t index;
	double qhat;
	bool valid;
};

/*
 * Whether compare() of w[lo..idx) and w[idx..hi) finds p <= alpha, which
 * is all that detect() asks of the p-value. With df fixed, the p-value
 * falls as |t| grows, so a |t| no larger than one whose p-value was above
 * alpha by more than stats_t_two_sided()'s error (about 1e-12 relative;
 * 1e-6 is taken) has a p-value above alpha too, and one no smaller than
 * a |t| whose p-value was that far below alpha has one below it: the
 * answer is the p-value's, without computing it (the incomplete beta
 * function is most of what a comparison costs). Only an alpha well
 * inside the normal range is trusted with that relative error.
 */
static bool
significant(struct calc *k, const double *w, size_t lo, size_t idx, size_t hi,
    double alpha, double *scratch)
{
	struct change_point cp;
	double t, df, at, p, margin = fabs(alpha) * 1e-6;
	size_t d = hi - lo - 2;

	if (!compare_t(w, lo, idx, hi, scratch, &cp, &t, &df))
		return cp.pvalue <= alpha;
	if (!(k->alpha == alpha)) {
		for (size_t i = 0; i < k->window; i++) {
			k->t_above[i] = -1;
			k->t_below[i] = NAN;
		}
		k->alpha = alpha;
	}
	at = fabs(t);
	if (at <= k->t_above[d])
		return false;
	if (at >= k->t_below[d])
		return true;
	p = stats_t_two_sided(t, df);
	if (alpha >= 1e-200 && p > alpha + margin && at > k->t_above[d])
		k->t_above[d] = at;
	if (alpha >= 1e-200 && p < alpha - margin && !(at >= k->t_below[d]))
		k->t_below[d] = at;
	return p <= alpha;
}

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
		if (!significant(k, w, s, cache[bt].index, e, alpha, scratch))
			break;
		memmove(out + bt + 1, out + bt, (ncp - bt) * sizeof *out);
		memmove(cache + bt + 1, cache + bt, (ncp + 1 - bt) * sizeof *cache);
		out[bt] = cache[bt].index;
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

/*
 * Adds the point p to the set weak[0..*nweak), which stays sorted while
 * the points come in increasing order, as the windows find them: a window
 * starts at or after the last point of the one before and finds points
 * after its start. *sorted turns false when one does not (the set is then
 * sorted at the end, as Otava sorts it).
 */
static void
weak_add(size_t *weak, size_t *nweak, size_t p, bool *sorted)
{
	size_t i;

	if (*nweak == 0 || p > weak[*nweak - 1]) {
		weak[(*nweak)++] = p;
		return;
	}
	for (i = *nweak; i-- > 0;)
		if (weak[i] == p)
			return;
	weak[(*nweak)++] = p;
	*sorted = false;
}

void
changes_split(const double *x, size_t n, size_t window, double alpha,
    struct changes_split *sp)
{
	size_t start = 0, step = window / 2, end, nw, last, i, *local, nweak = 0;
	size_t *weak = emalloc((n + 1) * sizeof *weak);
	bool cut = false, sorted = true;
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
		for (i = 0; i < sp->nearly; i++)
			weak_add(weak, &nweak, sp->early[i], &sorted);
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
			weak_add(weak, &nweak, local[i] + start, &sorted);
		start = last > start + step ? last : start + step;
	}
	if (!cut) {
		sp->resume = 0;
		sp->nearly = 0;
	}
	if (!sorted)
		qsort(weak, nweak, sizeof *weak, num_cmp_size);
	free(sp->weak);
	sp->weak = weak;
	sp->nweak = nweak;
	sp->n = n;
	free(local);
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
