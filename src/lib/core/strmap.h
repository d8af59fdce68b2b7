/*
 * strmap: the library's one table from strings to values, open addressing
 * with linear probing over a power-of-two array kept at most half full
 * (in the spirit of OpenBSD's ohash(3) and git's strmap).
 *
 * The map holds pointers, never copies: a key must stay unchanged and
 * alive as long as its entry, and the caller owns keys and values (free
 * them, if it must, by walking the entries with strmap_next() before
 * strmap_free()). A new entry's key may be replaced by an equal string
 * (the caller's own copy of a transient key); its hash stays valid.
 * There is no deletion: no caller needs it. The order of strmap_next()
 * is the table's, not the order of insertion; no caller depends on it.
 */
#ifndef PERF_CORE_STRMAP_H
#define PERF_CORE_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strmap_entry {
	const char *key;	/* NULL: an empty slot */
	uint64_t hash;		/* text_hash(key) */
	union {
		void *ptr;
		size_t idx;
	};			/* the caller's value, 0 in a new entry */
};

struct strmap {
	struct strmap_entry *slot;
	size_t cap, n;		/* slots (0 or a power of two), entries */
};

#define STRMAP_INIT { NULL, 0, 0 }

/* Room for n entries without growing. */
void strmap_reserve(struct strmap *m, size_t n);

/* The entry of key, or NULL. */
struct strmap_entry *strmap_find(const struct strmap *m, const char *key);

/*
 * The entry of key: the one there (*added false), or a new one holding
 * key and a zero value (*added true). An entry pointer is valid until the
 * next strmap_put().
 */
struct strmap_entry *strmap_put(struct strmap *m, const char *key, bool *added);

/*
 * The entries one by one: start with *pos = 0; NULL after the last.
 * The map must not change during the walk.
 */
struct strmap_entry *strmap_next(const struct strmap *m, size_t *pos);

/* Frees the table (not the keys or values) and empties the map. */
void strmap_free(struct strmap *m);

#endif
