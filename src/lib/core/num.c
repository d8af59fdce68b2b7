#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
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
 * Shortest decimal digits of x that read back as x: fills digits (no sign,
 * no trailing zeros) and returns the decimal exponent of the first digit.
 */
static int
shortest(double x, char *digits)
{
	char t[160], *e;
	int p, exp10 = 0, mexp, i, n;

	/*
	 * A decimal of p <= 15 digits that reads back as x lies within half
	 * an ulp of x (2^-53 of it, either side, powers of two included),
	 * closer than half the spacing of 15-digit decimals (5e-15 of its
	 * decade): so rounding x to 15 digits gives that decimal padded with
	 * zeros, and when those 15 digits do not read back, nothing shorter
	 * does. One try at 15 digits stands for the 15 tries below it. Not
	 * so below DBL_MIN, where ulps are coarser: there every p is tried.
	 */
	p = 1;
	if (x >= DBL_MIN) {
		snprintf(t, sizeof t, "%.14e", x);
		p = strtod(t, NULL) == x ? 18 : 16;
	}
	for (; p <= 17; p++) {
		snprintf(t, sizeof t, "%.*e", p - 1, x);
		if (strtod(t, NULL) == x)
			break;
		/*
		 * At a power of two the gap below x is half the gap above it,
		 * so the nearest p-digit decimal may miss while the next one
		 * up still reads back as x (Python's dtoa finds that one).
		 */
		if (frexp(x, &mexp) == 0.5 && strtod(t, NULL) < x) {
			unsigned long long m = 0;
			char u[64];
			int ue;

			for (e = t; *e != 'e'; e++)
				if (isdig(*e))
					m = m * 10 + (unsigned)(*e - '0');
			ue = atoi(e + 1);
			m++;
			snprintf(u, sizeof u, "%llu", m);
			if ((int)strlen(u) > p)
				ue++;
			snprintf(t, sizeof t, "%c.%se%d", u[0], u[1] ? u + 1 : "0", ue);
			if (strtod(t, NULL) == x)
				break;
			snprintf(t, sizeof t, "%.*e", p - 1, x);
		}
	}
	n = 0;
	for (e = t; *e != 'e'; e++)
		if (isdig(*e))
			digits[n++] = *e;
	digits[n] = '\0';
	exp10 = atoi(e + 1);
	for (i = n - 1; i > 0 && digits[i] == '0'; i--)
		digits[i] = '\0';
	return exp10;
}

/*
 * The common case without printf: when x * 10^k is an integer m below
 * 10^15 for some k <= 22 and m / 10^k reads back as x (both exact, so the
 * division is correctly rounded like strtod), the smallest such k gives
 * the shortest digits, and with at most 15 digits they are unique.
 * Returns the exponent as shortest() does, or INT_MIN when it does not
 * apply.
 */
static int
shortest_fast(double x, char *digits)
{
	double m;
	unsigned long long u;
	char t[24];
	int k, n, i;

	for (k = 0; k <= 22; k++) {
		m = x * pow10[k];
		if (m >= 1e15)
			return INT_MIN;
		m = nearbyint(m);
		if (m < 1 || m / pow10[k] != x)
			continue;
		u = (unsigned long long)m;
		n = 0;
		while (u > 0) {
			t[n++] = (char)('0' + u % 10);
			u /= 10;
		}
		for (i = 0; i < n; i++)
			digits[i] = t[n - 1 - i];
		/* The first digit is worth 10^(digits of m - 1 - k). */
		k = n - 1 - k;
		while (n > 1 && digits[n - 1] == '0')
			n--;
		digits[n] = '\0';
		return k;
	}
	return INT_MIN;
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
	if ((exp10 = shortest_fast(fabs(x), digits)) == INT_MIN)
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
	for (; p < end && isdig(*p); p++) {
		if (m != 0 || *p != '0')
			digits++;
		m = m * 10 + (unsigned)(*p - '0');
		if (digits > 15)
			goto slow;
	}
	if (p < end && *p == '.')
		for (p++; p < end && isdig(*p); p++) {
			if (m != 0 || *p != '0')
				digits++;
			m = m * 10 + (unsigned)(*p - '0');
			e--;
			if (digits > 15)
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
	if (e >= -22 && e <= 22) {
		d = e >= 0 ? (double)m * pow10[e] : (double)m / pow10[-e];
		return neg ? -d : d;
	}
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
