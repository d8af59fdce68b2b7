/* Unit tests for cli: usage and version streams and statuses, numeric and time options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/cli.h"
#include "core/err.h"
#include "tap.h"

/* Runs fn in a child; returns its exit status, stdout and stderr text. */
static int
child(void (*fn)(void), char *out, char *errs, size_t n)
{
	int po[2], pe[2], st;
	ssize_t k;
	pid_t pid;

	fflush(stdout);
	pipe(po);
	pipe(pe);
	if ((pid = fork()) == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		fn();
		_exit(99);
	}
	close(po[1]);
	close(pe[1]);
	k = read(po[0], out, n - 1);
	out[k > 0 ? k : 0] = '\0';
	k = read(pe[0], errs, n - 1);
	errs[k > 0 ? k : 0] = '\0';
	waitpid(pid, &st, 0);
	close(po[0]);
	close(pe[0]);
	return WEXITSTATUS(st);
}

static void help(void) { cli_usage("usage: x\n", 0); }
static void bad(void) { cli_usage("usage: x\n", 2); }
static void version(void) { cli_version(); }
static void long_ok(void) { printf("%ld\n", cli_long("usage: x\n", "--n", "42", 1, 100, NULL)); exit(0); }
static void long_range(void) { cli_long("usage: x\n", "--n", "101", 1, 100, NULL); }
static void long_junk(void) { cli_long("usage: x\n", "--n", "4x", 1, 100, "a positive integer"); }
static void double_ok(void) { printf("%g\n", cli_double("usage: x\n", "--z", "0.25", 0.1, 100, NULL)); exit(0); }
static void double_range(void) { cli_double("usage: x\n", "--z", "0.05", 0.1, 100, NULL); }
static void double_inf(void) { cli_double("usage: x\n", "--m", "inf", 0, 1e300, "a number of 0 or more"); }
static void span_ok(void)
{
	long lo, hi;

	cli_span("usage: x\n", "--p", "3:7", 1, 10, &lo, &hi);
	printf("%ld %ld\n", lo, hi);
	exit(0);
}
static void span_reversed(void) { long lo, hi; cli_span("usage: x\n", "--p", "7:3", 1, 10, &lo, &hi); }
static void span_one(void) { long lo, hi; cli_span("usage: x\n", "--p", "5", 1, 10, &lo, &hi); }
static void span_range(void) { long lo, hi; cli_span("usage: x\n", "--p", "0:5", 1, 10, &lo, &hi); }
static void time_bad(void) { cli_time("usage: x\n", "--now", "yesterday", "an ISO 8601 time"); }

int
main(void)
{
	char out[256], errs[256];

	err_init("perf-x");
	ok(child(help, out, errs, sizeof out) == 0 && strcmp(out, "usage: x\n") == 0 &&
	    errs[0] == '\0', "-h: usage on stdout, exit 0");
	ok(child(bad, out, errs, sizeof out) == 2 && out[0] == '\0' &&
	    strcmp(errs, "usage: x\n") == 0, "usage error: usage on stderr, exit 2");
	ok(child(version, out, errs, sizeof out) == 0 &&
	    strcmp(out, "perf-x (perfkite) " PERFKITE_VERSION "\n") == 0,
	    "--version: name and version");
	ok(child(long_ok, out, errs, sizeof out) == 0 && strcmp(out, "42\n") == 0 && errs[0] == '\0',
	    "cli_long: a number in range is its value");
	ok(child(long_range, out, errs, sizeof out) == 2 && out[0] == '\0', "cli_long: out of range, exit 2");
	is_str(errs, "perf-x: --n: not a number from 1 to 100: '101'\nusage: x\n",
	    "cli_long: the range in the message, then the usage");
	ok(child(long_junk, out, errs, sizeof out) == 2, "cli_long: trailing junk, exit 2");
	is_str(errs, "perf-x: --n: not a positive integer: '4x'\nusage: x\n",
	    "cli_long: the caller's words");
	ok(child(double_ok, out, errs, sizeof out) == 0 && strcmp(out, "0.25\n") == 0,
	    "cli_double: a number in range is its value");
	ok(child(double_range, out, errs, sizeof out) == 2, "cli_double: out of range, exit 2");
	is_str(errs, "perf-x: --z: not a number from 0.1 to 100: '0.05'\nusage: x\n",
	    "cli_double: the range as %%g");
	ok(child(double_inf, out, errs, sizeof out) == 2, "cli_double: infinity is refused");
	is_str(errs, "perf-x: --m: not a number of 0 or more: 'inf'\nusage: x\n",
	    "cli_double: the caller's words");
	ok(child(span_ok, out, errs, sizeof out) == 0 && strcmp(out, "3 7\n") == 0 && errs[0] == '\0',
	    "cli_span: lo:hi in range is its two values");
	ok(child(span_reversed, out, errs, sizeof out) == 2, "cli_span: lo above hi, exit 2");
	is_str(errs, "perf-x: --p: not min:max with 1 <= min <= max <= 10: '7:3'\nusage: x\n",
	    "cli_span: the bounds in the message, then the usage");
	ok(child(span_one, out, errs, sizeof out) == 2, "cli_span: one number is not a span");
	ok(child(span_range, out, errs, sizeof out) == 2, "cli_span: lo below min, exit 2");
	is_str(errs, "perf-x: --p: not min:max with 1 <= min <= max <= 10: '0:5'\nusage: x\n",
	    "cli_span: out of range is refused alike");
	ok(child(time_bad, out, errs, sizeof out) == 2, "cli_time: not a time, exit 2");
	is_str(errs, "perf-x: --now: not an ISO 8601 time: 'yesterday'\nusage: x\n",
	    "cli_time: the caller's words");
	return done_testing();
}
