/*
 * perf-changes: change points in the history. Each metric of each
 * comparison cohort (the exact identity of v2 records, model and GPU for
 * legacy ones; lane/cohort.h), ordered as the rolling gate orders
 * history, is analysed with Apache Otava's change-point detection
 * (lane/changes.h); every change point found is written as one
 * JSON line (or a Markdown table with --md; --md-file writes the table
 * to a file as well, from the same analysis). A series holds the
 * measurements of scheduled-main runs whatever the rolling gate said of
 * them (cohort_measured()). Exit 1 when a reported change point is worse
 * by the metric's direction and not tentative (at least --min-points
 * records on each side): a slow drift or a step the rolling gate let
 * through. --incremental keeps the split step's state (lane/change_state.h).
 */
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/canon.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/git.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/now.h"
#include "core/opt.h"
#include "core/path.h"
#include "core/text.h"
#include "lane/bisect_report.h"
#include "lane/change_state.h"
#include "lane/changes.h"
#include "lane/cohort.h"
#include "lane/cpoints.h"
#include "lane/decision.h"
#include "lane/history.h"
#include "lane/identity.h"
#include "lane/named_metric.h"
#include "lane/policy.h"
#include "lane/store/read.h"
#include "lane/store/store_opts.h"

static struct {
	struct store_opts store;	/* -s, --cache, -H */
	const char *state, *batch;
	const char *md_file;	/* --md-file: the Markdown table also goes there */
	bool metric[METRIC_COUNT], md, all;
	char **names;		/* --metric: named metrics to analyse */
	int nnames;
	bool any_named;		/* analyse named metrics (no --metric, or one names them) */
	long window, last, min_points;
	double pvalue, min_magnitude;
	int64_t since;
	bool has_since;
} opt = { .window = 50, .min_points = 3, .pvalue = 0.001, .since = 0 };


/*
 * What one run of the program holds, by owner: the cohorts and their
 * series (lane/cohort.h), the --incremental state (lane/change_state.h),
 * and the program's own: the record view, --batch, the change points
 * found for the output, the statistics. Every function that needs it is
 * passed it.
 */
struct run {
	struct cohorts cs;
	struct change_state st;
	struct json_keyset *keys;	/* of cohort_wanted() */
	char **batch;		/* --batch: the cohort keys of its records, sorted */
	size_t nbatch;
	struct found *found;	/* gathered in cohort order */
	size_t nfound;
	bool stats;		/* PERF_CHANGES_STATS: count and time the analysis */
	size_t compared, reused;	/* comparisons the merges made, reused (under cs.lock) */
	double analysis_s;	/* CPU seconds in analyse(), all threads together */
};

static const struct opt_def options[] = {
	STORE_OPT_STORE_AS("-s store, --store store",
	    "the history store: a directory or git+URL"),
	STORE_OPT_CACHE_DIR("the cache clone of a git store"),
	STORE_OPT_HISTORY_AS("file", "-H file, --history file",
	    "a JSON-lines history stream (gzip allowed); repeatable"),
	{ 'm', "metric", 0, "metric",
	    "analyse this metric (a normalized key or a named\n"
	    "metric's name); repeatable", "-m metric, --metric metric", NULL },
	{ 'w', "window", 0, "n", "the window of the split step", "-w n, --window n", NULL },
	{ 'p', "pvalue", 0, "p",
	    "the significance, above 0 and at most 1", "-p p, --pvalue p", NULL },
	{ 0, "min-magnitude", 'M', "f",
	    "change points of a magnitude at or below f are merged away", NULL, NULL },
	{ 0, "min-points", 'P', "n",
	    "a change point with fewer records on a side is tentative (default 3)", NULL, NULL },
	{ 0, "all", 'A', NULL, "read every record, not only trusted ones", NULL, NULL },
	{ 0, "last", 'l', "n", "report only change points among the newest n records", NULL, NULL },
	{ 0, "since", 'S', "ISO",
	    "report only change points at records not older than this time", NULL, NULL },
	{ 0, "incremental", 'i', "file",
	    "keep the split step's state of every series in file", NULL, NULL },
	{ 0, "batch", 'B', "file", "analyse only the cohorts of the records in file", NULL, NULL },
	{ 0, "json", 'J', NULL, "JSON lines (the default)", NULL, NULL },
	{ 0, "md", 'D', NULL, "a Markdown table", NULL, NULL },
	{ 0, "md-file", 'F', "file",
	    "also write the Markdown table to file (atomically)", NULL, NULL },
	OPT_HELP("print the usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-changes [-s store] [--cache dir] [-H history.jsonl] [-m metric]\n"
	    "                    [-w window] [-p pvalue] [--min-magnitude f] [--min-points n]\n"
	    "                    [--all] [--since ISO | --last n] [--incremental state-file]\n"
	    "                    [--batch records.jsonl]\n"
	    "                    [--json | --md] [--md-file file] [file ...]\n",
	.width = 26,
	.flags = 0,
	.opts = options,
	/* getopt's order before the table, for an ambiguous abbreviation's message */
	.long_order =
	    "store cache history metric window pvalue min-magnitude min-points "
	    "since last incremental batch all json md md-file help version",
};

/* Whether --metric asked for the named metric name (any, without --metric). */
static bool
name_wanted(const char *name)
{
	if (opt.nnames == 0)
		return opt.any_named;
	for (int i = 0; i < opt.nnames; i++)
		if (strcmp(opt.names[i], name) == 0)
			return true;
	return false;
}

/*
 * The named metrics of a record that are analysed, each with its
 * direction (nm_policy_resolve(): the record's, its policy's, the unit
 * rule); *ms holds them (free both). None when the record's metrics are
 * invalid: history is read leniently (operands are checked first).
 */
static struct named_point *
named_points(const struct view *w, struct named_metric **ms, size_t *n)
{
	const cJSON *block = json_get(w->v[W_POLICY], "metrics");
	struct named_point *np;
	struct nm_policy pol;
	size_t all = 0;
	char err[256];

	*ms = NULL;
	*n = 0;
	if (!opt.any_named || w->v[W_NAMED] == NULL ||
	    (*ms = nm_parse(w->v[W_NAMED], &all, err, sizeof err)) == NULL)
		return NULL;
	if (block != NULL && nm_policy_check(block, err, sizeof err) != 0)
		block = NULL;
	np = emalloc((all + 1) * sizeof *np);
	for (size_t i = 0; i < all; i++) {
		if (!name_wanted((*ms)[i].name))
			continue;
		nm_policy_resolve(block, cJSON_IsString(w->v[W_MODEL]) ?
		    w->v[W_MODEL]->valuestring : "None", &(*ms)[i], &pol);
		np[*n].m = &(*ms)[i];
		np[(*n)++].better = pol.better;
	}
	return np;
}

/*
 * A record of the history (store, stream or operand): into its cohort,
 * and each named metric it has into the series of that metric of its
 * cohort. Reader threads call it at once; what needs no shared state is
 * made before taking the lock.
 */
static void
on_hit(const struct store_hit *h, void *ctx)
{
	struct run *run = ctx;
	struct view w;
	struct named_metric *ms;
	struct named_point *np;
	buf b = BUF_INIT;	/* the cohort key, its '\0', the point */
	size_t base, n;
	bool point;

	cohort_view(run->keys, h->record, &w);
	buf_grow(&b, 512);
	if (!cohort_key(&w, &b)) {
		buf_free(&b);
		return;
	}
	base = b.len;
	point = cohort_measured(&w, opt.all);
	cohort_add_series(&run->cs, h, &w, &b, base, NULL, point);
	/* A record that is no measurement is counted once, in the cohort's six. */
	np = point ? named_points(&w, &ms, &n) : NULL;
	if (!point) {
		ms = NULL;
		n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		b.len = base;
		buf_addc(&b, '\x1d');
		buf_adds(&b, np[i].m->name);
		cohort_add_series(&run->cs, h, &w, &b, base, &np[i], point);
	}
	free(np);
	free(ms);
	buf_free(&b);
}

/* The query of every record: on_hit() sorts out the measurements (cohort_measured()). */
static void
trusted_query(struct store_query *q)
{
	memset(q, 0, sizeof *q);
}

/* Reads JSON-lines records from the operands. 0, or -1 when one was bad (said). */
static int
read_records(struct run *run, char *const *paths, int n)
{
	jsonl_reader *r = jsonl_open(paths, n);
	struct store_query q;
	struct store_hit h;
	jsonl_span s;
	cJSON *rec;
	bool good;
	int rc;
	double d;
	char *path, *where, err[256];
	struct named_metric *ms;
	size_t nms;

	trusted_query(&q);
	while ((rec = jsonl_next(r, &s)) != NULL) {
		good = true;
		if (json_get(rec, "metrics") != NULL) {
			err[0] = '\0';
			if ((ms = nm_parse(json_get(rec, "metrics"), &nms, err, sizeof err)) == NULL &&
			    err[0] != '\0') {
				jsonl_error(r, &s, "%s", err);
				good = false;
			}
			free(ms);
		}
		for (int i = 0; i < METRIC_COUNT && good; i++) {
			enum coerce k = policy_coerce(json_get(rec, metric_table[i].key), &d);
			if (k == COERCE_BAD || (k == COERCE_OK && !isfinite(d))) {
				jsonl_error(r, &s, k == COERCE_BAD ? "%s must be a number" :
				    "%s is not a finite number", metric_table[i].key);
				good = false;
			}
		}
		if (good && store_query_matches(&q, rec)) {
			path = store_record_path(rec);
			where = easprintf("%s:%ld", s.file, s.line);
			memset(&h, 0, sizeof h);
			h.record = rec;
			h.path = path != NULL ? path : where;
			h.stream = true;
			h.instant = store_record_instant(rec);
			on_hit(&h, run);
			free(path);
			free(where);
		}
		cJSON_Delete(rec);
	}
	rc = jsonl_errors(r) == 0 ? 0 : -1;
	jsonl_close(r);
	return rc;
}

/* Reads the cohorts of --batch. 0, or -1 when a record was bad (said). */
static int
read_batch(struct run *run)
{
	jsonl_reader *r = jsonl_open((char *const *)&opt.batch, 1);
	struct view w;
	jsonl_span s;
	cJSON *rec;
	int rc;

	while ((rec = jsonl_next(r, &s)) != NULL) {
		buf b = BUF_INIT;

		cohort_view(run->keys, rec, &w);
		if (cohort_key(&w, &b)) {
			run->batch = erealloc(run->batch, (run->nbatch + 1) * sizeof *run->batch);
			run->batch[run->nbatch++] = buf_detach(&b);
		}
		buf_free(&b);
		cJSON_Delete(rec);
	}
	rc = jsonl_errors(r) == 0 ? 0 : -1;
	jsonl_close(r);
	if (run->nbatch > 0)	/* run->batch is NULL for an empty batch */
		qsort(run->batch, run->nbatch, sizeof *run->batch, text_cmp_ptr);
	return rc;
}

/* Whether a cohort is analysed: every one, or those of --batch. */
static bool
in_batch(struct run *run, const struct cohort *c)
{
	char *base;
	bool in;

	if (opt.batch == NULL)
		return true;
	base = estrndup(c->key, c->base_len);
	in = bsearch(&base, run->batch, run->nbatch, sizeof *run->batch, text_cmp_ptr) != NULL;
	free(base);
	return in;
}

/* Whether the change at index of a series of n points is to be reported. */
static bool
reported(const struct cohort *c, size_t index)
{
	if (opt.last > 0 && index + (size_t)opt.last < c->h.n)
		return false;
	if (opt.has_since && c->h.p[index].instant < opt.since)
		return false;
	return true;
}

/* Analyses one metric of one cohort. */
static void
analyse(struct run *run, struct cohort *c, int m, double *x, bool *has)
{
	struct changes_split sp = { 0 };
	struct change_point *cp;
	struct saved *sv = NULL;
	char hex[SHA256_HEX], now[SHA256_HEX], *series;
	size_t n = c->h.n, k;
	double t0 = run->stats ? now_thread_cpu() : 0;
	bool resumed = false;

	for (size_t i = 0; i < n; i++) {
		x[i] = c->h.p[i].v[m];
		has[i] = c->h.p[i].has[m];
	}
	if (!changes_fill(x, has, n))
		return;
	/* A named metric's series is its cohort's: the key names the metric. */
	series = c->name != NULL ? estrdup(c->key) : easprintf("%s\x1e%s", c->key,
	    metric_table[m].key);
	if (opt.state != NULL) {
		sv = change_state_find(&run->st, series, n);
		change_state_digest(x, n, now, sv != NULL ? sv->n : SIZE_MAX, hex);
	}
	if (sv != NULL && strcmp(hex, sv->digest) == 0) {
		/* The same history and more: resume the split. */
		sp.n = sv->n;
		sp.resume = sv->resume;
		sp.early = sv->early;
		sp.nearly = sv->nearly;
		sv->early = NULL;
		resumed = true;
	}
	changes_split(x, n, (size_t)opt.window, changes_first_pass(opt.pvalue), &sp);
	cp = emalloc((sp.nweak + 1) * sizeof *cp);
	if (opt.state != NULL) {
		/* The same points lo..hi - 1: the last merge's comparisons hold. */
		if (resumed) {
			changes_memo_add(&sp, sv->memo, sv->nmemo);
			free(sv->memo);
			sv->memo = NULL;
			sv->nmemo = 0;
		}
		k = changes_merge_split(x, n, &sp, opt.pvalue, opt.min_magnitude, cp);
		change_state_keep(&c->state, series, now, &sp);
	} else
		k = changes_merge(x, n, sp.weak, sp.nweak, opt.pvalue, opt.min_magnitude, cp);
	for (size_t i = 0; i < k; i++) {
		struct found *f;
		bool up = cp[i].mean_after > cp[i].mean_before;

		if (!reported(c, cp[i].index))
			continue;
		c->found = erealloc(c->found, (c->nfound + 1) * sizeof *c->found);
		f = &c->found[c->nfound++];
		f->c = c;
		cohort_point_fields(c, cp[i].index, f->at);
		cohort_point_fields(c, cp[i].index - 1, f->before);
		f->metric = m;
		f->cp = cp[i];
		if (c->name != NULL)	/* of unknown direction: never worse */
			f->worse = c->better == BETTER_HIGHER ? cp[i].mean_after <
			    cp[i].mean_before : c->better == BETTER_LOWER && up;
		else
			f->worse = metric_table[m].higher_is_better ? cp[i].mean_after <
			    cp[i].mean_before : up;
		f->tentative = cp[i].n_before < (size_t)opt.min_points ||
		    cp[i].n_after < (size_t)opt.min_points;
		f->untrusted = cohort_between(c, cp[i].index);
	}
	free(cp);
	free(series);
	if (run->stats) {
		pthread_mutex_lock(&run->cs.lock);
		run->compared += sp.compared;
		run->reused += sp.reused;
		run->analysis_s += now_thread_cpu() - t0;
		pthread_mutex_unlock(&run->cs.lock);
	}
	changes_split_free(&sp);
}

/* Analyses every metric of a cohort read whole, then releases its records. */
static void
finish(struct cohort *c, void *arg)
{
	struct run *run = arg;
	buf points = BUF_INIT;
	double *x;
	bool *has;

	cohort_load_points(&run->cs, c, &points);
	cohort_decode_points(c, points.s, points.len);
	/* A named metric's series: the records between its points are its cohort's. */
	if (c->base != NULL) {
		pthread_mutex_lock(&run->cs.lock);
		free(c->skipped);
		c->skipped = emalloc((c->base->nskipped + 1) * sizeof *c->skipped);
		if (c->base->nskipped > 0)	/* base->skipped is NULL for none */
			memcpy(c->skipped, c->base->skipped, c->base->nskipped * sizeof *c->skipped);
		c->nskipped = c->base->nskipped;
		pthread_mutex_unlock(&run->cs.lock);
	}
	x = emalloc((c->h.n + 1) * sizeof *x);
	has = emalloc((c->h.n + 1) * sizeof *has);
	history_sort(&c->h);
	if (c->name != NULL) {
		if (in_batch(run, c))
			analyse(run, c, 0, x, has);
	} else
		for (int m = 0; m < METRIC_COUNT && in_batch(run, c); m++)
			if (opt.metric[m])
				analyse(run, c, m, x, has);
	free(x);
	free(has);
	pthread_mutex_lock(&run->cs.lock);
	/* Records of it came from another directory meanwhile: read it again. */
	if (c->phase == SPANNING)
		cohort_forget(c);
	else
		c->phase = ANALYSED;
	history_free(&c->h);
	pthread_mutex_unlock(&run->cs.lock);
	buf_free(&points);
}

/* The store's decisions (perf-seed(1)), read with the store. */
static struct decisions decisions;

/*
 * The decision in force on a change point (its cohort, metric and
 * record), or the accept of a record between the point before it and it
 * (the accepted record itself may not be in the trusted series); NULL
 * for none. A decided change point is shown with it and never gates.
 */
static const struct decision *
decision_of(const struct found *f)
{
	const struct decision *d;
	int64_t lo = ISOTIME_MIN, hi = ISOTIME_MIN;

	if (!f->c->v2 || decisions.n == 0)
		return NULL;
	/* A named metric's series: the decisions on that name (perf-seed --metric NAME). */
	d = f->c->name != NULL ? decisions_latest_named(&decisions, f->c->ident, f->c->name,
	    f->at[AT_PATH]) : decisions_latest(&decisions, f->c->ident, f->metric, f->at[AT_PATH]);
	if (d != NULL)
		return d;
	if (!isotime_parse(f->before[AT_TIMESTAMP], &lo))
		lo = ISOTIME_MIN;
	if (!isotime_parse(f->at[AT_TIMESTAMP], &hi))
		hi = ISOTIME_MIN;
	if (f->c->name != NULL)
		return decisions_accept_between_named(&decisions, f->c->ident, f->c->name, lo,
		    f->before[AT_PATH], hi, f->at[AT_PATH]);
	return decisions_accept_between(&decisions, f->c->ident, f->metric, lo,
	    f->before[AT_PATH], hi, f->at[AT_PATH]);
}

/* The "decision" member of a decided change point. */
static cJSON *
decision_member(const struct decision *d)
{
	cJSON *o = json_new_object();

	json_set(o, "kind", json_new_string(decision_state_name(d->kind)));
	json_set(o, "id", json_new_string(d->id));
	json_set(o, "by", json_new_string(d->by));
	json_set(o, "when", json_new_string(d->when));
	json_set(o, "reason", json_new_string(d->reason));
	json_set(o, "link", d->link != NULL ? json_new_string(d->link) : json_new_null());
	return o;
}

/* The store's bisect reports (perf-bisect(1) --store), read with the store. */
static struct bisect_reports reports;

/*
 * The culprit of a change point that a stored bisect covers
 * (bisect_reports_covering): "culprit", the first (the largest share),
 * and "culprits", all of them, when the bisect found several in the same
 * range. Nothing when none covers it, so the line stays as it was.
 */
static void
culprit_members(const struct found *f, cJSON *o)
{
	const struct bisect_report *r;
	size_t first;
	bool all;
	cJSON *a;

	if (reports.n == 0 || (r = bisect_reports_covering(&reports, f->c->v2 ? f->c->ident : NULL,
	    f->c->model, f->c->gpu, f->c->name != NULL ? f->c->name : metric_table[f->metric].key,
	    f->before[AT_COMMIT],
	    f->at[AT_COMMIT], &first, &all)) == NULL)
		return;
	json_set(o, "culprit", bisect_report_culprit_json(r, first));
	if (!all || r->nk < 2)
		return;
	a = json_new_array();
	for (size_t k = 0; k < r->nk; k++)
		json_append(a, bisect_report_culprit_json(r, k));
	json_set(o, "culprits", a);
}

/* One change point as a JSON line. */
static cJSON *
found_json(const struct found *f)
{
	const struct cohort *c = f->c;
	const struct decision *d;
	cJSON *o = json_new_object(), *prev = json_new_object();

	if (c->v2)
		for (int k = 0; k < IDENTITY_KEYS; k++)
			json_set(o, identity_keys[k], json_new_string(c->ident[k]));
	json_set(o, "model_id", json_new_string(c->model));
	json_set(o, "gpu_type", json_new_string(c->gpu));
	if (c->name != NULL) {
		json_set(o, "metric", json_new_string(c->name));
		json_set(o, "unit", json_new_string(c->unit != NULL ? c->unit : ""));
		json_set(o, "better", c->better != BETTER_UNKNOWN ?
		    json_new_string(better_name(c->better)) : json_new_null());
		json_set(o, "direction", json_new_string(c->better == BETTER_UNKNOWN ? "unknown" :
		    f->worse ? "worse" : "better"));
	} else {
		json_set(o, "metric", json_new_string(metric_table[f->metric].key));
		json_set(o, "direction", json_new_string(f->worse ? "worse" : "better"));
	}
	json_set(o, "index", json_new_int((long long)f->cp.index));
	json_set(o, "timestamp", json_new_string(f->at[AT_TIMESTAMP]));
	json_set(o, "commit_sha", json_new_string(f->at[AT_COMMIT]));
	json_set(o, "path", json_new_string(f->at[AT_PATH]));
	json_set(prev, "timestamp", json_new_string(f->before[AT_TIMESTAMP]));
	json_set(prev, "commit_sha", json_new_string(f->before[AT_COMMIT]));
	json_set(prev, "path", json_new_string(f->before[AT_PATH]));
	json_set(o, "previous", prev);
	json_set(o, "mean_before", json_new_finite(f->cp.mean_before));
	json_set(o, "stddev_before", json_new_finite(f->cp.std_before));
	json_set(o, "mean_after", json_new_finite(f->cp.mean_after));
	json_set(o, "stddev_after", json_new_finite(f->cp.std_after));
	json_set(o, "forward_change_percent", json_new_finite(changes_forward(&f->cp) * 100.0));
	json_set(o, "magnitude", json_new_finite(changes_magnitude(&f->cp)));
	json_set(o, "pvalue", json_new_finite(f->cp.pvalue));
	json_set(o, "n_before", json_new_int((long long)f->cp.n_before));
	json_set(o, "n_after", json_new_int((long long)f->cp.n_after));
	json_set(o, "tentative", json_new_bool(f->tentative));
	json_set(o, "untrusted_between", json_new_int((long long)f->untrusted));
	if ((d = decision_of(f)) != NULL)
		json_set(o, "decision", decision_member(d));
	culprit_members(f, o);
	return o;
}

/* The Markdown table of --md and --md-file, appended to out. */
static void
md_table(struct run *run, buf *out)
{
	const cJSON **cps = emalloc((run->nfound + 1) * sizeof *cps);

	for (size_t i = 0; i < run->nfound; i++)
		cps[i] = found_json(&run->found[i]);
	buf_adds(out, "## Change points\n\n");
	if (run->nfound == 0)
		buf_adds(out, "No change points.\n");
	else
		cpoints_markdown(out, cps, run->nfound);
	for (size_t i = 0; i < run->nfound; i++)
		cJSON_Delete((cJSON *)cps[i]);
	free(cps);
}

/* Gathers the change points and state lines of every cohort, in cohort order. */
static void
gather(struct run *run)
{
	for (size_t i = 0; i < run->cs.n; i++) {
		struct cohort *c = run->cs.c[i];

		if (c->nfound > 0) {
			run->found = erealloc(run->found, (run->nfound + c->nfound) * sizeof *run->found);
			memcpy(run->found + run->nfound, c->found, c->nfound * sizeof *c->found);
			run->nfound += c->nfound;
		}
		if (c->state.len > 0)
			buf_adds(&run->st.out, c->state.s);
	}
}

/* A directory of the store read whole: its cohorts found nowhere else are analysed. */
static void
unit_done(size_t u, const char *name, void *ctx)
{
	struct run *run = ctx;

	cohort_unit_done(&run->cs, u, name);
}

/* Whether a directory of the store holds records of a cohort read again. */
static bool
want_unit(const char *name, void *ctx)
{
	const struct run *run = ctx;

	return cohort_want_unit(&run->cs, name);
}

/*
 * The second pass of a store read directory by directory: the cohorts
 * whose records span directories, read again from those directories.
 */
static int
read_again(struct run *run, store *st, const struct store_query *q)
{
	struct store_units u = { .want = want_unit, .quiet = true };
	bool any = false;

	for (size_t i = 0; i < run->cs.n; i++) {
		struct cohort *c = run->cs.c[i];

		if (c->phase != SPANNING)
			continue;
		cohort_forget(c);
		cohort_drop_points(&run->cs, c);
		free(c->skipped);
		c->skipped = NULL;
		c->nskipped = 0;
		free(c->latest_path);
		c->latest_path = NULL;
		c->phase = COLLECTING;
		c->again = any = true;
	}
	if (!any)
		return 0;
	run->cs.by_unit = false;
	run->cs.again = true;
	return store_scan_units(st, q, 1, on_hit, &u, run, NULL);
}

/*
 * The queries of the --batch cohorts (the identity values of each v2 key,
 * cut from copies of the keys in *keys), so that a store with an index
 * reads those cohorts alone; false when a cohort cannot be asked that way
 * (a legacy one, an empty batch).
 */
static bool
batch_queries(const struct run *run, struct store_query **q, int *nq, char ***keys)
{
	*q = ecalloc(run->nbatch + 1, sizeof **q);
	*keys = ecalloc(run->nbatch + 1, sizeof **keys);
	*nq = 0;
	for (size_t i = 0; i < run->nbatch; i++) {
		struct store_query *b = &(*q)[*nq];
		char *p;
		int k = 0;

		if (strncmp(run->batch[i], "v2\x1f", 3) != 0)
			break;
		p = (*keys)[*nq] = estrdup(run->batch[i] + 3);
		for (;;) {
			char *end = strchr(p, '\x1f');

			b->keys[k] = identity_keys[k];
			b->values[k++] = p;
			if (end == NULL || k == IDENTITY_KEYS)
				break;
			*end = '\0';
			p = end + 1;
		}
		b->nkeys = k;
		(*nq)++;
		if (k != IDENTITY_KEYS || strchr(p, '\x1f') != NULL)
			break;
	}
	if (*nq > 0 && (size_t)*nq == run->nbatch && (*q)[*nq - 1].nkeys == IDENTITY_KEYS &&
	    strchr((*q)[*nq - 1].values[IDENTITY_KEYS - 1], '\x1f') == NULL)
		return true;
	return false;
}

static void
batch_queries_free(struct store_query *q, char **keys, int nq)
{
	for (int i = 0; i < nq; i++)
		free(keys[i]);
	free(keys);
	free(q);
}

/*
 * Reads the store and the history streams; -1 when they cannot be read.
 * A store alone is read directory by directory (the reference's layout
 * keeps a model's records in one), so that memory holds the cohorts being
 * read, not the store.
 */
static int
read_store(struct run *run)
{
	struct store_query q, *bq = NULL;
	store *st;
	char *raised = NULL, **bkeys = NULL;
	int rc, nbq = 0;

	if ((st = store_open_cache(opt.store.spec, opt.store.cache)) == NULL)
		return -1;
	store_want(st, cohort_wanted(), W_KEYS);
	if (store_root(st) != NULL && decisions_load(store_root(st), &decisions) != 0) {
		store_close(st);
		return -1;
	}
	/* A report that cannot be read is said and skipped: it never stops the gate. */
	if (store_root(st) != NULL)
		bisect_reports_load(store_root(st), &reports);
	for (int h = 0; h < opt.store.nhistories; h++)
		store_add_stream(st, opt.store.histories[h]);
	trusted_query(&q);
	if (opt.batch != NULL && opt.state == NULL && opt.store.nhistories == 0 &&
	    batch_queries(run, &bq, &nbq, &bkeys)) {
		/* The batch's cohorts alone: through the store's index, when it has one. */
		run->cs.by_unit = false;
		rc = store_scan(st, bq, nbq, on_hit, run, &raised);
	} else if (run->cs.by_unit) {
		struct store_units u = { .done = unit_done, .unlocked = true };
		rc = store_scan_units(st, &q, 1, on_hit, &u, run, &raised);
		if (rc == 0 && raised == NULL)
			rc = read_again(run, st, &q);
	} else
		rc = store_scan(st, &q, 1, on_hit, run, &raised);
	batch_queries_free(bq, bkeys, nbq);
	store_close(st);
	if (rc == 0 && raised != NULL) {
		warnx("cannot read the store: %s", raised);
		rc = -1;
	}
	free(raised);
	return rc;
}

static int
cmp_cohort(const void *a, const void *b)
{
	return strcmp((*(struct cohort *const *)a)->key, (*(struct cohort *const *)b)->key);
}

/*
 * --md-file names a file to write, never one the run reads: not the
 * --incremental state (written itself), --batch, a -H stream or an
 * operand. A usage error (exit 2) before anything is read.
 */
static void
check_md_file(int argc, char *argv[])
{
	const char *why = NULL;

	if (*opt.md_file == '\0') {
		warnx("--md-file: an empty file name");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	if (opt.state != NULL && path_same_file(opt.md_file, opt.state))
		why = "the --incremental state";
	else if (opt.batch != NULL && path_same_file(opt.md_file, opt.batch))
		why = "the --batch file";
	for (int h = 0; h < opt.store.nhistories && why == NULL; h++)
		if (strcmp(opt.store.histories[h], "-") != 0 &&
		    path_same_file(opt.md_file, opt.store.histories[h]))
			why = "a --history stream";
	for (int i = optind; i < argc && why == NULL; i++)
		if (strcmp(argv[i], "-") != 0 && path_same_file(opt.md_file, argv[i]))
			why = "an input file";
	if (why != NULL) {
		warnx("--md-file %s: is %s; refusing to overwrite it", opt.md_file, why);
		opt_usage(&option_table, EXIT_TROUBLE);
	}
}

static void
parse_options(int argc, char *argv[])
{
	bool any_metric = false;
	const char *why;
	int c, k;

	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		if (store_opts_take(&opt.store, c, optarg))
			continue;
		switch (c) {
		case 'm':
			if ((k = policy_metric_index(optarg)) >= 0) {
				opt.metric[k] = any_metric = true;
				break;
			}
			if (!nm_name_valid(optarg, &why)) {
				warnx("--metric: '%s' is not a metric name: %s", optarg, why);
				opt_usage(&option_table, EXIT_TROUBLE);
			}
			opt.names = erealloc(opt.names, (size_t)(opt.nnames + 1) * sizeof *opt.names);
			opt.names[opt.nnames++] = optarg;
			opt.any_named = any_metric = true;
			break;
		case 'w':
			opt.window = cli_long(opt_text(&option_table), "--window", optarg, 2,
			    100000, "an integer from 2 to 100000");
			break;
		case 'p':
			opt.pvalue = cli_double(opt_text(&option_table), "--pvalue", optarg,
			    DBL_TRUE_MIN, 1, "a number above 0 and at most 1");
			break;
		case 'M':
			opt.min_magnitude = cli_double(opt_text(&option_table), "--min-magnitude",
			    optarg, 0, 1e300, "a number of 0 or more");
			break;
		case 'P':
			opt.min_points = cli_long(opt_text(&option_table), "--min-points", optarg,
			    1, 1000000000, "a positive integer");
			break;
		case 'S':
			opt.since = cli_time(opt_text(&option_table), "--since", optarg,
			    "an ISO time");
			opt.has_since = true;
			break;
		case 'l':
			opt.last = cli_long(opt_text(&option_table), "--last", optarg, 1,
			    1000000000, "a positive integer");
			break;
		case 'i': opt.state = optarg; break;
		case 'B': opt.batch = optarg; break;
		case 'A': opt.all = true; break;
		case 'J': opt.md = false; break;
		case 'D': opt.md = true; break;
		case 'F': opt.md_file = optarg; break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
	if (opt.has_since && opt.last > 0) {
		warnx("--since and --last cannot be used together");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	for (k = 0; k < METRIC_COUNT; k++)
		opt.metric[k] |= !any_metric;
	opt.any_named |= !any_metric;
	if (opt.md_file != NULL)
		check_md_file(argc, argv);
}

int
main(int argc, char *argv[])
{
	/*
	 * The run's state: main's own, passed to every function that needs it.
	 * Static so that what it holds stays reachable until the process ends,
	 * which frees it (the program never frees its cohorts one by one).
	 */
	static struct run state = { .cs = COHORTS_INIT, .st = CHANGE_STATE_INIT };
	struct run *run = &state;
	bool trouble = false, worse = false;
	buf md = BUF_INIT;	/* the Markdown table of --md and --md-file */
	size_t i;

	git_askpass_main(argc, argv);
	err_init(argv[0]);
	parse_options(argc, argv);
	run->keys = cohort_keyset();
	run->cs.finish = finish;
	run->cs.arg = run;
	run->stats = getenv("PERF_CHANGES_STATS") != NULL;
	/* Undocumented, for the tests: spill points held past this many bytes. */
	if (getenv("PERF_CHANGES_SPILL") != NULL)
		run->cs.spill_at = (size_t)strtoull(getenv("PERF_CHANGES_SPILL"), NULL, 10);
	/* The cohorts of --batch and the saved state are needed while reading. */
	if (opt.batch != NULL)
		trouble |= read_batch(run) != 0;
	if (opt.state != NULL) {
		cJSON *head = change_state_header(opt.window, opt.pvalue, opt.all);
		change_state_load(&run->st, opt.state, head);
		cJSON_Delete(head);
	}
	run->cs.by_unit = opt.store.spec != NULL && opt.store.nhistories == 0 && optind == argc;
	if ((opt.store.spec != NULL || opt.store.nhistories > 0) && read_store(run) != 0)
		return EXIT_TROUBLE;
	if (optind < argc || (opt.store.spec == NULL && opt.store.nhistories == 0))
		trouble |= read_records(run, argv + optind, argc - optind) != 0;
	cohort_analyse_all(&run->cs);
	if (run->cs.n > 1)
		qsort(run->cs.c, run->cs.n, sizeof *run->cs.c, cmp_cohort);
	if (opt.state != NULL) {
		cJSON *head = change_state_header(opt.window, opt.pvalue, opt.all);
		change_state_line(&run->st.out, head);
		cJSON_Delete(head);
	}
	gather(run);
	/* A tentative change point is reported, never gated. */
	for (i = 0; i < run->nfound; i++)
		worse |= run->found[i].worse && !run->found[i].tentative &&
		    decision_of(&run->found[i]) == NULL;
	if (opt.md || opt.md_file != NULL)
		md_table(run, &md);
	if (opt.md)
		fwrite(md.s, 1, md.len, stdout);
	else
		for (i = 0; i < run->nfound; i++) {
			cJSON *o = found_json(&run->found[i]);
			jsonl_emit(stdout, o, NULL);
			cJSON_Delete(o);
		}
	decisions_free(&decisions);
	bisect_reports_free(&reports);
	if (opt.state != NULL &&
	    atomic_save("incremental state", opt.state, run->st.out.s, run->st.out.len) != 0)
		trouble = true;
	/* The table --md would print, whole or not at all. */
	if (opt.md_file != NULL && atomic_save("Markdown table", opt.md_file, md.s, md.len) != 0)
		trouble = true;
	buf_free(&md);
	/* Undocumented, for the tests and the bench: what the analysis did. */
	if (run->stats)
		warnx("analysis %.3f ms CPU; the merges compared %zu segments, reused %zu",
		    run->analysis_s * 1000, run->compared, run->reused);
	if (jsonl_finish(stdout, "standard output") != 0 || trouble)
		return EXIT_TROUBLE;
	return worse ? EXIT_GATE : EXIT_PASS;
}
