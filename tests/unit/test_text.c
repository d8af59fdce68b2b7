/* Unit tests for text: sanitize, strip, repr of strings, UTF-8, XML escapes. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "tap.h"
#include "core/text.h"
#include "core/utf8.h"
#include "core/xml.h"

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
	{
		/* A bad byte at each place of a long ASCII text: the wide scan stops at it. */
		char text[160], msg[200], want[200];
		int wrong = 0;

		for (size_t at = 0; at < sizeof text; at++) {
			memset(text, 'a', sizeof text);
			text[at] = (char)0xff;
			snprintf(want, sizeof want, "'utf-8' codec can't decode byte 0xff in "
			    "position %zu: invalid start byte", at);
			if (!utf8_error(text, sizeof text, msg, sizeof msg) || strcmp(msg, want) != 0)
				wrong++;
			/* and a good two-byte letter there, then a cut one at the end */
			text[at] = (char)0xc3;
			if (at + 1 < sizeof text)
				text[at + 1] = (char)0xa9;
			text[sizeof text - 1] = (char)0xc3;
			snprintf(want, sizeof want, "'utf-8' codec can't decode byte 0xc3 in "
			    "position %zu: unexpected end of data", sizeof text - 1);
			if (at + 2 < sizeof text &&
			    (!utf8_error(text, sizeof text, msg, sizeof msg) || strcmp(msg, want) != 0))
				wrong++;
			if (at + 2 < sizeof text && utf8_error(text, sizeof text - 1, msg, sizeof msg))
				wrong++;
		}
		ok(wrong == 0, "UTF-8 errors found at each of 160 places (%d wrong)", wrong);
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
	/* xml_escape copies plain runs whole: escapes at the ends and side by side */
	buf_reset(&b);
	xml_escape(&b, "<a href=\"x\">Tom & Jerry's</a>");
	is_str(b.s, "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;", "xml escapes");
	buf_reset(&b);
	xml_escape(&b, "&&\x01tab\there\nline\x1f");
	is_str(b.s, "&amp;&amp; tab\there\nline ", "xml: controls become spaces, tab and newline stay");
	buf_reset(&b);
	xml_escape(&b, "plain caf\xc3\xa9");
	is_str(b.s, "plain caf\xc3\xa9", "xml: plain text and UTF-8 unchanged");
	buf_reset(&b);
	xml_escape(&b, "");
	ok(b.len == 0, "xml: nothing from nothing");
	buf_free(&b);
	return done_testing();
}
