/* Unit tests for text: sanitize, strip, repr of strings, UTF-8. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "tap.h"
#include "core/text.h"
#include "core/utf8.h"

#include "sanitize_vectors.h"
#include "strip_vectors.h"
#include "strrepr_vectors.h"
#include "utf8_vectors.h"

int
main(void)
{
	buf b = BUF_INIT;
	const char *p;
	char *s;
	size_t i, n;
	uint32_t cp;

	for (i = 0; i < sizeof sanitize_vectors / sizeof *sanitize_vectors; i++) {
		s = text_sanitize(sanitize_vectors[i].in);
		is_str(s, sanitize_vectors[i].out, "sanitize of vector %zu", i);
		free(s);
	}
	for (i = 0; i < sizeof strip_vectors / sizeof *strip_vectors; i++) {
		p = text_py_strip(strip_vectors[i].in, &n);
		s = strndup(p, n);
		is_str(s, strip_vectors[i].out, "strip of vector %zu", i);
		free(s);
	}
	for (i = 0; i < sizeof strrepr_vectors / sizeof *strrepr_vectors; i++) {
		buf_reset(&b);
		text_py_repr(&b, strrepr_vectors[i].in, strlen(strrepr_vectors[i].in));
		is_str(b.s, strrepr_vectors[i].out, "repr of string vector %zu", i);
	}
	for (i = 0; i < sizeof utf8_vectors / sizeof *utf8_vectors; i++) {
		char msg[200] = "";
		bool bad = utf8_error(utf8_vectors[i].in, utf8_vectors[i].len, msg,
		    sizeof msg);
		ok(bad == (utf8_vectors[i].msg[0] != '\0'), "UTF-8 vector %zu judged as Python", i);
		if (bad)
			is_str(msg, utf8_vectors[i].msg, "UnicodeDecodeError text of vector %zu", i);
	}
	ok(utf8_valid("caf\xc3\xa9", 5), "valid UTF-8");
	ok(!utf8_valid("\xc3", 1), "truncated sequence is invalid");
	ok(!utf8_valid("\xe0\x80\x80", 3), "overlong form is invalid");
	ok(!utf8_valid("\xed\xa0\x80", 3), "encoded surrogate is invalid");
	ok(!utf8_valid("\xf4\x90\x80\x80", 4), "beyond U+10FFFF is invalid");
	ok(utf8_decode((const unsigned char *)"\xed\xa0\x80", 3, &cp, true) == 3 &&
	    cp == 0xd800, "surrogates decode when allowed");
	buf_reset(&b);
	utf8_encode(&b, 0x1f600);
	ok(b.len == 4 && memcmp(b.s, "\xf0\x9f\x98\x80", 4) == 0, "encode astral");
	buf_free(&b);
	return done_testing();
}
