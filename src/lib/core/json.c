/*
 * json: the tree and its accessors. Nodes are cJSON's; see json.h for
 * what the type bits mean and who owns what. The parser is json_parse.c,
 * the quick scanner json_fast.c, the writer json_write.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/json_private.h"

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

struct json_arena *
json_arena_new(void)
{
	return ecalloc(1, sizeof(struct json_arena));
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

/*
 * Moves src's value into dst (which keeps its key and list links). In an
 * arena nothing is freed: the arena goes as a whole.
 */
void
json_take_content(cJSON *dst, cJSON *src, bool arena)
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

static cJSON *
must(cJSON *v)
{
	if (v == NULL)
		die("out of memory");
	return v;
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
		json_take_content(old, v, false);
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
