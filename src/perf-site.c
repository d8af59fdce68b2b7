/*
 * perf-site: the history store as a static site (perf-site(1)): an
 * overview of what needs attention and of every cohort, a page per
 * cohort, the change points, an Atom feed and each cohort's series,
 * written beside the output directory and renamed over it whole.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/atomic.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/git.h"
#include "core/isotime.h"
#include "core/jsonl.h"
#include "core/opt.h"
#include "lane/site.h"
#include "lane/store/git_store.h"
#include "lane/store/read.h"
#include "lane/store/store_opts.h"

static struct {
	struct store_opts store;	/* -s, --cache, -H */
	const char *changes;
	const char *out;
	const char *title;
	const char *publish;
	char **abs;
	int nabs;
	long days;
	int64_t now;
} opt;

static const struct opt_def options[] = {
	STORE_OPT_STORE("the history store, a directory or git+URL"),
	STORE_OPT_CACHE_DIR("where the cache clones of git stores are (perf-upload(1))"),
	STORE_OPT_HISTORY("history", "a JSON-lines history stream, beside or instead of the store"),
	{ 0, "changes", 'P', "file", "change points as perf-changes(1) writes them", NULL, NULL },
	{ 0, "ab", 'A', "report.json",
	    "a perf-ab(1) report shown on its cohort's page; repeatable", NULL, NULL },
	{ 0, "days", 'd', "n", "only the last n days of history (default all)", NULL, NULL },
	{ 0, "title", 'T', "title", "the site's title", NULL, NULL },
	{ 0, "now", 'N', "time",
	    "the time the site is made (ISO 8601), for reproducible sites", NULL, NULL },
	{ 'o', "output", 0, "dir", "the site's directory, replaced whole", NULL, NULL },
	{ 0, "publish", 'U', "git+URL[#branch]",
	    "then force-push it as one commit to the branch\n"
	    "(default gh-pages) of that git remote", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-site [-s store | -H history] [--cache dir] [--changes file]\n"
	    "                 [--ab report.json ...] [--days n] [--title title] [--now time]\n"
	    "                 [--publish git+URL[#branch]] -o dir\n",
	.width = 26,
	.flags = 0,
	.opts = options,
};

static void
push(char ***list, int *n, char *v)
{
	*list = erealloc(*list, (size_t)(*n + 1) * sizeof **list);
	(*list)[(*n)++] = v;
}

static void
parse_options(int argc, char *argv[])
{
	int c;

	opt.now = isotime_now();
	opt.title = "Performance history";
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		if (store_opts_take(&opt.store, c, optarg))
			continue;
		switch (c) {
		case 'P': opt.changes = optarg; break;
		case 'A': push(&opt.abs, &opt.nabs, optarg); break;
		case 'd': opt.days = cli_long(opt_text(&option_table), "--days", optarg, 1, 36500,
		    NULL); break;
		case 'T': opt.title = optarg; break;
		case 'N':
			opt.now = cli_time(opt_text(&option_table), "--now", optarg,
			    "an ISO 8601 time");
			break;
		case 'o': opt.out = optarg; break;
		case 'U':
			if (!gitstore_is_spec(optarg)) {
				warnx("--publish: '%s' is not a git remote (git+URL[#branch])",
				    optarg);
				opt_usage(&option_table, EXIT_TROUBLE);
			}
			opt.publish = optarg;
			break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
	if (opt.out == NULL || *opt.out == '\0' || optind != argc) {
		warnx(opt.out == NULL || *opt.out == '\0' ? "no output directory (-o)" :
		    "unexpected operand");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
}

/* Reads the change points of --changes. 0, or -1 when one was bad (said). */
static int
read_changes(struct site *s)
{
	jsonl_reader *r = jsonl_open((char *const *)&opt.changes, 1);
	jsonl_span sp;
	cJSON *cp;
	int rc;

	while ((cp = jsonl_next(r, &sp)) != NULL) {
		if (!site_add_change(s, cp))
			jsonl_error(r, &sp, "not a change point of perf-changes");
		cJSON_Delete(cp);
	}
	rc = jsonl_errors(r) == 0 ? 0 : -1;
	jsonl_close(r);
	return rc;
}

/* Reads the A/B reports of --ab. 0, or -1 when one was bad (said). */
static int
read_abs(struct site *s)
{
	int rc = 0;

	for (int i = 0; i < opt.nabs; i++) {
		jsonl_reader *r = jsonl_open(&opt.abs[i], 1);
		jsonl_span sp;
		cJSON *rep;

		while ((rep = jsonl_next(r, &sp)) != NULL) {
			if (!site_add_ab(s, rep, opt.abs[i]))
				jsonl_error(r, &sp, "not an A/B report of perf-ab");
			cJSON_Delete(rep);
		}
		if (jsonl_errors(r) != 0)
			rc = -1;
		jsonl_close(r);
	}
	return rc;
}

static void
on_hit(const struct store_hit *h, void *ctx)
{
	site_add(ctx, h);
}

/*
 * Reads the store (which must exist: a site of a mistyped path would be
 * an empty one) and the history streams into s. 0, or -1 after reporting.
 */
static int
read_history(struct site *s)
{
	struct store_query all;
	const char *spec = NULL;
	char *raised = NULL;
	struct stat st;
	store *st_;
	const char *const *keys;
	size_t nkeys;
	int rc = 0;

	if (opt.store.spec != NULL || opt.store.nhistories == 0) {
		if ((spec = store_spec(opt.store.spec)) == NULL)
			return -1;
		if (strncmp(spec, "git+", 4) != 0 && stat(spec, &st) != 0) {
			warn("%s: cannot read the store", spec);
			return -1;
		}
	}
	if ((st_ = store_open_cache(spec, opt.store.cache)) == NULL)
		return -1;
	memset(&all, 0, sizeof all);
	keys = site_keys(&nkeys);
	store_want(st_, keys, nkeys);
	store_threads(st_, 1);	/* every record is a hit: one thread costs least */
	if (opt.store.nhistories > 0)
		site_streams(s);
	for (int i = 0; i < opt.store.nhistories; i++)
		store_add_stream(st_, opt.store.histories[i]);
	/* A record skipped is a site that lies by omission: no site. */
	if (store_scan(st_, &all, 1, on_hit, s, &raised) != 0 || store_warnings(st_) > 0)
		rc = -1;
	store_close(st_);
	if (raised != NULL) {
		warnx("the history holds a record that cannot be read: %s", raised);
		free(raised);
		rc = -1;
	}
	return rc;
}

int
main(int argc, char *argv[])
{
	struct site *s;
	char *tmp;
	bool ok;

	git_askpass_main(argc, argv);
	err_init(argv[0]);
	parse_options(argc, argv);
	/* An unwritable destination is found before any work. */
	if ((tmp = atomic_dir_begin(opt.out)) == NULL) {
		warn("%s: cannot write the site", opt.out);
		return EXIT_TROUBLE;
	}
	s = site_new(opt.title, opt.now, opt.days);
	/* Every input is read, so that each bad one is said. */
	ok = opt.changes == NULL || read_changes(s) == 0;
	if (read_abs(s) != 0)
		ok = false;
	if (read_history(s) != 0)
		ok = false;
	if (ok && site_write(s, tmp) != 0)
		ok = false;
	if (ok && atomic_dir_commit(tmp, opt.out) != 0) {
		warn("%s: cannot put the site in place", opt.out);
		ok = false;
	}
	if (!ok)
		atomic_remove_tree(tmp);
	else if (opt.publish != NULL) {
		char when[40], *msg;

		isotime_format(when, opt.now);
		msg = easprintf("perf-site of %s", when);
		ok = gitstore_publish(opt.publish, "gh-pages", opt.out, msg) == 0;
		free(msg);
	}
	free(tmp);
	site_free(s);
	store_opts_free(&opt.store);
	free(opt.abs);
	return ok ? EXIT_PASS : EXIT_TROUBLE;
}
