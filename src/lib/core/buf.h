/*
 * buf: a growable byte string. Every function exits on allocation failure;
 * the content is always NUL-terminated.
 */
#ifndef PERF_CORE_BUF_H
#define PERF_CORE_BUF_H

#include <stddef.h>

typedef struct {
	char *s;
	size_t len;
	size_t cap;
} buf;

#define BUF_INIT { NULL, 0, 0 }

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
