/* Unit tests for cli: usage and version streams and statuses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/cli.h"
#include "core/err.h"
#include "tap.h"

/* Runs fn in a child; returns its exit status, stdout and stderr text. */
static int
child(void (*fn)(void), char *out, char *errs, size_t n)
{
	int po[2], pe[2], st;
	ssize_t k;
	pid_t pid;

	fflush(stdout);
	pipe(po);
	pipe(pe);
	if ((pid = fork()) == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		fn();
		_exit(99);
	}
	close(po[1]);
	close(pe[1]);
	k = read(po[0], out, n - 1);
	out[k > 0 ? k : 0] = '\0';
	k = read(pe[0], errs, n - 1);
	errs[k > 0 ? k : 0] = '\0';
	waitpid(pid, &st, 0);
	close(po[0]);
	close(pe[0]);
	return WEXITSTATUS(st);
}

static void help(void) { cli_usage("usage: x\n", 0); }
static void bad(void) { cli_usage("usage: x\n", 2); }
static void version(void) { cli_version(); }

int
main(void)
{
	char out[256], errs[256];

	err_init("perf-x");
	ok(child(help, out, errs, sizeof out) == 0 && strcmp(out, "usage: x\n") == 0 &&
	    errs[0] == '\0', "-h: usage on stdout, exit 0");
	ok(child(bad, out, errs, sizeof out) == 2 && out[0] == '\0' &&
	    strcmp(errs, "usage: x\n") == 0, "usage error: usage on stderr, exit 2");
	ok(child(version, out, errs, sizeof out) == 0 &&
	    strcmp(out, "perf-x (perfkite) " PERFKITE_VERSION "\n") == 0,
	    "--version: name and version");
	return done_testing();
}
