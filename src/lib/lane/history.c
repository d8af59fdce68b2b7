#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "lane/history.h"
#include "core/json.h"
#include "core/text.h"

/* Adds key to the set; false when it was there. */
static bool
key_insert(struct history *h, char *key)
{
	size_t i;

	if (2 * (h->nkeys + 1) > h->keys_cap) {
		size_t cap = h->keys_cap ? h->keys_cap * 2 : 64;
		char **keys = ecalloc(cap, sizeof *keys);
		for (size_t k = 0; k < h->keys_cap; k++)
			if (h->keys[k] != NULL) {
				for (i = text_hash(h->keys[k]) & (cap - 1); keys[i] != NULL;
				    i = (i + 1) & (cap - 1))
					;
				keys[i] = h->keys[k];
			}
		free(h->keys);
		h->keys = keys;
		h->keys_cap = cap;
	}
	for (i = text_hash(key) & (h->keys_cap - 1); h->keys[i] != NULL;
	    i = (i + 1) & (h->keys_cap - 1))
		if (strcmp(h->keys[i], key) == 0)
			return false;
	h->keys[i] = key;
	h->nkeys++;
	return true;
}

static bool
key_known(const struct history *h, const char *key)
{
	if (h->keys_cap == 0)
		return false;
	for (size_t i = text_hash(key) & (h->keys_cap - 1); h->keys[i] != NULL;
	    i = (i + 1) & (h->keys_cap - 1))
		if (strcmp(h->keys[i], key) == 0)
			return true;
	return false;
}

struct hist_point *
history_push(struct history *h, const struct hist_point *pt, bool stream)
{
	struct hist_point *p;

	/* A stream (a store's export) may repeat what the store holds. */
	if (stream && pt->key != NULL && key_known(h, pt->key))
		return NULL;
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 16;
		h->p = erealloc(h->p, h->cap * sizeof *h->p);
	}
	p = &h->p[h->n++];
	*p = *pt;
	if (p->key != NULL)
		key_insert(h, p->key);
	return p;
}

struct hist_point *
history_add(struct history *h, const struct store_hit *hit)
{
	struct hist_point pt, *p;
	double d;

	memset(&pt, 0, sizeof pt);
	pt.key = h->no_streams ? NULL : store_record_path(hit->record);
	if (hit->stream && pt.key != NULL && key_known(h, pt.key)) {
		free(pt.key);
		return NULL;
	}
	pt.instant = hit->instant;
	pt.path = estrdup(hit->path);
	if (h->meta) {
		const cJSON *t = json_get(hit->record, "timestamp"),
		    *c = json_get(hit->record, "commit_sha");
		pt.timestamp = t != NULL ? json_pystr_dup(t) : estrdup("None");
		pt.commit = c != NULL ? json_pystr_dup(c) : estrdup("None");
	}
	for (int m = 0; m < METRIC_COUNT; m++) {
		/* History is read leniently: what is not a finite number is missing. */
		pt.has[m] = policy_coerce(json_get(hit->record, metric_table[m].key), &d) ==
		    COERCE_OK && isfinite(d);
		pt.v[m] = pt.has[m] ? d : 0;
	}
	p = history_push(h, &pt, hit->stream);
	return p;
}

static int
cmp_point(const void *a, const void *b)
{
	const struct hist_point *x = a, *y = b;

	if (x->instant != y->instant)
		return x->instant < y->instant ? -1 : 1;
	return strcmp(x->path, y->path);
}

void
history_sort(struct history *h)
{
	if (h->n > 1)
		qsort(h->p, h->n, sizeof *h->p, cmp_point);
}

void
history_free(struct history *h)
{
	for (size_t i = 0; i < h->n && !h->borrowed; i++) {
		free(h->p[i].path);
		free(h->p[i].key);
		free(h->p[i].timestamp);
		free(h->p[i].commit);
		free(h->p[i].named);
	}
	free(h->p);
	free(h->keys);
	memset(h, 0, sizeof *h);
}
