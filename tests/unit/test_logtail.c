/* Unit tests for logtail: the worker-log tail block: the last lines, the
 * rotated log first, the unavailable block. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "lane/logtail.h"
#include "tap.h"

#define D "=============================================================================="

static char dir[] = "/tmp/perf-logtail-XXXXXX";

static void
write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "wb");

	fputs(text, fp);
	fclose(fp);
}

int
main(void)
{
	char path[256], rot[300];
	buf b = BUF_INIT, want = BUF_INIT;
	FILE *fp;
	int i;

	mkdtemp(dir);
	snprintf(path, sizeof path, "%s/worker.log", dir);
	snprintf(rot, sizeof rot, "%s.1", path);

	fp = fopen(path, "w");
	for (i = 0; i < 250; i++)
		fprintf(fp, "line %d\n", i);
	fclose(fp);
	logtail_block(&b, "bench", path);
	ok(strstr(b.s, "\n... truncated, showing last 200 of 250 lines ...\n") != NULL,
	    "truncation header for 250 lines");
	ok(strstr(b.s, "line 249\n") != NULL && strstr(b.s, "line 0\n") == NULL &&
	    strstr(b.s, "\nline 50\n") != NULL && strstr(b.s, "\nline 49\n") == NULL,
	    "keeps exactly the last 200 lines");
	buf_addf(&want, "%s\nWorker log tail for bench (%s)\n%s\n", D, path, D);
	ok(strncmp(b.s, want.s, want.len) == 0, "block header");
	ok(b.len > strlen(D) && strcmp(b.s + b.len - strlen(D) - 1, "\n" D) == 0,
	    "ends with the delimiter");

	write_file(rot, "older rotated line\n");
	write_file(path, "newer live line\n");
	buf_reset(&b);
	buf_reset(&want);
	logtail_block(&b, "bench", path);
	buf_addf(&want, "%s\nWorker log tail for bench (%s)\n%s\n"
	    "older rotated line\nnewer live line\n%s", D, path, D, D);
	is_str(b.s, want.s, "rotated log first, then the live one");

	write_file(rot, "no newline at end");
	write_file(path, "a\r\nb\rc\n\xff\xfe bad\n");
	buf_reset(&b);
	logtail_block(&b, "x", path);
	ok(strstr(b.s, "\nno newline at end\na\nb\nc\n\xef\xbf\xbd\xef\xbf\xbd bad\n" D) != NULL,
	    "line endings and invalid UTF-8 handled");

	buf_reset(&b);
	buf_reset(&want);
	logtail_block(&b, "bench", NULL);
	buf_addf(&want, "%s\nWorker log tail for bench (no log file recorded)\n%s\n"
	    "<worker log unavailable: file missing or unreadable>\n%s", D, D, D);
	is_str(b.s, want.s, "no log recorded: the unavailable block");

	unlink(path);
	unlink(rot);
	buf_reset(&b);
	logtail_block(&b, "bench", path);
	ok(strstr(b.s, "<worker log unavailable: file missing or unreadable>") != NULL &&
	    strstr(b.s, path) != NULL, "a missing file: unavailable, path shown");
	write_file(path, "");
	buf_reset(&b);
	logtail_block(&b, "bench", path);
	ok(strstr(b.s, "<worker log unavailable") != NULL, "an empty log is unavailable");
	unlink(path);
	rmdir(dir);
	buf_free(&b);
	buf_free(&want);
	return done_testing();
}
