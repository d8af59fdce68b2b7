#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/err.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/num.h"
#include "core/stats.h"
#include "core/strmap.h"
#include "core/svg_axis.h"
#include "core/unit.h"
#include "core/xml.h"
#include "lane/dash.h"
#include "lane/history_view.h"
#include "lane/identity.h"
#include "lane/named_metric.h"
#include "lane/policy.h"
#include "lane/store/read.h"

/*
 * A named metric's value in a record (issue 24): its slot (the metric's
 * index on the page, from METRIC_COUNT), its direction and floors, and
 * the baseline of its comparison.
 */
struct nval {
	int slot;
	double v, base, mde, power;
	bool has, has_base, has_mde;
	enum better better;
	double threshold_percent, threshold_absolute;
};

/* What a chart needs of one record. Strings are interned. */
struct drec {
	const char *model, *gpu, *run_source, *status, *bstatus, *reason;
	char commit[8];				/* the first seven characters */
	const char *ident[IDENTITY_KEYS];	/* str() of each, "" when missing */
	const char *key;			/* a batch record's store path, or NULL */
	const char *build_url;			/* an http(s) URL, or NULL */
	int64_t instant;
	double v[METRIC_COUNT], base[METRIC_COUNT];
	double mde[METRIC_COUNT], power[METRIC_COUNT];	/* the comparison's, if any */
	bool has[METRIC_COUNT], has_base[METRIC_COUNT], has_mde[METRIC_COUNT], has_cmp;
	struct metric_policy pol[METRIC_COUNT];
	bool success, eligible, current, dropped;
	bool named_only;	/* named metrics and none of the six */
	int kind;
	size_t order;
	struct nval *nv;	/* its named metrics, by slot */
	size_t nnv;
};

struct group {
	const char *key[HISTORY_KEY_PARTS];
	size_t *rows;
	size_t n;
	bool named_only;	/* every record has only named metrics */
	double *scale;		/* by named slot: display unit per canonical unit */
	char **suffix;		/* by named slot: the display unit ("us", "M items/s") */
};

/* A change point of perf-changes, drawn on its cohort's chart of its metric. */
struct dchange {
	const char *kind, *model, *gpu, *ident[IDENTITY_KEYS], *tip;
	int metric;
	int64_t instant;
	bool worse;
	bool decided;		/* perf-seed(1) accepted, acknowledged or invalid it */
};

struct skip {
	const struct group *g;
	int metric;
	const char *reason;
	size_t non_null;
};

struct dash {
	int64_t now, since;
	long days;
	struct drec *r;
	size_t n, cap;
	bool column[METRIC_COUNT];	/* some record has the key */
	struct strmap pool;		/* interned strings, each its own copy */
	/*
	 * The batch's store paths: a record of the store with one of them is
	 * the batch's own record, already uploaded, and is not added twice.
	 */
	struct strmap batch_paths;
	struct group *groups;
	size_t ngroups;
	struct skip *skips;
	size_t nskips;
	size_t plots;
	bool grouped;
	struct dchange *changes;
	size_t nchanges;
	const char **names;	/* named metrics, by slot - METRIC_COUNT (interned) */
	const char **nunits;	/* their unit, the first seen */
	size_t nnames;
};

/* The positions of the keys the dashboard reads (dash_keys()). */
enum { F_MODEL, F_GPU, F_TS, F_COMMIT, F_RUN_SOURCE, F_STATUS, F_BSTATUS, F_REASON,
	F_SUCCESS, F_ELIGIBLE, F_SCHEMA, F_IDENT, F_METRIC = F_IDENT + IDENTITY_KEYS,
	F_POLICY = F_METRIC + METRIC_COUNT, F_COMPARISON, F_BUILD_URL, F_NAMED, F_COUNT };

/* The keys; those of the identity and the metrics come from their tables. */
static const char *key_of[F_COUNT] = { "model_id", "gpu_type", "timestamp", "commit_sha",
    "run_source", "comparison_status", "baseline_status", "comparison_status_reason",
    "success", "baseline_eligible", "result_schema_version",
    [F_POLICY] = "regression_thresholds", "comparison", "build_url", "metrics" };

const char *const *
dash_keys(size_t *n)
{
	for (int i = 0; i < IDENTITY_KEYS; i++)
		key_of[F_IDENT + i] = identity_keys[i];
	for (int i = 0; i < METRIC_COUNT; i++)
		key_of[F_METRIC + i] = metric_table[i].key;
	*n = F_COUNT;
	return key_of;
}

/* One copy of each distinct string. */
static const char *
intern(struct dash *d, const char *s)
{
	bool added;
	struct strmap_entry *e = strmap_put(&d->pool, s, &added);

	if (added)
		e->key = estrdup(s);
	return e->key;
}

/* Python str() of a value, interned; "" for missing, def for null. */
static const char *
str_of(struct dash *d, const cJSON *v, const char *missing)
{
	char *owned;
	const char *out = intern(d, history_pystr(v, missing, &owned));

	free(owned);
	return out;
}

struct dash *
dash_new(int64_t now, long days)
{
	struct dash *d = ecalloc(1, sizeof *d);
	size_t n;

	dash_keys(&n);	/* the keys made whole before a record is read */
	d->now = now;
	d->days = days;
	d->since = now - (int64_t)days * 86400 * 1000000;
	return d;
}

static size_t
dash_count(const struct dash *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n; i++)
		n += !d->r[i].dropped;
	return n;
}

void
dash_add(struct dash *d, const cJSON *rec, bool current)
{
	char *key = store_record_path(rec);

	dash_add_at(d, rec, current, store_record_instant(rec), key);
	free(key);
}

/* The record's identity and the dashboard's cohort kind (FastVideo PR #1613). */
static void
record_kind(struct dash *d, const cJSON *const *f, struct drec *r)
{
	for (int i = 0; i < IDENTITY_KEYS; i++)
		r->ident[i] = str_of(d, f[F_IDENT + i], "");
	r->kind = history_kind(r->ident, f + F_IDENT, f[F_SCHEMA]);
}

/* The record's metrics, and of its comparison the baselines, detectable changes and power. */
static void
record_metrics(struct dash *d, const cJSON *const *f, struct drec *r)
{
	const cJSON *m, *v;
	double x;

	for (int i = 0; i < METRIC_COUNT; i++) {
		v = f[F_METRIC + i];
		d->column[i] |= v != NULL;
		r->has[i] = policy_coerce(v, &x) == COERCE_OK && isfinite(x);
		r->v[i] = r->has[i] ? x : 0;
		m = json_get(json_get(f[F_COMPARISON], "metrics"), metric_table[i].key);
		v = json_get(m, "baseline");
		r->has_base[i] = cJSON_IsNumber(v) && isfinite(v->valuedouble);
		r->base[i] = r->has_base[i] ? v->valuedouble : 0;
		v = json_get(m, "mde_percent");
		r->has_mde[i] = cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
		    v->valuedouble >= 0;
		r->mde[i] = r->has_mde[i] ? v->valuedouble : 0;
		v = json_get(json_get(m, "sensitivity"), "power");
		r->power[i] = cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0.8;
	}
}

/* The slot of named metric name (made when new; unit its first unit). */
static int
named_slot(struct dash *d, const char *name, const char *unit)
{
	size_t i;

	for (i = 0; i < d->nnames; i++)
		if (strcmp(d->names[i], name) == 0)
			return METRIC_COUNT + (int)i;
	d->names = erealloc(d->names, (d->nnames + 1) * sizeof *d->names);
	d->nunits = erealloc(d->nunits, (d->nnames + 1) * sizeof *d->nunits);
	d->names[d->nnames] = intern(d, name);
	d->nunits[d->nnames] = intern(d, unit);
	return METRIC_COUNT + (int)d->nnames++;
}

/*
 * The record's named metrics (none when invalid: the gates report those),
 * each with its policy and its comparison's baseline.
 */
static void
record_named(struct dash *d, const cJSON *const *f, struct drec *r)
{
	const cJSON *block = json_get(f[F_POLICY], "metrics"), *cmp, *v;
	struct named_metric *ms;
	struct nm_policy pol;
	char err[256];
	size_t n;

	r->named_only = cJSON_IsObject(f[F_NAMED]);
	for (int i = 0; i < METRIC_COUNT; i++)
		r->named_only &= f[F_METRIC + i] == NULL || cJSON_IsNull(f[F_METRIC + i]);
	if (f[F_NAMED] == NULL || (ms = nm_parse(f[F_NAMED], &n, err, sizeof err)) == NULL)
		return;
	if (block != NULL && nm_policy_check(block, err, sizeof err) != 0)
		block = NULL;
	r->nv = ecalloc(n + 1, sizeof *r->nv);
	for (size_t i = 0; i < n; i++) {
		struct nval *x = &r->nv[r->nnv++];

		nm_policy_resolve(block, cJSON_IsString(f[F_MODEL]) ? f[F_MODEL]->valuestring :
		    "None", &ms[i], &pol);
		x->slot = named_slot(d, ms[i].name, ms[i].unit);
		x->has = ms[i].has_value;
		x->v = ms[i].value;
		x->better = pol.better;
		x->threshold_percent = pol.threshold_percent;
		x->threshold_absolute = pol.threshold_absolute;
		cmp = json_get(json_get(f[F_COMPARISON], "named_metrics"), ms[i].name);
		v = json_get(cmp, "baseline");
		x->has_base = cJSON_IsNumber(v) && isfinite(v->valuedouble);
		x->base = x->has_base ? v->valuedouble : 0;
		v = json_get(cmp, "mde_percent");
		x->has_mde = cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0;
		x->mde = x->has_mde ? v->valuedouble : 0;
		v = json_get(json_get(cmp, "sensitivity"), "power");
		x->power = cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0.8;
	}
	free(ms);
}

/* Named metric m (a slot) of a record, or NULL. */
static const struct nval *
nval_of(const struct drec *r, int m)
{
	for (size_t i = 0; i < r->nnv; i++)
		if (r->nv[i].slot == m)
			return &r->nv[i];
	return NULL;
}

/* Whether a record has a value of metric m (of the six, or a named slot). */
static bool
has_v(const struct drec *r, int m)
{
	const struct nval *x;

	if (m < METRIC_COUNT)
		return r->has[m];
	return (x = nval_of(r, m)) != NULL && x->has;
}

/* The value of metric m of a record on g's chart (a named metric in its display unit). */
static double
get_v(const struct group *g, const struct drec *r, int m)
{
	const struct nval *x;

	if (m < METRIC_COUNT)
		return r->v[m];
	return (x = nval_of(r, m)) != NULL ? x->v * g->scale[m - METRIC_COUNT] : 0;
}

/* The key of metric m: one of the six's, or a named metric's name. */
static const char *
metric_key(const struct dash *d, int m)
{
	return m < METRIC_COUNT ? metric_table[m].key : d->names[m - METRIC_COUNT];
}

void
dash_add_at(struct dash *d, const cJSON *rec, bool current, int64_t instant,
    const char *key)
{
	const cJSON *f[F_COUNT];
	struct drec *r;
	char bad[64];
	bool added;

	if (instant != ISOTIME_MIN && instant < d->since)
		return;
	if (!current && key != NULL && strmap_find(&d->batch_paths, key) != NULL)
		return;		/* the batch's record, read back from the store */
	history_fields(rec, key_of, F_COUNT, f);
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 256;
		d->r = erealloc(d->r, d->cap * sizeof *d->r);
	}
	r = &d->r[d->n];
	memset(r, 0, sizeof *r);
	r->instant = instant;
	/* On equal times the batch comes last: it is the latest. */
	r->order = current ? ((size_t)-1 >> 1) + d->n : d->n;
	r->current = current;
	r->model = str_of(d, f[F_MODEL], "None");
	r->gpu = str_of(d, f[F_GPU], "None");
	if (cJSON_IsString(f[F_COMMIT]))
		snprintf(r->commit, sizeof r->commit, "%s", f[F_COMMIT]->valuestring);
	r->run_source = str_of(d, f[F_RUN_SOURCE], "");
	r->status = str_of(d, f[F_STATUS], "");
	r->bstatus = str_of(d, f[F_BSTATUS], "");
	r->reason = str_of(d, f[F_REASON], "");
	/* Only a web address becomes a link: never javascript: or data:. */
	if (history_web_url(f[F_BUILD_URL]))
		r->build_url = intern(d, f[F_BUILD_URL]->valuestring);
	r->success = history_success(f[F_SUCCESS]);
	r->eligible = history_eligible(f[F_ELIGIBLE], f[F_RUN_SOURCE]);
	record_kind(d, f, r);
	record_metrics(d, f, r);
	record_named(d, f, r);
	r->has_cmp = cJSON_IsObject(f[F_COMPARISON]);
	if (policy_merge(f[F_POLICY], r->pol, bad, sizeof bad) != 0)
		policy_merge(NULL, r->pol, bad, sizeof bad);
	if (current && key != NULL) {
		r->key = intern(d, key);
		strmap_put(&d->batch_paths, r->key, &added);
		if (!added) {
			free(r->nv);
			return;		/* twice in the batch */
		}
	}
	d->n++;
}

/* The dashboard's grouping key, element by element. */
static int
cmp_key(const char *const *a, const char *const *b)
{
	int c;

	for (int i = 0; i < HISTORY_KEY_PARTS; i++)
		if ((c = strcmp(a[i], b[i])) != 0)
			return c;
	return 0;
}

static int
cmp_group(const void *a, const void *b)
{
	return cmp_key(((const struct group *)a)->key, ((const struct group *)b)->key);
}

static const struct dash *sort_d;

/* By timestamp, missing timestamps last, then as added. */
static int
cmp_row(const void *a, const void *b)
{
	const struct drec *x = &sort_d->r[*(const size_t *)a], *y = &sort_d->r[*(const size_t *)b];
	bool mx = x->instant == ISOTIME_MIN, my = y->instant == ISOTIME_MIN;

	if (mx != my)
		return mx ? 1 : -1;
	if (x->instant != y->instant)
		return x->instant < y->instant ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}


/*
 * The display unit of value v in unit, as unit_format() shows it: the
 * factor from the canonical unit and the unit's text after the number
 * ("us", "M items/s", "widgets"; "" for none).
 */
static void
display_unit(double v, const char *unit, double *scale, char **suffix)
{
	char t[UNIT_FMTSZ], *end;
	double shown;

	unit_format(t, v, unit);
	shown = strtod(t, &end);
	*scale = 1;
	if (end != t && v != 0 && shown != 0 && isfinite(shown))
		*scale = pow(1000, round(log(fabs(shown / v)) / log(1000)));
	while (*end == ' ')
		end++;
	*suffix = estrdup(end != t ? end : unit);
}

/* Each named metric's display unit on g's charts: that of its largest value there. */
static void
group_scales(struct dash *d, struct group *g)
{
	g->scale = ecalloc(d->nnames + 1, sizeof *g->scale);
	g->suffix = ecalloc(d->nnames + 1, sizeof *g->suffix);
	for (size_t k = 0; k < d->nnames; k++) {
		double most = 0;
		bool any = false;

		for (size_t j = 0; j < g->n; j++) {
			const struct nval *x = nval_of(&d->r[g->rows[j]], METRIC_COUNT + (int)k);
			if (x != NULL && x->has && (!any || fabs(x->v) > most)) {
				most = fabs(x->v);
				any = true;
			}
		}
		display_unit(most, d->nunits[k], &g->scale[k], &g->suffix[k]);
	}
}

static void
group_records(struct dash *d)
{
	size_t i, j, nj;
	struct group *g;
	const char *key[HISTORY_KEY_PARTS];
	struct keyindex ki;
	bool added;

	if (d->grouped)
		return;
	d->grouped = true;
	keyindex_init(&ki, d->n);
	for (i = 0; i < d->n; i++) {
		struct drec *r = &d->r[i];

		history_cohort_key(key, r->kind, r->model, r->gpu, r->ident);
		nj = keyindex_put(&ki, history_key_join(key), d->ngroups, &added);
		if (added) {
			d->groups = erealloc(d->groups, (d->ngroups + 1) * sizeof *d->groups);
			g = &d->groups[d->ngroups];
			memset(g, 0, sizeof *g);
			memcpy(g->key, key, sizeof key);
			d->ngroups++;
		}
		g = &d->groups[nj];
		g->rows = erealloc(g->rows, (g->n + 1) * sizeof *g->rows);
		g->rows[g->n++] = i;
	}
	keyindex_free(&ki);
	if (d->ngroups > 1)
		qsort(d->groups, d->ngroups, sizeof *d->groups, cmp_group);
	sort_d = d;
	for (i = 0; i < d->ngroups; i++)
		qsort(d->groups[i].rows, d->groups[i].n, sizeof(size_t), cmp_row);
	/*
	 * Skipped plots, per group and metric in canonical order: of the six
	 * unless the group has named metrics only, then of named metrics the
	 * group has without a value.
	 */
	for (i = 0; i < d->ngroups; i++) {
		g = &d->groups[i];
		g->named_only = true;
		for (j = 0; j < g->n; j++)
			g->named_only &= d->r[g->rows[j]].named_only;
		group_scales(d, g);
		for (int m = 0; m < METRIC_COUNT + (int)d->nnames; m++) {
			size_t nn = 0, carried = 0;
			for (j = 0; j < g->n; j++) {
				nn += has_v(&d->r[g->rows[j]], m);
				carried += m >= METRIC_COUNT && nval_of(&d->r[g->rows[j]], m) != NULL;
			}
			if ((m < METRIC_COUNT ? d->column[m] : true) && nn > 0) {
				d->plots++;
				continue;
			}
			if (m < METRIC_COUNT ? g->named_only : carried == 0)
				continue;
			d->skips = erealloc(d->skips, (d->nskips + 1) * sizeof *d->skips);
			d->skips[d->nskips].g = &d->groups[i];
			d->skips[d->nskips].metric = m;
			d->skips[d->nskips].non_null = nn;
			d->skips[d->nskips++].reason = m >= METRIC_COUNT || d->column[m] ?
			    "no non-null values in loaded records" :
			    "column missing from loaded records";
		}
	}
}

static const struct drec *
latest(const struct dash *d, const struct group *g)
{
	return &d->r[g->rows[g->n - 1]];
}

/* A value in full up to 14 characters, else its first 12; "missing" when empty. */
static void
short_value(buf *b, const char *v)
{
	if (*v == '\0')
		buf_adds(b, "missing");
	else if (strlen(v) <= 14)
		buf_adds(b, v);
	else
		buf_add(b, v, 12);
}

/* The cohort title and detail of the dashboard (FastVideo PR #1613). */
static void
cohort_title(const struct group *g, buf *title, buf *detail)
{
	const char *const *k = g->key + HKEY_IDENT;
	const char *work = k[IDENTITY_WORKLOAD], *var = k[IDENTITY_VARIANT],
	    *ver = k[IDENTITY_BENCHMARK_VERSION];

	buf_reset(title);
	buf_reset(detail);
	buf_add(detail, "", 0);	/* an empty detail is still a string */
	if (strcmp(g->key[HKEY_KIND], "legacy_v1") == 0) {
		buf_adds(title, "Legacy v1");
		return;
	}
	if (strcmp(g->key[HKEY_KIND], "v2") == 0)
		buf_addf(title, "%s / %s / v%s", work, var, ver);
	else
		buf_addf(title, "Invalid v2: %s / %s / %s%s", *work ? work : "missing",
		    *var ? var : "missing", *ver ? "v" : "", *ver ? ver : "missing");
	buf_adds(detail, "recipe ");
	short_value(detail, k[IDENTITY_RECIPE]);
	buf_adds(detail, " | ");
	short_value(detail, k[IDENTITY_HARDWARE]);
	buf_adds(detail, " | ");
	short_value(detail, k[IDENTITY_SOFTWARE]);
}

/* form is always one of this file's literals. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void
fmt_time(buf *b, int64_t us, const char *form)
{
	struct tm tm;
	time_t t = (time_t)(us / 1000000);
	char s[64];

	gmtime_r(&t, &tm);
	strftime(s, sizeof s, form, &tm);
	buf_adds(b, s);
}
#pragma GCC diagnostic pop

/*
 * The detectable-regression line of the latest record's metric: its
 * baseline median moved by the comparison's mde_percent in the
 * regressing direction. False when the comparison carries none.
 */
static bool
detect_of(const struct dash *d, const struct group *g, int m, double median, double *line,
    double *mde, double *power)
{
	const struct drec *last = latest(d, g);
	const struct nval *x = m >= METRIC_COUNT ? nval_of(last, m) : NULL;
	bool higher;

	if (!last->has_cmp)
		return false;
	if (m >= METRIC_COUNT) {
		/* band_of() drew a band: x is there, of known direction. */
		if (x == NULL || !x->has_mde)
			return false;
		*mde = x->mde;
		*power = x->power;
		higher = x->better == BETTER_HIGHER;
	} else {
		if (!last->has_mde[m])
			return false;
		*mde = last->mde[m];
		*power = last->power[m];
		higher = metric_table[m].higher_is_better;
	}
	*line = higher ? median * (1 - *mde) : median * (1 + *mde);
	return isfinite(*line);
}

/* The boundary past which the latest record's metric would regress. */
static bool
band_of(const struct dash *d, const struct group *g, int m, double *median, double *edge)
{
	const struct drec *last = latest(d, g);
	const struct nval *x = m >= METRIC_COUNT ? nval_of(last, m) : NULL;
	double vals[5], tp, ta, scale = m >= METRIC_COUNT ? g->scale[m - METRIC_COUNT] : 1;
	size_t nv = 0, seen = 0;
	bool higher;

	if (m >= METRIC_COUNT) {
		/* A named metric of unknown direction has no regression edge. */
		if (x == NULL || x->better == BETTER_UNKNOWN)
			return false;
		tp = x->threshold_percent;
		ta = x->threshold_absolute * scale;
		higher = x->better == BETTER_HIGHER;
	} else {
		tp = last->pol[m].threshold_percent;
		ta = last->pol[m].threshold_absolute;
		higher = metric_table[m].higher_is_better;
	}
	if (last->has_cmp && m >= METRIC_COUNT) {
		if (!x->has_base)
			return false;
		*median = x->base * scale;
	} else if (last->has_cmp) {
		if (!last->has_base[m])
			return false;
		*median = last->base[m];
	} else {
		/* From the group's own history: eligible successes before it. */
		for (size_t i = g->n - 1; i-- > 0 && seen < 5;) {
			const struct drec *r = &d->r[g->rows[i]];
			if (!r->success || !r->eligible)
				continue;
			seen++;
			if (has_v(r, m))
				vals[nv++] = get_v(g, r, m);
		}
		if (nv == 0)
			return false;
		*median = stats_median(vals, nv);
	}
	if (*median <= 0)
		return false;
	double tol = fmax(tp * *median, ta);
	*edge = higher ? *median - tol : *median + tol;
	return true;
}

enum { SHAPE_PASS, SHAPE_REGRESSION, SHAPE_CALIBRATION, SHAPE_OTHER };

static int
shape_of(const char *status)
{
	if (strcmp(status, "PASS") == 0)
		return SHAPE_PASS;
	if (strcmp(status, "REGRESSION") == 0)
		return SHAPE_REGRESSION;
	if (strcmp(status, "CALIBRATION_NEEDED") == 0)
		return SHAPE_CALIBRATION;
	return SHAPE_OTHER;
}

/* A coordinate with one decimal, as "%.1f" writes it, without printf. */
static void
num1(buf *b, double v)
{
	long long tenths;

	if (!(fabs(v) < 1e15)) {
		buf_addf(b, "%.1f", v);
		return;
	}
	tenths = llround(v * 10);
	if (tenths < 0) {
		buf_addc(b, '-');
		tenths = -tenths;
	}
	history_add_int(b, tenths / 10);
	buf_addc(b, '.');
	buf_addc(b, (char)('0' + tenths % 10));
}

/* " name=\"v\"" with one decimal. */
static void
attr1(buf *b, const char *name, double v)
{
	buf_addf(b, " %s=\"", name);
	num1(b, v);
	buf_addc(b, '"');
}

static void
marker(buf *b, int shape, double x, double y, bool current)
{
	double r = current ? 5.5 : 3.6;
	const char *c = current ? " c" : "";

	switch (shape) {
	case SHAPE_PASS:
		buf_addf(b, "<circle class=\"s0%s\"", c);
		attr1(b, "cx", x);
		attr1(b, "cy", y);
		attr1(b, "r", r);
		buf_adds(b, "/>");
		break;
	case SHAPE_REGRESSION:
		buf_addf(b, "<path class=\"s1%s\" d=\"M", c);
		num1(b, x);
		buf_addc(b, ' ');
		num1(b, y - r * 1.2);
		buf_addc(b, 'l');
		num1(b, r * 1.1);
		buf_addc(b, ' ');
		num1(b, r * 2);
		buf_addc(b, 'h');
		num1(b, -r * 2.2);
		buf_adds(b, "z\"/>");
		break;
	case SHAPE_CALIBRATION:
		buf_addf(b, "<path class=\"s2%s\" d=\"M", c);
		num1(b, x);
		buf_addc(b, ' ');
		num1(b, y - r * 1.3);
		buf_addc(b, 'l');
		num1(b, r * 1.1);
		buf_addc(b, ' ');
		num1(b, r * 1.3);
		buf_addc(b, 'l');
		num1(b, -r * 1.1);
		buf_addc(b, ' ');
		num1(b, r * 1.3);
		buf_addc(b, 'l');
		num1(b, -r * 1.1);
		buf_addc(b, ' ');
		num1(b, -r * 1.3);
		buf_adds(b, "z\"/>");
		break;
	default:
		buf_addf(b, "<rect class=\"s3%s\"", c);
		attr1(b, "x", x - r);
		attr1(b, "y", y - r);
		attr1(b, "width", r * 2);
		attr1(b, "height", r * 2);
		buf_adds(b, "/>");
	}
}

/* Geometry of a chart, in SVG user units. */
#define CW 360.0
#define CH 180.0
#define PL 52.0
#define PR 10.0
#define PT 10.0
#define PB 26.0
#define PW (CW - PL - PR)
/* Points drawn as a line at most; older ones are bucketed. */
#define LINE_POINTS 120
/* Consecutive markers closer than this (px) on a time axis hide each other. */
#define MIN_GAP 6.0

/*
 * The chart's x axis: time, or the records' order (an index axis) when the
 * time axis would draw two consecutive records on top of each other (records
 * minutes apart, or without a timestamp) and the order spreads them better.
 */
struct xaxis {
	bool index;
	size_t npts;		/* records with the metric */
	double t0, t1;		/* time axis: the domain, µs */
	int64_t first, last;	/* the records' earliest and latest instants */
};

static struct xaxis
x_axis(const struct dash *d, const struct group *g, int m)
{
	struct xaxis x = { false, 0, 0, 1, INT64_MAX, INT64_MIN };
	bool untimed = false;
	double prev = 0, gap = INFINITY;

	for (size_t i = 0; i < g->n; i++) {
		const struct drec *r = &d->r[g->rows[i]];
		if (!has_v(r, m))
			continue;
		x.npts++;
		if (r->instant == ISOTIME_MIN) {
			untimed = true;
			continue;
		}
		x.first = r->instant < x.first ? r->instant : x.first;
		x.last = r->instant > x.last ? r->instant : x.last;
	}
	if (x.first == INT64_MAX) {	/* no parsable timestamp: evenly spaced */
		x.index = true;
		return x;
	}
	x.t0 = (double)x.first;
	x.t1 = (double)x.last;
	if (x.t1 - x.t0 < 3600e6) {	/* at least an hour on the axis */
		x.t0 -= 1800e6;
		x.t1 += 1800e6;
	}
	if (x.npts < 2)
		return x;
	/* Rows are in time order, untimed last. */
	for (size_t i = 0, k = 0; i < g->n; i++) {
		const struct drec *r = &d->r[g->rows[i]];
		double px;
		if (!has_v(r, m) || r->instant == ISOTIME_MIN)
			continue;
		px = ((double)r->instant - x.t0) / (x.t1 - x.t0) * PW;
		if (k++ > 0 && px - prev < gap)
			gap = px - prev;
		prev = px;
	}
	x.index = untimed || (gap < MIN_GAP && PW / (double)(x.npts - 1) >= 2 * gap);
	return x;
}

/* The x of the k-th of the chart's records (r the record). */
static double
x_at(const struct xaxis *x, const struct drec *r, size_t k)
{
	if (x->index)
		return x->npts < 2 ? PL + PW / 2 : PL + (double)k / (double)(x->npts - 1) * PW;
	return PL + ((r->instant == ISOTIME_MIN ? (double)x->last : (double)r->instant) -
	    x->t0) / (x->t1 - x->t0) * PW;
}

static void
x_label(buf *b, double x, const char *text)
{
	double w = svgaxis_text_width(text, 10);

	const char *anchor = svgaxis_anchor(x, w, 0, CW);

	/* A label that would cross the chart's edge ends (or starts) at its tick. */
	buf_addf(b, "<text class=\"xl%s\" x=\"%.1f\" y=\"%.0f\">%s</text>",
	    strcmp(anchor, "end") == 0 ? " e" : strcmp(anchor, "start") == 0 ? " s" : "", x,
	    CH - 8, text);
}

/* Time ticks on whole hours or days, as many as their labels have room for. */
static void
time_ticks(buf *b, const struct xaxis *xa)
{
	static const double steps_h[] = { 1, 2, 3, 6, 12, 24, 48, 72, 168, 336, 720, 2160,
	    4320, 8760 };
	double step_us = 0, tick, span = xa->t1 - xa->t0, room;
	const char *form = "%m-%d %H:%M";
	buf lab = BUF_INIT;
	size_t k;

	for (k = 0; k < sizeof steps_h / sizeof *steps_h; k++) {
		step_us = steps_h[k] * 3600e6;
		form = step_us >= 2160 * 3600e6 ? "%Y-%m-%d" : step_us >= 86400e6 ? "%b %d" :
		    "%m-%d %H:%M";
		buf_reset(&lab);
		fmt_time(&lab, (int64_t)xa->t0, form);
		room = svgaxis_text_width(lab.s, 10) + 10;
		if (floor(span / step_us) + 1 <= fmax(1, floor(PW / room)))
			break;
	}
	for (tick = ceil(xa->t0 / step_us) * step_us; tick <= xa->t1; tick += step_us) {
		buf_reset(&lab);
		fmt_time(&lab, (int64_t)tick, form);
		x_label(b, PL + (tick - xa->t0) / span * PW, lab.s);
	}
	buf_free(&lab);
}

/* Index ticks: whole record numbers, "#1" the oldest. */
static void
index_ticks(buf *b, const struct xaxis *xa)
{
	struct svgaxis a;
	char t[SVGAXIS_LABEL + 1];

	if (xa->npts < 2) {
		x_label(b, PL + PW / 2, "#1");
		return;
	}
	svgaxis_linear(&a, 1, (double)xa->npts, 5);
	for (int i = 0; i < a.n; i++) {
		double v = a.v[i];
		if (v < 1 || v > (double)xa->npts || v != floor(v))
			continue;
		/* whole records only: "#2", never the step's "#2.0" */
		snprintf(t, sizeof t, "#%.0f", v);
		x_label(b, PL + (v - 1) / (double)(xa->npts - 1) * PW, t);
	}
}

/*
 * The x of a change point at instant t on the chart of metric m of group g:
 * on a time axis, where t falls (false outside the axis); on an index axis,
 * that of the first record at or after t, the record the change point names.
 */
static bool
change_x(const struct dash *d, const struct group *g, int m, const struct xaxis *xa,
    int64_t t, double *x)
{
	if (!xa->index) {
		*x = PL + ((double)t - xa->t0) / (xa->t1 - xa->t0) * PW;
		return (double)t >= xa->t0 && (double)t <= xa->t1;
	}
	for (size_t i = 0, k = 0; i < g->n; i++) {
		const struct drec *r = &d->r[g->rows[i]];
		if (!has_v(r, m))
			continue;
		if (r->instant != ISOTIME_MIN && r->instant >= t) {
			*x = x_at(xa, r, k);
			return true;
		}
		k++;
	}
	return false;
}

/*
 * The change points of the chart of metric m of group g: vertical lines
 * with the commit and the change as hover text. (Styled in place, so that
 * a page without change points stays as it was.)
 */
static void
change_lines(const struct dash *d, const struct group *g, int m, const struct xaxis *xa,
    buf *b)
{
	for (size_t i = 0; i < d->nchanges; i++) {
		const struct dchange *c = &d->changes[i];
		bool same = c->metric == m && strcmp(c->kind, g->key[HKEY_KIND]) == 0 &&
		    (c->ident[IDENTITY_WORKLOAD] != NULL || (strcmp(c->model, g->key[HKEY_MODEL]) == 0 &&
		    strcmp(c->gpu, g->key[HKEY_GPU]) == 0));
		double x;

		for (int k = 0; same && c->ident[IDENTITY_WORKLOAD] != NULL && k < IDENTITY_KEYS; k++)
			same = strcmp(c->ident[k], g->key[HKEY_IDENT + k]) == 0;
		if (!same || !change_x(d, g, m, xa, c->instant, &x))
			continue;
		buf_addf(b, "<g><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" "
		    "stroke=\"%s\" stroke-width=\"1.4\" stroke-dasharray=\"3 2\"/><title>", x, x,
		    PT, CH - PB, c->decided ? "#757575" : c->worse ? "#c62828" : "#2e7d32");
		xml_escape(b, c->tip);
		buf_adds(b, "</title></g>");
	}
}

void
dash_add_change(struct dash *d, const cJSON *cp)
{
	struct dchange *c;
	const cJSON *fc = json_get(cp, "forward_change_percent");
	char pct[NUM_BUFSZ];
	buf tip = BUF_INIT;
	int m = policy_metric_index(json_str(cp, "metric"));
	int64_t t;
	bool v2;

	/* A named metric's change point carries its unit. */
	if (cJSON_IsString(json_get(cp, "unit")) && cJSON_IsString(json_get(cp, "metric")))
		m = named_slot(d, json_str(cp, "metric"), json_str(cp, "unit"));
	if (m < 0 || !isotime_parse(json_str(cp, "timestamp"), &t))
		return;
	d->changes = erealloc(d->changes, (d->nchanges + 1) * sizeof *d->changes);
	c = &d->changes[d->nchanges++];
	memset(c, 0, sizeof *c);
	c->metric = m;
	c->instant = t;
	c->worse = strcmp(json_str(cp, "direction"), "worse") == 0;
	v2 = json_get(cp, identity_keys[IDENTITY_WORKLOAD]) != NULL;
	c->kind = v2 ? "v2" : "legacy_v1";
	c->model = str_of(d, json_get(cp, "model_id"), "None");
	c->gpu = str_of(d, json_get(cp, "gpu_type"), "None");
	for (int k = 0; v2 && k < IDENTITY_KEYS; k++)
		c->ident[k] = str_of(d, json_get(cp, identity_keys[k]), "");
	buf_addf(&tip, "change point: %s %s%s%%\ncommit %.7s\n", c->worse ? "worse" :
	    strcmp(json_str(cp, "direction"), "unknown") == 0 ? "changed" : "better",
	    cJSON_IsNumber(fc) && fc->valuedouble >= 0 ? "+" : "",
	    num_fixed(pct, cJSON_IsNumber(fc) ? fc->valuedouble : 0, 1),
	    json_str(cp, "commit_sha"));
	buf_adds(&tip, json_str(cp, "timestamp"));
	/* A decided change point says so, and is drawn grey. */
	if (cJSON_IsObject(json_get(cp, "decision"))) {
		const cJSON *dd = json_get(cp, "decision");

		c->decided = true;
		buf_addf(&tip, "\n%s by %s: %s", json_str(dd, "kind"), json_str(dd, "by"),
		    json_str(dd, "reason"));
		if (*json_str(dd, "link") != '\0')
			buf_addf(&tip, "\n%s", json_str(dd, "link"));
	}
	/* The culprit a stored bisect found (perf-changes(1) "culprit"). */
	if (cJSON_IsString(json_get(json_get(cp, "culprit"), "short"))) {
		const cJSON *k = json_get(cp, "culprit");

		buf_addf(&tip, "\nculprit: %s", json_str(k, "short"));
		if (*json_str(k, "subject") != '\0')
			buf_addf(&tip, " %s", json_str(k, "subject"));
	}
	c->tip = intern(d, tip.s);
	buf_free(&tip);
}

/*
 * What a chart shows of metric m of group g besides its records: the band
 * from the baseline median to the regression edge, the detectable-regression
 * line, the axes.
 */
struct chart_frame {
	bool band, detect;
	double median, edge;		/* the band */
	double dline, mde, power;	/* the detectable regression */
	struct xaxis xa;
	struct svgaxis ya;
};

/* Computes the chart's frame: the band, the line, and axes that hold them all. */
static void
chart_frame(const struct dash *d, const struct group *g, int m, struct chart_frame *f)
{
	double lo = INFINITY, hi = -INFINITY;

	f->median = f->edge = f->dline = f->mde = f->power = 0;
	f->band = band_of(d, g, m, &f->median, &f->edge);
	f->detect = f->band && detect_of(d, g, m, f->median, &f->dline, &f->mde, &f->power);
	f->xa = x_axis(d, g, m);
	for (size_t i = 0; i < g->n; i++) {
		const struct drec *r = &d->r[g->rows[i]];
		if (!has_v(r, m))
			continue;
		lo = fmin(lo, get_v(g, r, m));
		hi = fmax(hi, get_v(g, r, m));
	}
	if (f->band) {
		lo = fmin(lo, fmin(f->median, f->edge));
		hi = fmax(hi, fmax(f->median, f->edge));
	}
	if (f->detect) {
		lo = fmin(lo, f->dline);
		hi = fmax(hi, f->dline);
	}
	/* Labels carry the decimals the step needs: they never repeat. */
	svgaxis_linear(&f->ya, lo, hi, 4);
}

/* The y of value v. */
static double
y_at(const struct svgaxis *ya, double v)
{
	double lo = ya->lo, hi = ya->hi;

	return PT + (hi - (v)) / (hi - lo) * (CH - PT - PB);
}

/* The chart's title: the given text, then the cohort's identity. */
static void
chart_title(buf *b, const struct group *g, const char *title_text)
{
	buf_addf(b, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\"><title>", CW, CH);
	xml_escape(b, title_text);
	buf_adds(b, "\n");
	for (size_t i = 0; i < IDENTITY_KEYS; i++) {
		buf_addf(b, "%s=", identity_keys[i]);
		xml_escape(b, *g->key[HKEY_IDENT + i] ? g->key[HKEY_IDENT + i] : "(missing)");
		buf_adds(b, i + 1 < IDENTITY_KEYS ? "\n" : "");
	}
	buf_adds(b, "</title>");
}

/* The grid (one path), the y labels and the x ticks. */
static void
chart_axes(buf *b, const struct chart_frame *f)
{
	buf_adds(b, "<path class=\"g\" d=\"");
	for (int t = 0; t < f->ya.n; t++)
		buf_addf(b, "M%.0f %.1fH%.0f", PL, y_at(&f->ya, f->ya.v[t]), CW - PR);
	buf_adds(b, "\"/>");
	for (int t = 0; t < f->ya.n; t++)
		buf_addf(b, "<text class=\"yl\" x=\"%.0f\" y=\"%.1f\">%s</text>", PL - 4,
		    y_at(&f->ya, f->ya.v[t]) + 3.5, f->ya.label[t]);
	if (f->xa.index)
		index_ticks(b, &f->xa);
	else
		time_ticks(b, &f->xa);
}

/*
 * Value v of metric m on g's chart (in the chart's unit) with its unit:
 * one of the six at its precision or the given decimals, whichever is
 * more ("10.25 s"); a named metric as unit_format() shows it ("26.1 us").
 */
static void
value_text(buf *b, const struct dash *d, const struct group *g, int m, double v, int decimals)
{
	char t[UNIT_FMTSZ];
	buf lab = BUF_INIT;
	int prec;

	if (m >= METRIC_COUNT) {
		xml_escape(b, unit_format(t, v / g->scale[m - METRIC_COUNT],
		    d->nunits[m - METRIC_COUNT]));
		return;
	}
	prec = metric_table[m].precision;
	history_label_num(&lab, v, decimals > prec ? decimals : prec);
	buf_addf(b, "%s %s", lab.s, metric_table[m].unit);
	buf_free(&lab);
}

/* The band and the detectable-regression line, when there are. */
static void
chart_band(buf *b, const struct dash *d, const struct group *g, const struct chart_frame *f,
    int m)
{
	buf lab = BUF_INIT;

	if (f->band) {
		double y1 = y_at(&f->ya, f->median), y2 = y_at(&f->ya, f->edge);
		buf_addf(b, "<rect class=\"band\" x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" "
		    "height=\"%.1f\"><title>baseline median ", PL, fmin(y1, y2), CW - PL - PR,
		    fabs(y2 - y1));
		value_text(b, d, g, m, f->median, 0);
		buf_adds(b, "; regression past ");
		value_text(b, d, g, m, f->edge, 0);
		buf_addf(b, "</title></rect><line class=\"med\" x1=\"%.0f\" x2=\"%.0f\" "
		    "y1=\"%.1f\" y2=\"%.1f\"/>", PL, CW - PR, y1, y1);
	}
	if (f->detect) {
		/* Styled in place: pages without the line keep their bytes. */
		char t1[NUM_BUFSZ], t2[NUM_BUFSZ];
		double yd = y_at(&f->ya, f->dline);

		buf_addf(b, "<line class=\"mde\" stroke=\"#c62828\" stroke-width=\"1.2\" "
		    "stroke-dasharray=\"2 3\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\">"
		    "<title>detectable regression: %s%% or more is caught %s%% of the time; ",
		    PL, CW - PR, yd, yd, num_fixed(t1, f->mde * 100, 1),
		    num_fixed(t2, f->power * 100, 0));
		buf_adds(b, "past ");
		value_text(b, d, g, m, f->dline, 0);
		buf_adds(b, "</title></line>");
	}
	buf_free(&lab);
}

/* The line: every point, or bucket means when there are many. */
static void
chart_line(buf *b, const struct dash *d, const struct group *g, int m,
    const struct chart_frame *f, size_t line_points)
{
	size_t buckets = f->xa.npts > line_points ? line_points : f->xa.npts, kb = 0, used = 0;
	double sx = 0, sy = 0;
	size_t in = 0;

	buf_adds(b, "<polyline class=\"ln\" points=\"");
	for (size_t i = 0, k = 0; i < g->n; i++) {
		const struct drec *r = &d->r[g->rows[i]];
		if (!has_v(r, m))
			continue;
		sx += x_at(&f->xa, r, k++);
		sy += y_at(&f->ya, get_v(g, r, m));
		in++;
		used++;
		if (used * buckets >= (kb + 1) * f->xa.npts) {
			if (kb > 0)
				buf_addc(b, ' ');
			num1(b, sx / in);
			buf_addc(b, ',');
			num1(b, sy / in);
			kb++;
			sx = sy = 0;
			in = 0;
		}
	}
	buf_adds(b, "\"/>");
}

/* The hover text of record r, the k-th on the chart (from 1), url its build's link. */
static void
marker_title(buf *b, const struct dash *d, const struct group *g, int m,
    const struct chart_frame *f, const struct drec *r, size_t k, const char *url)
{
	buf lab = BUF_INIT;

	if (r->instant != ISOTIME_MIN)
		fmt_time(b, r->instant, f->xa.index ? "%Y-%m-%d %H:%M:%S UTC" :
		    "%Y-%m-%d %H:%M UTC");
	else
		buf_adds(b, "no timestamp");
	if (f->xa.index)
		buf_addf(b, ", record #%zu", k);
	buf_adds(b, r->current ? " (this build)\n" : "\n");
	/* Model and GPU when they are not the cohort's own (a rename). */
	if (r->model != latest(d, g)->model || r->gpu != latest(d, g)->gpu) {
		xml_escape(b, r->model);
		buf_adds(b, " | ");
		xml_escape(b, r->gpu);
		buf_adds(b, "\n");
	}
	/* As precise as the axis, so that neighbours read apart. */
	value_text(b, d, g, m, get_v(g, r, m), f->ya.decimals);
	buf_addf(b, "\ncommit %s", *r->commit ? r->commit : "unknown");
	buf_adds(b, " · ");
	xml_escape(b, *r->run_source ? r->run_source : "unknown");
	buf_adds(b, "\n");
	xml_escape(b, *r->status ? r->status : "no status");
	if (*r->bstatus) {
		buf_adds(b, " (");
		xml_escape(b, r->bstatus);
		buf_adds(b, ")");
	}
	/* A passing record's reason says nothing new; the others' do. */
	if (*r->reason && strcmp(r->status, "PASS") != 0) {
		char *cut = strlen(r->reason) > 300 ?
		    easprintf("%.297s...", r->reason) : NULL;
		buf_adds(b, "\n");
		xml_escape(b, cut != NULL ? cut : r->reason);
		free(cut);
	}
	if (url != NULL)
		buf_adds(b, "\nclick to open the build");
	buf_free(&lab);
}

/* Markers with hover text, for the newest records (and the batch). */
static void
chart_markers(buf *b, const struct dash *d, const struct group *g, int m,
    const struct chart_frame *f, size_t markers, bool links)
{
	size_t first_marker = g->n > markers ? g->n - markers : 0;

	for (size_t i = 0, k = 0; i < g->n; i++) {
		const struct drec *r = &d->r[g->rows[i]];
		if (!has_v(r, m))
			continue;
		double x = x_at(&f->xa, r, k++), y = y_at(&f->ya, get_v(g, r, m));
		if (i < first_marker && !r->current)
			continue;
		/* A marker of a record with a build links to it. */
		const char *url = links ? r->build_url : NULL;
		if (url != NULL) {
			buf_adds(b, "<a href=\"");
			xml_escape(b, r->build_url);
			buf_adds(b, "\" target=\"_blank\">");
		}
		buf_adds(b, "<g>");
		marker(b, shape_of(r->status), x, y, r->current);
		buf_adds(b, "<title>");
		marker_title(b, d, g, m, f, r, k, url);
		buf_adds(b, url != NULL ? "</title></g></a>" : "</title></g>");
	}
}

static void
chart(const struct dash *d, const struct group *g, int m, const char *title_text,
    size_t markers, size_t line_points, bool links, buf *b)
{
	struct chart_frame f;

	chart_frame(d, g, m, &f);
	chart_title(b, g, title_text);
	chart_axes(b, &f);
	chart_band(b, d, g, &f, m);
	chart_line(b, d, g, m, &f, line_points);
	change_lines(d, g, m, &f.xa, b);
	chart_markers(b, d, g, m, &f, markers, links);
	buf_adds(b, "</svg>");
}

static const char style[] =
    "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\","
    "Arial,sans-serif;margin:2rem;color:#1d2327;background:#fff}"
    "h2{margin:0 0 .25rem}h3{margin:0;font-size:1.05rem}"
    ".meta{color:#555;margin:0 0 1rem}"
    "table{border-collapse:collapse;margin:.5rem 0 1.5rem}"
    "th,td{border:1px solid #d0d4d8;padding:.3rem .55rem;text-align:left;vertical-align:top}"
    "th{background:#f0f2f4}td.n{text-align:right}"
    "code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:#444}"
    ".legend{display:flex;gap:1.2rem;align-items:center;margin:.5rem 0 1.5rem;color:#333}"
    ".legend svg{width:16px;height:16px;vertical-align:middle}"
    "section{border:1px solid #d0d4d8;border-radius:6px;padding:.8rem 1rem;margin:0 0 1.2rem}"
    ".who{color:#333;margin:.15rem 0}.detail{color:#666;margin:0 0 .5rem}"
    ".charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:.6rem 1.2rem}"
    "figure{margin:0}figcaption{font-weight:600;font-size:13px;margin:.2rem 0}"
    "figure svg{width:100%;height:auto;display:block}"
    "svg text{font:10px system-ui,sans-serif;fill:#555}"
    ".yl,.xl.e{text-anchor:end}.xl{text-anchor:middle}.xl.s{text-anchor:start}.xn{font-weight:400;color:#666}"
    ".g{stroke:#e4e7ea;stroke-width:1}.ln{fill:none;stroke:#5c6bc0;stroke-width:1.6}"
    ".band{fill:#9ccc65;fill-opacity:.22}.med{stroke:#558b2f;stroke-width:1.2;"
    "stroke-dasharray:4 3}.s0{fill:#2e7d32}.s1{fill:#c62828}.s2{fill:#1565c0}.s3{fill:#ef6c00}"
    ".c{stroke:#111;stroke-width:1.6}"
    ".st{display:inline-block;border-radius:3px;padding:0 .4rem;font-size:12px;font-weight:600;"
    "color:#fff;background:#ef6c00}.st.PASS{background:#2e7d32}.st.REGRESSION{background:#c62828}"
    ".st.CALIBRATION_NEEDED{background:#1565c0}h3.skipped{margin-top:1.5rem}";

/*
 * What an index axis stands for: the records in order, and the time they
 * span (which the axis no longer shows).
 */
static void
index_note(buf *b, const struct dash *d, const struct group *g, int m)
{
	struct xaxis xa = x_axis(d, g, m);

	if (!xa.index)
		return;
	buf_adds(b, " <span class=\"xn\">by record");
	if (xa.first != INT64_MAX) {
		buf_adds(b, ": ");
		fmt_time(b, xa.first, "%m-%d %H:%M");
		buf_adds(b, " to ");
		fmt_time(b, xa.last, xa.first / 86400000000LL == xa.last / 86400000000LL ?
		    "%H:%M UTC" : "%m-%d %H:%M UTC");
	}
	buf_adds(b, "</span>");
}

/*
 * A named metric's caption: its name, its display unit on this chart, and
 * when the latest record knows no direction for it, that it is not gated.
 */
static void
named_caption(buf *out, const struct dash *d, const struct group *g, int m)
{
	const struct nval *x = nval_of(latest(d, g), m);
	const char *suffix = g->suffix[m - METRIC_COUNT];

	buf_adds(out, "<figure><figcaption>");
	xml_escape(out, d->names[m - METRIC_COUNT]);
	if (*suffix != '\0') {
		buf_adds(out, " (");
		xml_escape(out, suffix);
		buf_adds(out, ")");
	}
	if (x == NULL || x->better == BETTER_UNKNOWN)
		buf_adds(out, " <span class=\"xn\">no known direction: not gated</span>");
}

/* The record's status as a badge. */
static void
badge(buf *b, const char *status)
{
	buf_adds(b, "<span class=\"st ");
	xml_escape(b, status);
	buf_adds(b, "\">");
	xml_escape(b, *status ? status : "no status");
	buf_adds(b, "</span>");
}

/* The page's head, its summary line and the legend of the markers. */
static void
page_head(buf *out, const struct dash *d)
{
	static const char *names[] = { "PASS", "REGRESSION", "CALIBRATION_NEEDED", "other" };
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	for (size_t i = 0; i < d->n; i++)
		if (d->r[i].instant != ISOTIME_MIN) {
			lo = d->r[i].instant < lo ? d->r[i].instant : lo;
			hi = d->r[i].instant > hi ? d->r[i].instant : hi;
		}
	buf_addf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width\">"
	    "<title>Performance Dashboard</title>\n<style>%s</style>\n</head>\n<body>\n", style);
	buf_addf(out, "<h2>Performance Dashboard (last %ld days)</h2>\n", d->days);
	buf_addf(out, "<p class=\"meta\">%zu record%s in %zu cohort%s", dash_count(d),
	    dash_count(d) == 1 ? "" : "s", d->ngroups, d->ngroups == 1 ? "" : "s");
	if (lo != INT64_MAX) {
		buf_adds(out, ", ");
		fmt_time(out, lo, "%Y-%m-%d %H:%M");
		buf_adds(out, " to ");
		fmt_time(out, hi, "%Y-%m-%d %H:%M UTC");
	}
	buf_adds(out, ". Hover a point for its record; the shaded band runs from the latest "
	    "record's baseline median to where it would regress.</p>\n");
	buf_adds(out, "<div class=\"legend\">");
	for (int s = 0; s < 4; s++) {
		buf_adds(out, "<span><svg viewBox=\"0 0 16 16\">");
		marker(out, s, 8, 8.5, false);
		buf_addf(out, "</svg> %s</span>", names[s]);
	}
	buf_adds(out, "<span><svg viewBox=\"0 0 16 16\">");
	marker(out, SHAPE_PASS, 8, 8.5, true);
	buf_adds(out, "</svg> this build</span></div>\n");
}

/* The table of cohorts, in page order, each linking to its section. */
static void
cohort_table(buf *out, const struct dash *d, const size_t *order)
{
	buf title = BUF_INIT, detail = BUF_INIT;

	buf_adds(out, "<table><tr><th>Cohort</th><th>Model</th><th>GPU</th><th>Latest</th>"
	    "<th>Status</th><th>Records</th></tr>\n");
	for (size_t i = 0; i < d->ngroups; i++) {
		const struct group *g = &d->groups[order[i]];
		const struct drec *r = latest(d, g);
		cohort_title(g, &title, &detail);
		buf_addf(out, "<tr><td><a href=\"#c%zu\">", i + 1);
		xml_escape(out, title.s);
		buf_adds(out, "</a></td><td>");
		xml_escape(out, r->model);
		buf_adds(out, "</td><td>");
		xml_escape(out, r->gpu);
		buf_adds(out, "</td><td>");
		if (r->instant != ISOTIME_MIN)
			fmt_time(out, r->instant, "%Y-%m-%d %H:%M");
		buf_adds(out, "</td><td>");
		badge(out, r->status);
		buf_addf(out, "</td><td class=\"n\">%zu</td></tr>\n", g->n);
	}
	buf_adds(out, "</table>\n");
	buf_free(&title);
	buf_free(&detail);
}

/*
 * The order of g's charts: the six, then its named metrics in the order
 * of its latest record, then any others (in older records only).
 */
static size_t
chart_order(const struct dash *d, const struct group *g, int *order)
{
	const struct drec *last = latest(d, g);
	size_t n = 0;

	for (int m = 0; m < METRIC_COUNT; m++)
		order[n++] = m;
	for (size_t i = 0; i < last->nnv; i++)
		order[n++] = last->nv[i].slot;
	for (int m = METRIC_COUNT; m < METRIC_COUNT + (int)d->nnames; m++)
		if (nval_of(last, m) == NULL)
			order[n++] = m;
	return n;
}

/* The section of cohort g, the i-th on the page: its heading and charts. */
static void
cohort_section(buf *out, const struct dash *d, const struct group *g, size_t i,
    size_t markers, size_t line_points, bool links)
{
	const struct drec *r = latest(d, g);
	buf title = BUF_INIT, detail = BUF_INIT, t = BUF_INIT;

	cohort_title(g, &title, &detail);
	buf_addf(out, "<section id=\"c%zu\">\n<h3>", i + 1);
	xml_escape(out, title.s);
	buf_adds(out, " ");
	badge(out, r->status);
	buf_adds(out, "</h3>\n<p class=\"who\">");
	xml_escape(out, r->model);
	buf_adds(out, " | ");
	xml_escape(out, r->gpu);
	buf_addf(out, " &middot; %zu record%s</p>\n", g->n, g->n == 1 ? "" : "s");
	if (detail.len > 0) {
		buf_adds(out, "<p class=\"detail\"><code>");
		xml_escape(out, detail.s);
		buf_adds(out, "</code></p>\n");
	}
	buf_adds(out, "<div class=\"charts\">\n");
	int *order = emalloc((METRIC_COUNT + d->nnames) * sizeof *order);
	size_t no = chart_order(d, g, order);

	for (size_t o = 0; o < no; o++) {
		int m = order[o];
		size_t nn = 0;
		for (size_t j = 0; j < g->n; j++)
			nn += has_v(&d->r[g->rows[j]], m);
		if ((m < METRIC_COUNT && !d->column[m]) || nn == 0)
			continue;
		/* The chart title: model | GPU | cohort | detail | metric */
		buf_reset(&t);
		buf_addf(&t, "%s | %s | %s | ", r->model, r->gpu, title.s);
		if (detail.len > 0)
			buf_addf(&t, "%s | ", detail.s);
		buf_adds(&t, metric_key(d, m));
		if (m < METRIC_COUNT)
			buf_addf(out, "<figure><figcaption>%s (%s)", metric_table[m].label,
			    metric_table[m].unit);
		else
			named_caption(out, d, g, m);
		index_note(out, d, g, m);
		buf_adds(out, "</figcaption>");
		chart(d, g, m, t.s, markers, line_points, links, out);
		buf_adds(out, "</figure>\n");
	}
	buf_adds(out, "</div>\n</section>\n");
	free(order);
	buf_free(&title);
	buf_free(&detail);
	buf_free(&t);
}

/* The table of metrics not plotted, and why. */
static void
skipped_table(buf *out, const struct dash *d)
{
	buf title = BUF_INIT, detail = BUF_INIT;

	buf_adds(out, "<h3 class=\"skipped\">Skipped Metric Plots</h3>\n<table><tr><th>Model</th><th>GPU</th>"
	    "<th>Cohort</th><th>Metric</th><th>Records</th><th>Non-null</th><th>Reason</th>"
	    "</tr>\n");
	for (size_t i = 0; i < d->nskips; i++) {
		const struct skip *s = &d->skips[i];
		const struct drec *r = latest(d, s->g);
		cohort_title(s->g, &title, &detail);
		buf_adds(out, "<tr><td>");
		xml_escape(out, r->model);
		buf_adds(out, "</td><td>");
		xml_escape(out, r->gpu);
		buf_adds(out, "</td><td>");
		xml_escape(out, title.s);
		buf_adds(out, "<br><code>");
		xml_escape(out, detail.s);
		buf_adds(out, "</code></td><td>");
		xml_escape(out, metric_key(d, s->metric));
		buf_addf(out, "</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td><td>%s</td>"
		    "</tr>\n", s->g->n, s->non_null, s->reason);
	}
	buf_adds(out, "</table>\n");
	buf_free(&title);
	buf_free(&detail);
}

/* The page with at most markers markers and line_points points per chart. */
static void
render(struct dash *d, buf *out, size_t markers, size_t line_points, bool links)
{
	size_t i, *order, no = 0;

	/* Cohorts whose latest record fails first, then the rest, in key order. */
	order = emalloc((d->ngroups + 1) * sizeof *order);
	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < d->ngroups; i++)
			if (history_failing(latest(d, &d->groups[i])->status) == (pass == 0))
				order[no++] = i;
	page_head(out, d);
	if (d->ngroups > 0)
		cohort_table(out, d, order);
	for (i = 0; i < d->ngroups; i++)
		cohort_section(out, d, &d->groups[order[i]], i, markers, line_points, links);
	if (d->nskips > 0)
		skipped_table(out, d);
	if (d->ngroups == 0)
		buf_adds(out, "<p>No data found.</p>\n");
	buf_adds(out, "</body>\n</html>\n");
	free(order);
}

/* The page must stay under this many bytes. */
#define PAGE_LIMIT 1950000

void
dash_render(struct dash *d, buf *out)
{
	size_t markers = 1, points = LINE_POINTS, start = out->len;
	bool links = true;

	group_records(d);
	/*
	 * A marker for every record and the full line when that fits: start
	 * from what the fixed parts of the charts leave of the budget (about
	 * 1100 bytes a chart, 700 a cohort, 150 a marker, 9 a point)...
	 */
	{
		size_t most = 1, charts = d->plots ? d->plots : 1;
		double left = PAGE_LIMIT - (double)charts * 1100 - (double)d->ngroups * 700;
		double mk = left * 0.65 / (double)charts / 150 * 1.5;
		double pts = left * 0.35 / (double)charts / 9;

		for (size_t i = 0; i < d->ngroups; i++)
			most = d->groups[i].n > most ? d->groups[i].n : most;
		markers = mk < 1 ? 1 : mk > (double)most ? most : (size_t)mk;
		points = pts < 16 ? 16 : pts > LINE_POINTS ? LINE_POINTS : (size_t)pts;
	}
	for (int tries = 0;; tries++) {
		out->len = start;
		render(d, out, markers, points, links);
		if (out->len - start <= PAGE_LIMIT || tries == 20)
			break;
		/* At the fewest markers, the build links go before the limit does. */
		if (markers == 1 && points == 16) {
			if (!links)
				break;
			links = false;
			continue;
		}
		/* ...else fewer older markers and a coarser line, in proportion. */
		double k = (double)PAGE_LIMIT / (double)(out->len - start) * 0.97;
		markers = markers * k < 1 ? 1 : (size_t)(markers * k);
		points = points * k < 16 ? 16 : (size_t)(points * k);
	}
	out->s[out->len] = '\0';
}

void
dash_report(struct dash *d, FILE *fp)
{
	buf title = BUF_INIT, detail = BUF_INIT;
	size_t models = 0, gpus = 0, i;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	buf range = BUF_INIT;

	group_records(d);
	if (d->n == 0) {
		fprintf(fp, "No data found\n");
		return;
	}
	/* Distinct models and GPUs. */
	{
		struct strmap seen[2] = { STRMAP_INIT, STRMAP_INIT };
		bool added;

		for (i = 0; i < d->n; i++) {
			strmap_put(&seen[0], d->r[i].model, &added);
			models += added;
			strmap_put(&seen[1], d->r[i].gpu, &added);
			gpus += added;
			if (d->r[i].instant != ISOTIME_MIN) {
				lo = d->r[i].instant < lo ? d->r[i].instant : lo;
				hi = d->r[i].instant > hi ? d->r[i].instant : hi;
			}
		}
		strmap_free(&seen[0]);
		strmap_free(&seen[1]);
	}
	if (lo != INT64_MAX) {
		fmt_time(&range, lo, "%Y-%m-%d %H:%M:%S");
		buf_adds(&range, " \xe2\x86\x92 ");
		fmt_time(&range, hi, "%Y-%m-%d %H:%M:%S");
	} else
		buf_adds(&range, "unknown");
	fprintf(fp, "Loaded %zu records across %zu model(s), %zu GPU type(s), date range: %s\n",
	    d->n, models, gpus, range.s);
	if (d->nskips > 0)
		fprintf(fp, "Skipped metric plots:\n");
	for (i = 0; i < d->nskips; i++) {
		const struct skip *s = &d->skips[i];
		const struct drec *r = latest(d, s->g);
		cohort_title(s->g, &title, &detail);
		fprintf(fp, "  - %s | %s | %s | %s | %s: %s (%zu/%zu non-null)\n", r->model, r->gpu,
		    title.s, detail.s, metric_key(d, s->metric), s->reason, s->non_null, s->g->n);
	}
	fprintf(fp, "Generated %zu metric plot(s)\n", d->plots);
	buf_free(&title);
	buf_free(&detail);
	buf_free(&range);
}

void
dash_free(struct dash *d)
{
	struct strmap_entry *e;
	size_t i;

	if (d == NULL)
		return;
	for (i = 0; (e = strmap_next(&d->pool, &i)) != NULL;)
		free((char *)e->key);
	for (i = 0; i < d->ngroups; i++) {
		free(d->groups[i].rows);
		for (size_t k = 0; d->groups[i].suffix != NULL && k < d->nnames; k++)
			free(d->groups[i].suffix[k]);
		free(d->groups[i].scale);
		free(d->groups[i].suffix);
	}
	for (i = 0; i < d->n; i++)
		free(d->r[i].nv);
	free(d->names);
	free(d->nunits);
	strmap_free(&d->pool);
	free(d->groups);
	free(d->skips);
	strmap_free(&d->batch_paths);
	free(d->r);
	free(d->changes);
	free(d);
}
