/*
 * perf-ab: a paired base-versus-head A/B on one machine (perf-ab(1)):
 * each run is perf-collect run from the side's directory with the side's
 * own copy of the config, base and head interleaved in balanced seeded
 * blocks, the paired ratios of every metric analysed after each pair with
 * perf-analyze's statistics under an alpha-spending bound, stopping when
 * every gated metric is decided.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "campaign/ab.h"
#include "campaign/ab_figure.h"
#include "core/atomic.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/git.h"
#include "core/json.h"
#include "core/num.h"
#include "core/opt.h"
#include "core/path.h"
#include "core/proc.h"
#include "core/seqbound.h"
#include "core/strvec.h"
#include "core/xml.h"
#include "lane/collect_run.h"
#include "lane/identity.h"
#include "lane/logtail.h"
#include "lane/named_metric.h"
#include "lane/policy.h"

static const struct opt_def options[] = {
	{ 0, "base", 'b', "dir", "the base side's checkout or install prefix", NULL, NULL },
	{ 0, "base-ref", 'R', "ref", "make the base side as a worktree of ref", NULL, NULL },
	{ 0, "setup", 'S', "cmd",
	    "run this shell command in the base's new worktree first", NULL, NULL },
	{ 0, "head", 'H', "dir", "the head side (default: the current directory)", NULL, NULL },
	{ 0, "pairs", 'p', "min:max",
	    "the first look and the most pairs (default 5:30)", NULL, NULL },
	{ 0, "band", 'B', "percent", "the equivalence band, for every metric", NULL, NULL },
	{ 0, "alpha", 'a', "a",
	    "the overall two-sided false-positive rate (default 0.05)", NULL, NULL },
	{ 0, "seed", 's', "n", "the order's seed (default 0)", NULL, NULL },
	{ 'o', NULL, 0, "report.json",
	    "also write the report to this file (indented)", NULL, NULL },
	{ 0, "md", 'm', NULL, "print the Markdown table instead of the report", NULL, NULL },
	{ 0, "svg", 'G', "file", "write a figure: each pair's ratio in run order", NULL, NULL },
	{ 0, "cpu", 'U', NULL, "passed to perf-collect(1): run without a GPU", NULL, NULL },
	{ 't', "timeout", 0, "seconds",
	    "passed to perf-collect: the time limit of one runner", NULL, NULL },
	{ 'r', "runner", 0, "runner", "passed to perf-collect", NULL, NULL },
	OPT_HELP("print the usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-ab --base dir | --base-ref ref [--setup cmd] [--head dir]\n"
	    "               [--pairs min:max] [--band percent] [--alpha a] [--seed n]\n"
	    "               [-o report.json] [--md] [--svg file] [--cpu] [-t seconds]\n"
	    "               [-r runner] config ...\n",
	.width = 23,
	.flags = 0,
	.opts = options,
	/* getopt's order before the table, for an ambiguous abbreviation's message */
	.long_order =
	    "base head base-ref setup pairs band alpha seed md svg cpu timeout "
	    "runner help version",
};

static struct {
	const char *base, *head, *base_ref, *setup;
	const char *out, *svg;
	int min, max;
	double band;		/* a fraction; < 0: each metric's percent floor */
	double alpha;
	bool md;
	struct collect_options run;	/* --cpu, -t, -r, --seed */
} opt;

/* What names a benchmark in a record: benchmark_id, then the comparison identity. */
#define IDENT_KEYS (1 + IDENTITY_KEYS)

/* One config: its path, id and policy (the head's), and the base's copy. */
struct conf {
	char *path, *id;
	char *base_path;		/* the config the base runs */
	char *ident[2][IDENT_KEYS];	/* [side]: the first pair's records' identity */
	cJSON *differs;			/* [{key, base, head}] where those differ */
	struct metric_policy pol[METRIC_COUNT];
	cJSON *named_policy;		/* its regression_thresholds.metrics, or NULL */
};

/*
 * A named metric (issue 24) of some config: metric slot METRIC_COUNT + i
 * of the job, i its index in job.named.
 */
struct named {
	char *name;
	struct nm_policy *pol;		/* [config]: as the first run with it resolved it */
	char **unit;			/* [config]: its unit there */
	bool *seen;			/* [config]: a run of it carried the metric */
};

/* The job: what ran and what it measured. */
struct job {
	char *work;			/* scratch directory */
	char *worktree;			/* the base checkout made here, or NULL */
	char *base, *head;		/* absolute directories */
	char *sha[2];			/* their commits, or NULL */
	char *collect;			/* the perf-collect program */
	struct conf *conf;
	int nconf;
	bool *head_first;		/* [pair * nconf + config] */
	/*
	 * By metric slot m: the six (m < METRIC_COUNT), then the named
	 * metrics of named[]; a slot's values are val[m][(pair * nconf + c)
	 * * 2 + side], NaN where not measured; the results of config c are
	 * at slot(j, c, m).
	 */
	double **val;
	struct named *named;
	int nnamed;
	cJSON *runs;
	int pairs;			/* pairs run */
	struct ab_design d;
	struct ab_result *res;		/* [slot()] */
	struct ab_result *final;	/* the same, at the last look */
	int *decided_at;		/* 0: not yet */
	bool *measured;
};

/* The metric slots of the job: the six and its named metrics. */
static int
nslots(const struct job *j)
{
	return METRIC_COUNT + j->nnamed;
}

/* Where the results of metric slot m of config c are. */
static size_t
slot(const struct job *j, int c, int m)
{
	return (size_t)m * (size_t)j->nconf + (size_t)c;
}

static double *
value(struct job *j, int pair, int c, int side, int m)
{
	return &j->val[m][((size_t)pair * (size_t)j->nconf + (size_t)c) * 2 + (size_t)side];
}

/* Makes metric slot m's arrays (values NaN, results zero). */
static void
add_slot(struct job *j, int m)
{
	size_t nv = (size_t)opt.max * (size_t)j->nconf * 2, nr = (size_t)(m + 1) * (size_t)j->nconf;

	j->val = erealloc(j->val, (size_t)(m + 1) * sizeof *j->val);
	j->val[m] = emalloc(nv * sizeof **j->val);
	for (size_t i = 0; i < nv; i++)
		j->val[m][i] = NAN;
	j->res = erealloc(j->res, nr * sizeof *j->res);
	j->final = erealloc(j->final, nr * sizeof *j->final);
	j->decided_at = erealloc(j->decided_at, nr * sizeof *j->decided_at);
	j->measured = erealloc(j->measured, nr * sizeof *j->measured);
	for (int c = 0; c < j->nconf; c++) {
		memset(&j->res[slot(j, c, m)], 0, sizeof *j->res);
		memset(&j->final[slot(j, c, m)], 0, sizeof *j->final);
		j->decided_at[slot(j, c, m)] = 0;
		j->measured[slot(j, c, m)] = false;
	}
}

/*
 * The slot of named metric m of a record of config c, made when new, its
 * policy for c resolved when c first has it (the record's direction, the
 * config's globs, the unit rule).
 */
static int
named_slot(struct job *j, int c, const struct named_metric *m)
{
	struct named *x;
	int i;

	for (i = 0; i < j->nnamed && strcmp(j->named[i].name, m->name) != 0; i++)
		;
	if (i == j->nnamed) {
		j->named = erealloc(j->named, (size_t)(i + 1) * sizeof *j->named);
		x = &j->named[i];
		x->name = estrdup(m->name);
		x->pol = ecalloc((size_t)j->nconf, sizeof *x->pol);
		x->unit = ecalloc((size_t)j->nconf, sizeof *x->unit);
		x->seen = ecalloc((size_t)j->nconf, sizeof *x->seen);
		j->nnamed++;
		add_slot(j, METRIC_COUNT + i);
	}
	x = &j->named[i];
	if (!x->seen[c]) {
		x->seen[c] = true;
		x->unit[c] = estrdup(m->unit);
		nm_policy_resolve(j->conf[c].named_policy, j->conf[c].id, m, &x->pol[c]);
	}
	return METRIC_COUNT + i;
}

/* The named metric of slot m >= METRIC_COUNT. */
static struct named *
named_of(const struct job *j, int m)
{
	return &j->named[m - METRIC_COUNT];
}

/* Whether metric slot m of config c is gated. */
static bool
gated(const struct job *j, int c, int m)
{
	return m < METRIC_COUNT ? j->conf[c].pol[m].gated : named_of(j, m)->pol[c].gated;
}

/* The direction of metric slot m of config c. */
static enum better
better_of(const struct job *j, int c, int m)
{
	if (m < METRIC_COUNT)
		return metric_table[m].higher_is_better ? BETTER_HIGHER : BETTER_LOWER;
	return named_of(j, m)->pol[c].better;
}

/* --pairs s: "min:max" or "n" (then min = max = n); exits on a usage error. */
static void
parse_pairs(const char *s)
{
	long lo, hi;

	if (strchr(s, ':') == NULL && num_opt_long(s, 2, 1000, &hi))
		lo = hi;
	else
		cli_span(opt_text(&option_table), "--pairs", s, 2, 1000, &lo, &hi);
	opt.min = (int)lo;
	opt.max = (int)hi;
}

/*
 * Keeps a log of the scratch directory, which is removed at exit, next to
 * the -o report as <report>.<name>.log (".json" dropped). The kept path,
 * or NULL without -o or when it could not be written (said).
 */
static char *
keep_log(const char *log, const char *name)
{
	buf text = BUF_INIT;
	size_t n;
	char *kept;

	if (opt.out == NULL)
		return NULL;
	n = strlen(opt.out);
	if (n > 5 && strcmp(opt.out + n - 5, ".json") == 0)
		n -= 5;
	kept = easprintf("%.*s.%s.log", (int)n, opt.out, name);
	if (buf_read_file(&text, log) != 0 ||
	    atomic_save("log", kept, text.s, text.len) != 0) {
		free(kept);
		kept = NULL;
	}
	buf_free(&text);
	return kept;
}

/*
 * The tail of the log of a step that failed, on stderr, naming where the
 * log is kept (keep_log() with name) rather than its scratch path.
 */
static void
show_log(const char *what, const char *log, const char *name)
{
	char *kept = keep_log(log, name);
	buf tail = BUF_INIT;

	logtail_block_as(&tail, what, log, kept != NULL ? kept :
	    "not kept: it goes with the scratch directory; -o keeps it");
	fprintf(stderr, "%s\n", tail.s);
	buf_free(&tail);
	free(kept);
}

/* show_log() as collect_run_shown() calls it, ctx the name the log is kept by. */
static void
show_kept(void *ctx, const char *what, const char *log)
{
	show_log(what, log, ctx);
}

/*
 * Runs argv in dir with its output in log. 0, or -1 after saying why,
 * with the log's tail (show_log() with name).
 */
static int
run_in(const char *dir, char **argv, const char *log, const char *what, const char *name)
{
	return collect_run_shown(dir, argv, log, what, show_kept, (void *)name);
}

/* The identity of the benchmark a side ran, from its record. */
static void
note_identity(struct conf *cf, int side, const cJSON *rec)
{
	const cJSON *b = json_get(rec, "benchmark_id");
	struct identity id;

	identity_of(rec, &id);
	cf->ident[side][0] = b != NULL ? json_pystr_dup(b) : estrdup("None");
	for (int i = 0; i < IDENTITY_KEYS; i++) {
		cf->ident[side][i + 1] = id.value[i];
		id.value[i] = NULL;
	}
	identity_free(&id);
}

/* After the first pair: where the sides' benchmarks differ, said and kept. */
static void
compare_identities(struct conf *cf)
{
	buf msg = BUF_INIT;

	cf->differs = json_new_array();
	for (int i = 0; i < IDENT_KEYS; i++) {
		const char *key = i == 0 ? "benchmark_id" : identity_keys[i - 1];
		cJSON *x;

		if (strcmp(cf->ident[0][i], cf->ident[1][i]) == 0)
			continue;
		x = json_new_object();
		json_set(x, "key", json_new_string(key));
		json_set(x, "base", json_new_string(cf->ident[0][i]));
		json_set(x, "head", json_new_string(cf->ident[1][i]));
		json_append(cf->differs, x);
		buf_addf(&msg, "%s%s (base %s, head %s)", msg.len ? ", " : "", key,
		    cf->ident[0][i], cf->ident[1][i]);
	}
	if (msg.len > 0)
		warnx("%s: the sides ran different benchmarks: %s", cf->id, msg.s);
	buf_free(&msg);
}

/*
 * The named metrics of the record of one run into their slots (a value
 * that is not above 0 is not measured: no ratio); *out gets {NAME: value
 * or null} for the report's run, NULL when it has none. 0, or -1 with
 * the reason in err when its metrics are invalid.
 */
static int
run_named(struct job *j, int pair, int c, int side, const cJSON *rec, const char *prefix,
    cJSON **out, char *err, size_t errn)
{
	struct named_metric *ms;
	size_t n;

	if ((ms = nm_parse(json_get(rec, "metrics"), &n, err, errn)) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct named_metric x = ms[i];
		char *name = prefix != NULL ? easprintf("%s/%s", prefix, x.name) : NULL;
		int m;

		if (name != NULL)
			x.name = name;
		m = named_slot(j, c, &x);
		*value(j, pair, c, side, m) = x.has_value && x.value > 0 ? x.value : NAN;
		if (*out == NULL)
			*out = json_new_object();
		json_set(*out, x.name, x.has_value ? json_new_finite(x.value) : json_new_null());
		free(name);
	}
	free(ms);
	return 0;
}

/* qsort: records by benchmark_id. */
static int
cmp_benchmark_id(const void *a, const void *b)
{
	return strcmp(json_str(*(cJSON *const *)a, "benchmark_id"),
	    json_str(*(cJSON *const *)b, "benchmark_id"));
}

/* One run: perf-collect for config c on one side. 0 or -1 (reported). */
static int
run_one(struct job *j, int pair, int c, int side, int position)
{
	char *name = easprintf("%03d-%d-%s", pair + 1, c, side ? "head" : "base");
	char *dir = easprintf("%s/runs/%s", j->work, name), *keep = easprintf("run-%s", name);
	char *log = easprintf("%s.log", dir), *what, err[256];
	struct strvec argv = STRVEC_INIT;
	int rc = -1;
	cJSON *rec, *recs, *run, *metrics, *named, **sorted;
	size_t nrecs;

	strvec_push(&argv, j->collect);
	collect_pass_options(&argv, &opt.run);
	strvec_push(&argv, "-o");
	strvec_push(&argv, dir);
	strvec_push(&argv, side ? j->conf[c].path : j->conf[c].base_path);
	what = easprintf("%s: pair %d: %s", j->conf[c].id, pair + 1, side ? "head" : "base");
	if (run_in(side ? j->head : j->base, argv.v, log, what, keep) != 0)
		goto done;
	if ((rec = collect_read_record(dir)) == NULL) {
		warnx("%s: perf-collect wrote no record", what);
		show_log(what, log, keep);
		goto done;
	}
	recs = collect_read_records(dir);
	if (pair == 0)
		note_identity(&j->conf[c], side, rec);
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
	/*
	 * An imported suite (perf-collect's run_config.output) writes a record
	 * per benchmark: each one's named metrics by their key
	 * <benchmark>/<name> (perfkite(7) "Named metrics"), so that each
	 * benchmark gets its own verdict.
	 */
	nrecs = cJSON_GetArraySize(recs) > 1 ? (size_t)cJSON_GetArraySize(recs) : 0;
	sorted = ecalloc(nrecs + 1, sizeof *sorted);
	sorted[0] = rec;
	for (size_t i = 0; i < nrecs; i++)
		sorted[i] = cJSON_GetArrayItem(recs, (int)i);
	/* in the order of their ids, whatever order the directory lists them in */
	if (nrecs > 1)
		qsort(sorted, nrecs, sizeof *sorted, cmp_benchmark_id);
	named = NULL;
	for (size_t i = 0; i < (nrecs > 0 ? nrecs : 1); i++)
		if (run_named(j, pair, c, side, sorted[i], nrecs > 0 ?
		    json_str(sorted[i], "benchmark_id") : NULL, &named, err, sizeof err) != 0) {
			warnx("%s: the record's %s", what, err);
			cJSON_Delete(run);
			cJSON_Delete(named);
			cJSON_Delete(rec);
			cJSON_Delete(recs);
			free(sorted);
			goto done;
		}
	free(sorted);
	if (named != NULL)
		json_set(run, "named_metrics", named);
	json_append(j->runs, run);
	cJSON_Delete(rec);
	cJSON_Delete(recs);
	rc = 0;
done:
	strvec_clear(&argv);
	free(what);
	free(name);
	free(keep);
	free(dir);
	free(log);
	return rc;
}

static double
band_of(const struct job *j, int c, int m)
{
	if (opt.band >= 0)
		return opt.band;
	return m < METRIC_COUNT ? j->conf[c].pol[m].threshold_percent :
	    named_of(j, m)->pol[c].threshold_percent;
}

/* Metric m of config c over the first n pairs, at the look after n; false when not measured. */
static bool
analyze(struct job *j, int c, int m, int n, struct ab_result *r)
{
	double *b = ecalloc((size_t)n, sizeof *b), *h = ecalloc((size_t)n, sizeof *h);
	bool measured = true;

	for (int p = 0; p < n; p++) {
		b[p] = *value(j, p, c, 0, m);
		h[p] = *value(j, p, c, 1, m);
		if (isnan(b[p]) || isnan(h[p]))
			measured = false;
	}
	/* Of unknown direction: analysed as lower is better, told as higher or lower. */
	if (measured)
		ab_analyze(b, h, n, better_of(j, c, m) == BETTER_HIGHER, band_of(j, c, m),
		    ab_confidence(&j->d, n), r);
	if (measured && better_of(j, c, m) == BETTER_UNKNOWN) {
		r->verdict = ab_undirected(r->verdict);
		r->band_verdict = ab_undirected(r->band_verdict);
	}
	free(b);
	free(h);
	return measured;
}

/*
 * The look after n pairs: each metric not decided yet is analysed again,
 * every one into final; true when every gated, measured metric is decided.
 */
static bool
look(struct job *j, int n)
{
	bool all = true;

	for (int c = 0; c < j->nconf; c++)
		for (int m = 0; m < nslots(j); m++) {
			size_t k = slot(j, c, m);

			j->measured[k] = analyze(j, c, m, n, &j->final[k]);
			if (!j->measured[k] || j->decided_at[k] > 0)
				continue;
			j->res[k] = j->final[k];
			if (j->res[k].decided)
				j->decided_at[k] = n;
			else if (gated(j, c, m))
				all = false;
		}
	return all;
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
		json_set(x, "base_config", json_new_string(j->conf[c].base_path));
		json_set(x, "identity_differences", j->conf[c].differs != NULL ?
		    cJSON_Duplicate(j->conf[c].differs, true) : json_new_array());
		json_append(a, x);
	}
	json_set(o, "configs", a);
	json_set(o, "base", json_new_string(j->base));
	json_set(o, "head", json_new_string(j->head));
	json_set(o, "base_ref", str_or_null(opt.base_ref));
	json_set(o, "base_sha", str_or_null(j->sha[0]));
	json_set(o, "head_sha", str_or_null(j->sha[1]));
	json_set(o, "setup", str_or_null(opt.setup));
	json_set(o, "runner", str_or_null(opt.run.runner));
	json_set(o, "cpu", json_new_bool(opt.run.cpu));
	json_set(o, "timeout", str_or_null(opt.run.timeout));
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
	json_set(o, "seed", json_new_int((long long)opt.run.seed));
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

static cJSON *
interval_json(const struct ab_result *e)
{
	cJSON *iv;

	if (!e->g.has_interval)
		return json_new_null();
	iv = json_new_object();
	json_set(iv, "low", json_new_finite(e->low));
	json_set(iv, "high", json_new_finite(e->high));
	json_set(iv, "t_quantile", json_new_finite(e->g.t));
	return iv;
}

/* The result of the last look, whatever look decided the metric. */
static cJSON *
final_json(const struct ab_result *e)
{
	cJSON *x = json_new_object();

	json_set(x, "pairs", json_new_int(e->g.n));
	json_set(x, "ratio", json_new_finite(e->ratio));
	json_set(x, "confidence", json_new_float(e->confidence));
	json_set(x, "interval", interval_json(e));
	json_set(x, "verdict", json_new_string(e->verdict));
	json_set(x, "verdict_reason", json_new_string(e->why));
	return x;
}

/* A result of the report: metric m of config c. */
static cJSON *
result_json(struct job *j, int c, int m)
{
	size_t k = slot(j, c, m);
	const struct ab_result *e = &j->res[k];
	cJSON *x = json_new_object(), *pp;
	enum better bt = better_of(j, c, m);

	json_set(x, "benchmark_id", json_new_string(j->conf[c].id));
	if (m < METRIC_COUNT)
		json_set(x, "metric", json_new_string(metric_table[m].key));
	else {
		json_set(x, "metric", json_new_string(named_of(j, m)->name));
		json_set(x, "unit", json_new_string(named_of(j, m)->unit[c]));
	}
	json_set(x, "gated", json_new_bool(gated(j, c, m)));
	json_set(x, "higher_is_better", bt == BETTER_UNKNOWN ? json_new_null() :
	    json_new_bool(bt == BETTER_HIGHER));
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
	json_set(x, "ratio", json_new_finite(e->ratio));
	json_set(x, "confidence", json_new_float(e->confidence));
	json_set(x, "interval", interval_json(e));
	json_set(x, "verdict", json_new_string(e->verdict));
	json_set(x, "verdict_reason", json_new_string(e->why));
	json_set(x, "band_verdict", json_new_string(e->band_verdict));
	json_set(x, "decided_at", j->decided_at[k] > 0 ?
	    json_new_int(j->decided_at[k]) : json_new_null());
	json_set(x, "minimum_detectable_change", e->mde >= 0 && isfinite(e->mde) ?
	    json_new_float(e->mde) : json_new_null());
	json_set(x, "final", final_json(&j->final[k]));
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
	/* Each config's six, then the named metrics its runs carried. */
	for (int c = 0; c < j->nconf; c++)
		for (int m = 0; m < nslots(j); m++)
			if (m < METRIC_COUNT || named_of(j, m)->seen[c])
				json_append(a, result_json(j, c, m));
	json_set(r, "results", a);
	json_set(r, "status", json_new_string(slower ? "slower" : "pass"));
	return r;
}

/* "1.023 (1.001-1.046)": a ratio and its interval, "-" where absent. */
static void
ratio_text(buf *b, const cJSON *e)
{
	const cJSON *iv = json_get(e, "interval");

	if (cJSON_IsNumber(json_get(e, "ratio")))
		buf_addf(b, "%.3f", json_num(e, "ratio"));
	else
		buf_adds(b, "-");
	if (cJSON_IsObject(iv))
		buf_addf(b, " (%.3f-%.3f)", json_num(iv, "low"), json_num(iv, "high"));
}

/* "Base origin/main at 1a2b3c4d5e6f": a side and its commit. */
static void
side_text(buf *b, const char *what, const cJSON *in)
{
	const cJSON *sha = json_get(in, strcmp(what, "base") == 0 ? "base_sha" : "head_sha");
	const cJSON *ref = json_get(in, "base_ref");

	if (strcmp(what, "base") == 0) {
		buf_adds(b, "Base ");
		xml_md_text(b, cJSON_IsString(ref) ? ref->valuestring : json_str(in, "base"));
	} else
		buf_adds(b, "head");
	if (cJSON_IsString(sha))
		buf_addf(b, " at %.12s", sha->valuestring);
	else
		buf_adds(b, " (not a git checkout)");
}

/* The Markdown table of the annotation. */
static void
table(buf *b, const cJSON *rep)
{
	const cJSON *e, *in = json_get(rep, "inputs");
	char n1[NUM_BUFSZ];
	int differ = 0;

	buf_addf(b, "### A/B: head against base, %s pairs interleaved on this agent\n\n",
	    num_fixed(n1, json_num(rep, "pairs"), 0));
	side_text(b, "base", in);
	buf_adds(b, " against ");
	side_text(b, "head", in);
	buf_adds(b, ".\n\n| Benchmark | Metric | Head/Base | Interval | Confidence | Band | "
	    "Verdict | Pairs | Detectable | Final look |\n"
	    "|---|---|---|---|---|---|---|---|---|---|\n");
	cJSON_ArrayForEach(e, json_get(rep, "results")) {
		const cJSON *iv = json_get(e, "interval"), *fin = json_get(e, "final");
		const char *v = json_str(e, "verdict");
		int m = policy_metric_index(json_str(e, "metric"));
		bool is_gated = cJSON_IsTrue(json_get(e, "gated"));

		if (strcmp(v, "not_measured") == 0)
			continue;
		buf_adds(b, "| ");
		xml_md_text(b, json_str(e, "benchmark_id"));
		/* A named metric (with its unit) by its name. */
		if (m >= 0 && json_get(e, "unit") == NULL)
			buf_addf(b, " | %s", metric_table[m].label);
		else {
			buf_adds(b, " | ");
			xml_md_text(b, json_str(e, "metric"));
		}
		buf_addf(b, "%s | ", is_gated ? "" : " (not gated)");
		if (cJSON_IsNumber(json_get(e, "ratio")))
			buf_addf(b, "%.3f", json_num(e, "ratio"));
		else
			buf_adds(b, "-");
		if (cJSON_IsObject(iv))
			buf_addf(b, " | %.3f-%.3f", json_num(iv, "low"), json_num(iv, "high"));
		else
			buf_adds(b, " | -");
		buf_addf(b, " | %.2f%% | +-%.1f%% | %s%s | %.0f | ", 100 * json_num(e, "confidence"),
		    100 * json_num(e, "band"), ab_verdict_label(v),
		    strcmp(v, "slower") == 0 && is_gated ? " :x:" : "", json_num(e, "pairs"));
		if (cJSON_IsNumber(json_get(e, "minimum_detectable_change")))
			buf_addf(b, "%.1f%%", 100 * json_num(e, "minimum_detectable_change"));
		else
			buf_adds(b, "-");
		buf_adds(b, " | ");
		ratio_text(b, fin);
		buf_addf(b, " %s at %.0f |\n", ab_verdict_label(json_str(fin, "verdict")),
		    json_num(fin, "pairs"));
	}
	buf_adds(b, "\nHead/Base: geometric mean of the paired ratios; interval: Student "
	    "t at the confidence shown (that of the look that decided the metric, "
	    "widened for the repeated looks); Band: the gate, which fails only beyond it "
	    "(\"slower, within band\": surely slower, by less than the band); "
	    "Detectable: the change found with probability 0.8 at these pairs; "
	    "Final look: the result after the last pair.\n");
	cJSON_ArrayForEach(e, json_get(in, "configs")) {
		const cJSON *d;

		cJSON_ArrayForEach(d, json_get(e, "identity_differences")) {
			buf_adds(b, differ++ == 0 ? "\nThe sides ran different benchmarks: " : "; ");
			xml_md_text(b, json_str(e, "benchmark_id"));
			buf_adds(b, " ");
			xml_md_text(b, json_str(d, "key"));
			buf_adds(b, " base ");
			xml_md_text(b, json_str(d, "base"));
			buf_adds(b, ", head ");
			xml_md_text(b, json_str(d, "head"));
		}
	}
	if (differ > 0)
		buf_adds(b, ".\n");
}

/* Removes what the job made: the base worktree, then the scratch directory. */
static void
cleanup(struct job *j)
{
	if (j->worktree != NULL) {
		collect_worktree_remove(j->head, j->worktree);
		collect_worktree_prune(j->head);
	}
	if (j->work != NULL)
		atomic_remove_tree(j->work);
	for (int c = 0; c < j->nconf; c++) {
		free(j->conf[c].path);
		free(j->conf[c].id);
		free(j->conf[c].base_path);
		for (int i = 0; i < IDENT_KEYS; i++) {
			free(j->conf[c].ident[0][i]);
			free(j->conf[c].ident[1][i]);
		}
		cJSON_Delete(j->conf[c].differs);
		cJSON_Delete(j->conf[c].named_policy);
	}
	for (int i = 0; i < j->nnamed; i++) {
		for (int c = 0; c < j->nconf; c++)
			free(j->named[i].unit[c]);
		free(j->named[i].name);
		free(j->named[i].pol);
		free(j->named[i].unit);
		free(j->named[i].seen);
	}
	for (int m = 0; j->val != NULL && m < nslots(j); m++)
		free(j->val[m]);
	free(j->named);
	free(j->conf);
	free(j->work);
	free(j->worktree);
	free(j->base);
	free(j->head);
	free(j->sha[0]);
	free(j->sha[1]);
	free(j->collect);
	free(j->head_first);
	free(j->val);
	free(j->res);
	free(j->final);
	free(j->decided_at);
	free(j->measured);
	cJSON_Delete(j->runs);
	ab_design_free(&j->d);
}

/* --base-ref: the base checkout as a worktree of the head's repository. */
static int
make_base(struct job *j)
{
	char *what = easprintf("--base-ref %s", opt.base_ref);
	int rc;

	j->worktree = easprintf("%s/base", j->work);
	rc = collect_worktree_add(j->head, j->worktree, opt.base_ref, what);
	free(what);
	if (rc != 0) {
		free(j->worktree);
		j->worktree = NULL;
		return -1;
	}
	j->base = estrdup(j->worktree);
	return 0;
}

/* --setup: the build of the base, run in its worktree. */
static int
setup_base(struct job *j)
{
	char *log = easprintf("%s/setup.log", j->work);
	int rc = collect_run_setup(j->base, opt.setup, log, "--setup", show_kept, (void *)"setup");

	free(log);
	return rc;
}

/*
 * A config in the head's tree, as the base's tree has it: the file at the
 * same place there when it exists, so that the config and a runner
 * relative to it are the base's own; when it does not, the head's copy
 * put there in a base worktree of perf-ab's own (said), else the head's
 * config itself (said). A config outside the head's tree serves both.
 */
static int
base_config(struct job *j, struct conf *cf)
{
	const char *rel = cf->path + strlen(j->head) + 1;
	char *there, *slash;
	buf text = BUF_INIT;

	if (strcmp(j->head, j->base) == 0 || !path_within(cf->path, j->head) ||
	    strcmp(cf->path, j->head) == 0) {
		cf->base_path = estrdup(cf->path);
		return 0;
	}
	there = easprintf("%s/%s", j->base, rel);
	if (access(there, F_OK) == 0) {
		cf->base_path = there;
		return 0;
	}
	if (j->worktree == NULL) {
		warnx("%s: not in the base %s: both sides run the head's config", rel, j->base);
		free(there);
		cf->base_path = estrdup(cf->path);
		return 0;
	}
	slash = strrchr(there, '/');
	*slash = '\0';
	if (atomic_mkdirs(there) != 0) {
		warn("%s: cannot create", there);
		free(there);
		return -1;
	}
	*slash = '/';
	if (buf_read_file(&text, cf->path) != 0 ||
	    atomic_save("config", there, text.s, text.len) != 0) {
		buf_free(&text);
		free(there);
		return -1;
	}
	buf_free(&text);
	warnx("%s: not in %s: the base runs the head's copy in its own tree", rel,
	    opt.base_ref);
	cf->base_path = there;
	return 0;
}

/* Every config's base copy (base_config()), checked by perf-collect --check. */
static int
base_configs(struct job *j)
{
	char **all = ecalloc((size_t)j->nconf, sizeof *all), *log;
	int n = 0, rc = 0;

	for (int c = 0; c < j->nconf && rc == 0; c++) {
		rc = base_config(j, &j->conf[c]);
		if (rc == 0 && strcmp(j->conf[c].base_path, j->conf[c].path) != 0)
			all[n++] = j->conf[c].base_path;
	}
	if (rc == 0 && n > 0) {
		log = easprintf("%s/base-check.log", j->work);
		rc = collect_check(j->collect, all, n, log, "the base's configs", show_kept,
		    (void *)"base-check");
		free(log);
	}
	free(all);
	return rc;
}

static char *
abs_dir(const char *name, const char *d)
{
	struct stat st;

	if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
		warnx("%s %s: not a directory", name, d);
		return NULL;
	}
	return path_resolve(d);
}

/* Reads the configs' ids and policies, after perf-collect --check. */
static int
load_configs(struct job *j, char **paths, int n)
{
	char *log, bad[64], err[256];
	char **all = ecalloc((size_t)n, sizeof *all);
	buf text = BUF_INIT;
	json_error e;
	int rc = 0;

	j->conf = ecalloc((size_t)n, sizeof *j->conf);
	j->nconf = n;
	for (int i = 0; i < n; i++)
		all[i] = j->conf[i].path = path_resolve(paths[i]);
	log = easprintf("%s/check.log", j->work);
	rc = collect_check(j->collect, all, n, log, "configs", show_kept, (void *)"check");
	free(log);
	free(all);
	if (rc != 0)
		return -1;
	for (int i = 0; i < n && rc == 0; i++) {
		cJSON *cfg;

		buf_reset(&text);
		if (buf_read_file(&text, j->conf[i].path) != 0 ||
		    (cfg = json_parse(text.s, text.len, &e)) == NULL) {
			warnx("%s: cannot read the config", paths[i]);
			rc = -1;
			break;
		}
		j->conf[i].id = estrdup(json_str(cfg, "benchmark_id"));
		if (policy_merge(json_get(cfg, "regression_thresholds"), j->conf[i].pol, bad,
		    sizeof bad) != 0) {
			warnx("%s: regression_thresholds: %s is not finite", paths[i], bad);
			rc = -1;
		}
		j->conf[i].named_policy = cJSON_Duplicate(json_get(json_get(cfg,
		    "regression_thresholds"), "metrics"), true);
		if (rc == 0 && nm_policy_check(j->conf[i].named_policy, err,
		    sizeof err) != 0) {
			warnx("%s: regression_thresholds.metrics: %s", paths[i], err);
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
	if ((j->work = collect_scratch("perf-ab")) == NULL)
		return -1;
	j->runs = json_new_array();
	j->collect = collect_find("perf-collect");
	if (load_configs(j, paths, npaths) != 0)
		return -1;
	if ((opt.base_ref != NULL && make_base(j) != 0) || base_configs(j) != 0 ||
	    (opt.setup != NULL && setup_base(j) != 0))
		return -1;
	j->sha[0] = collect_commit(j->base, "HEAD");
	j->sha[1] = collect_commit(j->head, "HEAD");
	j->head_first = ecalloc((size_t)opt.max * (size_t)j->nconf, sizeof *j->head_first);
	ab_order(opt.run.seed, opt.max, j->nconf, j->head_first);
	for (int m = 0; m < METRIC_COUNT; m++)
		add_slot(j, m);
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
			if (p == 0)
				compare_identities(&j->conf[c]);
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
	for (int c = 0; c < j->nconf; c++)
		for (int m = 0; m < nslots(j); m++) {
			size_t k = slot(j, c, m);

			if (j->measured[k] && gated(j, c, m) && strcmp(j->res[k].verdict, "slower") == 0)
				return true;
		}
	return false;
}

/* The report to -o, --svg and stdout. 0, or -1 when one could not be (said). */
static int
write_report(const cJSON *rep)
{
	buf out = BUF_INIT;
	int rc = 0;

	if (opt.out != NULL && collect_save_report(rep, opt.out) != 0)
		rc = -1;
	if (opt.svg != NULL) {
		ab_svg(&out, rep);
		if (atomic_save("SVG", opt.svg, out.s, out.len) != 0)
			rc = -1;
	}
	buf_free(&out);
	return collect_print_report(rep, opt.md, table) != 0 ? -1 : rc;
}

/* The whole job; returns the exit status. */
static int
run_job(struct job *j, char **paths, int npaths)
{
	bool slower;
	cJSON *rep;
	int rc;

	if (start_job(j, paths, npaths) != 0 || run_pairs(j) != 0)
		return EXIT_TROUBLE;
	slower = any_slower(j);
	rep = report(j, slower);
	rc = write_report(rep);
	cJSON_Delete(rep);
	return rc != 0 ? EXIT_TROUBLE : slower ? EXIT_GATE : EXIT_PASS;
}

/* Reads the options into opt; exits on a usage error. */
static void
parse_options(int argc, char *argv[])
{
	int c;

	opt.min = 5;
	opt.max = 30;
	opt.band = -1;
	opt.alpha = 0.05;
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		switch (c) {
		case 'b': opt.base = optarg; break;
		case 'H': opt.head = optarg; break;
		case 'R': opt.base_ref = optarg; break;
		case 'S': opt.setup = optarg; break;
		case 'o': opt.out = optarg; break;
		case 'm': opt.md = true; break;
		case 'G': opt.svg = optarg; break;
		case 'p': parse_pairs(optarg); break;
		case 'B':
			opt.band = cli_double(opt_text(&option_table), "--band", optarg, 0, 100,
			    "a percentage from 0 to 100") / 100;
			break;
		case 'a':
			opt.alpha = cli_double(opt_text(&option_table), "--alpha", optarg, 1e-6,
			    0.5, "a level from 0.000001 to 0.5");
			break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		default:
			if (!collect_option(&opt.run, c, optarg, opt_text(&option_table)))
				opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
}

/* The options that go together, and the configs; exits on a usage error. */
static void
check_options(int argc)
{
	if ((opt.base == NULL) == (opt.base_ref == NULL)) {
		warnx("give one of --base and --base-ref");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	if (opt.setup != NULL && opt.base_ref == NULL) {
		warnx("--setup needs --base-ref");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	if (optind == argc) {
		warnx("no benchmark config given");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
}

/*
 * Probes whether the directory of the output p takes a new file (a probe
 * made and removed). 0, or -1 after saying why.
 */
static int
probe_dir(const char *name, const char *p)
{
	char *real = path_resolve(p), *slash = strrchr(real, '/'), *probe;
	int fd;

	if (slash == real)
		slash[1] = '\0';
	else
		*slash = '\0';
	probe = easprintf("%s/.perf-ab-XXXXXX", real);
	if ((fd = mkstemp(probe)) < 0) {
		warn("%s %s: cannot write in %s", name, p, real);
		free(probe);
		free(real);
		return -1;
	}
	close(fd);
	unlink(probe);
	free(probe);
	free(real);
	return 0;
}

/*
 * The outputs, before anything runs: each one a file that can be written
 * (not a directory, in a directory that takes files), neither a config
 * nor the other output.
 */
static int
check_outputs(char **configs, int n)
{
	const char *name[2] = { "-o", "--svg" }, *out[2] = { opt.out, opt.svg };
	struct stat st;

	for (int k = 0; k < 2; k++) {
		if (out[k] == NULL)
			continue;
		if (*out[k] == '\0') {
			warnx("%s: an empty file name", name[k]);
			return -1;
		}
		if (stat(out[k], &st) == 0 && S_ISDIR(st.st_mode)) {
			warnx("%s %s: is a directory", name[k], out[k]);
			return -1;
		}
		for (int i = 0; i < n; i++)
			if (path_same_file(out[k], configs[i])) {
				warnx("%s %s: is a config; refusing to overwrite it", name[k], out[k]);
				return -1;
			}
		/* A device or FIFO is written in place. */
		if (stat(out[k], &st) == 0 && !S_ISREG(st.st_mode)) {
			if (access(out[k], W_OK) != 0) {
				warn("%s %s: cannot write", name[k], out[k]);
				return -1;
			}
		} else if (probe_dir(name[k], out[k]) != 0)
			return -1;
	}
	if (out[0] != NULL && out[1] != NULL && path_same_file(out[0], out[1])) {
		warnx("-o and --svg name one file: %s", out[0]);
		return -1;
	}
	return 0;
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
	    (opt.base != NULL && (j.base = abs_dir("--base", opt.base)) == NULL) ||
	    check_outputs(argv + optind, argc - optind) != 0) {
		free(j.head);
		free(j.base);
		return EXIT_TROUBLE;
	}
	proc_handle_signals();
	rc = run_job(&j, argv + optind, argc - optind);
	cleanup(&j);
	return collect_finish(rc, EXIT_TROUBLE);
}
