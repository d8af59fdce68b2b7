#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/text.h"
#include "core/utf8.h"

/* Python's str.isspace() for one code point. */
static bool
text_py_isspace(uint32_t cp)
{
	switch (cp) {
	case 0x09: case 0x0a: case 0x0b: case 0x0c: case 0x0d:
	case 0x1c: case 0x1d: case 0x1e: case 0x1f: case 0x20:
	case 0x85: case 0xa0: case 0x1680:
	case 0x2028: case 0x2029: case 0x202f: case 0x205f: case 0x3000:
		return true;
	default:
		return cp >= 0x2000 && cp <= 0x200a;
	}
}

/* Length of the whitespace code point at s, or 0. */
static int
space_at(const char *s, size_t n)
{
	uint32_t cp;
	int len = utf8_decode((const unsigned char *)s, n, &cp, true);

	return len > 0 && text_py_isspace(cp) ? len : 0;
}

const char *
text_py_strip(const char *s, size_t *len)
{
	size_t n = strlen(s), i = 0, end;
	int k;

	while (i < n && (k = space_at(s + i, n - i)) > 0)
		i += (size_t)k;
	end = n;
	while (end > i) {
		/* Step back to the start of the last code point. */
		size_t j = end - 1;
		while (j > i && ((unsigned char)s[j] & 0xc0) == 0x80)
			j--;
		if (space_at(s + j, end - j) != (int)(end - j))
			break;
		end = j;
	}
	*len = end - i;
	return s + i;
}

static bool
safe_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

char *
text_sanitize(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;
	buf b = BUF_INIT;
	uint32_t cp;
	int len;

	buf_grow(&b, n + 1);
	while (i < n) {
		if (safe_char(p[i])) {
			buf_addc(&b, (char)p[i]);
			i++;
			continue;
		}
		/* One '_' per code point, not per byte. */
		len = utf8_decode(p + i, n - i, &cp, true);
		i += len > 0 ? (size_t)len : 1;
		buf_addc(&b, '_');
	}
	if (b.len == 0 || b.s[0] == '.') {
		char *t = easprintf("_%s", b.len ? b.s : "");

		buf_free(&b);
		return t;
	}
	return buf_detach(&b);
}

/*
 * Python's str.isprintable() for a non-ASCII code point, close enough for
 * the characters that appear in identifiers and paths: controls, format
 * characters, separators other than U+0020, surrogates and private use are
 * not printable.
 */
static bool
py_printable(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp == 0xad)
		return false;
	if (cp >= 0xd800 && cp <= 0xdfff)
		return false;
	if ((cp >= 0x2000 && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202f) ||
	    (cp >= 0x205f && cp <= 0x206f) || cp == 0x1680 || cp == 0x3000 ||
	    cp == 0xfeff || cp == 0x061c || cp == 0x180e)
		return false;
	if ((cp >= 0xe000 && cp <= 0xf8ff) || cp >= 0xf0000 ||
	    (cp >= 0xfff9 && cp <= 0xfffb) || cp == 0xfffe || cp == 0xffff)
		return false;
	return true;
}

void
text_py_repr(buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	char quote = '\'';
	size_t i;
	uint32_t cp;
	int len;

	if (memchr(s, '\'', n) != NULL && memchr(s, '"', n) == NULL)
		quote = '"';
	buf_addc(b, quote);
	for (i = 0; i < n; i += (size_t)len) {
		len = utf8_decode(p + i, n - i, &cp, true);
		if (len == 0) {
			/* Not reachable for validated input; show the byte. */
			buf_addf(b, "\\x%02x", p[i]);
			len = 1;
			continue;
		}
		if (cp == (uint32_t)quote || cp == '\\') {
			buf_addc(b, '\\');
			buf_addc(b, (char)cp);
		} else if (cp == '\n')
			buf_adds(b, "\\n");
		else if (cp == '\r')
			buf_adds(b, "\\r");
		else if (cp == '\t')
			buf_adds(b, "\\t");
		else if (cp < 0x20 || cp == 0x7f)
			buf_addf(b, "\\x%02x", cp);
		else if (cp < 0x80)
			buf_addc(b, (char)cp);
		else if (py_printable(cp))
			buf_add(b, s + i, (size_t)len);
		else if (cp <= 0xff)
			buf_addf(b, "\\x%02x", cp);
		else if (cp <= 0xffff)
			buf_addf(b, "\\u%04x", cp);
		else
			buf_addf(b, "\\U%08x", cp);
	}
	buf_addc(b, quote);
}

uint64_t
text_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

int
text_cmp_ptr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}
