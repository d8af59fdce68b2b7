#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/canon.h"
#include "core/err.h"
#include "core/fd.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/num.h"
#include "core/strmap.h"
#include "core/svg_axis.h"
#include "core/unit.h"
#include "core/xml.h"
#include "lane/history_view.h"
#include "lane/identity.h"
#include "lane/named_metric.h"
#include "lane/policy.h"
#include "lane/sensitivity.h"
#include "lane/site.h"

static const char *const units[METRIC_COUNT] = { "s", "fps", "MB", "s", "s", "s" };

/* The rolling gate's baseline: the median of the last five trusted records. */
#define WINDOW 5
/*
 * Values of a sparkline, markers of a cohort chart (of the failing
 * records, the latest ones), rows of Needs attention.
 */
#define SPARK 16
#define MARKERS 80
#define ATTENTION 50
/* Trusted values the noise of a gate is estimated from. */
#define NOISE_RUNS 30
/* A cohort is stale when its last run is this much older than the store's newest. */
#define STALE_US (7 * 86400 * 1000000LL)

/* One record. Strings are interned. */
struct srec {
	const char *model, *gpu, *ts, *commit, *url, *src, *status, *bstatus, *reason, *path;
	const char *ident[IDENTITY_KEYS];
	int64_t instant;
	double v[METRIC_COUNT];
	bool has[METRIC_COUNT];
	struct metric_policy pol[METRIC_COUNT];
	bool success, eligible;
	int kind;
	size_t order;
	/* computed against the previous trusted records, today's thresholds */
	double base[METRIC_COUNT];
	bool has_base[METRIC_COUNT];
	unsigned exceeded, regressed;	/* bit per metric */
	const char *today;		/* the status today's thresholds give */
	bool anchor;			/* the first record of its commit: it holds the id */
	struct snamed *named;		/* its named metrics with a value (site_add_named) */
	size_t nnamed;
};

/* A named metric's value in a record (perfkite(7) "Named metrics"); strings interned. */
struct snamed {
	const char *name, *unit;
	double v;
	enum better better;	/* the record's, else the unit rule's */
};

/* The index's columns of named metrics: those most cohorts have, at most this many. */
#define NAMED_COLUMNS 6

struct schange {
	const cJSON *cp;
	size_t cohort;
	int metric;
	int64_t instant;
	bool worse;
	const char *state;
	const char *name;	/* a named metric's change point: its name (metric -1) */
};

struct sab {
	const char *file, *benchmark;
	const cJSON *result;
};

/* How a gate fits its noise. */
struct sgate {
	struct sens_noise ns;
	struct sens_report rp;
};

struct cohort {
	const char *key[HISTORY_KEY_PARTS];	/* kind, model, gpu (not v2), the six identity values */
	char id[96];
	char *label;
	size_t *rows, n;
	const struct srec *last;
	struct sgate gate[METRIC_COUNT];
	bool stale, any_eligible;
	char *sources;			/* "|src|src|" */
	const struct schange *latest_change;
};

/* The positions of the keys the site reads (site_keys()). */
enum { F_MODEL, F_GPU, F_TS, F_COMMIT, F_SRC, F_STATUS, F_BSTATUS, F_REASON, F_SUCCESS,
	F_ELIGIBLE, F_SCHEMA, F_IDENT, F_METRIC = F_IDENT + IDENTITY_KEYS,
	F_POLICY = F_METRIC + METRIC_COUNT, F_URL, F_COUNT };

struct site {
	char *title;
	int64_t now, since, newest;
	struct srec *r;
	size_t n, cap;
	bool column[METRIC_COUNT];	/* some record has a value */
	struct strmap pool;		/* interned strings, in keep()'s chunks */
	char **chunks;			/* of keep() */
	size_t nchunks, chunk_left;
	char *chunk_at;
	struct strmap paths;		/* store paths of the files read */
	struct cohort *c;
	size_t nc;
	size_t *sorted;			/* cohorts in natural order */
	struct schange *ch;
	size_t nch;
	cJSON **cps;			/* the change points' copies */
	struct sab *ab;
	size_t nab;
	cJSON **abs;
	size_t nabs;
	bool grouped;
	bool streams;			/* site_streams(): paths are remembered */
	const char **ncols;		/* the index's named-metric columns (named_headers) */
	size_t nncols;
	const char *last[F_COUNT];	/* field_of(): the record before's values */
};

/*
 * The keys, by position; those of the identity and the metrics come from
 * their tables. The last, past F_COUNT, is read by site_add_named().
 */
static const char *key_of[F_COUNT + 1] = { "model_id", "gpu_type", "timestamp", "commit_sha",
    "run_source", "comparison_status", "baseline_status", "comparison_status_reason",
    "success", "baseline_eligible", "result_schema_version",
    [F_POLICY] = "regression_thresholds", "build_url", [F_COUNT] = "metrics" };

const char *const *
site_keys(size_t *n)
{
	for (int i = 0; i < IDENTITY_KEYS; i++)
		key_of[F_IDENT + i] = identity_keys[i];
	for (int i = 0; i < METRIC_COUNT; i++)
		key_of[F_METRIC + i] = metric_table[i].key;
	*n = F_COUNT + 1;
	return key_of;
}

/* ---- strings ---- */

static const char *keep(struct site *s, const char *str);

static const char *
intern(struct site *s, const char *str)
{
	bool added;
	struct strmap_entry *e = strmap_put(&s->pool, str, &added);

	if (added)
		e->key = keep(s, str);	/* the pool's strings live in keep()'s chunks */
	return e->key;
}

/* A copy of str that lives as long as the site (no sharing: for what is unique). */
static const char *
keep(struct site *s, const char *str)
{
	size_t n = strlen(str) + 1;
	char *p;

	if (n > s->chunk_left) {
		size_t size = n > 65536 ? n : 65536;

		s->chunks = erealloc(s->chunks, (s->nchunks + 1) * sizeof *s->chunks);
		s->chunks[s->nchunks++] = s->chunk_at = emalloc(size);
		s->chunk_left = size;
	}
	p = s->chunk_at;
	memcpy(p, str, n);
	s->chunk_at += n;
	s->chunk_left -= n;
	return p;
}

/* keep() of a string value, missing for anything else. */
static const char *
keep_str(struct site *s, const cJSON *v, const char *missing)
{
	char *owned;
	const char *out;

	if (v == NULL || cJSON_IsNull(v))
		return missing;
	out = keep(s, history_pystr(v, missing, &owned));
	free(owned);
	return out;
}

/* Python str() of a value, interned; missing for a missing or null one. */
static const char *
str_of(struct site *s, const cJSON *v, const char *missing)
{
	char *owned;
	const char *out = intern(s, history_pystr(v, missing, &owned));

	free(owned);
	return out;
}

/*
 * str_of() of a field of a record, tried first against the same field of
 * the record before (a directory of the store is one model: most fields
 * repeat), which costs one strcmp() instead of a hash and a probe.
 */
static const char *
field_of(struct site *s, int field, const cJSON *v, const char *missing)
{
	const char *last = s->last[field];

	if (last != NULL && cJSON_IsString(v) && strcmp(v->valuestring, last) == 0)
		return last;
	return s->last[field] = str_of(s, v, missing);
}

/* Whether the path p was read from a store file (add: record it). */
static bool
path_seen(struct site *s, const char *p, bool add)
{
	bool added;

	if (!add)
		return strmap_find(&s->paths, p) != NULL;
	strmap_put(&s->paths, p, &added);
	return !added;
}

/*
 * Natural order: runs of digits compare as numbers (v2 before v10), the
 * rest byte by byte; equal ones (v02, v2) by strcmp().
 */
static int
natcmp(const char *a, const char *b)
{
	const char *x = a, *y = b;

	while (*x != '\0' && *y != '\0') {
		if (isdigit((unsigned char)*x) && isdigit((unsigned char)*y)) {
			size_t nx = 0, ny = 0;
			int c;

			while (*x == '0')
				x++;
			while (*y == '0')
				y++;
			while (isdigit((unsigned char)x[nx]))
				nx++;
			while (isdigit((unsigned char)y[ny]))
				ny++;
			if (nx != ny)
				return nx < ny ? -1 : 1;
			if ((c = memcmp(x, y, nx)) != 0)
				return c;
			x += nx;
			y += ny;
			continue;
		}
		if (*x != *y)
			return (unsigned char)*x < (unsigned char)*y ? -1 : 1;
		x++;
		y++;
	}
	if (*x != *y)
		return *x == '\0' ? -1 : 1;
	return strcmp(a, b);
}

/* ---- reading ---- */

struct site *
site_new(const char *title, int64_t now, long days)
{
	struct site *s = ecalloc(1, sizeof *s);
	size_t n;

	site_keys(&n);	/* the keys made whole before a record is read */
	s->title = estrdup(title);
	s->now = now;
	s->since = days > 0 ? now - (int64_t)days * 86400 * 1000000 : INT64_MIN;
	s->newest = INT64_MIN;
	return s;
}

void
site_streams(struct site *s)
{
	s->streams = true;
}

size_t
site_records(const struct site *s)
{
	return s->n;
}

static void
record_kind(struct site *s, const cJSON *const *f, struct srec *r)
{
	for (int i = 0; i < IDENTITY_KEYS; i++)
		r->ident[i] = field_of(s, F_IDENT + i, f[F_IDENT + i], "");
	r->kind = history_kind(r->ident, f + F_IDENT, f[F_SCHEMA]);
}

/* A record's named metrics with a finite value into r (a bad "metrics": none). */
static void
site_add_named(struct site *s, struct srec *r, const cJSON *metrics)
{
	struct named_metric *m;
	size_t n;
	char err[160];

	if (metrics == NULL || (m = nm_parse(metrics, &n, err, sizeof err)) == NULL)
		return;
	for (size_t j = 0; j < n; j++) {
		if (!m[j].has_value)
			continue;
		r->named = erealloc(r->named, (r->nnamed + 1) * sizeof *r->named);
		r->named[r->nnamed++] = (struct snamed){ intern(s, m[j].name),
		    intern(s, m[j].unit), m[j].value, m[j].better != BETTER_UNKNOWN ?
		    m[j].better : unit_better(m[j].unit) };
	}
	free(m);
}

void
site_add(struct site *s, const struct store_hit *h)
{
	const cJSON *f[F_COUNT];
	const char *path = keep(s, h->path);
	struct srec *r;
	char bad[64];
	double x;

	if (h->instant != ISOTIME_MIN && h->instant < s->since)
		return;
	if (s->streams && path_seen(s, path, !h->stream) && h->stream)
		return;		/* a stream's copy of a record of the store */
	history_fields(h->record, key_of, F_COUNT, f);
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->r = erealloc(s->r, s->cap * sizeof *s->r);
	}
	r = &s->r[s->n];
	memset(r, 0, sizeof *r);
	r->order = s->n++;
	r->instant = h->instant;
	r->path = path;
	r->model = field_of(s, F_MODEL, f[F_MODEL], "None");
	r->gpu = field_of(s, F_GPU, f[F_GPU], "None");
	r->ts = keep_str(s, f[F_TS], "");
	r->commit = str_of(s, f[F_COMMIT], "");
	r->src = field_of(s, F_SRC, f[F_SRC], "");
	r->status = field_of(s, F_STATUS, f[F_STATUS], "");
	r->bstatus = field_of(s, F_BSTATUS, f[F_BSTATUS], "");
	r->reason = keep_str(s, f[F_REASON], "");
	/* Only a web address becomes a link: never javascript: or data:. */
	if (history_web_url(f[F_URL]))
		r->url = keep(s, f[F_URL]->valuestring);
	r->success = history_success(f[F_SUCCESS]);
	r->eligible = history_eligible(f[F_ELIGIBLE], f[F_SRC]);
	record_kind(s, f, r);
	for (int i = 0; i < METRIC_COUNT; i++) {
		r->has[i] = policy_coerce(f[F_METRIC + i], &x) == COERCE_OK && isfinite(x);
		s->column[i] |= r->has[i];
		r->v[i] = r->has[i] ? x : 0;
	}
	if (policy_merge(f[F_POLICY], r->pol, bad, sizeof bad) != 0)
		policy_merge(NULL, r->pol, bad, sizeof bad);
	site_add_named(s, r, json_get(h->record, "metrics"));
	if (r->instant != ISOTIME_MIN && r->instant > s->newest)
		s->newest = r->instant;
}

/* ---- cohorts ---- */

static const struct site *sort_s;

static int
cmp_row(const void *a, const void *b)
{
	const struct srec *x = &sort_s->r[*(const size_t *)a], *y = &sort_s->r[*(const size_t *)b];
	int c;

	if (x->instant != y->instant)
		return x->instant < y->instant ? -1 : 1;
	if ((c = strcmp(x->path, y->path)) != 0)
		return c;
	return (x->order > y->order) - (x->order < y->order);
}

static int
cmp_cohort(const void *a, const void *b)
{
	const struct cohort *x = &sort_s->c[*(const size_t *)a], *y = &sort_s->c[*(const size_t *)b];
	int c;

	if ((c = natcmp(x->label, y->label)) != 0)
		return c;
	for (int i = 0; i < 9; i++)
		if ((c = natcmp(x->key[i], y->key[i])) != 0)
			return c;
	return 0;
}

/* A cohort's readable name. */
static char *
cohort_label(const struct cohort *c)
{
	const char *const *k = c->key + HKEY_IDENT;
	const char *kind = c->key[HKEY_KIND], *model = c->key[HKEY_MODEL],
	    *gpu = c->key[HKEY_GPU];
	const char *work = k[IDENTITY_WORKLOAD], *var = k[IDENTITY_VARIANT],
	    *ver = k[IDENTITY_BENCHMARK_VERSION];

	switch (kind[0] == 'v' ? KIND_V2 : kind[0] == 'i' ? KIND_INVALID_V2 : KIND_LEGACY_V1) {
	case KIND_V2:
		return easprintf("%s / %s / v%s", work, var, ver);
	case KIND_INVALID_V2:
		return easprintf("Invalid v2: %s / %s / %s%s (%s | %s)", *work ? work : "missing",
		    *var ? var : "missing", *ver ? "v" : "", *ver ? ver : "missing", model, gpu);
	default:
		return easprintf("Legacy v1: %s | %s", model, gpu);
	}
}

/*
 * A cohort's id: a readable slug of its name and the first 12 hex digits
 * of the SHA-256 of its key, so that it stays the same from one site to
 * the next and two cohorts of one name still differ.
 */
static void
cohort_id(struct cohort *c, const char *joined)
{
	char hex[SHA256_HEX];
	size_t n = 0;
	bool dash = false;

	canon_sha256_hex(joined, strlen(joined), hex);
	for (const char *p = c->label; *p != '\0' && n < 60; p++) {
		unsigned char ch = (unsigned char)*p;
		if (isalnum(ch) || ch == '.' || ch == '_') {
			c->id[n++] = (char)tolower(ch);
			dash = false;
		} else if (!dash && n > 0) {
			c->id[n++] = '-';
			dash = true;
		}
	}
	if (n > 0 && c->id[n - 1] != '-')
		c->id[n++] = '-';
	memcpy(c->id + n, hex, 12);
	c->id[n + 12] = '\0';
}

/* stats_median() of at most WINDOW values, sorted in place by insertion. */
static double
small_median(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The rolling gate again, with today's thresholds (those of the cohort's
 * latest record): each record against the median of the trusted records
 * before it (successful, baseline eligible, at most five).
 */
static void
recompute(struct site *s, struct cohort *c)
{
	const struct metric_policy *pol = c->last->pol;
	size_t win[WINDOW], nw = 0;
	double vals[WINDOW];

	for (size_t i = 0; i < c->n; i++) {
		struct srec *r = &s->r[c->rows[i]];

		r->exceeded = r->regressed = 0;
		for (int m = 0; m < METRIC_COUNT; m++) {
			size_t nv = 0;
			for (size_t k = 0; k < nw; k++)
				if (s->r[win[k]].has[m])
					vals[nv++] = s->r[win[k]].v[m];
			r->has_base[m] = nv > 0;
			r->base[m] = nv > 0 ? small_median(vals, nv) : 0;
			if (!r->has_base[m] || r->base[m] <= 0 || !r->has[m])
				continue;
			double d = metric_table[m].higher_is_better ? r->base[m] - r->v[m] :
			    r->v[m] - r->base[m];
			if (d / r->base[m] > pol[m].threshold_percent && d > pol[m].threshold_absolute) {
				r->exceeded |= 1u << m;
				if (pol[m].gated)
					r->regressed |= 1u << m;
			}
		}
		if (!r->success || strcmp(r->status, "INFRA_ERROR") == 0 ||
		    strcmp(r->status, "RECIPE_MISMATCH") == 0)
			r->today = *r->status ? r->status : "no status";
		else if (nw == 0)
			r->today = r->kind == KIND_V2 ? "CALIBRATION_NEEDED" : "PASS";
		else
			r->today = r->regressed ? "REGRESSION" : "PASS";
		if (r->success && r->eligible) {
			if (nw == WINDOW) {
				memmove(win, win + 1, (WINDOW - 1) * sizeof *win);
				nw--;
			}
			win[nw++] = c->rows[i];
		}
	}
}

/* The noise of each gate over the cohort's last trusted runs. */
static void
assess_gates(const struct site *s, struct cohort *c)
{
	double v[NOISE_RUNS];

	for (int m = 0; m < METRIC_COUNT; m++) {
		struct sens_gate g;
		size_t n = 0;

		for (size_t i = c->n; i-- > 0 && n < NOISE_RUNS;) {
			const struct srec *r = &s->r[c->rows[i]];
			if (r->success && r->eligible && r->has[m])
				v[n++] = r->v[m];
		}
		g.tp = c->last->pol[m].threshold_percent;
		g.ta = c->last->pol[m].threshold_absolute;
		g.higher = metric_table[m].higher_is_better;
		g.nb = n < WINDOW ? (n > 0 ? n : 1) : WINDOW;
		sens_noise_of(v, n, &c->gate[m].ns);
		sens_assess(&c->gate[m].ns, &g, 0.8, &c->gate[m].rp);
	}
}

static void
add_source(struct cohort *c, const char *src)
{
	char *want = easprintf("|%s|", *src ? src : "unknown"), *all;

	if (c->sources == NULL)
		c->sources = estrdup(want);
	else if (strstr(c->sources, want) == NULL) {
		all = easprintf("%s%s", c->sources, want + 1);
		free(c->sources);
		c->sources = all;
	}
	free(want);
}

static void
add_row(struct cohort *c, size_t i)
{
	if ((c->n & (c->n - 1)) == 0)	/* 0, 1, 2, 4...: grow to the next power of two */
		c->rows = erealloc(c->rows, (c->n ? c->n * 2 : 1) * sizeof *c->rows);
	c->rows[c->n++] = i;
}

/* Marks the first record of each commit of cohort c (its rows in order). */
static void
mark_anchors(struct site *s, struct cohort *c)
{
	struct strmap seen = STRMAP_INIT;
	bool added;

	strmap_reserve(&seen, c->n);
	for (size_t j = 0; j < c->n; j++) {
		struct srec *r = &s->r[c->rows[j]];

		r->anchor = false;
		if (*r->commit == '\0')
			continue;
		strmap_put(&seen, r->commit, &added);
		r->anchor = added;
	}
	strmap_free(&seen);
}

static void
group(struct site *s)
{
	size_t prev = 0;
	struct keyindex ki;

	if (s->grouped)
		return;
	s->grouped = true;
	keyindex_init(&ki, s->n);
	for (size_t i = 0; i < s->n; i++) {
		struct srec *r = &s->r[i];
		const char *key[HISTORY_KEY_PARTS];
		char *joined;
		bool added;

		history_cohort_key(key, r->kind, r->model, r->gpu, r->ident);
		/*
		 * The parts are interned: a record of the previous record's
		 * cohort (the store is read a directory at a time) is found
		 * by its pointers alone.
		 */
		if (s->nc > 0 && memcmp(key, s->c[prev].key, sizeof key) == 0) {
			add_row(&s->c[prev], i);
			continue;
		}
		joined = history_key_join(key);
		prev = keyindex_put(&ki, joined, s->nc, &added);
		if (added) {
			struct cohort *c;

			s->c = erealloc(s->c, (s->nc + 1) * sizeof *s->c);
			c = &s->c[s->nc];
			memset(c, 0, sizeof *c);
			memcpy(c->key, key, sizeof key);
			c->label = cohort_label(c);
			cohort_id(c, joined);	/* the index holds joined */
			s->nc++;
		}
		add_row(&s->c[prev], i);
	}
	keyindex_free(&ki);
	sort_s = s;
	for (size_t i = 0; i < s->nc; i++) {
		struct cohort *c = &s->c[i];
		qsort(c->rows, c->n, sizeof *c->rows, cmp_row);
		c->last = &s->r[c->rows[c->n - 1]];
		recompute(s, c);
		assess_gates(s, c);
		for (size_t j = 0; j < c->n; j++) {
			const struct srec *r = &s->r[c->rows[j]];
			c->any_eligible |= r->eligible;
			if (j == 0 || r->src != s->r[c->rows[j - 1]].src)
				add_source(c, r->src);
		}
		mark_anchors(s, c);
		c->stale = c->last->instant != ISOTIME_MIN && s->newest != INT64_MIN &&
		    s->newest - c->last->instant > STALE_US;
	}
	s->sorted = emalloc((s->nc + 1) * sizeof *s->sorted);
	for (size_t i = 0; i < s->nc; i++)
		s->sorted[i] = i;
	qsort(s->sorted, s->nc, sizeof *s->sorted, cmp_cohort);
}

/* The cohort of a change point, or (size_t)-1. */
static size_t
change_cohort(struct site *s, const cJSON *cp)
{
	bool v2 = json_get(cp, identity_keys[IDENTITY_WORKLOAD]) != NULL;
	const char *model = str_of(s, json_get(cp, "model_id"), "None");
	const char *gpu = str_of(s, json_get(cp, "gpu_type"), "None");
	const char *ident[IDENTITY_KEYS];

	for (int k = 0; k < IDENTITY_KEYS; k++)
		ident[k] = v2 ? str_of(s, json_get(cp, identity_keys[k]), "") : "";
	for (size_t i = 0; i < s->nc; i++) {
		const struct cohort *c = &s->c[i];
		bool same = strcmp(c->key[HKEY_KIND], v2 ? "v2" : "legacy_v1") == 0;

		if (same && !v2)
			same = c->key[HKEY_MODEL] == model && c->key[HKEY_GPU] == gpu;
		for (int k = 0; same && k < IDENTITY_KEYS; k++)
			same = c->key[HKEY_IDENT + k] == ident[k];
		if (same)
			return i;
	}
	return (size_t)-1;
}

bool
site_add_change(struct site *s, const cJSON *cp)
{
	int m = policy_metric_index(json_str(cp, "metric"));
	const char *dir = json_str(cp, "direction");
	/* A named metric's change point carries its unit (perf-changes(1)). */
	bool named = m < 0 && *json_str(cp, "metric") != '\0' &&
	    cJSON_IsString(json_get(cp, "unit"));

	if ((m < 0 && !named) || *dir == '\0')
		return false;
	s->cps = erealloc(s->cps, (s->nch + 1) * sizeof *s->cps);
	s->cps[s->nch] = cJSON_Duplicate(cp, true);
	s->ch = erealloc(s->ch, (s->nch + 1) * sizeof *s->ch);
	memset(&s->ch[s->nch], 0, sizeof *s->ch);
	s->ch[s->nch].cp = s->cps[s->nch];
	s->ch[s->nch].metric = m;
	s->ch[s->nch].worse = strcmp(dir, "worse") == 0;
	s->ch[s->nch].name = named ? intern(s, json_str(cp, "metric")) : NULL;
	if (!isotime_parse(json_str(cp, "timestamp") ? json_str(cp, "timestamp") : "",
	    &s->ch[s->nch].instant))
		s->ch[s->nch].instant = ISOTIME_MIN;
	s->nch++;
	return true;
}

bool
site_add_ab(struct site *s, const cJSON *report, const char *file)
{
	const cJSON *e;

	if (!cJSON_IsString(json_get(report, "schema")) ||
	    strcmp(json_str(report, "schema"), "perfkite.ab-report/1") != 0 ||
	    !cJSON_IsArray(json_get(report, "results")))
		return false;
	s->abs = erealloc(s->abs, (s->nabs + 1) * sizeof *s->abs);
	s->abs[s->nabs++] = cJSON_Duplicate(report, true);
	cJSON_ArrayForEach(e, json_get(s->abs[s->nabs - 1], "results")) {
		if (!cJSON_IsString(json_get(e, "benchmark_id")))
			continue;
		s->ab = erealloc(s->ab, (s->nab + 1) * sizeof *s->ab);
		s->ab[s->nab].file = intern(s, file);
		s->ab[s->nab].benchmark = intern(s, json_str(e, "benchmark_id"));
		s->ab[s->nab++].result = e;
	}
	return true;
}

/* Change points newest first, worse before better at one instant. */
static int
cmp_change(const void *a, const void *b)
{
	const struct schange *x = a, *y = b;

	if (x->instant != y->instant)
		return x->instant > y->instant ? -1 : 1;
	if (x->worse != y->worse)
		return x->worse ? -1 : 1;
	return x->metric - y->metric;
}

static void
place_changes(struct site *s)
{
	for (size_t i = 0; i < s->nch; i++) {
		struct schange *h = &s->ch[i];
		const char *st = json_str(json_get(h->cp, "decision"), "kind");

		h->cohort = change_cohort(s, h->cp);
		if (*st != '\0')
			h->state = intern(s, st);
		else
			h->state = json_truthy(json_get(h->cp, "tentative")) ? "tentative" : "undecided";
	}
	if (s->nch > 1)
		qsort(s->ch, s->nch, sizeof *s->ch, cmp_change);
	for (size_t i = 0; i < s->nch; i++)
		if (s->ch[i].cohort != (size_t)-1 && s->c[s->ch[i].cohort].latest_change == NULL)
			s->c[s->ch[i].cohort].latest_change = &s->ch[i];
}

/* ---- writing ---- */

/* Two digits of v (0 to 99). */
static void
two(buf *b, int v)
{
	buf_addc(b, (char)('0' + v / 10));
	buf_addc(b, (char)('0' + v % 10));
}

/*
 * A UTC time in the form strftime() gives it, for the forms of this file
 * (%Y %m %d %H %M %S and plain characters): the fields from
 * isotime_fields(), without gmtime's and strftime's cost on every record;
 * strftime() for a year outside 0 to 9999.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void
fmt_time(buf *b, int64_t us, const char *form)
{
	time_t t = (time_t)(us / 1000000);
	int y, mo, d, h, mi, sec, frac;

	if (us == ISOTIME_MIN) {
		buf_adds(b, "no time");
		return;
	}
	/* Whole seconds toward zero, as t is. */
	isotime_fields((int64_t)t * 1000000, &y, &mo, &d, &h, &mi, &sec, &frac);
	if (y < 0 || y > 9999) {
		struct tm tm;
		char str[64];

		gmtime_r(&t, &tm);
		strftime(str, sizeof str, form, &tm);
		buf_adds(b, str);
		return;
	}
	for (const char *f = form; *f != '\0'; f++) {
		if (*f != '%' || f[1] == '\0') {
			buf_addc(b, *f);
			continue;
		}
		switch (*++f) {
		case 'Y': two(b, y / 100); two(b, y % 100); break;
		case 'm': two(b, mo); break;
		case 'd': two(b, d); break;
		case 'H': two(b, h); break;
		case 'M': two(b, mi); break;
		case 'S': two(b, sec); break;
		default: buf_addc(b, '%'); buf_addc(b, *f);
		}
	}
}
#pragma GCC diagnostic pop

/* A number for a page: up to prec decimals, no trailing zeros. */
static void
num_text(buf *b, double x, int prec)
{
	static const double scale[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };

	/*
	 * Without printf where x times 10^prec is small and far from a
	 * half (printf rounds the exact binary value: a product within
	 * 1e-6 of a tie could round either way, so printf decides those).
	 */
	if (prec >= 0 && prec <= 6) {
		double y = x * scale[prec];
		if (fabs(y) < 1e9 && fabs(y - floor(y) - 0.5) > 1e-6) {
			long long q = llround(y);
			char d[24];
			int nd = 0, lead;

			if (q < 0) {
				buf_addc(b, '-');
				q = -q;
			}
			do {
				d[nd++] = (char)('0' + q % 10);
				q /= 10;
			} while (q > 0 || nd <= prec);
			for (lead = 0; lead < nd && lead < prec && d[lead] == '0'; lead++)
				;	/* trailing zeros of the decimals */
			for (int i = nd - 1; i >= lead; i--) {
				if (i == prec - 1)
					buf_addc(b, '.');
				buf_addc(b, d[i]);
			}
			return;
		}
	}

	history_label_num(b, x, prec);
}

static const char style[] =
    "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,Arial,sans-serif;"
    "margin:1.5rem;color:#1d2327;background:#fff}"
    "h1{font-size:1.4rem;margin:0 0 .3rem}h2{font-size:1.15rem;margin:1.4rem 0 .4rem}"
    "nav a{margin-right:1rem}.meta{color:#555;margin:.2rem 0 .8rem}"
    "table{border-collapse:collapse;margin:.4rem 0 1rem}"
    "th,td{border:1px solid #d0d4d8;padding:.2rem .45rem;text-align:left;vertical-align:middle}"
    "th{background:#f0f2f4}td.n{text-align:right}th[data-k]{cursor:pointer}"
    "code,a[href*=\"#\"],.rec td:nth-child(2){font:12px ui-monospace,Menlo,Consolas,monospace}"
    ".st{display:inline-block;border-radius:3px;padding:0 .35rem;font-size:12px;font-weight:600;"
    "color:#fff;background:#ef6c00}.st.PASS{background:#2e7d32}.st.REGRESSION{background:#c62828}"
    ".st.CALIBRATION_NEEDED{background:#1565c0}.x{color:#ef6c00;font-size:12px}"
    ".w{color:#c62828}.b{color:#2e7d32}"
    "td>svg{width:48px;height:14px;vertical-align:middle;margin-left:.3rem}"
    "td>svg path{fill:none;stroke:#5c6bc0;stroke-width:1.2}"
    "figure{margin:0 0 1rem}figcaption{font-weight:600}"
    "figure svg{width:100%;max-width:760px;height:auto;display:block;cursor:pointer}"
    "svg text{font:10px system-ui,sans-serif;fill:#555}.yl{text-anchor:end}"
    ".g{stroke:#e4e7ea}.ln{fill:none;stroke:#5c6bc0;stroke-width:1.4}"
    ".md{fill:none;stroke:#558b2f;stroke-width:1.2;stroke-dasharray:4 3}"
    ".band{fill:#9ccc65;fill-opacity:.25}.noise{fill:#90a4ae;fill-opacity:.18}"
    ".p0{fill:#2e7d32}.p1{fill:#c62828}.p2{fill:#1565c0}.p3{fill:#ef6c00}"
    ".cw{stroke:#c62828;stroke-width:1.4;stroke-dasharray:3 2}"
    ".cb{stroke:#2e7d32;stroke-width:1.4;stroke-dasharray:3 2}"
    "#f{margin:.3rem 0}#f select{margin-right:.6rem}tr:target{background:#fff8c4}"
    ".all td:nth-child(n+5),.rec td:nth-child(n+5){text-align:right}"
    ".all td:nth-last-child(-n+2){text-align:left}.rec td:nth-last-child(-n+2){text-align:left}";

/*
 * The optional script: the filter form (hidden without it) hides the rows
 * of each table of class f whose column (the heading with data-f=NAME)
 * is not the chosen value, or, without such a column, whose data-NAME
 * ("|a|b|") does not hold it; a click on a heading with data-k sorts its
 * table by that column (by the cells' data-v when they have one, else by
 * the percent a cell starts with, else by the text in natural order); a
 * click on a chart of a cohort page (figure m-METRIC) goes to the row of
 * the nearest record: the chart's records are the rows with a value in the
 * column whose heading has data-m=METRIC, newest first, from x = PL to
 * x = PL + PW (56 to 708).
 */
static const char script[] =
    "(function(){var f=document.getElementById('f');if(f){f.hidden=false;"
    "f.addEventListener('change',function(){var s=f.querySelectorAll('select');"
    "document.querySelectorAll('table.f').forEach(function(t){var c={};"
    "t.querySelectorAll('th[data-f]').forEach(function(h){c[h.dataset.f]=h.cellIndex});"
    "Array.prototype.forEach.call(t.tBodies[0].rows,function(r){var ok=true;"
    "for(var j=0;j<s.length;j++){var k=s[j].name,v=s[j].value,a;if(!v)continue;"
    "if(k in c)a=r.cells[c[k]].textContent==v;else{a=r.getAttribute('data-'+k);"
    "a=a===null||a.indexOf('|'+v+'|')>=0}ok=ok&&a}r.hidden=!ok})})})}"
    "document.querySelectorAll('th[data-k]').forEach(function(h){h.addEventListener('click',"
    "function(){var t=h.closest('table').tBodies[0],i=h.cellIndex,d=h.dataset.d=h.dataset.d=="
    "'1'?'-1':'1',r=Array.prototype.slice.call(t.rows);r.sort(function(a,b){var x=a.cells[i],"
    "y=b.cells[i],p=key(x),q=key(y);x=x?x.textContent:'';y=y?y.textContent:'';"
    "return d*(p!==undefined&&q!==undefined?p-q:x.localeCompare(y,undefined,{numeric:true}))});"
    "r.forEach(function(e){t.appendChild(e)})})});"
    "function key(c){var m;if(!c)return;if(c.dataset.v!==undefined)return+c.dataset.v;"
    "m=/^[+-]?[0-9.]+%/.exec(c.textContent);return m?parseFloat(m[0]):undefined}"
    "document.querySelectorAll('figure[id^=m-] svg').forEach(function(g){g.addEventListener("
    "'click',function(ev){var m=g.parentNode.id.slice(2),t=document.querySelector('table.rec'),"
    "h=t.querySelector('th[data-m=\"'+m+'\"]'),r=[],p=g.createSVGPoint(),k,e;if(!h||ev.target.closest('a'))return;"
    "Array.prototype.forEach.call(t.tBodies[0].rows,function(w){var c=w.cells[h.cellIndex];"
    "if(c&&c.textContent)r.push(w)});if(!r.length)return;p.x=ev.clientX;p.y=ev.clientY;"
    "p=p.matrixTransform(g.getScreenCTM().inverse());k=r.length<2?0:Math.round((p.x-56)/652*"
    "(r.length-1));e=r[r.length-1-Math.max(0,Math.min(r.length-1,k))];if(e.id)location.hash="
    "e.id;else e.scrollIntoView()})})})();\n";

static void
page_head(buf *b, const struct site *s, const char *title, const char *root)
{
	buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width\"><title>");
	xml_escape(b, title);
	buf_adds(b, "</title>\n");
	if (root != NULL)
		buf_addf(b, "<link rel=\"alternate\" type=\"application/atom+xml\" "
		    "href=\"%sfeed.xml\" title=\"Regressions\">\n", root);
	buf_addf(b, "<link rel=\"stylesheet\" href=\"%ssite.css\">\n</head>\n<body>\n"
	    "<nav><a href=\"%sindex.html\">Overview</a><a href=\"%schanges.html\">Change points"
	    "</a><a href=\"%sfeed.xml\">Feed</a></nav>\n<h1>", root, root, root, root);
	xml_escape(b, title);
	buf_adds(b, "</h1>\n<p class=\"meta\">");
	xml_escape(b, s->title);
	buf_adds(b, ", generated ");
	fmt_time(b, s->now, "%Y-%m-%d %H:%M UTC");
	buf_adds(b, "</p>\n");
}

/* The style and the script are files of the site, shared by every page. */
static void
page_tail(buf *b, const char *root)
{
	buf_addf(b, "<script src=\"%ssite.js\"></script>\n</body>\n</html>\n", root);
}

static void
badge(buf *b, const char *status)
{
	buf_adds(b, "<b class=\"st ");
	xml_escape(b, status);
	buf_adds(b, "\">");
	xml_escape(b, *status ? status : "no status");
	buf_adds(b, "</b>");
}

/*
 * The stored status, and today's when it differs, with the raw crossings;
 * a plain PASS (nothing else to say) is text, not a badge, so that what did
 * not pass stands out in a long table.
 */
static void
statuses(buf *b, const struct srec *r)
{
	bool differs = strcmp(r->today, r->status) != 0 && !(*r->status == '\0' &&
	    strcmp(r->today, "no status") == 0);

	if (!differs && !(r->exceeded & ~r->regressed) && strcmp(r->status, "PASS") == 0) {
		buf_adds(b, "PASS");
		return;
	}
	badge(b, r->status);
	if (differs) {
		buf_adds(b, " today ");
		badge(b, r->today);
	}
	if (r->exceeded & ~r->regressed) {
		bool first = true;
		buf_adds(b, " <span class=\"x\">exceeds, not gated:");
		for (int m = 0; m < METRIC_COUNT; m++)
			if ((r->exceeded & ~r->regressed) & (1u << m)) {
				buf_addf(b, "%s%s", first ? " " : ", ", metric_table[m].key);
				first = false;
			}
		buf_adds(b, "</span>");
	}
}

/*
 * A commit's short form as text: its first seven bytes (not cutting a
 * UTF-8 sequence), escaped; "unknown" for none.
 */
static void
short_commit(buf *b, const char *commit)
{
	size_t n = strlen(commit);
	char *cut;

	if (n == 0) {
		buf_adds(b, "unknown");
		return;
	}
	if (n > 7)
		for (n = 7; n > 0 && (commit[n] & 0xC0) == 0x80; n--)
			;
	cut = estrndup(commit, n);
	xml_escape(b, cut);
	free(cut);
}

/*
 * A commit's short form, linked to its record on the cohort page (set in
 * monospace by the style: every link of the site with a # is a commit's).
 */
static void
commit_link(buf *b, const char *prefix, const struct cohort *c, const char *commit)
{
	buf_addf(b, "<a href=\"%sc/%s.html#", prefix, c->id);
	xml_escape(b, commit);
	buf_adds(b, "\">");
	short_commit(b, commit);
	buf_adds(b, "</a>");
}

static void
cohort_link(buf *b, const char *prefix, const struct cohort *c)
{
	buf_addf(b, "<a href=\"%sc/%s.html\">", prefix, c->id);
	xml_escape(b, c->label);
	buf_adds(b, "</a>");
}

static int
cmp_nat(const void *a, const void *b)
{
	return natcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts strings naturally (the models of 2,000 cohorts: not by insertion). */
static void
natsort(const char **v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof *v, cmp_nat);
}

/* Adds v (interned) to the set seen[0..*n) when it is not there. */
static void
add_distinct(const char ***seen, size_t *n, const char *v)
{
	for (size_t j = 0; j < *n; j++)
		if ((*seen)[j] == v)
			return;
	*seen = erealloc(*seen, (*n + 1) * sizeof **seen);
	(*seen)[(*n)++] = v;
}

static void
options(buf *b, const char *label, const char *name, const char **v, size_t n)
{
	natsort(v, n);
	buf_addf(b, "<label>%s <select name=\"%s\"><option value=\"\">all</option>", label, name);
	for (size_t i = 0; i < n; i++) {
		buf_adds(b, "<option>");
		xml_escape(b, v[i]);
		buf_adds(b, "</option>");
	}
	buf_adds(b, "</select></label>");
}

/*
 * The filter form (shown by the script): the models, GPUs and run
 * sources of the site (c NULL), or the run sources of cohort c, and the
 * baseline eligibility.
 */
static void
filter_form(buf *b, struct site *s, const struct cohort *c)
{
	const char **v[3] = { NULL, NULL, NULL };
	size_t n[3] = { 0, 0, 0 };

	buf_adds(b, "<form id=\"f\" hidden>");
	if (c == NULL) {
		/*
		 * The sets are searched whole (models: one a cohort, 2,000 at
		 * 2,000 cohorts): only where a record differs from the one
		 * before (interned: compared by pointer), rarely, as the store
		 * is read a directory at a time.
		 */
		for (size_t i = 0; i < s->n; i++) {
			const struct srec *r = &s->r[i], *p = i > 0 ? &s->r[i - 1] : NULL;

			if (p == NULL || r->model != p->model)
				add_distinct(&v[0], &n[0], r->model);
			if (p == NULL || r->gpu != p->gpu)
				add_distinct(&v[1], &n[1], r->gpu);
			if (p == NULL || r->src != p->src)
				add_distinct(&v[2], &n[2], *r->src ? r->src : "unknown");
		}
		options(b, "model", "m", v[0], n[0]);
		options(b, "GPU", "g", v[1], n[1]);
	} else
		for (const char *p = c->sources + 1; *p != '\0';) {
			const char *e = strchr(p, '|');
			char *one = estrndup(p, (size_t)(e - p));
			add_distinct(&v[2], &n[2], intern(s, one));
			free(one);
			p = e + 1;
		}
	options(b, "run source", "s", v[2], n[2]);
	buf_adds(b, "<label>baseline <select name=\"e\"><option value=\"\">all</option>"
	    "<option value=\"yes\">eligible</option><option value=\"no\">not eligible</option>"
	    "</select></label></form>\n");
	for (int k = 0; k < 3; k++)
		free(v[k]);
}

/* The sparkline of the metric's last SPARK values. */
static void
sparkline(buf *b, const struct site *s, const struct cohort *c, int m)
{
	double v[SPARK], lo = INFINITY, hi = -INFINITY;
	size_t n = 0;
	int px = 0, py = 0;

	for (size_t i = c->n; i-- > 0 && n < SPARK;)
		if (s->r[c->rows[i]].has[m])
			v[n++] = s->r[c->rows[i]].v[m];
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		lo = fmin(lo, v[i]);
		hi = fmax(hi, v[i]);
	}
	buf_adds(b, "<svg><path d=\"");
	for (size_t k = 0; k < n; k++) {
		double x = v[n - 1 - k];
		int nx = n < 2 ? 24 : (int)lround((double)k * 47 / (double)(n - 1));

		int ny = hi > lo ? 1 + (int)lround((hi - x) / (hi - lo) * 12) : 7;
		/* "M x y", then "l dx dy" and " dx dy", no space before a minus */
		buf_addc(b, k == 0 ? 'M' : k == 1 ? 'l' : ' ');
		history_add_int(b, k == 0 ? nx : nx - px);
		if (k == 0 || ny - py >= 0)
			buf_addc(b, ' ');
		history_add_int(b, k == 0 ? ny : ny - py);
		px = nx;
		py = ny;
	}
	if (n == 1)
		buf_adds(b, "h1");
	buf_adds(b, "\"/></svg>");
}

/*
 * The percent pct as a cell shows it ("+1.2%", one decimal), in a span of
 * class w (worse) or b (better) when it is past its threshold.
 */
static void
pct_cell_text(buf *b, double pct, bool past, bool worse)
{
	char t[NUM_BUFSZ];

	if (past)
		buf_addf(b, "<span class=\"%s\">", worse ? "w" : "b");
	buf_addf(b, "%s%s%%", pct >= 0 ? "+" : "", num_fixed(t, pct, 1));
	if (past)
		buf_adds(b, "</span>");
}

/* The change of metric m of the cohort's latest record from its baseline, in percent. */
static void
change_cell(buf *b, const struct site *s, const struct cohort *c, int m)
{
	const struct srec *r = c->last;

	buf_adds(b, "<td");
	if (r->has[m] && r->has_base[m] && r->base[m] > 0) {
		double pct = (r->v[m] / r->base[m] - 1) * 100;
		double worse = metric_table[m].higher_is_better ? -pct : pct;
		bool past = fabs(pct) > r->pol[m].threshold_percent * 100;
		buf_addc(b, '>');	/* the script sorts by the percent the cell shows */
		pct_cell_text(b, pct, past, worse > 0);
	} else
		buf_addc(b, '>');
	sparkline(b, s, c, m);
}

/*
 * The data attributes the filter reads where the table has no column of
 * them: run sources ("|a|b|"), eligibility, and with model, model and GPU.
 */
static void
row_data(buf *b, const char *model, const char *gpu, const char *sources, bool eligible)
{
	if (model != NULL) {
		buf_adds(b, " data-m=\"|");
		xml_escape(b, model);
		buf_adds(b, "|\" data-g=\"|");
		xml_escape(b, gpu);
		buf_adds(b, "|\"");
	}
	buf_adds(b, " data-s=\"");
	xml_escape(b, sources);
	buf_addf(b, "\" data-e=\"|%s|\"", eligible ? "yes" : "no");
}

static void
change_text(buf *b, const struct schange *h)
{
	const cJSON *fc = json_get(h->cp, "forward_change_percent");
	char t[NUM_BUFSZ];

	if (h->name != NULL)
		xml_escape(b, h->name);
	buf_addf(b, "%s <span class=\"%s\">%s %s%s%%</span>", h->name != NULL ? "" :
	    metric_table[h->metric].key, h->worse ? "w" : "b", h->worse ? "worse" : "better",
	    cJSON_IsNumber(fc) && fc->valuedouble >= 0 ? "+" : "",
	    num_fixed(t, cJSON_IsNumber(fc) ? fc->valuedouble : 0, 1));
}

/* ", culprit: abc1234" when a stored bisect found it (perf-changes(1) "culprit"). */
static void
culprit_text(buf *b, const cJSON *cp)
{
	const cJSON *k = json_get(cp, "culprit");

	if (!cJSON_IsString(json_get(k, "short")))
		return;
	buf_adds(b, ", culprit: ");
	xml_escape(b, json_str(k, "short"));
	if (*json_str(k, "subject") != '\0') {
		buf_adds(b, " (");
		xml_escape(b, json_str(k, "subject"));
		buf_addc(b, ')');
	}
}

/* The named metric of record r called name (any unit), or NULL. */
static const struct snamed *
named_of(const struct srec *r, const char *name)
{
	for (size_t j = 0; j < r->nnamed; j++)
		if (r->named[j].name == name)
			return &r->named[j];
	return NULL;
}

/*
 * The index's named-metric columns: the names of the NAMED_COLUMNS
 * named metrics the most cohorts have (ties: the name first seen), into
 * a new array of *n.
 */
static const char **
named_column_names(const struct site *s, size_t *n)
{
	const char **name = NULL;
	size_t *count = NULL, nn = 0;

	for (size_t i = 0; i < s->nc; i++) {
		const struct cohort *c = &s->c[i];
		const struct srec *last = c->last;

		/* A cohort counts for the names of its latest record. */
		for (size_t j = 0; j < last->nnamed; j++) {
			size_t k = 0;

			while (k < nn && name[k] != last->named[j].name)
				k++;
			if (k == nn) {
				name = erealloc(name, (nn + 1) * sizeof *name);
				count = erealloc(count, (nn + 1) * sizeof *count);
				name[nn] = last->named[j].name;
				count[nn++] = 0;
			}
			count[k]++;
		}
	}
	/* Most cohorts first, stably: a selection of the first NAMED_COLUMNS. */
	for (size_t i = 0; i < nn && i < NAMED_COLUMNS; i++) {
		size_t best = i;

		for (size_t k = i + 1; k < nn; k++)
			if (count[k] > count[best])
				best = k;
		for (size_t k = best; k > i; k--) {
			const char *t = name[k];
			size_t tc = count[k];

			name[k] = name[k - 1];
			count[k] = count[k - 1];
			name[k - 1] = t;
			count[k - 1] = tc;
		}
	}
	free(count);
	*n = nn < NAMED_COLUMNS ? nn : NAMED_COLUMNS;
	return name;
}

/* The index's header cells of its named-metric columns, chosen here. */
static void
named_headers(buf *b, struct site *s)
{
	free(s->ncols);
	s->ncols = named_column_names(s, &s->nncols);
	for (size_t k = 0; k < s->nncols; k++) {
		buf_adds(b, "<th data-k title=\"latest against the median of the five eligible "
		    "runs before it\">");
		xml_escape(b, s->ncols[k]);
		buf_adds(b, "</th>");
	}
}

/*
 * The index's named-metric cells of cohort c (named_headers() first):
 * the change of its latest record's value from the median of the five
 * eligible records before it with that metric in the same unit, in
 * percent, red or green past 5% when its direction is known.
 */
static void
named_cells(buf *b, const struct site *s, const struct cohort *c)
{
	const char *const *name = s->ncols;
	char t[NUM_BUFSZ];

	for (size_t k = 0; k < s->nncols; k++) {
		const struct snamed *cur, *e;
		double v[WINDOW];
		size_t nv = 0;

		buf_adds(b, "<td");
		cur = named_of(c->last, name[k]);
		for (size_t i = c->n; cur != NULL && i-- > 0 && nv < WINDOW;) {
			const struct srec *r = &s->r[c->rows[i]];

			if (r != c->last && r->eligible && (e = named_of(r, name[k])) != NULL &&
			    e->unit == cur->unit)
				v[nv++] = e->v;
		}
		if (nv > 0 && small_median(v, nv) > 0) {
			double pct = (cur->v / small_median(v, nv) - 1) * 100;
			double worse = cur->better == BETTER_HIGHER ? -pct : pct;
			bool past = cur->better != BETTER_UNKNOWN && fabs(pct) > 5;

			buf_addf(b, " data-v=\"%s\">", num_fixed(t, pct, 2));
			pct_cell_text(b, pct, past, worse > 0);
		} else
			buf_adds(b, ">");
	}
}

/* One row of every cohort (end tags left out, as HTML5 allows: 2,000 rows). */
static void
index_row(buf *b, const struct site *s, const struct cohort *c)
{
	const struct srec *r = c->last;

	buf_adds(b, "<tr");
	row_data(b, NULL, NULL, c->sources, c->any_eligible);
	buf_adds(b, "><td>");
	cohort_link(b, "", c);
	buf_adds(b, "<td>");
	xml_escape(b, r->model);
	buf_adds(b, "<td>");
	xml_escape(b, r->gpu);
	buf_adds(b, "<td>");
	statuses(b, r);
	for (int m = 0; m < METRIC_COUNT; m++)
		if (s->column[m])
			change_cell(b, s, c, m);
	named_cells(b, s, c);
	buf_adds(b, "<td>");
	if (c->latest_change != NULL) {
		change_text(b, c->latest_change);
		buf_adds(b, " ");
		commit_link(b, "", c, json_str(c->latest_change->cp, "commit_sha") ?
		    json_str(c->latest_change->cp, "commit_sha") : "");
	}
	/*
	 * Sorted as its text (an ISO date); the commit as text: the last run
	 * is the first row of the cohort's page, one link away.
	 */
	buf_adds(b, "<td>");
	fmt_time(b, r->instant, "%Y-%m-%d %H:%M");
	if (*r->commit) {
		buf_addc(b, ' ');
		short_commit(b, r->commit);
	}
	buf_addc(b, '\n');
}

/* What needs attention, worst first. */
struct alert {
	int rank;
	int64_t instant;
	const struct cohort *c;
	const struct schange *h;
	const struct srec *r;
	int metric;
};

static int
cmp_alert(const void *a, const void *b)
{
	const struct alert *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (x->instant != y->instant)
		return x->instant > y->instant ? -1 : 1;
	return natcmp(x->c->label, y->c->label);
}

/* The latest scheduled run of a cohort when it failed its gate, else NULL. */
static const struct srec *
scheduled_failure(const struct site *s, const struct cohort *c)
{
	for (size_t i = c->n; i-- > 0;) {
		const struct srec *r = &s->r[c->rows[i]];
		if (strcmp(r->src, "scheduled_main") == 0)
			return history_failing(r->status) ? r : NULL;
	}
	return NULL;
}

static struct alert *
alerts_of(const struct site *s, size_t *na)
{
	struct alert *a = NULL;
	size_t n = 0;

	for (size_t i = 0; i < s->nch; i++) {
		const struct schange *h = &s->ch[i];
		if (!h->worse || strcmp(h->state, "undecided") != 0 || h->cohort == (size_t)-1)
			continue;
		a = erealloc(a, (n + 1) * sizeof *a);
		a[n++] = (struct alert){ 0, h->instant, &s->c[h->cohort], h, NULL, h->metric };
	}
	for (size_t i = 0; i < s->nc; i++) {
		const struct cohort *c = &s->c[i];
		const struct srec *r = scheduled_failure(s, c);

		if (r != NULL) {
			a = erealloc(a, (n + 1) * sizeof *a);
			a[n++] = (struct alert){ 1, r->instant, c, NULL, r, -1 };
		}
		for (int m = 0; m < METRIC_COUNT; m++)
			if (c->gate[m].rp.advice == SENS_NOISY || c->gate[m].rp.advice == SENS_BLIND) {
				a = erealloc(a, (n + 1) * sizeof *a);
				a[n++] = (struct alert){ 2, c->last->instant, c, NULL, NULL, m };
			}
		if (c->stale) {
			a = erealloc(a, (n + 1) * sizeof *a);
			a[n++] = (struct alert){ 3, c->last->instant, c, NULL, NULL, -1 };
		}
	}
	if (n > 1)
		qsort(a, n, sizeof *a, cmp_alert);
	*na = n;
	return a;
}

static void coord1(buf *b, double v);

static void
pct_text(buf *b, double f)
{
	coord1(b, f * 100);
	buf_addc(b, '%');
}

static void
attention(buf *b, const struct site *s)
{
	size_t na;
	struct alert *a = alerts_of(s, &na);

	buf_adds(b, "<h2 id=\"attention\">Needs attention</h2>\n");
	if (na == 0) {
		buf_adds(b, "<p>Nothing: no undecided worse change point, no failing scheduled "
		    "run, no noisy or blind gate, no stale cohort.</p>\n");
		free(a);
		return;
	}
	buf_adds(b, "<table class=\"f\"><thead><tr><th>What</th><th>Cohort</th><th>Detail</th>"
	    "<th>When</th><th>Commit</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < na && i < ATTENTION; i++) {
		const struct alert *e = &a[i];
		const struct srec *last = e->c->last;

		buf_adds(b, "<tr");
		row_data(b, last->model, last->gpu, e->c->sources, e->c->any_eligible);
		buf_adds(b, "><td>");
		switch (e->rank) {
		case 0:
			buf_adds(b, "<span class=\"w\">worse change point</span></td><td>");
			cohort_link(b, "", e->c);
			buf_adds(b, "</td><td>");
			change_text(b, e->h);
			buf_adds(b, ", ");
			xml_escape(b, e->h->state);
			break;
		case 1:
			buf_adds(b, "<span class=\"w\">scheduled run failed</span></td><td>");
			cohort_link(b, "", e->c);
			buf_adds(b, "</td><td>");
			badge(b, e->r->status);
			buf_adds(b, " ");
			{
				char *cut = strlen(e->r->reason) > 200 ?
				    easprintf("%.197s...", e->r->reason) : NULL;
				xml_escape(b, cut != NULL ? cut : e->r->reason);
				free(cut);
			}
			break;
		case 2:
			buf_addf(b, "%s gate</td><td>", sens_advice_name(e->c->gate[e->metric].rp.advice));
			cohort_link(b, "", e->c);
			buf_addf(b, "</td><td>%s: noise ", metric_table[e->metric].key);
			pct_text(b, e->c->gate[e->metric].ns.spread);
			buf_adds(b, ", false alarms ");
			pct_text(b, e->c->gate[e->metric].rp.far);
			buf_adds(b, ", detects ");
			pct_text(b, e->c->gate[e->metric].rp.mde);
			break;
		default:
			buf_adds(b, "stale</td><td>");
			cohort_link(b, "", e->c);
			buf_adds(b, "</td><td>no run since ");
			fmt_time(b, last->instant, "%Y-%m-%d");
		}
		buf_adds(b, "</td><td>");
		fmt_time(b, e->instant, "%Y-%m-%d %H:%M");
		buf_adds(b, "</td><td>");
		{
			const char *commit = e->h != NULL ? json_str(e->h->cp, "commit_sha") :
			    e->r != NULL ? e->r->commit : last->commit;
			if (*commit != '\0')
				commit_link(b, "", e->c, commit);
		}
		buf_adds(b, "</td></tr>\n");
	}
	buf_adds(b, "</tbody></table>\n");
	if (na > ATTENTION)
		buf_addf(b, "<p class=\"meta\">%zu more not shown.</p>\n", na - ATTENTION);
	free(a);
}

static void
index_page(buf *b, struct site *s)
{
	page_head(b, s, s->title, "");
	buf_addf(b, "<p class=\"meta\">%zu record%s in %zu cohort%s; %zu change point%s.</p>\n",
	    s->n, s->n == 1 ? "" : "s", s->nc, s->nc == 1 ? "" : "s", s->nch,
	    s->nch == 1 ? "" : "s");
	if (s->nc == 0) {
		buf_adds(b, "<p>The store holds no records: nothing to show.</p>\n");
		page_tail(b, "");
		return;
	}
	filter_form(b, s, NULL);
	attention(b, s);
	buf_adds(b, "<h2 id=\"cohorts\">Every cohort</h2>\n<table class=\"f all\"><thead><tr>"
	    "<th data-k>Cohort</th><th data-k data-f=\"m\">Model</th><th data-k data-f=\"g\">GPU</th><th data-k>Status</th>");
	for (int m = 0; m < METRIC_COUNT; m++)
		if (s->column[m])
			buf_addf(b, "<th data-k title=\"latest against its baseline median\">%s</th>",
			    metric_table[m].label);
	named_headers(b, s);
	buf_adds(b, "<th data-k>Latest change point</th><th data-k>Last run</th></tr></thead>"
	    "<tbody>\n");
	for (size_t i = 0; i < s->nc; i++)
		index_row(b, s, &s->c[s->sorted[i]]);
	buf_adds(b, "</tbody></table>\n");
	page_tail(b, "");
}

/* ---- a cohort's page ---- */

#define CW 720.0
#define CH 200.0
#define PL 56.0
#define PR 12.0
#define PT 10.0
#define PB 24.0
#define PW (CW - PL - PR)

/*
 * v with one decimal, as printf's "%.1f" writes it, without printf where
 * v is small and ten times v far from a half (the test of num_text()):
 * glibc prints a double through multiple precision, and a page of a short
 * history is mostly coordinates (2,000 cohorts: 10,000 charts).
 */
static void
coord1(buf *b, double v)
{
	double y = v * 10;
	long long q;

	if (!(fabs(y) < 1e9 && fabs(y - floor(y) - 0.5) > 1e-6) || (signbit(v) && llround(y) == 0)) {
		buf_addf(b, "%.1f", v);
		return;
	}
	q = llround(y);
	if (q < 0) {
		buf_addc(b, '-');
		q = -q;
	}
	history_add_int(b, q / 10);
	buf_addc(b, '.');
	buf_addc(b, (char)('0' + q % 10));
}

/* A coordinate rounded to a whole unit, without printf. */
static void
icoord(buf *b, double v)
{
	if (!(fabs(v) < 1e15)) {
		buf_addf(b, "%.0f", v);
		return;
	}
	history_add_int(b, llround(v));
}


/*
 * A point of a path in whole units: "M x y" where the pen is up, else
 * relative to the last point ("l dx dy", "h dx", "v dy"), the command
 * left out when it repeats, no space before a minus sign. Horizontal
 * steps are held and drawn as one (a flat run of records is one "h"):
 * pen_end() draws what is held, and lifts the pen.
 */
struct pen {
	bool down;
	char cmd;
	long x, y;
	long held;			/* a horizontal step not yet drawn */
};

/* Draws the command cmd's first number v (the command when it changes). */
static void
pen_cmd(buf *b, struct pen *p, char cmd, long v)
{
	if (cmd != p->cmd)
		buf_addc(b, cmd);
	else if (v >= 0)
		buf_addc(b, ' ');
	history_add_int(b, v);
	p->cmd = cmd;
}

static void
pen_end(buf *b, struct pen *p)
{
	if (p->held != 0)
		pen_cmd(b, p, 'h', p->held);
	p->held = 0;
	p->down = false;
}

static void
step(buf *b, struct pen *p, double fx, double fy)
{
	long x, y, dx, dy;

	if (!(fabs(fx) < 1e9 && fabs(fy) < 1e9))
		return;		/* not a drawable point */
	x = lround(fx);
	y = lround(fy);
	dx = x - p->x;
	dy = y - p->y;
	if (!p->down) {
		buf_addc(b, 'M');
		history_add_int(b, x);
		buf_addc(b, ' ');
		history_add_int(b, y);
		p->down = true;
		p->cmd = 'M';
	} else if (dy == 0) {
		p->held += dx;
	} else {
		if (p->held != 0) {
			pen_cmd(b, p, 'h', p->held);
			p->held = 0;
		}
		if (dx == 0)
			pen_cmd(b, p, 'v', dy);
		else {
			pen_cmd(b, p, 'l', dx);
			if (dy >= 0)
				buf_addc(b, ' ');
			history_add_int(b, dy);
		}
	}
	p->x = x;
	p->y = y;
}

static double
x_of(size_t k, size_t n)
{
	return n < 2 ? PL + PW / 2 : PL + (double)k / (double)(n - 1) * PW;
}

static double
y_of(const struct svgaxis *ya, double v)
{
	return PT + (ya->hi - v) / (ya->hi - ya->lo) * (CH - PT - PB);
}

static int
shape_of(const char *status)
{
	return strcmp(status, "PASS") == 0 ? 0 : strcmp(status, "REGRESSION") == 0 ? 1 :
	    strcmp(status, "CALIBRATION_NEEDED") == 0 ? 2 : 3;
}

/* The value of a chart's k-th point: false where it has none (a gap in the path). */
typedef bool chart_point(const void *ctx, size_t k, double *v);

/* The path through a chart's n points, lifting the pen over each gap. */
static void
chart_path(buf *b, const struct svgaxis *ya, size_t n, chart_point *get, const void *ctx)
{
	struct pen p = { false, 0, 0, 0, 0 };
	double v;

	for (size_t k = 0; k < n; k++) {
		if (!get(ctx, k, &v))
			pen_end(b, &p);
		else
			step(b, &p, x_of(k, n), y_of(ya, v));
	}
	pen_end(b, &p);
}

/* The records (site rows idx) of one of the six metrics' charts. */
struct metric_points {
	const struct site *s;
	const size_t *idx;
	int m;
};

static bool
metric_point(const void *ctx, size_t k, double *v)
{
	const struct metric_points *p = ctx;

	*v = p->s->r[p->idx[k]].v[p->m];
	return true;
}

/* The rolling baseline median of a record, where it has one. */
static bool
baseline_point(const void *ctx, size_t k, double *v)
{
	const struct metric_points *p = ctx;
	const struct srec *r = &p->s->r[p->idx[k]];

	*v = r->base[p->m];
	return r->has_base[p->m];
}

/* The line of change point h drawn at x. */
typedef void change_line(buf *b, const struct schange *h, double x);

/*
 * The change points of metric m (name NULL) or of the named metric name
 * (m -1) in cohort c: a line each at the first of the chart's n records
 * (site rows idx) at or after it; none after the chart's last record.
 */
static void
change_lines(buf *b, const struct site *s, const struct cohort *c, const size_t *idx,
    size_t n, int m, const char *name, change_line *line)
{
	for (size_t i = 0; i < s->nch; i++) {
		const struct schange *h = &s->ch[i];
		size_t k;

		if (h->metric != m || h->name != name || h->cohort != (size_t)(c - s->c))
			continue;
		for (k = 0; k < n && s->r[idx[k]].instant < h->instant; k++)
			;
		if (k < n)
			line(b, h, x_of(k, n));
	}
}

/* A change point of one of the six metrics: its reason and culprit in the title. */
static void
metric_change_line(buf *b, const struct schange *h, double x)
{
	buf_addf(b, "<line class=\"%s\" x1=\"", h->worse ? "cw" : "cb");
	coord1(b, x);
	buf_adds(b, "\" x2=\"");
	coord1(b, x);
	buf_adds(b, "\" y1=\"");
	icoord(b, PT);
	buf_adds(b, "\" y2=\"");
	icoord(b, CH - PB);
	buf_adds(b, "\"><title>");
	buf lab = BUF_INIT;
	change_text(&lab, h);
	/* the title is text: drop the span */
	for (char *p = lab.s; p != NULL && (p = strchr(p, '<')) != NULL;) {
		char *e = strchr(p, '>');
		if (e == NULL)
			break;
		memmove(p, e + 1, strlen(e + 1) + 1);
	}
	buf_addf(b, "change point: %s, commit ", lab.s);
	short_commit(b, json_str(h->cp, "commit_sha") ? json_str(h->cp, "commit_sha") : "");
	buf_adds(b, ", ");
	xml_escape(b, h->state);
	culprit_text(b, h->cp);
	buf_adds(b, "</title></line>");
	buf_free(&lab);
}

/* Whether a record of a chart has a marker (latest: it is the chart's last). */
static bool
marked(const struct srec *r, bool latest)
{
	return latest || history_failing(r->status) || history_failing(r->today);
}

/*
 * The chart of metric m: its records in order (the x axis counts records,
 * the ticks give their dates), the line, the rolling baseline median, the
 * gate's band and the noise band at the latest baseline, the change points,
 * and a marker for the latest record and for each record whose status, stored
 * or today's, is a failure (the last MARKERS of them), linked to its build
 * (else its row) and titled with its commit and value. Every other record
 * is a point of the line and a row of the records table: a marker each
 * would make the page of a long history several times larger.
 */
static void
chart(buf *b, const struct site *s, const struct cohort *c, int m)
{
	const struct srec *last = c->last;
	size_t *idx = emalloc((c->n + 1) * sizeof *idx), n = 0;
	double lo = INFINITY, hi = -INFINITY, med = 0, edge = 0;
	bool band = false;
	struct svgaxis ya;
	int prec = metric_table[m].precision;

	for (size_t i = 0; i < c->n; i++)
		if (s->r[c->rows[i]].has[m]) {
			idx[n++] = c->rows[i];
			lo = fmin(lo, s->r[c->rows[i]].v[m]);
			hi = fmax(hi, s->r[c->rows[i]].v[m]);
		}
	if (last->has_base[m] && last->base[m] > 0) {
		double tol = fmax(last->pol[m].threshold_percent * last->base[m],
		    last->pol[m].threshold_absolute);
		med = last->base[m];
		edge = metric_table[m].higher_is_better ? med - tol : med + tol;
		band = true;
		lo = fmin(lo, fmin(med, edge));
		hi = fmax(hi, fmax(med, edge));
	}
	svgaxis_linear(&ya, lo, hi, 4);
	buf_adds(b, "<figure id=\"m-");
	buf_adds(b, metric_table[m].key);
	buf_adds(b, "\"><figcaption>");
	buf_adds(b, metric_table[m].label);
	buf_adds(b, " (");
	buf_adds(b, units[m]);
	buf_adds(b, ")</figcaption><svg viewBox=\"0 0 ");
	icoord(b, CW);
	buf_addc(b, ' ');
	icoord(b, CH);
	buf_adds(b, "\" role=\"img\"><title>");
	xml_escape(b, c->label);
	buf_adds(b, ": ");
	buf_adds(b, metric_table[m].key);
	buf_adds(b, "</title><path class=\"g\" d=\"");
	for (int t = 0; t < ya.n; t++) {
		buf_addc(b, 'M');
		icoord(b, PL);
		buf_addc(b, ' ');
		coord1(b, y_of(&ya, ya.v[t]));
		buf_addc(b, 'H');
		icoord(b, CW - PR);
	}
	buf_adds(b, "\"/>");
	for (int t = 0; t < ya.n; t++) {
		buf_adds(b, "<text class=\"yl\" x=\"");
		icoord(b, PL - 4);
		buf_adds(b, "\" y=\"");
		coord1(b, y_of(&ya, ya.v[t]) + 3.5);
		buf_adds(b, "\">");
		buf_adds(b, ya.label[t]);
		buf_adds(b, "</text>");
	}
	/* Dates under five evenly spaced records. */
	for (int t = 0; t < 5 && n > 0; t++) {
		size_t k = n < 2 ? 0 : (size_t)lround((double)t * (double)(n - 1) / 4);
		buf lab = BUF_INIT;
		if (t > 0 && n < 5 && k == (size_t)lround((double)(t - 1) * (double)(n - 1) / 4))
			continue;
		fmt_time(&lab, s->r[idx[k]].instant, n > 0 && s->r[idx[n - 1]].instant -
		    s->r[idx[0]].instant < 5 * 86400 * 1000000LL ? "%m-%d %H:%M" : "%Y-%m-%d");
		double x = x_of(k, n);
		const char *an = svgaxis_anchor(x, svgaxis_text_width(lab.s, 10), 0, CW);
		buf_adds(b, "<text x=\"");
		coord1(b, x);
		buf_adds(b, "\" y=\"");
		icoord(b, CH - 8);
		buf_adds(b, "\" text-anchor=\"");
		buf_adds(b, an);
		buf_adds(b, "\">");
		buf_adds(b, lab.s);
		buf_adds(b, "</text>");
		buf_free(&lab);
		if (n < 2)
			break;
	}
	if (band) {
		const struct sens_noise *ns = &c->gate[m].ns;
		double y1 = y_of(&ya, med), y2 = y_of(&ya, edge);
		buf lab = BUF_INIT;

		if (ns->known && ns->spread > 0) {
			double a = y_of(&ya, fmin(hi, med * (1 + ns->spread)));
			double z = y_of(&ya, fmax(lo, med * (1 - ns->spread)));
			buf_adds(b, "<rect class=\"noise\" x=\"");
			icoord(b, PL);
			buf_adds(b, "\" y=\"");
			coord1(b, a);
			buf_adds(b, "\" width=\"");
			icoord(b, PW);
			buf_adds(b, "\" height=\"");
			coord1(b, z - a);
			buf_adds(b, "\"><title>noise: ");
			pct_text(b, ns->spread);
			buf_adds(b, " of the median</title></rect>");
		}
		buf_adds(b, "<rect class=\"band\" x=\"");
		icoord(b, PL);
		buf_adds(b, "\" y=\"");
		coord1(b, fmin(y1, y2));
		buf_adds(b, "\" width=\"");
		icoord(b, PW);
		buf_adds(b, "\" height=\"");
		coord1(b, fabs(y2 - y1));
		buf_adds(b, "\"><title>gate: baseline median ");
		num_text(&lab, med, prec);
		buf_addf(b, "%s %s, regression past ", lab.s, units[m]);
		buf_reset(&lab);
		num_text(&lab, edge, prec);
		buf_addf(b, "%s %s</title></rect>", lab.s, units[m]);
		buf_free(&lab);
	}
	/* The rolling baseline median of each record, then the values. */
	struct metric_points pts = { s, idx, m };

	buf_adds(b, "<path class=\"md\" d=\"");
	chart_path(b, &ya, n, baseline_point, &pts);
	buf_adds(b, "\"/><path class=\"ln\" d=\"");
	chart_path(b, &ya, n, metric_point, &pts);
	buf_adds(b, "\"/>");
	change_lines(b, s, c, idx, n, m, NULL, metric_change_line);
	/* The markers (the last MARKERS, found once), a group per status (its colour). */
	size_t mk[MARKERS], nm = 0;
	int shapes[MARKERS];
	for (size_t k = n; k-- > 0 && nm < MARKERS;)
		if (marked(&s->r[idx[k]], k + 1 == n)) {
			shapes[nm] = shape_of(s->r[idx[k]].status);
			mk[nm++] = k;
		}
	for (int shape = 0; shape < 4; shape++) {
		bool open = false;

		for (size_t j = nm; j-- > 0;) {
			size_t k = mk[j];
			const struct srec *r = &s->r[idx[k]];

			if (shapes[j] != shape)
				continue;
			if (!open)
				buf_addf(b, "<g class=\"p%d\">", shape);
			open = true;
			buf_adds(b, "<a href=\"");
			if (r->url != NULL)
				xml_escape(b, r->url);
			else {
				buf_addc(b, '#');
				xml_escape(b, r->commit);
			}
			buf_adds(b, "\"><circle cx=\"");
			icoord(b, x_of(k, n));
			buf_adds(b, "\" cy=\"");
			icoord(b, y_of(&ya, r->v[m]));
			buf_adds(b, "\" r=\"3\"><title>");
			fmt_time(b, r->instant, "%Y-%m-%d %H:%M");
			buf_addc(b, ' ');
			short_commit(b, r->commit);
			buf_addc(b, ' ');
			num_text(b, r->v[m], prec > 3 ? prec : 3);
			buf_addc(b, ' ');
			buf_adds(b, units[m]);
			buf_addc(b, ' ');
			xml_escape(b, *r->status ? r->status : "no status");
			buf_adds(b, "</title></circle></a>");
		}
		if (open)
			buf_adds(b, "</g>");
	}
	buf_adds(b, "</svg></figure>\n");
	free(idx);
}

/* The value of named metric name in unit of record r; false when it has none. */
static bool
named_value(const struct srec *r, const char *name, const char *unit, double *v)
{
	for (size_t j = 0; j < r->nnamed; j++)
		if (r->named[j].name == name && r->named[j].unit == unit) {
			*v = r->named[j].v;
			return true;
		}
	return false;
}

/* The k-th of an array of values, every one a point. */
static bool
value_point(const void *ctx, size_t k, double *v)
{
	*v = ((const double *)ctx)[k];
	return true;
}

/* A change point of a named metric: its direction in the title. */
static void
named_change_line(buf *b, const struct schange *h, double x)
{
	buf_addf(b, "<line class=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\">"
	    "<title>change point: %s, commit %.7s, ", h->worse ? "cw" : "cb", x, x, PT,
	    CH - PB, h->worse ? "worse" : "better", json_str(h->cp, "commit_sha"));
	xml_escape(b, h->state);
	buf_adds(b, "</title></line>");
}

/*
 * The chart of a named metric (name and unit interned) of the cohort: its
 * records in order, the values and their labels scaled by unit_format()
 * ("2.2 ms"), its change points; no gate band (its policy is the record's).
 */
static void
named_chart(buf *b, const struct site *s, const struct cohort *c, const char *name,
    const char *unit, int k)
{
	size_t *idx = emalloc((c->n + 1) * sizeof *idx), n = 0;
	double *val = emalloc((c->n + 1) * sizeof *val), lo = INFINITY, hi = -INFINITY;
	char t[UNIT_FMTSZ];
	struct svgaxis ya;

	for (size_t i = 0; i < c->n; i++)
		if (named_value(&s->r[c->rows[i]], name, unit, &val[n])) {
			idx[n] = c->rows[i];
			lo = fmin(lo, val[n]);
			hi = fmax(hi, val[n++]);
		}
	svgaxis_linear(&ya, lo, hi, 4);
	buf_addf(b, "<figure id=\"n-%d\"><figcaption>", k);
	xml_escape(b, name);
	buf_adds(b, " (");
	xml_escape(b, *unit != '\0' ? unit : "no unit");
	buf_addf(b, ")</figcaption><svg viewBox=\"0 0 %.0f %.0f\" role=\"img\"><title>", CW, CH);
	xml_escape(b, c->label);
	buf_adds(b, ": ");
	xml_escape(b, name);
	buf_adds(b, "</title><path class=\"g\" d=\"");
	for (int i = 0; i < ya.n; i++)
		buf_addf(b, "M%.0f %.1fH%.0f", PL, y_of(&ya, ya.v[i]), CW - PR);
	buf_adds(b, "\"/>");
	for (int i = 0; i < ya.n; i++) {
		buf_addf(b, "<text class=\"yl\" x=\"%.0f\" y=\"%.1f\">", PL - 4,
		    y_of(&ya, ya.v[i]) + 3.5);
		xml_escape(b, unit_format_step(t, ya.v[i], ya.step, unit));
		buf_adds(b, "</text>");
	}
	buf_adds(b, "<path class=\"ln\" d=\"");
	chart_path(b, &ya, n, value_point, val);
	buf_adds(b, "\"/>");
	change_lines(b, s, c, idx, n, -1, name, named_change_line);
	buf_adds(b, "<g class=\"p0\">");
	for (size_t i = n > MARKERS ? n - MARKERS : 0; i < n; i++) {
		const struct srec *r = &s->r[idx[i]];

		buf_adds(b, "<circle cx=\"");
		icoord(b, x_of(i, n));
		buf_adds(b, "\" cy=\"");
		icoord(b, y_of(&ya, val[i]));
		buf_adds(b, "\" r=\"3\"><title>");
		fmt_time(b, r->instant, "%Y-%m-%d %H:%M");
		buf_addf(b, " %.7s ", *r->commit ? r->commit : "unknown");
		xml_escape(b, unit_format(t, val[i], unit));
		buf_adds(b, "</title></circle>");
	}
	buf_adds(b, "</g></svg></figure>\n");
	free(idx);
	free(val);
}

/*
 * The cohort's named metrics (name and unit), in order of first
 * appearance; *n of them, NULL when none (the caller frees the array).
 */
static const struct snamed **
named_series(const struct site *s, const struct cohort *c, size_t *n)
{
	const struct snamed **seen = NULL;
	size_t ns = 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct srec *r = &s->r[c->rows[i]];

		for (size_t j = 0; j < r->nnamed; j++) {
			size_t k = 0;

			while (k < ns && (seen[k]->name != r->named[j].name ||
			    seen[k]->unit != r->named[j].unit))
				k++;
			if (k == ns) {
				seen = erealloc(seen, (ns + 1) * sizeof *seen);
				seen[ns++] = &r->named[j];
			}
		}
	}
	*n = ns;
	return seen;
}

/* A chart per named metric (name and unit) of the cohort, in order of first appearance. */
static void
named_charts(buf *b, const struct site *s, const struct cohort *c)
{
	size_t ns;
	const struct snamed **seen = named_series(s, c, &ns);

	for (size_t k = 0; k < ns; k++)
		named_chart(b, s, c, seen[k]->name, seen[k]->unit, (int)k);
	free(seen);
}

/*
 * The records, newest first: each row's id is its commit (the first row
 * of that commit). End tags of cells and rows are left out, as HTML5
 * allows, for the size of a long history.
 */
static void
records_table(buf *b, const struct site *s, const struct cohort *c)
{
	buf_adds(b, "<h2 id=\"records\">Records</h2>\n<table class=\"f rec\"><thead><tr>"
	    "<th data-k>Time</th><th data-k>Commit</th><th data-k data-f=\"s\">Run source</th>"
	    "<th data-k data-f=\"e\">Eligible</th>");
	for (int m = 0; m < METRIC_COUNT; m++)
		if (s->column[m])
			buf_addf(b, "<th data-k data-m=\"%s\">%s</th>", metric_table[m].key,
			    metric_table[m].label);
	buf_adds(b, "<th data-k>Status (stored, today)</th><th>Reason</th></tr></thead><tbody>\n");
	for (size_t i = c->n; i-- > 0;) {
		const struct srec *r = &s->r[c->rows[i]];

		buf_adds(b, "<tr");
		if (r->anchor) {
			buf_adds(b, " id=\"");
			xml_escape(b, r->commit);
			buf_adds(b, "\"");
		}
		buf_adds(b, "><td>");
		fmt_time(b, r->instant, "%Y-%m-%d %H:%M");
		buf_adds(b, "<td>");
		if (r->url != NULL) {
			buf_adds(b, "<a href=\"");
			xml_escape(b, r->url);
			buf_adds(b, "\">");
		}
		short_commit(b, r->commit);
		buf_adds(b, r->url != NULL ? "</a><td>" : "<td>");
		xml_escape(b, *r->src ? r->src : "unknown");
		buf_adds(b, r->eligible ? "<td>yes" : "<td>no");
		for (int m = 0; m < METRIC_COUNT; m++) {
			if (!s->column[m])
				continue;
			buf_adds(b, "<td>");
			if (r->has[m])
				num_text(b, r->v[m], metric_table[m].precision > 3 ?
				    metric_table[m].precision : 3);
		}
		buf_adds(b, "<td>");
		statuses(b, r);
		if (history_failing(r->status)) {	/* else no Reason cell: a row may be short */
			char *cut = strlen(r->reason) > 300 ? easprintf("%.297s...", r->reason) : NULL;
			buf_adds(b, "<td>");
			xml_escape(b, cut != NULL ? cut : r->reason);
			free(cut);
		}
		buf_addc(b, '\n');
	}
	buf_adds(b, "</tbody></table>\n");
}

static void
sensitivity_table(buf *b, const struct site *s, const struct cohort *c)
{
	buf_adds(b, "<h2 id=\"sensitivity\">Sensitivity</h2>\n<p class=\"meta\">Of each gate at "
	    "the noise of the last trusted runs (today's floors): the chance that a run without "
	    "any change fails, and the smallest regression it catches four times in five.</p>\n"
	    "<table><thead><tr><th>Metric</th><th>Runs</th><th>Noise</th><th>Floors</th>"
	    "<th>False alarms</th><th>Detects</th><th>Advice</th></tr></thead><tbody>\n");
	for (int m = 0; m < METRIC_COUNT; m++) {
		const struct sgate *g = &c->gate[m];
		bool known = g->rp.advice != SENS_UNKNOWN;
		buf lab = BUF_INIT;

		if (!s->column[m])
			continue;
		buf_addf(b, "<tr><td>%s</td><td class=\"n\">%zu</td><td class=\"n\">",
		    metric_table[m].key, g->ns.n);
		if (g->ns.known)
			pct_text(b, g->ns.spread);
		buf_adds(b, "</td><td>&gt;");
		pct_text(b, c->last->pol[m].threshold_percent);
		num_text(&lab, c->last->pol[m].threshold_absolute, metric_table[m].precision);
		buf_addf(b, " and &gt;%s %s%s</td><td class=\"n\">", lab.s, units[m],
		    c->last->pol[m].gated ? "" : " (not gated)");
		if (known)
			pct_text(b, g->rp.far);
		buf_adds(b, "</td><td class=\"n\">");
		if (known)
			pct_text(b, g->rp.mde);
		buf_addf(b, "</td><td>%s</td></tr>\n", sens_advice_name(g->rp.advice));
		buf_free(&lab);
	}
	buf_adds(b, "</tbody></table>\n");
}

static void
ab_table(buf *b, const struct site *s, const struct cohort *c)
{
	bool any = false;
	char t[NUM_BUFSZ];

	for (size_t i = 0; i < s->nab; i++) {
		const cJSON *e = s->ab[i].result, *iv = json_get(e, "interval");
		bool mine = false;

		for (size_t j = 0; j < c->n && !mine; j++)
			mine = strcmp(s->r[c->rows[j]].model, s->ab[i].benchmark) == 0;
		if (!mine)
			continue;
		if (!any)
			buf_adds(b, "<h2 id=\"ab\">A/B results</h2>\n<table><thead><tr><th>Report</th>"
			    "<th>Metric</th><th>Pairs</th><th>Ratio (head / base)</th><th>Interval</th>"
			    "<th>Verdict</th></tr></thead><tbody>\n");
		any = true;
		buf_adds(b, "<tr><td>");
		xml_escape(b, s->ab[i].file);
		buf_adds(b, "</td><td>");
		xml_escape(b, json_str(e, "metric") ? json_str(e, "metric") : "");
		buf_adds(b, "</td><td class=\"n\">");
		if (cJSON_IsNumber(json_get(e, "pairs")))
			buf_addf(b, "%d", json_get(e, "pairs")->valueint);
		buf_adds(b, "</td><td class=\"n\">");
		if (cJSON_IsNumber(json_get(e, "ratio")))
			buf_adds(b, num_fixed(t, json_get(e, "ratio")->valuedouble, 4));
		buf_adds(b, "</td><td class=\"n\">");
		if (cJSON_IsNumber(json_get(iv, "low")) && cJSON_IsNumber(json_get(iv, "high"))) {
			buf_addf(b, "%s to ", num_fixed(t, json_get(iv, "low")->valuedouble, 4));
			buf_adds(b, num_fixed(t, json_get(iv, "high")->valuedouble, 4));
		}
		buf_adds(b, "</td><td>");
		xml_escape(b, json_str(e, "verdict") ? json_str(e, "verdict") : "");
		buf_adds(b, "</td></tr>\n");
	}
	if (any)
		buf_adds(b, "</tbody></table>\n");
}

static void
cohort_page(buf *b, struct site *s, const struct cohort *c)
{
	const struct srec *r = c->last;

	page_head(b, s, c->label, "../");
	buf_adds(b, "<p>");
	xml_escape(b, r->model);
	buf_adds(b, " | ");
	xml_escape(b, r->gpu);
	buf_addf(b, " &middot; %zu record%s &middot; latest ", c->n, c->n == 1 ? "" : "s");
	statuses(b, r);
	buf_addf(b, " &middot; <a href=\"../data/%s.json\">data</a></p>\n<table><tbody>", c->id);
	for (int k = 0; k < IDENTITY_KEYS; k++) {
		buf_addf(b, "<tr><th>%s</th><td><code>", identity_keys[k]);
		xml_escape(b, *c->key[HKEY_IDENT + k] ? c->key[HKEY_IDENT + k] : "(missing)");
		buf_adds(b, "</code></td></tr>");
	}
	buf_adds(b, "</tbody></table>\n");
	filter_form(b, s, c);
	buf_adds(b, "<h2 id=\"charts\">History</h2>\n<p class=\"meta\">Each point is a record "
	    "(click: its build); the dashed line is the rolling baseline median, the green band "
	    "the gate from it to where the latest record would regress, the grey band the "
	    "noise.</p>\n");
	for (int m = 0; m < METRIC_COUNT; m++) {
		bool any = false;
		for (size_t i = 0; i < c->n && !any; i++)
			any = s->r[c->rows[i]].has[m];
		if (any)
			chart(b, s, c, m);
	}
	named_charts(b, s, c);
	{
		bool any = false;
		for (size_t i = 0; i < s->nch; i++) {
			const struct schange *h = &s->ch[i];
			if (h->cohort != (size_t)(c - s->c))
				continue;
			if (!any)
				buf_adds(b, "<h2 id=\"changes\">Change points</h2>\n<ul>\n");
			any = true;
			buf_adds(b, "<li>");
			fmt_time(b, h->instant, "%Y-%m-%d %H:%M");
			buf_adds(b, " ");
			change_text(b, h);
			buf_adds(b, " at ");
			commit_link(b, "../", c, json_str(h->cp, "commit_sha") ?
			    json_str(h->cp, "commit_sha") : "");
			buf_adds(b, ", ");
			xml_escape(b, h->state);
			culprit_text(b, h->cp);
			buf_adds(b, "</li>\n");
		}
		if (any)
			buf_adds(b, "</ul>\n");
	}
	records_table(b, s, c);
	sensitivity_table(b, s, c);
	ab_table(b, s, c);
	page_tail(b, "../");
}

static void
changes_page(buf *b, const struct site *s)
{
	char t[NUM_BUFSZ];

	page_head(b, s, "Change points", "");
	if (s->nch == 0) {
		buf_adds(b, "<p>No change points (give perf-changes' output with --changes).</p>\n");
		page_tail(b, "");
		return;
	}
	buf_adds(b, "<table><thead><tr><th data-k>Time</th><th data-k>Cohort</th><th data-k>Metric"
	    "</th><th data-k>Change</th><th data-k>p-value</th><th>Commits</th><th data-k>State"
	    "</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < s->nch; i++) {
		const struct schange *h = &s->ch[i];
		const struct cohort *c = h->cohort != (size_t)-1 ? &s->c[h->cohort] : NULL;
		const cJSON *pv = json_get(h->cp, "pvalue"), *fc = json_get(h->cp, "forward_change_percent");
		const char *prev = json_str(json_get(h->cp, "previous"), "commit_sha");
		const char *commit = json_str(h->cp, "commit_sha");

		buf_adds(b, "<tr><td>");
		fmt_time(b, h->instant, "%Y-%m-%d %H:%M");
		buf_adds(b, "</td><td>");
		if (c != NULL)
			cohort_link(b, "", c);
		else {
			xml_escape(b, json_str(h->cp, "model_id") ? json_str(h->cp, "model_id") : "");
			buf_adds(b, " (not in the store)");
		}
		buf_adds(b, "</td><td>");
		if (h->name != NULL)
			xml_escape(b, h->name);
		buf_addf(b, "%s</td><td class=\"n\" data-v=\"%s\"><span class=\"%s\">%s "
		    "%s%s%%</span></td><td class=\"n\">", h->name != NULL ? "" :
		    metric_table[h->metric].key,
		    num_fixed(t, cJSON_IsNumber(fc) ? fc->valuedouble : 0, 2),
		    h->worse ? "w" : "b", h->worse ? "worse" : "better",
		    cJSON_IsNumber(fc) && fc->valuedouble >= 0 ? "+" : "",
		    num_fixed(t, cJSON_IsNumber(fc) ? fc->valuedouble : 0, 1));
		if (cJSON_IsNumber(pv) && isfinite(pv->valuedouble)) {
			char rp[NUM_BUFSZ];
			buf_adds(b, num_repr(rp, pv->valuedouble));
		}
		buf_adds(b, "</td><td>");
		if (*prev != '\0' && c != NULL) {
			commit_link(b, "", c, prev);
			buf_adds(b, "..");
		}
		if (*commit != '\0' && c != NULL)
			commit_link(b, "", c, commit);
		buf_adds(b, "</td><td>");
		xml_escape(b, h->state);
		culprit_text(b, h->cp);
		buf_adds(b, "</td></tr>\n");
	}
	buf_adds(b, "</tbody></table>\n");
	page_tail(b, "");
}

/* An Atom date: "2026-06-12T00:00:00Z". */
static void
atom_time(buf *b, int64_t us)
{
	fmt_time(b, us == ISOTIME_MIN ? 0 : us, "%Y-%m-%dT%H:%M:%SZ");
}

static void
feed_entry(buf *b, const char *id, const char *title, const struct cohort *c,
    const char *commit, int64_t when, const char *summary)
{
	buf_adds(b, "<entry><id>");
	xml_escape(b, id);
	buf_adds(b, "</id><title>");
	xml_escape(b, title);
	buf_addf(b, "</title><link href=\"c/%s.html#", c->id);
	xml_escape(b, commit);
	buf_adds(b, "\"/><updated>");
	atom_time(b, when);
	buf_adds(b, "</updated><summary>");
	xml_escape(b, summary);
	buf_adds(b, "</summary></entry>\n");
}

/* New worse change points and failures of the latest scheduled runs. */
static void
feed(buf *b, const struct site *s)
{
	char hex[SHA256_HEX];
	size_t na;
	struct alert *a = alerts_of(s, &na);
	int64_t updated = ISOTIME_MIN;
	size_t shown = 0;

	for (size_t i = 0; i < na; i++)
		if (a[i].rank <= 1 && a[i].instant > updated)
			updated = a[i].instant;
	canon_sha256_hex(s->title, strlen(s->title), hex);
	buf_adds(b, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
	    "<feed xmlns=\"http://www.w3.org/2005/Atom\">\n<title>");
	xml_escape(b, s->title);
	buf_addf(b, ": regressions</title><id>urn:perfkite:site:%.16s</id><updated>", hex);
	atom_time(b, updated);
	buf_adds(b, "</updated><author><name>perfkite</name></author>"
	    "<link href=\"index.html\"/>\n");
	for (size_t i = 0; i < na && shown < 100; i++) {
		const struct alert *e = &a[i];
		buf id = BUF_INIT, title = BUF_INIT, sum = BUF_INIT;
		char t[NUM_BUFSZ];

		if (e->rank == 0) {
			const char *commit = json_str(e->h->cp, "commit_sha");
			const cJSON *fc = json_get(e->h->cp, "forward_change_percent");
			const char *mk = e->h->name != NULL ? e->h->name : metric_table[e->metric].key;

			buf_addf(&id, "urn:perfkite:change:%s:%s:%s", e->c->id, mk,
			    commit ? commit : "");
			buf_addf(&title, "%s: %s worse %s%s%%", e->c->label, mk,
			    cJSON_IsNumber(fc) && fc->valuedouble >= 0 ? "+" : "",
			    num_fixed(t, cJSON_IsNumber(fc) ? fc->valuedouble : 0, 1));
			buf_addf(&sum, "change point at commit %s", commit ? commit : "unknown");
			feed_entry(b, id.s, title.s, e->c, commit ? commit : "", e->instant, sum.s);
		} else if (e->rank == 1) {
			buf_addf(&id, "urn:perfkite:failure:%s:%s:%s", e->c->id, e->r->commit, e->r->ts);
			buf_addf(&title, "%s: %s", e->c->label, e->r->status);
			feed_entry(b, id.s, title.s, e->c, e->r->commit, e->instant, e->r->reason);
		} else
			continue;
		shown++;
		buf_free(&id);
		buf_free(&title);
		buf_free(&sum);
	}
	buf_adds(b, "</feed>\n");
	free(a);
}

/* The columns of a cohort's data (then one per metric). */
static const char *const data_cols[] = { "time", "commit_sha" };
#define DATA_COLS (int)(sizeof data_cols / sizeof *data_cols)

/* An instant as seconds since the epoch, exact: a fraction only when it has one. */
static void
epoch_seconds(buf *b, int64_t us)
{
	int64_t sec = us / 1000000, frac = us % 1000000;
	char d[8];
	int n = 6;

	if (frac < 0) {
		sec--;
		frac += 1000000;
	}
	history_add_int(b, (long long)sec);
	if (frac == 0)
		return;
	for (int i = 5; i >= 0; i--, frac /= 10)
		d[i] = (char)('0' + frac % 10);
	while (d[n - 1] == '0')
		n--;
	buf_addc(b, '.');
	buf_add(b, d, (size_t)n);
}

/* A JSON array of one column of the cohort's records, oldest first. */
static void
data_column(buf *b, const struct site *s, const struct cohort *c, int col)
{
	char num[NUM_BUFSZ];

	buf_addc(b, '[');
	for (size_t i = 0; i < c->n; i++) {
		const struct srec *r = &s->r[c->rows[i]];

		if (i > 0)
			buf_addc(b, ',');
		switch (col) {
		case 0:
			if (r->instant == ISOTIME_MIN)
				buf_adds(b, "null");
			else
				epoch_seconds(b, r->instant);
			break;
		case 1: json_write_string(b, r->commit); break;
		default:	/* metric col - DATA_COLS: finite where present */
			if (r->has[col - DATA_COLS])
				buf_adds(b, num_repr(num, r->v[col - DATA_COLS]));
			else
				buf_adds(b, "null");
		}
	}
	buf_addc(b, ']');
}

/*
 * ,"named":[...]: each named metric of the cohort (name and unit) as
 * {"name","unit","better","values"}, values one per record as stored,
 * null where a record has none; nothing when the cohort has none.
 */
static void
data_named(buf *b, const struct site *s, const struct cohort *c)
{
	char num[NUM_BUFSZ];
	size_t ns;
	const struct snamed **seen = named_series(s, c, &ns);

	for (size_t k = 0; k < ns; k++) {
		buf_adds(b, k == 0 ? ",\"named\":[{\"name\":" : ",{\"name\":");
		json_write_string(b, seen[k]->name);
		buf_adds(b, ",\"unit\":");
		json_write_string(b, seen[k]->unit);
		buf_adds(b, ",\"better\":");
		json_write_string(b, better_name(seen[k]->better));
		buf_adds(b, ",\"values\":[");
		for (size_t i = 0; i < c->n; i++) {
			double v;

			if (i > 0)
				buf_addc(b, ',');
			if (named_value(&s->r[c->rows[i]], seen[k]->name, seen[k]->unit, &v))
				buf_adds(b, num_repr(num, v));
			else
				buf_adds(b, "null");
		}
		buf_adds(b, "]}");
	}
	if (ns > 0)
		buf_addc(b, ']');
	free(seen);
}

/*
 * A cohort's series, by column: each key of "records" is an array with
 * one element per record, oldest first ("metrics" holds one such array
 * per metric, null where the record has none). The series only: the
 * instant and the commit of each record and its values as stored. Run
 * sources, statuses, build links and reasons are in the records table of
 * the cohort's page, which holds every record: both in full would make
 * the site of 200 cohorts of 500 runs half again as large (issue 26's
 * budget: 40 MB). Written directly, without a tree of thousands of nodes.
 */
static void
data_json(buf *b, const struct site *s, const struct cohort *c)
{
	static const char *const head[] = { "cohort", "label", "kind", "model_id", "gpu_type" };
	const char *val[] = { c->id, c->label, c->key[HKEY_KIND], c->last->model, c->last->gpu };
	bool first = true;

	for (int k = 0; k < 5; k++) {
		buf_addc(b, k == 0 ? '{' : ',');
		json_write_string(b, head[k]);
		buf_addc(b, ':');
		json_write_string(b, val[k]);
	}
	buf_adds(b, ",\"identity\":");
	for (int k = 0; k < IDENTITY_KEYS; k++) {
		buf_addc(b, k == 0 ? '{' : ',');
		json_write_string(b, identity_keys[k]);
		buf_addc(b, ':');
		json_write_string(b, c->key[HKEY_IDENT + k]);
	}
	buf_adds(b, "},\"records\":");
	for (int k = 0; k < DATA_COLS; k++) {
		buf_addc(b, k == 0 ? '{' : ',');
		json_write_string(b, data_cols[k]);
		buf_addc(b, ':');
		data_column(b, s, c, k);
	}
	buf_adds(b, ",\"metrics\":");
	for (int m = 0; m < METRIC_COUNT; m++) {
		if (!s->column[m])
			continue;
		buf_addc(b, first ? '{' : ',');
		first = false;
		json_write_string(b, metric_table[m].key);
		buf_addc(b, ':');
		data_column(b, s, c, DATA_COLS + m);
	}
	buf_adds(b, first ? "{}" : "}");
	data_named(b, s, c);
	buf_adds(b, "}}\n");
}

/* Writes b to dir/name whole. 0, or -1 after reporting. */
static int
put(const char *dir, const char *name, const buf *b)
{
	char *path = easprintf("%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	bool ok = fd >= 0 && fd_write_all(fd, b->s, b->len) == 0;

	if (fd >= 0 && close(fd) != 0)
		ok = false;
	if (!ok)
		warnx("%s: cannot write: %s", path, strerror(errno ? errno : EIO));
	free(path);
	return ok ? 0 : -1;
}

int
site_write(struct site *s, const char *dir)
{
	buf b = BUF_INIT;
	char *sub;
	bool ok = true;

	group(s);
	place_changes(s);
	for (int k = 0; k < 2; k++) {
		sub = easprintf("%s/%s", dir, k == 0 ? "c" : "data");
		if (mkdir(sub, 0777) != 0) {
			warn("%s: cannot create", sub);
			free(sub);
			return -1;
		}
		free(sub);
	}
	buf_add(&b, style, sizeof style - 1);
	buf_addc(&b, '\n');
	ok &= put(dir, "site.css", &b) == 0;
	buf_reset(&b);
	buf_add(&b, script, sizeof script - 1);
	ok &= put(dir, "site.js", &b) == 0;
	buf_reset(&b);
	index_page(&b, s);
	ok &= put(dir, "index.html", &b) == 0;
	buf_reset(&b);
	changes_page(&b, s);
	ok &= put(dir, "changes.html", &b) == 0;
	buf_reset(&b);
	feed(&b, s);
	ok &= put(dir, "feed.xml", &b) == 0;
	for (size_t i = 0; ok && i < s->nc; i++) {
		const struct cohort *c = &s->c[i];
		char *name = easprintf("c/%s.html", c->id);

		buf_reset(&b);
		cohort_page(&b, s, c);
		ok &= put(dir, name, &b) == 0;
		free(name);
		buf_reset(&b);
		data_json(&b, s, c);
		name = easprintf("data/%s.json", c->id);
		ok &= put(dir, name, &b) == 0;
		free(name);
	}
	buf_free(&b);
	return ok ? 0 : -1;
}

void
site_free(struct site *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nchunks; i++)
		free(s->chunks[i]);
	free(s->chunks);
	for (size_t i = 0; i < s->nc; i++) {
		free(s->c[i].rows);
		free(s->c[i].label);
		free(s->c[i].sources);
	}
	for (size_t i = 0; i < s->nch; i++)
		cJSON_Delete(s->cps[i]);
	for (size_t i = 0; i < s->nabs; i++)
		cJSON_Delete(s->abs[i]);
	strmap_free(&s->pool);
	strmap_free(&s->paths);
	free(s->c);
	free(s->sorted);
	free(s->ch);
	free(s->cps);
	free(s->ab);
	free(s->abs);
	for (size_t i = 0; i < s->n; i++)
		free(s->r[i].named);
	free(s->r);
	free(s->ncols);
	free(s->title);
	free(s);
}

char *
site_cohort_id(const cJSON *rec)
{
	const cJSON *v[IDENTITY_KEYS];
	const char *ident[IDENTITY_KEYS], *key[HISTORY_KEY_PARTS], *model, *gpu;
	char *owned[IDENTITY_KEYS + 2] = { NULL }, *joined;
	struct cohort c;

	for (int i = 0; i < IDENTITY_KEYS; i++) {
		v[i] = json_get(rec, identity_keys[i]);
		ident[i] = history_pystr(v[i], "", &owned[i]);
	}
	model = history_pystr(json_get(rec, "model_id"), "None", &owned[IDENTITY_KEYS]);
	gpu = history_pystr(json_get(rec, "gpu_type"), "None", &owned[IDENTITY_KEYS + 1]);
	history_cohort_key(key, history_kind(ident, v, json_get(rec, "result_schema_version")),
	    model, gpu, ident);
	memset(&c, 0, sizeof c);
	memcpy(c.key, key, sizeof key);
	c.label = cohort_label(&c);
	joined = history_key_join(key);
	cohort_id(&c, joined);
	free(joined);
	free(c.label);
	for (int i = 0; i < IDENTITY_KEYS + 2; i++)
		free(owned[i]);
	return estrdup(c.id);
}
