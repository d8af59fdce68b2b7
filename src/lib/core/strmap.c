/* strmap: see strmap.h. */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/strmap.h"
#include "core/text.h"

/* The slot of key (hash h): where it is, or the empty one it goes to. */
static struct strmap_entry *
probe(const struct strmap *m, const char *key, uint64_t h)
{
	size_t i = (size_t)h & (m->cap - 1);

	while (m->slot[i].key != NULL &&
	    (m->slot[i].hash != h || strcmp(m->slot[i].key, key) != 0))
		i = (i + 1) & (m->cap - 1);
	return &m->slot[i];
}

static void
resize(struct strmap *m, size_t cap)
{
	struct strmap old = *m;

	m->slot = ecalloc(cap, sizeof *m->slot);
	m->cap = cap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slot[i].key != NULL)
			*probe(m, old.slot[i].key, old.slot[i].hash) = old.slot[i];
	free(old.slot);
}

void
strmap_reserve(struct strmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 64;

	while (cap < 2 * n)
		cap *= 2;
	if (cap != m->cap)
		resize(m, cap);
}

struct strmap_entry *
strmap_find(const struct strmap *m, const char *key)
{
	struct strmap_entry *e;

	if (m->n == 0)
		return NULL;
	e = probe(m, key, text_hash(key));
	return e->key != NULL ? e : NULL;
}

struct strmap_entry *
strmap_put(struct strmap *m, const char *key, bool *added)
{
	uint64_t h = text_hash(key);
	struct strmap_entry *e;

	if (2 * (m->n + 1) > m->cap)
		resize(m, m->cap ? m->cap * 2 : 64);
	e = probe(m, key, h);
	*added = e->key == NULL;
	if (*added) {
		e->key = key;
		e->hash = h;
		m->n++;
	}
	return e;
}

struct strmap_entry *
strmap_next(const struct strmap *m, size_t *pos)
{
	while (*pos < m->cap)
		if (m->slot[(*pos)++].key != NULL)
			return &m->slot[*pos - 1];
	return NULL;
}

void
strmap_free(struct strmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}
