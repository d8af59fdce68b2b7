/*
 * strvec: an argument vector built by pushing (git's strvec), for the
 * argv and environment of a child: no fixed array to overflow, no casts
 * of string literals. The vector owns copies of its strings; v is always
 * NULL-terminated and never NULL (an empty vector is strvec_empty).
 */
#ifndef PERF_CORE_STRVEC_H
#define PERF_CORE_STRVEC_H

#include <stddef.h>

struct strvec {
	char **v;		/* n strings, then NULL */
	size_t n, cap;		/* cap 0: v is strvec_empty */
};

extern char *strvec_empty[1];

#define STRVEC_INIT { strvec_empty, 0, 0 }

/* Appends a copy of s. */
void strvec_push(struct strvec *sv, const char *s);
/* Appends a copy of each string up to the first NULL. */
void strvec_pushv(struct strvec *sv, const char *const *v);
/* Appends a formatted string. */
void strvec_pushf(struct strvec *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees the strings and the vector; sv is empty again. */
void strvec_clear(struct strvec *sv);

#endif
