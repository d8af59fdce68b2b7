/* Unit tests for isotime: fromisoformat() and isoformat(). */
#include "core/isotime.h"
#include "tap.h"

#include "isotime_vectors.h"

int
main(void)
{
	char out[40];
	int64_t us;
	size_t i;

	for (i = 0; i < sizeof isotime_vectors / sizeof *isotime_vectors; i++) {
		bool got = isotime_parse(isotime_vectors[i].in, &us);
		ok(got == (isotime_vectors[i].valid != 0) &&
		    (!got || us == isotime_vectors[i].usec),
		    "fromisoformat('%s') %s", isotime_vectors[i].in,
		    isotime_vectors[i].valid ? "parses to the same instant" : "is rejected");
	}
	is_str(isotime_format(out, 1781568000000000LL), "2026-06-16T00:00:00+00:00",
	    "isoformat without microseconds");
	is_str(isotime_format(out, 1778277600123456LL), "2026-05-08T22:00:00.123456+00:00",
	    "isoformat with microseconds");
	is_str(isotime_format(out, 1778277600000001LL), "2026-05-08T22:00:00.000001+00:00",
	    "isoformat keeps leading zeros of microseconds");
	us = isotime_now();
	ok(isotime_parse(isotime_format(out, us), &us), "now round-trips (%s)", out);
	return done_testing();
}
