/* Unit tests for strmap, the library's one string hash table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"
#include "core/text.h"
#include "tap.h"

#define N 20000

int
main(void)
{
	struct strmap m = STRMAP_INIT;
	struct strmap_entry *e;
	static char keys[N][16];
	static unsigned char seen[N];
	char *same[8], probe[16];
	size_t i, pos, nsame, visits, bad;
	bool added;

	ok(strmap_find(&m, "a") == NULL, "an empty map finds nothing");
	pos = 0;
	ok(strmap_next(&m, &pos) == NULL, "an empty map has no entries");

	/* Growth: from 64 slots to over 2 N, every key kept with its value. */
	for (i = 0; i < N; i++) {
		snprintf(keys[i], sizeof keys[i], "key-%zu", i);
		e = strmap_put(&m, keys[i], &added);
		if (!added || e->idx != 0 || e->key != keys[i])
			break;
		e->idx = i;
	}
	ok(i == N && m.n == N, "%d new keys are each added once", N);
	ok(m.cap >= 2 * N && (m.cap & (m.cap - 1)) == 0, "the table grew to a power of two, at most half full");
	for (bad = 0, i = 0; i < N; i++) {
		snprintf(probe, sizeof probe, "key-%zu", i);
		e = strmap_find(&m, probe);
		bad += e == NULL || e->idx != i || e->key != keys[i];
	}
	ok(bad == 0, "every key is found by an equal string, with its value");
	ok(strmap_find(&m, "key-") == NULL && strmap_find(&m, "") == NULL &&
	    strmap_find(&m, "key-20000") == NULL, "absent keys are not found");
	e = strmap_put(&m, "key-77", &added);
	ok(!added && e->idx == 77 && e->key == keys[77] && m.n == N,
	    "putting a present key returns its entry, unchanged");

	/* Iteration: each entry once. */
	visits = bad = 0;
	pos = 0;
	while ((e = strmap_next(&m, &pos)) != NULL) {
		visits++;
		if (e->idx >= N || seen[e->idx]++ || e->key != keys[e->idx])
			bad++;
	}
	ok(visits == N && bad == 0, "strmap_next visits every entry once");
	strmap_free(&m);
	ok(m.slot == NULL && m.n == 0 && m.cap == 0 && strmap_find(&m, "key-1") == NULL,
	    "free empties the map");

	/* Collisions: keys that share their first slot in a 64-slot table. */
	for (nsame = 0, i = 0; nsame < 8; i++) {
		snprintf(probe, sizeof probe, "c%zu", i);
		if ((text_hash(probe) & 63) == 5)
			same[nsame++] = strdup(probe);
	}
	for (i = 0; i < nsame; i++) {
		e = strmap_put(&m, same[i], &added);
		e->ptr = same[i];
	}
	ok(m.cap == 64, "eight colliding keys fit the first table");
	for (bad = 0, i = 0; i < nsame; i++) {
		e = strmap_find(&m, same[i]);
		bad += e == NULL || e->ptr != same[i];
	}
	ok(bad == 0, "colliding keys are each found, past the others in their run");

	/* A transient key replaced by the caller's own equal copy. */
	snprintf(probe, sizeof probe, "transient");
	e = strmap_put(&m, probe, &added);
	e->key = "transient";
	memset(probe, 'x', sizeof probe - 1);
	e = strmap_find(&m, "transient");
	ok(added && e != NULL && strcmp(e->key, "transient") == 0,
	    "a new entry's key replaced by an equal string is still found");
	strmap_reserve(&m, 1000);
	ok(m.cap >= 2000 && m.n == nsame + 1 && strmap_find(&m, same[7]) != NULL &&
	    strmap_find(&m, "transient") != NULL, "reserve keeps what the map holds");
	for (i = 0; i < nsame; i++)
		free(same[i]);
	strmap_free(&m);
	return done_testing();
}
