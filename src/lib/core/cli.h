/*
 * cli: what every program's main() does the same way: --version, usage
 * on the right stream with the right status, numeric options parsed
 * strictly with one message.
 */
#ifndef PERF_CORE_CLI_H
#define PERF_CORE_CLI_H

#include <stdint.h>
#include <stdio.h>

#ifndef PERFKITE_VERSION
#define PERFKITE_VERSION "unknown"
#endif

/* Prints "<prog> (perfkite) <version>" on stdout and exits 0. */
void cli_version(void) __attribute__((noreturn));

/*
 * Prints text (the usage: the synopsis, a blank line, one line per
 * option) on stdout and exits 0 when status is 0 (--help), or its
 * synopsis alone (up to the blank line) on stderr and exits with status
 * otherwise (a usage error).
 */
void cli_usage(const char *text, int status) __attribute__((noreturn));

/*
 * The value s of the numeric option name: a whole number in [min, max]
 * (num_opt_long()) or a finite number in [min, max] (num_opt_double()).
 * Anything else prints "prog: name: not what: 's'" and the usage on
 * stderr, and exits 2; a NULL what reads "a number from MIN to MAX"
 * (%ld, or %g for a double).
 */
long cli_long(const char *usage, const char *name, const char *s, long min, long max,
    const char *what);
double cli_double(const char *usage, const char *name, const char *s, double min, double max,
    const char *what);

/*
 * The value s of an option name that is a span "lo:hi" of whole numbers,
 * min <= lo <= hi <= max, into *lo and *hi. Anything else prints
 * "prog: name: not min:max with MIN <= min <= max <= MAX: 's'" and the
 * usage on stderr, and exits 2.
 */
void cli_span(const char *usage, const char *name, const char *s, long min, long max, long *lo,
    long *hi);

/*
 * The --seed s: a non-negative integer as Python reads one, without '_'.
 * Anything else prints "prog: --seed: not a non-negative integer: 's'"
 * and the usage on stderr, and exits 2.
 */
unsigned long long cli_seed(const char *usage, const char *s);

/* The time s of option name (isotime_parse(), microseconds), as cli_long(). */
int64_t cli_time(const char *usage, const char *name, const char *s, const char *what);

#endif
