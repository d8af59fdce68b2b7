#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/canon.h"
#include "core/err.h"
#include "core/num.h"
#include "core/utf8.h"
#include "frames/frames.h"

const char *const frames_metric_keys[FM_NMETRICS] = {
	"median_frame_time_ms", "p95_frame_time_ms", "p99_frame_time_ms",
	"median_fps", "p05_fps", "p01_fps", "throughput_per_second",
	"median_ai_simulation_ms", "p95_ai_simulation_ms",
};

static const char *const columns[8] = {
	"frame_index", "elapsed_ms", "frame_time_ms", "players", "ai", "vehicles",
	"entities", "ai_simulation_ms",
};

void
frames_csv_init(struct frames_csv *c, double W, bool W_int, double D, double E, bool E_int,
    const long long pop[4])
{
	memset(c, 0, sizeof *c);
	c->W = W;
	c->W_int = W_int;
	c->D = D;
	c->E = E;
	c->E_int = E_int;
	memcpy(c->pop, pop, sizeof c->pop);
}

void
frames_csv_free(struct frames_csv *c)
{
	free(c->ft);
	free(c->ai);
	free(c->bnd);
	c->ft = c->ai = NULL;
	c->bnd = NULL;
}

__attribute__((format(printf, 3, 4))) static int
fail(struct frames_csv *c, const char *code, const char *fmt, ...)
{
	va_list ap;

	c->code = code;
	c->err_line = c->line;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof c->detail, fmt, ap);
	va_end(ap);
	return -1;
}

/* A number for a message: Python's repr of a double. */
#define R(i, x) num_repr(rb[i], (x))

/* [0-9]+ as an integer; -1 when it does not fit (never a declared value). */
static bool
int_field(const char *s, size_t n, long long *out)
{
	long long v = 0;

	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v >= 0 && v > (INT64_MAX - (s[i] - '0')) / 10)
			v = -1;
		else if (v >= 0)
			v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

static size_t
digits(const char *s, size_t i, size_t n)
{
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	return i;
}

/* -?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)? as a finite double. */
static bool
float_field(const char *s, size_t n, double *out)
{
	size_t i = 0, j;

	if (i < n && s[i] == '-')
		i++;
	if ((j = digits(s, i, n)) == i)
		return false;
	i = j;
	if (i < n && s[i] == '.') {
		if ((j = digits(s, i + 1, n)) == i + 1)
			return false;
		i = j;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if ((j = digits(s, i, n)) == i)
			return false;
		i = j;
	}
	if (i != n)
		return false;
	*out = num_parse_json(s, n);
	return isfinite(*out);
}

static void
include(struct frames_csv *c, double ft, double ai)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 4096;
		c->ft = erealloc(c->ft, c->cap * sizeof *c->ft);
		c->ai = erealloc(c->ai, c->cap * sizeof *c->ai);
	}
	c->ft[c->n] = ft;
	c->ai[c->n] = ai;
	c->n++;
	c->included_ms += ft;
}

static void
add_boundary(struct frames_csv *c, long long idx, double start, double end, double ft)
{
	struct frames_boundary *b;
	bool w = start < c->W && c->W < end, e = start < c->E && c->E < end;
	/* min(end, E) - max(start, W) as Python picks them: the first of equals. */
	bool hi_E = c->E < end, lo_W = c->W > start;

	if (c->nbnd == c->capbnd) {
		c->capbnd = c->capbnd ? c->capbnd * 2 : 4;
		c->bnd = erealloc(c->bnd, c->capbnd * sizeof *c->bnd);
	}
	b = &c->bnd[c->nbnd++];
	b->frame_index = idx;
	b->edge = (w ? FRAMES_WARMUP : 0) | (e ? FRAMES_END : 0);
	b->start = start;
	b->start_int = c->rows == 1;
	b->end = end;
	b->duration = ft;
	b->overlap = (hi_E ? c->E : end) - (lo_W ? c->W : start);
	b->overlap_int = hi_E && c->E_int && (lo_W ? c->W_int : b->start_int);
}

/* Says what is wrong with a row the fast path refused. */
static int
bad_row(struct frames_csv *c, const char *s, size_t n)
{
	const char *f[8];
	size_t fl[8];
	long long v;
	double d;
	int nf = 0;

	f[0] = s;
	for (size_t i = 0; i < n; i++)
		if (s[i] == ',') {
			if (nf == 7)
				return fail(c, "invalid_row", "more than 8 fields");
			fl[nf] = (size_t)(s + i - f[nf]);
			f[++nf] = s + i + 1;
		}
	fl[nf] = (size_t)(s + n - f[nf]);
	if (nf != 7)
		return fail(c, "invalid_row", "%d field%s, not 8", nf + 1, nf ? "s" : "");
	for (int k = 0; k < 8; k++) {
		bool real = k == 1 || k == 2 || k == 7;

		if (real ? !float_field(f[k], fl[k], &d) : !int_field(f[k], fl[k], &v))
			return fail(c, "invalid_row", real ? "%s is not a finite decimal number" :
			    "%s is not an unsigned integer", columns[k]);
	}
	return fail(c, "invalid_row", "not a row");
}

/* ---- the fast path of a row: one pass, no copies ---- */

static const double pow10_exact[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
	1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* [0-9]+ up to the next ',' (or the end); -1 when beyond 64 bits. */
static inline const char *
fast_uint(const char *p, const char *end, long long *out)
{
	const char *q = p;
	unsigned long long v = 0;

	while (p < end && (unsigned)(*p - '0') < 10) {
		v = v * 10 + (unsigned)(*p - '0');
		p++;
	}
	if (p == q)
		return NULL;
	if (p - q > 18)		/* 18 digits always fit; more may not */
		return int_field(q, (size_t)(p - q), out) ? p : NULL;
	*out = (long long)v;
	return p;
}

/*
 * -?[0-9]+(\.[0-9]+)? as a double, exactly (Clinger's fast path); anything
 * longer or with an exponent goes through float_field().
 */
static inline const char *
fast_float(const char *p, const char *end, double *out)
{
	const char *q = p, *d;
	unsigned long long m = 0;
	int nd = 0, frac = 0;
	bool neg = false;

	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	for (d = p; p < end && (unsigned)(*p - '0') < 10; p++)
		m = m * 10 + (unsigned)(*p - '0');
	nd = (int)(p - d);
	if (nd == 0)
		return NULL;
	if (p < end && *p == '.') {
		for (d = ++p; p < end && (unsigned)(*p - '0') < 10; p++)
			m = m * 10 + (unsigned)(*p - '0');
		frac = (int)(p - d);
		if (frac == 0)
			return NULL;
		nd += frac;
	}
	if ((p < end && *p != ',') || nd > 15) {
		/* an exponent, many digits, or not a number: the careful way */
		const char *e = p;

		while (e < end && *e != ',')
			e++;
		return float_field(q, (size_t)(e - q), out) ? e : NULL;
	}
	*out = (double)m / pow10_exact[frac];
	if (neg)
		*out = -*out;
	return p;
}

/* The eight fields of a row; false when anything is off (the slow path says what). */
static bool
fast_row(const char *p, const char *end, long long *idx, double *elapsed, double *ft,
    long long pop[4], double *ai)
{
	if ((p = fast_uint(p, end, idx)) == NULL || p == end || *p++ != ',' ||
	    (p = fast_float(p, end, elapsed)) == NULL || p == end || *p++ != ',' ||
	    (p = fast_float(p, end, ft)) == NULL || p == end || *p++ != ',')
		return false;
	for (int k = 0; k < 4; k++)
		if ((p = fast_uint(p, end, &pop[k])) == NULL || p == end || *p++ != ',')
			return false;
	return (p = fast_float(p, end, ai)) != NULL && p == end;
}

/* Field k of a row that has 8 fields; its length in *len, at most 40. */
static const char *
field(const char *s, size_t n, int k, int *len)
{
	const char *end = s + n, *e;

	for (; k > 0; k--)
		s = (const char *)memchr(s, ',', (size_t)(end - s)) + 1;
	e = memchr(s, ',', (size_t)(end - s));
	*len = (int)((e != NULL ? e : end) - s);
	if (*len > 40)
		*len = 40;
	return s;
}

int
frames_csv_line(struct frames_csv *c, const char *s, size_t n)
{
	long long idx, pop[4];
	double elapsed, ft, ai, start;
	char rb[3][NUM_BUFSZ];
	const char *f;
	int fl;

	if (c->code != NULL)
		return -1;
	c->line++;
	if (n > 0 && s[n - 1] == '\r')
		n--;
	if (c->line == 1) {
		if (n != strlen(FRAMES_HEADER) || memcmp(s, FRAMES_HEADER, n) != 0)
			return fail(c, "invalid_header", "the first line is not the header "
			    FRAMES_HEADER);
		return 0;
	}
	c->rows++;
	if (c->ended)
		return fail(c, "rows_after_boundary", "a row after frame %lld, whose elapsed_ms %s "
		    "reached the end of the window (%s ms)", c->rows - 1, R(0, c->prev_end),
		    R(1, c->E));

	if (!fast_row(s, s + n, &idx, &elapsed, &ft, pop, &ai))
		return bad_row(c, s, n);
	if (idx != c->rows) {
		f = field(s, n, 0, &fl);
		return fail(c, "frame_index_gap", "frame_index %.*s on data row %lld", fl, f,
		    c->rows);
	}
	start = c->prev_end;
	if (elapsed <= start)
		return fail(c, "elapsed_not_increasing", "elapsed_ms %s is not after %s",
		    R(0, elapsed), R(1, start));
	if (ft < 0.001)
		return fail(c, "frame_time_too_small", "frame_time_ms %s is under 0.001",
		    R(0, ft));
	if (fabs((elapsed - start) - ft) > 0.1)
		return fail(c, "frame_time_mismatch", "frame_time_ms %s but elapsed_ms %s - %s "
		    "differ by more than 0.1 ms", R(0, ft), R(1, elapsed), R(2, start));
	c->cum += ft;
	if (fabs(c->cum - elapsed) > 0.1)
		return fail(c, "cumulative_time_mismatch", "frame_time_ms sum %s and elapsed_ms %s "
		    "differ by more than 0.1 ms", R(0, c->cum), R(1, elapsed));
	for (int k = 0; k < 4; k++)
		if (pop[k] != c->pop[k]) {
			f = field(s, n, 3 + k, &fl);
			return fail(c, "population_mismatch", "%s %.*s, declared %lld",
			    columns[3 + k], fl, f, c->pop[k]);
		}
	if (ai < 0)
		return fail(c, "negative_ai_simulation", "ai_simulation_ms %s is negative",
		    R(0, ai));

	if (start >= c->W && elapsed <= c->E) {
		include(c, ft, ai);
	} else if ((start < c->W && c->W < elapsed) || (start < c->E && c->E < elapsed))
		add_boundary(c, idx, start, elapsed, ft);
	c->ended = elapsed >= c->E;
	c->prev_end = elapsed;
	return 0;
}

/* ---- statistics ---- */

/* The sort key of a double >= 0: its bits, -0.0 as 0.0 (they are equal). */
static inline uint64_t
key_of(double x)
{
	uint64_t k;

	if (x == 0)
		return 0;
	memcpy(&k, &x, sizeof k);
	return k;
}

void
frames_sort(double *v, size_t n)
{
	enum { BITS = 16, BUCKETS = 1 << BITS };
	size_t *count;
	double *tmp, *src = v, *dst;
	uint64_t or_ = 0, and_ = ~(uint64_t)0;

	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t k = key_of(v[i]);

		or_ |= k;
		and_ &= k;
	}
	tmp = emalloc(n * sizeof *tmp);
	dst = tmp;
	count = emalloc(BUCKETS * sizeof *count);
	/* LSD radix: stable, so equal keys keep their order as Python's sort does. */
	for (int shift = 0; shift < 64; shift += BITS) {
		size_t sum = 0;
		double *t;

		if ((((or_ ^ and_) >> shift) & (BUCKETS - 1)) == 0)
			continue;	/* every key has the same digit here */
		memset(count, 0, BUCKETS * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(key_of(src[i]) >> shift) & (BUCKETS - 1)]++;
		for (size_t d = 0; d < BUCKETS; d++) {
			size_t k = count[d];

			count[d] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(key_of(src[i]) >> shift) & (BUCKETS - 1)]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof *v);
	free(count);
	free(tmp);
}

double
frames_rank(const double *v, size_t n, int pct)
{
	size_t r = ((size_t)pct * n + 99) / 100;

	return v[r == 0 ? 0 : r - 1];
}

double
frames_median(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Element k (1-based) of the ascending rates 1000/ft, from ft ascending. */
static double
fps_at(const double *ft, size_t n, size_t k)
{
	return 1000 / ft[n - k];
}

static double
fps_rank(const double *ft, size_t n, int pct)
{
	size_t r = ((size_t)pct * n + 99) / 100;

	return fps_at(ft, n, r == 0 ? 1 : r);
}

static double
fps_median(const double *ft, size_t n)
{
	return n % 2 ? fps_at(ft, n, n / 2 + 1) :
	    (fps_at(ft, n, n / 2) + fps_at(ft, n, n / 2 + 1)) / 2;
}

/*
 * The distribution curve: nearest-rank frame times at percentiles p whose
 * 1/(1-p) is log-spaced from 1 (the fastest frame) to n (the slowest).
 */
static void
curve(struct frames_csv *c)
{
	size_t n = c->n;
	double top = log10((double)n);

	c->ncurve = 0;
	for (int i = 0; i < FRAMES_CURVE_POINTS; i++) {
		double q = pow(10, top * i / (FRAMES_CURVE_POINTS - 1)), p = 1 - 1 / q;
		size_t r = (size_t)ceil(p * (double)n - 1e-9);

		if (i == FRAMES_CURVE_POINTS - 1) {
			p = 1 - 1 / (double)n;
			r = n;
		}
		if (r < 1)
			r = 1;
		if (r > n)
			r = n;
		c->curve[c->ncurve].p = p;
		c->curve[c->ncurve].ms = c->ft[r - 1];
		c->ncurve++;
	}
}

/* ---- order statistics without a full sort ---- */

/*
 * Puts into v[at[0..na)] (ascending positions) the elements a sort of
 * v[0..n) would put there; the rest of v is then scrap. One pass finds the
 * bits where the keys differ, one counts the keys by their 16 bits below
 * that, one gathers the few buckets that hold the wanted positions, which
 * alone are sorted.
 */
static void
place(double *v, size_t n, const size_t *at, int na)
{
	enum { BUCKETS = 1 << 16 };
	uint64_t or_ = 0, and_ = ~(uint64_t)0, diff;
	size_t *count, *first, *fill;
	unsigned short *slot;
	double **bucket;
	int shift, nslots = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t k = key_of(v[i]);

		or_ |= k;
		and_ &= k;
	}
	if ((diff = or_ ^ and_) == 0)
		return;		/* all equal */
	shift = 63 - __builtin_clzll(diff) - 15;
	if (shift < 0)
		shift = 0;
	count = ecalloc(BUCKETS, sizeof *count);
	for (size_t i = 0; i < n; i++)
		count[(key_of(v[i]) >> shift) & (BUCKETS - 1)]++;
	/* The bucket of each wanted position, numbered as a slot. */
	slot = ecalloc(BUCKETS, sizeof *slot);
	first = ecalloc((size_t)na, sizeof *first);
	fill = ecalloc((size_t)na, sizeof *fill);
	bucket = ecalloc((size_t)na, sizeof *bucket);
	{
		size_t cum = 0;
		int k = 0;

		for (size_t b = 0; b < BUCKETS && k < na; b++) {
			if (at[k] < cum + count[b]) {
				slot[b] = (unsigned short)++nslots;
				first[nslots - 1] = cum;
				bucket[nslots - 1] = emalloc(count[b] * sizeof **bucket);
				while (k < na && at[k] < cum + count[b])
					k++;
			}
			cum += count[b];
		}
	}
	for (size_t i = 0; i < n; i++) {
		int sl = slot[(key_of(v[i]) >> shift) & (BUCKETS - 1)];

		if (sl != 0)
			bucket[sl - 1][fill[sl - 1]++] = v[i];
	}
	for (int sl = 0; sl < nslots; sl++)
		frames_sort(bucket[sl], fill[sl]);
	for (int k = 0, sl = 0; k < na; k++) {
		while (at[k] >= first[sl] + fill[sl])
			sl++;
		v[at[k]] = bucket[sl][at[k] - first[sl]];
	}
	for (int k = 0; k < nslots; k++)
		free(bucket[k]);
	free(bucket);
	free(fill);
	free(first);
	free(slot);
	free(count);
}

/*
 * Makes v[0..n) hold, at the positions the metrics read, what a stable
 * sort would put there: the median's one or two and each percentile's
 * rank (negative: a rate's, read from the top of the frame times). A full
 * stable sort when asked, or when a -0.0 is there (which of the equal
 * zeros lands where is then a matter of order, as in Python's sort).
 */
static void
order(double *v, size_t n, bool full, const int *pcts)
{
	size_t at[16];
	int na = 0, m = 0;

	for (size_t i = 0; i < n && !full; i++)
		if (v[i] == 0 && signbit(v[i]))
			full = true;
	if (full) {
		frames_sort(v, n);
		return;
	}
	at[na++] = n / 2;
	if (n % 2 == 0)
		at[na++] = n / 2 - 1;
	for (int k = 0; pcts[k] != 0; k++) {
		size_t r = ((size_t)(pcts[k] < 0 ? -pcts[k] : pcts[k]) * n + 99) / 100;

		if (r == 0)
			r = 1;
		at[na++] = pcts[k] < 0 ? n - r : r - 1;
	}
	qsort(at, (size_t)na, sizeof *at, num_cmp_size);
	for (int k = 0; k < na; k++)
		if (k == 0 || at[k] != at[k - 1])
			at[m++] = at[k];
	place(v, n, at, m);
}

/* The percentiles each column is read at (negative: a rate's, from the top). */
static const int ft_ranks[] = { 95, 99, -5, -1, 0 };
static const int ai_ranks[] = { 95, 0 };

int
frames_csv_finish(struct frames_csv *c)
{
	char rb[2][NUM_BUFSZ];
	double cover;

	if (c->code != NULL)
		return -1;
	if (c->line == 0)
		return frames_csv_line(c, "", 0);	/* an empty file: no header */
	if (!c->ended) {
		if (c->rows == 0)
			return fail(c, "recording_ended_early", "no data rows; the window ends at "
			    "%s ms", R(0, c->E));
		return fail(c, "recording_ended_early", "the last row, frame %lld at elapsed_ms %s, "
		    "ends before the window does (%s ms)", c->rows, R(0, c->prev_end), R(1, c->E));
	}
	cover = c->included_ms / c->D;
	if (c->n < FRAMES_MIN_INTERVALS || cover < FRAMES_MIN_COVERAGE) {
		fail(c, "insufficient_coverage", "%zu included intervals covering %s of "
		    "the measurement window; at least %d intervals and %s are needed", c->n,
		    R(0, cover), FRAMES_MIN_INTERVALS, R(1, FRAMES_MIN_COVERAGE));
		c->err_line = 0;	/* the whole recording */
		return -1;
	}
	order(c->ft, c->n, c->want_curve, ft_ranks);
	order(c->ai, c->n, false, ai_ranks);
	c->metrics[FM_MEDIAN_FT] = frames_median(c->ft, c->n);
	c->metrics[FM_P95_FT] = frames_rank(c->ft, c->n, 95);
	c->metrics[FM_P99_FT] = frames_rank(c->ft, c->n, 99);
	c->metrics[FM_MEDIAN_FPS] = fps_median(c->ft, c->n);
	c->metrics[FM_P05_FPS] = fps_rank(c->ft, c->n, 5);
	c->metrics[FM_P01_FPS] = fps_rank(c->ft, c->n, 1);
	c->metrics[FM_THROUGHPUT] = (double)c->n / (c->included_ms / 1000);
	c->metrics[FM_MEDIAN_AI] = frames_median(c->ai, c->n);
	c->metrics[FM_P95_AI] = frames_rank(c->ai, c->n, 95);
	if (c->want_curve)
		curve(c);
	free(c->ft);
	free(c->ai);
	c->ft = c->ai = NULL;
	return 0;
}

/* ---- the file ---- */

/* s[0..n) is UTF-8: ASCII eight bytes at a time, the rest by the decoder. */
static bool
utf8_ok(const char *s, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		if (w & 0x8080808080808080ull)
			return utf8_valid(s + i, n - i);
	}
	for (; i < n; i++)
		if (s[i] & 0x80)
			return utf8_valid(s + i, n - i);
	return true;
}

struct reader {
	struct frames_csv *c;
	long line;		/* lines seen (checked or not) */
	bool bad_utf8;
	char utf8_msg[160];
	long utf8_line;
};

static void
one_line(struct reader *r, const char *s, size_t n)
{
	r->line++;
	if (!r->bad_utf8 && !utf8_ok(s, n)) {
		r->bad_utf8 = true;
		r->utf8_line = r->line;
		utf8_error(s, n, r->utf8_msg, sizeof r->utf8_msg);
	}
	if (!r->bad_utf8 && r->c->code == NULL)
		frames_csv_line(r->c, s, n);
}

struct hash_job {
	struct canon_sha *h;
	const char *data;
	size_t n;
};

static void *
hash_chunk(void *arg)
{
	struct hash_job *j = arg;

	canon_sha_update(j->h, j->data, j->n);
	return NULL;
}

int
frames_csv_read(struct frames_csv *c, const char *path, char hex[65])
{
	enum { CHUNK = 2 << 20 };
	struct reader r = { c, 0, false, "", 0 };
	struct canon_sha *h;
	char *chunk;
	buf carry = BUF_INIT;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return fail(c, "unreadable_sample", "cannot open: %s", strerror(errno));
	chunk = emalloc(CHUNK);
	h = canon_sha_new();
	while ((got = read(fd, chunk, CHUNK)) > 0) {
		const char *p = chunk, *end = chunk + got, *nl;
		struct hash_job job = { h, chunk, (size_t)got };
		pthread_t t;
		/* The chunk is hashed on another core while this one checks it. */
		bool threaded = pthread_create(&t, NULL, hash_chunk, &job) == 0;

		if (!threaded)
			canon_sha_update(h, chunk, (size_t)got);
		while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
			if (carry.len > 0) {
				buf_add(&carry, p, (size_t)(nl - p));
				one_line(&r, carry.s, carry.len);
				carry.len = 0;
			} else
				one_line(&r, p, (size_t)(nl - p));
			p = nl + 1;
		}
		buf_add(&carry, p, (size_t)(end - p));
		if (threaded)
			pthread_join(t, NULL);
	}
	/* A final newline is optional; an empty file is one empty line. */
	if (got == 0 && (carry.len > 0 || r.line == 0))
		one_line(&r, carry.s, carry.len);
	canon_sha_final(h, hex);
	free(chunk);
	buf_free(&carry);
	if (got < 0) {
		int e = errno;

		close(fd);
		c->code = NULL;
		c->line = r.line;
		return fail(c, "unreadable_sample", "cannot read: %s", strerror(e));
	}
	close(fd);
	if (r.bad_utf8) {
		c->code = NULL;
		c->line = r.utf8_line;
		return fail(c, "unreadable_sample", "not UTF-8: %s", r.utf8_msg);
	}
	return frames_csv_finish(c);
}
