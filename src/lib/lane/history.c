#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/strmap.h"
#include "lane/history.h"

static bool
key_known(const struct history *h, const char *key)
{
	return strmap_find(&h->keys, key) != NULL;
}

struct hist_point *
history_push(struct history *h, const struct hist_point *pt, bool stream)
{
	struct hist_point *p;
	bool added;

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
		strmap_put(&h->keys, p->key, &added);
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
	strmap_free(&h->keys);
	memset(h, 0, sizeof *h);
}
