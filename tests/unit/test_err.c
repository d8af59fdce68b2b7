/* Unit tests for err: the diagnostic format and control-byte cleaning. */
#include <sys/wait.h>

#include <errno.h>
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
	warnx("bad \x1b[31mvalue\n%d", 3);
}

static int kept_errno;

static void
with_errno(void)
{
	errno = ENOENT;
	warn("%s: cannot open", "in.jsonl");
	kept_errno = errno;
}

static void
errno_success(void)
{
	errno = 0;
	warn("write error");
}

static void
errno_set_late(void)
{
	/* errno as it is on entry: an argument that sets it counts. */
	warn("%s", (errno = EACCES) != 0 ? "run" : "");
}

static void
errno_quiet(void)
{
	err_quiet(true);
	errno = ENOENT;
	warn("cannot open");
	warnx("nothing");
	diag("in.jsonl", 3, "nothing");
	err_quiet(false);
}

static void
errno_long(void)
{
	char big[3000];

	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	errno = ENOENT;
	warn("%.*s", 2040, big);
}

/* Runs fn in a child; returns its exit status and what it wrote on stderr. */
static int
child(void (*fn)(void), char *errs, size_t n)
{
	int pe[2], st;
	ssize_t k;
	pid_t pid;

	fflush(stdout);
	if (pipe(pe) != 0)
		return -1;
	if ((pid = fork()) == 0) {
		dup2(pe[1], 2);
		fn();
		_exit(99);
	}
	close(pe[1]);
	k = read(pe[0], errs, n - 1);
	errs[k > 0 ? k : 0] = '\0';
	waitpid(pid, &st, 0);
	close(pe[0]);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
dies_errno(void)
{
	errno = EACCES;
	die_errno("%s: cannot create", "out");
}

static void
dies(void)
{
	errno = EACCES;
	die("%s: cannot create", "out");
}

int
main(void)
{
	char out[2200], t[8];

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
	capture(with_errno, out, sizeof out);
	is_str(out, "perf-test: in.jsonl: cannot open: No such file or directory\n",
	    "warn appends strerror(errno)");
	ok(kept_errno == ENOENT, "warn leaves errno as it found it");
	capture(errno_success, out, sizeof out);
	is_str(out, "perf-test: write error: Success\n",
	    "warn with errno 0 appends strerror(0), as the hand-written calls did");
	errno = 0;
	capture(errno_set_late, out, sizeof out);
	is_str(out, "perf-test: run: Permission denied\n",
	    "warn reads errno on entry, after its arguments");
	capture(errno_quiet, out, sizeof out);
	is_str(out, "", "quiet mode silences warn, warnx and diag");
	capture(errno_long, out, sizeof out);
	ok(strlen(out) == strlen("perf-test: ") + 2047 + 1 &&
	    strcmp(out + strlen(out) - 9, "a: No su\n") == 0,
	    "a long message is cut at 2047 bytes, strerror included");
	ok(child(dies_errno, out, sizeof out) == 2, "die_errno exits 2");
	is_str(out, "perf-test: out: cannot create: Permission denied\n",
	    "die_errno appends strerror(errno)");
	ok(child(dies, out, sizeof out) == 2, "die exits 2");
	is_str(out, "perf-test: out: cannot create\n", "die appends nothing");
	is_str(err_clean("abcdefghij", t, sizeof t), "abcd...", "long text is shortened");
	is_str(err_clean("a\tb\x7f", t, sizeof t), "a?b?", "tab and DEL replaced");
	return done_testing();
}
