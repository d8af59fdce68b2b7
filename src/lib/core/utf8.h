/*
 * utf8: the UTF-8 codec of the library. Strings inside perfkite are UTF-8;
 * a lone surrogate read from a JSON "\udXXX" escape is kept as its
 * three-byte generalized UTF-8 form so that it can be written back exactly
 * as Python writes it.
 */
#ifndef PERF_CORE_UTF8_H
#define PERF_CORE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/*
 * Decodes one code point at s (n bytes available). Returns its length in
 * bytes (1..4) and stores it in *cp; returns 0 for an invalid sequence.
 * With allow_surrogates, ED A0..BF sequences decode as surrogates.
 */
int utf8_decode(const unsigned char *s, size_t n, uint32_t *cp,
    bool allow_surrogates);
/* Appends the UTF-8 form of cp (surrogates as three bytes). */
void utf8_encode(buf *b, uint32_t cp);
/* True when s[0..n) is valid UTF-8 (no surrogates). */
bool utf8_valid(const char *s, size_t n);

/*
 * When text[0..n) is not valid UTF-8, writes Python's UnicodeDecodeError
 * text for its first bad sequence ("'utf-8' codec can't decode byte 0xff
 * in position 6: invalid start byte") and returns true.
 */
bool utf8_error(const char *text, size_t n, char *msg, size_t msgn);

#endif
