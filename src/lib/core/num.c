#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/num.h"
#include "core/text.h"

/* Exact powers of ten as doubles. */
static const double pow10[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
	1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static bool
isdig(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Copies a digit part ("1_000") into b without underscores. Returns the
 * number of bytes consumed, 0 when there is no valid digit part.
 */
static size_t
digitpart(const char *s, size_t n, buf *b)
{
	size_t i = 0;

	if (n == 0 || !isdig(s[0]))
		return 0;
	while (i < n) {
		if (isdig(s[i])) {
			buf_addc(b, s[i++]);
		} else if (s[i] == '_' && i + 1 < n && isdig(s[i + 1])) {
			i++;
		} else
			break;
	}
	return i;
}

bool
num_py_float(const char *s, double *out)
{
	size_t n, i = 0, k;
	const char *p = text_py_strip(s, &n);
	buf b = BUF_INIT;
	bool neg = false, ok = false;
	char *end;

	if (n > 0 && (p[0] == '+' || p[0] == '-')) {
		neg = p[0] == '-';
		i++;
	}
	if ((n - i == 3 && strncasecmp(p + i, "nan", 3) == 0)) {
		*out = neg ? -NAN : NAN;
		return true;
	}
	if ((n - i == 3 && strncasecmp(p + i, "inf", 3) == 0) ||
	    (n - i == 8 && strncasecmp(p + i, "infinity", 8) == 0)) {
		*out = neg ? -INFINITY : INFINITY;
		return true;
	}
	buf_addc(&b, neg ? '-' : '+');
	k = digitpart(p + i, n - i, &b);
	i += k;
	if (i < n && p[i] == '.') {
		size_t f;

		buf_addc(&b, '.');
		i++;
		f = digitpart(p + i, n - i, &b);
		if (k == 0 && f == 0)
			goto done;
		i += f;
	} else if (k == 0)
		goto done;
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		buf_addc(&b, 'e');
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			buf_addc(&b, p[i++]);
		k = digitpart(p + i, n - i, &b);
		if (k == 0)
			goto done;
		i += k;
	}
	if (i != n)
		goto done;
	errno = 0;
	*out = strtod(b.s, &end);
	ok = *end == '\0';
done:
	buf_free(&b);
	return ok;
}

int
num_py_int(const char *s, long long *out)
{
	size_t n, i = 0, k;
	const char *p = text_py_strip(s, &n);
	buf b = BUF_INIT;
	bool neg = false, over = false;
	unsigned long long v = 0, lim;

	if (n > 0 && (p[0] == '+' || p[0] == '-')) {
		neg = p[0] == '-';
		i++;
	}
	k = digitpart(p + i, n - i, &b);
	if (k == 0 || i + k != n) {
		buf_free(&b);
		return 0;
	}
	lim = neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
	for (k = 0; k < b.len; k++) {
		unsigned d = (unsigned)(b.s[k] - '0');
		if (v > (lim - d) / 10) {
			over = true;
			break;
		}
		v = v * 10 + d;
	}
	buf_free(&b);
	if (over) {
		*out = neg ? LLONG_MIN : LLONG_MAX;
		return 2;
	}
	*out = neg ? (long long)(0 - v) : (long long)v;
	return 1;
}

double
num_round(double x, int nd)
{
	char t[NUM_BUFSZ];
	double m;

	if (!isfinite(x))
		return x;
	/* Already on the grid (the usual case): x * 10^k is an integer for k <= nd. */
	for (int k = 0; k <= nd && k <= 22; k++) {
		m = nearbyint(x * pow10[k]);
		if (fabs(m) < 1e15 && m / pow10[k] == x)
			return x;
	}
	/* printf rounds the exact binary value half to even, as round() does. */
	snprintf(t, sizeof t, "%.*f", nd, x);
	return strtod(t, NULL);
}

char *
num_fixed(char out[NUM_BUFSZ], double x, int prec)
{
	if (isnan(x))
		strcpy(out, "nan");
	else if (isinf(x))
		strcpy(out, x < 0 ? "-inf" : "inf");
	else
		snprintf(out, NUM_BUFSZ, "%.*f", prec, x);
	return out;
}

/*
 * Shortest round-trip digits by Ryu (Ulf Adams, "Ryu: fast float-to-string
 * conversion", PLDI 2018), as its d2s.c computes them with 128-bit
 * products: the shortest decimal in x's rounding interval, and of those
 * the closest to x (ties to even), which is what Python's repr (dtoa mode
 * 0) prints. Its tables of 5^i, truncated to 125 bits, and of 2^k / 5^i,
 * rounded up, are computed exactly on first use.
 */
__extension__ typedef unsigned __int128 u128;

#define POW5_BITS 125
#define POW5_INV_N 342
#define POW5_N 326

static uint64_t pow5_split[POW5_N][2], pow5_inv_split[POW5_INV_N][2];
static pthread_once_t pow5_once = PTHREAD_ONCE_INIT;

/* A nonnegative big integer of 64-bit limbs, least significant first. */
struct big {
	uint64_t l[16];
	int n;
};

static int
big_bits(const struct big *b)
{
	return 64 * (b->n - 1) + 64 - __builtin_clzll(b->l[b->n - 1]);
}

static int
big_cmp(const struct big *a, const struct big *b)
{
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	for (int i = a->n - 1; i >= 0; i--)
		if (a->l[i] != b->l[i])
			return a->l[i] < b->l[i] ? -1 : 1;
	return 0;
}

static void
big_sub(struct big *a, const struct big *b)
{
	uint64_t borrow = 0;

	for (int i = 0; i < a->n; i++) {
		uint64_t y = i < b->n ? b->l[i] : 0;
		u128 d = (u128)a->l[i] - y - borrow;

		a->l[i] = (uint64_t)d;
		borrow = (uint64_t)(d >> 64) != 0;
	}
	while (a->n > 1 && a->l[a->n - 1] == 0)
		a->n--;
}

static void
big_shl1(struct big *a)
{
	uint64_t carry = 0;

	for (int i = 0; i < a->n; i++) {
		uint64_t c = a->l[i] >> 63;

		a->l[i] = a->l[i] << 1 | carry;
		carry = c;
	}
	if (carry)
		a->l[a->n++] = 1;
}

/* 125 bits of b from bit position lo up (lo may be negative: zeros below). */
static void
big_bits125(const struct big *b, int lo, uint64_t out[2])
{
	u128 v = 0;

	for (int i = 124; i >= 0; i--) {
		int k = lo + i;
		unsigned bit = k >= 0 && k / 64 < b->n ? (unsigned)(b->l[k / 64] >> (k % 64) & 1) : 0;

		v = v << 1 | bit;
	}
	out[0] = (uint64_t)v;
	out[1] = (uint64_t)(v >> 64);
}

static void
pow5_init(void)
{
	struct big p = { { 1 }, 1 }, r;

	for (int i = 0; i < POW5_INV_N; i++) {
		int len = big_bits(&p);
		u128 q = 0;

		if (i < POW5_N)
			big_bits125(&p, len - POW5_BITS, pow5_split[i]);
		/* floor(2^(len - 1 + 125) / 5^i) + 1, by long division. */
		memset(&r, 0, sizeof r);
		r.l[(len - 1) / 64] = 1ULL << ((len - 1) % 64);
		r.n = (len - 1) / 64 + 1;
		for (int k = 0; k <= POW5_BITS; k++) {
			if (k > 0)
				big_shl1(&r);
			q <<= 1;
			if (big_cmp(&r, &p) >= 0) {
				big_sub(&r, &p);
				q |= 1;
			}
		}
		q++;
		pow5_inv_split[i][0] = (uint64_t)q;
		pow5_inv_split[i][1] = (uint64_t)(q >> 64);
		/* p *= 5 */
		uint64_t carry = 0;
		for (int k = 0; k < p.n; k++) {
			u128 t = (u128)p.l[k] * 5 + carry;
			p.l[k] = (uint64_t)t;
			carry = (uint64_t)(t >> 64);
		}
		if (carry)
			p.l[p.n++] = carry;
	}
}

static uint32_t
pow5bits(int32_t e)
{
	return (uint32_t)(((e * 1217359) >> 19) + 1);
}

static uint32_t
log10_pow2(int32_t e)
{
	return (uint32_t)((e * 78913) >> 18);
}

static uint32_t
log10_pow5(int32_t e)
{
	return (uint32_t)((e * 732923) >> 20);
}

static bool
multiple_of_pow5(uint64_t v, uint32_t p)
{
	uint32_t n = 0;

	while (v > 0 && v % 5 == 0) {
		v /= 5;
		n++;
	}
	return n >= p;
}

static uint64_t
mul_shift(uint64_t m, const uint64_t mul[2], int32_t j)
{
	u128 b0 = (u128)m * mul[0], b2 = (u128)m * mul[1];

	return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
}

/*
 * Shortest decimal digits of x (finite, > 0) that read back as x: fills
 * digits (no sign, no trailing zeros) and returns the decimal exponent of
 * the first digit.
 */
static int
shortest(double x, char *digits)
{
	uint64_t bits, mant, m2, mv, vr, vp, vm, out;
	uint32_t expo, mm_shift;
	int32_t e2, e10, removed = 0;
	bool even, vm_tz = false, vr_tz = false;
	unsigned last = 0;
	char t[24];
	int n, nd, i;

	pthread_once(&pow5_once, pow5_init);
	memcpy(&bits, &x, sizeof bits);
	mant = bits & ((1ULL << 52) - 1);
	expo = (uint32_t)(bits >> 52 & 0x7ff);
	if (expo == 0) {
		e2 = 1 - 1023 - 52 - 2;
		m2 = mant;
	} else {
		e2 = (int32_t)expo - 1023 - 52 - 2;
		m2 = 1ULL << 52 | mant;
	}
	even = (m2 & 1) == 0;
	mv = 4 * m2;
	mm_shift = mant != 0 || expo <= 1;
	if (e2 >= 0) {
		uint32_t q = log10_pow2(e2) - (e2 > 3);
		int32_t k = POW5_BITS + (int32_t)pow5bits((int32_t)q) - 1;
		int32_t j = -e2 + (int32_t)q + k;

		e10 = (int32_t)q;
		vr = mul_shift(4 * m2, pow5_inv_split[q], j);
		vp = mul_shift(4 * m2 + 2, pow5_inv_split[q], j);
		vm = mul_shift(4 * m2 - 1 - mm_shift, pow5_inv_split[q], j);
		if (q <= 21) {
			if (mv % 5 == 0)
				vr_tz = multiple_of_pow5(mv, q);
			else if (even)
				vm_tz = multiple_of_pow5(mv - 1 - mm_shift, q);
			else
				vp -= multiple_of_pow5(mv + 2, q);
		}
	} else {
		uint32_t q = log10_pow5(-e2) - (-e2 > 1);
		int32_t i5 = -e2 - (int32_t)q;
		int32_t k = (int32_t)pow5bits(i5) - POW5_BITS;
		int32_t j = (int32_t)q - k;

		e10 = (int32_t)q + e2;
		vr = mul_shift(4 * m2, pow5_split[i5], j);
		vp = mul_shift(4 * m2 + 2, pow5_split[i5], j);
		vm = mul_shift(4 * m2 - 1 - mm_shift, pow5_split[i5], j);
		if (q <= 1) {
			vr_tz = true;
			if (even)
				vm_tz = mm_shift == 1;
			else
				vp--;
		} else if (q < 63) {
			vr_tz = (mv & ((1ULL << q) - 1)) == 0;
		}
	}
	if (vm_tz || vr_tz) {
		/* The rare general case: trailing zeros decide the rounding. */
		while (vp / 10 > vm / 10) {
			vm_tz &= vm % 10 == 0;
			vr_tz &= last == 0;
			last = (unsigned)(vr % 10);
			vr /= 10;
			vp /= 10;
			vm /= 10;
			removed++;
		}
		if (vm_tz)
			while (vm % 10 == 0) {
				vr_tz &= last == 0;
				last = (unsigned)(vr % 10);
				vr /= 10;
				vp /= 10;
				vm /= 10;
				removed++;
			}
		if (vr_tz && last == 5 && vr % 2 == 0)
			last = 4;	/* exactly half way: to even */
		out = vr + ((vr == vm && (!even || !vm_tz)) || last >= 5);
	} else {
		bool up = false;

		while (vp / 10 > vm / 10) {
			up = vr % 10 >= 5;
			vr /= 10;
			vp /= 10;
			vm /= 10;
			removed++;
		}
		out = vr + (vr == vm || up);
	}
	nd = 0;
	while (out > 0) {
		t[nd++] = (char)('0' + out % 10);
		out /= 10;
	}
	for (i = 0; i < nd; i++)
		digits[i] = t[nd - 1 - i];
	for (n = nd; n > 1 && digits[n - 1] == '0'; n--)
		;
	digits[n] = '\0';
	/* x is out * 10^(e10 + removed): its first digit is worth 10^(that + nd - 1). */
	return e10 + removed + nd - 1;
}

char *
num_repr(char out[NUM_BUFSZ], double x)
{
	char digits[32], *o = out;
	int exp10, decpt, nd, i;

	if (isnan(x))
		return strcpy(out, "nan");
	if (isinf(x))
		return strcpy(out, x < 0 ? "-inf" : "inf");
	if (signbit(x))
		*o++ = '-';
	if (x == 0) {
		strcpy(o, "0.0");
		return out;
	}
	exp10 = shortest(fabs(x), digits);
	nd = (int)strlen(digits);
	decpt = exp10 + 1;
	if (exp10 < -4 || exp10 >= 16) {
		*o++ = digits[0];
		if (nd > 1) {
			*o++ = '.';
			memcpy(o, digits + 1, (size_t)nd - 1);
			o += nd - 1;
		}
		sprintf(o, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
	} else if (decpt <= 0) {
		*o++ = '0';
		*o++ = '.';
		for (i = 0; i < -decpt; i++)
			*o++ = '0';
		strcpy(o, digits);
	} else if (decpt >= nd) {
		memcpy(o, digits, (size_t)nd);
		o += nd;
		for (i = nd; i < decpt; i++)
			*o++ = '0';
		strcpy(o, ".0");
	} else {
		memcpy(o, digits, (size_t)decpt);
		o += decpt;
		*o++ = '.';
		strcpy(o, digits + decpt);
	}
	return out;
}

char *
num_hex(char *o, double d)
{
	static const char digits[] = "0123456789abcdef";
	uint64_t u, m;
	int e, k;
	char t[8];

	memcpy(&u, &d, sizeof u);
	e = (int)(u >> 52 & 0x7ff);
	m = u & 0xfffffffffffffULL;
	if (e == 0 || e == 0x7ff)	/* zero, subnormal, infinite, NaN: rare */
		return o + snprintf(o, 32, "%a", d);
	if (u >> 63)
		*o++ = '-';
	memcpy(o, "0x1", 3);
	o += 3;
	if (m != 0) {
		*o++ = '.';
		for (k = 48; m != 0; k -= 4) {
			*o++ = digits[m >> k & 15];
			m &= (1ULL << k) - 1;
		}
	}
	*o++ = 'p';
	*o++ = e >= 1023 ? '+' : '-';
	e = e >= 1023 ? e - 1023 : 1023 - e;
	k = 0;
	do
		t[k++] = (char)('0' + e % 10);
	while ((e /= 10) > 0);
	while (k > 0)
		*o++ = t[--k];
	return o;
}

/*
 * Whether x87's 80-bit long double is there: one rounding of the exact
 * m * 10^k to its 64-bit significand, checked for the one case where
 * rounding that to a double's 53 bits could differ from rounding the
 * exact value once (see num_parse_json()).
 */
#if LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
#define NUM_X87 1
/* 10^0 .. 10^27: exact in a 64-bit significand (5^27 < 2^64). */
static const long double pow10l[] = { 1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L,
	1e7L, 1e8L, 1e9L, 1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L,
	1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L };
#endif

double
num_parse_json(const char *s, size_t n)
{
	const char *p = s, *end = s + n;
	unsigned long long m = 0;
	int digits = 0, e = 0, ex = 0;
	bool neg = false, eneg = false;
	char tmp[64], *big;
	double d;

	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	/* Up to 19 significant digits: m stays below 10^19 < 2^64. */
	for (; p < end && isdig(*p); p++) {
		if (m != 0 || *p != '0')
			digits++;
		m = m * 10 + (unsigned)(*p - '0');
		if (digits > 19)
			goto slow;
	}
	if (p < end && *p == '.')
		for (p++; p < end && isdig(*p); p++) {
			if (m != 0 || *p != '0')
				digits++;
			m = m * 10 + (unsigned)(*p - '0');
			e--;
			if (digits > 19)
				goto slow;
		}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		for (; p < end && isdig(*p); p++) {
			ex = ex * 10 + (*p - '0');
			if (ex > 400)
				goto slow;
		}
	}
	e += eneg ? -ex : ex;
	/* Clinger's fast path: both operands exact, one correctly rounded op. */
	if (digits <= 15 && e >= -22 && e <= 22) {
		d = e >= 0 ? (double)m * pow10[e] : (double)m / pow10[-e];
		return neg ? -d : d;
	}
#ifdef NUM_X87
	/*
	 * The same in 64 bits: m and 10^|e| exact, r = m * 10^e rounded once.
	 * Rounding r to a double gives the double nearest the exact value
	 * unless r is exactly halfway between two doubles (its low 11 bits
	 * 0x400): r on either side of a halfway point means the exact value
	 * is on that side too. The range keeps r far from subnormals and
	 * overflow. The halfway case is strtod()'s.
	 */
	if (e >= -27 && e <= 27) {
		long double r = e >= 0 ? (long double)m * pow10l[e] : (long double)m / pow10l[-e];
		uint64_t sig;

		memcpy(&sig, &r, sizeof sig);	/* the significand: the first 8 bytes */
		if (m == 0 || (sig & 0x7ff) != 0x400) {
			d = (double)r;
			return neg ? -d : d;
		}
	}
#endif
slow:
	if (n < sizeof tmp) {
		memcpy(tmp, s, n);
		tmp[n] = '\0';
		return strtod(tmp, NULL);
	}
	big = malloc(n + 1);
	if (big == NULL)
		return strtod(s, NULL);	/* the caller's text ends at a delimiter */
	memcpy(big, s, n);
	big[n] = '\0';
	d = strtod(big, NULL);
	free(big);
	return d;
}

int
num_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
num_cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

bool
num_opt_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0' || (*s != '-' && *s != '+' && !isdig(*s)))
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool
num_opt_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (s == NULL || *s == '\0' || strchr(s, 'x') || strchr(s, 'X'))
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v) || v < min || v > max)
		return false;
	*out = v;
	return true;
}
