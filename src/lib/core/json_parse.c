/*
 * json_parse: JSON text to a tree as Python's json module reads it
 * (contract in json.h): integer versus float kept from the text, a
 * repeated key at its first position with its last value, NaN and
 * Infinity tokens; json_parse_keys() builds only the wanted top-level
 * members and checks the rest; json_parse_strict() reads RFC 8259 only.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/json_private.h"
#include "core/num.h"
#include "core/strmap.h"
#include "core/utf8.h"

/* Objects with more members than this get a hash table for duplicate keys. */
#define DUP_LINEAR 64

static cJSON *parse_value(struct parser *ps);

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
	return dupstr(ps, ps->sb.s, ps->sb.len);
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
static inline bool
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

/* A number; strict: NULL after failing at it when it is out of range. */
static cJSON *
parse_number(struct parser *ps)
{
	const unsigned char *s = ps->p;
	bool isint;
	size_t n;
	double d;

	if (!scan_number(ps, &isint))
		return NULL;
	n = (size_t)(ps->p - s);
	d = num_parse_json((const char *)s, n);
	if (ps->strict && (isinf(d) || (isint && !fits_int64((const char *)s, n)))) {
		ps->p = s;
		fail(ps, "number out of range: %.*s", (int)(n > 40 ? 40 : n), s);
		return NULL;
	}
	return number_node(ps, s, n, isint, d);
}

/* Indexes a member by its name (its first place: names are not repeated). */
static void
keytab_put(struct strmap *t, cJSON *item)
{
	bool added;

	strmap_put(t, item->string, &added)->ptr = item;
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
	struct strmap tab = STRMAP_INIT;
	struct strmap_entry *e;
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
			kspan = ps->sb.s;
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
			old = (e = strmap_find(&tab, key)) != NULL ? e->ptr : NULL;
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
			json_take_content(old, val, ps->arena != NULL);
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
	strmap_free(&tab);
	ps->depth--;
	return obj;
bad:
	strmap_free(&tab);
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

