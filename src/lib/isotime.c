#include <stdio.h>
#include <string.h>
#include <time.h>

#include "isotime.h"

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

static bool
digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

static int
month_days(int y, int m)
{
	static const int md[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : md[m - 1];
}

/* Parses "HH[:MM[:SS[.f]]]" or "HHMM[SS[.f]]" of exactly n bytes. */
static bool
parse_clock(const char *s, size_t n, int64_t *usec)
{
	int h = 0, mi = 0, sec = 0, frac = 0, fd = 0;
	size_t i;
	bool colon = n > 2 && s[2] == ':';

	if (n < 2 || !digits(s, 2, &h))
		return false;
	i = 2;
	if (i < n) {
		if (colon)
			i++;
		if (i + 2 > n || !digits(s + i, 2, &mi))
			return false;
		i += 2;
	}
	if (i < n) {
		if (colon) {
			if (s[i] != ':')
				return false;
			i++;
		}
		if (i + 2 > n || !digits(s + i, 2, &sec))
			return false;
		i += 2;
	}
	if (i < n) {
		if (s[i] != '.' && s[i] != ',')
			return false;
		i++;
		if (i == n)
			return false;
		for (; i < n; i++) {
			if (s[i] < '0' || s[i] > '9')
				return false;
			if (fd < 6) {
				frac = frac * 10 + (s[i] - '0');
				fd++;
			}
		}
		while (fd < 6) {
			frac *= 10;
			fd++;
		}
	}
	if (h > 23 || mi > 59 || sec > 59)
		return false;
	*usec = ((int64_t)h * 3600 + mi * 60 + sec) * USEC + frac;
	return true;
}

bool
isotime_parse(const char *s, int64_t *usec)
{
	size_t n = strlen(s), dlen, tend, i;
	int y, mo, d;
	int64_t t = 0, off = 0;
	bool basic;

	if (n < 8)
		return false;
	/* The date: extended "YYYY-MM-DD" or basic "YYYYMMDD". */
	basic = s[4] != '-';
	if (basic) {
		if (!digits(s, 4, &y) || !digits(s + 4, 2, &mo) ||
		    !digits(s + 6, 2, &d))
			return false;
		dlen = 8;
	} else {
		if (n < 10 || !digits(s, 4, &y) || !digits(s + 5, 2, &mo) ||
		    s[7] != '-' || !digits(s + 8, 2, &d))
			return false;
		dlen = 10;
	}
	if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo))
		return false;
	if (n > dlen) {
		/* Any single separator, then the time. */
		const char *ts = s + dlen + 1;
		size_t tn = n - dlen - 1;

		if (n == dlen + 1)
			return false;
		tend = tn;
		for (i = 0; i < tn; i++)
			if (ts[i] == 'Z' || ts[i] == '+' || ts[i] == '-') {
				tend = i;
				break;
			}
		if (!parse_clock(ts, tend, &t))
			return false;
		if (tend < tn) {
			if (ts[tend] == 'Z') {
				if (tend + 1 != tn)
					return false;
			} else {
				int64_t o;

				if (!parse_clock(ts + tend + 1, tn - tend - 1, &o))
					return false;
				off = ts[tend] == '-' ? -o : o;
			}
		}
	}
	*usec = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 * USEC +
	    t - off;
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
