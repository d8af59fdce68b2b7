#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/isotime.h"

#define USEC 1000000LL

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void
civil_from_days(int64_t z, int *y, int *m, int *d)
{
	int64_t era;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

static int
month_days(int y, int m)
{
	static const int md[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : md[m - 1];
}

/*
 * The parser below follows CPython 3.11's C implementation of
 * datetime.fromisoformat() step by step (the separator search, the date, the
 * "HH[:MM[:SS[.f]]]" reader and the offset), over the UTF-8 bytes of the
 * string, because its quirks are part of what the reference accepts:
 * "2026W10123" is week 10 at 23:00, "12:34:56:78" has 0.78 s, an offset
 * "+00:00:00.5" is UTC. Each helper reads up to the string's terminating
 * NUL, never past it, as CPython's do.
 */

/* CPython's parse_digits(): n digits accumulated into *v, or NULL. */
static const char *
parse_digits(const char *p, int *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(*p++ - '0');

		if (d > 9)
			return NULL;
		*v = *v * 10 + (int)d;
	}
	return p;
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Where the date ends: 7 ("YYYYWww"), 8 ("YYYYMMDD", "YYYY-Www",
 * "YYYYWwwD") or 10 ("YYYY-MM-DD", "YYYY-Www-D"); -1 when it cannot be told.
 */
static long
find_separator(const char *s, size_t len)
{
	size_t i;

	if (len == 7)
		return 7;
	if (s[4] == '-') {
		if (s[5] != 'W')
			return 10;
		if (len > 8 && s[8] == '-') {
			if (len == 9)
				return -1;
			/* "YYYY-Www-##": a hyphen separator at 8 is likelier. */
			return len > 10 && is_digit(s[10]) ? 8 : 10;
		}
		return 8;
	}
	if (s[4] != 'W')
		return 8;
	for (i = 7; i < len && is_digit(s[i]); i++)
		;
	if (i < 9)
		return (long)i;
	/* Time fields come in pairs: an odd digit run holds the weekday. */
	return i % 2 == 0 ? 7 : 8;
}

/* Ordinal of the Monday of ISO week 1 (0001-01-01 is day 1, a Monday). */
static int64_t
iso_week1_monday(int y)
{
	int64_t first = days_from_civil(y, 1, 1) + 719163;
	int wd = (int)((first + 6) % 7);

	return first - wd + (wd > 3 ? 7 : 0);
}

/* "YYYY-MM-DD", "YYYYMMDD", "YYYY-Www[-D]", "YYYYWww[D]" in len bytes. */
static bool
parse_date(const char *s, size_t len, int *y, int *mo, int *d)
{
	const char *p;
	bool sep;
	int week = 0, wd = 0;
	int64_t ord;

	*y = *mo = *d = 0;
	if ((p = parse_digits(s, y, 4)) == NULL)
		return false;
	sep = *p == '-';
	p += sep;
	if (*p != 'W') {
		if ((p = parse_digits(p, mo, 2)) == NULL)
			return false;
		if (sep && *p++ != '-')
			return false;
		return parse_digits(p, d, 2) != NULL;
	}
	if ((p = parse_digits(p + 1, &week, 2)) == NULL)
		return false;
	if ((size_t)(p - s) < len) {
		if (sep && *p++ != '-')
			return false;
		if (parse_digits(p, &wd, 1) == NULL)
			return false;
	} else
		wd = 1;
	/* Year 0 has no Monday of week 1 in range: CPython refuses it. */
	if (*y < 1)
		return false;
	if (week < 1 || week > 52) {
		int64_t jan1 = days_from_civil(*y, 1, 1) + 719163;
		int first = (int)((jan1 + 6) % 7);

		if (week != 53 || !(first == 3 ||
		    (first == 2 && month_days(*y, 2) == 29)))
			return false;
	}
	if (wd < 1 || wd > 7)
		return false;
	ord = iso_week1_monday(*y) + (week - 1) * 7 + wd - 1;
	civil_from_days(ord - 719163, y, mo, d);
	return true;
}

/*
 * CPython's parse_hh_mm_ss_ff() over [p, end): 0 when it ends at the end of
 * the string, 1 when something follows, -1 when malformed.
 */
static int
parse_hms(const char *p, const char *end, int f[4])
{
	bool colon = true;
	size_t n;

	f[0] = f[1] = f[2] = f[3] = 0;
	for (int i = 0; i < 3; i++) {
		char c;

		if ((p = parse_digits(p, &f[i], 2)) == NULL)
			return -1;
		c = *p++;
		if (i == 0)
			colon = c == ':';
		if (p >= end)
			return c != '\0';
		if (colon && c == ':')
			continue;
		if (c == '.' || c == ',')
			break;
		if (colon)
			return -1;
		p--;
	}
	n = (size_t)(end - p) < 6 ? (size_t)(end - p) : 6;
	if ((p = parse_digits(p, &f[3], n)) == NULL)
		return -1;
	for (; n < 6; n++)
		f[3] *= 10;
	while (is_digit(*p))
		p++;
	return *p != '\0';
}

/*
 * CPython's parse_isoformat_time() on n bytes: 0 naive, 1 with an offset
 * (*off microseconds east of UTC), -1 malformed.
 */
static int
parse_time(const char *s, size_t n, int f[4], int64_t *off)
{
	const char *end = s + n, *tz = s;
	int tf[4], rv, sign;

	do {
		if (*tz == 'Z' || *tz == '+' || *tz == '-')
			break;
	} while (++tz < end);
	if ((rv = parse_hms(s, tz, f)) < 0)
		return -1;
	if (tz == end)
		return rv == 1 ? -1 : 0;
	*off = 0;
	if (*tz == 'Z')
		return tz[1] == '\0' ? 1 : -1;
	sign = *tz == '-' ? -1 : 1;
	if (parse_hms(tz + 1, end, tf) != 0)
		return -1;
	/* A whole-second offset of zero is UTC, whatever its fraction. */
	if (tf[0] * 3600 + tf[1] * 60 + tf[2] != 0)
		*off = sign * (((int64_t)tf[0] * 3600 + tf[1] * 60 + tf[2]) *
		    USEC + tf[3]);
	return 1;
}

/* Code points of valid UTF-8. */
static size_t
utf8_len(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

bool
isotime_parse(const char *s, int64_t *usec)
{
	size_t len = strlen(s);
	long sep;
	int y, mo, d, f[4] = { 0, 0, 0, 0 };
	int64_t off = 0;

	if (utf8_len(s) < 7)
		return false;
	/* -1 only for "YYYY-Www-", which CPython's date parser then refuses. */
	if ((sep = find_separator(s, len)) < 0 ||
	    !parse_date(s, (size_t)sep, &y, &mo, &d))
		return false;
	if (len > (size_t)sep) {
		/* The separator is any one character, however many bytes. */
		unsigned char c = (unsigned char)s[sep];
		size_t skip = (c & 0x80) == 0 ? 1 : (c & 0xf0) == 0xe0 ? 3 :
		    (c & 0xf0) == 0xf0 ? 4 : 2;

		if (skip > len - (size_t)sep ||
		    parse_time(s + sep + skip, len - (size_t)sep - skip, f, &off) < 0)
			return false;
	}
	if (y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 ||
	    d > month_days(y, mo) || f[0] > 23 || f[1] > 59 || f[2] > 59)
		return false;
	if (off <= -86400 * USEC || off >= 86400 * USEC)
		return false;
	*usec = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 * USEC +
	    ((int64_t)f[0] * 3600 + f[1] * 60 + f[2]) * USEC + f[3] - off;
	return true;
}

void
isotime_fields(int64_t usec, int *y, int *mo, int *d, int *h, int *mi,
    int *s, int *us)
{
	int64_t days = usec / (86400 * USEC), rem = usec % (86400 * USEC);

	if (rem < 0) {
		rem += 86400 * USEC;
		days--;
	}
	civil_from_days(days, y, mo, d);
	*us = (int)(rem % USEC);
	rem /= USEC;
	*h = (int)(rem / 3600);
	*mi = (int)(rem / 60 % 60);
	*s = (int)(rem % 60);
}

char *
isotime_format(char buf[40], int64_t usec)
{
	int y, mo, d, h, mi, s, us;

	isotime_fields(usec, &y, &mo, &d, &h, &mi, &s, &us);
	if (us != 0)
		snprintf(buf, 40, "%04d-%02d-%02dT%02d:%02d:%02d.%06d+00:00",
		    y, mo, d, h, mi, s, us);
	else
		snprintf(buf, 40, "%04d-%02d-%02dT%02d:%02d:%02d+00:00",
		    y, mo, d, h, mi, s);
	return buf;
}

int64_t
isotime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * USEC + ts.tv_nsec / 1000;
}
