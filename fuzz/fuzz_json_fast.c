/*
 * The quick record scanner against the full parser: whatever tree
 * json_parse_fast() builds, json_parse_arena() builds the same from the
 * same text and keys; what the full parser refuses, the scanner refuses.
 * The input is tried as a record and as a value inside one.
 */
#include "fuzz.h"
#include "core/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const keys[] = { "model_id", "timestamp", "latency", "success",
    "baseline_eligible", "n", "x", "a_key_of_sixteen", "a_key_of_seventeen" };
#define NKEYS (sizeof keys / sizeof *keys)

/*
 * The scanner reads only plain strings: no quote, backslash, control or
 * non-ASCII byte in what it built (the full parser shares its string
 * scan, so agreeing with it does not show this).
 */
static int
plain_text(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x80 || *s == '"' || *s == '\\')
			return 0;
	return 1;
}

static int
plain_tree(const cJSON *v)
{
	/* A wanted value may be an object or array (a record's named metrics): all of it. */
	for (const cJSON *c = v->child; c != NULL; c = c->next)
		if ((c->string != NULL && !plain_text(c->string)) ||
		    (cJSON_IsString(c) && !plain_text(c->valuestring)) || !plain_tree(c))
			return 0;
	return 1;
}

/* One text, in a buffer of its exact size: the two readers agree. */
static void
check(struct json_keyset *ks, struct json_arena *fa, struct json_arena *sa,
    const char *text, size_t size)
{
	json_error e;
	cJSON *f, *s;

	f = json_parse_fast(text, size, ks, fa);
	s = json_parse_arena(text, size, keys, NKEYS, sa, &e);
	if (f != NULL && (!json_identical(f, s) || !plain_tree(f)))
		abort();
	json_arena_reset(fa);
	json_arena_reset(sa);
}

/* The input as it is, and as a wanted and an unwanted value. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Long tails, so that the vector loops, not the byte loops, see the value. */
	static const char *const wrap[][2] = {
		{ "{\"model_id\": ", ", \"pad\": [0, 1, 2, 3, 4, 5, 6, 7]}" },
		{ "{\"x\": [", "], \"n\": 1, \"pad\": \"0123456789abcdef\"}" },
	};
	static struct json_keyset *ks;
	static struct json_arena *fa, *sa;

	if (ks == NULL) {
		ks = json_keyset_new(keys, NKEYS);
		fa = json_arena_new();
		sa = json_arena_new();
	}
	check(ks, fa, sa, (const char *)data, size);
	for (size_t w = 0; w < sizeof wrap / sizeof *wrap; w++) {
		size_t a = strlen(wrap[w][0]), b = strlen(wrap[w][1]);
		char *t = malloc(a + size + b);

		if (t == NULL)
			abort();
		memcpy(t, wrap[w][0], a);
		memcpy(t + a, data, size);
		memcpy(t + a + size, wrap[w][1], b);
		check(ks, fa, sa, t, a + size + b);
		free(t);
	}
	return 0;
}
