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
	ok(s != NULL && b.s == NULL && b.len == 0, "detach hands the string over");
	free(s);
	s = buf_detach(&b);
	is_str(s, "", "detach of an empty buf is an empty string");
	free(s);
	buf_free(&b);
	return done_testing();
}
