/*
 * perf-summarize: what people read after a performance build. Compared
 * records in; the Markdown summary of the reference out, and
 * on request the report file, the HTML dashboard (self-contained),
 * a CSV of every metric, or the run-to-run stability of each cohort.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/csv.h"
#include "core/err.h"
#include "core/git.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/num.h"
#include "core/opt.h"
#include "core/stats.h"
#include "core/unit.h"
#include "core/xml.h"
#include "lane/cpoints.h"
#include "lane/dash.h"
#include "lane/history_view.h"
#include "lane/identity.h"
#include "lane/named_metric.h"
#include "lane/policy.h"
#include "lane/sensitivity.h"
#include "lane/site.h"
#include "lane/store/read.h"
#include "lane/store/store_opts.h"

static struct {
	struct store_opts store;	/* -s, --cache, -H */
	const char *reports;
	const char *html;
	const char *csv;
	long annotate_max;
	long days;
	int64_t now;
	bool dashboard, stability, json;
	bool decide;		/* --decide: the commands that decide failing rows */
	bool annotate_decide;	/* --annotate-decide: the accept commands, annotation only */
	const char *changes;	/* perf-changes output */
	const char *site_url;	/* --site-url: the published site (perf-site(1)) */
} opt;

/* What was read: the compared records and the change points of --changes. */
struct batch {
	cJSON **recs;
	size_t n;
	const cJSON **cps;
	size_t ncps;
};

static const struct opt_def options[] = {
	{ 'r', "reports-dir", 0, "dir", "write the report file into dir", NULL, NULL },
	{ 0, "annotate-max", 'A', "bytes",
	    "the largest summary written to standard output", NULL, NULL },
	{ 0, "csv", 'C', "file", "write one row per record and metric", NULL, NULL },
	{ 0, "html", 'W', "file", "write the dashboard to file", NULL, NULL },
	{ 0, "dashboard", 'D', NULL, "write the dashboard into the reports directory", NULL, NULL },
	STORE_OPT_STORE("the history store of the dashboard"),
	STORE_OPT_CACHE_DIR("where the cache clones of git stores are (see perf-upload(1))"),
	STORE_OPT_HISTORY("file", "a JSON-lines history stream, beside or instead of the store"),
	{ 'd', "days", 0, "n", "the dashboard's window", NULL, NULL },
	{ 0, "now", 'N', "time",
	    "the time the window ends (ISO 8601), for reproducible pages", NULL, NULL },
	{ 0, "changes", 'P', "file", "change points as perf-changes(1) writes them", NULL, NULL },
	{ 0, "decide", 'E', NULL,
	    "after the table, the perf-seed command that accepts or seeds each row", NULL, NULL },
	{ 0, "annotate-decide", 'G', NULL,
	    "the accept commands in the summary on standard output only", NULL, NULL },
	{ 0, "site-url", 'U', "url",
	    "the summary on standard output links the failures' cohort pages there", NULL, NULL },
	{ 0, "stability", 'S', NULL,
	    "instead of the summary, the run-to-run stability", NULL, NULL },
	{ 0, "json", 'J', NULL,
	    "with --stability: JSON lines instead of the Markdown table", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-summarize [-r reports-dir] [--annotate-max bytes] [--csv file]\n"
	    "                      [--html file] [--dashboard] [-s store] [--cache dir]\n"
	    "                      [-H history] [--days n] [--now time] [--changes file]\n"
	    "                      [--decide | --annotate-decide] [--site-url url] [file ...]\n"
	    "       perf-summarize --stability [--json] [file ...]\n",
	.width = 23,
	.flags = 0,
	.opts = options,
	/* getopt's order before the table, for an ambiguous abbreviation's message */
	.long_order =
	    "reports-dir annotate-max html dashboard csv store cache history days "
	    "now stability json changes decide annotate-decide site-url help "
	    "version",
};

static const char md_head[] =
    "## Performance Baseline Comparison\n"
    "\n"
    "Threshold: gated metrics fail only when both percent and absolute regression floors "
    "are exceeded.\n"
    "\n"
    "| Model | GPU | Baseline N | Latency (curr/base) | Throughput (curr/base) | "
    "Memory (curr/base) | Text Enc (curr/base) | DiT (curr/base) | VAE Decode (curr/base) | "
    "Worst Regression | Exceeded Metrics | Failing Metrics | Status | Status Detail |\n"
    "|---|---|---:|---|---|---|---|---|---|---:|---|---|---|---|\n";

/* str() of a key's value, "None" when absent or null. */
static void
pystr_key(buf *b, const cJSON *rec, const char *key)
{
	const cJSON *v = json_get(rec, key);

	if (v == NULL)
		buf_adds(b, "None");
	else
		json_pystr(b, v);
}

/* str() of a value in a cell ("" for NULL). */
static void
cell_text(buf *b, const cJSON *v)
{
	buf t = BUF_INIT;

	if (v != NULL)
		json_pystr(&t, v);
	xml_md_text(b, t.s);
	buf_free(&t);
}

/* str() of a key's value in a cell, "None" when absent or null. */
static void
cell_key(buf *b, const cJSON *rec, const char *key)
{
	buf t = BUF_INIT;

	pystr_key(&t, rec, key);
	xml_md_text(b, t.s);
	buf_free(&t);
}

static void
num_cell(buf *b, const cJSON *v, int prec)
{
	char t[NUM_BUFSZ];
	double d;

	if (policy_coerce(v, &d) != COERCE_OK)
		buf_adds(b, "n/a");
	else
		buf_adds(b, num_fixed(t, d, prec));
}

/* The first cells of a row of either table: model, GPU, the baseline's size. */
static void
row_head(buf *b, const cJSON *rec, const cJSON *cmp)
{
	const cJSON *v;

	buf_adds(b, "| ");
	cell_key(b, rec, "model_id");
	buf_adds(b, " | ");
	cell_key(b, rec, "gpu_type");
	buf_adds(b, " | ");
	if ((v = json_get(cmp, "baseline_n")) != NULL)
		cell_text(b, v);
	else
		buf_adds(b, "n/a");
}

/* One row of the summary's table. */
static void
md_row(buf *b, const cJSON *rec)
{
	const cJSON *cmp = json_get(rec, "comparison"), *ms = json_get(cmp, "metrics"), *m, *v;
	buf exceeded = BUF_INIT, failing = BUF_INIT;
	char t[NUM_BUFSZ];
	double worst = 0;
	bool any = false;
	int i;

	row_head(b, rec, cmp);
	for (i = 0; i < METRIC_COUNT; i++) {
		m = json_get(ms, metric_table[i].key);
		buf_adds(b, " | ");
		num_cell(b, json_get(rec, metric_table[i].key), metric_table[i].precision);
		buf_adds(b, " / ");
		num_cell(b, json_get(m, "baseline"), metric_table[i].precision);
		v = json_get(m, "percent_delta");
		if (cJSON_IsNumber(v) && (!any || v->valuedouble * 100 > worst)) {
			worst = v->valuedouble * 100;
			any = true;
		}
		if (cJSON_IsTrue(json_get(m, "threshold_exceeded")))
			buf_addf(&exceeded, "%s%s", exceeded.len ? ", " : "", metric_table[i].key);
		if (cJSON_IsTrue(json_get(m, "regressed")))
			buf_addf(&failing, "%s%s", failing.len ? ", " : "", metric_table[i].key);
	}
	buf_addf(b, " | %s%s | %s | %s | ", any ? num_fixed(t, worst, 1) : "n/a", any ? "%" : "",
	    exceeded.len ? exceeded.s : "none", failing.len ? failing.s : "none");
	cell_text(b, json_get(rec, "comparison_status"));
	buf_adds(b, " | ");
	cell_text(b, json_get(rec, "comparison_status_reason"));
	buf_adds(b, " |\n");
	buf_free(&exceeded);
	buf_free(&failing);
}

/*
 * Whether a record has only named metrics (issue 24): a "metrics" object
 * and none of the six. Its row is in the benchmarks' table, not the
 * reference's.
 */
static bool
named_only(const cJSON *rec)
{
	if (!cJSON_IsObject(json_get(rec, "metrics")))
		return false;
	for (int i = 0; i < METRIC_COUNT; i++) {
		const cJSON *v = json_get(rec, metric_table[i].key);

		if (v != NULL && !cJSON_IsNull(v))
			return false;
	}
	return true;
}

/*
 * The named metrics of a record (nm_parse(); none when they are invalid,
 * which perf-gate-rolling reports) and their policies (pol, when not NULL:
 * a new array, as the metrics).
 */
static struct named_metric *
named_of(const cJSON *rec, size_t *n, struct nm_policy **pol)
{
	const cJSON *block = json_get(json_get(rec, "regression_thresholds"), "metrics");
	const cJSON *bench = json_get(rec, "model_id");
	struct named_metric *ms;
	char err[256];

	if ((ms = nm_parse(json_get(rec, "metrics"), n, err, sizeof err)) == NULL)
		ms = ecalloc(1, sizeof *ms);
	if (pol == NULL)
		return ms;
	if (block != NULL && nm_policy_check(block, err, sizeof err) != 0)
		block = NULL;
	*pol = ecalloc(*n + 1, sizeof **pol);
	for (size_t i = 0; i < *n; i++)
		nm_policy_resolve(block, cJSON_IsString(bench) ? bench->valuestring : "None", &ms[i],
		    &(*pol)[i]);
	return ms;
}

/* The comparison of named metric name of a record (perf-gate-rolling(1)), or NULL. */
static const cJSON *
named_comparison(const cJSON *rec, const char *name)
{
	return json_get(json_get(json_get(rec, "comparison"), "named_metrics"), name);
}

/* A value of a named metric in its unit, scaled for display ("12.3 ns"), "n/a" for none. */
static void
unit_cell(buf *b, const cJSON *v, const char *unit)
{
	char t[UNIT_FMTSZ];

	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		buf_adds(b, "n/a");
	else
		xml_md_text(b, unit_format(t, v->valuedouble, unit));
}

/* A row of a benchmarks' table: a record and its named metrics, in the table's order. */
static void
named_row(buf *b, const cJSON *rec)
{
	const cJSON *cmp = json_get(rec, "comparison"), *v;
	buf failing = BUF_INIT;
	struct nm_policy *pol;
	size_t n;
	struct named_metric *ms = named_of(rec, &n, &pol);
	char t[NUM_BUFSZ];
	double worst = 0;
	bool any = false;

	row_head(b, rec, cmp);
	for (size_t i = 0; i < n; i++) {
		const cJSON *m = named_comparison(rec, ms[i].name);
		cJSON *cur = ms[i].has_value ? cJSON_CreateNumber(ms[i].value) : NULL;

		buf_adds(b, " | ");
		unit_cell(b, cur, ms[i].unit);
		buf_adds(b, " / ");
		unit_cell(b, json_get(m, "baseline"), ms[i].unit);
		cJSON_Delete(cur);
		v = json_get(m, "percent_delta");
		if (pol[i].better != BETTER_UNKNOWN && cJSON_IsNumber(v) &&
		    (!any || v->valuedouble * 100 > worst)) {
			worst = v->valuedouble * 100;
			any = true;
		}
		if (cJSON_IsTrue(json_get(m, "regressed"))) {
			buf_adds(&failing, failing.len ? ", " : "");
			xml_md_text(&failing, ms[i].name);
		}
	}
	buf_addf(b, " | %s%s | %s | ", any ? num_fixed(t, worst, 1) : "n/a", any ? "%" : "",
	    failing.len ? failing.s : "none");
	cell_text(b, json_get(rec, "comparison_status"));
	buf_adds(b, " | ");
	cell_text(b, json_get(rec, "comparison_status_reason"));
	buf_adds(b, " |\n");
	buf_free(&failing);
	free(ms);
	free(pol);
}

/* The names of a record's named metrics joined by \x1f: its table's columns. */
static char *
named_columns(const cJSON *rec)
{
	buf cols = BUF_INIT;
	size_t n;
	struct named_metric *ms = named_of(rec, &n, NULL);

	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			buf_addc(&cols, '\x1f');
		buf_adds(&cols, ms[i].name);
	}
	free(ms);
	buf_addc(&cols, '\0');
	return buf_detach(&cols);
}

/*
 * After the reference's table: the records with only named metrics, a
 * table for each set of metrics (their columns, in the order of the first
 * record with them), the tables in the order of their first record, and
 * a line naming each metric of unknown direction (shown, never gated).
 */
static void
md_named(buf *b, const struct batch *in)
{
	char **cols = ecalloc(in->n + 1, sizeof *cols);
	bool *done = ecalloc(in->n + 1, sizeof *done), any = false;
	const char **order = NULL;	/* names of unknown direction (few), and their rows */
	size_t *count = NULL, nu = 0;

	for (size_t i = 0; i < in->n; i++)
		if (named_only(in->recs[i]))
			cols[i] = named_columns(in->recs[i]);
	for (size_t i = 0; i < in->n; i++) {
		struct named_metric *ms;
		size_t n;

		if (cols[i] == NULL || done[i])
			continue;
		buf_adds(b, any ? "\n" : b->len > 0 ? "\n## Benchmarks\n\n" : "## Benchmarks\n\n");
		any = true;
		buf_adds(b, "| Benchmark | Device | Baseline N |");
		ms = named_of(in->recs[i], &n, NULL);
		for (size_t k = 0; k < n; k++) {
			buf_addc(b, ' ');
			xml_md_text(b, ms[k].name);
			buf_adds(b, " (curr/base) |");
		}
		free(ms);
		buf_adds(b, " Worst Regression | Failing Metrics | Status | Status Detail |\n|---|---|---:|");
		for (size_t k = 0; k < n; k++)
			buf_adds(b, "---|");
		buf_adds(b, "---:|---|---|---|\n");
		for (size_t j = i; j < in->n; j++)
			if (cols[j] != NULL && !done[j] && strcmp(cols[j], cols[i]) == 0) {
				struct nm_policy *pol;

				named_row(b, in->recs[j]);
				done[j] = true;
				ms = named_of(in->recs[j], &n, &pol);
				for (size_t k = 0; k < n; k++) {
					size_t u;

					if (pol[k].better != BETTER_UNKNOWN)
						continue;
					for (u = 0; u < nu && strcmp(order[u], ms[k].name) != 0; u++)
						;
					if (u == nu) {
						order = erealloc(order, (nu + 1) * sizeof *order);
						count = erealloc(count, (nu + 1) * sizeof *count);
						order[nu] = ms[k].name;
						count[nu++] = 0;
					}
					count[u]++;
				}
				free(ms);
				free(pol);
			}
	}
	for (size_t u = 0; u < nu; u++) {
		buf_adds(b, u == 0 ? "\nNo known direction, so shown and never gated: " : "; ");
		buf_adds(b, "`");
		xml_md_text(b, order[u]);
		buf_addf(b, "` (%zu row%s; its config key: `regression_thresholds.metrics.\"*/",
		    count[u], count[u] == 1 ? "" : "s");
		xml_md_text(b, order[u]);
		buf_adds(b, "\".better`)");
	}
	if (nu > 0)
		buf_adds(b, ".\n");
	for (size_t i = 0; i < in->n; i++)
		free(cols[i]);
	free(cols);
	free(done);
	free(order);
	free(count);
}

/* A value of one of the six at its precision (unit NULL), or of a named metric in its unit. */
static void
value_cell(buf *b, const cJSON *v, int prec, const char *unit)
{
	if (unit == NULL)
		num_cell(b, v, prec);
	else
		unit_cell(b, v, unit);
}

/* A fraction as "<x*100:.1f>%" in a cell, "n/a" when not a number. */
static void
pct_cell(buf *b, const cJSON *v)
{
	char t[NUM_BUFSZ];
	double d;

	if (policy_coerce(v, &d) != COERCE_OK || !isfinite(d))
		buf_adds(b, "n/a");
	else
		buf_addf(b, "%s%%", num_fixed(t, d * 100, 1));
}

/* True when v is a string equal to text. */
static bool
is_string(const cJSON *v, const char *text)
{
	return cJSON_IsString(v) && strcmp(v->valuestring, text) == 0;
}

/*
 * Whether metric m had no run-to-run spread where its floors would be
 * blind even without noise: an absolute floor over twice the percent
 * floor at the baseline (0.25 s on a 0.6 s stage), the gate an estimate
 * of no noise would have called blind and given a floor of 0.
 */
static bool
no_spread_blind(const cJSON *m)
{
	const cJSON *tp = json_get(m, "threshold_percent"), *ta = json_get(m, "threshold_absolute");
	const cJSON *base = json_get(m, "baseline");

	return is_string(json_get(json_get(m, "noise"), "unknown_reason"), "no_spread") &&
	    cJSON_IsNumber(tp) && cJSON_IsNumber(ta) && cJSON_IsNumber(base) &&
	    base->valuedouble > 0 && ta->valuedouble / base->valuedouble > 2 * tp->valuedouble;
}

/*
 * Whether the Sensitivity section lists metric m of a comparison: its
 * gate is noisy or blind, or had no spread where its floors are wide
 * (no_spread_blind()), a step or trend lies inside its window, or a
 * noise-aware rule decided it.
 */
static bool
sens_listed(const cJSON *m)
{
	const cJSON *adv = json_get(json_get(m, "sensitivity"), "advice");

	return is_string(adv, "noisy") || is_string(adv, "blind") || no_spread_blind(m) ||
	    cJSON_IsTrue(json_get(json_get(m, "noise"), "shift")) ||
	    is_string(json_get(m, "rule"), "prediction") || is_string(json_get(m, "rule"), "zscore");
}

/* A number as Python's repr() writes it, "n/a" when not a number. */
static void
repr_cell(buf *b, const cJSON *v)
{
	char t[NUM_BUFSZ];
	double d;

	if (policy_coerce(v, &d) != COERCE_OK || !isfinite(d))
		buf_adds(b, "n/a");
	else
		buf_adds(b, num_repr(t, d));
}

/*
 * The config change a noisy or blind gate needs, as a config spells it:
 * `regression_thresholds.<metric>.threshold_percent: 0.14` (a fraction),
 * and the absolute floor where it narrows. "none" otherwise.
 */
static void
suggestion_cell(buf *b, const char *path, const cJSON *m)
{
	const cJSON *sn = json_get(m, "sensitivity");
	const cJSON *sp = json_get(sn, "suggested_threshold_percent");
	const cJSON *sa = json_get(sn, "suggested_threshold_absolute");
	const cJSON *ta = json_get(m, "threshold_absolute");

	if (!cJSON_IsNumber(sp)) {
		buf_adds(b, "none");
		return;
	}
	buf_adds(b, "`");
	xml_md_text(b, path);
	buf_adds(b, ".threshold_percent: ");
	repr_cell(b, sp);
	buf_adds(b, "`");
	if (cJSON_IsNumber(sa) && cJSON_IsNumber(ta) && sa->valuedouble < ta->valuedouble) {
		buf_adds(b, ", `");
		xml_md_text(b, path);
		buf_adds(b, ".threshold_absolute: ");
		repr_cell(b, sa);
		buf_adds(b, "`");
	}
}

/* Why the numbers of metric m are what they are: no spread, or a shift. */
static void
note_cell(buf *b, const cJSON *m)
{
	const cJSON *no = json_get(m, "noise");
	const cJSON *n = json_get(no, "n");

	if (is_string(json_get(no, "unknown_reason"), "no_spread")) {
		buf_adds(b, "no run-to-run spread in the last ");
		cell_text(b, n);
		buf_adds(b, " values (equal, or tied at the precision recorded): the noise is "
		    "unknown, so no floor is suggested");
		if (no_spread_blind(m))
			buf_adds(b, "; the absolute floor alone is over twice the percent floor");
	} else if (cJSON_IsTrue(json_get(no, "shift"))) {
		buf_adds(b, "a step or trend lies inside the noise window: the last ");
		cell_text(b, n);
		buf_adds(b, " values spread ");
		pct_cell(b, json_get(no, "level_spread"));
		buf_adds(b, ", run to run ");
		pct_cell(b, json_get(no, "relative_spread"));
		buf_adds(b, "; the noise is the run-to-run one");
	}
}

/* Which rule decided metric m (perf-gate-rolling --rule), with its bound. */
static void
rule_cell(buf *b, const cJSON *m, int prec, const char *unit)
{
	const cJSON *rule = json_get(m, "rule");
	char t[NUM_BUFSZ];

	if (is_string(rule, "prediction") || is_string(rule, "zscore")) {
		buf_addf(b, "%s, bound ", rule->valuestring);
		value_cell(b, json_get(m, "bound"), prec, unit);
		if (cJSON_IsNumber(json_get(m, "z")))
			buf_addf(b, ", z %s", num_fixed(t, json_get(m, "z")->valuedouble, 2));
	} else if (cJSON_IsString(rule))
		buf_adds(b, "reference floors");
}

/* Whether a noise-aware rule ran on the batch (a metric carries "rule"). */
static bool
batch_has_rule(const struct batch *in)
{
	for (size_t i = 0; i < in->n; i++) {
		const cJSON *ms = json_get(json_get(in->recs[i], "comparison"), "metrics");

		const cJSON *nm;

		for (int k = 0; k < METRIC_COUNT; k++)
			if (json_get(json_get(ms, metric_table[k].key), "rule") != NULL)
				return true;
		cJSON_ArrayForEach(nm, json_get(json_get(in->recs[i], "comparison"), "named_metrics"))
			if (json_get(nm, "rule") != NULL)
				return true;
	}
	return false;
}

/*
 * After the reference's table: the metrics whose gate is noisy (false
 * alarms over 5%) or blind (misses regressions of twice its floor), with
 * the config change that fits it; those whose noise is unknown for want
 * of any spread behind wide floors, or measured across a step or trend,
 * with why; and, under
 * a noise-aware rule, which rule decided each metric and its bound. As
 * perf-gate-rolling's comparison object says. Nothing when every gate
 * fits its noise and no rule ran.
 */
/* What a row of the Sensitivity section shows of one metric of a record. */
struct sens_metric {
	const char *key;	/* the metric column */
	const char *path;	/* its policy in the config: "regression_thresholds.latency" */
	int prec;		/* one of the six's precision */
	const char *unit;	/* a named metric's unit; NULL for the six */
};

/* The Sensitivity section's head, before its first row. */
static void
sens_head(buf *b, bool rules)
{
	buf_adds(b, "\n## Sensitivity\n\nGates whose floors do not fit the "
	    "run-to-run noise: a noisy one fails builds with no change "
	    "(false alarms), a blind one misses real regressions. Detects: "
	    "the smallest regression the gate catches with its power (four "
	    "times in five by default). Suggested Config: the change to the "
	    "benchmark config's floors (fractions) that fits the noise.\n");
	if (rules)
		buf_adds(b, "\nA noise-aware rule (perf-gate-rolling --rule) "
		    "decided the metrics Decided By names, against the bound "
		    "shown; False Alarms and Detects describe the floors.\n");
	buf_addf(b, "\n| Model | GPU | Metric | Advice | Noise | False Alarms | "
	    "Detects | Floors | Suggested Config | Would Detect |%s Note |\n"
	    "|---|---|---|---|---:|---:|---:|---|---|---:|%s---|\n",
	    rules ? " Decided By |" : "", rules ? "---|" : "");
}

/*
 * The Sensitivity row of metric m (its comparison, as sm describes it) of
 * record rec, when it is listed; *any says whether the head was written.
 */
static void
sens_row(buf *b, const cJSON *rec, const cJSON *m, const struct sens_metric *sm, bool rules,
    bool *any)
{
	const cJSON *sn = json_get(m, "sensitivity"), *adv = json_get(sn, "advice");

	if (!cJSON_IsString(adv) || !sens_listed(m))
		return;
	if (!*any)
		sens_head(b, rules);
	*any = true;
	buf_adds(b, "| ");
	cell_key(b, rec, "model_id");
	buf_adds(b, " | ");
	cell_key(b, rec, "gpu_type");
	buf_adds(b, " | ");
	xml_md_text(b, sm->key);
	buf_addf(b, " | %s | ", adv->valuestring);
	if (cJSON_IsNumber(json_get(json_get(m, "noise"), "relative_spread")))
		pct_cell(b, json_get(json_get(m, "noise"), "relative_spread"));
	else
		buf_adds(b, "unknown");
	buf_adds(b, " | ");
	pct_cell(b, json_get(m, "false_alarm_rate"));
	buf_adds(b, " | ");
	pct_cell(b, json_get(m, "mde_percent"));
	buf_adds(b, " | >");
	pct_cell(b, json_get(m, "threshold_percent"));
	buf_adds(b, " and >");
	value_cell(b, json_get(m, "threshold_absolute"), sm->prec, sm->unit);
	buf_adds(b, " | ");
	suggestion_cell(b, sm->path, m);
	buf_adds(b, " | ");
	pct_cell(b, json_get(sn, "suggested_mde_percent"));
	buf_adds(b, " | ");
	if (rules) {
		rule_cell(b, m, sm->prec, sm->unit);
		buf_adds(b, " | ");
	}
	note_cell(b, m);
	buf_adds(b, " |\n");
}

static void
md_sensitivity(buf *b, const struct batch *in)
{
	bool any = false, rules = batch_has_rule(in);

	for (size_t i = 0; i < in->n; i++) {
		const cJSON *cmp = json_get(in->recs[i], "comparison"), *m;

		for (int k = 0; k < METRIC_COUNT; k++) {
			char *path = easprintf("regression_thresholds.%s", metric_table[k].key);
			struct sens_metric sm = { metric_table[k].key, path, metric_table[k].precision,
			    NULL };

			sens_row(b, in->recs[i], json_get(json_get(cmp, "metrics"),
			    metric_table[k].key), &sm, rules, &any);
			free(path);
		}
		/* Then its named metrics, each by its key in the config's policy block. */
		cJSON_ArrayForEach(m, json_get(cmp, "named_metrics")) {
			char *key = nm_key(json_str(in->recs[i], "model_id"), m->string);
			char *path = easprintf("regression_thresholds.metrics.\"%s\"", key);
			struct sens_metric sm = { m->string, path, 0, json_str(m, "unit") };

			sens_row(b, in->recs[i], m, &sm, rules, &any);
			free(key);
			free(path);
		}
	}
}

static bool
failing(const cJSON *rec)
{
	const cJSON *s = json_get(rec, "comparison_status");

	return cJSON_IsString(s) && history_failing(s->valuestring);
}

static void
footer(buf *b, size_t left, size_t total, size_t size, const char *where)
{
	buf_addf(b, "\n_%zu of %zu rows are not shown: the summary is %zu bytes, over the "
	    "annotation limit of %ld; the full summary is %s._\n", left, total, size,
	    opt.annotate_max, where);
}

/*
 * The summary within the annotation limit less room bytes: failing rows
 * first, then the others, as many whole rows as fit, and a line saying
 * what was left out. Returns how many failing rows it shows.
 */
static size_t
shorten(buf *out, const struct batch *in, const buf *full, const char *where, size_t room)
{
	buf row = BUF_INIT, foot = BUF_INIT;
	size_t shown = 0, failing_shown = 0;

	footer(&foot, in->n, in->n, full->len, where);	/* the longest it can be */
	/* Shortened, the Benchmarks tables are left out: their rows count as not shown. */
	for (size_t i = 0; i < in->n; i++)
		if (!named_only(in->recs[i])) {
			buf_adds(out, md_head);
			break;
		}
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < in->n; i++) {
			if (failing(in->recs[i]) != (pass == 0) || named_only(in->recs[i]))
				continue;
			buf_reset(&row);
			md_row(&row, in->recs[i]);
			if (out->len + row.len + foot.len + room > (size_t)opt.annotate_max)
				continue;
			buf_add(out, row.s, row.len);
			shown++;
			failing_shown += pass == 0;
		}
	footer(out, in->n - shown, in->n, full->len, where);
	buf_free(&row);
	buf_free(&foot);
	return failing_shown;
}

/* "<sha7>_<local YYYYmmdd_HHMMSS>" for report file names. */
static void
report_stamp(buf *b, bool empty_is_unknown)
{
	const char *c = getenv("BUILDKITE_COMMIT");
	time_t now = time(NULL);
	struct tm tm;
	char ts[32];

	if (c == NULL || (empty_is_unknown && *c == '\0'))
		c = "unknown";
	localtime_r(&now, &tm);
	strftime(ts, sizeof ts, "%Y%m%d_%H%M%S", &tm);
	buf_addf(b, "%.7s_%s", c, ts);
}

/* Writes a file whole (temporary name, rename). */
static bool
write_out(const char *what, const char *path, const buf *b)
{
	if (atomic_write_file(path, b->s, b->len) != 0) {
		warn("%s: cannot write %s", path, what);
		return false;
	}
	return true;
}

/*
 * One CSV row: a record's metric named name, with its comparison m (NULL
 * for none: then only its value cur).
 */
static void
csv_row(buf *b, const cJSON *rec, const char *name, const cJSON *m, const cJSON *cur)
{
	static const char *const per_metric[] = { "current", "baseline", "absolute_delta",
	    "percent_delta", "threshold_exceeded", "regressed" };
	cJSON *field = json_new_string(name);

	csv_value(b, json_get(rec, "model_id"));
	buf_addc(b, ',');
	csv_value(b, json_get(rec, "gpu_type"));
	for (int j = 0; j < IDENTITY_KEYS; j++) {
		buf_addc(b, ',');
		csv_value(b, json_get(rec, identity_keys[j]));
	}
	buf_addc(b, ',');
	csv_value(b, json_get(rec, "timestamp"));
	buf_addc(b, ',');
	csv_value(b, field);
	for (int j = 0; j < 6; j++) {
		buf_addc(b, ',');
		/* Without a comparison: the record's own value, nothing else. */
		csv_value(b, j == 0 && m == NULL ? cur : json_get(m, per_metric[j]));
	}
	buf_addc(b, ',');
	csv_value(b, json_get(rec, "comparison_status"));
	buf_adds(b, "\r\n");
	cJSON_Delete(field);
}

/*
 * The CSV: a row per record and metric, the six (not for a record with
 * only named metrics), then its named metrics in its order.
 */
static void
csv(buf *b, const struct batch *in)
{
	buf_adds(b, "model_id,gpu_type,workload_id,variant_id,benchmark_version,"
	    "recipe_fingerprint,hardware_profile_id,software_profile_id,timestamp,metric,"
	    "current,baseline,absolute_delta,percent_delta,threshold_exceeded,regressed,"
	    "comparison_status\r\n");
	for (size_t i = 0; i < in->n; i++) {
		const cJSON *rec = in->recs[i];
		struct named_metric *ms;
		size_t n;

		for (int k = 0; k < METRIC_COUNT && !named_only(rec); k++)
			csv_row(b, rec, metric_table[k].key, json_get(json_get(json_get(rec,
			    "comparison"), "metrics"), metric_table[k].key),
			    json_get(rec, metric_table[k].key));
		ms = named_of(rec, &n, NULL);
		for (size_t k = 0; k < n; k++)
			csv_row(b, rec, ms[k].name, named_comparison(rec, ms[k].name),
			    json_get(json_get(json_get(rec, "metrics"), ms[k].name), "value"));
		free(ms);
	}
}

/*
 * Run-to-run stability: per cohort and metric, runs, median, min, max,
 * spread, and the sensitivity of the rolling gate at that noise (lane/sensitivity.h):
 * the noise of all the cohort's runs given, the false-alarm rate and the
 * regression detected four times in five by the floors of the cohort's
 * last record (the defaults without any) against a median of
 * min(runs, 5), and the advice.
 */
struct cohort {
	char *key, *label;
	const cJSON *first;
	size_t *idx;
	size_t n;
};

/* A metric of the stability table: one of the six (m), or a named one (m < 0, name). */
struct stab_metric {
	int m;
	const char *name;
};

/* A record's value of metric sm; false when it has none. */
static bool
stab_value(const cJSON *rec, const struct stab_metric *sm, double *d)
{
	struct named_metric *ms;
	size_t n;
	bool has = false;

	if (sm->m >= 0)
		return policy_coerce(json_get(rec, metric_table[sm->m].key), d) == COERCE_OK &&
		    isfinite(*d);
	ms = named_of(rec, &n, NULL);
	for (size_t i = 0; i < n && !has; i++)
		if (strcmp(ms[i].name, sm->name) == 0 && ms[i].has_value) {
			*d = ms[i].value;
			has = true;
		}
	free(ms);
	return has;
}

/* One row of the stability table: a cohort's metric. */
struct stab_row {
	size_t n;		/* runs with a value */
	double med, lo, hi;
	struct sens_noise ns;
	struct sens_report rp;
	bool known;		/* the sensitivity could be assessed */
};

static void
stability_sens(const struct batch *in, const struct cohort *c, const struct stab_metric *sm,
    const double *v, size_t n, struct sens_noise *ns, struct sens_report *rp)
{
	const cJSON *last = in->recs[c->idx[c->n - 1]];
	struct metric_policy pol[METRIC_COUNT];
	char bad[64];
	struct sens_gate g;

	g.nb = n < 5 ? n : 5;
	sens_noise_of(v, n, ns);
	if (sm->m < 0) {
		/* A named metric: the latest record's policy; unknown direction, no gate to assess. */
		struct nm_policy *np;
		size_t nn;
		struct named_metric *ms = named_of(last, &nn, &np);

		memset(rp, 0, sizeof *rp);
		rp->advice = SENS_UNKNOWN;
		for (size_t i = 0; i < nn; i++)
			if (strcmp(ms[i].name, sm->name) == 0 && np[i].better != BETTER_UNKNOWN) {
				g.tp = np[i].threshold_percent;
				g.ta = np[i].threshold_absolute;
				g.higher = np[i].better == BETTER_HIGHER;
				sens_assess(ns, &g, 0.8, rp);
				break;
			}
		free(ms);
		free(np);
		return;
	}
	if (policy_merge(json_get(last, "regression_thresholds"), pol, bad, sizeof bad) != 0)
		policy_merge(NULL, pol, bad, sizeof bad);
	g.tp = pol[sm->m].threshold_percent;
	g.ta = pol[sm->m].threshold_absolute;
	g.higher = metric_table[sm->m].higher_is_better;
	sens_assess(ns, &g, 0.8, rp);
}

/* A fraction as "<x*100:.1f>%", or "n/a". */
static void
pct_or_na(buf *b, bool known, double d)
{
	char t[NUM_BUFSZ];

	if (known && isfinite(d))
		buf_addf(b, "%s%%", num_fixed(t, d * 100, 1));
	else
		buf_adds(b, "n/a");
}

static cJSON *
float_or_null(bool known, double d)
{
	return known && isfinite(d) ? json_new_float(d) : json_new_null();
}

/* A cohort's name: "<workload> / <variant> / v<version> (<model> | <gpu>)". */
static char *
cohort_label(const cJSON *rec, const struct identity *id)
{
	buf label = BUF_INIT;

	if (id->complete)
		buf_addf(&label, "%s / %s / v%s (", id->value[IDENTITY_WORKLOAD],
		    id->value[IDENTITY_VARIANT], id->value[IDENTITY_BENCHMARK_VERSION]);
	pystr_key(&label, rec, "model_id");
	buf_adds(&label, " | ");
	pystr_key(&label, rec, "gpu_type");
	if (id->complete)
		buf_addc(&label, ')');
	return buf_detach(&label);
}

/* The batch's records by cohort, in order of first appearance; *nc gets their count. */
static struct cohort *
cohorts_of(const struct batch *in, size_t *nc)
{
	struct cohort *c = NULL;
	struct identity id;
	buf key = BUF_INIT;
	size_t i, j;

	*nc = 0;
	for (i = 0; i < in->n; i++) {
		identity_of(in->recs[i], &id);
		buf_reset(&key);
		if (id.complete)
			for (j = 0; j < IDENTITY_KEYS; j++)
				buf_addf(&key, "%s\x1f", id.value[j]);
		else {
			buf_adds(&key, "legacy\x1f");
			pystr_key(&key, in->recs[i], "model_id");
			buf_addc(&key, '\x1f');
			pystr_key(&key, in->recs[i], "gpu_type");
		}
		for (j = 0; j < *nc && strcmp(c[j].key, key.s) != 0; j++)
			;
		if (j == *nc) {
			c = erealloc(c, (*nc + 1) * sizeof *c);
			memset(&c[*nc], 0, sizeof *c);
			c[*nc].key = estrdup(key.s);
			c[*nc].label = cohort_label(in->recs[i], &id);
			c[*nc].first = in->recs[i];
			(*nc)++;
		}
		c[j].idx = erealloc(c[j].idx, (c[j].n + 1) * sizeof *c[j].idx);
		c[j].idx[c[j].n++] = i;
		identity_free(&id);
	}
	buf_free(&key);
	return c;
}

/*
 * Computes the row of metric m of a cohort, v having room for every
 * record; false when no record of the cohort has a value.
 */
static bool
stability_row(const struct batch *in, const struct cohort *c, const struct stab_metric *sm,
    double *v, struct stab_row *r)
{
	double d;

	r->n = 0;
	for (size_t j = 0; j < c->n; j++)
		if (stab_value(in->recs[c->idx[j]], sm, &d))
			v[r->n++] = d;
	if (r->n == 0)
		return false;
	stability_sens(in, c, sm, v, r->n, &r->ns, &r->rp);
	r->known = r->rp.advice != SENS_UNKNOWN;
	r->med = stats_median(v, r->n);	/* sorts v */
	r->lo = v[0];
	r->hi = v[r->n - 1];
	return true;
}

/* A row as a JSON line (--json). */
static void
stability_json(buf *b, const struct cohort *c, const struct stab_metric *sm,
    const char *unit, const struct stab_row *r)
{
	cJSON *o = json_new_object();

	json_set(o, "cohort", json_new_string(c->label));
	for (int j = 0; j < 2; j++) {
		const char *k = j == 0 ? "model_id" : "gpu_type";
		const cJSON *kv = json_get(c->first, k);
		json_set(o, k, kv ? cJSON_Duplicate(kv, true) : json_new_null());
	}
	for (int j = 0; j < IDENTITY_KEYS; j++) {
		const cJSON *iv = json_get(c->first, identity_keys[j]);
		json_set(o, identity_keys[j], iv ? cJSON_Duplicate(iv, true) : json_new_null());
	}
	json_set(o, "metric", json_new_string(sm->m >= 0 ? metric_table[sm->m].key : sm->name));
	if (sm->m < 0)
		json_set(o, "unit", json_new_string(unit));
	json_set(o, "runs", json_new_int((long long)r->n));
	json_set(o, "median", json_new_float(r->med));
	json_set(o, "min", json_new_float(r->lo));
	json_set(o, "max", json_new_float(r->hi));
	json_set(o, "spread_percent", r->med != 0 ?
	    json_new_float((r->hi - r->lo) / r->med * 100) : json_new_null());
	json_set(o, "noise", float_or_null(r->ns.known, r->ns.spread));
	json_set(o, "false_alarm_rate", float_or_null(r->known, r->rp.far));
	json_set(o, "mde_percent", float_or_null(r->known, r->rp.mde));
	json_set(o, "advice", json_new_string(sens_advice_name(r->rp.advice)));
	json_write(b, o, JSON_COMPACT, NULL);
	buf_addc(b, '\n');
	cJSON_Delete(o);
}

/* A row of the Markdown table. */
static void
stability_md(buf *b, const struct cohort *c, const struct stab_metric *sm, const char *unit,
    const struct stab_row *r)
{
	char t1[NUM_BUFSZ], t2[NUM_BUFSZ], t3[NUM_BUFSZ], t4[NUM_BUFSZ];
	char u1[UNIT_FMTSZ], u2[UNIT_FMTSZ], u3[UNIT_FMTSZ];
	int m = sm->m;

	buf_adds(b, "| ");
	xml_md_text(b, c->label);
	if (m < 0) {
		/* A named metric: its name, its values in its unit. */
		buf_adds(b, " | ");
		xml_md_text(b, sm->name);
		buf_addf(b, " | %zu | ", r->n);
		xml_md_text(b, unit_format(u1, r->med, unit));
		buf_adds(b, " | ");
		xml_md_text(b, unit_format(u2, r->lo, unit));
		buf_adds(b, " | ");
		xml_md_text(b, unit_format(u3, r->hi, unit));
		buf_adds(b, " | ");
	} else
		buf_addf(b, " | %s | %zu | %s | %s | %s | ", metric_table[m].key, r->n,
		    num_fixed(t1, r->med, metric_table[m].precision),
		    num_fixed(t2, r->lo, metric_table[m].precision),
		    num_fixed(t3, r->hi, metric_table[m].precision));
	if (r->med != 0)
		buf_addf(b, "%s%% | ", num_fixed(t4, (r->hi - r->lo) / r->med * 100, 1));
	else
		buf_adds(b, "n/a | ");
	pct_or_na(b, r->ns.known, r->ns.spread);
	buf_adds(b, " | ");
	pct_or_na(b, r->known, r->rp.far);
	buf_adds(b, " | ");
	pct_or_na(b, r->known, r->rp.mde);
	buf_addf(b, " | %s |\n", sens_advice_name(r->rp.advice));
}

static void
stability(buf *b, const struct batch *in)
{
	struct stab_row r;
	size_t nc, i;
	struct cohort *c = cohorts_of(in, &nc);
	double *v = emalloc((in->n + 1) * sizeof *v);

	if (!opt.json)
		buf_adds(b, "## Run-to-run stability\n\n| Cohort | Metric | Runs | Median | Min | "
		    "Max | Spread | Noise | False Alarms | Detects | Advice |\n"
		    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	for (i = 0; i < nc; i++) {
		const char **names = NULL, **units = NULL;
		size_t nn = 0;

		for (int m = 0; m < METRIC_COUNT; m++) {
			struct stab_metric sm = { m, NULL };

			if (!stability_row(in, &c[i], &sm, v, &r))
				continue;
			if (opt.json)
				stability_json(b, &c[i], &sm, NULL, &r);
			else
				stability_md(b, &c[i], &sm, NULL, &r);
		}
		/* Then its named metrics, in the order first seen, each in its first unit. */
		for (size_t j = 0; j < c[i].n; j++) {
			size_t n;
			struct named_metric *ms = named_of(in->recs[c[i].idx[j]], &n, NULL);

			for (size_t k = 0; k < n; k++) {
				size_t q;

				for (q = 0; q < nn && strcmp(names[q], ms[k].name) != 0; q++)
					;
				if (q < nn)
					continue;
				names = erealloc(names, (nn + 1) * sizeof *names);
				units = erealloc(units, (nn + 1) * sizeof *units);
				names[nn] = ms[k].name;
				units[nn++] = ms[k].unit;
			}
			free(ms);
		}
		for (size_t k = 0; k < nn; k++) {
			struct stab_metric sm = { -1, names[k] };

			if (!stability_row(in, &c[i], &sm, v, &r))
				continue;
			if (opt.json)
				stability_json(b, &c[i], &sm, units[k], &r);
			else
				stability_md(b, &c[i], &sm, units[k], &r);
		}
		free(names);
		free(units);
	}
	for (i = 0; i < nc; i++) {
		free(c[i].key);
		free(c[i].label);
		free(c[i].idx);
	}
	free(c);
	free(v);
}

static void
add_history(const struct store_hit *h, void *ctx)
{
	/* A store file's path is its record's store path in a store perfkite wrote. */
	dash_add_at(ctx, h->record, false, h->instant, h->path);
}

/* The dashboard of the store's last days plus this batch. */
static bool
dashboard(buf *page, const struct batch *in)
{
	struct dash *d = dash_new(opt.now, opt.days);
	struct store_query all;
	store *st;
	bool ok = true;
	char *raised = NULL;
	const char *const *keys;
	size_t nkeys;

	memset(&all, 0, sizeof all);
	for (size_t i = 0; i < in->n; i++)
		dash_add(d, in->recs[i], true);
	for (size_t i = 0; i < in->ncps; i++)
		dash_add_change(d, in->cps[i]);
	if ((st = store_open_cache(opt.store.spec, opt.store.cache)) == NULL)
		ok = false;
	else {
		keys = dash_keys(&nkeys);
		store_want(st, keys, nkeys);
		store_threads(st, 1);	/* every record is a hit: one thread costs least */
		for (int i = 0; i < opt.store.nhistories; i++)
			store_add_stream(st, opt.store.histories[i]);
		if (store_scan(st, &all, 1, add_history, d, &raised) != 0)
			ok = false;
		store_close(st);
	}
	if (raised != NULL) {
		warnx("the history holds a record that cannot be read: %s", raised);
		free(raised);
	}
	dash_report(d, stderr);
	dash_render(d, page);
	dash_free(d);
	return ok;
}

/* Reads the compared records; false when one was bad. */
static bool
read_batch(char *const *files, int nfiles, struct batch *in)
{
	jsonl_reader *r = jsonl_open(files, nfiles);
	jsonl_span sp;
	cJSON *rec;
	bool ok;

	while ((rec = jsonl_next(r, &sp)) != NULL) {
		in->recs = erealloc(in->recs, (in->n + 1) * sizeof *in->recs);
		in->recs[in->n++] = rec;
	}
	ok = jsonl_errors(r) == 0;
	jsonl_close(r);
	return ok;
}

/* Reads the change points of --changes; false when one was bad. */
static bool
read_changes(struct batch *in)
{
	jsonl_reader *r = jsonl_open((char *const *)&opt.changes, 1);
	jsonl_span sp;
	cJSON *cp;
	bool ok;

	while ((cp = jsonl_next(r, &sp)) != NULL) {
		if (!cJSON_IsString(json_get(cp, "metric")) ||
		    !cJSON_IsString(json_get(cp, "direction"))) {
			jsonl_error(r, &sp, "not a change point of perf-changes");
			cJSON_Delete(cp);
			continue;
		}
		in->cps = erealloc(in->cps, (in->ncps + 1) * sizeof *in->cps);
		in->cps[in->ncps++] = cp;
	}
	ok = jsonl_errors(r) == 0;
	jsonl_close(r);
	return ok;
}

static void
free_batch(struct batch *in)
{
	for (size_t i = 0; i < in->n; i++)
		cJSON_Delete(in->recs[i]);
	for (size_t i = 0; i < in->ncps; i++)
		cJSON_Delete((cJSON *)in->cps[i]);
	free(in->cps);
	free(in->recs);
}

/* The "Change points" section, after the reference's table, when there are any. */
static void
change_points(buf *b, const struct batch *in)
{
	if (in->ncps == 0)
		return;
	buf_adds(b, b->len > 0 ? "\n## Change points\n\n" : "## Change points\n\n");
	cpoints_markdown(b, in->cps, in->ncps);
}

/*
 * With --site-url, the annotation's links to the cohort pages of the
 * failing rows on the published site (perf-site(1) c/<id>.html), each
 * cohort once, in the table's order; nothing without a failing row.
 */
static void
site_links(buf *b, const struct batch *in)
{
	size_t base = strlen(opt.site_url), n = 0;
	char **seen = ecalloc(in->n + 1, sizeof *seen);

	while (base > 0 && opt.site_url[base - 1] == '/')
		base--;
	for (size_t i = 0; i < in->n; i++) {
		char *id;
		bool dup = false;

		if (!failing(in->recs[i]))
			continue;
		id = site_cohort_id(in->recs[i]);
		for (size_t k = 0; k < n && !dup; k++)
			dup = strcmp(seen[k], id) == 0;
		if (dup) {
			free(id);
			continue;
		}
		if (n == 0)
			buf_adds(b, b->len > 0 ? "\n**History of the failing cohorts:**\n\n" :
			    "**History of the failing cohorts:**\n\n");
		buf_adds(b, "- [");
		xml_md_text(b, json_str(in->recs[i], "model_id"));
		buf_adds(b, " (");
		xml_md_text(b, json_str(in->recs[i], "gpu_type"));
		buf_addf(b, ")](%.*s/c/%s.html)\n", (int)base, opt.site_url, id);
		seen[n++] = id;
	}
	for (size_t k = 0; k < n; k++)
		free(seen[k]);
	free(seen);
}

/* Appends s single-quoted for a POSIX shell. */
static void
shell_quoted(buf *b, const char *s)
{
	buf_addc(b, '\'');
	for (; *s != '\0'; s++)
		if (*s == '\'')
			buf_adds(b, "'\\''");
		else
			buf_addc(b, *s);
	buf_addc(b, '\'');
}

/*
 * A REGRESSION on named metrics: " --metric M" for each metric that
 * regressed (the six's keys, then the named metrics' names, quoted), so
 * that the accept is on what failed alone; nothing when only the six
 * regressed (the accept is on all of them, as before named metrics).
 */
static void
decide_metrics(buf *cmd, const cJSON *rec)
{
	const cJSON *cmp = json_get(rec, "comparison"), *e;
	bool named = false;

	cJSON_ArrayForEach(e, json_get(cmp, "named_metrics"))
		named = named || cJSON_IsTrue(json_get(e, "regressed"));
	if (!named)
		return;
	cJSON_ArrayForEach(e, json_get(cmp, "metrics"))
		if (cJSON_IsTrue(json_get(e, "regressed")))
			buf_addf(cmd, " --metric %s", e->string);
	cJSON_ArrayForEach(e, json_get(cmp, "named_metrics"))
		if (cJSON_IsTrue(json_get(e, "regressed"))) {
			buf_adds(cmd, " --metric ");
			shell_quoted(cmd, e->string);
		}
}

/*
 * --decide: the "Decide" section after the reference's table: for each
 * scheduled-main REGRESSION, the perf-seed(1) command that would accept
 * it, and for each CALIBRATION_NEEDED, the one that would seed it, each
 * naming this run's normalized artifact (perf-gate-rolling -a, by default
 * $PERF_REPORTS_DIR/results). Nothing decides by itself: each command
 * stages a reviewed manifest. Nothing when no row needs a decision.
 */
static void
md_decide(buf *b, const struct batch *in, bool accept_only)
{
	bool any = false;

	for (size_t i = 0; i < in->n; i++) {
		const cJSON *rec = in->recs[i];
		const char *st = json_str(rec, "comparison_status");
		bool regression = strcmp(st, "REGRESSION") == 0, seed = strcmp(st,
		    "CALIBRATION_NEEDED") == 0;
		char *rel = store_record_path(rec), *path, *slash;
		buf cmd = BUF_INIT;

		if (rel == NULL || (!regression && (!seed || accept_only)) ||
		    strcmp(json_str(rec, "run_source"), "scheduled_main") != 0) {
			free(rel);
			continue;
		}
		slash = strchr(rel, '/');
		*slash = '_';
		path = easprintf("%s/results/normalized_perf_%s", opt.reports != NULL &&
		    *opt.reports != '\0' ? opt.reports : ".", rel);
		if (!any)
			buf_adds(b, "\n## Decide\n\nEach command stages a reviewed decision "
			    "(perf-seed(1)); `perf-seed upload MANIFEST --confirm` applies it. "
			    "Nothing is decided until then.\n\n| Model | GPU | Status | Command |\n"
			    "|---|---|---|---|\n");
		any = true;
		buf_adds(&cmd, regression ? "perf-seed accept --source-result " :
		    "perf-seed prepare --source-result ");
		shell_quoted(&cmd, path);
		if (regression)
			decide_metrics(&cmd, rec);
		buf_adds(&cmd, regression ? " --reason 'why the change is intended'" :
		    " --intent-rationale 'why this is the baseline'");
		buf_adds(b, "| ");
		cell_key(b, rec, "model_id");
		buf_adds(b, " | ");
		cell_key(b, rec, "gpu_type");
		buf_addf(b, " | %s | `", st);
		xml_md_text(b, cmd.s);
		buf_adds(b, "` |\n");
		free(path);
		free(rel);
		buf_free(&cmd);
	}
}

/*
 * The whole summary: the reference's table, the sensitivity, the Decide
 * section (with --decide), the change points. The annotation's text with
 * --annotate-decide has the accept commands where --decide has its section;
 * the report's does not.
 */
static void
summary_markdown(buf *md, const struct batch *in, bool annotated)
{
	size_t rows = 0;

	for (size_t i = 0; i < in->n; i++)
		rows += !named_only(in->recs[i]);
	if (rows > 0)
		buf_adds(md, md_head);
	for (size_t i = 0; i < in->n; i++)
		if (!named_only(in->recs[i]))
			md_row(md, in->recs[i]);
	md_named(md, in);
	md_sensitivity(md, in);
	if (opt.decide)
		md_decide(md, in, false);
	else if (annotated && opt.annotate_decide)
		md_decide(md, in, true);
	change_points(md, in);
	if (annotated && opt.site_url != NULL)
		site_links(md, in);
}

/*
 * The report file keeps the whole summary, as the reference writes it;
 * *kept gets its path (in path) once written. False when it could not be.
 */
static bool
keep_report(const buf *md, buf *path, const char **kept)
{
	buf text = BUF_INIT;
	bool ok = true;

	buf_addf(path, "%s/perf_", opt.reports);
	report_stamp(path, true);
	buf_adds(path, ".md");
	buf_add(&text, md->s, md->len);
	buf_addc(&text, '\n');
	if (atomic_mkdirs(opt.reports) != 0) {
		warn("%s: cannot create", opt.reports);
		ok = false;
	} else if (write_out("the report", path->s, &text)) {
		fprintf(stderr, "Performance report written to %s\n", path->s);
		*kept = path->s;
	} else
		ok = false;
	buf_free(&text);
	return ok;
}

/* Appends the summary to $GITHUB_STEP_SUMMARY when set; false when it could not. */
static bool
step_summary(const buf *md)
{
	const char *env = getenv("GITHUB_STEP_SUMMARY");
	FILE *fp;

	if (env == NULL || *env == '\0')
		return true;
	fp = fopen(env, "a");
	if (fp == NULL || fwrite(md->s, 1, md->len, fp) != md->len || fputc('\n', fp) == EOF ||
	    fclose(fp) != 0) {
		warn("%s: cannot append the summary", env);
		return false;
	}
	return true;
}

/*
 * The annotation: the summary (md, with the Decide section of --decide or
 * --annotate-decide), or its shortened form over --annotate-max. Shortened,
 * the Decide section follows when it fits, else a line says it was cut;
 * then the change points when they fit.
 */
static void
annotation(buf *text, const struct batch *in, const buf *md, const char *kept)
{
	buf cps = BUF_INIT, dec = BUF_INIT, cut = BUF_INIT, alt = BUF_INIT;
	const char *where = kept != NULL ? kept : "not kept (give --reports-dir)";

	if (md->len > (size_t)opt.annotate_max && in->n > 0) {
		if (opt.decide || opt.annotate_decide) {
			md_decide(&dec, in, !opt.decide);
			if (dec.len > 0)
				buf_adds(&cut, "\n_The Decide section (the perf-seed commands for "
				    "the failing rows) was cut to fit the annotation limit; "
				    "`perf-summarize --decide` on this run's compared records "
				    "lists it._\n");
		}
		/*
		 * The Decide section goes before the passing rows, never before a
		 * failing one: where it would cost a failing row, a line says it
		 * was cut instead.
		 */
		if (dec.len == 0)
			shorten(text, in, md, where, 0);
		else if (shorten(text, in, md, where, dec.len) >= shorten(&alt, in, md, where, cut.len))
			buf_add(text, dec.s, dec.len);
		else {
			buf_reset(text);
			buf_add(text, alt.s, alt.len);
			buf_add(text, cut.s, cut.len);
		}
		/* The change points follow when they fit. */
		change_points(&cps, in);
		if (cps.len > 0 && text->len + cps.len <= (size_t)opt.annotate_max)
			buf_add(text, cps.s, cps.len);
		/* So do the links to the failing cohorts' pages. */
		buf_reset(&cps);
		if (opt.site_url != NULL)
			site_links(&cps, in);
		if (cps.len > 0 && text->len + cps.len <= (size_t)opt.annotate_max)
			buf_add(text, cps.s, cps.len);
	} else
		buf_add(text, md->s, md->len);
	buf_free(&cps);
	buf_free(&dec);
	buf_free(&cut);
	buf_free(&alt);
}

/*
 * The outputs, in the order they are made. Each returns false when it
 * could not do its job (the exit status is then 2).
 */
static bool
want_stability(const struct batch *in)
{
	(void)in;
	return opt.stability;
}

static bool
out_stability(const struct batch *in)
{
	buf text = BUF_INIT;

	stability(&text, in);
	fwrite(text.s, 1, text.len, stdout);
	buf_free(&text);
	return true;
}

static bool
want_summary(const struct batch *in)
{
	return !opt.stability && (in->n > 0 || in->ncps > 0);
}

/* The summary on stdout, in the report file and the step summary. */
static bool
out_summary(const struct batch *in)
{
	buf md = BUF_INIT, annotated = BUF_INIT, text = BUF_INIT, path = BUF_INIT;
	const char *kept = NULL;
	bool ok = true;

	summary_markdown(&md, in, false);
	summary_markdown(&annotated, in, true);
	if (opt.reports != NULL && *opt.reports != '\0' && !keep_report(&md, &path, &kept))
		ok = false;
	if (!step_summary(&md))
		ok = false;
	annotation(&text, in, &annotated, kept);
	fwrite(text.s, 1, text.len, stdout);
	buf_free(&md);
	buf_free(&annotated);
	buf_free(&text);
	buf_free(&path);
	return ok;
}

static bool
want_csv(const struct batch *in)
{
	(void)in;
	return opt.csv != NULL;
}

static bool
out_csv(const struct batch *in)
{
	buf text = BUF_INIT;
	bool ok;

	csv(&text, in);
	ok = write_out("the CSV", opt.csv, &text);
	buf_free(&text);
	return ok;
}

static bool
want_page(const struct batch *in)
{
	(void)in;
	return opt.html != NULL || opt.dashboard;
}

/* The dashboard, rendered once for --html and --dashboard. */
static bool
out_page(const struct batch *in)
{
	buf page = BUF_INIT, path = BUF_INIT;
	bool ok = dashboard(&page, in);

	if (opt.html != NULL && !write_out("the dashboard", opt.html, &page))
		ok = false;
	if (opt.dashboard) {
		buf_addf(&path, "%s/dashboard_", opt.reports);
		report_stamp(&path, false);
		buf_adds(&path, ".html");
		if (atomic_mkdirs(opt.reports) != 0 || !write_out("the dashboard", path.s, &page))
			ok = false;
		else
			fprintf(stderr, "Dashboard generated: %s\n", path.s);
	}
	buf_free(&page);
	buf_free(&path);
	return ok;
}

static const struct mode {
	bool (*wanted)(const struct batch *);
	bool (*make)(const struct batch *);
} modes[] = {
	{ want_stability, out_stability },	/* --stability */
	{ want_summary, out_summary },		/* otherwise: the summary */
	{ want_csv, out_csv },			/* --csv */
	{ want_page, out_page },		/* --html, --dashboard */
};

static long
long_opt(const char *name, const char *s, long min, long max)
{
	return cli_long(opt_text(&option_table), name, s, min, max, NULL);
}

/* Reads the environment and the options into opt; exits on a usage error. */
static void
parse_options(int argc, char *argv[])
{
	const char *env;
	int c;

	opt.annotate_max = 1000000;
	opt.now = isotime_now();
	opt.reports = getenv("PERF_REPORTS_DIR");
	opt.days = 30;
	if ((env = getenv("DASHBOARD_DAYS")) != NULL)
		opt.days = long_opt("DASHBOARD_DAYS", env, 1, 36500);
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		if (store_opts_take(&opt.store, c, optarg))
			continue;
		switch (c) {
		case 'r': opt.reports = optarg; break;
		case 'A': opt.annotate_max = long_opt("--annotate-max", optarg, 1024, 1L << 40); break;
		case 'W': opt.html = optarg; break;
		case 'D': opt.dashboard = true; break;
		case 'E': opt.decide = true; break;
		case 'G': opt.annotate_decide = true; break;
		case 'U': opt.site_url = optarg; break;
		case 'C': opt.csv = optarg; break;
		case 'd': opt.days = long_opt("--days", optarg, 1, 36500); break;
		case 'N':
			opt.now = cli_time(opt_text(&option_table), "--now", optarg,
			    "an ISO 8601 time");
			break;
		case 'S': opt.stability = true; break;
		case 'J': opt.json = true; break;
		case 'P': opt.changes = optarg; break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
}

int
main(int argc, char *argv[])
{
	struct batch in = { NULL, 0, NULL, 0 };
	bool trouble;

	git_askpass_main(argc, argv);
	err_init(argv[0]);
	parse_options(argc, argv);
	if ((opt.store.spec = store_spec(opt.store.spec)) == NULL)
		return EXIT_TROUBLE;
	if (opt.dashboard && (opt.reports == NULL || *opt.reports == '\0')) {
		warnx("--dashboard needs a reports directory (-r or PERF_REPORTS_DIR)");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	trouble = !read_batch(argv + optind, argc - optind, &in);
	if (opt.changes != NULL && !read_changes(&in))
		trouble = true;
	for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
		if (modes[i].wanted(&in) && !modes[i].make(&in))
			trouble = true;
	free_batch(&in);
	store_opts_free(&opt.store);
	if (jsonl_finish(stdout, "standard output") != 0 || trouble)
		return EXIT_TROUBLE;
	return EXIT_PASS;
}
