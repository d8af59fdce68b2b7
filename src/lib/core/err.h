/*
 * err: one diagnostics helper for every program, and allocation that exits
 * on failure.
 *
 * Diagnostics are one line on stderr: "perf-x: FILE:LINE: what is wrong".
 * Arguments that come from input are passed through err_clean() so that no
 * raw control byte reaches a CI log.
 */
#ifndef PERF_CORE_ERR_H
#define PERF_CORE_ERR_H

#include <stdbool.h>
#include <stddef.h>

/* Exit statuses shared by every program. */
enum { EXIT_PASS = 0, EXIT_GATE = 1, EXIT_TROUBLE = 2 };

/*
 * Sets the name printed before every diagnostic (basename of argv[0]), and
 * ignores SIGXFSZ, so that a write past a file size limit fails with EFBIG
 * and is reported (a child the program starts gets the default back).
 */
void err_init(const char *argv0);
const char *err_progname(void);
/* Silences every diagnostic (the fuzz targets, which feed garbage on purpose). */
void err_quiet(bool q);

/* A line already formatted (as diag() would), on stderr. */
void err_print(const char *line);
/* "prog: msg" on stderr. */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "prog: FILE:LINE: msg" on stderr; line <= 0 omits the line. */
void diag(const char *file, long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* warnx_ then exit(2). */
void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/*
 * Copies s into buf (size n), replacing control bytes and DEL with '?' and
 * shortening with "..." when too long. Returns buf.
 */
char *err_clean(const char *s, char *buf, size_t n);

void *emalloc(size_t n);
void *ecalloc(size_t n, size_t m);
void *erealloc(void *p, size_t n);
char *estrdup(const char *s);
char *estrndup(const char *s, size_t n);
/* asprintf that exits on failure. */
char *easprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
