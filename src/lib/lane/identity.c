#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "core/text.h"
#include "lane/identity.h"

const char *const identity_keys[IDENTITY_KEYS] = {
	[IDENTITY_WORKLOAD] = "workload_id",
	[IDENTITY_VARIANT] = "variant_id",
	[IDENTITY_BENCHMARK_VERSION] = "benchmark_version",
	[IDENTITY_RECIPE] = "recipe_fingerprint",
	[IDENTITY_HARDWARE] = "hardware_profile_id",
	[IDENTITY_SOFTWARE] = "software_profile_id",
};

bool
identity_value_missing(const cJSON *v)
{
	size_t n;

	if (v == NULL || cJSON_IsNull(v))
		return true;
	if (!cJSON_IsString(v))
		return false;
	/* A visible ASCII first character is no whitespace of str.strip(). */
	if (v->valuestring[0] > ' ' && v->valuestring[0] < 0x7f)
		return false;
	text_py_strip(v->valuestring, &n);
	return n == 0;
}

bool
identity_uses_v2(const cJSON *schema, const cJSON *const v[IDENTITY_KEYS])
{
	char *s;
	bool two;

	for (int i = 0; i < IDENTITY_KEYS; i++)
		if (v[i] != NULL)
			return true;
	if (schema == NULL)
		return false;
	if (cJSON_IsString(schema))
		return strcmp(schema->valuestring, "2") == 0;
	s = json_pystr_dup(schema);
	two = strcmp(s, "2") == 0;
	free(s);
	return two;
}

void
identity_of(const cJSON *rec, struct identity *id)
{
	const cJSON *v[IDENTITY_KEYS];
	buf missing = BUF_INIT;
	int i;

	memset(id, 0, sizeof *id);
	for (i = 0; i < IDENTITY_KEYS; i++) {
		v[i] = json_get(rec, identity_keys[i]);
		id->value[i] = v[i] != NULL ? json_pystr_dup(v[i]) : estrdup("None");
		if (identity_value_missing(v[i]))
			buf_addf(&missing, "%s%s", missing.len ? ", " : "", identity_keys[i]);
	}
	id->uses_v2 = identity_uses_v2(json_get(rec, "result_schema_version"), v);
	id->complete = missing.len == 0;
	if (!id->complete)
		id->error = easprintf("Performance record missing required comparison "
		    "identity fields: %s", missing.s);
	buf_free(&missing);
}

void
identity_free(struct identity *id)
{
	for (int i = 0; i < IDENTITY_KEYS; i++)
		free(id->value[i]);
	free(id->error);
	memset(id, 0, sizeof *id);
}

/*
 * The other recipe of a cohort: when rec is a trusted record (run_source "scheduled_main", or
 * baseline_eligible true) of another recipe than fp (its non-blank
 * recipe_fingerprint differs), str() of its fingerprint as a new string;
 * else NULL.
 */
static char *
identity_other_recipe(const cJSON *rec, const char *fp)
{
	const cJSON *rs = json_get(rec, "run_source"), *v = json_get(rec, "recipe_fingerprint");
	char *s;
	size_t n;

	if (!((cJSON_IsString(rs) && strcmp(rs->valuestring, "scheduled_main") == 0) ||
	    cJSON_IsTrue(json_get(rec, "baseline_eligible"))))
		return NULL;
	if (v == NULL || cJSON_IsNull(v))
		return NULL;
	s = json_pystr_dup(v);
	text_py_strip(s, &n);
	if (n == 0 || strcmp(s, fp) == 0) {
		free(s);
		return NULL;
	}
	return s;
}

void
identity_add_other_recipe(const cJSON *rec, const char *fp, char ***fps, size_t *n)
{
	char *s = identity_other_recipe(rec, fp);

	if (s == NULL)
		return;
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*fps)[i], s) == 0) {
			free(s);
			return;
		}
	*fps = erealloc(*fps, (*n + 1) * sizeof **fps);
	(*fps)[(*n)++] = s;
}

bool
identity_other_benchmark(const cJSON *a, const cJSON *b)
{
	const cJSON *ra = json_get(a, "recipe"), *rb = json_get(b, "recipe");

	if (!cJSON_IsObject(json_get(ra, "tool")) || !cJSON_IsObject(json_get(rb, "tool")))
		return false;
	return strcmp(json_str(json_get(ra, "benchmark"), "benchmark_id"),
	    json_str(json_get(rb, "benchmark"), "benchmark_id")) != 0;
}
