/*
 * isotime: ISO-8601 timestamps as the reference reads and writes them.
 * Instants are microseconds since 1970-01-01T00:00:00Z.
 */
#ifndef PERF_CORE_ISOTIME_H
#define PERF_CORE_ISOTIME_H

#include <stdbool.h>
#include <stdint.h>

/* The instant of an unparsable or missing timestamp: sorts oldest. */
#define ISOTIME_MIN INT64_MIN

/*
 * Python 3.11's datetime.fromisoformat(), every form it accepts and nothing
 * else: a date "YYYY-MM-DD", "YYYYMMDD", or an ISO week date "YYYY-Www",
 * "YYYYWww" (its Monday), "YYYY-Www-D", "YYYYWwwD"; optionally any one
 * character, then a time "HH[:MM[:SS[{.,}f...]]]" or "HH[MM[SS[{.,}f...]]]",
 * then "Z" or an offset "+HH[:MM[:SS[.f...]]]" (strictly within a day).
 * Ordinal dates ("2026-064") and 24:00 are refused, as 3.11 refuses them. A
 * naive time is UTC; a date alone is midnight UTC. s is UTF-8. Returns false
 * when s is not such a timestamp.
 */
bool isotime_parse(const char *s, int64_t *usec);

/*
 * The reference's datetime.now(timezone.utc).isoformat():
 * "2026-05-08T22:00:00.123456+00:00", without ".ffffff" when it is zero.
 */
char *isotime_format(char buf[40], int64_t usec);

/* The current UTC instant. */
int64_t isotime_now(void);

/* Broken-down UTC fields of an instant (for file names). */
void isotime_fields(int64_t usec, int *y, int *mo, int *d, int *h, int *mi,
    int *s, int *us);

#endif
