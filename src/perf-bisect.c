/*
 * perf-bisect: the commit that made a benchmark slower (perf-bisect(1)):
 * the first-parent commits (good, bad] bisected on this machine in rounds
 * of good, a probe and bad, each run perf-collect as perf-ab runs it, each
 * commit checked out in a worktree of its own and set up once; every
 * decision is the library's (campaign/bisect.h). Progress as JSON lines,
 * then the report. --step is one probe of HEAD, as a git bisect run script.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "campaign/bisect.h"
#include "core/atomic.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/git.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/num.h"
#include "core/opt.h"
#include "core/path.h"
#include "core/proc.h"
#include "core/strvec.h"
#include "core/xml.h"
#include "lane/collect_run.h"
#include "lane/named_metric.h"
#include "lane/policy.h"
#include "lane/store/store_opts.h"
#include "lane/store/write.h"

static const struct opt_def options[] = {
	{ 0, "good", 'g', "ref",
	    "the commits before and after the change", "--good ref, --bad ref", NULL },
	{ 0, "bad", 'b', "ref", NULL, NULL, NULL },
	{ 0, "metric", 'M', "m",
	    "the metric bisected (default latency), or NAME or BENCHMARK/NAME", NULL, NULL },
	{ 0, "setup", 'S', "cmd",
	    "builds a commit in its worktree; a failure skips the commit", NULL, NULL },
	{ 0, "alpha", 'a', "a", "the error rate of the whole bisect (default 0.05)", NULL, NULL },
	{ 0, "confirm-rounds", 'c', "n",
	    "rounds before a change that does not show stops it (default 12)", NULL, NULL },
	{ 0, "probe-rounds", 'p', "min:max",
	    "the rounds one probe may take (default 3:24)", NULL, NULL },
	{ 0, "max-runs", 'n', "n", "the most benchmark runs (default 600)", NULL, NULL },
	{ 0, "seed", 's', "n", "the seed of the run order", NULL, NULL },
	{ 0, "cpu", 'U', NULL, "run GPU benchmarks on a machine without a GPU", NULL, NULL },
	{ 't', "timeout", 0, "seconds",
	    "kill a runner, and its process group, after this long", NULL, NULL },
	{ 'r', "runner", 0, "command", "the runner of every benchmark", NULL, NULL },
	{ 'C', "repo", 0, "repo",
	    "the git repository (default the working directory)", NULL, NULL },
	{ 'o', NULL, 0, "report.json", "write the final report to this file", NULL, NULL },
	{ 0, "md", 'm', NULL,
	    "a Markdown table on standard output; progress on stderr", NULL, NULL },
	{ 0, "store", 'Z', "store", "keep the report in this history store", NULL, NULL },
	STORE_OPT_CACHE_DIR("where a git store's cache clone is (see perf-upload(1))"),
	{ 0, "confirm", 'K', NULL,
	    "confirm each culprit with perf-ab(1) against its parent", NULL, NULL },
	{ 0, "step", 'T', NULL, "one step of git bisect run: 0 good, 1 bad, 125 skip", NULL, NULL },
	{ 0, "from-change", 'F', NULL,
	    "the range, cohort and metric from a perf-changes(1) line on stdin", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-bisect --good ref --bad ref [--metric m] [--setup cmd] [--alpha a]\n"
	    "                   [--confirm-rounds n] [--probe-rounds min:max] [--max-runs n]\n"
	    "                   [--seed n] [--cpu] [-t seconds] [-r runner] [-C repo]\n"
	    "                   [-o report.json] [--md] [--store store] [--cache dir]\n"
	    "                   [--confirm] [--step] [--from-change] config ...\n",
	.width = 26,
	.flags = 0,
	.opts = options,
	/* getopt's order before the table, for an ambiguous abbreviation's message */
	.long_order =
	    "good bad metric setup alpha confirm-rounds probe-rounds max-runs seed "
	    "cpu timeout runner repo md step store cache from-change confirm help version",
};

/* Exit statuses of --step, as git bisect run reads them. */
enum { STEP_GOOD = 0, STEP_BAD = 1, STEP_SKIP = 125, STEP_ABORT = 128 };
/* The change did not reproduce. */
#define EXIT_NOT_REPRODUCED 3

static struct {
	const char *good, *bad, *setup, *out, *repo, *store, *cache;
	int metric;
	bool metric_given, from_change;
	double alpha;
	/* a named metric, NAME or BENCHMARK/NAME; NULL: metric, one of the six */
	const char *named;
	const char *named_bench;	/* --from-change: only that benchmark's records */
	long confirm, probe_min, probe_max, max_runs;
	bool md, step, ab_confirm;
	struct collect_options run;	/* --cpu, -t, -r, --seed */
} opt;

/* One commit of the range: 0 is good, n is bad. */
struct commit {
	char *sha;
	char *dir;		/* its worktree, once made */
	int ready;		/* 0 not yet, 1 set up, -1 its setup failed */
};

struct job {
	char *repo, *work, *collect;
	char **configs;		/* absolute */
	int nconf;
	struct commit *c;
	int n;			/* commits after good */
	char **names;
	long runs;
	bool interrupted;
	cJSON *change;		/* --from-change: the change point */
	int step_verdict;	/* --step: 1 bad, -1 good, 0 not yet */
	bool reproduced;	/* the change was found there */
	FILE *progress;
	char *benchmarks;	/* a named metric: the first run's benchmarks, sorted, by \n */
};

/* git args in the repository; its stdout (trimmed) in *out when given. -1 after saying why. */
static int
git(struct job *j, const char *const *args, char **out, const char *what)
{
	buf o = BUF_INIT, e = BUF_INIT;
	int rc = git_run(j->repo, args, NULL, 0, &o, &e);

	if (rc != 0) {
		char *why = git_last_error(&e);

		warnx("%s: %s", what, why);
		free(why);
	} else if (out != NULL) {
		while (o.len > 0 && (o.s[o.len - 1] == '\n' || o.s[o.len - 1] == '\r'))
			o.s[--o.len] = '\0';
		*out = estrdup(o.s);
	}
	buf_free(&o);
	buf_free(&e);
	return rc == 0 ? 0 : -1;
}

/* The commit ref names, as 40 hex digits; NULL after saying why. */
static char *
resolve(struct job *j, const char *ref, const char *what)
{
	char *sha = collect_commit(j->repo, ref);

	if (sha == NULL)
		warnx("%s: %s: not a commit", what, ref);
	return sha;
}

/* The first-parent commits (good, bad], in order; -1 after saying why. */
static int
list_commits(struct job *j)
{
	char *good = resolve(j, opt.good, "--good"), *bad = resolve(j, opt.bad, "--bad");
	char *range = NULL, *list = NULL, *parent = NULL, *p, *line;
	const char *rl[] = { "rev-list", "--first-parent", "--reverse", NULL, NULL };
	int rc = -1;

	if (good == NULL || bad == NULL)
		goto done;
	range = easprintf("%s..%s", good, bad);
	rl[3] = range;
	if (git(j, rl, &list, "--good..--bad") != 0)
		goto done;
	j->c = ecalloc(strlen(list) / 40 + 2, sizeof *j->c);
	j->c[0].sha = estrdup(good);
	for (p = list; (line = strsep(&p, "\n")) != NULL;)
		if (*line != '\0')
			j->c[++j->n].sha = estrdup(line);
	if (j->n == 0) {
		warnx("--bad %s: no commit after --good %s", opt.bad, opt.good);
		goto done;
	}
	{
		char *spec = easprintf("%s^", j->c[1].sha);
		const char *rp[] = { "rev-parse", "--verify", "--quiet", spec, NULL };

		if (git(j, rp, &parent, "--good") != 0 || strcmp(parent, good) != 0)
			warnx("--good %s: not on the first-parent history of --bad %s", opt.good,
			    opt.bad);
		else
			rc = 0;
		free(spec);
	}
done:
	free(good);
	free(bad);
	free(range);
	free(list);
	free(parent);
	return rc;
}

/*
 * Commit i checked out in its worktree and set up, once for the job:
 * 1 ready, 0 its setup failed (a skip), -1 trouble (said).
 */
static int
prepare(struct job *j, int i)
{
	struct commit *c = &j->c[i];
	char *log, *what;
	int rc;

	if (c->ready != 0)
		return c->ready > 0;
	c->dir = easprintf("%s/tree-%d", j->work, i);
	if (collect_worktree_add(j->repo, c->dir, c->sha, "git worktree add") != 0)
		return -1;
	if (opt.setup == NULL) {
		c->ready = 1;
		return 1;
	}
	log = easprintf("%s/setup-%d.log", j->work, i);
	what = easprintf("--setup at %.12s", c->sha);
	rc = collect_run_setup(c->dir, opt.setup, log, what, NULL, NULL);
	free(log);
	free(what);
	if (proc_stop_signal() != 0)
		return -1;
	c->ready = rc == 0 ? 1 : -1;
	return rc == 0;
}

static void progress(void *ctx, cJSON *ev);

/*
 * The six's value of a run: the geometric mean of the metric over the
 * records, one per config; NAN after saying why.
 */
static double
six_value(struct job *j, const cJSON *recs, const char *what, const char *logf)
{
	const char *key = metric_table[opt.metric].raw_key;
	const cJSON *rec;
	double x = NAN, sum = 0;
	int got = 0;

	cJSON_ArrayForEach(rec, recs) {
		const cJSON *v = json_get(rec, key);

		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble <= 0) {
			warnx("%s: %s: the record has no positive %s", what,
			    json_str(rec, "benchmark_id"), key);
			got = -1;
			break;
		}
		sum += log(v->valuedouble);
		got++;
	}
	if (got >= 0 && got != j->nconf)
		warnx("%s: perf-collect wrote %d records for %d configs (see %s)", what, got,
		    j->nconf, logf);
	else if (got > 0)
		x = exp(sum / got);
	return x;
}

/*
 * Whether the metric name of benchmark bench is the named metric
 * bisected: named exactly so, or, for BENCHMARK/NAME, NAME of benchmark
 * BENCHMARK (names may hold '/' themselves); with --from-change, only
 * of the change point's benchmark.
 */
static bool
is_bisected(const char *bench, const char *name)
{
	size_t bn = strlen(bench);

	if (opt.named_bench != NULL && strcmp(bench, opt.named_bench) != 0)
		return false;
	return strcmp(name, opt.named) == 0 || (strncmp(opt.named, bench, bn) == 0 &&
	    opt.named[bn] == '/' && strcmp(opt.named + bn + 1, name) == 0);
}

/* The named metric bisected among ms, those of a record of benchmark bench; NULL when none. */
static const struct named_metric *
named_match(const char *bench, const struct named_metric *ms, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (is_bisected(bench, ms[i].name))
			return &ms[i];
	return NULL;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends lines ("a\nb\n") as "a, b". */
static void
comma_list(buf *out, const char *lines)
{
	for (const char *p = lines; *p != '\0'; p += strcspn(p, "\n") + 1)
		buf_addf(out, "%s%.*s", out->len > 0 ? ", " : "", (int)strcspn(p, "\n"), p);
}

/*
 * Which benchmarks a run measured (names sorted, one a line): the first
 * run's are the job's, and every later run must measure the same ones,
 * or its geometric mean would not be the same quantity. -1 after saying
 * why.
 */
static int
same_benchmarks(struct job *j, const char **names, int n, const char *what)
{
	buf b = BUF_INIT;
	int rc = 0;

	qsort(names, (size_t)n, sizeof *names, cmp_str);
	for (int i = 0; i < n; i++)
		buf_addf(&b, "%s\n", names[i]);
	if (j->benchmarks == NULL) {
		cJSON *ev = json_new_object(), *a = json_new_array();

		j->benchmarks = estrdup(b.s);
		for (int i = 0; i < n; i++)
			json_append(a, json_new_string(names[i]));
		json_set(ev, "event", json_new_string("measured"));
		json_set(ev, "metric", json_new_string(opt.named));
		json_set(ev, "benchmarks", a);
		progress(j, ev);
	} else if (strcmp(j->benchmarks, b.s) != 0) {
		buf now = BUF_INIT, first = BUF_INIT;

		comma_list(&now, b.s);
		comma_list(&first, j->benchmarks);
		warnx("%s: metric '%s' measured on %s, not on the first run's %s", what,
		    opt.named, now.s, first.s);
		buf_free(&now);
		buf_free(&first);
		rc = -1;
	}
	buf_free(&b);
	return rc;
}

/* Adds name to the list ("'a', 'b'") when it is not there yet, up to a few. */
static void
seen_add(buf *b, const char *name)
{
	char *quoted = easprintf("'%s'", name);

	if (strstr(b->s, quoted) == NULL && b->len < 200)
		buf_addf(b, "%s%s", b->len > 0 ? ", " : "", quoted);
	else if (strstr(b->s, quoted) == NULL && strcmp(b->s + b->len - 3, "...") != 0)
		buf_adds(b, ", ...");
	free(quoted);
}

/*
 * A named metric's value of a run: the geometric mean over the records
 * that carry it (--from-change: of the change point's benchmark alone);
 * NAN after saying why: a record whose metrics are invalid, a value that
 * is null or not above 0, or no record that carries it, so that a
 * metric misspelt stops the job at its first run.
 */
static double
named_value(struct job *j, const cJSON *recs, const char *what)
{
	const cJSON *rec;
	const char **names = ecalloc((size_t)cJSON_GetArraySize(recs) + 1, sizeof *names);
	char err[256];
	buf seen = BUF_INIT;	/* the metrics the records carry, for a misspelt name */
	double x = NAN, sum = 0;
	int got = 0;

	cJSON_ArrayForEach(rec, recs) {
		const char *bench = json_str(rec, "benchmark_id");
		const struct named_metric *m;
		struct named_metric *ms;
		size_t n;

		if (opt.named_bench != NULL && strcmp(bench, opt.named_bench) != 0)
			continue;
		if ((ms = nm_parse(json_get(rec, "metrics"), &n, err, sizeof err)) == NULL) {
			warnx("%s: %s: the record's %s", what, bench, err);
			got = -1;
			break;
		}
		m = named_match(bench, ms, n);
		for (size_t k = 0; k < n && m == NULL; k++)
			seen_add(&seen, ms[k].name);
		if (m != NULL && (!m->has_value || !(m->value > 0))) {
			warnx("%s: %s: the record has no positive value of metric '%s'", what, bench,
			    m->name);
			got = -1;
		} else if (m != NULL) {
			sum += log(m->value);
			names[got++] = bench;
		}
		free(ms);
		if (got < 0)
			break;
	}
	if (got == 0 && opt.named_bench != NULL)
		warnx("%s: no record of benchmark '%s' carries metric '%s'%s%s", what,
		    opt.named_bench, opt.named, seen.len > 0 ? "; they carry " : "", seen.s);
	else if (got == 0)
		warnx("%s: no record carries metric '%s'%s%s", what, opt.named,
		    seen.len > 0 ? "; they carry " : "", seen.s);
	else if (got > 0 && same_benchmarks(j, names, got, what) == 0)
		x = exp(sum / got);
	free(names);
	buf_free(&seen);
	return x;
}

/*
 * One run of commit i, perf-collect over every config: the metric's
 * value (six_value(), named_value()), or NAN after saying why.
 */
static double
run_one(struct job *j, int i)
{
	char *dir = easprintf("%s/runs/%04ld", j->work, j->runs + 1);
	char *logf = easprintf("%s.log", dir), *what;
	struct strvec argv = STRVEC_INIT;
	double x = NAN;
	cJSON *recs;

	strvec_push(&argv, j->collect);
	collect_pass_options(&argv, &opt.run);
	strvec_push(&argv, "-o");
	strvec_push(&argv, dir);
	for (int c = 0; c < j->nconf; c++)
		strvec_push(&argv, j->configs[c]);
	what = easprintf("run %ld at %.12s", j->runs + 1, j->c[i].sha);
	j->runs++;
	if (collect_run_in(j->c[i].dir, argv.v, logf, what) == 0) {
		recs = collect_read_records(dir);
		x = opt.named != NULL ? named_value(j, recs, what) :
		    six_value(j, recs, what, logf);
		cJSON_Delete(recs);
	}
	strvec_clear(&argv);
	free(what);
	free(dir);
	free(logf);
	return x;
}

/* A progress line (the library's events and ours). */
static void
progress(void *ctx, cJSON *ev)
{
	struct job *j = ctx;
	buf b = BUF_INIT;

	if (strcmp(json_str(ev, "event"), "reproduced") == 0)
		j->reproduced = true;
	if (opt.step && strcmp(json_str(ev, "event"), "probe") == 0 && j->step_verdict == 0)
		j->step_verdict = strcmp(json_str(ev, "verdict"), "bad") == 0 ? 1 : -1;
	json_write(&b, ev, JSON_COMPACT, NULL);
	buf_addc(&b, '\n');
	fwrite(b.s, 1, b.len, j->progress);
	fflush(j->progress);
	buf_free(&b);
	cJSON_Delete(ev);
}

enum outcome { DONE_FOUND, DONE_NOT_REPRODUCED, DONE_UNDECIDED, DONE_TROUBLE, DONE_SKIP };

/*
 * The rounds the library asks for until it is done, --max-runs is spent,
 * or (--step) the probe is decided.
 */
static enum outcome
run_rounds(struct job *j, struct bisect *b)
{
	struct bisect_round r;
	enum bisect_state st;

	while ((st = bisect_next(b, &r)) == BISECT_ROUND) {
		double v[3];
		bool skipped = false;

		/* --step: a verdict counts once the change is known to be there. */
		if (opt.step && j->step_verdict != 0 && j->reproduced)
			return DONE_FOUND;
		if (j->runs + r.nruns > opt.max_runs)
			return DONE_UNDECIDED;
		for (int k = 0; k < r.nruns && !skipped; k++) {
			int ok = prepare(j, r.commit[k]);

			if (ok < 0)
				return DONE_TROUBLE;
			if (ok > 0)
				continue;
			if (opt.step && r.commit[k] == 1)
				return DONE_SKIP;
			if (!bisect_skip(b, r.commit[k])) {
				warnx("--setup failed at %s %s", r.commit[k] == 0 ? "--good" : "--bad",
				    j->c[r.commit[k]].sha);
				return DONE_TROUBLE;
			}
			skipped = true;
		}
		if (skipped)
			continue;
		for (int k = 0; k < r.nruns; k++)
			if (proc_stop_signal() != 0 || !isfinite(v[k] = run_one(j, r.commit[k])))
				return DONE_TROUBLE;
		bisect_record(b, v);
	}
	if (opt.step && j->step_verdict != 0 && j->reproduced)
		return DONE_FOUND;
	return st == BISECT_FOUND ? DONE_FOUND : st == BISECT_NOT_REPRODUCED ?
	    DONE_NOT_REPRODUCED : DONE_UNDECIDED;
}

/* Whether every path the commit changes is a lock file or a submodule. */
static bool
dependency_change(struct job *j, const char *parent, const char *sha)
{
	static const char *const locks[] = {
		".lock", "package-lock.json", "go.sum", "pnpm-lock.yaml", "requirements.txt",
		"constraints.txt", ".gitmodules",
	};
	const char *args[] = { "diff-tree", "-r", "--no-commit-id", "--raw", parent, sha, NULL };
	char *out = NULL, *p, *line;
	bool any = false, all = true;

	if (git(j, args, &out, "git diff-tree") != 0)
		return false;
	for (p = out; (line = strsep(&p, "\n")) != NULL;) {
		char *path = strchr(line, '\t');
		bool dep = strncmp(line, ":160000", 7) == 0 || strstr(line, " 160000 ") != NULL;
		size_t n;

		if (path == NULL)
			continue;
		any = true;
		path++;
		n = strlen(path);
		for (size_t k = 0; k < sizeof locks / sizeof *locks && !dep; k++) {
			size_t m = strlen(locks[k]);

			dep = n >= m && strcmp(path + n - m, locks[k]) == 0;
		}
		all = all && dep;
	}
	free(out);
	return any && all;
}

/* The report's culprits: the library's, with subject, author and kind of change. */
static cJSON *
culprits_json(struct job *j, const struct bisect *b)
{
	cJSON *a = bisect_culprits_json(b), *k;

	cJSON_ArrayForEach(k, a) {
		const char *sha = json_str(k, "commit");
		const char *subj[] = { "log", "-1", "--format=%s", sha, NULL };
		const char *auth[] = { "log", "-1", "--format=%an <%ae>", sha, NULL };
		char *out = NULL;

		if (git(j, subj, &out, "git log") == 0) {
			json_set(k, "subject", json_new_string(out));
			free(out);
		}
		if (git(j, auth, &out, "git log") == 0) {
			json_set(k, "author", json_new_string(out));
			free(out);
		}
		json_set(k, "dependency_change", json_new_bool(dependency_change(j,
		    json_str(k, "parent"), sha)));
	}
	return a;
}

static int
commit_index(const struct job *j, const char *sha)
{
	for (int i = 0; i <= j->n; i++)
		if (strcmp(j->c[i].sha, sha) == 0)
			return i;
	return -1;
}

/*
 * Whether a result of perf-ab's report is the metric bisected: the six's
 * by their key; a named metric's as perf-ab names it, "NAME" of its
 * config's benchmark_id, or "BENCHMARK/NAME" for a suite's record of
 * BENCHMARK (perf-ab(1)), whichever '/' parts the two names.
 */
static bool
result_is_bisected(const cJSON *r)
{
	const char *bench = json_str(r, "benchmark_id"), *m = json_str(r, "metric"), *p;
	bool yes;

	if (opt.named == NULL)
		return strcmp(m, metric_table[opt.metric].key) == 0;
	yes = is_bisected(bench, m);
	for (p = strchr(m, '/'); !yes && p != NULL; p = strchr(p + 1, '/')) {
		char *suite = estrndup(m, (size_t)(p - m));

		yes = is_bisected(suite, p + 1);
		free(suite);
	}
	return yes;
}

/*
 * --confirm: perf-ab between the culprit's parent and the culprit, in
 * their worktrees, with the band half the change the culprit is credited
 * with; its verdict, ratio and interval for the metric, as
 * "confirmation" of the culprit k (or null when it could not run).
 */
static void
confirm_culprit(struct job *j, cJSON *k, double delta)
{
	int p = commit_index(j, json_str(k, "parent")), c = commit_index(j, json_str(k, "commit"));
	char *ab = collect_find("perf-ab");
	char *out = easprintf("%s/confirm-%d.json", j->work, c), *log = easprintf("%s.log", out);
	struct strvec argv = STRVEC_INIT;
	struct proc_spec spec;
	struct proc_result res;
	cJSON *rep = NULL, *x = json_new_null(), *r;
	buf text = BUF_INIT;
	json_error e;

	strvec_push(&argv, ab);
	collect_pass_options(&argv, &opt.run);
	strvec_push(&argv, "--base");
	strvec_push(&argv, j->c[p].dir);
	strvec_push(&argv, "--head");
	strvec_push(&argv, j->c[c].dir);
	strvec_push(&argv, "--band");
	strvec_pushf(&argv, "%.3f", fmax(0.5, 50 * fabs(expm1(json_num(k, "share") * delta))));
	strvec_push(&argv, "--seed");
	strvec_pushf(&argv, "%llu", opt.run.seed);
	strvec_push(&argv, "-o");
	strvec_push(&argv, out);
	for (int i = 0; i < j->nconf; i++)
		strvec_push(&argv, j->configs[i]);
	memset(&spec, 0, sizeof spec);
	spec.argv = argv.v;
	spec.log = log;
	if (p >= 0 && c >= 0 && j->c[p].dir != NULL && j->c[c].dir != NULL &&
	    proc_run(&spec, &res) == 0 && !res.interrupted && buf_read_file(&text, out) == 0 &&
	    (rep = json_parse(text.s, text.len, &e)) != NULL) {
		cJSON_Delete(x);
		x = json_new_array();
		cJSON_ArrayForEach(r, json_get(rep, "results")) {
			cJSON *o;

			if (!result_is_bisected(r))
				continue;
			o = json_new_object();
			json_set(o, "benchmark_id", json_new_string(json_str(r, "benchmark_id")));
			json_set(o, "verdict", json_new_string(json_str(r, "verdict")));
			json_set(o, "ratio", cJSON_Duplicate(json_get(r, "ratio"), true));
			json_set(o, "interval", cJSON_Duplicate(json_get(r, "interval"), true));
			json_set(o, "band", cJSON_Duplicate(json_get(r, "band"), true));
			json_set(o, "pairs", cJSON_Duplicate(json_get(r, "pairs"), true));
			json_append(x, o);
		}
	} else
		warnx("--confirm: perf-ab could not compare %.12s with its parent (see %s)",
		    json_str(k, "commit"), log);
	json_set(k, "confirmation", x);
	cJSON_Delete(rep);
	buf_free(&text);
	strvec_clear(&argv);
	free(ab);
	free(out);
	free(log);
}

static const char *
status_name(enum outcome o)
{
	return o == DONE_FOUND ? "found" : o == DONE_NOT_REPRODUCED ? "not_reproduced" :
	    "undecided";
}

static cJSON *
report(struct job *j, const struct bisect *b, enum outcome o)
{
	cJSON *r = json_new_object(), *s = json_new_object(), *sk = json_new_array();

	json_set(r, "event", json_new_string("report"));
	json_set(r, "schema", json_new_string("perfkite.bisect-report/1"));
	json_set(r, "status", json_new_string(status_name(o)));
	json_set(r, "good", json_new_string(j->c[0].sha));
	json_set(r, "bad", json_new_string(j->c[j->n].sha));
	json_set(r, "commits", json_new_int(j->n));
	{
		cJSON *a = json_new_array();

		for (int c = 0; c < j->nconf; c++)
			json_append(a, json_new_string(j->configs[c]));
		json_set(r, "configs", a);
	}
	if (j->change != NULL)
		json_set(r, "change", cJSON_Duplicate(j->change, true));
	json_set(r, "metric", json_new_string(opt.named != NULL ? opt.named :
	    metric_table[opt.metric].key));
	/* A named metric: the benchmarks whose geometric mean each run is. */
	if (opt.named != NULL) {
		cJSON *a = json_new_array();
		char *list = estrdup(j->benchmarks != NULL ? j->benchmarks : ""), *p, *name;

		for (p = list; (name = strsep(&p, "\n")) != NULL;)
			if (*name != '\0')
				json_append(a, json_new_string(name));
		json_set(r, "benchmarks", a);
		free(list);
	}
	json_set(r, "culprits", culprits_json(j, b));
	if (opt.ab_confirm) {
		cJSON *k;

		cJSON_ArrayForEach(k, json_get(r, "culprits"))
			confirm_culprit(j, k, bisect_delta(b));
	}
	json_set(r, "probes", bisect_probes_json(b));
	for (int i = 1; i < j->n; i++)
		if (j->c[i].ready < 0)
			json_append(sk, json_new_string(j->c[i].sha));
	json_set(r, "skipped", sk);
	json_set(r, "weak_decisions", json_new_int(bisect_weak_decisions(b)));
	json_set(r, "rounds", json_new_int(bisect_rounds(b)));
	json_set(r, "runs", json_new_int(j->runs));
	json_set(r, "delta", json_new_finite(bisect_delta(b)));
	json_set(r, "sigma", json_new_finite(bisect_sigma(b)));
	json_set(s, "alpha", json_new_float(opt.alpha));
	json_set(s, "confirm_rounds", json_new_int(opt.confirm));
	json_set(s, "probe_rounds_min", json_new_int(opt.probe_min));
	json_set(s, "probe_rounds_max", json_new_int(opt.probe_max));
	json_set(s, "max_runs", json_new_int(opt.max_runs));
	json_set(s, "seed", json_new_int((long long)opt.run.seed));
	json_set(s, "setup", opt.setup != NULL ? json_new_string(opt.setup) : json_new_null());
	json_set(r, "settings", s);
	return r;
}

/* The Markdown table of the annotation. */
static void
table(buf *out, const cJSON *rep)
{
	const cJSON *k;
	char n1[NUM_BUFSZ], n2[NUM_BUFSZ];

	buf_addf(out, "### Bisect: %.12s..%.12s, %s commits, %s runs on this agent: %s\n\n",
	    json_str(rep, "good"), json_str(rep, "bad"), num_fixed(n1, json_num(rep, "commits"), 0),
	    num_fixed(n2, json_num(rep, "runs"), 0), json_str(rep, "status"));
	/* A named metric: which, and over which benchmarks. */
	if (cJSON_IsArray(json_get(rep, "benchmarks"))) {
		const char *sep = ": ";

		buf_adds(out, "Metric ");
		xml_md_text(out, json_str(rep, "metric"));
		buf_addf(out, ", the geometric mean over %d benchmark%s",
		    cJSON_GetArraySize(json_get(rep, "benchmarks")),
		    cJSON_GetArraySize(json_get(rep, "benchmarks")) == 1 ? "" : "s");
		cJSON_ArrayForEach(k, json_get(rep, "benchmarks")) {
			buf_adds(out, sep);
			xml_md_text(out, k->valuestring);
			sep = ", ";
		}
		buf_adds(out, ".\n\n");
	}
	if (cJSON_GetArraySize(json_get(rep, "culprits")) == 0)
		return;
	buf_adds(out, "| Culprit | Subject | Author | Share of the change | Notes |\n"
	    "|---|---|---|---|---|\n");
	cJSON_ArrayForEach(k, json_get(rep, "culprits")) {
		buf notes = BUF_INIT;

		if (cJSON_IsTrue(json_get(k, "weak")))
			buf_adds(&notes, "weak decision; ");
		if (cJSON_IsTrue(json_get(k, "dependency_change")))
			buf_adds(&notes, "dependency change; ");
		if (cJSON_GetArraySize(json_get(k, "skipped_candidates")) > 0)
			buf_adds(&notes, "skipped commits before it may be the culprit; ");
		if (notes.len >= 2)
			notes.s[notes.len -= 2] = '\0';
		buf_addf(out, "| %.12s | %s | %s | %.0f%% (%.0f%%-%.0f%%) | %s |\n",
		    json_str(k, "commit"), json_str(k, "subject"), json_str(k, "author"),
		    100 * json_num(k, "share"), 100 * json_num(k, "share_low"),
		    100 * json_num(k, "share_high"), notes.s);
		buf_free(&notes);
	}
}

/* The report to -o and stdout. 0, or -1 when it could not be written (said). */
static int
write_report(const cJSON *rep)
{
	int rc = opt.out == NULL ? 0 : collect_save_report(rep, opt.out);

	return collect_print_report(rep, opt.md, table) != 0 ? -1 : rc;
}

/* The worktrees and the scratch directory, gone. */
static void
cleanup(struct job *j)
{
	for (int i = 0; j->c != NULL && i <= j->n; i++)
		if (j->c[i].dir != NULL)
			collect_worktree_remove(j->repo, j->c[i].dir);
	if (j->work != NULL)
		atomic_remove_tree(j->work);
	if (j->repo != NULL)
		collect_worktree_prune(j->repo);
	for (int i = 0; j->c != NULL && i <= j->n; i++) {
		free(j->c[i].sha);
		free(j->c[i].dir);
	}
	free(j->c);
	free(j->names);
	free(j->repo);
	free(j->work);
	free(j->collect);
	free(j->benchmarks);
	for (int c = 0; c < j->nconf; c++)
		free(j->configs[c]);
	free(j->configs);
	cJSON_Delete(j->change);
}

/* --step: the range is good, HEAD, bad. */
static int
step_commits(struct job *j, long *span)
{
	char *head = resolve(j, "HEAD", "HEAD"), *good = resolve(j, opt.good, "--good");
	char *bad = resolve(j, opt.bad, "--bad"), *range, *count = NULL;
	const char *rl[] = { "rev-list", "--count", "--first-parent", NULL, NULL };
	int rc = -1;

	if (head != NULL && good != NULL && bad != NULL) {
		range = easprintf("%s..%s", good, bad);
		rl[3] = range;
		if (git(j, rl, &count, "--good..--bad") == 0) {
			*span = strtol(count, NULL, 10);
			j->n = 2;
			j->c = ecalloc(3, sizeof *j->c);
			j->c[0].sha = good;
			j->c[1].sha = head;
			j->c[2].sha = bad;
			good = head = bad = NULL;
			rc = 0;
		}
		free(range);
		free(count);
	}
	free(head);
	free(good);
	free(bad);
	return rc;
}

static int
start_job(struct job *j, char **configs, int nconf, long *span)
{
	char *log;
	int rc;

	if ((j->work = collect_scratch("perf-bisect")) == NULL)
		return -1;
	j->collect = collect_find("perf-collect");
	j->nconf = nconf;
	j->configs = ecalloc((size_t)nconf, sizeof *j->configs);
	for (int c = 0; c < nconf; c++)
		j->configs[c] = path_resolve(configs[c]);
	log = easprintf("%s/check.log", j->work);
	rc = collect_check(j->collect, j->configs, nconf, log, "configs", NULL, NULL);
	free(log);
	if (rc != 0)
		return -1;
	if (opt.step ? step_commits(j, span) : list_commits(j))
		return -1;
	*span = opt.step ? *span : j->n;
	j->names = ecalloc((size_t)j->n + 1, sizeof *j->names);
	for (int i = 0; i <= j->n; i++)
		j->names[i] = j->c[i].sha;
	return 0;
}

/*
 * --store: the report as a record of its own kind, under the hidden
 * directory .perfkite/bisect/ that neither the reference's loader nor any
 * tracking reader looks into. 0 (pushed or not), or -1 after saying why.
 */
static int
store_report(const cJSON *rep)
{
	store_writer *w = store_writer_open(opt.store, opt.cache);
	char ts[40], *rel, *msg;
	buf text = BUF_INIT;
	int64_t now = isotime_now();
	int y, mo, d, h, mi, s, us, rc;
	cJSON *rec;

	if (w == NULL)
		return -1;
	isotime_format(ts, now);
	rec = cJSON_Duplicate(rep, true);
	cJSON_Delete(json_take(rec, "event"));
	json_set(rec, "created_at", json_new_string(ts));
	json_write(&text, rec, JSON_INDENT2, NULL);
	buf_addc(&text, '\n');
	isotime_fields(now, &y, &mo, &d, &h, &mi, &s, &us);
	rel = easprintf(".perfkite/bisect/%04d%02d%02dT%02d%02d%02dZ_%.12s_%.12s.json", y, mo, d,
	    h, mi, s, json_str(rep, "good"), json_str(rep, "bad"));
	msg = easprintf("Bisect: %.7s..%.7s %s", json_str(rep, "good"), json_str(rep, "bad"),
	    json_str(rep, "status"));
	rc = store_writer_put(w, rel, text.s, text.len);
	if (rc == 0)
		rc = store_writer_commit(w, msg);
	if (rc == 1)
		warnx("%s: the bisect report is committed but not pushed", store_writer_shown(w));
	store_writer_close(w);
	cJSON_Delete(rec);
	buf_free(&text);
	free(rel);
	free(msg);
	return rc >= 0 ? 0 : -1;
}

/*
 * Whether m names a named metric: NAME or BENCHMARK/NAME, each part a
 * valid name (named_metric.h); false with the reason (of m whole) in *why.
 */
static bool
metric_name_valid(const char *m, const char **why)
{
	const char *ignore;
	bool ok = nm_name_valid(m, why);

	for (const char *p = strchr(m, '/'); !ok && p != NULL; p = strchr(p + 1, '/')) {
		char *bench = estrndup(m, (size_t)(p - m));

		ok = nm_name_valid(bench, &ignore) && nm_name_valid(p + 1, &ignore);
		free(bench);
	}
	return ok;
}

/*
 * --from-change: the first line of standard input, a perf-changes change
 * point: previous.commit_sha is good, commit_sha bad, its metric the
 * metric, unless given. A named metric's change point (its metric none
 * of the six) is bisected on its benchmark's records alone: those whose
 * benchmark_id is its model_id. -1 after saying why.
 */
static int
read_change(struct job *j)
{
	jsonl_reader *r = jsonl_open(NULL, 0);
	jsonl_span sp;
	const cJSON *prev, *metric;
	const char *why;
	int rc = -1;

	if ((j->change = jsonl_next(r, &sp)) == NULL) {
		if (jsonl_errors(r) == 0)
			warnx("--from-change: no change point on standard input");
		jsonl_close(r);
		return -1;
	}
	prev = json_get(j->change, "previous");
	metric = opt.metric_given || !cJSON_IsString(json_get(j->change, "metric")) ? NULL :
	    json_get(j->change, "metric");
	if (!cJSON_IsString(json_get(j->change, "commit_sha")) ||
	    !cJSON_IsString(json_get(prev, "commit_sha")))
		jsonl_error(r, &sp, "a change point needs commit_sha and previous.commit_sha");
	else if (metric != NULL && policy_metric_index(metric->valuestring) < 0 &&
	    !nm_name_valid(metric->valuestring, &why))
		jsonl_error(r, &sp, "metric '%s' is not a metric name: %s", metric->valuestring,
		    why);
	else if (metric != NULL && policy_metric_index(metric->valuestring) < 0 &&
	    (!cJSON_IsString(json_get(j->change, "model_id")) ||
	    *json_str(j->change, "model_id") == '\0'))
		jsonl_error(r, &sp, "the change point of metric '%s' needs its model_id",
		    metric->valuestring);
	else {
		if (opt.good == NULL)
			opt.good = json_str(prev, "commit_sha");
		if (opt.bad == NULL)
			opt.bad = json_str(j->change, "commit_sha");
		if (metric != NULL && policy_metric_index(metric->valuestring) >= 0)
			opt.metric = policy_metric_index(metric->valuestring);
		else if (metric != NULL) {
			opt.named = metric->valuestring;
			opt.named_bench = json_str(j->change, "model_id");
		}
		rc = 0;
	}
	jsonl_close(r);
	return rc;
}

/* The whole job; returns the exit status. */
static int
run_job(struct job *j, char **configs, int nconf)
{
	struct bisect_conf c;
	struct bisect *b;
	enum outcome o;
	long span = 0;
	int rc;
	cJSON *rep;

	if (start_job(j, configs, nconf, &span) != 0)
		return opt.step ? STEP_ABORT : EXIT_TROUBLE;
	memset(&c, 0, sizeof c);
	c.n = j->n;
	c.alpha = opt.alpha;
	c.probe_alpha = opt.step ? opt.alpha / (span > 2 ? log2((double)span) : 1) : 0;
	c.confirm_rounds = (int)opt.confirm;
	c.probe_min = (int)opt.probe_min;
	c.probe_max = (int)opt.probe_max;
	c.max_culprits = 4;
	c.seed = opt.run.seed;
	c.names = (const char *const *)j->names;
	c.event = progress;
	c.ctx = j;
	b = bisect_new(&c);
	o = run_rounds(j, b);
	if (opt.step) {
		bisect_free(b);
		return o == DONE_SKIP ? STEP_SKIP : o != DONE_FOUND ? STEP_ABORT :
		    j->step_verdict > 0 ? STEP_BAD : STEP_GOOD;
	}
	if (o == DONE_TROUBLE) {
		bisect_free(b);
		return EXIT_TROUBLE;
	}
	rep = report(j, b, o);
	rc = write_report(rep) != 0 ||
	    (opt.store != NULL && store_report(rep) != 0) ? EXIT_TROUBLE :
	    o == DONE_FOUND ? EXIT_PASS :
	    o == DONE_NOT_REPRODUCED ? EXIT_NOT_REPRODUCED : EXIT_GATE;
	cJSON_Delete(rep);
	bisect_free(b);
	return rc;
}

static void
parse_options(int argc, char *argv[])
{
	const char *why;
	int c;

	opt.alpha = 0.05;
	opt.confirm = 12;
	opt.probe_min = 3;
	opt.probe_max = 24;
	opt.max_runs = 600;
	opt.metric = policy_metric_index("latency");
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		switch (c) {
		case 'g': opt.good = optarg; break;
		case 'b': opt.bad = optarg; break;
		case 'S': opt.setup = optarg; break;
		case 'o': opt.out = optarg; break;
		case 'C': opt.repo = optarg; break;
		case 'm': opt.md = true; break;
		case 'T': opt.step = true; break;
		case 'Z': opt.store = optarg; break;
		case STORE_OPT_CACHE: opt.cache = optarg; break;
		case 'F': opt.from_change = true; break;
		case 'K': opt.ab_confirm = true; break;
		case 'M':
			opt.metric_given = true;
			opt.named = NULL;
			if ((opt.metric = policy_metric_index(optarg)) >= 0)
				break;
			if (!metric_name_valid(optarg, &why)) {
				warnx("--metric: '%s' is not a metric name: %s", optarg, why);
				opt_usage(&option_table, EXIT_TROUBLE);
			}
			opt.named = optarg;
			break;
		case 'a':
			opt.alpha = cli_double(opt_text(&option_table), "--alpha", optarg, 1e-6,
			    0.25, "a level from 0.000001 to 0.25");
			break;
		case 'c':
			opt.confirm = cli_long(opt_text(&option_table), "--confirm-rounds", optarg,
			    2, 1000, NULL);
			break;
		case 'n':
			opt.max_runs = cli_long(opt_text(&option_table), "--max-runs", optarg, 3,
			    1000000, NULL);
			break;
		case 'p':
			cli_span(opt_text(&option_table), "--probe-rounds", optarg, 1, 1000,
			    &opt.probe_min, &opt.probe_max);
			break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		default:
			if (!collect_option(&opt.run, c, optarg, opt_text(&option_table)))
				opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
	if ((opt.good == NULL || opt.bad == NULL) && !opt.from_change) {
		warnx("give --good and --bad");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	if (argc == optind) {
		warnx("no benchmark config given");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
}

int
main(int argc, char *argv[])
{
	struct job j;
	int rc;

	err_init(argv[0]);
	git_askpass_main(argc, argv);
	memset(&j, 0, sizeof j);
	parse_options(argc, argv);
	for (int i = optind; i < argc; i++)
		if (access(argv[i], R_OK) != 0) {
			warn("%s", argv[i]);
			return opt.step ? STEP_ABORT : EXIT_TROUBLE;
		}
	if (opt.from_change && read_change(&j) != 0) {
		cJSON_Delete(j.change);
		return opt.step ? STEP_ABORT : EXIT_TROUBLE;
	}
	j.repo = path_resolve(opt.repo != NULL ? opt.repo : ".");
	j.progress = opt.md || opt.step ? stderr : stdout;
	proc_handle_signals();
	rc = run_job(&j, argv + optind, argc - optind);
	cleanup(&j);
	return collect_finish(rc, opt.step ? STEP_ABORT : EXIT_TROUBLE);
}
