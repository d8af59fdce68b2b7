/*
 * The canonical JSON writer: canonical(parse(canonical(x))) ==
 * canonical(x), and the digest does not change when object keys are
 * reordered or whitespace is added.
 */
#include "core/canon.h"
#include "fuzz.h"
#include "core/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reverses the members of every object, recursively. */
static void
reverse(cJSON *v)
{
	cJSON *c, *prev = NULL, *next;

	if (v == NULL)
		return;
	for (c = v->child; c != NULL; c = c->next)
		reverse(c);
	if (!cJSON_IsObject(v) || v->child == NULL)
		return;
	for (c = v->child; c != NULL; c = next) {
		next = c->next;
		c->next = prev;
		c->prev = next;
		prev = c;
	}
	v->child = prev;
	/* cJSON keeps the last item in child->prev */
	for (c = prev; c->next != NULL; c = c->next)
		;
	prev->prev = c;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error je;
	cJSON *v = json_parse((const char *)data, size, &je), *w;
	buf a = BUF_INIT, b = BUF_INIT, pretty = BUF_INIT;
	char h1[SHA256_HEX], h2[SHA256_HEX];

	err_quiet(true);
	if (v == NULL)
		return 0;
	if (canon_json(&a, v) != 0) {	/* a non-finite number: nothing to write */
		cJSON_Delete(v);
		buf_free(&a);
		return 0;
	}
	w = json_parse(a.s, a.len, &je);
	if (w == NULL || canon_json(&b, w) != 0 || a.len != b.len || memcmp(a.s, b.s, a.len) != 0)
		abort();	/* canonical text must read back to itself */
	cJSON_Delete(w);
	if (canon_sha256(v, h1) != 0)
		abort();
	/* Reordered keys and indentation: the same digest. */
	if (json_write(&pretty, v, JSON_INDENT2, NULL) != 0)
		abort();
	w = json_parse(pretty.s, pretty.len, &je);
	if (w == NULL)
		abort();
	reverse(w);
	if (canon_sha256(w, h2) != 0 || strcmp(h1, h2) != 0)
		abort();
	cJSON_Delete(w);
	cJSON_Delete(v);
	buf_free(&a);
	buf_free(&b);
	buf_free(&pretty);
	return 0;
}
