/*
 * opt: one table of a program's options (git's parse-options, small):
 * from it come the getopt_long() long options and option string, the
 * usage (a usage error's synopsis, --help's synopsis and option lines)
 * and, for the man-page test, a dump of what the program accepts.
 *
 * A program declares
 *
 *	static const struct opt_def options[] = {
 *		{ 's', "store", 0, "store", "the history store", NULL, NULL },
 *		{ 0, "cache", 'K', "dir", "where the cache clones are", NULL, NULL },
 *		OPT_HELP("print usage and exit"),
 *		OPT_VERSION,
 *		OPT_END,
 *	};
 *	static const struct opt_table table = { SYNOPSIS, 26, 0, options };
 *
 * and loops on opt_next(&table, NULL, argc, argv) as on getopt_long(),
 * handing opt_text(&table) to cli_usage() and the cli_* parsers.
 *
 * --help's option lines: "  HEAD" padded to the table's width (at least
 * two blanks), then the help; a '\n' in the help continues it on a line
 * indented to that column. HEAD is "-l, --name arg", "-l arg" or
 * "--name arg" unless the entry gives its own; an entry whose help is
 * NULL is named in the head of the entry before and has no line.
 *
 * PERF_OPTIONS_TABLE=1 in the environment turns opt_usage(t, 0) (--help)
 * into the dump: one line per option, "CMD ARITY -l --name" (CMD "-"
 * when the option belongs to no subcommand, ARITY 1 when it takes an
 * argument), which tests/man.bats compares with the man page. It is no
 * user-facing interface.
 */
#ifndef PERF_CORE_OPT_H
#define PERF_CORE_OPT_H

#include <stdio.h>

/* opt_table.flags: stop at the first operand (getopt's "+"). */
enum { OPT_STOP_AT_OPERAND = 1 };

struct opt_def {
	int letter;		/* the short option, or 0 */
	const char *name;	/* the long option, or NULL */
	int val;		/* what opt_next() returns for it; 0: letter */
	const char *arg;	/* the argument's name in --help; NULL: takes none */
	const char *help;	/* its --help line; NULL: in the head before */
	const char *head;	/* the line's head, when not the generated one */
	const char *cmd;	/* the subcommand it belongs to, or NULL */
};

#define OPT_HELP(help) { 'h', "help", 0, NULL, help, NULL, NULL }
#define OPT_VERSION { 0, "version", 'V', NULL, "print the version and exit", NULL, NULL }
#define OPT_END { 0, NULL, 0, NULL, NULL, NULL, NULL }

struct opt_table {
	const char *synopsis;	/* "usage: ..." lines, each ending in '\n' */
	int width;		/* the column of the help, less the two-blank indent */
	int flags;		/* OPT_STOP_AT_OPERAND */
	const struct opt_def *opts;	/* ends with OPT_END */
	/*
	 * The long names in getopt's order, blank-separated, where it is not
	 * the table's: getopt lists an ambiguous abbreviation's candidates
	 * in it. NULL: the table's order.
	 */
	const char *long_order;
};

/*
 * getopt_long() over the options of t that cmd selects: every option
 * when cmd is NULL, else those whose cmd is cmd. Returns the option's val (letter when 0), '?' for an unknown
 * one or a missing argument (getopt's message printed), -1 at the end.
 */
int opt_next(const struct opt_table *t, const char *cmd, int argc, char *argv[]);

/* The usage text of t: the synopsis, a blank line, "options:", the lines. */
const char *opt_text(const struct opt_table *t);

/*
 * cli_usage(opt_text(t), status), or, for status 0 with PERF_OPTIONS_TABLE
 * set, the dump of t on stdout and exit 0.
 */
void opt_usage(const struct opt_table *t, int status) __attribute__((noreturn));

/* Writes the dump of t (see above) to f. */
void opt_dump(const struct opt_table *t, FILE *f);

#endif
