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
#include "core/isotime.h"
#include "core/jsonl.h"
#include "lane/site.h"
#include "lane/store/git_command.h"
#include "lane/store/git_store.h"
#include "lane/store/read.h"

static struct {
	const char *store;
	const char *cache;
	const char *changes;
	const char *out;
	const char *title;
	const char *publish;
	char **histories, **abs;
	int nhistories, nabs;
	long days;
	int64_t now;
} opt;

static const char usage_text[] =
    "usage: perf-site [-s store | -H history] [--cache dir] [--changes file]\n"
    "                 [--ab report.json ...] [--days n] [--title title] [--now time]\n"
    "                 [--publish git+URL[#branch]] -o dir\n"
    "\n"
    "options:\n"
    "  -s, --store store         the history store, a directory or git+URL\n"
    "  --cache dir               where the cache clones of git stores are (perf-upload(1))\n"
    "  -H, --history history     a JSON-lines history stream, beside or instead of the store\n"
    "  --changes file            change points as perf-changes(1) writes them\n"
    "  --ab report.json          a perf-ab(1) report shown on its cohort's page; repeatable\n"
    "  --days n                  only the last n days of history (default all)\n"
    "  --title title             the site's title\n"
    "  --now time                the time the site is made (ISO 8601), for reproducible sites\n"
    "  -o, --output dir          the site's directory, replaced whole\n"
    "  --publish git+URL[#branch]  then force-push it as one commit to the branch\n"
    "                            (default gh-pages) of that git remote\n"
    "  -h, --help                print usage and exit\n"
    "  --version                 print the version and exit\n";

static void
push(char ***list, int *n, char *v)
{
	*list = erealloc(*list, (size_t)(*n + 1) * sizeof **list);
	(*list)[(*n)++] = v;
}

static void
parse_options(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "store", required_argument, NULL, 's' },
		{ "cache", required_argument, NULL, 'K' },
		{ "history", required_argument, NULL, 'H' },
		{ "changes", required_argument, NULL, 'P' },
		{ "ab", required_argument, NULL, 'A' },
		{ "days", required_argument, NULL, 'd' },
		{ "title", required_argument, NULL, 'T' },
		{ "now", required_argument, NULL, 'N' },
		{ "output", required_argument, NULL, 'o' },
		{ "publish", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opt.now = isotime_now();
	opt.title = "Performance history";
	while ((c = getopt_long(argc, argv, "hH:o:s:", longopts, NULL)) != -1) {
		switch (c) {
		case 's': opt.store = optarg; break;
		case 'K': opt.cache = optarg; break;
		case 'H': push(&opt.histories, &opt.nhistories, optarg); break;
		case 'P': opt.changes = optarg; break;
		case 'A': push(&opt.abs, &opt.nabs, optarg); break;
		case 'd': opt.days = cli_long(usage_text, "--days", optarg, 1, 36500, NULL); break;
		case 'T': opt.title = optarg; break;
		case 'N':
			opt.now = cli_time(usage_text, "--now", optarg, "an ISO 8601 time");
			break;
		case 'o': opt.out = optarg; break;
		case 'U':
			if (!gitstore_is_spec(optarg)) {
				warnx("--publish: '%s' is not a git remote (git+URL[#branch])",
				    optarg);
				cli_usage(usage_text, EXIT_TROUBLE);
			}
			opt.publish = optarg;
			break;
		case 'h': cli_usage(usage_text, EXIT_PASS);
		case 'V': cli_version();
		default: cli_usage(usage_text, EXIT_TROUBLE);
		}
	}
	if (opt.out == NULL || *opt.out == '\0' || optind != argc) {
		warnx(opt.out == NULL || *opt.out == '\0' ? "no output directory (-o)" :
		    "unexpected operand");
		cli_usage(usage_text, EXIT_TROUBLE);
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

	if (opt.store != NULL || opt.nhistories == 0) {
		if ((spec = store_spec(opt.store)) == NULL)
			return -1;
		if (strncmp(spec, "git+", 4) != 0 && stat(spec, &st) != 0) {
			warn("%s: cannot read the store", spec);
			return -1;
		}
	}
	if ((st_ = store_open_cache(spec, opt.cache)) == NULL)
		return -1;
	memset(&all, 0, sizeof all);
	keys = site_keys(&nkeys);
	store_want(st_, keys, nkeys);
	store_threads(st_, 1);	/* every record is a hit: one thread costs least */
	if (opt.nhistories > 0)
		site_streams(s);
	for (int i = 0; i < opt.nhistories; i++)
		store_add_stream(st_, opt.histories[i]);
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
	free(opt.histories);
	free(opt.abs);
	return ok ? EXIT_PASS : EXIT_TROUBLE;
}
