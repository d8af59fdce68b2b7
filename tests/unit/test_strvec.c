/* Unit tests for strvec, argument vectors built by pushing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strvec.h"
#include "tap.h"

int
main(void)
{
	struct strvec sv = STRVEC_INIT;
	static const char *const more[] = { "-o", "out dir", NULL };
	char word[8];
	size_t bad = 0;

	ok(sv.v != NULL && sv.v[0] == NULL && sv.n == 0, "an empty vector is a NULL-terminated array");
	strvec_push(&sv, "perf-collect");
	strvec_pushv(&sv, more);
	strvec_pushf(&sv, "--seed=%d", 42);
	ok(sv.n == 4 && sv.v[4] == NULL, "four pushed, then NULL");
	is_str(sv.v[0], "perf-collect", "push");
	is_str(sv.v[2], "out dir", "pushv keeps each string whole");
	is_str(sv.v[3], "--seed=42", "pushf formats");
	snprintf(word, sizeof word, "temp");
	strvec_push(&sv, word);
	snprintf(word, sizeof word, "gone");
	is_str(sv.v[4], "temp", "the vector owns a copy of what it was given");
	for (int i = 0; i < 1000; i++)
		strvec_pushf(&sv, "%d", i);
	for (int i = 0; i < 1000; i++) {
		snprintf(word, sizeof word, "%d", i);
		bad += strcmp(sv.v[5 + i], word) != 0;
	}
	ok(sv.n == 1005 && bad == 0 && sv.v[1005] == NULL, "grows past a thousand, in order");
	strvec_clear(&sv);
	ok(sv.v == strvec_empty && sv.v[0] == NULL && sv.n == 0, "clear leaves it empty");
	strvec_clear(&sv);
	strvec_push(&sv, "again");
	ok(sv.n == 1 && strcmp(sv.v[0], "again") == 0 && strvec_empty[0] == NULL,
	    "usable again after clear, the empty array untouched");
	strvec_clear(&sv);
	return done_testing();
}
