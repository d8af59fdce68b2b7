/*
 * Unit tests for opt: the getopt arrays a table yields (short letters with
 * and without an argument, long names with their values, "+", a
 * subcommand's own options), the usage text it prints, an unknown option,
 * and the dump the man-page test reads.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "core/opt.h"
#include "core/strvec.h"
#include "tap.h"

static const struct opt_def options[] = {
	{ 's', "store", 0, "store", "the history store", NULL, NULL },
	{ 0, "cache", 'K', "dir", "where the cache clones are,\nand more", NULL, NULL },
	{ 0, "all", 'A', NULL, "every record", NULL, NULL },
	{ 'o', NULL, 0, "file", "the output", NULL, NULL },
	{ 0, "good", 'g', "ref", "the two ends", "--good ref, --bad ref", NULL },
	{ 0, "bad", 'b', "ref", NULL, NULL, NULL },
	{ 0, "a-rather-long-option", 'L', "value", "past the column", NULL, NULL },
	{ 0, "once", 'O', NULL, "run only", NULL, "run" },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table table = {
	.synopsis = "usage: x [-s store] [--cache dir] [--all] [-o file]\n"
	    "         --good ref --bad ref [file ...]\n",
	.width = 16,
	.flags = 0,
	.opts = options,
};

static const struct opt_table stop_table = {
	.synopsis = "usage: y [-s store] command ...\n",
	.width = 16,
	.flags = OPT_STOP_AT_OPERAND,
	.opts = options,
};

static const char want_text[] =
    "usage: x [-s store] [--cache dir] [--all] [-o file]\n"
    "         --good ref --bad ref [file ...]\n"
    "\n"
    "options:\n"
    "  -s, --store store  the history store\n"
    "  --cache dir     where the cache clones are,\n"
    "                  and more\n"
    "  --all           every record\n"
    "  -o file         the output\n"
    "  --good ref, --bad ref  the two ends\n"
    "  --a-rather-long-option value  past the column\n"
    "  --once          run only\n"
    "  -h, --help      print usage and exit\n"
    "  --version       print the version and exit\n";

/* The values and arguments opt_next() gives for argv, "c=arg" each, ';' apart. */
static void
parse(const struct opt_table *t, const char *cmd, const char *const *args, char *got, size_t n)
{
	struct strvec argv = STRVEC_INIT;
	int c;

	strvec_pushv(&argv, args);

	got[0] = '\0';
	optind = 0;
	opterr = 0;
	while ((c = opt_next(t, cmd, (int)argv.n, argv.v)) != -1) {
		size_t len = strlen(got);

		snprintf(got + len, n - len, "%c=%s;", c == '?' ? '?' : c,
		    c != '?' && optarg != NULL ? optarg : "");
	}
	snprintf(got + strlen(got), n - strlen(got), "optind=%d", optind);
	strvec_clear(&argv);
}

/* Runs fn in a child; returns its exit status, stdout and stderr text. */
static int
child(void (*fn)(void), char *out, char *errs, size_t n)
{
	int po[2], pe[2], st;
	ssize_t k;
	pid_t pid;

	fflush(stdout);
	if (pipe(po) != 0 || pipe(pe) != 0)
		return -1;
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

static void help(void) { unsetenv("PERF_OPTIONS_TABLE"); opt_usage(&table, 0); }
static void bad(void) { opt_usage(&table, 2); }
static void dump(void) { setenv("PERF_OPTIONS_TABLE", "1", 1); opt_usage(&table, 0); }

static void
unknown(void)
{
	struct strvec argv = STRVEC_INIT;

	strvec_push(&argv, "x");
	strvec_push(&argv, "--nope");
	optind = 0;
	opterr = 1;
	if (opt_next(&table, NULL, 2, argv.v) == '?')
		opt_usage(&table, 2);
	exit(0);
}

int
main(void)
{
	char got[256], out[2048], errs[2048];
	static const char *const a1[] = { "x", "-s", "S", "--cache", "C", "--all", "-oO", "--good=g1", "--bad", "b1",
	    "--store=T", "file", NULL };
	static const char *const a2[] = { "y", "-s", "S", "cmd", "--all", NULL };
	static const char *const a3[] = { "x", "--once", "-s", "S", NULL };
	static const char *const a4[] = { "x", "--cache", NULL };

	err_init("x");
	parse(&table, NULL, a1, got, sizeof got);
	is_str(got, "s=S;K=C;A=;o=O;g=g1;b=b1;s=T;optind=11",
	    "letters, long names and their values, arguments attached or not");
	parse(&table, NULL, a2, got, sizeof got);
	is_str(got, "s=S;A=;optind=4", "options after an operand are read (permuted)");
	parse(&stop_table, NULL, a2, got, sizeof got);
	is_str(got, "s=S;optind=3", "OPT_STOP_AT_OPERAND: the first operand ends the options");
	parse(&table, "run", a3, got, sizeof got);
	is_str(got, "O=;?=;optind=3", "a subcommand reads its own options alone");
	parse(&table, NULL, a4, got, sizeof got);
	is_str(got, "?=;optind=2", "a missing argument is '?'");
	is_str(opt_text(&table), want_text,
	    "usage: synopsis, options padded to the width, continued, shared, overlong");
	ok(opt_text(&table) == opt_text(&table), "the text is built once");
	ok(child(help, out, errs, sizeof out) == 0 && strcmp(out, want_text) == 0 &&
	    errs[0] == '\0', "--help: the whole text on stdout, exit 0");
	ok(child(bad, out, errs, sizeof out) == 2 && out[0] == '\0', "a usage error: exit 2");
	is_str(errs, "usage: x [-s store] [--cache dir] [--all] [-o file]\n"
	    "         --good ref --bad ref [file ...]\n", "a usage error: the synopsis alone");
	ok(child(unknown, out, errs, sizeof out) == 2 && out[0] == '\0',
	    "an unknown option: '?', exit 2");
	is_str(errs, "x: unrecognized option '--nope'\n"
	    "usage: x [-s store] [--cache dir] [--all] [-o file]\n"
	    "         --good ref --bad ref [file ...]\n",
	    "an unknown option: getopt's line, then the synopsis");
	ok(child(dump, out, errs, sizeof out) == 0, "PERF_OPTIONS_TABLE: --help exits 0");
	is_str(out, "- 1 -s --store\n- 1 --cache\n- 0 --all\n- 1 -o\n- 1 --good\n- 1 --bad\n"
	    "- 1 --a-rather-long-option\nrun 0 --once\n- 0 -h --help\n- 0 --version\n",
	    "PERF_OPTIONS_TABLE: one line per option, subcommand, arity, names");
	return done_testing();
}
