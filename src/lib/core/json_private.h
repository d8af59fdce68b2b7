/*
 * json_private: what the parser (json_parse.c) and the quick scanner
 * (json_fast.c) share, and the one move of a node's content that
 * json_set() shares with the parser. Not for use outside core/json*.c:
 * the public contract is core/json.h.
 *
 * The byte-level helpers are static inline here, as they were static in
 * the one file before the split: each is called once per token on the
 * record path, where a call would cost (see json_fast.c).
 */
#ifndef PERF_CORE_JSON_PRIVATE_H
#define PERF_CORE_JSON_PRIVATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/err.h"
#include "core/json.h"

struct parser {
	const unsigned char *p, *end;
	const unsigned char *line_start;
	long line;
	int depth;
	json_error *err;
	buf sb;
	const char *const *keys;	/* top-level members to build; NULL: all */
	size_t nkeys;
	struct json_arena *arena;	/* where nodes go; NULL: the heap (cJSON) */
	bool strict;		/* RFC 8259 only: see json_parse_strict() */
};

struct json_arena {
	char *chunk;
	size_t used, cap;
	char **old;		/* earlier, smaller chunks until the next reset */
	size_t nold;
};

/*
 * Moves src's value into dst (which keeps its key and list links). In an
 * arena nothing is freed: the arena goes as a whole (json.c).
 */
void json_take_content(cJSON *dst, cJSON *src, bool arena);

/* n bytes from the arena, 16-byte aligned; a full chunk is kept until the reset. */
static inline void *
arena_alloc(struct json_arena *a, size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (a->used + n > a->cap) {
		if (a->chunk != NULL) {
			a->old = erealloc(a->old, (a->nold + 1) * sizeof *a->old);
			a->old[a->nold++] = a->chunk;
		}
		a->cap = a->cap * 2 > n * 2 ? a->cap * 2 : (n * 2 > 65536 ? n * 2 : 65536);
		a->chunk = emalloc(a->cap);
		a->used = 0;
	}
	p = a->chunk + a->used;
	a->used += n;
	return p;
}

/* Past the literal w (n bytes) at p, or NULL. */
static inline const unsigned char *
fast_word(const unsigned char *p, const unsigned char *end, const char *w, size_t n)
{
	return (size_t)(end - p) >= n && memcmp(p, w, n) == 0 ? p + n : NULL;
}

/* A new node, in the arena when there is one. */
static inline cJSON *
node(struct parser *ps, int type)
{
	cJSON *n;

	if (ps->arena == NULL) {
		if ((n = cJSON_CreateNull()) == NULL)
			die("out of memory");
		n->type = type;
		return n;
	}
	n = arena_alloc(ps->arena, sizeof *n);
	memset(n, 0, sizeof *n);
	n->type = type;
	return n;
}

static inline char *
dupstr(struct parser *ps, const char *s, size_t n)
{
	char *p;

	if (ps->arena == NULL)
		return estrndup(s, n);
	p = arena_alloc(ps->arena, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* Bytes that stand for themselves inside a string: printable ASCII but " and \. */
static const unsigned char plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/*
 * The first byte in [p, end) that does not stand for itself in a string
 * (a quote, a backslash, a control or non-ASCII byte), or end.
 */
static inline const unsigned char *
string_stop(const unsigned char *p, const unsigned char *end)
{
#ifdef __SSE2__
	/* Sixteen bytes at a time: as signed bytes, non-ASCII is below ' ' too. */
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
	    space = _mm_set1_epi8(' ');

	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(
		    _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
		    _mm_cmplt_epi8(v, space)));

		if (m != 0)
			return p + __builtin_ctz(m);
		p += 16;
	}
#else
	/* Eight bytes at a time while none is a quote, a backslash, a control or non-ASCII. */
	while (end - p >= 8) {
		uint64_t w, q, b, c;

		memcpy(&w, p, 8);
		q = w ^ 0x2222222222222222ULL;
		b = w ^ 0x5c5c5c5c5c5c5c5cULL;
		c = (w - 0x2020202020202020ULL) | w;	/* < 0x20 or >= 0x80 */
		if ((((q - 0x0101010101010101ULL) & ~q) | ((b - 0x0101010101010101ULL) & ~b) | c) &
		    0x8080808080808080ULL)
			break;
		p += 8;
	}
#endif
	while (p < end && plain[*p])
		p++;
	return p;
}

/* Past the plain string whose opening quote is at p, or NULL. */
static inline const unsigned char *
fast_string(const unsigned char *p, const unsigned char *end)
{
	p = string_stop(p + 1, end);
	return p < end && *p == '"' ? p + 1 : NULL;
}

/* A number node's values, as cJSON sets them (valueint saturated). */
static inline void
number_value(cJSON *v, double d)
{
	v->valuedouble = d;
	if (d >= INT_MAX)
		v->valueint = INT_MAX;
	else if (d <= (double)INT_MIN)
		v->valueint = INT_MIN;
	else if (d == d)
		v->valueint = (int)d;
}

#define DIGIT(c) ((unsigned)((c) - '0') < 10)

/*
 * The end of the number of the JSON grammar at p, or NULL with *stop at
 * the byte where it fails and *why what is wrong; *isint when it has
 * neither fraction nor exponent.
 */
static inline const unsigned char *
number_end(const unsigned char *p, const unsigned char *end, bool *isint,
    const unsigned char **stop, const char **why)
{
	*isint = true;
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (p < end && *p >= '1' && *p <= '9')
		while (++p < end && DIGIT(*p))
			;
	else {
		*stop = p;
		*why = "invalid number";
		return NULL;
	}
	if (p < end && *p == '.') {
		*isint = false;
		if (++p >= end || !DIGIT(*p)) {
			*stop = p;
			*why = "invalid number: digits expected after '.'";
			return NULL;
		}
		while (++p < end && DIGIT(*p))
			;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		*isint = false;
		if (++p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || !DIGIT(*p)) {
			*stop = p;
			*why = "invalid number: digits expected in exponent";
			return NULL;
		}
		while (++p < end && DIGIT(*p))
			;
	}
	return p;
}

/* The node of the number text s[0..n) of value d (range checked by the caller). */
static inline cJSON *
number_node(struct parser *ps, const unsigned char *s, size_t n, bool isint, double d)
{
	cJSON *v = node(ps, cJSON_Number);

	if (isint) {
		/* Python reads "-0" as the integer 0. */
		v->type |= JSON_INT;
		v->valuestring = n == 2 && s[0] == '-' && s[1] == '0' ?
		    dupstr(ps, "0", 1) : dupstr(ps, (const char *)s, n);
		d = d == 0 ? 0.0 : d;
	}
	number_value(v, d);
	return v;
}

#endif
