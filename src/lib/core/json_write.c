/*
 * json_write: trees to text as Python's json module writes them (compact,
 * indent=2, canonical), floats as Python's repr; Python's repr() and str()
 * of a value.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/num.h"
#include "core/text.h"
#include "core/utf8.h"

/* Members sorted on the stack up to this many, on the heap beyond. */
#define KIDS_STACK 64

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
	buf_add(&t, where->s, where->len);
	buf_free(where);
	*where = t;
}

static int
write_value(buf *out, const cJSON *v, enum json_style style, int level,
    buf *where)
{
	char num[NUM_BUFSZ];
	const cJSON *c, **kids = NULL, *stack[KIDS_STACK];
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
	kids = n <= KIDS_STACK ? stack : emalloc(n * sizeof *kids);
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

