/*
 * err: one diagnostics helper for every program, and allocation that exits
 * on failure.
 *
 * Diagnostics are one line on stderr: "perf-x: FILE:LINE: what is wrong".
 * Arguments that come from input are passed through err_clean() so that no
 * raw control byte reaches a CI log.
 *
 * The names are err(3)'s, and git's for die_errno:
 *   warnx(fmt, ...)      "prog: msg"
 *   warn(fmt, ...)       "prog: msg: strerror(errno)"
 *   die(fmt, ...)        warnx, then exit(2)
 *   die_errno(fmt, ...)  warn, then exit(2)
 *   diag(file, line, ...) "prog: FILE:LINE: msg"
 * The errno variants read errno on entry, before anything can change it, so
 * a caller never passes strerror(errno) by hand.  glibc's <err.h> declares a
 * warn and a warnx of its own: no file includes it.
 *
 * One return convention: a function that does something (writes, reads,
 * creates, runs) returns 0 on success and -1 on failure, after saying why
 * through one of the functions here; bool is for predicates only (is_, has_,
 * can_: a question, not an action that may fail).
 */
#ifndef PERF_CORE_ERR_H
#define PERF_CORE_ERR_H

#include <stdarg.h>
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
void warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "prog: msg: strerror(errno)" on stderr, errno as it was on entry. */
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "prog: FILE:LINE: msg" on stderr; line <= 0 omits the line. */
void diag(const char *file, long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* warnx then exit(2). */
void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* warn then exit(2). */
void die_errno(const char *fmt, ...)
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
/* asprintf that exits on failure; evasprintf() the va_list form (ap is used up). */
char *easprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *evasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
