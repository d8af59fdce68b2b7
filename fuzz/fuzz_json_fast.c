/*
 * The quick record scanner against the full parser: whatever tree
 * json_parse_fast() builds, json_parse_arena() builds the same from the
 * same text and keys; what the full parser refuses, the scanner refuses.
 */
#include "fuzz.h"
#include "core/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const keys[] = { "model_id", "timestamp", "latency", "success",
    "baseline_eligible", "n", "x", "a_key_of_sixteen", "a_key_of_seventeen" };
#define NKEYS (sizeof keys / sizeof *keys)

/* Whether two trees are the same: members in order, types, text and values. */
static int
same_tree(const cJSON *a, const cJSON *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (a->type != b->type || (a->string == NULL) != (b->string == NULL) ||
	    (a->string != NULL && strcmp(a->string, b->string) != 0) ||
	    (a->valuestring == NULL) != (b->valuestring == NULL) ||
	    (a->valuestring != NULL && strcmp(a->valuestring, b->valuestring) != 0) ||
	    memcmp(&a->valuedouble, &b->valuedouble, sizeof a->valuedouble) != 0 ||
	    a->valueint != b->valueint)
		return 0;
	for (a = a->child, b = b->child; a != NULL && b != NULL; a = a->next, b = b->next)
		if (!same_tree(a, b))
			return 0;
	return a == NULL && b == NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct json_keyset *ks;
	static struct json_arena *fa, *sa;
	json_error e;
	cJSON *f, *s;

	if (ks == NULL) {
		ks = json_keyset_new(keys, NKEYS);
		fa = json_arena_new();
		sa = json_arena_new();
	}
	f = json_parse_fast((const char *)data, size, ks, fa);
	s = json_parse_arena((const char *)data, size, keys, NKEYS, sa, &e);
	if (f != NULL && !same_tree(f, s))
		abort();
	json_arena_reset(fa);
	json_arena_reset(sa);
	return 0;
}
