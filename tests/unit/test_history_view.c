/*
 * Unit tests for history_view, what perf-summarize --html and perf-site
 * share: the string set, the cohort kind, the labels' numbers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "lane/history_view.h"
#include "tap.h"

static int
kind_of(const char *text)
{
	json_error e;
	cJSON *rec = json_parse(text, strlen(text), &e);
	const cJSON *v[IDENTITY_KEYS];
	const char *ident[IDENTITY_KEYS];
	char *held[IDENTITY_KEYS];
	int k;

	for (int i = 0; i < IDENTITY_KEYS; i++) {
		v[i] = cJSON_GetObjectItemCaseSensitive(rec, identity_keys[i]);
		held[i] = v[i] == NULL || cJSON_IsNull(v[i]) ? NULL : json_pystr_dup(v[i]);
		ident[i] = held[i] != NULL ? held[i] : "";
	}
	k = history_kind(ident, v, cJSON_GetObjectItemCaseSensitive(rec,
	    "result_schema_version"));
	for (int i = 0; i < IDENTITY_KEYS; i++)
		free(held[i]);
	cJSON_Delete(rec);
	return k;
}

static void
whole(long long v, const char *want)
{
	buf b = BUF_INIT;
	char *got;

	history_add_int(&b, v);
	got = buf_detach(&b);
	is_str(got, want, "whole number %lld", v);
	free(got);
}

static void
label(double x, int prec, const char *want)
{
	buf b = BUF_INIT;
	char *got;

	history_label_num(&b, x, prec);
	got = buf_detach(&b);
	is_str(got, want, "label of %.17g at %d decimals", x, prec);
	free(got);
}

int
main(void)
{
	ok(kind_of("{\"workload_id\":\"w\",\"variant_id\":\"v\",\"benchmark_version\":2,"
	    "\"recipe_fingerprint\":\"r\",\"hardware_profile_id\":\"h\","
	    "\"software_profile_id\":\"s\"}") == KIND_V2, "six identity values: v2");
	ok(kind_of("{\"workload_id\":\"w\"}") == KIND_INVALID_V2, "some of them: invalid v2");
	ok(kind_of("{\"result_schema_version\":2}") == KIND_INVALID_V2,
	    "schema 2 without identity: invalid v2");
	ok(kind_of("{\"result_schema_version\":\"2\"}") == KIND_INVALID_V2,
	    "schema \"2\" as a string too");
	ok(kind_of("{\"result_schema_version\":1,\"workload_id\":null}") == KIND_LEGACY_V1,
	    "schema 1, identity null: legacy v1");
	ok(kind_of("{\"model_id\":\"m\"}") == KIND_LEGACY_V1, "no identity: legacy v1");

	{
		static const char *const keys[] = { "a", "b", "ab", "url" };
		const cJSON *f[4];
		json_error e;
		const char *text = "{\"ab\":[1,2.50],\"b\":null,\"url\":\"javascript:x\","
		    "\"c\":\"HTTPS://e\"}";
		cJSON *rec = json_parse(text, strlen(text), &e);
		char *owned;

		history_fields(rec, keys, 4, f);
		ok(f[0] == NULL && cJSON_IsNull(f[1]) && cJSON_IsArray(f[2]) &&
		    cJSON_IsString(f[3]), "fields: each key's member, NULL where there is none");
		is_str(history_pystr(f[2], "-", &owned), "[1, 2.5]", "str() of a list, as Python writes it");
		ok(owned != NULL, "a new string for it");
		free(owned);
		is_str(history_pystr(f[1], "-", &owned), "-", "null: the missing text");
		ok(owned == NULL, "nothing to free for it");
		is_str(history_pystr(f[3], "-", &owned), "javascript:x", "a string's own text");
		ok(!history_web_url(f[3]), "javascript: is no web address");
		ok(history_web_url(cJSON_GetObjectItemCaseSensitive(rec, "c")), "HTTPS:// is");
		ok(!history_web_url(f[2]), "nor is a list");
		ok(history_success(NULL) && !history_success(f[1]), "success: missing is true, null false");
		ok(history_failing("REGRESSION") && history_failing("RECIPE_MISMATCH") &&
		    history_failing("INFRA_ERROR"), "the three failing statuses fail");
		ok(!history_failing("PASS") && !history_failing("") && !history_failing("regression"),
		    "others, none and another case do not");
		ok(history_eligible(NULL, NULL) && !history_eligible(NULL, f[3]) &&
		    !history_eligible(f[1], NULL), "eligible: by default only without run_source");
		cJSON_Delete(rec);
	}
	{
		const char *ident[IDENTITY_KEYS] = { "w", "v", "2", "r", "h", "s" };
		const char *key[HISTORY_KEY_PARTS];
		struct keyindex ki;
		char *joined;
		bool added;
		size_t n;

		history_cohort_key(key, KIND_V2, "m", "g", ident);
		joined = history_key_join(key);
		is_str(joined, "v2\x1f\x1f\x1fw\x1fv\x1f" "2\x1fr\x1fh\x1fs\x1f",
		    "a v2 key leaves model and gpu out");
		keyindex_init(&ki, 100);
		ok(ki.map.cap == 256, "room for 100 keys: 256 slots");
		n = keyindex_put(&ki, joined, 7, &added);
		ok(n == 7 && added, "a new key takes the next number");
		history_cohort_key(key, KIND_LEGACY_V1, "m", "g", ident);
		ok(HISTORY_KEY_PARTS == 9 && strcmp(key[HKEY_KIND], "legacy_v1") == 0 &&
		    strcmp(key[HKEY_MODEL], "m") == 0 && strcmp(key[HKEY_GPU], "g") == 0 &&
		    strcmp(key[HKEY_IDENT + IDENTITY_RECIPE], "r") == 0,
		    "the key's parts by name: kind, model, gpu, the identity's slots");
		joined = history_key_join(key);
		is_str(joined, "legacy_v1\x1fm\x1fg\x1fw\x1fv\x1f" "2\x1fr\x1fh\x1fs\x1f",
		    "a legacy key holds them");
		n = keyindex_put(&ki, joined, 8, &added);
		ok(n == 8 && added, "another key, another number");
		history_cohort_key(key, KIND_V2, "x", "y", ident);
		n = keyindex_put(&ki, history_key_join(key), 9, &added);
		ok(n == 7 && !added, "the same v2 key again: its number, whatever the model");
		keyindex_free(&ki);
	}
	whole(0, "0");
	whole(-42, "-42");
	whole(1234567890123LL, "1234567890123");
	whole(-9223372036854775807LL - 1, "-9223372036854775808");
	label(1.5, 3, "1.5");
	label(2.0, 2, "2");
	label(-0.0001, 2, "0");
	label(12.345, 2, "12.35");
	label(100, 0, "100");
	return done_testing();
}
