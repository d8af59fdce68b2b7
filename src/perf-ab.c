/*
 * perf-ab: a paired base-versus-head A/B on one machine (perf-ab(1)):
 * each run is perf-collect run from the side's directory, base and head
 * interleaved in balanced seeded blocks, the paired ratios of every
 * metric analysed after each pair with perf-analyze's statistics under an
 * alpha-spending bound, stopping when every gated metric is decided.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "campaign/ab.h"
#include "campaign/ab_figure.h"
#include "core/atomic.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/err.h"
#include "lane/store/git_command.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/num.h"
#include "core/path.h"
#include "lane/collect_run.h"
#include "lane/policy.h"
#include "core/proc.h"
#include "campaign/sequential_bound.h"

static const char usage_text[] =
    "usage: perf-ab --base dir | --base-ref ref [--setup cmd] [--head dir]\n"
    "               [--pairs min:max] [--band percent] [--alpha a] [--seed n]\n"
    "               [-o report.json] [--md] [--svg file] [--cpu] [-t seconds]\n"
    "               [-r runner] config ...\n";

static struct {
	const char *base, *head, *base_ref, *setup, *runner, *timeout;
	const char *out, *svg;
	int min, max;
	double band;		/* a fraction; < 0: each metric's percent floor */
	double alpha;
	unsigned long long seed;
	bool md, cpu;
} opt;

/* One config: its path, id and policy. */
struct conf {
	char *path, *id;
	struct metric_policy pol[METRIC_COUNT];
};

/* The job: what ran and what it measured. */
struct job {
	char *work;			/* scratch directory */
	char *worktree;			/* the base checkout made here, or NULL */
	char *base, *head;		/* absolute directories */
	char *collect;			/* the perf-collect program */
	struct conf *conf;
	int nconf;
	bool *head_first;		/* [pair * nconf + config] */
	double *val;			/* [((pair * nconf + c) * 2 + side) * METRIC_COUNT + m] */
	cJSON *runs;
	int pairs;			/* pairs run */
	struct ab_design d;
	struct ab_result *res;		/* [c * METRIC_COUNT + m] */
	int *decided_at;		/* 0: not yet */
	bool *measured;
};

static double *
value(struct job *j, int pair, int c, int side, int m)
{
	return &j->val[(((size_t)pair * (size_t)j->nconf + (size_t)c) * 2 + (size_t)side) *
	    METRIC_COUNT + (size_t)m];
}

/* "min:max" or "n" (then min = max = n). */
static bool
parse_pairs(const char *s)
{
	const char *colon = strchr(s, ':');
	char *a;
	long lo, hi;
	bool ok;

	if (colon == NULL) {
		if (!num_opt_long(s, 2, 1000, &hi))
			return false;
		opt.min = opt.max = (int)hi;
		return true;
	}
	a = estrndup(s, (size_t)(colon - s));
	ok = num_opt_long(a, 2, 1000, &lo) && num_opt_long(colon + 1, 2, 1000, &hi) &&
	    lo <= hi;
	free(a);
	if (ok) {
		opt.min = (int)lo;
		opt.max = (int)hi;
	}
	return ok;
}

/* One run: perf-collect for config c on one side. 0 or -1 (reported). */
static int
run_one(struct job *j, int pair, int c, int side, int position)
{
	char *dir = easprintf("%s/runs/%03d-%d-%s", j->work, pair + 1, c, side ? "head" : "base");
	char *log = easprintf("%s.log", dir), *what, *argv[12];
	int n = 0, rc = -1;
	cJSON *rec, *run, *metrics;

	argv[n++] = j->collect;
	if (opt.cpu)
		argv[n++] = (char *)"--cpu";
	if (opt.timeout != NULL) {
		argv[n++] = (char *)"-t";
		argv[n++] = (char *)opt.timeout;
	}
	if (opt.runner != NULL) {
		argv[n++] = (char *)"-r";
		argv[n++] = (char *)opt.runner;
	}
	argv[n++] = (char *)"-o";
	argv[n++] = dir;
	argv[n++] = j->conf[c].path;
	argv[n] = NULL;
	what = easprintf("%s: pair %d: %s", j->conf[c].id, pair + 1, side ? "head" : "base");
	if (collect_run_in(side ? j->head : j->base, argv, log, what) != 0)
		goto done;
	if ((rec = collect_read_record(dir)) == NULL) {
		warnx_("%s: perf-collect wrote no record (see %s)", what, log);
		goto done;
	}
	run = json_new_object();
	metrics = json_new_object();
	json_set(run, "pair", json_new_int(pair + 1));
	json_set(run, "position", json_new_int(position));
	json_set(run, "config", json_new_string(j->conf[c].id));
	json_set(run, "side", json_new_string(side ? "head" : "base"));
	for (int m = 0; m < METRIC_COUNT; m++) {
		const cJSON *v = json_get(rec, metric_table[m].raw_key);
		double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;

		*value(j, pair, c, side, m) = isfinite(x) && x > 0 ? x : NAN;
		json_set(metrics, metric_table[m].key, cJSON_IsNumber(v) && isfinite(x) ?
		    cJSON_Duplicate(v, true) : json_new_null());
	}
	json_set(run, "metrics", metrics);
	json_append(j->runs, run);
	cJSON_Delete(rec);
	rc = 0;
done:
	free(what);
	free(dir);
	free(log);
	return rc;
}

static double
band_of(const struct job *j, int c, int m)
{
	return opt.band >= 0 ? opt.band : j->conf[c].pol[m].threshold_percent;
}

/*
 * The look after n pairs: each metric not decided yet is analysed again;
 * true when every gated, measured metric is decided.
 */
static bool
look(struct job *j, int n)
{
	double *b = ecalloc((size_t)n, sizeof *b), *h = ecalloc((size_t)n, sizeof *h);
	bool all = true;

	for (int c = 0; c < j->nconf; c++)
		for (int m = 0; m < METRIC_COUNT; m++) {
			int k = c * METRIC_COUNT + m;

			j->measured[k] = true;
			for (int p = 0; p < n; p++) {
				b[p] = *value(j, p, c, 0, m);
				h[p] = *value(j, p, c, 1, m);
				if (isnan(b[p]) || isnan(h[p]))
					j->measured[k] = false;
			}
			if (!j->measured[k] || j->decided_at[k] > 0)
				continue;
			ab_analyze(b, h, n, metric_table[m].higher_is_better, band_of(j, c, m),
			    ab_confidence(&j->d, n), &j->res[k]);
			if (j->res[k].decided)
				j->decided_at[k] = n;
			else if (j->conf[c].pol[m].gated)
				all = false;
		}
	free(b);
	free(h);
	return all;
}

static cJSON *
num_or_null(double x)
{
	return isfinite(x) ? json_new_float(x) : json_new_null();
}

static cJSON *
str_or_null(const char *s)
{
	return s != NULL ? json_new_string(s) : json_new_null();
}

/* The report's "inputs": the configs, sides and how they ran. */
static cJSON *
inputs_json(const struct job *j)
{
	cJSON *o = json_new_object(), *a = json_new_array(), *x;

	for (int c = 0; c < j->nconf; c++) {
		x = json_new_object();
		json_set(x, "config", json_new_string(j->conf[c].path));
		json_set(x, "benchmark_id", json_new_string(j->conf[c].id));
		json_append(a, x);
	}
	json_set(o, "configs", a);
	json_set(o, "base", json_new_string(j->base));
	json_set(o, "head", json_new_string(j->head));
	json_set(o, "base_ref", str_or_null(opt.base_ref));
	json_set(o, "setup", str_or_null(opt.setup));
	json_set(o, "runner", str_or_null(opt.runner));
	json_set(o, "cpu", json_new_bool(opt.cpu));
	json_set(o, "timeout", str_or_null(opt.timeout));
	return o;
}

/* The report's "settings": the design and its bound. */
static cJSON *
settings_json(const struct job *j)
{
	cJSON *o = json_new_object(), *x = json_new_object(), *a = json_new_array();

	json_set(o, "pairs_min", json_new_int(opt.min));
	json_set(o, "pairs_max", json_new_int(opt.max));
	json_set(o, "alpha", json_new_float(opt.alpha));
	json_set(o, "band", opt.band >= 0 ? json_new_float(opt.band) : json_new_null());
	json_set(o, "seed", json_new_int((long long)opt.seed));
	json_set(x, "spending", json_new_string("lan_demets_power"));
	json_set(x, "rho", json_new_float(SEQBOUND_RHO));
	for (int n = opt.min; n <= opt.max; n++)
		json_append(a, json_new_float(j->d.level[n - opt.min]));
	json_set(x, "levels", a);
	json_set(o, "bound", x);
	return o;
}

/* The report's "order": which side ran first in each pair of each config. */
static cJSON *
order_json(const struct job *j)
{
	cJSON *a = json_new_array(), *x;

	for (int p = 0; p < j->pairs; p++)
		for (int c = 0; c < j->nconf; c++) {
			x = json_new_object();
			json_set(x, "pair", json_new_int(p + 1));
			json_set(x, "config", json_new_string(j->conf[c].id));
			json_set(x, "first", json_new_string(j->head_first[p * j->nconf + c] ?
			    "head" : "base"));
			json_append(a, x);
		}
	return a;
}

/* A result of the report: metric m of config c. */
static cJSON *
result_json(struct job *j, int c, int m)
{
	int k = c * METRIC_COUNT + m;
	const struct ab_result *e = &j->res[k];
	cJSON *x = json_new_object(), *pp;

	json_set(x, "benchmark_id", json_new_string(j->conf[c].id));
	json_set(x, "metric", json_new_string(metric_table[m].key));
	json_set(x, "gated", json_new_bool(j->conf[c].pol[m].gated));
	json_set(x, "higher_is_better", json_new_bool(metric_table[m].higher_is_better));
	json_set(x, "band", json_new_float(band_of(j, c, m)));
	if (!j->measured[k]) {
		json_set(x, "verdict", json_new_string("not_measured"));
		return x;
	}
	json_set(x, "pairs", json_new_int(e->g.n));
	pp = json_new_array();
	for (int p = 0; p < e->g.n; p++)
		json_append(pp, json_new_float(*value(j, p, c, 1, m) / *value(j, p, c, 0, m)));
	json_set(x, "ratios", pp);
	json_set(x, "ratio", num_or_null(e->ratio));
	json_set(x, "confidence", json_new_float(e->confidence));
	if (e->g.has_interval) {
		cJSON *iv = json_new_object();

		json_set(iv, "low", num_or_null(e->low));
		json_set(iv, "high", num_or_null(e->high));
		json_set(iv, "t_quantile", num_or_null(e->g.t));
		json_set(x, "interval", iv);
	} else
		json_set(x, "interval", json_new_null());
	json_set(x, "verdict", json_new_string(e->verdict));
	json_set(x, "verdict_reason", json_new_string(e->why));
	json_set(x, "decided_at", j->decided_at[k] > 0 ?
	    json_new_int(j->decided_at[k]) : json_new_null());
	json_set(x, "minimum_detectable_change", e->mde >= 0 && isfinite(e->mde) ?
	    json_new_float(e->mde) : json_new_null());
	return x;
}

static cJSON *
report(struct job *j, bool slower)
{
	cJSON *r = json_new_object(), *a;

	json_set(r, "schema", json_new_string("perfkite.ab-report/1"));
	json_set(r, "inputs", inputs_json(j));
	json_set(r, "settings", settings_json(j));
	json_set(r, "order", order_json(j));
	json_set(r, "pairs", json_new_int(j->pairs));
	json_set(r, "runs", cJSON_Duplicate(j->runs, true));
	a = json_new_array();
	for (int c = 0; c < j->nconf; c++)
		for (int m = 0; m < METRIC_COUNT; m++)
			json_append(a, result_json(j, c, m));
	json_set(r, "results", a);
	json_set(r, "status", json_new_string(slower ? "slower" : "pass"));
	return r;
}

/* The Markdown table of the annotation, or the same rows as text. */
static void
table(buf *b, const cJSON *rep, bool md)
{
	const cJSON *e;
	char n1[NUM_BUFSZ];

	if (md) {
		buf_addf(b, "### A/B: head against base, %s pairs interleaved on this agent\n\n",
		    num_fixed(n1, json_num(rep, "pairs"), 0));
		buf_adds(b, "| Benchmark | Metric | Head/Base | Interval | Band | Verdict | "
		    "Pairs | Detectable |\n|---|---|---|---|---|---|---|---|\n");
	}
	cJSON_ArrayForEach(e, json_get(rep, "results")) {
		const cJSON *iv = json_get(e, "interval");
		const char *v = json_str(e, "verdict");
		char ratio[64] = "-", range[96] = "-", band[32], pairs[16] = "-", mde[32] = "-";
		int m = policy_metric_index(json_str(e, "metric"));

		if (strcmp(v, "not_measured") == 0)
			continue;
		if (cJSON_IsNumber(json_get(e, "ratio")))
			snprintf(ratio, sizeof ratio, "%.3f", json_num(e, "ratio"));
		if (cJSON_IsObject(iv))
			snprintf(range, sizeof range, "%.3f-%.3f", json_num(iv, "low"),
			    json_num(iv, "high"));
		snprintf(band, sizeof band, "+-%.1f%%", 100 * json_num(e, "band"));
		snprintf(pairs, sizeof pairs, "%.0f", json_num(e, "pairs"));
		if (cJSON_IsNumber(json_get(e, "minimum_detectable_change")))
			snprintf(mde, sizeof mde, "%.1f%%",
			    100 * json_num(e, "minimum_detectable_change"));
		if (md)
			buf_addf(b, "| %s | %s%s | %s | %s | %s | %s%s | %s | %s |\n",
			    json_str(e, "benchmark_id"), metric_table[m].label,
			    cJSON_IsTrue(json_get(e, "gated")) ? "" : " (not gated)", ratio, range,
			    band, v, strcmp(v, "slower") == 0 &&
			    cJSON_IsTrue(json_get(e, "gated")) ? " :x:" : "", pairs, mde);
		else
			buf_addf(b, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", json_str(e, "benchmark_id"),
			    metric_table[m].key, ratio, range, band, v, pairs, mde);
	}
	if (md)
		buf_adds(b, "\nHead/Base: geometric mean of the paired ratios; interval: Student "
		    "t, widened for the repeated looks; Detectable: the change found with "
		    "probability 0.8 at these pairs.\n");
}

/* Removes what the job made: the base worktree, then the scratch directory. */
static void
cleanup(struct job *j)
{
	const char *rm[] = { "worktree", "remove", "--force", j->worktree, NULL };
	const char *prune[] = { "worktree", "prune", NULL };

	if (j->worktree != NULL) {
		git_run(j->head, rm, NULL, 0, NULL, NULL);
		git_run(j->head, prune, NULL, 0, NULL, NULL);
	}
	if (j->work != NULL)
		atomic_remove_tree(j->work);
	for (int c = 0; c < j->nconf; c++) {
		free(j->conf[c].path);
		free(j->conf[c].id);
	}
	free(j->conf);
	free(j->work);
	free(j->worktree);
	free(j->base);
	free(j->head);
	free(j->collect);
	free(j->head_first);
	free(j->val);
	free(j->res);
	free(j->decided_at);
	free(j->measured);
	cJSON_Delete(j->runs);
	ab_design_free(&j->d);
}

/* --base-ref: the base checkout as a worktree of the head's repository, set up. */
static int
make_base(struct job *j)
{
	const char *add[] = { "worktree", "add", "--detach", NULL, opt.base_ref, NULL };
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)opt.setup, NULL }, *log;
	buf err = BUF_INIT;
	int rc;

	j->worktree = easprintf("%s/base", j->work);
	add[3] = j->worktree;
	if (git_run(j->head, add, NULL, 0, NULL, &err) != 0) {
		char *why = git_last_error(&err);

		warnx_("--base-ref %s: %s", opt.base_ref, why);
		free(why);
		buf_free(&err);
		free(j->worktree);
		j->worktree = NULL;
		return -1;
	}
	buf_free(&err);
	j->base = estrdup(j->worktree);
	if (opt.setup == NULL)
		return 0;
	log = easprintf("%s/setup.log", j->work);
	rc = collect_run_in(j->base, argv, log, "--setup");
	free(log);
	return rc;
}

static char *
abs_dir(const char *name, const char *d)
{
	struct stat st;

	if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
		warnx_("%s %s: not a directory", name, d);
		return NULL;
	}
	return path_resolve(d);
}

/* Reads the configs' ids and policies, after perf-collect --check. */
static int
load_configs(struct job *j, char **paths, int n)
{
	char *log, bad[64];
	char **all = ecalloc((size_t)n + 3, sizeof *all);
	buf text = BUF_INIT;
	json_error e;
	int rc = 0;

	all[0] = j->collect;
	all[1] = (char *)"--check";
	j->conf = ecalloc((size_t)n, sizeof *j->conf);
	j->nconf = n;
	for (int i = 0; i < n; i++)
		all[i + 2] = j->conf[i].path = path_resolve(paths[i]);
	log = easprintf("%s/check.log", j->work);
	if (collect_run_in(".", all, log, "configs") != 0) {
		free(log);
		free(all);
		return -1;
	}
	free(log);
	free(all);
	for (int i = 0; i < n && rc == 0; i++) {
		cJSON *cfg;

		buf_reset(&text);
		if (buf_read_file(&text, j->conf[i].path) != 0 ||
		    (cfg = json_parse(text.s != NULL ? text.s : "", text.len, &e)) == NULL) {
			warnx_("%s: cannot read the config", paths[i]);
			rc = -1;
			break;
		}
		j->conf[i].id = estrdup(json_str(cfg, "benchmark_id"));
		if (policy_merge(json_get(cfg, "regression_thresholds"), j->conf[i].pol, bad,
		    sizeof bad) != 0) {
			warnx_("%s: regression_thresholds: %s is not finite", paths[i], bad);
			rc = -1;
		}
		cJSON_Delete(cfg);
	}
	buf_free(&text);
	return rc;
}

/* The job's scratch directory, configs, base and arrays; non-zero when it cannot start. */
static int
start_job(struct job *j, char **paths, int npaths)
{
	const char *tmp = getenv("TMPDIR");
	char *runs;

	j->work = easprintf("%s/perf-ab-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
	if (mkdtemp(j->work) == NULL) {
		warnx_("%s: cannot create: %s", j->work, strerror(errno));
		free(j->work);
		j->work = NULL;
		return -1;
	}
	j->runs = json_new_array();
	j->collect = collect_find();
	runs = easprintf("%s/runs", j->work);
	if (atomic_mkdirs(runs) != 0) {
		warnx_("%s: cannot create: %s", runs, strerror(errno));
		free(runs);
		return -1;
	}
	free(runs);
	if (load_configs(j, paths, npaths) != 0)
		return -1;
	if (opt.base_ref != NULL ? make_base(j) != 0 : false)
		return -1;
	j->head_first = ecalloc((size_t)opt.max * (size_t)j->nconf, sizeof *j->head_first);
	ab_order(opt.seed, opt.max, j->nconf, j->head_first);
	j->val = ecalloc((size_t)opt.max * (size_t)j->nconf * 2 * METRIC_COUNT, sizeof *j->val);
	j->res = ecalloc((size_t)j->nconf * METRIC_COUNT, sizeof *j->res);
	j->decided_at = ecalloc((size_t)j->nconf * METRIC_COUNT, sizeof *j->decided_at);
	j->measured = ecalloc((size_t)j->nconf * METRIC_COUNT, sizeof *j->measured);
	ab_design_init(&j->d, opt.alpha, opt.min, opt.max);
	return 0;
}

/* The pairs, interleaved, until every gated metric is decided; non-zero when a run failed. */
static int
run_pairs(struct job *j)
{
	int position = 0;

	for (int p = 0; p < opt.max; p++) {
		for (int c = 0; c < j->nconf; c++) {
			int first = j->head_first[p * j->nconf + c] ? 1 : 0;

			for (int s = 0; s < 2; s++)
				if (proc_stop_signal() != 0 ||
				    run_one(j, p, c, s == 0 ? first : 1 - first, ++position) != 0)
					return -1;
		}
		j->pairs = p + 1;
		if (j->pairs >= opt.min && look(j, j->pairs))
			break;
	}
	return 0;
}

/* Whether a gated, measured metric is slower. */
static bool
any_slower(const struct job *j)
{
	for (int k = 0; k < j->nconf * METRIC_COUNT; k++)
		if (j->measured[k] && j->conf[k / METRIC_COUNT].pol[k % METRIC_COUNT].gated &&
		    strcmp(j->res[k].verdict, "slower") == 0)
			return true;
	return false;
}

/* The report to -o, --svg and stdout; false when one could not be written. */
static bool
write_report(const cJSON *rep)
{
	buf out = BUF_INIT;
	bool ok = true;

	if (opt.out != NULL) {
		json_write(&out, rep, JSON_INDENT2, NULL);
		buf_addc(&out, '\n');
		if (atomic_save("report", opt.out, out.s, out.len) != 0)
			ok = false;
		buf_reset(&out);
	}
	if (opt.svg != NULL) {
		ab_svg(&out, rep);
		if (atomic_save("SVG", opt.svg, out.s, out.len) != 0)
			ok = false;
		buf_reset(&out);
	}
	if (opt.md)
		table(&out, rep, true);
	else {
		json_write(&out, rep, JSON_COMPACT, NULL);
		buf_addc(&out, '\n');
	}
	if ((out.len > 0 && fwrite(out.s, 1, out.len, stdout) != out.len) ||
	    fflush(stdout) != 0) {
		/* Said here, with the reason, not as EIO by jsonl_finish(). */
		warnx_("write error on standard output: %s", strerror(errno));
		clearerr(stdout);
		ok = false;
	}
	buf_free(&out);
	return ok;
}

/* The whole job; returns the exit status. */
static int
run_job(struct job *j, char **paths, int npaths)
{
	bool slower, ok;
	cJSON *rep;

	if (start_job(j, paths, npaths) != 0 || run_pairs(j) != 0)
		return EXIT_TROUBLE;
	slower = any_slower(j);
	rep = report(j, slower);
	ok = write_report(rep);
	cJSON_Delete(rep);
	return !ok ? EXIT_TROUBLE : slower ? EXIT_GATE : EXIT_PASS;
}

/* Reads the options into opt; exits on a usage error. */
static void
parse_options(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "base", required_argument, NULL, 'b' },
		{ "head", required_argument, NULL, 'H' },
		{ "base-ref", required_argument, NULL, 'R' },
		{ "setup", required_argument, NULL, 'S' },
		{ "pairs", required_argument, NULL, 'p' },
		{ "band", required_argument, NULL, 'B' },
		{ "alpha", required_argument, NULL, 'a' },
		{ "seed", required_argument, NULL, 's' },
		{ "md", no_argument, NULL, 'm' },
		{ "svg", required_argument, NULL, 'G' },
		{ "cpu", no_argument, NULL, 'U' },
		{ "timeout", required_argument, NULL, 't' },
		{ "runner", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	long long seed;
	int c;

	opt.min = 5;
	opt.max = 30;
	opt.band = -1;
	opt.alpha = 0.05;
	while ((c = getopt_long(argc, argv, "ho:r:t:", longopts, NULL)) != -1) {
		switch (c) {
		case 'b': opt.base = optarg; break;
		case 'H': opt.head = optarg; break;
		case 'R': opt.base_ref = optarg; break;
		case 'S': opt.setup = optarg; break;
		case 'o': opt.out = optarg; break;
		case 'm': opt.md = true; break;
		case 'G': opt.svg = optarg; break;
		case 'U': opt.cpu = true; break;
		case 'r': opt.runner = optarg; break;
		case 'p':
			if (!parse_pairs(optarg)) {
				warnx_("--pairs: not min:max with 2 <= min <= max <= 1000: '%s'", optarg);
				cli_usage(usage_text, EXIT_TROUBLE);
			}
			break;
		case 'B':
			opt.band = cli_double(usage_text, "--band", optarg, 0, 100,
			    "a percentage from 0 to 100") / 100;
			break;
		case 'a':
			opt.alpha = cli_double(usage_text, "--alpha", optarg, 1e-6, 0.5,
			    "a level from 0.000001 to 0.5");
			break;
		case 's':
			if (num_py_int(optarg, &seed) != 1 || seed < 0 || strchr(optarg, '_')) {
				warnx_("--seed: not a non-negative integer: '%s'", optarg);
				cli_usage(usage_text, EXIT_TROUBLE);
			}
			opt.seed = (unsigned long long)seed;
			break;
		case 't':
			/* Checked here, passed on as written. */
			cli_double(usage_text, "--timeout", optarg, 0.001, 1e9, "a number of seconds");
			opt.timeout = optarg;
			break;
		case 'h': cli_usage(usage_text, EXIT_PASS);
		case 'V': cli_version();
		default: cli_usage(usage_text, EXIT_TROUBLE);
		}
	}
}

/* The options that go together, and the configs; exits on a usage error. */
static void
check_options(int argc)
{
	if ((opt.base == NULL) == (opt.base_ref == NULL)) {
		warnx_("give one of --base and --base-ref");
		cli_usage(usage_text, EXIT_TROUBLE);
	}
	if (opt.setup != NULL && opt.base_ref == NULL) {
		warnx_("--setup needs --base-ref");
		cli_usage(usage_text, EXIT_TROUBLE);
	}
	if (optind == argc) {
		warnx_("no benchmark config given");
		cli_usage(usage_text, EXIT_TROUBLE);
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
	check_options(argc);
	if ((j.head = abs_dir("--head", opt.head != NULL ? opt.head : ".")) == NULL ||
	    (opt.base != NULL && (j.base = abs_dir("--base", opt.base)) == NULL)) {
		free(j.head);
		return EXIT_TROUBLE;
	}
	proc_handle_signals();
	rc = run_job(&j, argv + optind, argc - optind);
	cleanup(&j);
	if (proc_stop_signal() != 0) {
		warnx_("stopped by signal %d", proc_stop_signal());
		rc = EXIT_TROUBLE;
	}
	if (jsonl_finish(stdout, "standard output") != 0)
		rc = EXIT_TROUBLE;
	return rc;
}
