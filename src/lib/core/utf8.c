#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/utf8.h"

int
utf8_decode(const unsigned char *s, size_t n, uint32_t *cp,
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
utf8_encode(buf *b, uint32_t cp)
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
utf8_valid(const char *s, size_t n)
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
		len = utf8_decode(p + i, n - i, &cp, false);
		if (len == 0)
			return false;
		i += (size_t)len;
	}
	return true;
}

/*
 * Python's UnicodeDecodeError text for the first invalid UTF-8 sequence,
 * or false when the text is valid.
 */
bool
utf8_error(const char *text, size_t n, char *msg, size_t msgn)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t i = 0, k, need;
	unsigned char lo, hi, c;

	while (i < n) {
		/* Most of a record is ASCII: many bytes at a time. */
#ifdef __SSE2__
		while (i + 64 <= n) {
			const __m128i *v = (const __m128i *)(const void *)(p + i);

			if (_mm_movemask_epi8(_mm_or_si128(
			    _mm_or_si128(_mm_loadu_si128(v), _mm_loadu_si128(v + 1)),
			    _mm_or_si128(_mm_loadu_si128(v + 2), _mm_loadu_si128(v + 3)))) != 0)
				break;
			i += 64;
		}
		while (i + 16 <= n &&
		    _mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + i))) == 0)
			i += 16;
#endif
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
