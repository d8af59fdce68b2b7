#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/json.h"
#include "core/num.h"
#include "lane/history_view.h"

int
history_kind(const char *const ident[IDENTITY_KEYS], const cJSON *const v[IDENTITY_KEYS],
    const cJSON *schema)
{
	bool complete = true, present = false;

	for (int i = 0; i < IDENTITY_KEYS; i++) {
		complete &= ident[i][0] != '\0';
		present |= v[i] != NULL && !cJSON_IsNull(v[i]);
	}
	if (complete)
		return KIND_V2;
	if (present || (schema != NULL && (json_is_int(schema) ?
	    strcmp(schema->valuestring, "2") == 0 :
	    cJSON_IsString(schema) && strcmp(schema->valuestring, "2") == 0)))
		return KIND_INVALID_V2;
	return KIND_LEGACY_V1;
}

void
history_label_num(buf *b, double x, int prec)
{
	char t[NUM_BUFSZ];
	size_t n;

	num_fixed(t, x, prec);
	if (strchr(t, '.') != NULL) {
		n = strlen(t);
		while (n > 0 && t[n - 1] == '0')
			t[--n] = '\0';
		if (n > 0 && t[n - 1] == '.')
			t[--n] = '\0';
	}
	buf_adds(b, strcmp(t, "-0") == 0 ? "0" : t);
}

const char *const history_kind_name[3] = { "v2", "invalid_v2", "legacy_v1" };

void
history_fields(const cJSON *rec, const char *const keys[], size_t n, const cJSON **f)
{
	const cJSON *c;

	for (size_t i = 0; i < n; i++)
		f[i] = NULL;
	cJSON_ArrayForEach(c, rec)
		for (size_t i = 0; i < n; i++)
			if (c->string[0] == keys[i][0] && strcmp(c->string, keys[i]) == 0) {
				f[i] = c;
				break;
			}
}

const char *
history_pystr(const cJSON *v, const char *missing, char **owned)
{
	*owned = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return missing;
	if (cJSON_IsString(v))
		return v->valuestring;
	return *owned = json_pystr_dup(v);
}

bool
history_web_url(const cJSON *v)
{
	return cJSON_IsString(v) && (strncasecmp(v->valuestring, "https://", 8) == 0 ||
	    strncasecmp(v->valuestring, "http://", 7) == 0);
}

bool
history_success(const cJSON *success)
{
	return success == NULL || json_truthy(success);
}

bool
history_failing(const char *status)
{
	return strcmp(status, "REGRESSION") == 0 || strcmp(status, "RECIPE_MISMATCH") == 0 ||
	    strcmp(status, "INFRA_ERROR") == 0;
}

bool
history_eligible(const cJSON *eligible, const cJSON *run_source)
{
	return cJSON_IsTrue(eligible) || (eligible == NULL && run_source == NULL);
}

void
history_cohort_key(const char *key[HISTORY_KEY_PARTS], int kind, const char *model,
    const char *gpu, const char *const ident[IDENTITY_KEYS])
{
	key[HKEY_KIND] = history_kind_name[kind];
	key[HKEY_MODEL] = kind == KIND_V2 ? "" : model;
	key[HKEY_GPU] = kind == KIND_V2 ? "" : gpu;
	for (int j = 0; j < IDENTITY_KEYS; j++)
		key[HKEY_IDENT + j] = ident[j];
}

char *
history_key_join(const char *const key[HISTORY_KEY_PARTS])
{
	buf b = BUF_INIT;

	for (int j = 0; j < HISTORY_KEY_PARTS; j++) {
		buf_adds(&b, key[j]);
		buf_addc(&b, '\x1f');
	}
	return buf_detach(&b);
}

void
keyindex_init(struct keyindex *ki, size_t n)
{
	ki->map = (struct strmap)STRMAP_INIT;
	strmap_reserve(&ki->map, n);
}

size_t
keyindex_put(struct keyindex *ki, char *joined, size_t next, bool *added)
{
	struct strmap_entry *e = strmap_put(&ki->map, joined, added);

	if (*added)
		e->idx = next;
	else
		free(joined);
	return e->idx;
}

void
keyindex_free(struct keyindex *ki)
{
	struct strmap_entry *e;

	for (size_t i = 0; (e = strmap_next(&ki->map, &i)) != NULL;)
		free((char *)e->key);
	strmap_free(&ki->map);
}

void
history_add_int(buf *b, long long v)
{
	char t[24];
	int n = 0;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	if (v < 0)
		buf_addc(b, '-');
	do {
		t[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	while (n > 0)
		buf_addc(b, t[--n]);
}
