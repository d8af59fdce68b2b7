/*
 * buf: a growable byte string. Every function exits on allocation failure;
 * the content is always NUL-terminated, and s is never NULL (git's
 * strbuf_slopbuf): an empty buf that owns no memory (cap 0: BUF_INIT,
 * after buf_free() or buf_detach()) points at buf_slopbuf, one shared ""
 * that is never freed and never written but for its terminating NUL. A buf
 * zeroed by memset() or { 0 } is such an empty buf to every function here,
 * and its s is buf_slopbuf after the first of them.
 */
#ifndef PERF_CORE_BUF_H
#define PERF_CORE_BUF_H

#include <stddef.h>

typedef struct {
	char *s;
	size_t len;
	size_t cap;
} buf;

extern char buf_slopbuf[1];

#define BUF_INIT { buf_slopbuf, 0, 0 }

void buf_grow(buf *b, size_t extra);
void buf_add(buf *b, const void *p, size_t n);
void buf_adds(buf *b, const char *s);
void buf_addc(buf *b, char c);
void buf_addf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_reset(buf *b);
void buf_free(buf *b);
/* Reads the whole file at path into b (reset first). 0, or -1 with errno. */
int buf_read_file(buf *b, const char *path);
/* Hands the string to the caller (never NULL) and resets b. */
char *buf_detach(buf *b);

#endif
