/* Unit tests for buf. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "tap.h"

int
main(void)
{
	buf b = BUF_INIT;
	char *s;
	int i;

	buf_adds(&b, "ab");
	buf_addc(&b, 'c');
	buf_addf(&b, "%d-%s", 42, "x");
	is_str(b.s, "abc42-x", "add, addc, addf");
	ok(b.len == 7, "length tracked");
	for (i = 0; i < 100000; i++)
		buf_add(&b, "0123456789", 10);
	ok(b.len == 7 + 1000000 && b.s[b.len] == '\0', "grows to a megabyte, NUL-terminated");
	buf_reset(&b);
	ok(b.len == 0 && b.s[0] == '\0', "reset empties");
	buf_add(&b, "a\0b", 3);
	ok(b.len == 3 && memcmp(b.s, "a\0b", 3) == 0, "binary content kept");
	s = buf_detach(&b);
	ok(s != NULL && b.s == buf_slopbuf && b.len == 0 && b.cap == 0,
	    "detach hands the string over, the buf empty again");
	free(s);
	s = buf_detach(&b);
	is_str(s, "", "detach of an empty buf is an empty string");
	free(s);
	buf_free(&b);

	/* Never NULL: the slop buffer stands for every empty buf. */
	{
		buf e = BUF_INIT, z;

		ok(e.s != NULL && e.s[0] == '\0' && e.len == 0, "BUF_INIT is an empty string, not NULL");
		buf_free(&e);
		ok(e.s == buf_slopbuf && e.s[0] == '\0', "a freed buf is the empty string again");
		buf_reset(&e);
		ok(e.s == buf_slopbuf, "resetting an empty buf writes nothing");
		memset(&z, 0, sizeof z);
		buf_reset(&z);
		ok(z.s == buf_slopbuf && z.s[0] == '\0', "a zeroed buf is empty, and not NULL after a reset");
		memset(&z, 0, sizeof z);
		buf_adds(&z, "zeroed");
		is_str(z.s, "zeroed", "a zeroed buf grows from nothing");
		buf_adds(&e, "grown");
		is_str(e.s, "grown", "an empty buf grows into its own memory");
		ok(buf_slopbuf[0] == '\0' && e.s != buf_slopbuf, "and the slop buffer stays empty");
		s = buf_detach(&z);
		is_str(s, "zeroed", "detach of a grown buf");
		free(s);
		buf_free(&z);
		buf_free(&e);
		buf_free(&e);
		ok(e.s == buf_slopbuf, "freeing twice is harmless");
		ok(buf_read_file(&e, "/dev/null") == 0 && e.len == 0 && e.s != NULL && e.s[0] == '\0',
		    "an empty file reads as the empty string");
		buf_free(&e);
	}
	return done_testing();
}
