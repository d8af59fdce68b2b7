/*
 * Unit tests for store_opts: the -s/--store, --cache and -H/--history
 * entries of an option table and their one handler, as the programs that
 * read a history store take them.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "core/opt.h"
#include "core/strvec.h"
#include "lane/store/store_opts.h"
#include "tap.h"

static const struct opt_def options[] = {
	STORE_OPT_STORE("the history store"),
	STORE_OPT_CACHE_DIR("where the cache clones are"),
	STORE_OPT_HISTORY("file", "a history stream"),
	{ 0, "all", 'A', NULL, "every record", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_END,
};

static const struct opt_def options_as[] = {
	STORE_OPT_STORE_AS("-s store, --store store", "the history store"),
	STORE_OPT_HISTORY_AS("file", "-H file, --history file", "a history stream"),
	OPT_END,
};

static const struct opt_table table = {
	.synopsis = "usage: x [-s store] [--cache dir] [-H file] [--all]\n",
	.width = 20,
	.opts = options,
};

static const struct opt_table table_as = {
	.synopsis = "usage: y\n",
	.width = 26,
	.opts = options_as,
};

int
main(void)
{
	static const char *const args[] = { "x", "--store", "S", "-H", "h1", "--all",
	    "--cache=C", "--history", "h2", "-s", "T", NULL };
	struct strvec argv = STRVEC_INIT;
	struct store_opts so = { 0 };
	char other[64] = "";
	int c;

	err_init("x");
	strvec_pushv(&argv, args);
	optind = 0;
	while ((c = opt_next(&table, NULL, (int)argv.n, argv.v)) != -1)
		if (!store_opts_take(&so, c, optarg))
			snprintf(other + strlen(other), sizeof other - strlen(other), "%c", c);
	is_str(so.spec, "T", "--store and -s: the last one given");
	is_str(so.cache, "C", "--cache");
	ok(so.nhistories == 2 && strcmp(so.histories[0], "h1") == 0 &&
	    strcmp(so.histories[1], "h2") == 0, "-H and --history: every one, in order");
	is_str(other, "A", "any other option is the caller's");
	ok(!store_opts_take(&so, 'x', NULL) && !store_opts_take(&so, 'h', NULL),
	    "an option not of the three leaves so alone");
	store_opts_free(&so);
	ok(so.histories == NULL && so.nhistories == 0, "store_opts_free: no histories left");
	is_str(opt_text(&table), "usage: x [-s store] [--cache dir] [-H file] [--all]\n\n"
	    "options:\n"
	    "  -s, --store store   the history store\n"
	    "  --cache dir         where the cache clones are\n"
	    "  -H, --history file  a history stream\n"
	    "  --all               every record\n"
	    "  -h, --help          print usage and exit\n",
	    "the entries' --help lines: the program's words");
	is_str(opt_text(&table_as), "usage: y\n\noptions:\n"
	    "  -s store, --store store   the history store\n"
	    "  -H file, --history file   a history stream\n",
	    "the _AS entries: the program's own heads");
	strvec_clear(&argv);
	return done_testing();
}
