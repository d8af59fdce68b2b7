/*
 * text: UTF-8 helpers, the reference's sanitize(), Python's whitespace
 * stripping and Python's repr() of a string.
 *
 * Strings inside perfkite are UTF-8; a lone surrogate read from a JSON
 * "\udXXX" escape is kept as its three-byte generalized UTF-8 form so that
 * it can be written back exactly as Python writes it.
 */
#ifndef PERF_CORE_TEXT_H
#define PERF_CORE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/*
 * Decodes one code point at s (n bytes available). Returns its length in
 * bytes (1..4) and stores it in *cp; returns 0 for an invalid sequence.
 * With allow_surrogates, ED A0..BF sequences decode as surrogates.
 */
int text_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp,
    bool allow_surrogates);
/* Appends the UTF-8 form of cp (surrogates as three bytes). */
void text_utf8_encode(buf *b, uint32_t cp);
/* True when s[0..n) is valid UTF-8 (no surrogates). */
bool text_utf8_valid(const char *s, size_t n);

/*
 * When text[0..n) is not valid UTF-8, writes Python's UnicodeDecodeError
 * text for its first bad sequence ("'utf-8' codec can't decode byte 0xff
 * in position 6: invalid start byte") and returns true.
 */
bool text_utf8_error(const char *text, size_t n, char *msg, size_t msgn);

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

/*
 * Appends s escaped for XML and HTML text and attributes (& < > " '),
 * with control bytes XML 1.0 cannot hold (all but tab and newline) as spaces.
 */
void text_xml_escape(buf *b, const char *s);

/* The 64-bit FNV-1a hash of a string, for the hash tables of the library. */
uint64_t text_hash(const char *s);

/* For qsort() and bsearch() of an array of strings (char *): strcmp() order. */
int text_cmp_ptr(const void *a, const void *b);

#endif
