/* Unit tests for err: the diagnostic format and control-byte cleaning. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "tap.h"

/* Runs fn with stderr captured into out. */
static void
capture(void (*fn)(void), char *out, size_t n)
{
	char path[] = "/tmp/perf-err-XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	ssize_t got;

	fflush(stderr);
	dup2(fd, 2);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	lseek(fd, 0, SEEK_SET);
	got = read(fd, out, n - 1);
	out[got > 0 ? got : 0] = '\0';
	close(fd);
	unlink(path);
}

static void
with_line(void)
{
	diag("in.jsonl", 12, "latency is not a finite number");
}

static void
without_line(void)
{
	diag("in.jsonl", 0, "cannot open: %s", "No such file or directory");
}

static void
plain(void)
{
	warnx_("bad \x1b[31mvalue\n%d", 3);
}

int
main(void)
{
	char out[512], t[8];

	err_init("/usr/bin/perf-test");
	is_str(err_progname(), "perf-test", "program name is the basename");
	capture(with_line, out, sizeof out);
	is_str(out, "perf-test: in.jsonl:12: latency is not a finite number\n",
	    "prog: FILE:LINE: message");
	capture(without_line, out, sizeof out);
	is_str(out, "perf-test: in.jsonl: cannot open: No such file or directory\n",
	    "prog: FILE: message without a line");
	capture(plain, out, sizeof out);
	is_str(out, "perf-test: bad ?[31mvalue?3\n", "control bytes never reach the log");
	is_str(err_clean("abcdefghij", t, sizeof t), "abcd...", "long text is shortened");
	is_str(err_clean("a\tb\x7f", t, sizeof t), "a?b?", "tab and DEL replaced");
	return done_testing();
}
