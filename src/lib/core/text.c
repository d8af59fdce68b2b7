#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/text.h"

int
text_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp,
    bool allow_surrogates)
{
	uint32_t c;
	int len, i;

	if (n == 0)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		c = s[0] & 0x07;
	} else
		return 0;
	if (n < (size_t)len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 ||
	    c > 0x10ffff)))
		return 0;
	if (c >= 0xd800 && c <= 0xdfff && !allow_surrogates)
		return 0;
	*cp = c;
	return len;
}

void
text_utf8_encode(buf *b, uint32_t cp)
{
	char t[4];

	if (cp < 0x80) {
		buf_addc(b, (char)cp);
	} else if (cp < 0x800) {
		t[0] = (char)(0xc0 | (cp >> 6));
		t[1] = (char)(0x80 | (cp & 0x3f));
		buf_add(b, t, 2);
	} else if (cp < 0x10000) {
		t[0] = (char)(0xe0 | (cp >> 12));
		t[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		t[2] = (char)(0x80 | (cp & 0x3f));
		buf_add(b, t, 3);
	} else {
		t[0] = (char)(0xf0 | (cp >> 18));
		t[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		t[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		t[3] = (char)(0x80 | (cp & 0x3f));
		buf_add(b, t, 4);
	}
}

bool
text_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	uint32_t cp;
	int len;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		len = text_utf8_decode(p + i, n - i, &cp, false);
		if (len == 0)
			return false;
		i += (size_t)len;
	}
	return true;
}

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
	int len = text_utf8_decode((const unsigned char *)s, n, &cp, true);

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
		len = text_utf8_decode(p + i, n - i, &cp, true);
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
		len = text_utf8_decode(p + i, n - i, &cp, true);
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

/*
 * Python's UnicodeDecodeError text for the first invalid UTF-8 sequence,
 * or false when the text is valid.
 */
bool
text_utf8_error(const char *text, size_t n, char *msg, size_t msgn)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t i = 0, k, need;
	unsigned char lo, hi, c;

	while (i < n) {
		/* Most of a record is ASCII: eight bytes at a time. */
		while (i + 8 <= n) {
			uint64_t w;

			memcpy(&w, p + i, 8);
			if (w & 0x8080808080808080ULL)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		c = p[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		lo = 0x80;
		hi = 0xbf;
		if (c >= 0xc2 && c <= 0xdf)
			need = 2;
		else if (c >= 0xe0 && c <= 0xef) {
			need = 3;
			if (c == 0xe0)
				lo = 0xa0;
			else if (c == 0xed)
				hi = 0x9f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 4;
			if (c == 0xf0)
				lo = 0x90;
			else if (c == 0xf4)
				hi = 0x8f;
		} else {
			snprintf(msg, msgn, "'utf-8' codec can't decode byte 0x%02x in "
			    "position %zu: invalid start byte", c, i);
			return true;
		}
		for (k = 1; k < need; k++) {
			if (i + k >= n) {
				if (k == 1)
					snprintf(msg, msgn, "'utf-8' codec can't decode byte "
					    "0x%02x in position %zu: unexpected end of data", c, i);
				else
					snprintf(msg, msgn, "'utf-8' codec can't decode bytes in "
					    "position %zu-%zu: unexpected end of data", i, n - 1);
				return true;
			}
			if (p[i + k] < (k == 1 ? lo : 0x80) || p[i + k] > (k == 1 ? hi : 0xbf)) {
				if (k == 1)
					snprintf(msg, msgn, "'utf-8' codec can't decode byte "
					    "0x%02x in position %zu: invalid continuation byte", c, i);
				else
					snprintf(msg, msgn, "'utf-8' codec can't decode bytes in "
					    "position %zu-%zu: invalid continuation byte", i, i + k - 1);
				return true;
			}
		}
		i += need;
	}
	return false;
}

void
text_xml_escape(buf *b, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': buf_adds(b, "&amp;"); break;
		case '<': buf_adds(b, "&lt;"); break;
		case '>': buf_adds(b, "&gt;"); break;
		case '"': buf_adds(b, "&quot;"); break;
		case '\'': buf_adds(b, "&#39;"); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				buf_addc(b, ' ');	/* XML 1.0 has no other controls */
			else
				buf_addc(b, *s);
		}
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
