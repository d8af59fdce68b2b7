/*
 * perf-gate-rolling: the rolling-baseline gate. Each normalized record is
 * compared with the median of the last five trusted records of its exact
 * comparison cohort in the history store, and gets the reference's status
 * (perf-gate-rolling(1)): PASS, REGRESSION, CALIBRATION_NEEDED,
 * RECIPE_MISMATCH or INFRA_ERROR, with its reason, final success and
 * baseline eligibility, and a transient "comparison" object for
 * perf-summarize. The whole batch is compared with the history as it was
 * before the batch. Named metrics (lane/named_metric.h) are compared as
 * the six are, each with its own policy, after them.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/git.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/num.h"
#include "core/opt.h"
#include "core/stats.h"
#include "core/text.h"
#include "core/unit.h"
#include "lane/decision.h"
#include "lane/history.h"
#include "lane/identity.h"
#include "lane/named_metric.h"
#include "lane/policy.h"
#include "lane/sensitivity.h"
#include "lane/store/read.h"
#include "lane/store/store_opts.h"

#define BASELINE_WINDOW 5
#define NOISE_WINDOW 20	/* default of --noise-window */
#define CONFIDENCE 0.99	/* default of --confidence */
#define Z_THRESHOLD 5.0	/* default of --z: Conbench's lookback z-score boundary */

static struct {
	struct store_opts store;	/* -s, --cache, -H */
	const char *artifacts;
	const char *rc_text;	/* the collector's status as given, or NULL */
	bool collect_failed;
	long noise_window;	/* trusted records the noise is measured on */
	double power;		/* of the minimum detectable regression */
	enum sens_rule rule;	/* what decides a regression */
	double confidence;	/* of the prediction rule */
	double z;		/* threshold of the z-score rule */
} opt;

/* A record of the batch and what the history says about it. */
struct current {
	cJSON *rec;
	char *file;
	long line;
	char *model_id, *gpu_type;	/* Python str() of each */
	struct metric_policy pol[METRIC_COUNT];
	double cur[METRIC_COUNT];
	bool has_cur[METRIC_COUNT];
	struct identity id;
	cJSON *static_failures;		/* borrowed from rec, or NULL */
	struct history past;	/* its cohort's trusted records */
	char **fps;			/* recipe fingerprints of trusted mismatches */
	size_t nfps;
	/* The accepts in force on its cohort (perf-seed(1) accept), per metric. */
	const struct decision *accept[METRIC_COUNT];
	bool decided;			/* some metric has one */
	struct store_query trusted;	/* the store's rule of a trusted record */
	/*
	 * Its named metrics (strings borrowed from rec) and their policies.
	 * Metric index i of the helpers below is one of the six below
	 * METRIC_COUNT, named metric i - METRIC_COUNT from there.
	 */
	struct named_metric *nm;
	struct nm_policy *npol;
	size_t nnm;
	const struct decision **naccept;	/* the accept in force per named metric */
};

/* The store's decisions, read once with the history. */
static struct decisions decisions;

static const struct opt_def options[] = {
	STORE_OPT_STORE("the history store: a directory or git+URL"),
	STORE_OPT_CACHE_DIR("where the cache clones of git stores are (see perf-upload(1))"),
	STORE_OPT_HISTORY("file", "a history stream: the same records as JSON lines"),
	{ 0, "collect-rc", 'R', "n", "the exit status of the collection", NULL, NULL },
	{ 'a', "artifacts", 0, "dir", "also write each compared record to dir", NULL, NULL },
	{ 0, "noise-window", 'W', "n",
	    "how many of the cohort's last trusted records give the noise", NULL, NULL },
	{ 0, "power", 'P', "p", "the power of the minimum detectable regression", NULL, NULL },
	{ 0, "rule", 'U', "reference | prediction | zscore",
	    "what decides a regression (see Noise-aware rules)", NULL, NULL },
	{ 0, "confidence", 'F', "c",
	    "the one-sided confidence of the prediction rule", NULL, NULL },
	{ 0, "z", 'Z', "z", "the z threshold of the zscore rule (default 5)", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-gate-rolling [-s store] [--cache dir] [-H history.jsonl]\n"
	    "                         [--collect-rc n] [-a artifacts-dir]\n"
	    "                         [--noise-window n] [--power p]\n"
	    "                         [--rule reference|prediction|zscore]\n"
	    "                         [--confidence c] [--z z] [file ...]\n",
	.width = 26,
	.flags = 0,
	.opts = options,
};

/*
 * Reads the named metrics of a record of the batch and resolves their
 * policies, warning about each whose direction is unknown. 0, or -1 after
 * reporting a bad metrics object or policy block.
 */
static int
load_named(jsonl_reader *r, const jsonl_span *s, const cJSON *rec, struct current *c)
{
	const cJSON *block = json_get(json_get(rec, "regression_thresholds"), "metrics");
	const cJSON *id = json_get(rec, "model_id");
	char err[256], *bench, *key, *w;

	if ((c->nm = nm_parse(json_get(rec, "metrics"), &c->nnm, err, sizeof err)) == NULL) {
		jsonl_error(r, s, "%s", err);
		return -1;
	}
	if (nm_policy_check(block, err, sizeof err) != 0) {
		jsonl_error(r, s, "regression_thresholds.metrics%s%s", err[0] == '\'' ? "." : " ",
		    err);
		free(c->nm);
		c->nm = NULL;
		return -1;
	}
	if (c->nnm == 0)
		return 0;
	bench = id != NULL ? json_pystr_dup(id) : estrdup("unknown");
	c->npol = ecalloc(c->nnm, sizeof *c->npol);
	for (size_t j = 0; j < c->nnm; j++) {
		nm_policy_resolve(block, bench, &c->nm[j], &c->npol[j]);
		if (!c->npol[j].needs_direction)
			continue;
		key = nm_key(bench, c->nm[j].name);
		w = nm_unknown_warning(key, c->nm[j].unit);
		warnx("%s", w);
		free(w);
		free(key);
	}
	free(bench);
	return 0;
}

/* Reads a record of the batch. 0, or -1 after reporting it. */
static int
load_current(jsonl_reader *r, const jsonl_span *s, cJSON *rec,
    struct current *c)
{
	const cJSON *sf = json_get(rec, "static_failures"), *e;
	char bad[64];
	double d;

	memset(c, 0, sizeof *c);
	for (int i = 0; i < METRIC_COUNT; i++) {
		switch (policy_coerce(json_get(rec, metric_table[i].key), &d)) {
		case COERCE_NULL:
			break;
		case COERCE_OK:
			if (!isfinite(d)) {
				jsonl_error(r, s, "%s is not a finite number",
				    metric_table[i].key);
				return -1;
			}
			c->cur[i] = d;
			c->has_cur[i] = true;
			break;
		default:
			jsonl_error(r, s, "%s must be a number", metric_table[i].key);
			return -1;
		}
	}
	if (policy_merge(json_get(rec, "regression_thresholds"), c->pol, bad,
	    sizeof bad) != 0) {
		jsonl_error(r, s, "regression_thresholds.%s is not a finite number", bad);
		return -1;
	}
	if (sf != NULL) {
		if (!cJSON_IsArray(sf)) {
			jsonl_error(r, s, "static_failures must be an array of strings");
			return -1;
		}
		cJSON_ArrayForEach(e, sf)
			if (!cJSON_IsString(e)) {
				jsonl_error(r, s, "static_failures must be an array of strings");
				return -1;
			}
		c->static_failures = cJSON_GetArraySize(sf) > 0 ? (cJSON *)sf : NULL;
	}
	if (load_named(r, s, rec, c) != 0)
		return -1;
	c->rec = rec;
	c->file = estrdup(s->file);
	c->line = s->line;
	c->model_id = json_get(rec, "model_id") ? json_pystr_dup(json_get(rec, "model_id")) :
	    estrdup("unknown");
	c->gpu_type = json_get(rec, "gpu_type") ? json_pystr_dup(json_get(rec, "gpu_type")) :
	    estrdup("unknown");
	identity_of(rec, &c->id);
	return 0;
}

/*
 * What the comparison reads of a history record (beside the identity);
 * "metrics" and "recipe" (whose benchmark tells an imported suite's
 * benchmarks apart: identity_other_benchmark), the last two, only when a record
 * of the batch has named metrics.
 */
enum { WANTED_METRIC, WANTED_RECIPE_FP = WANTED_METRIC + METRIC_COUNT, WANTED_STATUS,
	WANTED_NAMED, WANTED_RECIPE, WANTED_KEYS };
static const char *wanted_keys[WANTED_KEYS] = { [WANTED_STATUS] = "comparison_status",
    [WANTED_NAMED] = "metrics", [WANTED_RECIPE] = "recipe" };

/* wanted_keys[] made whole from metric_table[] and identity_keys[]. */
static const char *const *
wanted(void)
{
	for (int i = 0; i < METRIC_COUNT; i++)
		wanted_keys[WANTED_METRIC + i] = metric_table[i].key;
	wanted_keys[WANTED_RECIPE_FP] = identity_keys[IDENTITY_RECIPE];
	return wanted_keys;
}

/* What the scan of the history is asked, and where the answers go. */
struct lookup {
	struct current *cur;
	size_t nq;	/* queries: two per record with a complete identity */
	int *owner;	/* query index -> record index */
	bool *is_cohort;	/* query index -> recipe-mismatch query */
};

/*
 * The values of c's named metrics in a history record, into a new array
 * (NaN: missing, not a finite number, or in another unit).
 */
static double *
named_values(const struct current *c, const cJSON *rec)
{
	const cJSON *metrics = json_get(rec, "metrics"), *e, *v, *u;
	double *out = emalloc(c->nnm * sizeof *out);
	size_t j, next = 0;

	for (j = 0; j < c->nnm; j++)
		out[j] = NAN;
	if (!cJSON_IsObject(metrics))
		return out;
	/* One pass over the record's metrics; the usual order is the batch's. */
	cJSON_ArrayForEach(e, metrics) {
		for (j = 0; j < c->nnm; j++) {
			size_t k = (next + j) % c->nnm;

			if (strcmp(c->nm[k].name, e->string) == 0) {
				j = k;
				break;
			}
		}
		if (j == c->nnm)
			continue;
		next = j + 1;
		v = json_get(e, "value");
		u = json_get(e, "unit");
		if (cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
		    strcmp(cJSON_IsString(u) ? u->valuestring : "", c->nm[j].unit) == 0)
			out[j] = v->valuedouble;
	}
	return out;
}

/*
 * A record of a cohort with an accept: each metric keeps it when the
 * accept's baseline admits it (or, without an accept, the store's rule),
 * each named metric as its own accept (perf-seed accept --metric NAME)
 * or the store's rule says.
 */
static struct hist_point *
add_decided(struct current *c, const struct store_hit *h)
{
	bool trusted = store_query_matches(&c->trusted, h->record), in[METRIC_COUNT], any = false;
	bool *nin = c->nnm > 0 ? emalloc(c->nnm * sizeof *nin) : NULL, anyn = false;
	struct hist_point *p;

	for (int m = 0; m < METRIC_COUNT; m++) {
		in[m] = c->accept[m] != NULL ? decision_admits(c->accept[m], h->instant, h->path,
		    h->record, trusted) : trusted;
		any = any || in[m];
	}
	for (size_t j = 0; j < c->nnm; j++) {
		nin[j] = c->naccept[j] != NULL ? decision_admits(c->naccept[j], h->instant,
		    h->path, h->record, trusted) : trusted;
		anyn = anyn || nin[j];
	}
	if (!(any || anyn) || (p = history_add(&c->past, h)) == NULL) {
		free(nin);
		return NULL;
	}
	for (int m = 0; m < METRIC_COUNT; m++)
		p->has[m] = p->has[m] && in[m];
	if (c->nnm > 0) {
		/* Named values of a record their baseline does not admit: none. */
		p->named = named_values(c, h->record);
		for (size_t j = 0; j < c->nnm; j++)
			if (!nin[j])
				p->named[j] = NAN;
	}
	free(nin);
	return p;
}

/* The accepts in force on each record's cohort, from the store st. */
static int
load_decisions(store *st, struct current *cur, size_t n)
{
	const char *root = store_root(st);

	if (root == NULL)
		return 0;
	if (decisions_load(root, &decisions) != 0)
		return -1;
	for (size_t i = 0; i < n && decisions.n > 0; i++) {
		if (!cur[i].id.complete)
			continue;
		for (int m = 0; m < METRIC_COUNT; m++) {
			cur[i].accept[m] = decisions_accept(&decisions, cur[i].id.value, m);
			cur[i].decided = cur[i].decided || cur[i].accept[m] != NULL;
		}
		if (cur[i].nnm > 0)
			cur[i].naccept = ecalloc(cur[i].nnm, sizeof *cur[i].naccept);
		for (size_t j = 0; j < cur[i].nnm; j++) {
			cur[i].naccept[j] = decisions_accept_named(&decisions, cur[i].id.value,
			    cur[i].nm[j].name);
			cur[i].decided = cur[i].decided || cur[i].naccept[j] != NULL;
		}
	}
	return 0;
}

static void
on_hit(const struct store_hit *h, void *ctx)
{
	struct lookup *lk = ctx;

	for (size_t q = 0; q < lk->nq; q++) {
		struct current *c = &lk->cur[lk->owner[q]];
		struct hist_point *p;

		if (!h->match[q])
			continue;
		if (lk->is_cohort[q]) {
			if (!identity_other_benchmark(c->rec, h->record))
				identity_add_other_recipe(h->record, c->id.value[IDENTITY_RECIPE], &c->fps,
				    &c->nfps);
			continue;
		}
		p = c->decided ? add_decided(c, h) : history_add(&c->past, h);
		if (p != NULL && c->nnm > 0 && p->named == NULL)
			p->named = named_values(c, h->record);
	}
}

/*
 * Reads the history once for the whole batch: two queries per record with
 * a complete identity. Returns -1 when the store could not be read; sets
 * *raised when every lookup fails (the reference's loader exception).
 */
static int
lookup_history(struct current *cur, size_t n, char **raised)
{
	struct store_query *q = ecalloc(2 * n + 1, sizeof *q);
	struct lookup lk = { cur, 0, ecalloc(2 * n + 1, sizeof(int)),
	    ecalloc(2 * n + 1, sizeof(bool)) };
	store *st;
	int rc = 0;
	bool named = false;

	*raised = NULL;
	/* Records without a complete identity never read the history. */
	for (size_t i = 0; i < n; i++) {
		if (!cur[i].id.complete)
			continue;
		lk.owner[lk.nq] = lk.owner[lk.nq + 1] = (int)i;
		lk.is_cohort[lk.nq + 1] = true;
		named = named || cur[i].nnm > 0;
		store_identity_queries(cur[i].id.value, &q[lk.nq], &q[lk.nq + 1]);
		lk.nq += 2;
	}
	if (lk.nq > 0) {
		if ((st = store_open_cache(opt.store.spec, opt.store.cache)) == NULL)
			rc = -1;
		else {
			store_want(st, wanted(), named ? WANTED_KEYS : WANTED_NAMED);
			/* Decisions that cannot be read: no cohort is decided, nothing scanned. */
			rc = load_decisions(st, cur, n);
			/* A cohort with an accept is read whole: the accept decides. */
			for (size_t j = 0; j < lk.nq; j += 2) {
				/* Other recipes: one record of each is enough. */
				q[j + 1].distinct = true;
				if (cur[lk.owner[j]].decided) {
					cur[lk.owner[j]].trusted = q[j];
					q[j].successful_only = q[j].eligible_only = false;
				} else {
					/* The window and the noise: the newest records alone. */
					q[j].newest = opt.noise_window > BASELINE_WINDOW ?
					    (int)opt.noise_window : BASELINE_WINDOW;
				}
			}
			for (int h = 0; h < opt.store.nhistories; h++)
				store_add_stream(st, opt.store.histories[h]);
			if (rc == 0)
				rc = store_scan(st, q, (int)lk.nq, on_hit, &lk, raised);
			store_close(st);
		}
	}
	free(q);
	free(lk.owner);
	free(lk.is_cohort);
	return rc;
}

/* Appends a float, or null for a missing value. */
static cJSON *
num_or_null(bool has, double v)
{
	return has ? json_new_float(v) : json_new_null();
}

/*
 * Metric index i (see struct current): one of the six, or a named
 * metric. These read either the same way.
 */

/* Metric i's value in the cohort's history point k; false when missing. */
static bool
past_value(const struct current *c, size_t k, int i, double *v)
{
	const struct hist_point *p = &c->past.p[k];

	if (i < METRIC_COUNT) {
		*v = p->v[i];
		return p->has[i];
	}
	if (p->named == NULL || isnan(p->named[i - METRIC_COUNT]))
		return false;
	*v = p->named[i - METRIC_COUNT];
	return true;
}

/* Metric i's value in the record; false when missing. */
static bool
cur_value(const struct current *c, int i, double *v)
{
	const struct named_metric *m;

	if (i < METRIC_COUNT) {
		*v = c->cur[i];
		return c->has_cur[i];
	}
	m = &c->nm[i - METRIC_COUNT];
	*v = m->value;
	return m->has_value;
}

/* Metric i's percent and absolute floors and whether it is gated. */
static struct metric_policy
policy_of(const struct current *c, int i)
{
	const struct nm_policy *p;

	if (i < METRIC_COUNT)
		return c->pol[i];
	p = &c->npol[i - METRIC_COUNT];
	return (struct metric_policy){ p->threshold_percent, p->threshold_absolute, p->gated };
}

static enum better
better_of(const struct current *c, int i)
{
	if (i < METRIC_COUNT)
		return metric_table[i].higher_is_better ? BETTER_HIGHER : BETTER_LOWER;
	return c->npol[i - METRIC_COUNT].better;
}

/* A value of metric i as the failure strings write it. */
static char *
value_text(char b[NUM_BUFSZ], const struct current *c, int i, double v)
{
	if (i < METRIC_COUNT)
		return num_fixed(b, v, metric_table[i].precision);
	return unit_format(b, v, c->nm[i - METRIC_COUNT].unit);
}

static const char *
metric_name(const struct current *c, int i)
{
	return i < METRIC_COUNT ? metric_table[i].key : c->nm[i - METRIC_COUNT].name;
}

/*
 * The values of metric i in the last opt.noise_window trusted records of
 * the cohort, oldest first, into a new array; *n gets their count.
 */
static double *
noise_values(const struct current *c, int i, size_t *n)
{
	size_t first = c->past.n > (size_t)opt.noise_window ?
	    c->past.n - (size_t)opt.noise_window : 0;
	double *v = emalloc((c->past.n + 1) * sizeof *v);

	*n = 0;
	for (size_t k = first; k < c->past.n; k++)
		if (past_value(c, k, i, &v[*n]))
			(*n)++;
	return v;
}

/*
 * The sensitivity of metric i (nb values in its baseline median): the
 * noise of the last opt.noise_window trusted records of the cohort, the
 * rule's false-alarm rate and minimum detectable regression there, and
 * the advice (lane/sensitivity.h). Never stored: only in the comparison
 * object. A metric of unknown direction has its noise only.
 */
static void
sensitivity_of(const struct current *c, int i, size_t nb, struct sens_noise *ns,
    struct sens_report *rp)
{
	size_t n;
	double *v = noise_values(c, i, &n);
	struct metric_policy p = policy_of(c, i);
	struct sens_gate g = { p.threshold_percent, p.threshold_absolute,
	    better_of(c, i) == BETTER_HIGHER, nb };

	sens_noise_of(v, n, ns);
	free(v);
	memset(rp, 0, sizeof *rp);
	rp->advice = SENS_UNKNOWN;
	if (better_of(c, i) != BETTER_UNKNOWN)
		sens_assess(ns, &g, opt.power, rp);
}

/* The sensitivity's keys of a metric's comparison object. */
static void
add_sensitivity(cJSON *o, const struct sens_noise *ns, const struct sens_report *rp)
{
	bool known = rp->advice != SENS_UNKNOWN;
	bool advised = rp->advice == SENS_NOISY || rp->advice == SENS_BLIND;
	cJSON *no = json_new_object(), *so = json_new_object();

	json_set(no, "relative_spread", num_or_null(ns->known, ns->spread));
	json_set(no, "n", json_new_int((long long)ns->n));
	json_set(no, "level_spread", num_or_null(ns->known, ns->level_spread));
	json_set(no, "shift", ns->known ? json_new_bool(ns->shift) : json_new_null());
	json_set(no, "unknown_reason", ns->known ? json_new_null() :
	    json_new_string(sens_noise_why(ns->why)));
	json_set(o, "noise", no);
	json_set(o, "false_alarm_rate", num_or_null(known, rp->far));
	json_set(o, "mde_percent", num_or_null(known, rp->mde));
	json_set(so, "advice", json_new_string(sens_advice_name(rp->advice)));
	json_set(so, "power", json_new_float(opt.power));
	json_set(so, "suggested_threshold_percent", num_or_null(advised, rp->floor_percent));
	json_set(so, "suggested_threshold_absolute", num_or_null(advised, rp->floor_absolute));
	json_set(so, "suggested_mde_percent", num_or_null(advised, rp->floor_mde));
	json_set(o, "sensitivity", so);
}

/*
 * The noise-aware rule's verdict on metric i (opt.rule other than the
 * reference): false when it cannot judge, and the reference rule decides.
 */
static bool
rule_verdict(const struct current *c, int i, double cur, struct sens_verdict *vd)
{
	size_t n;
	double *v = noise_values(c, i, &n);
	bool ok = sens_rule_check(opt.rule, v, n, cur, better_of(c, i) == BETTER_HIGHER,
	    opt.rule == SENS_RULE_ZSCORE ? opt.z : opt.confidence, vd);

	free(v);
	return ok;
}

/* The rule's words after the reference's in a failure string. */
static char *
rule_words(const struct current *c, int i, const struct sens_verdict *vd)
{
	char a[NUM_BUFSZ], b[NUM_BUFSZ];

	if (opt.rule == SENS_RULE_ZSCORE)
		return easprintf("rule=zscore, z=%s over %s against the last %zu runs",
		    num_fixed(a, vd->z, 2), num_fixed(b, opt.z, 2), vd->n);
	return easprintf("rule=prediction, past the %s%% prediction bound %s of the "
	    "last %zu runs", num_fixed(a, opt.confidence * 100, 1),
	    value_text(b, c, i, vd->limit), vd->n);
}

/* The comparison of one metric with the baseline window. */
struct metric_cmp {
	size_t nv;		/* values in the baseline median */
	double cur, base, abs_d, pct;
	bool has_cur, has_base, has_delta, exceeded, regressed;
	bool by_rule;		/* the noise-aware rule decided (vd) */
	struct sens_verdict vd;
	struct sens_noise ns;
	struct sens_report rp;
};

/*
 * Compares metric i with the baseline window from the record at first.
 * A metric of unknown direction gets its change (current - baseline) and
 * never exceeds.
 */
static void
compare_metric(const struct current *c, size_t first, int i, struct metric_cmp *mc)
{
	struct metric_policy p = policy_of(c, i);
	enum better dir = better_of(c, i);
	double vals[BASELINE_WINDOW];

	mc->nv = 0;
	for (size_t k = first; k < c->past.n && mc->nv < BASELINE_WINDOW; k++)
		if (past_value(c, k, i, &vals[mc->nv]))
			mc->nv++;
	mc->has_cur = cur_value(c, i, &mc->cur);
	mc->has_base = mc->nv > 0;
	mc->base = mc->has_base ? stats_median(vals, mc->nv) : 0;
	mc->has_delta = mc->has_base && mc->base > 0 && mc->has_cur;
	mc->abs_d = mc->pct = 0;
	mc->exceeded = mc->regressed = mc->by_rule = false;
	if (mc->has_delta) {
		mc->abs_d = dir == BETTER_HIGHER ? mc->base - mc->cur : mc->cur - mc->base;
		mc->pct = mc->abs_d / mc->base;
		mc->exceeded = dir != BETTER_UNKNOWN && mc->pct > p.threshold_percent &&
		    mc->abs_d > p.threshold_absolute;
		if (dir != BETTER_UNKNOWN && opt.rule != SENS_RULE_REFERENCE &&
		    rule_verdict(c, i, mc->cur, &mc->vd)) {
			mc->by_rule = true;
			mc->exceeded = mc->vd.exceeded;
		}
		mc->regressed = p.gated && mc->exceeded;
	}
	sensitivity_of(c, i, mc->nv, &mc->ns, &mc->rp);
}

/* Metric i's object of the comparison. */
static cJSON *
metric_json(const struct current *c, int i, const struct metric_cmp *mc)
{
	struct metric_policy p = policy_of(c, i);
	cJSON *o = json_new_object();

	if (i >= METRIC_COUNT) {
		const struct nm_policy *np = &c->npol[i - METRIC_COUNT];
		static const char *const from[] = { "none", "record", "config", "unit" };

		json_set(o, "unit", json_new_string(c->nm[i - METRIC_COUNT].unit));
		json_set(o, "better", json_new_string(better_name(np->better)));
		json_set(o, "better_from", json_new_string(from[np->source]));
	}
	json_set(o, "current", num_or_null(mc->has_cur, mc->cur));
	json_set(o, "baseline", num_or_null(mc->has_base, mc->base));
	json_set(o, "absolute_delta", num_or_null(mc->has_delta, mc->abs_d));
	json_set(o, "percent_delta", num_or_null(mc->has_delta, mc->pct));
	json_set(o, "threshold_percent", json_new_float(p.threshold_percent));
	json_set(o, "threshold_absolute", json_new_float(p.threshold_absolute));
	json_set(o, "gated", json_new_bool(p.gated));
	json_set(o, "threshold_exceeded", json_new_bool(mc->exceeded));
	json_set(o, "regressed", json_new_bool(mc->regressed));
	if (opt.rule != SENS_RULE_REFERENCE) {
		json_set(o, "rule", json_new_string(sens_rule_name(mc->by_rule ? opt.rule :
		    SENS_RULE_REFERENCE)));
		json_set(o, "bound", num_or_null(mc->by_rule, mc->vd.limit));
		if (opt.rule == SENS_RULE_ZSCORE)
			json_set(o, "z", num_or_null(mc->by_rule, mc->vd.z));
	}
	add_sensitivity(o, &mc->ns, &mc->rp);
	return o;
}

/* The rolling failure string of regressed metric i. */
static char *
regression_words(const struct current *c, int i, const struct metric_cmp *mc)
{
	struct metric_policy p = policy_of(c, i);
	char a[NUM_BUFSZ], b[NUM_BUFSZ], d[NUM_BUFSZ], e[NUM_BUFSZ], f[NUM_BUFSZ];
	char g[NUM_BUFSZ];
	char *words = mc->by_rule ? rule_words(c, i, &mc->vd) : easprintf(">%s%% and >%s",
	    num_fixed(f, p.threshold_percent * 100, 1),
	    value_text(g, c, i, p.threshold_absolute));
	char *msg = easprintf("%s %s regressed by %s%% and %s (current=%s, "
	    "baseline_median=%s, threshold=gated, %s)", c->model_id,
	    metric_name(c, i), num_fixed(a, mc->pct * 100, 1), value_text(b, c, i, mc->abs_d),
	    value_text(d, c, i, mc->cur), value_text(e, c, i, mc->base), words);

	free(words);
	return msg;
}

/*
 * A cohort with an accept: where metric i's window starts, the last
 * BASELINE_WINDOW records that hold it for the accept; *k gets how many.
 */
static size_t
metric_first(const struct current *c, int i, size_t *k)
{
	size_t first = c->past.n;
	double v;

	*k = 0;
	for (size_t j = c->past.n; j-- > 0 && *k < BASELINE_WINDOW;)
		if (past_value(c, j, i, &v)) {
			first = j;
			(*k)++;
		}
	return first;
}

/*
 * Compares with the baseline window: fills the per-metric parts of the
 * comparison object (the six in metrics, the named ones in named) and
 * appends the rolling failure strings, the six's first.
 */
static void
compare_window(struct current *c, size_t first, cJSON *metrics, cJSON *named,
    cJSON *rolling)
{
	struct metric_cmp mc;
	int all = METRIC_COUNT + (int)c->nnm;

	for (int i = 0; i < all; i++) {
		size_t k;

		compare_metric(c, c->decided ? metric_first(c, i, &k) : first, i, &mc);
		json_set(i < METRIC_COUNT ? metrics : named, metric_name(c, i),
		    metric_json(c, i, &mc));
		if (mc.regressed) {
			char *msg = regression_words(c, i, &mc);

			json_append(rolling, json_new_string(msg));
			free(msg);
		}
	}
}

/* Metric entries without a baseline. */
static void
no_window(struct current *c, cJSON *metrics, cJSON *named)
{
	size_t save = c->past.n;

	c->past.n = 0;
	compare_window(c, 0, metrics, named, NULL);
	c->past.n = save;
}

static char *
join(const cJSON *arr, const char *sep)
{
	buf b = BUF_INIT;
	const cJSON *e;

	cJSON_ArrayForEach(e, arr)
		buf_addf(&b, "%s%s", b.len ? sep : "", e->valuestring);
	return buf_detach(&b);
}

/* The record's baseline_status: how its history was read (n: baseline records). */
static const char *
baseline_status(const struct current *c, const char *raised, size_t n)
{
	if (!c->id.complete)
		return c->id.uses_v2 ? "invalid_identity" : "skipped_missing_identity";
	if (raised != NULL)
		return "infra_error";
	if (n > 0)
		return "compared";
	return c->nfps > 0 ? "recipe_mismatch" : "initialized_new_cohort";
}

/*
 * The comparison status of a record with n baseline records, and its
 * reason (a new string) in *reason; the static or rolling failure strings
 * that decide it are appended to failures.
 */
static const char *
comparison_status(struct current *c, bool unattributed, const char *raised, size_t n,
    const cJSON *rolling, cJSON *failures, char **reason)
{
	const cJSON *e;
	buf b = BUF_INIT;

	if (c->id.complete && raised != NULL) {
		*reason = easprintf("%s baseline comparison hit an infra error: %s",
		    c->model_id, raised);
		return "INFRA_ERROR";
	}
	if (!c->id.complete && c->id.uses_v2) {
		*reason = easprintf("%s cannot compare v2 record: %s", c->model_id,
		    c->id.error);
		return "INFRA_ERROR";
	}
	if (c->id.complete && n == 0 && c->nfps > 0) {
		qsort(c->fps, c->nfps, sizeof *c->fps, text_cmp_ptr);
		for (size_t i = 0; i < c->nfps; i++)
			buf_addf(&b, "%s%s", i ? ", " : "", c->fps[i]);
		*reason = easprintf("%s recipe_fingerprint=%s does not match baseline "
		    "records for the same workload, variant, and benchmark version "
		    "across hardware and software profiles; existing "
		    "recipe_fingerprint values: %s", c->model_id,
		    c->id.value[IDENTITY_RECIPE], b.s);
		buf_free(&b);
		return "RECIPE_MISMATCH";
	}
	if (c->static_failures != NULL) {
		cJSON_ArrayForEach(e, c->static_failures)
			json_append(failures, json_new_string(e->valuestring));
		*reason = join(failures, "; ");
		return "REGRESSION";
	}
	if (unattributed) {
		*reason = easprintf("%s performance pytest failed without an "
		    "attributable static-threshold regression (PERF_PYTEST_RC=%s)",
		    c->model_id, opt.rc_text);
		return "INFRA_ERROR";
	}
	if (n == 0 && c->id.complete) {
		buf_adds(&b, "No baseline found for exact comparable identity (");
		for (int k = 0; k < IDENTITY_KEYS; k++)
			buf_addf(&b, "%s%s=%s", k ? ", " : "", identity_keys[k], c->id.value[k]);
		buf_adds(&b, ")");
		*reason = buf_detach(&b);
		return "CALIBRATION_NEEDED";
	}
	if (n == 0) {
		*reason = easprintf("No legacy baseline for %s on %s", c->model_id,
		    c->gpu_type);
		return "PASS";
	}
	if (cJSON_GetArraySize(rolling) > 0) {
		cJSON_ArrayForEach(e, rolling)
			json_append(failures, json_new_string(e->valuestring));
		*reason = join(failures, "; ");
		return "REGRESSION";
	}
	*reason = estrdup("Comparable baseline found with no gated regressions");
	return "PASS";
}

/* A cohort with an accept: the records of its largest metric window. */
static size_t
decided_n(const struct current *c)
{
	size_t n = 0, k;

	for (int i = 0; i < METRIC_COUNT + (int)c->nnm; i++) {
		metric_first(c, i, &k);
		n = k > n ? k : n;
	}
	return n;
}

/*
 * The comparison's "baseline_since" for a cohort with an accept: the
 * accept of the latest record among its metrics, and the metrics it holds.
 */
static cJSON *
baseline_since(const struct current *c)
{
	const struct decision *a = NULL;
	cJSON *o = json_new_object(), *metrics = json_new_array(), *named = json_new_array();

	for (int i = 0; i < METRIC_COUNT + (int)c->nnm; i++) {
		const struct decision *x = i < METRIC_COUNT ? c->accept[i] :
		    c->naccept[i - METRIC_COUNT];

		if (x != NULL && (a == NULL || decision_order(x->record_instant, x->record,
		    a->record_instant, a->record) > 0))
			a = x;
	}
	for (int i = 0; i < METRIC_COUNT; i++)
		if (c->accept[i] == a)
			json_append(metrics, json_new_string(metric_table[i].key));
	for (size_t j = 0; j < c->nnm; j++)
		if (c->naccept[j] == a)
			json_append(named, json_new_string(c->nm[j].name));
	json_set(o, "decision", json_new_string(a->id));
	json_set(o, "record", json_new_string(a->record));
	json_set(o, "timestamp", a->record_timestamp != NULL ?
	    json_new_string(a->record_timestamp) : json_new_null());
	json_set(o, "by", json_new_string(a->by));
	json_set(o, "reason", json_new_string(a->reason));
	json_set(o, "metrics", metrics);
	/* Only when an accept on a named metric starts it: the rest stay as they were. */
	if (cJSON_GetArraySize(named) > 0)
		json_set(o, "named_metrics", named);
	else
		cJSON_Delete(named);
	return o;
}

/* Says why a record without a complete identity is not compared. */
static void
say_incomplete(const struct current *c)
{
	if (c->id.uses_v2)
		fprintf(stderr, "Invalid v2 comparison identity for %s: %s\n",
		    c->model_id, c->id.error);
	else
		fprintf(stderr, "Skipping rolling baseline comparison for %s on %s: "
		    "%s. The normalized artifact will still be written, but this "
		    "record will not be baseline eligible.\n", c->model_id,
		    c->gpu_type, c->id.error);
}

/*
 * Classifies one record, sets its keys, and appends its failure
 * strings to all_failures. raised: the history could not be read for it.
 */
static void
classify(struct current *c, bool unattributed, const char *raised,
    cJSON *all_failures)
{
	cJSON *failures = json_new_array(), *rolling = json_new_array();
	cJSON *metrics = json_new_object(), *cmp = json_new_object(), *e;
	cJSON *named = json_new_object();
	const char *status, *bstatus;
	char *reason = NULL;
	size_t first = 0, n = 0;

	if (!c->id.complete)
		say_incomplete(c);
	if (c->id.complete && raised == NULL) {
		history_sort(&c->past);
		n = c->past.n < BASELINE_WINDOW ? c->past.n : BASELINE_WINDOW;
		first = c->past.n - n;
		if (c->decided)
			n = decided_n(c);
	}
	if (n > 0)
		compare_window(c, first, metrics, named, rolling);
	else
		no_window(c, metrics, named);
	bstatus = baseline_status(c, raised, n);
	status = comparison_status(c, unattributed, raised, n, rolling, failures, &reason);
	/* Statuses other than the static and rolling ones fail with their reason. */
	if (strcmp(status, "INFRA_ERROR") == 0 || strcmp(status, "RECIPE_MISMATCH") == 0)
		json_append(failures, json_new_string(reason));

	bool success = cJSON_GetArraySize(failures) == 0;
	const cJSON *rs = json_get(c->rec, "run_source");
	bool eligible = c->id.complete && strcmp(status, "PASS") == 0 && success &&
	    cJSON_IsString(rs) && strcmp(rs->valuestring, "scheduled_main") == 0;

	fprintf(stderr, "%s comparison status: %s - %s\n", c->model_id, status, reason);
	json_set(c->rec, "baseline_status", json_new_string(bstatus));
	json_set(c->rec, "comparison_status", json_new_string(status));
	json_set(c->rec, "comparison_status_reason", json_new_string(reason));
	json_set(c->rec, "success", json_new_bool(success));
	json_set(c->rec, "baseline_eligible", json_new_bool(eligible));
	cJSON_ArrayForEach(e, failures)
		json_append(all_failures, json_new_string(e->valuestring));
	json_set(cmp, "baseline_n", json_new_int((long long)n));
	if (c->decided && raised == NULL)
		json_set(cmp, "baseline_since", baseline_since(c));
	json_set(cmp, "metrics", metrics);
	/* Only a record with named metrics has the key: the rest stay as they were. */
	if (c->nnm > 0)
		json_set(cmp, "named_metrics", named);
	else
		cJSON_Delete(named);
	json_set(cmp, "failures", failures);
	json_set(c->rec, "comparison", cmp);
	cJSON_Delete(rolling);
	free(reason);
}

/* Writes the normalized artifact of a compared record. 0, or -1 (said). */
static int
write_artifact(const struct current *c)
{
	char *rel = store_record_path(c->rec), *path = NULL, *slash;
	buf text = BUF_INIT;
	int rc = -1;

	if (rel == NULL) {
		fprintf(stderr, "Failed to write normalized performance result artifact: "
		    "model_id, timestamp and commit_sha must be strings\n");
		goto done;
	}
	/* "<S(model_id)>/<rest>" in the store becomes "..._<S(model_id)>_<rest>" here. */
	slash = strchr(rel, '/');
	*slash = '_';
	path = easprintf("%s/normalized_perf_%s", opt.artifacts, rel);
	if (store_record_text(c->rec, &text, NULL) != 0 ||
	    atomic_mkdirs(opt.artifacts) != 0 ||
	    atomic_write_file(path, text.s, text.len) != 0) {
		fprintf(stderr, "Failed to write normalized performance result artifact: "
		    "%s: %s\n", path, strerror(errno));
		goto done;
	}
	fprintf(stderr, "Normalized performance result written to %s\n", path);
	rc = 0;
done:
	free(rel);
	free(path);
	buf_free(&text);
	return rc;
}

/* The collector's exit status, read as the reference reads PERF_PYTEST_RC. */
static void
collect_status(const char *text, bool strict)
{
	long long v;
	int k;

	opt.rc_text = text;
	if (text == NULL || *text == '\0')
		return;
	k = num_py_int(text, &v);
	if (k == 0 && strict) {
		warnx("--collect-rc: not an integer: '%s'", text);
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	opt.collect_failed = k != 0 && v != 0;
}

static void
free_current(struct current *c)
{
	for (size_t i = 0; i < c->nfps; i++)
		free(c->fps[i]);
	history_free(&c->past);
	free(c->fps);
	free(c->file);
	free(c->model_id);
	free(c->gpu_type);
	identity_free(&c->id);
	free(c->nm);
	free(c->npol);
	free(c->naccept);
	cJSON_Delete(c->rec);
}

/*
 * Reads the batch: *cur gets its records, *n their count, *static_any
 * whether one has static failures. 0, or -1 when a record was bad (said).
 */
static int
read_batch(char *const *paths, int npaths, struct current **cur, size_t *n,
    bool *static_any)
{
	jsonl_reader *r = jsonl_open(paths, npaths);
	jsonl_span s;
	cJSON *rec;
	int rc;

	*cur = NULL;
	*n = 0;
	*static_any = false;
	while ((rec = jsonl_next(r, &s)) != NULL) {
		*cur = erealloc(*cur, (*n + 1) * sizeof **cur);
		if (load_current(r, &s, rec, &(*cur)[*n]) == 0) {
			*static_any |= (*cur)[*n].static_failures != NULL;
			(*n)++;
		} else
			cJSON_Delete(rec);
	}
	rc = jsonl_errors(r) == 0 ? 0 : -1;
	jsonl_close(r);
	return rc;
}

/*
 * Classifies each record, writes its artifact and emits it, its failure
 * strings appended to failures. 0, or -1 when an artifact or a record
 * could not be written (said).
 */
static int
gate_batch(struct current *cur, size_t n, bool unattributed, const char *raised,
    cJSON *failures)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		classify(&cur[i], unattributed, raised, failures);
		if (opt.artifacts != NULL && write_artifact(&cur[i]) != 0)
			rc = -1;
		if (jsonl_emit(stdout, cur[i].rec, NULL) != 0) {
			diag(cur[i].file, cur[i].line, "cannot write the record: "
			    "not a finite number");
			rc = -1;
		}
		free_current(&cur[i]);
	}
	return rc;
}

/* The closing words: every failure string, or that the comparison passed. */
static void
say_failures(const cJSON *failures, size_t n)
{
	const cJSON *e;

	if (cJSON_GetArraySize(failures) > 0) {
		fprintf(stderr, "Performance regression check failed:\n");
		cJSON_ArrayForEach(e, failures)
			fprintf(stderr, "  - %s\n", e->valuestring);
	} else if (n > 0)
		fprintf(stderr, "Performance baseline comparison passed\n");
}

/* Reads the options into opt; exits on a usage error. True when --collect-rc was given. */
static bool
parse_options(int argc, char *argv[])
{
	bool rc_given = false;
	int c;

	opt.noise_window = NOISE_WINDOW;
	opt.power = 0.8;
	opt.confidence = CONFIDENCE;
	opt.z = Z_THRESHOLD;
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		if (store_opts_take(&opt.store, c, optarg))
			continue;
		switch (c) {
		case 'R': collect_status(optarg, true); rc_given = true; break;
		case 'a': opt.artifacts = optarg; break;
		case 'W':
			opt.noise_window = cli_long(opt_text(&option_table), "--noise-window",
			    optarg, SENS_MIN_RUNS, 100000, NULL);
			break;
		case 'P':
			opt.power = cli_double(opt_text(&option_table), "--power", optarg, 0.5,
			    0.999, NULL);
			break;
		case 'U':
			if (strcmp(optarg, "reference") == 0)
				opt.rule = SENS_RULE_REFERENCE;
			else if (strcmp(optarg, "prediction") == 0)
				opt.rule = SENS_RULE_PREDICTION;
			else if (strcmp(optarg, "zscore") == 0)
				opt.rule = SENS_RULE_ZSCORE;
			else {
				warnx("--rule: not reference, prediction or zscore: '%s'", optarg);
				opt_usage(&option_table, EXIT_TROUBLE);
			}
			break;
		case 'F':
			opt.confidence = cli_double(opt_text(&option_table), "--confidence", optarg,
			    0.5, 0.999999, NULL);
			break;
		case 'Z':
			opt.z = cli_double(opt_text(&option_table), "--z", optarg, 0.1, 100, NULL);
			break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
	return rc_given;
}

int
main(int argc, char *argv[])
{
	struct current *cur;
	size_t n, i;
	cJSON *failures;
	char *raised = NULL, *artifacts_default = NULL;	/* $PERF_REPORTS_DIR/results */
	bool static_any, unattributed, trouble, rc_given;
	const char *env;
	int rc;

	git_askpass_main(argc, argv);
	err_init(argv[0]);
	rc_given = parse_options(argc, argv);
	if ((opt.store.spec = store_spec(opt.store.spec)) == NULL)
		return EXIT_TROUBLE;
	if (!rc_given)
		collect_status(getenv("PERF_PYTEST_RC"), false);
	if (opt.artifacts == NULL && (env = getenv("PERF_REPORTS_DIR")) != NULL)
		opt.artifacts = artifacts_default = easprintf("%s/results", env);
	trouble = read_batch(argv + optind, argc - optind, &cur, &n,
	    &static_any) != 0;
	unattributed = opt.collect_failed && !static_any;
	if (opt.collect_failed)
		fprintf(stderr, "%s: PERF_PYTEST_RC=%s\n", unattributed ?
		    "Performance pytest failed without a measured static-threshold regression" :
		    "Performance pytest failure attributed to per-record static thresholds",
		    opt.rc_text);
	if (lookup_history(cur, n, &raised) != 0) {
		for (i = 0; i < n; i++)
			free_current(&cur[i]);
		free(cur);
		free(artifacts_default);
		return EXIT_TROUBLE;
	}
	failures = json_new_array();
	if (gate_batch(cur, n, unattributed, raised, failures) != 0)
		trouble = true;
	say_failures(failures, n);
	free(cur);
	free(raised);
	store_opts_free(&opt.store);
	decisions_free(&decisions);
	free(artifacts_default);
	if (jsonl_finish(stdout, "standard output") != 0 || trouble)
		rc = EXIT_TROUBLE;
	else
		rc = cJSON_GetArraySize(failures) > 0 ? EXIT_GATE : EXIT_PASS;
	cJSON_Delete(failures);
	return rc;
}
