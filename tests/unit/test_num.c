/* Unit tests for num: Python's float repr, rounding, float() and int(). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/num.h"
#include "tap.h"

#include "pyfloat_vectors.h"
#include "pyint_vectors.h"
#include "repr_vectors.h"
#include "round_vectors.h"

static double
from_bits(unsigned long long b)
{
	double d;

	memcpy(&d, &b, sizeof d);
	return d;
}

/*
 * Python's repr by trial, as an oracle independent of num_repr's
 * algorithm: the fewest digits p whose correctly rounded p-digit decimal
 * reads back as x, or, at a power of two (whose interval is lopsided), the
 * next p-digit decimal up or down that does; written as num_repr lays out
 * digits and decimal exponent.
 */
static void
oracle_repr(char *out, double x)
{
	char t[64], u[32], v[64], digits[32], *e, *o = out;
	int p, exp10 = 0, n = 0;

	if (signbit(x))
		*o++ = '-';
	x = fabs(x);
	for (p = 1; p <= 17; p++) {
		snprintf(t, sizeof t, "%.*e", p - 1, x);
		if (strtod(t, NULL) == x)
			break;
		for (int step = -1; step <= 1; step += 2) {
			unsigned long long m = 0;
			int ue;

			for (e = t; *e != 'e'; e++)
				if (*e >= '0' && *e <= '9')
					m = m * 10 + (unsigned)(*e - '0');
			ue = atoi(e + 1);
			if (step < 0 && m == 1)
				continue;
			m += (unsigned long long)(long long)step;
			snprintf(u, sizeof u, "%llu", m);
			if ((int)strlen(u) > p)
				ue++;
			if ((int)strlen(u) < p) {
				/* 10^k less one digit: the p-digit decimal below is 99..9. */
				snprintf(u, sizeof u, "%llu", (m + 1) * 10 - 1);
				ue--;
			}
			snprintf(v, sizeof v, "%c.%se%d", u[0], u[1] ? u + 1 : "0", ue);
			if (strtod(v, NULL) == x) {
				strcpy(t, v);
				goto found;
			}
		}
	}
found:
	for (e = t; *e != 'e'; e++)
		if (*e >= '0' && *e <= '9')
			digits[n++] = *e;
	while (n > 1 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	exp10 = atoi(e + 1);
	if (exp10 < -4 || exp10 >= 16) {
		sprintf(o, "%c%s%se%c%02d", digits[0], n > 1 ? "." : "", digits + 1,
		    exp10 < 0 ? '-' : '+', abs(exp10));
	} else if (exp10 < 0) {
		sprintf(o, "0.%0*d%s", -exp10 - 1, 0, digits);
		if (exp10 == -1)
			sprintf(o, "0.%s", digits);
	} else if (exp10 + 1 >= n) {
		sprintf(o, "%s%0*d.0", digits, exp10 + 1 - n, 0);
		if (exp10 + 1 == n)
			sprintf(o, "%s.0", digits);
	} else {
		sprintf(o, "%.*s.%s", exp10 + 1, digits, digits + exp10 + 1);
	}
}

/* Doubles of every exponent: random bit patterns and powers of two with neighbours. */
static size_t
repr_against_oracle(void)
{
	char a[NUM_BUFSZ], b[NUM_BUFSZ];
	unsigned long long s = 0x9e3779b97f4a7c15ULL, bits;
	size_t bad = 0;

	for (int i = 0; i < 20000 + 3 * 2046; i++) {
		if (i < 20000) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			bits = s;
		} else {
			int k = i - 20000;
			bits = ((unsigned long long)(k / 3 + 1) << 52) + (unsigned)(k % 3) - 1;
		}
		double x = from_bits(bits);
		if (!isfinite(x) || x == 0)
			continue;
		num_repr(a, x);
		oracle_repr(b, x);
		if (strcmp(a, b) != 0 && bad++ < 5)
			printf("# repr of %016llx: got %s, the oracle says %s\n", bits, a, b);
	}
	return bad;
}

int
main(void)
{
	char out[NUM_BUFSZ];
	size_t i, bad = 0;
	double d;
	long long ll;
	long l;

	for (i = 0; i < sizeof repr_vectors / sizeof *repr_vectors; i++) {
		num_repr(out, from_bits(repr_vectors[i].bits));
		if (strcmp(out, repr_vectors[i].repr) != 0) {
			bad++;
			printf("# repr mismatch: got %s want %s\n", out,
			    repr_vectors[i].repr);
		}
	}
	ok(bad == 0, "repr() matches Python for %zu doubles",
	    sizeof repr_vectors / sizeof *repr_vectors);
	ok(repr_against_oracle() == 0,
	    "repr() matches the shortest round-trip digits found by trial for 26,000 doubles");
	is_str(num_repr(out, NAN), "nan", "repr of NaN");
	is_str(num_repr(out, -INFINITY), "-inf", "repr of -inf");
	is_str(num_repr(out, 1e16), "1e+16", "1e16 in exponent form");
	is_str(num_repr(out, 1e-5), "1e-05", "1e-05 has two exponent digits");

	bad = 0;
	for (i = 0; i < sizeof round_vectors / sizeof *round_vectors; i++) {
		double x = round_vectors[i].x;
		char a[NUM_BUFSZ], b[NUM_BUFSZ], c[NUM_BUFSZ], e[NUM_BUFSZ];

		num_repr(a, num_round(x, 3));
		num_repr(b, num_round(x, 1));
		num_fixed(c, x, 3);
		num_fixed(e, x, 1);
		if (strcmp(a, round_vectors[i].r3) || strcmp(b, round_vectors[i].r1) ||
		    strcmp(c, round_vectors[i].f3) || strcmp(e, round_vectors[i].f1)) {
			bad++;
			printf("# round mismatch for %a: %s %s %s %s\n", x, a, b, c, e);
		}
	}
	ok(bad == 0, "round() and format() match Python half-to-even for %zu values",
	    sizeof round_vectors / sizeof *round_vectors);
	is_str(num_fixed(out, -NAN, 3), "nan", "a negative NaN prints as nan");
	is_str(num_fixed(out, INFINITY, 1), "inf", "infinity prints as inf");

	bad = 0;
	for (i = 0; i < sizeof pyfloat_vectors / sizeof *pyfloat_vectors; i++) {
		bool got = num_py_float(pyfloat_vectors[i].in, &d);
		if (got != (pyfloat_vectors[i].valid != 0) ||
		    (got && strcmp(num_repr(out, d), pyfloat_vectors[i].repr) != 0)) {
			bad++;
			printf("# float('%s'): got %d %s\n", pyfloat_vectors[i].in,
			    got, got ? out : "");
		}
	}
	ok(bad == 0, "float(str) accepts and rejects what Python does");

	bad = 0;
	for (i = 0; i < sizeof pyint_vectors / sizeof *pyint_vectors; i++) {
		int got = num_py_int(pyint_vectors[i].in, &ll);
		if (got != pyint_vectors[i].valid || (got && ll != pyint_vectors[i].v)) {
			bad++;
			printf("# int('%s'): got %d %lld\n", pyint_vectors[i].in, got, ll);
		}
	}
	ok(bad == 0, "int(str) accepts and rejects what Python does");

	/* The JSON number fast path agrees with strtod on every literal. */
	{
		unsigned long long st = 12345;
		char lit[96];
		size_t k, len;
		int j, nd;

		bad = 0;
		for (k = 0; k < 200000; k++) {
			len = 0;
			st = st * 6364136223846793005ULL + 1442695040888963407ULL;
			if (st >> 63)
				lit[len++] = '-';
			nd = 1 + (int)((st >> 20) % 19);
			for (j = 0; j < nd; j++) {
				st = st * 6364136223846793005ULL + 1;
				lit[len++] = (char)('0' + (j == 0 && nd > 1 ? 1 + (st >> 33) % 9 : (st >> 33) % 10));
			}
			if ((st >> 40) % 3 == 0) {
				lit[len++] = '.';
				for (j = 0; j < 1 + (int)((st >> 44) % 12); j++)
					lit[len++] = (char)('0' + (st >> (j + 3)) % 10);
			}
			if ((st >> 50) % 4 == 0)
				len += (size_t)sprintf(lit + len, "e%d", (int)((st >> 52) % 60) - 30);
			lit[len] = '\0';
			d = num_parse_json(lit, len);
			if (memcmp(&d, &(double){ strtod(lit, NULL) }, sizeof d) != 0) {
				if (bad++ < 5)
					printf("# %s: %a vs %a\n", lit, d, strtod(lit, NULL));
			}
		}
		ok(bad == 0, "num_parse_json matches strtod on 200000 literals");
	}

	/*
	 * Numbers of 16 to 19 digits (a tool's %.17g), read in 64-bit
	 * precision: bit for bit strtod's on millions of literals, the halfway
	 * points between two doubles among them (integers whose low bits are
	 * 100...0, and those one off), with a point or an exponent moved, and
	 * the limits: subnormals, the largest double, past either end.
	 */
	{
		static const char *const edge[] = { "4.9e-324", "5e-324", "2.4703282292062327e-324",
		    "2.4703282292062328e-324", "2.2250738585072011e-308", "2.2250738585072014e-308",
		    "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
		    "1e-400", "1e400", "9007199254740993", "9007199254740992.5",
		    "18446744073709551615", "18446744073709551616", "9223372036854775808",
		    "9223372036854776833", "9223372036854776832", "1.0000000000000001110223024625156540e0",
		    "0.30000000000000004", "123456789012345678e-27", "123456789012345678e27",
		    "1844674407370955161.5e-27", "1e-27", "1e27", "1e28", "1e-28",
		    "-0.0", "-0", "0e27", "0.000000000000000000000000001234567890123456789" };
		unsigned long long st = 2024, k;
		char lit[96];
		long bad2 = 0, count = 0;
		size_t len;
		double want;

		for (size_t q = 0; q < sizeof edge / sizeof *edge; q++) {
			d = num_parse_json(edge[q], strlen(edge[q]));
			want = strtod(edge[q], NULL);
			count++;
			if (memcmp(&d, &want, sizeof d) != 0 && bad2++ < 5)
				printf("# %s: %a vs %a\n", edge[q], d, want);
		}
		for (long t = 0; t < 3000000; t++) {
			int bits, shape, pt;

			st = st * 6364136223846793005ULL + 1442695040888963407ULL;
			k = st ^ (st >> 29) * 0x9e3779b97f4a7c15ULL;
			st = st * 6364136223846793005ULL + 1442695040888963407ULL;
			shape = (int)(st >> 59);
			if (shape < 12) {
				/* A halfway point of doubles of 54 to 64 bits, or one off. */
				bits = 54 + (int)((st >> 40) % 11);
				k = (k >> (64 - bits)) | 1ULL << (bits - 1);
				k = (k & ~((1ULL << (bits - 53)) - 1)) | 1ULL << (bits - 54);
				k += (unsigned long long)((int)((st >> 20) % 3) - 1);
			} else
				k %= 10000000000000000000ULL;	/* up to 19 digits */
			len = (size_t)sprintf(lit, "%s%llu", st >> 58 & 1 ? "-" : "", k);
			pt = (int)((st >> 8) % 24);
			if (pt > 0 && pt < 12 && (size_t)pt < len - 1) {
				/* a point pt digits from the end */
				memmove(lit + len - pt + 1, lit + len - pt, (size_t)pt + 1);
				lit[len - pt] = '.';
				len++;
			}
			if ((st >> 16) % 3 == 0)
				len += (size_t)sprintf(lit + len, "e%d", (int)((st >> 24) % 71) - 35);
			else if ((st >> 16) % 7 == 1)
				len += (size_t)sprintf(lit + len, "E+%d", (int)((st >> 24) % 300));
			else if ((st >> 16) % 7 == 2)
				len += (size_t)sprintf(lit + len, "e-%d", 280 + (int)((st >> 24) % 60));
			d = num_parse_json(lit, len);
			want = strtod(lit, NULL);
			count++;
			if (memcmp(&d, &want, sizeof d) != 0 && bad2++ < 5)
				printf("# %s: %a vs %a\n", lit, d, want);
		}
		ok(bad2 == 0, "num_parse_json matches strtod on %ld long literals: halfway points, limits", count);
	}

	ok(num_opt_long("42", 0, 100, &l) && l == 42, "option integer");
	ok(!num_opt_long("42x", 0, 100, &l), "option integer rejects trailing junk");
	ok(!num_opt_long("", 0, 100, &l), "option integer rejects empty");
	ok(!num_opt_long("101", 0, 100, &l), "option integer rejects out of range");
	ok(!num_opt_long("99999999999999999999999", 0, 100, &l),
	    "option integer rejects overflow");
	ok(num_opt_double("0.5", 0, 1, &d) && d == 0.5, "option double");
	ok(!num_opt_double("nan", 0, 1, &d), "option double rejects nan");
	ok(!num_opt_double("inf", 0, 1e9, &d), "option double rejects inf");
	ok(!num_opt_double("0x10", 0, 100, &d), "option double rejects hex");
	{
		/* num_hex: printf's %a, byte for byte, and exact. */
		static const double edge[] = { 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-310, -5e-324,
		    DBL_MIN, DBL_MAX, 1e300, 1e-300, 0.1, 1.0 / 3, INFINITY, -INFINITY, NAN };
		char a[64], h[64];
		uint64_t u = 88172645463325252ULL;
		size_t nbad = 0;

		for (i = 0; i < 200000 + sizeof edge / sizeof *edge; i++) {
			double x;

			if (i < sizeof edge / sizeof *edge)
				x = edge[i];
			else {
				u ^= u << 13;
				u ^= u >> 7;
				u ^= u << 17;
				memcpy(&x, &u, sizeof x);
			}
			snprintf(a, sizeof a, "%a", x);
			*num_hex(h, x) = '\0';
			if (strcmp(a, h) != 0 || (!isnan(x) && memcmp(&x, &(double){ strtod(h, NULL) },
			    sizeof x) != 0)) {
				if (nbad++ < 5)
					printf("# num_hex: %s, printf: %s\n", h, a);
			}
		}
		ok(nbad == 0, "num_hex writes what printf's %%a writes, and strtod reads it back, "
		    "on 200000 doubles");
	}
	return done_testing();
}
