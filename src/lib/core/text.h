/*
 * text: strings as the reference (Python) treats them: str.strip(),
 * repr() and the reference's sanitize(); and the one hash and the one
 * order of strings the library's tables and sorts use. The bytes are
 * UTF-8 (core/utf8.h).
 */
#ifndef PERF_CORE_TEXT_H
#define PERF_CORE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/*
 * Python's str.strip(): finds the span of s without leading and trailing
 * whitespace. Returns the start and sets *len.
 */
const char *text_py_strip(const char *s, size_t *len);

/*
 * The reference's sanitize(): every code point outside [A-Za-z0-9._-]
 * becomes '_'; an empty result or one starting with '.' gets a '_' prefix.
 * Returns a new string.
 */
char *text_sanitize(const char *s);

/* Appends Python's repr() of the string s (quotes included). */
void text_py_repr(buf *b, const char *s, size_t n);

/* The 64-bit FNV-1a hash of a string, for the hash tables of the library. */
uint64_t text_hash(const char *s);

/* For qsort() and bsearch() of an array of strings (char *): strcmp() order. */
int text_cmp_ptr(const void *a, const void *b);

#endif
