#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/num.h"
#include "core/unit.h"

const char *
better_name(enum better b)
{
	return b == BETTER_LOWER ? "lower" : b == BETTER_HIGHER ? "higher" : "unknown";
}

bool
better_parse(const char *s, enum better *b)
{
	if (strcmp(s, "lower") == 0)
		*b = BETTER_LOWER;
	else if (strcmp(s, "higher") == 0)
		*b = BETTER_HIGHER;
	else
		return false;
	return true;
}

struct scale {
	const char *name;
	double factor;
};

static const struct scale times[] = {
	{ "ns", 1e-9 }, { "us", 1e-6 }, { "\xc2\xb5s", 1e-6 }, { "\xce\xbcs", 1e-6 },
	{ "ms", 1e-3 }, { "s", 1 }, { "sec", 1 }, { "min", 60 }, { "h", 3600 },
};

static const struct scale sizes[] = {
	{ "B", 1 }, { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 },
	{ "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
	{ "TiB", 1099511627776.0 },
};

/* The factor of s[0..n) in table t, or 0 when it is not there. */
static double
lookup(const struct scale *t, size_t nt, const char *s, size_t n)
{
	for (size_t i = 0; i < nt; i++)
		if (strlen(t[i].name) == n && memcmp(t[i].name, s, n) == 0)
			return t[i].factor;
	return 0;
}

#define LOOKUP(t, s, n) lookup(t, sizeof t / sizeof *t, s, n)

/* Whether s[0..n) is word. */
static bool
is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

bool
unit_canonical(const char *unit, const char **canonical, double *factor)
{
	const char *slash = strchr(unit, '/'), *per;
	size_t head = slash != NULL ? (size_t)(slash - unit) : strlen(unit);
	double f, t;

	*canonical = unit;
	*factor = 1;
	/* A time or a size, alone or per operation (Go's ns/op and B/op). */
	if (slash == NULL || strcmp(slash, "/op") == 0) {
		if ((f = LOOKUP(times, unit, head)) > 0)
			*canonical = "s";
		else if ((f = LOOKUP(sizes, unit, head)) > 0)
			*canonical = "B";
		else if (slash == NULL && strcmp(unit, "Hz") == 0) {
			*canonical = "1/s";
			f = 1;
		} else
			return false;
		*factor = f;
		return true;
	}
	/* A rate: a size, items or operations per a time. */
	per = slash + 1;
	if ((t = LOOKUP(times, per, strlen(per))) == 0)
		return false;
	if ((f = LOOKUP(sizes, unit, head)) > 0)
		*canonical = "B/s";
	else if (is(unit, head, "items")) {
		*canonical = "items/s";
		f = 1;
	} else if (is(unit, head, "ops") || is(unit, head, "op") || is(unit, head, "1")) {
		*canonical = "1/s";
		f = 1;
	} else
		return false;
	*factor = f / t;
	return true;
}

/* Whether unit is word, or word + "/op". */
static bool
is_count(const char *unit, const char *word)
{
	size_t n = strlen(word);

	return strncmp(unit, word, n) == 0 && (unit[n] == '\0' || strcmp(unit + n, "/op") == 0);
}

enum better
unit_better(const char *unit)
{
	static const char *const counts[] = { "allocs", "allocations", "alloc",
	    "instructions", "instr", "insns", "cycles" };
	const char *canonical, *slash = strchr(unit, '/');
	double f;

	if (unit_canonical(unit, &canonical, &f))
		return strchr(canonical, '/') != NULL ? BETTER_HIGHER : BETTER_LOWER;
	for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
		if (is_count(unit, counts[i]))
			return BETTER_LOWER;
	if (strncmp(unit, "ops/", 4) == 0)
		return BETTER_HIGHER;
	/* Anything per second, or per any other time unit. */
	if (slash != NULL && LOOKUP(times, slash + 1, strlen(slash + 1)) > 0)
		return BETTER_HIGHER;
	return BETTER_UNKNOWN;
}

/* Prints v with decimals decimals, the prefix and the unit, into buf. */
static char *
put(char buf[UNIT_FMTSZ], double v, int decimals, const char *sep, const char *prefix,
    const char *unit)
{
	char n[NUM_BUFSZ];

	snprintf(buf, UNIT_FMTSZ, "%s%s%s%s", num_fixed(n, v, decimals), sep, prefix, unit);
	return buf;
}

/*
 * The decimals that tell multiples of step apart once divided by scale:
 * one at least (unit_format's), more for a finer step (0.02 shown: two).
 */
static int
step_decimals(double step, double scale)
{
	double r = step / scale;
	int d;

	if (!(r > 0) || !isfinite(r) || r >= 0.1)
		return 1;
	d = (int)ceil(-log10(r) - 1e-9);
	return d < 1 ? 1 : d > 15 ? 15 : d;
}

/*
 * The power of 1000 (from lo to hi) that puts |v| in [1, 1000) once
 * rounded to one decimal.
 */
static int
power_of(double v, int lo, int hi)
{
	double a = fabs(v);
	int p = lo;

	if (a == 0)
		return 0 < lo ? lo : 0 > hi ? hi : 0;
	while (p < hi && a / pow(1000, p) >= 999.95)
		p++;
	while (p > lo && a / pow(1000, p) < 0.95)
		p--;
	return p;
}

char *
unit_format(char buf[UNIT_FMTSZ], double v, const char *unit)
{
	return unit_format_step(buf, v, 0, unit);
}

char *
unit_format_step(char buf[UNIT_FMTSZ], double v, double step, const char *unit)
{
	static const char *const tpre[] = { "ps", "ns", "us", "ms", "s" };
	static const char *const spre[] = { "", "k", "M", "G", "T", "P" };
	static const char *const bpre[] = { "", "K", "M", "G", "T", "P" };
	char n[NUM_BUFSZ];
	int p;

	if (!isfinite(v)) {
		snprintf(buf, UNIT_FMTSZ, "n/a");
		return buf;
	}
	if (strcmp(unit, "s") == 0) {
		/* Upwards from 1 s, in s: "120.0 s". */
		p = fabs(v) >= 0.95 ? 0 : power_of(v, -4, 0);
		return put(buf, v / pow(1000, p), step_decimals(step, pow(1000, p)), " ",
		    tpre[p + 4], "");
	}
	if (strcmp(unit, "B") == 0 || strcmp(unit, "B/s") == 0) {
		p = power_of(v, 0, 5);
		return put(buf, v / pow(1000, p), step_decimals(step, pow(1000, p)), " ", bpre[p],
		    unit);
	}
	if (strcmp(unit, "1/s") == 0) {
		p = power_of(v, 0, 5);
		return put(buf, v / pow(1000, p), step_decimals(step, pow(1000, p)), "", spre[p],
		    "/s");
	}
	if (strcmp(unit, "items/s") == 0) {
		p = power_of(v, 0, 5);
		snprintf(buf, UNIT_FMTSZ, "%s%s items/s", num_fixed(n, v / pow(1000, p),
		    step_decimals(step, pow(1000, p))), spre[p]);
		return buf;
	}
	if (step > 0 && isfinite(step) && step < 1e-5 * fabs(v))
		/* an axis whose step %.6g cannot show: the step's decimals */
		snprintf(buf, UNIT_FMTSZ, "%s%s%.64s", num_fixed(n, v, step < 1 ?
		    (int)ceil(-log10(step) - 1e-9) : 0), *unit ? " " : "", unit);
	else
		snprintf(buf, UNIT_FMTSZ, "%.6g%s%.64s", v, *unit ? " " : "", unit);
	return buf;
}
