#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"

char buf_slopbuf[1];

void
buf_grow(buf *b, size_t extra)
{
	size_t need = b->len + extra + 1, had = b->cap;

	if (need <= b->cap)
		return;
	if (need < b->len)
		die("string too long");
	b->cap = b->cap ? b->cap : 64;
	while (b->cap < need)
		b->cap = b->cap > ((size_t)-1) / 2 ? need : b->cap * 2;
	if (had > 0)
		b->s = erealloc(b->s, b->cap);
	else {
		/* The slop buffer (or NULL) is not ours to realloc. */
		b->s = emalloc(b->cap);
		b->s[0] = '\0';
	}
}

void
buf_add(buf *b, const void *p, size_t n)
{
	buf_grow(b, n);
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void
buf_adds(buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_addc(buf *b, char c)
{
	buf_grow(b, 1);
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
}

void
buf_addf(buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("cannot format string");
	buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
buf_reset(buf *b)
{
	b->len = 0;
	if (b->cap > 0)
		b->s[0] = '\0';
	else
		b->s = buf_slopbuf;
}

void
buf_free(buf *b)
{
	if (b->cap > 0)
		free(b->s);
	b->s = buf_slopbuf;
	b->len = b->cap = 0;
}

char *
buf_detach(buf *b)
{
	char *s;

	s = b->cap > 0 ? b->s : estrdup("");
	b->s = buf_slopbuf;
	b->len = b->cap = 0;
	return s;
}

int
buf_read_file(buf *b, const char *path)
{
	char chunk[65536];
	ssize_t n;
	int fd, e;

	buf_reset(b);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	while ((n = read(fd, chunk, sizeof chunk)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		buf_add(b, chunk, (size_t)n);
	}
	close(fd);
	return 0;
}
