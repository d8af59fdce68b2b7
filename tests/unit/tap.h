/*
 * tap.h: the smallest TAP producer for the library's unit tests.
 * Each test binary prints "ok N - name" / "not ok N - name" lines and a
 * final plan; tests/run counts them.
 */
#ifndef PERF_TAP_H
#define PERF_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

__attribute__((format(printf, 4, 5), unused)) static int
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", pass ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!pass) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	return pass;
}

/* String equality with both values shown on failure. */
#define is_str(got, want, ...) do {					\
	const char *g_ = (got), *w_ = (want);				\
	if (!ok(g_ != NULL && w_ != NULL && strcmp(g_, w_) == 0, __VA_ARGS__)) \
		printf("#   got:  '%s'\n#   want: '%s'\n", g_ ? g_ : "(null)", \
		    w_ ? w_ : "(null)");				\
} while (0)

__attribute__((unused)) static int
done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
