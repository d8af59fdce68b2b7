#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/err.h"
#include "core/json.h"
#include "core/num.h"
#include "core/text.h"
#include "core/utf8.h"

/*
 * cJSON allocates through emalloc: a node, a copy or a key it cannot
 * allocate ends the program with "out of memory" (exit 2) instead of a
 * NULL that a caller would pass on.
 */
__attribute__((constructor)) static void
json_hooks(void)
{
	cJSON_Hooks h = { emalloc, free };

	cJSON_InitHooks(&h);
}

/* Objects with more members than this get a hash table for duplicate keys. */
#define DUP_LINEAR 64

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

struct json_arena *
json_arena_new(void)
{
	return ecalloc(1, sizeof(struct json_arena));
}

static void *
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

void
json_arena_reset(struct json_arena *a)
{
	for (size_t i = 0; i < a->nold; i++)
		free(a->old[i]);
	a->nold = 0;
	a->used = 0;
}

void
json_arena_free(struct json_arena *a)
{
	if (a == NULL)
		return;
	json_arena_reset(a);
	free(a->old);
	free(a->chunk);
	free(a);
}

static cJSON *parse_value(struct parser *ps);
static cJSON *must(cJSON *v);

static void
fail(struct parser *ps, const char *fmt, ...)
{
	va_list ap;

	if (ps->err->msg[0] != '\0')
		return;
	ps->err->line = ps->line;
	ps->err->col = (long)(ps->p - ps->line_start) + 1;
	va_start(ap, fmt);
	vsnprintf(ps->err->msg, sizeof ps->err->msg, fmt, ap);
	va_end(ap);
}

static void
skip_ws(struct parser *ps)
{
	/* Indentation: eight spaces at a time. */
	while (ps->end - ps->p >= 8 && memcmp(ps->p, "        ", 8) == 0)
		ps->p += 8;
	while (ps->p < ps->end) {
		unsigned char c = *ps->p;
		if (c == '\n') {
			ps->line++;
			ps->line_start = ps->p + 1;
		} else if (c != ' ' && c != '\t' && c != '\r')
			break;
		ps->p++;
	}
}

/* Describes the byte at the parse position for an error message. */
static const char *
here(struct parser *ps, char t[16])
{
	unsigned char c;

	if (ps->p >= ps->end)
		return "end of input";
	c = *ps->p;
	if (c == '\0')
		return "a NUL byte";
	if (c >= 0x20 && c < 0x7f)
		snprintf(t, 16, "'%c'", c);
	else
		snprintf(t, 16, "byte 0x%02x", c);
	return t;
}

/* Past the literal w (n bytes) at p, or NULL. */
static inline const unsigned char *
fast_word(const unsigned char *p, const unsigned char *end, const char *w, size_t n)
{
	return (size_t)(end - p) >= n && memcmp(p, w, n) == 0 ? p + n : NULL;
}

static bool
literal(struct parser *ps, const char *word)
{
	const unsigned char *q = fast_word(ps->p, ps->end, word, strlen(word));

	if (q == NULL)
		return false;
	ps->p = q;
	return true;
}

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static long
hex4(struct parser *ps)
{
	long v = 0;
	int i, h;

	if (ps->end - ps->p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		if ((h = hexval(ps->p[i])) < 0)
			return -1;
		v = v * 16 + h;
	}
	ps->p += 4;
	return v;
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

static char *
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

/*
 * Reads a string literal at ps->p, appending its text to out (NULL: only
 * checks it). False after failing.
 */
static bool
string_body(struct parser *ps, buf *out)
{
	const unsigned char *run;
	uint32_t cp;
	long u, lo;
	int len;
	char t[16];

	ps->p++;	/* the opening quote */
	for (;;) {
		run = ps->p;
		ps->p = string_stop(ps->p, ps->end);
		if (out != NULL)
			buf_add(out, run, (size_t)(ps->p - run));
		if (ps->p >= ps->end) {
			fail(ps, "unterminated string");
			return false;
		}
		if (*ps->p == '"') {
			ps->p++;
			return true;
		}
		if (*ps->p >= 0x80) {
			len = utf8_decode(ps->p, (size_t)(ps->end - ps->p),
			    &cp, false);
			if (len == 0) {
				fail(ps, "invalid UTF-8 (byte 0x%02x) in string",
				    *ps->p);
				return false;
			}
			if (out != NULL)
				buf_add(out, ps->p, (size_t)len);
			ps->p += len;
			continue;
		}
		if (*ps->p != '\\') {
			fail(ps, "unescaped control character (%s) in string",
			    here(ps, t));
			return false;
		}
		ps->p++;
		if (ps->p >= ps->end) {
			fail(ps, "unterminated string");
			return false;
		}
		switch (*ps->p++) {
		case '"': u = '"'; break;
		case '\\': u = '\\'; break;
		case '/': u = '/'; break;
		case 'b': u = '\b'; break;
		case 'f': u = '\f'; break;
		case 'n': u = '\n'; break;
		case 'r': u = '\r'; break;
		case 't': u = '\t'; break;
		case 'u':
			if ((u = hex4(ps)) < 0) {
				fail(ps, "invalid \\u escape in string");
				return false;
			}
			if (u == 0) {
				fail(ps, "\\u0000 in a string is not supported");
				return false;
			}
			/* A high surrogate followed by a low one is one code point. */
			if (u >= 0xd800 && u <= 0xdbff && ps->end - ps->p >= 6 &&
			    ps->p[0] == '\\' && ps->p[1] == 'u') {
				const unsigned char *save = ps->p;
				ps->p += 2;
				lo = hex4(ps);
				if (lo >= 0xdc00 && lo <= 0xdfff)
					u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				else
					ps->p = save;
			}
			break;
		default:
			ps->p--;
			fail(ps, "invalid escape '\\%c' in string",
			    *ps->p >= 0x20 && *ps->p < 0x7f ? *ps->p : '?');
			return false;
		}
		if (out != NULL)
			utf8_encode(out, (uint32_t)u);
	}
}

/* Past the plain string whose opening quote is at p, or NULL. */
static inline const unsigned char *
fast_string(const unsigned char *p, const unsigned char *end)
{
	p = string_stop(p + 1, end);
	return p < end && *p == '"' ? p + 1 : NULL;
}

/*
 * A string without escapes or non-ASCII, the usual case: its text as a
 * span of the input, past the closing quote. False leaves ps as it was.
 */
static bool
plain_string(struct parser *ps, const char **start, size_t *n)
{
	const unsigned char *q = fast_string(ps->p, ps->end);

	if (q == NULL)
		return false;
	*start = (const char *)ps->p + 1;
	*n = (size_t)(q - ps->p - 2);
	ps->p = q;
	return true;
}

/* Parses a string literal at ps->p into a new C string. */
static char *
parse_string(struct parser *ps)
{
	const char *span;
	size_t n;

	if (plain_string(ps, &span, &n))
		return dupstr(ps, span, n);
	buf_reset(&ps->sb);
	if (!string_body(ps, &ps->sb))
		return NULL;
	return dupstr(ps, ps->sb.s != NULL ? ps->sb.s : "", ps->sb.len);
}

/* A number node's values, as cJSON sets them (valueint saturated). */
static void
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

/* Moves past a number of the JSON grammar; false after failing. */
static bool
scan_number(struct parser *ps, bool *isint)
{
	const unsigned char *q, *stop;
	const char *why;

	if ((q = number_end(ps->p, ps->end, isint, &stop, &why)) == NULL) {
		ps->p = stop;
		fail(ps, "%s", why);
		return false;
	}
	ps->p = q;
	return true;
}

/* True when the integer literal s[0..n) is within signed 64 bits. */
static bool
fits_int64(const char *s, size_t n)
{
	static const char max[] = "9223372036854775807", min[] = "9223372036854775808";
	bool neg = n > 0 && s[0] == '-';
	const char *lim = neg ? min : max;

	if (neg) {
		s++;
		n--;
	}
	if (n != 19)
		return n < 19;
	return memcmp(s, lim, 19) <= 0;
}

/* The node of the number text s[0..n) of value d (strict: NULL after failing at s). */
static cJSON *
number_node(struct parser *ps, const unsigned char *s, size_t n, bool isint, double d)
{
	cJSON *v;

	if (ps->strict && (isinf(d) || (isint && !fits_int64((const char *)s, n)))) {
		ps->p = s;
		fail(ps, "number out of range: %.*s", (int)(n > 40 ? 40 : n), s);
		return NULL;
	}
	v = node(ps, cJSON_Number);
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

static cJSON *
parse_number(struct parser *ps)
{
	const unsigned char *s = ps->p;
	bool isint;

	if (!scan_number(ps, &isint))
		return NULL;
	return number_node(ps, s, (size_t)(ps->p - s), isint,
	    num_parse_json((const char *)s, (size_t)(ps->p - s)));
}

/*
 * Moves src's value into dst (which keeps its key and list links). In an
 * arena nothing is freed: the arena goes as a whole.
 */
static void
take_content(cJSON *dst, cJSON *src, bool arena)
{
	if (arena) {
		dst->type = src->type;
		dst->valuestring = src->valuestring;
		dst->valueint = src->valueint;
		dst->valuedouble = src->valuedouble;
		dst->child = src->child;
		return;
	}
	if (dst->child != NULL)
		cJSON_Delete(dst->child);
	free(dst->valuestring);
	dst->type = src->type & ~(cJSON_IsReference | cJSON_StringIsConst);
	dst->valuestring = src->valuestring;
	dst->valueint = src->valueint;
	dst->valuedouble = src->valuedouble;
	dst->child = src->child;
	src->child = NULL;
	src->valuestring = NULL;
	cJSON_Delete(src);
}

struct keytab {
	cJSON **slot;
	size_t cap, n;
};

static void keytab_put(struct keytab *t, cJSON *item);

static void
keytab_grow(struct keytab *t)
{
	struct keytab old = *t;
	size_t i;

	t->cap = t->cap ? t->cap * 2 : 64;
	t->slot = ecalloc(t->cap, sizeof *t->slot);
	t->n = 0;
	for (i = 0; i < old.cap; i++)
		if (old.slot[i] != NULL)
			keytab_put(t, old.slot[i]);
	free(old.slot);
}

static void
keytab_put(struct keytab *t, cJSON *item)
{
	size_t i;

	if ((t->n + 1) * 2 > t->cap)
		keytab_grow(t);
	i = (size_t)(text_hash(item->string) & (t->cap - 1));
	while (t->slot[i] != NULL)
		i = (i + 1) & (t->cap - 1);
	t->slot[i] = item;
	t->n++;
}

static cJSON *
keytab_find(const struct keytab *t, const char *key)
{
	size_t i = (size_t)(text_hash(key) & (t->cap - 1));

	while (t->slot[i] != NULL) {
		if (strcmp(t->slot[i]->string, key) == 0)
			return t->slot[i];
		i = (i + 1) & (t->cap - 1);
	}
	return NULL;
}

static bool skip_value(struct parser *ps);

/* Checks an object or array without building it. */
static bool
skip_container(struct parser *ps, char close)
{
	bool obj = close == '}';
	char t[16];

	if (++ps->depth > JSON_MAX_DEPTH) {
		fail(ps, "nesting deeper than %d levels", JSON_MAX_DEPTH);
		return false;
	}
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		ps->depth--;
		return true;
	}
	for (;;) {
		skip_ws(ps);
		if (obj) {
			if (ps->p >= ps->end || *ps->p != '"') {
				fail(ps, "expected a member name, found %s", here(ps, t));
				return false;
			}
			if (!string_body(ps, NULL))
				return false;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				fail(ps, "expected ':' after member name, found %s", here(ps, t));
				return false;
			}
			ps->p++;
		}
		if (!skip_value(ps))
			return false;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			break;
		}
		fail(ps, obj ? "expected ',' or '}' in object, found %s" :
		    "expected ',' or ']' in array, found %s", here(ps, t));
		return false;
	}
	ps->depth--;
	return true;
}

/* Checks a value as parse_value() would, without building anything. */
static bool
skip_value(struct parser *ps)
{
	bool isint;
	char t[16];

	skip_ws(ps);
	if (ps->p >= ps->end) {
		fail(ps, "unexpected end of input");
		return false;
	}
	switch (*ps->p) {
	case '{':
		return skip_container(ps, '}');
	case '[':
		return skip_container(ps, ']');
	case '"':
		return string_body(ps, NULL);
	case 't':
		if (literal(ps, "true"))
			return true;
		break;
	case 'f':
		if (literal(ps, "false"))
			return true;
		break;
	case 'n':
		if (literal(ps, "null"))
			return true;
		break;
	case 'N':
		if (literal(ps, "NaN"))
			return true;
		break;
	case 'I':
		if (literal(ps, "Infinity"))
			return true;
		break;
	case '-':
		if (literal(ps, "-Infinity"))
			return true;
		return scan_number(ps, &isint);
	default:
		if (*ps->p >= '0' && *ps->p <= '9')
			return scan_number(ps, &isint);
		break;
	}
	fail(ps, "unexpected %s", here(ps, t));
	return false;
}

/* Whether a top-level member is wanted (json_parse_keys). */
static bool
wanted(const struct parser *ps, const char *key, size_t n)
{
	for (size_t i = 0; i < ps->nkeys; i++)
		if (ps->keys[i][0] == key[0] && strncmp(ps->keys[i], key, n) == 0 &&
		    ps->keys[i][n] == '\0')
			return true;
	return false;
}

/*
 * One object. Over 100 lines on purpose: one pass over the members, in which
 * Python's rule for a repeated key (first position, last value) and the
 * wanted-keys filter of json_parse_keys must see each member once; split,
 * every step would take the loop's whole state.
 */
static cJSON *
parse_object(struct parser *ps)
{
	cJSON *obj, *val, *old, *it;
	struct keytab tab = { NULL, 0, 0 };
	size_t count = 0, klen;
	const char *kspan;
	char *key, t[16];

	if (++ps->depth > JSON_MAX_DEPTH) {
		fail(ps, "nesting deeper than %d levels", JSON_MAX_DEPTH);
		return NULL;
	}
	obj = node(ps, cJSON_Object);
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		ps->depth--;
		return obj;
	}
	for (;;) {
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != '"') {
			fail(ps, "expected a member name, found %s", here(ps, t));
			goto bad;
		}
		if (!plain_string(ps, &kspan, &klen)) {
			buf_reset(&ps->sb);
			if (!string_body(ps, &ps->sb))
				goto bad;
			kspan = ps->sb.s != NULL ? ps->sb.s : "";
			klen = ps->sb.len;
		}
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != ':') {
			fail(ps, "expected ':' after member name, found %s",
			    here(ps, t));
			goto bad;
		}
		ps->p++;
		if (ps->keys != NULL && ps->depth == 1 && !wanted(ps, kspan, klen)) {
			/* Not wanted: checked, not built. */
			if (!skip_value(ps))
				goto bad;
			goto next;
		}
		key = dupstr(ps, kspan, klen);
		if ((val = parse_value(ps)) == NULL) {
			if (ps->arena == NULL)
				free(key);
			goto bad;
		}
		/* Python keeps the first position and the last value. */
		old = NULL;
		if (tab.cap > 0)
			old = keytab_find(&tab, key);
		else
			for (it = obj->child; it != NULL && old == NULL; it = it->next)
				if (it->string[0] == key[0] && strcmp(it->string, key) == 0)
					old = it;
		if (old != NULL && ps->strict) {
			char kb[80];

			fail(ps, "duplicate key '%s'", err_clean(key, kb, sizeof kb));
			if (ps->arena == NULL) {
				free(key);
				cJSON_Delete(val);
			}
			goto bad;
		}
		if (old != NULL) {
			if (ps->arena == NULL)
				free(key);
			take_content(old, val, ps->arena != NULL);
		} else {
			val->string = key;
			cJSON_AddItemToArray(obj, val);
			if (++count > DUP_LINEAR) {
				if (tab.cap == 0)
					for (it = obj->child; it != NULL; it = it->next)
						keytab_put(&tab, it);
				else
					keytab_put(&tab, val);
			}
		}
next:
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			break;
		}
		fail(ps, "expected ',' or '}' in object, found %s", here(ps, t));
		goto bad;
	}
	free(tab.slot);
	ps->depth--;
	return obj;
bad:
	free(tab.slot);
	if (ps->arena == NULL)
		cJSON_Delete(obj);
	return NULL;
}

static cJSON *
parse_array(struct parser *ps)
{
	cJSON *arr, *val;
	char t[16];

	if (++ps->depth > JSON_MAX_DEPTH) {
		fail(ps, "nesting deeper than %d levels", JSON_MAX_DEPTH);
		return NULL;
	}
	arr = node(ps, cJSON_Array);
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		ps->depth--;
		return arr;
	}
	for (;;) {
		if ((val = parse_value(ps)) == NULL) {
			if (ps->arena == NULL)
				cJSON_Delete(arr);
			return NULL;
		}
		cJSON_AddItemToArray(arr, val);
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == ']') {
			ps->p++;
			break;
		}
		fail(ps, "expected ',' or ']' in array, found %s", here(ps, t));
		if (ps->arena == NULL)
			cJSON_Delete(arr);
		return NULL;
	}
	ps->depth--;
	return arr;
}

static cJSON *
must(cJSON *v)
{
	if (v == NULL)
		die("out of memory");
	return v;
}

static cJSON *
parse_value(struct parser *ps)
{
	char *s;
	cJSON *v;
	char t[16];

	skip_ws(ps);
	if (ps->p >= ps->end) {
		fail(ps, "unexpected end of input");
		return NULL;
	}
	switch (*ps->p) {
	case '{':
		return parse_object(ps);
	case '[':
		return parse_array(ps);
	case '"':
		if ((s = parse_string(ps)) == NULL)
			return NULL;
		v = node(ps, cJSON_String);
		v->valuestring = s;
		return v;
	case 't':
		if (literal(ps, "true"))
			return node(ps, cJSON_True);
		break;
	case 'f':
		if (literal(ps, "false"))
			return node(ps, cJSON_False);
		break;
	case 'n':
		if (literal(ps, "null"))
			return node(ps, cJSON_NULL);
		break;
	case 'N':
		if (!ps->strict && literal(ps, "NaN")) {
			v = node(ps, cJSON_Number);
			v->valuedouble = NAN;
			return v;
		}
		break;
	case 'I':
		if (!ps->strict && literal(ps, "Infinity")) {
			v = node(ps, cJSON_Number);
			number_value(v, INFINITY);
			return v;
		}
		break;
	case '-':
		if (!ps->strict && literal(ps, "-Infinity")) {
			v = node(ps, cJSON_Number);
			number_value(v, -INFINITY);
			return v;
		}
		return parse_number(ps);
	default:
		if (*ps->p >= '0' && *ps->p <= '9')
			return parse_number(ps);
		break;
	}
	fail(ps, "unexpected %s", here(ps, t));
	return NULL;
}

cJSON *
json_parse(const char *text, size_t len, json_error *err)
{
	return json_parse_keys(text, len, NULL, 0, err);
}

cJSON *
json_parse_keys(const char *text, size_t len, const char *const *keys,
    size_t nkeys, json_error *err)
{
	return json_parse_arena(text, len, keys, nkeys, NULL, err);
}

static cJSON *
parse_text(const char *text, size_t len, const char *const *keys, size_t nkeys,
    struct json_arena *arena, bool strict, json_error *err)
{
	struct parser ps;
	cJSON *v;
	char t[16];

	memset(&ps, 0, sizeof ps);
	ps.strict = strict;
	ps.keys = keys;
	ps.nkeys = nkeys;
	ps.arena = arena;
	ps.p = (const unsigned char *)text;
	ps.end = ps.p + len;
	ps.line_start = ps.p;
	ps.line = 1;
	ps.err = err;
	err->msg[0] = '\0';
	err->line = err->col = 0;
	v = parse_value(&ps);
	if (v != NULL) {
		skip_ws(&ps);
		if (ps.p < ps.end) {
			fail(&ps, "unexpected %s after the value", here(&ps, t));
			if (arena == NULL)
				cJSON_Delete(v);
			v = NULL;
		}
	}
	buf_free(&ps.sb);
	return v;
}

cJSON *
json_parse_arena(const char *text, size_t len, const char *const *keys,
    size_t nkeys, struct json_arena *arena, json_error *err)
{
	return parse_text(text, len, keys, nkeys, arena, false, err);
}

cJSON *
json_parse_strict(const char *text, size_t len, json_error *err)
{
	return parse_text(text, len, NULL, 0, NULL, true, err);
}

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

/*
 * A wanted member's value at *pp: a plain string, a number, true, false
 * or null, and *pp past it; NULL for anything else.
 */
static cJSON *
fast_value(struct parser *ps, const unsigned char **pp, const unsigned char *end)
{
	const unsigned char *p = *pp, *q;
	bool isint, have;
	cJSON *v;
	double d;

	if (p >= end)
		return NULL;
	switch (*p) {
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
			if (seen & (1ULL << k) || (val = fast_value(&ps, &p, end)) == NULL)
				return NULL;
			seen |= 1ULL << k;
			/* In an arena the keyset's own string (the same bytes) names it. */
			val->string = arena != NULL ? (char *)ks->key[k] :
			    dupstr(&ps, (const char *)key, klen);
			/* Linked as cJSON_AddItemToArray() links: the first's prev is the last. */
			if (last == NULL)
				obj->child = val;
			else {
				last->next = val;
				val->prev = last;
			}
			obj->child->prev = last = val;
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

cJSON *
json_new_object(void)
{
	return must(cJSON_CreateObject());
}

cJSON *
json_new_array(void)
{
	return must(cJSON_CreateArray());
}

cJSON *
json_new_string(const char *s)
{
	return must(cJSON_CreateString(s));
}

cJSON *
json_new_bool(bool b)
{
	return must(cJSON_CreateBool(b));
}

cJSON *
json_new_null(void)
{
	return must(cJSON_CreateNull());
}

void
json_append(cJSON *arr, cJSON *v)
{
	cJSON_AddItemToArray(arr, v);
}

cJSON *
json_new_int(long long n)
{
	cJSON *v = must(cJSON_CreateNumber((double)n));

	v->type |= JSON_INT;
	v->valuestring = easprintf("%lld", n);
	return v;
}

cJSON *
json_new_finite(double v)
{
	return isfinite(v) ? json_new_float(v) : json_new_null();
}

cJSON *
json_new_float(double d)
{
	cJSON *v;

	/* cJSON converts to int for valueint: keep NaN away from that cast. */
	if (isnan(d)) {
		v = must(cJSON_CreateNumber(0));
		v->valuedouble = d;
		return v;
	}
	return must(cJSON_CreateNumber(d));
}

bool
json_is_int(const cJSON *v)
{
	return cJSON_IsNumber(v) && (v->type & JSON_INT);
}

cJSON *
json_get(const cJSON *obj, const char *key)
{
	cJSON *c;

	if (!cJSON_IsObject(obj))
		return NULL;
	for (c = obj->child; c != NULL; c = c->next)
		if (c->string[0] == key[0] && strcmp(c->string, key) == 0)
			return c;
	return NULL;
}

void
json_set(cJSON *obj, const char *key, cJSON *v)
{
	cJSON *old = json_get(obj, key);

	if (old != NULL) {
		take_content(old, v, false);
		return;
	}
	free(v->string);
	v->string = estrdup(key);
	v->type &= ~cJSON_StringIsConst;
	cJSON_AddItemToArray(obj, v);
}

void
json_remove(cJSON *obj, const char *key)
{
	cJSON *c = json_get(obj, key);

	if (c != NULL)
		cJSON_Delete(cJSON_DetachItemViaPointer(obj, c));
}

cJSON *
json_take(cJSON *obj, const char *key)
{
	cJSON *c = json_get(obj, key);

	return c != NULL ? cJSON_DetachItemViaPointer(obj, c) : NULL;
}

bool
json_truthy(const cJSON *v)
{
	if (v == NULL || cJSON_IsNull(v) || cJSON_IsFalse(v))
		return false;
	if (cJSON_IsTrue(v))
		return true;
	if (json_is_int(v))
		return strcmp(v->valuestring, "0") != 0;
	if (cJSON_IsNumber(v))
		return v->valuedouble != 0.0;
	if (cJSON_IsString(v))
		return v->valuestring[0] != '\0';
	return v->child != NULL;
}

bool
json_identical(const cJSON *a, const cJSON *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (a->type != b->type || (a->string == NULL) != (b->string == NULL) ||
	    (a->string != NULL && strcmp(a->string, b->string) != 0) ||
	    (a->valuestring == NULL) != (b->valuestring == NULL) ||
	    (a->valuestring != NULL && strcmp(a->valuestring, b->valuestring) != 0) ||
	    memcmp(&a->valuedouble, &b->valuedouble, sizeof a->valuedouble) != 0 ||
	    a->valueint != b->valueint)
		return false;
	for (a = a->child, b = b->child; a != NULL && b != NULL; a = a->next, b = b->next)
		if (!json_identical(a, b))
			return false;
	return a == NULL && b == NULL;
}

bool
json_equal(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y;
	int n = 0;

	if (a == NULL || b == NULL)
		return a == b;
	if (cJSON_IsBool(a) || cJSON_IsBool(b))
		return cJSON_IsBool(a) && cJSON_IsBool(b) && cJSON_IsTrue(a) == cJSON_IsTrue(b);
	if (cJSON_IsNumber(a) || cJSON_IsNumber(b)) {
		if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b))
			return false;
		if (json_is_int(a) && json_is_int(b))
			return strcmp(a->valuestring, b->valuestring) == 0 ||
			    (a->valuedouble == 0 && b->valuedouble == 0);	/* -0 */
		return a->valuedouble == b->valuedouble;
	}
	if ((a->type & 0xff) != (b->type & 0xff))
		return false;
	if (cJSON_IsString(a))
		return strcmp(a->valuestring, b->valuestring) == 0;
	if (cJSON_IsArray(a)) {
		for (x = a->child, y = b->child; x != NULL && y != NULL; x = x->next, y = y->next)
			if (!json_equal(x, y))
				return false;
		return x == NULL && y == NULL;
	}
	if (cJSON_IsObject(a)) {
		for (x = a->child; x != NULL; x = x->next, n++)
			if (!json_equal(x, json_get(b, x->string)))
				return false;
		for (y = b->child; y != NULL; y = y->next)
			n--;
		return n == 0;
	}
	return true;	/* null */
}

void
json_write_string(buf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, run;
	uint32_t cp;
	int len;

	buf_grow(out, n + 2);
	buf_addc(out, '"');
	while (i < n) {
		run = i;
		while (i < n && p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' &&
		    p[i] != '\\')
			i++;
		buf_add(out, s + run, i - run);
		if (i >= n)
			break;
		switch (p[i]) {
		case '"': buf_adds(out, "\\\""); i++; continue;
		case '\\': buf_adds(out, "\\\\"); i++; continue;
		case '\n': buf_adds(out, "\\n"); i++; continue;
		case '\r': buf_adds(out, "\\r"); i++; continue;
		case '\t': buf_adds(out, "\\t"); i++; continue;
		case '\b': buf_adds(out, "\\b"); i++; continue;
		case '\f': buf_adds(out, "\\f"); i++; continue;
		default: break;
		}
		if (p[i] < 0x80) {
			buf_addf(out, "\\u%04x", p[i]);
			i++;
			continue;
		}
		len = utf8_decode(p + i, n - i, &cp, true);
		if (len == 0) {
			/* Unreachable for parsed text; keep the output ASCII. */
			buf_adds(out, "\\ufffd");
			i++;
			continue;
		}
		if (cp >= 0x10000) {
			cp -= 0x10000;
			buf_addf(out, "\\u%04x\\u%04x", 0xd800 + (cp >> 10),
			    0xdc00 + (cp & 0x3ff));
		} else
			buf_addf(out, "\\u%04x", cp);
		i += (size_t)len;
	}
	buf_addc(out, '"');
}

static int
cmp_key(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	/* Byte order of UTF-8 is code point order. */
	return strcmp(x->string, y->string);
}

static void
indent(buf *out, int level)
{
	buf_addc(out, '\n');
	for (int i = 0; i < level; i++)
		buf_add(out, "  ", 2);
}

/* Prepends a path step to *where on the way out of a failed write. */
static void
where_prepend(buf *where, const cJSON *parent, const cJSON *child, size_t idx)
{
	buf t = BUF_INIT;

	if (where == NULL)
		return;
	if (cJSON_IsObject(parent))
		buf_adds(&t, child->string);
	else
		buf_addf(&t, "[%zu]", idx);
	if (where->len > 0 && where->s[0] != '[')
		buf_addc(&t, '.');
	buf_add(&t, where->s != NULL ? where->s : "", where->len);
	buf_free(where);
	*where = t;
}

static int
write_value(buf *out, const cJSON *v, enum json_style style, int level,
    buf *where)
{
	char num[NUM_BUFSZ];
	const cJSON *c, **kids = NULL, *stack[DUP_LINEAR];
	size_t n = 0, i;
	bool obj;
	int rc = 0;

	switch (v->type & 0xff) {
	case cJSON_NULL:
		buf_add(out, "null", 4);
		return 0;
	case cJSON_True:
		buf_add(out, "true", 4);
		return 0;
	case cJSON_False:
		buf_add(out, "false", 5);
		return 0;
	case cJSON_String:
		json_write_string(out, v->valuestring);
		return 0;
	case cJSON_Number:
		if (json_is_int(v) && v->valuestring != NULL) {
			buf_adds(out, v->valuestring);
			return 0;
		}
		if (!isfinite(v->valuedouble)) {
			if (where != NULL)
				buf_reset(where);
			return -1;
		}
		buf_adds(out, num_repr(num, v->valuedouble));
		return 0;
	case cJSON_Array:
	case cJSON_Object:
		break;
	default:
		buf_add(out, "null", 4);
		return 0;
	}
	obj = cJSON_IsObject(v);
	for (c = v->child; c != NULL; c = c->next)
		n++;
	if (n == 0) {
		buf_adds(out, obj ? "{}" : "[]");
		return 0;
	}
	kids = n <= DUP_LINEAR ? stack : emalloc(n * sizeof *kids);
	for (i = 0, c = v->child; c != NULL; c = c->next)
		kids[i++] = c;
	if (obj && style == JSON_CANONICAL)
		qsort(kids, n, sizeof *kids, cmp_key);
	buf_addc(out, obj ? '{' : '[');
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_addc(out, ',');
		if (style == JSON_INDENT2)
			indent(out, level + 1);
		if (obj) {
			json_write_string(out, kids[i]->string);
			buf_adds(out, style == JSON_INDENT2 ? ": " : ":");
		}
		if (write_value(out, kids[i], style, level + 1, where) != 0) {
			where_prepend(where, v, kids[i], i);
			rc = -1;
			break;
		}
	}
	if (rc == 0) {
		if (style == JSON_INDENT2)
			indent(out, level);
		buf_addc(out, obj ? '}' : ']');
	}
	if (kids != stack)
		free(kids);
	return rc;
}

int
json_write(buf *out, const cJSON *v, enum json_style style, buf *where)
{
	if (where != NULL)
		buf_reset(where);
	return write_value(out, v, style, 0, where);
}

void
json_pyrepr(buf *out, const cJSON *v)
{
	char num[NUM_BUFSZ];
	const cJSON *c;

	switch (v->type & 0xff) {
	case cJSON_NULL:
		buf_adds(out, "None");
		return;
	case cJSON_True:
		buf_adds(out, "True");
		return;
	case cJSON_False:
		buf_adds(out, "False");
		return;
	case cJSON_Number:
		if (json_is_int(v) && v->valuestring != NULL)
			buf_adds(out, v->valuestring);
		else
			buf_adds(out, num_repr(num, v->valuedouble));
		return;
	case cJSON_String:
		text_py_repr(out, v->valuestring, strlen(v->valuestring));
		return;
	case cJSON_Array:
		buf_addc(out, '[');
		for (c = v->child; c != NULL; c = c->next) {
			if (c != v->child)
				buf_adds(out, ", ");
			json_pyrepr(out, c);
		}
		buf_addc(out, ']');
		return;
	case cJSON_Object:
		buf_addc(out, '{');
		for (c = v->child; c != NULL; c = c->next) {
			if (c != v->child)
				buf_adds(out, ", ");
			text_py_repr(out, c->string, strlen(c->string));
			buf_adds(out, ": ");
			json_pyrepr(out, c);
		}
		buf_addc(out, '}');
		return;
	default:
		buf_adds(out, "None");
	}
}

void
json_pystr(buf *out, const cJSON *v)
{
	if (cJSON_IsString(v))
		buf_adds(out, v->valuestring);
	else
		json_pyrepr(out, v);
}

char *
json_pystr_dup(const cJSON *v)
{
	buf b = BUF_INIT;

	json_pystr(&b, v);
	return buf_detach(&b);
}

const char *
json_str(const cJSON *obj, const char *key)
{
	const cJSON *v = json_get(obj, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

double
json_num(const cJSON *obj, const char *key)
{
	const cJSON *v = json_get(obj, key);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
