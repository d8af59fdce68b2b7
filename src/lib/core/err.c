#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

static const char *progname = "perfkite";
static bool quiet;

void
err_quiet(bool q)
{
	quiet = q;
}

void
err_init(const char *argv0)
{
	const char *slash;

	/* A file size limit is a write error (EFBIG) to report, not a silent death. */
	signal(SIGXFSZ, SIG_IGN);
	if (argv0 == NULL || *argv0 == '\0')
		return;
	slash = strrchr(argv0, '/');
	progname = slash != NULL ? slash + 1 : argv0;
}

const char *
err_progname(void)
{
	return progname;
}

/*
 * Formats fmt, appends ": why" when why is not NULL, and prints the line;
 * the whole message is cut at the buffer's size as one vsnprintf would.
 */
static void
vline(const char *file, long line, const char *why, const char *fmt, va_list ap)
{
	char msg[2048], clean[2048];
	int n;

	if (quiet)
		return;
	n = vsnprintf(msg, sizeof msg, fmt, ap);
	if (why != NULL && n >= 0 && (size_t)n < sizeof msg - 1)
		snprintf(msg + n, sizeof msg - (size_t)n, ": %s", why);
	/* The message may embed input text: never let a control byte out. */
	err_clean(msg, clean, sizeof clean);
	if (file != NULL && line > 0)
		fprintf(stderr, "%s: %s:%ld: %s\n", progname, file, line, clean);
	else if (file != NULL)
		fprintf(stderr, "%s: %s: %s\n", progname, file, clean);
	else
		fprintf(stderr, "%s: %s\n", progname, clean);
	fflush(stderr);
}

void
err_print(const char *line)
{
	if (quiet)
		return;
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
}

void
warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(NULL, 0, NULL, fmt, ap);
	va_end(ap);
}

void
warn(const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vline(NULL, 0, strerror(e), fmt, ap);
	va_end(ap);
	errno = e;
}

void
diag(const char *file, long line, const char *fmt, ...)
{
	va_list ap;
	char f[512];

	va_start(ap, fmt);
	vline(file != NULL ? err_clean(file, f, sizeof f) : NULL, line, NULL, fmt, ap);
	va_end(ap);
}

void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(NULL, 0, NULL, fmt, ap);
	va_end(ap);
	exit(EXIT_TROUBLE);
}

void
die_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vline(NULL, 0, strerror(e), fmt, ap);
	va_end(ap);
	exit(EXIT_TROUBLE);
}

char *
err_clean(const char *s, char *buf, size_t n)
{
	size_t i = 0;

	if (n == 0)
		return buf;
	for (; *s != '\0' && i + 1 < n; s++) {
		unsigned char c = (unsigned char)*s;
		buf[i++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	buf[i] = '\0';
	if (*s != '\0' && n > 4)
		memcpy(buf + n - 4, "...", 4);
	return buf;
}

void *
emalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		die("out of memory (%zu bytes)", n);
	return p;
}

void *
ecalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);

	if (p == NULL)
		die("out of memory");
	return p;
}

void *
erealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		die("out of memory (%zu bytes)", n);
	return p;
}

char *
estrdup(const char *s)
{
	return estrndup(s, strlen(s));
}

char *
estrndup(const char *s, size_t n)
{
	char *p;

	n = strnlen(s, n);	/* at most n bytes, never past the end of s */
	p = emalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
evasprintf(const char *fmt, va_list ap)
{
	va_list again;
	char *p;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n < 0)
		die("cannot format message");
	p = emalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, again);
	va_end(again);
	return p;
}

char *
easprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = evasprintf(fmt, ap);
	va_end(ap);
	return p;
}
