/*
 * json_fast: json_parse_fast(), the quick scanner for the wanted keys of
 * a record (contract in json.h).
 *
 * Why it exists: reading a directory store is CPU per record, and most
 * of a record is keys the reader does not want. The full parser checks
 * and builds every value; perf-changes and the store reader (store_read,
 * store_scan_units) want a handful of top-level members of the usual
 * record, which is plain ASCII strings, numbers and literals. So this
 * scanner, on the record path:
 *   - skips an unwanted value by one loop without recursion (the open
 *     containers a stack of bits), building nothing and checking only
 *     the grammar of the simple kinds;
 *   - finds a wanted key by a hash of its length and three of its bytes
 *     in a 256-slot table, compared a word at a time, no call; in an
 *     arena the keyset's own string names the member;
 *   - scans strings sixteen bytes at a time (SSE2; eight elsewhere);
 *   - reads a number of at most 15 digits without exponent as it scans
 *     it (num_parse_json()'s exact fast path: the digits as an integer
 *     divided once by an exact power of ten), and looks for ':' and ','
 *     before any whitespace;
 *   - allocates nodes and strings from an arena, inline (node()).
 * Anything it is not sure of (an escape, non-ASCII, a repeated wanted
 * key, nesting past FAST_MAX_DEPTH, invalid JSON) returns NULL and the
 * caller parses the text with json_parse_arena(), which reports errors:
 * the answer is the same either way (test_json compares both on 240,000
 * generated texts; the json_fast fuzzer compares whatever it reads), and
 * PERF_STORE_SLOW_PARSE=1 turns the scanner off in the store reader.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/err.h"
#include "core/json.h"
#include "core/json_private.h"
#include "core/num.h"

/* The wanted keys of json_parse_fast(), found by a hash of their bytes. */
struct json_keyset {
	size_t n;
	const char *key[64];
	size_t len[64];
	signed char slot[256];	/* index into key, -1 for none */
};

/* Enough to tell record keys apart: their length and three of their bytes. */
static unsigned
span_hash(const unsigned char *s, size_t n)
{
	return n == 0 ? 0 : (unsigned)(n * 37u + s[0] * 5u + s[n / 2] * 3u + s[n - 1]);
}

/* Whether a[0..n) and b[0..n) are the same bytes: words at a time, no call. */
static inline bool
same_span(const unsigned char *a, const unsigned char *b, size_t n)
{
	uint64_t x, y, d = 0;
	uint32_t u, v;
	size_t i;

	if (n < 4) {
		for (i = 0; i < n; i++)
			d |= a[i] ^ b[i];
		return d == 0;
	}
	if (n < 8) {
		memcpy(&u, a, 4);
		memcpy(&v, b, 4);
		d = u ^ v;
		memcpy(&u, a + n - 4, 4);
		memcpy(&v, b + n - 4, 4);
		return (d | (u ^ v)) == 0;
	}
	/* Eight bytes at a time, the last word overlapping the one before. */
	for (i = 0; i + 8 < n; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		d |= x ^ y;
	}
	memcpy(&x, a + n - 8, 8);
	memcpy(&y, b + n - 8, 8);
	return (d | (x ^ y)) == 0;
}

/* The slot of s[0..n) in the keyset: where it is, or the empty one it goes to. */
static size_t
keyset_slot(const struct json_keyset *ks, const unsigned char *s, size_t n)
{
	size_t i = span_hash(s, n) & 255;

	while (ks->slot[i] >= 0 && (ks->len[ks->slot[i]] != n ||
	    !same_span((const unsigned char *)ks->key[ks->slot[i]], s, n)))
		i = (i + 1) & 255;
	return i;
}

struct json_keyset *
json_keyset_new(const char *const *keys, size_t n)
{
	struct json_keyset *ks = ecalloc(1, sizeof *ks);
	size_t i, k;

	memset(ks->slot, -1, sizeof ks->slot);
	for (k = 0; k < n; k++) {
		i = keyset_slot(ks, (const unsigned char *)keys[k], strlen(keys[k]));
		if (ks->slot[i] >= 0)
			continue;	/* named twice */
		if (ks->n == 64) {
			free(ks);
			return NULL;
		}
		ks->key[ks->n] = keys[k];
		ks->len[ks->n] = strlen(keys[k]);
		ks->slot[i] = (signed char)ks->n++;
	}
	return ks;
}

void
json_keyset_free(struct json_keyset *ks)
{
	free(ks);
}

int
json_keyset_index(const struct json_keyset *ks, const char *key)
{
	return ks->slot[keyset_slot(ks, (const unsigned char *)key, strlen(key))];
}

#define FAST_MAX_DEPTH 32

/* JSON's whitespace. */
static const unsigned char ws_byte[256] = { [' '] = 1, ['\n'] = 1, ['\t'] = 1, ['\r'] = 1 };

static inline const unsigned char *
fast_ws(const unsigned char *p, const unsigned char *end)
{
	if (p < end && *p > ' ')
		return p;	/* none, the usual case between tokens */
	if (end - p >= 2 && *p == ' ' && p[1] > ' ')
		return p + 1;	/* one space, after a colon or a comma */
#ifdef __SSE2__
	/* A line break and indentation: sixteen bytes at a time. */
	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(
		    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
		    _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
		    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t')),
		    _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')))));

		if (m != 0xffff)
			return p + __builtin_ctz(~m);
		p += 16;
	}
#endif
	while (p < end && ws_byte[*p])
		p++;
	return p;
}

/* Past a number of the JSON grammar at p, or NULL; *isint as number_end(). */
static const unsigned char *
fast_number(const unsigned char *p, const unsigned char *end, bool *isint)
{
	const unsigned char *stop;
	const char *why;

	return number_end(p, end, isint, &stop, &why);
}

/*
 * fast_number() that also reads the value of a number without exponent
 * of at most 15 digits (*have then): num_parse_json()'s exact fast path,
 * the digits as an integer divided once by an exact power of ten.
 */
static const unsigned char *
fast_decimal(const unsigned char *p, const unsigned char *end, bool *isint,
    double *d, bool *have)
{
	static const double p10[16] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
	    1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };
	const unsigned char *s = p;
	uint64_t m = 0;
	int nd = 0, frac = 0;
	bool neg = false;

	*isint = true;
	*have = false;
	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	if (p < end && *p == '0')
		p++;
	else if (p < end && *p >= '1' && *p <= '9')
		do {
			m = m * 10 + (unsigned)(*p - '0');
			nd++;
		} while (++p < end && DIGIT(*p));
	else
		return NULL;
	if (p < end && *p == '.') {
		*isint = false;
		if (++p >= end || !DIGIT(*p))
			return NULL;
		do {
			m = m * 10 + (unsigned)(*p - '0');
			nd++;
			frac++;
		} while (++p < end && DIGIT(*p));
	}
	if (p < end && (*p == 'e' || *p == 'E'))
		return fast_number(s, end, isint);
	if (nd <= 15) {
		*d = frac == 0 ? (double)m : (double)m / p10[frac];
		*d = neg ? -*d : *d;
		*have = true;
	}
	return p;
}

/*
 * Past a value of the simple kind at p: plain strings, numbers of the
 * grammar, true, false, null, and objects and arrays of those nested up
 * to FAST_MAX_DEPTH (depth: the containers around the value). NULL for
 * anything else, valid or not. One loop without recursion: the open
 * containers are a stack of bits, set for an object.
 */
static const unsigned char *
fast_skip(const unsigned char *p, const unsigned char *end, int depth)
{
	uint64_t objs = 0;
	int level = 0;
	bool isint;

value:
	p = fast_ws(p, end);
	if (p >= end)
		return NULL;
	switch (*p) {
	case '"':
		p = fast_string(p, end);
		break;
	case 't':
		p = fast_word(p, end, "true", 4);
		break;
	case 'f':
		p = fast_word(p, end, "false", 5);
		break;
	case 'n':
		p = fast_word(p, end, "null", 4);
		break;
	case '{':
	case '[':
		if (depth + level >= FAST_MAX_DEPTH)
			return NULL;
		level++;
		objs = objs << 1 | (*p == '{');
		p = fast_ws(p + 1, end);
		if (p < end && *p == (objs & 1 ? '}' : ']')) {
			p++;
			level--;
			objs >>= 1;
			break;
		}
		if (objs & 1)
			goto member;
		goto value;
	default:
		p = fast_number(p, end, &isint);
		break;
	}
	/* After a value: the end, or what follows it in its container. */
	for (;;) {
		if (p == NULL || level == 0)
			return p;
		p = fast_ws(p, end);
		if (p < end && *p == ',') {
			p++;
			if (objs & 1)
				goto member;
			goto value;
		}
		if (p >= end || *p != (objs & 1 ? '}' : ']'))
			return NULL;
		p++;
		level--;
		objs >>= 1;
	}
member:
	p = fast_ws(p, end);
	if (p >= end || *p != '"' || (p = fast_string(p, end)) == NULL)
		return NULL;
	p = fast_ws(p, end);
	if (p >= end || *p != ':')
		return NULL;
	p++;
	goto value;
}

/* Members an object of a wanted value may have on the quick path. */
#define FAST_MEMBERS 128

static cJSON *fast_value(struct parser *ps, const unsigned char **pp,
    const unsigned char *end, int depth);

/* Links v after last in container c, as cJSON_AddItemToArray() does. */
static inline void
fast_link(cJSON *c, cJSON **last, cJSON *v)
{
	if (*last == NULL)
		c->child = v;
	else {
		(*last)->next = v;
		v->prev = *last;
	}
	c->child->prev = *last = v;
}

/*
 * The object or array at *pp inside a wanted value (depth: the containers
 * around it), built as the full parser builds it, and *pp past it. NULL
 * when it holds anything fast_value() does not read, nests deeper than
 * FAST_MAX_DEPTH, or is an object with a repeated member name (the full
 * parser keeps the first position and the last value) or more than
 * FAST_MEMBERS members.
 */
static cJSON *
fast_container(struct parser *ps, const unsigned char **pp, const unsigned char *end,
    int depth)
{
	const unsigned char *p = *pp, *key;
	bool obj = *p == '{';
	char close = obj ? '}' : ']';
	uint32_t hash[FAST_MEMBERS];
	size_t klen[FAST_MEMBERS], n = 0;
	const unsigned char *kat[FAST_MEMBERS];
	cJSON *c, *v, *last = NULL;

	if (depth >= FAST_MAX_DEPTH)
		return NULL;
	c = node(ps, obj ? cJSON_Object : cJSON_Array);
	p = fast_ws(p + 1, end);
	if (p < end && *p == close) {
		*pp = p + 1;
		return c;
	}
	for (;;) {
		p = fast_ws(p, end);
		if (obj) {
			uint32_t h = 2166136261u;
			size_t kl;

			key = p + 1;
			if (p >= end || *p != '"' || (p = fast_string(p, end)) == NULL ||
			    n == FAST_MEMBERS)
				return NULL;
			kl = (size_t)(p - key) - 1;
			for (size_t i = 0; i < kl; i++)
				h = (h ^ key[i]) * 16777619u;
			for (size_t i = 0; i < n; i++)
				if (hash[i] == h && klen[i] == kl && memcmp(kat[i], key, kl) == 0)
					return NULL;
			hash[n] = h;
			klen[n] = kl;
			kat[n++] = key;
			p = fast_ws(p, end);
			if (p >= end || *p != ':')
				return NULL;
			p = fast_ws(p + 1, end);
			if ((v = fast_value(ps, &p, end, depth + 1)) == NULL)
				return NULL;
			v->string = dupstr(ps, (const char *)key, kl);
		} else if ((v = fast_value(ps, &p, end, depth + 1)) == NULL)
			return NULL;
		fast_link(c, &last, v);
		p = fast_ws(p, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == close)
			break;
		return NULL;
	}
	*pp = p + 1;
	return c;
}

/*
 * A wanted member's value at *pp: a plain string, a number, true, false,
 * null, or an object or array of those (fast_container()), and *pp past
 * it; NULL for anything else.
 */
static cJSON *
fast_value(struct parser *ps, const unsigned char **pp, const unsigned char *end, int depth)
{
	const unsigned char *p = *pp, *q;
	bool isint, have;
	cJSON *v;
	double d;

	if (p >= end)
		return NULL;
	switch (*p) {
	case '{':
	case '[':
		if ((v = fast_container(ps, &p, end, depth)) == NULL)
			return NULL;
		q = p;
		break;
	case '"':
		if ((q = fast_string(p, end)) == NULL)
			return NULL;
		v = node(ps, cJSON_String);
		v->valuestring = dupstr(ps, (const char *)p + 1, (size_t)(q - p) - 2);
		break;
	case 't':
		if ((q = fast_word(p, end, "true", 4)) == NULL)
			return NULL;
		v = node(ps, cJSON_True);
		break;
	case 'f':
		if ((q = fast_word(p, end, "false", 5)) == NULL)
			return NULL;
		v = node(ps, cJSON_False);
		break;
	case 'n':
		if ((q = fast_word(p, end, "null", 4)) == NULL)
			return NULL;
		v = node(ps, cJSON_NULL);
		break;
	default:
		if ((q = fast_decimal(p, end, &isint, &d, &have)) == NULL)
			return NULL;
		v = number_node(ps, p, (size_t)(q - p), isint,
		    have ? d : num_parse_json((const char *)p, (size_t)(q - p)));
		break;
	}
	*pp = q;
	return v;
}

cJSON *
json_parse_fast(const char *text, size_t len, const struct json_keyset *ks,
    struct json_arena *arena)
{
	const unsigned char *p = (const unsigned char *)text, *end = p + len, *key;
	struct parser ps;
	cJSON *obj, *val, *last = NULL;
	uint64_t seen = 0;
	size_t klen;
	int k;

	memset(&ps, 0, sizeof ps);
	ps.arena = arena;
	p = fast_ws(p, end);
	if (p >= end || *p != '{')
		return NULL;
	obj = node(&ps, cJSON_Object);
	p = fast_ws(p + 1, end);
	if (p < end && *p == '}')
		return fast_ws(p + 1, end) == end ? obj : NULL;
	for (;;) {
		p = fast_ws(p, end);
		key = p + 1;
		if (p >= end || *p != '"' || (p = fast_string(p, end)) == NULL)
			return NULL;
		klen = (size_t)(p - key) - 1;
		if (p < end && *p != ':')
			p = fast_ws(p, end);
		if (p >= end || *p != ':')
			return NULL;
		p = fast_ws(p + 1, end);
		if ((k = ks->slot[keyset_slot(ks, key, klen)]) < 0) {
			if ((p = fast_skip(p, end, 1)) == NULL)
				return NULL;
		} else {
			/* A repeated key takes the slow path, which keeps the last value. */
			if (seen & (1ULL << k) || (val = fast_value(&ps, &p, end, 1)) == NULL)
				return NULL;
			seen |= 1ULL << k;
			/* In an arena the keyset's own string (the same bytes) names it. */
			val->string = arena != NULL ? (char *)ks->key[k] :
			    dupstr(&ps, (const char *)key, klen);
			/* Linked as cJSON_AddItemToArray() links: the first's prev is the last. */
			fast_link(obj, &last, val);
		}
		if (p < end && *p != ',' && *p != '}')
			p = fast_ws(p, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}')
			break;
		return NULL;
	}
	return fast_ws(p + 1, end) == end ? obj : NULL;
}

const char *
json_scan_ws(const char *p, const char *end)
{
	return (const char *)fast_ws((const unsigned char *)p, (const unsigned char *)end);
}

const char *
json_scan_string(const char *p, const char *end)
{
	if (p >= end || *p != '"')
		return NULL;
	return (const char *)fast_string((const unsigned char *)p, (const unsigned char *)end);
}

const char *
json_scan_skip(const char *p, const char *end)
{
	return (const char *)fast_skip((const unsigned char *)p, (const unsigned char *)end, 0);
}

const char *
json_scan_flat(const char *text, const char *stop, struct json_scan_member *m,
    size_t max, size_t *n)
{
	const unsigned char *p = (const unsigned char *)text, *end = (const unsigned char *)stop;
	const unsigned char *key, *q;
	struct json_scan_member *x;
	bool have;

	*n = 0;
	p = fast_ws(p, end);
	if (p >= end || *p != '{')
		return NULL;
	p = fast_ws(p + 1, end);
	if (p < end && *p == '}')
		return (const char *)p + 1;
	for (;;) {
		key = p + 1;
		if (p >= end || *p != '"' || (p = fast_string(p, end)) == NULL || *n == max)
			return NULL;
		x = &m[(*n)++];
		memset(x, 0, sizeof *x);
		x->key = (const char *)key;
		x->klen = (size_t)(p - key) - 1;
		if (p < end && *p != ':')
			p = fast_ws(p, end);
		if (p >= end || *p != ':')
			return NULL;
		p = fast_ws(p + 1, end);
		if (p >= end)
			return NULL;
		x->s = (const char *)p;
		switch (*p) {
		case '"':
			if ((q = fast_string(p, end)) == NULL)
				return NULL;
			x->type = cJSON_String;
			x->s = (const char *)p + 1;
			x->n = (size_t)(q - p) - 2;
			break;
		case 't':
			x->type = cJSON_True;
			q = fast_word(p, end, "true", 4);
			break;
		case 'f':
			x->type = cJSON_False;
			q = fast_word(p, end, "false", 5);
			break;
		case 'n':
			x->type = cJSON_NULL;
			q = fast_word(p, end, "null", 4);
			break;
		case '{':
		case '[':
			x->type = *p == '{' ? cJSON_Object : cJSON_Array;
			q = fast_skip(p, end, 1);
			break;
		default:
			x->type = cJSON_Number;
			if ((q = fast_decimal(p, end, &x->isint, &x->d, &have)) == NULL)
				return NULL;
			x->n = (size_t)(q - p);
			if (!have)
				x->d = num_parse_json((const char *)p, x->n);
			/* As number_node() stores it: an integer's -0 is 0. */
			if (x->isint && x->d == 0)
				x->d = 0.0;
			break;
		}
		if ((p = q) == NULL)
			return NULL;
		if (p < end && *p != ',' && *p != '}')
			p = fast_ws(p, end);
		if (p < end && *p == ',') {
			p = fast_ws(p + 1, end);
			continue;
		}
		if (p < end && *p == '}')
			return (const char *)p + 1;
		return NULL;
	}
}

cJSON *
json_scan_number_node(const struct json_scan_member *m)
{
	struct parser ps;

	memset(&ps, 0, sizeof ps);
	return number_node(&ps, (const unsigned char *)m->s, m->n, m->isint, m->d);
}
