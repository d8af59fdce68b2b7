/*
 * perf-changes: change points in the history. Each metric of each
 * comparison cohort (the exact identity of v2 records, model and GPU for
 * legacy ones), ordered as the rolling gate orders history, is analysed
 * with Apache Otava's change-point detection (lane/change_points.h); every change
 * point found is written as one JSON line (or a Markdown table with
 * --md). A series holds the measurements of scheduled-main runs whatever
 * the rolling gate said of them (measured()). Exit 1 when a reported change
 * point is worse by the metric's direction and not tentative (at least
 * --min-points records on each side): a slow drift or a step the rolling
 * gate let through.
 */
#include <ctype.h>
#include <errno.h>
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
#include "lane/bisect_report.h"
#include "lane/change_points.h"
#include "core/cli.h"
#include "lane/change_report.h"
#include "lane/decision.h"
#include "core/err.h"
#include "lane/store/git_command.h"
#include "lane/history.h"
#include "lane/identity.h"
#include "lane/named_metric.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/num.h"
#include "core/now.h"
#include "lane/policy.h"
#include "lane/store/read.h"
#include "core/strmap.h"
#include "core/text.h"

static struct {
	const char *store, *cache, *state, *batch;
	char **histories;
	int nhistories;
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
 * Where a cohort stands while a store is read directory by directory: its
 * records are analysed and released once every directory they came from
 * has been read whole; one that turns up in another directory after that
 * spans directories and is read again at the end.
 */
enum phase { COLLECTING, ANALYSING, ANALYSED, SPANNING };

/* A comparison cohort, its records and its change points. */
struct cohort {
	char *key;		/* kind and identity, joined by \x1f (then \x1d and a name) */
	size_t base_len;	/* of key, the kind and identity */
	char *name;		/* a named metric's series: its name; NULL: the six */
	struct cohort *base;	/* a named metric's series: the cohort's six */
	enum better better;	/* a named metric's direction, of its latest record */
	char *unit;		/* a named metric's unit, of its latest record */
	bool v2;
	char *ident[IDENTITY_KEYS];	/* v2: str() of the identity keys */
	char *model, *gpu;	/* of its latest record */
	int64_t latest_instant;
	char *latest_path;
	buf pending;		/* its points read and not spilled (encode_point) */
	struct chunk *chunks;	/* its points spilled, in the order read */
	size_t nchunks;
	struct history h;	/* its points while it is analysed */
	enum phase phase;
	bool again;		/* read again in the second pass */
	size_t *units, nunits;	/* the store directories it was read from */
	size_t open;		/* of those, the ones not read whole yet */
	struct found *found;
	size_t nfound;
	buf state;		/* its lines of the new state file */
	struct skipped *skipped;	/* its records that are no measurement */
	size_t nskipped;
};

/*
 * A record that is no measurement: its instant, and a hash of its store
 * path, so that a stream repeating a store's record counts it once.
 */
struct skipped {
	int64_t instant;
	uint64_t key;
};

/* Points of a cohort written to the spill file. */
struct chunk {
	off_t off;
	size_t len;
};

/* The timestamp, commit and path of a record at a change point. */
enum { AT_TIMESTAMP, AT_COMMIT, AT_PATH, AT_FIELDS };

/* A reported change point. */
struct found {
	const struct cohort *c;
	int metric;		/* of the six; a named metric's series: 0 */
	bool worse;
	struct change_point cp;
	bool tentative;		/* fewer than --min-points records on a side */
	size_t untrusted;	/* records no measurement between before and at */
	char *at[AT_FIELDS], *before[AT_FIELDS];
};

/* The split state of one series kept by --incremental. */
struct saved {
	char *series;		/* cohort key \x1e metric key */
	size_t n;
	char digest[SHA256_HEX];
	size_t resume, *early, nearly;
	struct changes_memo *memo;	/* the comparisons its last merge used */
	size_t nmemo;
	bool used;
};

/* The cohorts with records in one directory of the store. */
struct touched {
	struct cohort **c;
	size_t n;
};

/*
 * What one run of the program holds: the cohorts, the change points found,
 * the new state, the spill file. Reader and analysis threads share it
 * under its lock; every function that needs it is passed it.
 */
struct run {
	struct cohort **c;
	size_t n, cap;
	struct found *found;
	size_t nfound;
	struct saved *saved;
	size_t nsaved;
	buf state;		/* the new state file */
	struct cohort **todo;	/* analysed when every record is read */
	size_t ntodo, next;
	bool by_unit;		/* analysing directory by directory */
	bool again;		/* the second pass, over cohorts that span them */
	struct touched *touched;	/* by store unit */
	char **unit_name;
	size_t nunits;
	pthread_mutex_t lock;	/* the cohorts, while the store is read */
	struct json_keyset *keys;	/* of wanted[] */
	struct strmap cohorts;	/* key to struct cohort, of c[] */
	char **batch;		/* --batch: the cohort keys of its records, sorted */
	size_t nbatch;
	bool stats;		/* PERF_CHANGES_STATS: count and time the analysis */
	size_t compared, reused;	/* comparisons the merges made, reused */
	double analysis_s;	/* CPU seconds in analyse(), all threads together */
	size_t pending;		/* bytes held for points, all cohorts together */
	size_t spill_at;	/* spill them all when they pass this */
	int spill_fd;		/* the spill file (unlinked), or -1 */
	off_t spill_off;
};

static const char usage_text[] =
    "usage: perf-changes [-s store] [--cache dir] [-H history.jsonl] [-m metric]\n"
    "                    [-w window] [-p pvalue] [--min-magnitude f] [--min-points n]\n"
    "                    [--all] [--since ISO | --last n] [--incremental state-file]\n"
    "                    [--batch records.jsonl]\n"
    "                    [--json | --md] [file ...]\n"
    "\n"
    "options:\n"
    "  -s store, --store store   the history store: a directory or git+URL\n"
    "  --cache dir               the cache clone of a git store\n"
    "  -H file, --history file   a JSON-lines history stream (gzip allowed); repeatable\n"
    "  -m metric, --metric metric  analyse this metric (a normalized key or a named\n"
    "                            metric's name); repeatable\n"
    "  -w n, --window n          the window of the split step\n"
    "  -p p, --pvalue p          the significance, above 0 and at most 1\n"
    "  --min-magnitude f         change points of a magnitude at or below f are merged away\n"
    "  --min-points n            a change point with fewer records on a side is tentative (default 3)\n"
    "  --all                     read every record, not only trusted ones\n"
    "  --last n                  report only change points among the newest n records\n"
    "  --since ISO               report only change points at records not older than this time\n"
    "  --incremental file        keep the split step's state of every series in file\n"
    "  --batch file              analyse only the cohorts of the records in file\n"
    "  --json                    JSON lines (the default)\n"
    "  --md                      a Markdown table\n"
    "  -h, --help                print the usage and exit\n"
    "  --version                 print the version and exit\n";

/*
 * The members of a record perf-changes reads, by position in wanted[]:
 * found in one pass over the record (record_view()) rather than looked up
 * one by one; the last four decide whether it is a measurement (measured()).
 */
enum {
	W_MODEL, W_GPU, W_TIMESTAMP, W_COMMIT, W_SCHEMA,
	W_IDENT,			/* identity_keys[], in their order */
	W_METRIC = W_IDENT + IDENTITY_KEYS,	/* metric_table[], in its order */
	W_SUCCESS = W_METRIC + METRIC_COUNT,
	W_ELIGIBLE, W_SOURCE, W_STATUS,
	W_NAMED, W_POLICY,		/* the named metrics, and their policy */
	W_KEYS
};

static const char *wanted[W_KEYS] = { "model_id", "gpu_type", "timestamp", "commit_sha",
	"result_schema_version", [W_SUCCESS] = "success", "baseline_eligible", "run_source",
	"comparison_status", "metrics", "regression_thresholds" };

/* wanted[] made whole, and its keyset; once, before anything is read. */
static struct json_keyset *
wanted_keyset(void)
{
	int i;

	for (i = 0; i < IDENTITY_KEYS; i++)
		wanted[W_IDENT + i] = identity_keys[i];
	for (i = 0; i < METRIC_COUNT; i++)
		wanted[W_METRIC + i] = metric_table[i].key;
	return json_keyset_new(wanted, W_KEYS);
}

/* A record's members of wanted[] (json_get()'s: the first of a name), NULL when absent. */
struct view {
	const cJSON *v[W_KEYS];
};

static void
record_view(const struct json_keyset *ks, const cJSON *rec, struct view *w)
{
	const cJSON *c;
	int k;

	memset(w, 0, sizeof *w);
	if (!cJSON_IsObject(rec))
		return;
	for (c = rec->child; c != NULL; c = c->next)
		if ((k = json_keyset_index(ks, c->string)) >= 0 && w->v[k] == NULL)
			w->v[k] = c;
}

/* str() of v into b, or dflt when v is absent. */
static void
add_pystr(buf *b, const cJSON *v, const char *dflt)
{
	if (v != NULL)
		json_pystr(b, v);
	else
		buf_adds(b, dflt);
}

/*
 * The cohort key of a record into b ("v2" and the identity, or "legacy",
 * model and GPU, joined by \x1f); false for an incomplete v2 identity,
 * which is never compared (as the rolling gate). The rules are
 * identity_of()'s (identity_value_missing(), identity_uses_v2()), read
 * from the view.
 */
static bool
cohort_key(const struct view *w, buf *b)
{
	const cJSON *const *v = &w->v[W_IDENT];
	bool complete = true;
	size_t i;

	for (i = 0; i < IDENTITY_KEYS; i++)
		complete &= !identity_value_missing(v[i]);
	if (!complete && identity_uses_v2(w->v[W_SCHEMA], v))
		return false;
	if (complete) {
		buf_adds(b, "v2");
		for (i = 0; i < IDENTITY_KEYS; i++) {
			buf_addc(b, '\x1f');
			json_pystr(b, v[i]);
		}
	} else {
		buf_adds(b, "legacy\x1f");
		add_pystr(b, w->v[W_MODEL], "unknown");
		buf_addc(b, '\x1f');
		add_pystr(b, w->v[W_GPU], "unknown");
	}
	return true;
}

/* Whether v is the string s. */
static bool
is_string(const cJSON *v, const char *s)
{
	return cJSON_IsString(v) && strcmp(v->valuestring, s) == 0;
}

/*
 * Whether a record is a measurement of its series: every record with
 * --all; else a record the rolling gate trusts as a baseline (successful
 * and baseline eligible, or legacy: neither baseline_eligible nor
 * run_source), and every scheduled-main run that measured, whatever the
 * gate said of it (PASS, REGRESSION, CALIBRATION_NEEDED, RECIPE_MISMATCH;
 * without a verdict, a successful one). What is left out: pull-request
 * and local runs, infrastructure errors, failed runs. A regression the
 * gate refused as a baseline is the first slower point of its series, and
 * the change point must name it.
 */
static bool
measured(const struct view *w)
{
	static const char *const verdicts[] = { "PASS", "REGRESSION", "CALIBRATION_NEEDED",
		"RECIPE_MISMATCH" };
	const cJSON *succ = w->v[W_SUCCESS], *elig = w->v[W_ELIGIBLE], *src = w->v[W_SOURCE];
	bool ok = succ == NULL || json_truthy(succ);

	if (opt.all)
		return true;
	if (ok && (cJSON_IsTrue(elig) || (elig == NULL && src == NULL)))
		return true;
	if (!is_string(src, "scheduled_main"))
		return false;
	if (w->v[W_STATUS] == NULL)
		return ok;
	for (size_t i = 0; i < sizeof verdicts / sizeof *verdicts; i++)
		if (is_string(w->v[W_STATUS], verdicts[i]))
			return true;
	return false;
}

/*
 * The cohort of key (made by cohort_key() from rec, the first base_len
 * bytes; then, for a named metric's series, \x1d and its name), created
 * when new; under the run's lock.
 */
static struct cohort *
cohort_find(struct run *run, const char *key, size_t base_len, const cJSON *rec)
{
	struct identity id;
	struct cohort *c, *base = NULL;
	struct strmap_entry *e;
	bool added;

	if ((e = strmap_find(&run->cohorts, key)) != NULL)
		return e->ptr;
	if (key[base_len] == '\x1d') {
		char *b = estrndup(key, base_len);

		base = cohort_find(run, b, base_len, rec);
		free(b);
	}
	e = strmap_put(&run->cohorts, key, &added);
	c = ecalloc(1, sizeof *c);
	c->key = estrdup(key);
	e->key = c->key;	/* key is the caller's buffer */
	e->ptr = c;
	c->base_len = base_len;
	c->base = base;
	if (c->key[base_len] == '\x1d')
		c->name = c->key + base_len + 1;
	identity_of(rec, &id);
	c->v2 = id.complete;
	for (int k = 0; c->v2 && k < IDENTITY_KEYS; k++)
		c->ident[k] = estrdup(id.value[k]);
	identity_free(&id);
	if (run->n == run->cap) {
		run->cap = run->cap ? run->cap * 2 : 64;
		run->c = erealloc(run->c, run->cap * sizeof *run->c);
	}
	run->c[run->n++] = c;
	return c;
}

/* Makes room for store unit u. */
static void
grow_units(struct run *run, size_t u)
{
	if (u < run->nunits)
		return;
	run->touched = erealloc(run->touched, (u + 1) * sizeof *run->touched);
	run->unit_name = erealloc(run->unit_name, (u + 1) * sizeof *run->unit_name);
	memset(run->touched + run->nunits, 0, (u + 1 - run->nunits) * sizeof *run->touched);
	memset(run->unit_name + run->nunits, 0, (u + 1 - run->nunits) * sizeof *run->unit_name);
	run->nunits = u + 1;
}

/*
 * Notes that c has a record in store unit u; one that turns up in a new
 * unit after its analysis began spans units.
 */
static void
note_unit(struct run *run, struct cohort *c, size_t u)
{
	struct touched *t;

	for (size_t i = 0; i < c->nunits; i++)
		if (c->units[i] == u)
			return;
	if (c->phase != COLLECTING)
		c->phase = SPANNING;
	c->units = erealloc(c->units, (c->nunits + 1) * sizeof *c->units);
	c->units[c->nunits++] = u;
	c->open++;
	grow_units(run, u);
	t = &run->touched[u];
	t->c = erealloc(t->c, (t->n + 1) * sizeof *t->c);
	t->c[t->n++] = c;
}

/*
 * A point as a cohort keeps it until it is analysed, compact, so that a
 * long history held whole (a stream) costs little and can be spilled to
 * a file: its instant, flags, which metrics it has, their values, and
 * its path, key (when a stream may repeat it), timestamp, commit, model
 * and GPU as C strings. The points are decoded into the cohort's history when it is
 * analysed, in the order they were read, so that a stream line that
 * repeats a record is dropped as history_add() drops it.
 */
enum { PT_STREAM = 1, PT_KEY = 2, PT_KEY_IS_PATH = 4, PT_NAMED = 8 };

/* A named metric of a record, with its direction as its policy resolves it. */
struct named_point {
	const struct named_metric *m;
	enum better better;
};

/*
 * The point of a record (h, w): its six metrics, or with nm the value of
 * that named metric (as the first), its direction and unit following the
 * strings.
 */
static void
encode_point(buf *b, const struct store_hit *h, const struct view *w, bool want_key,
    const struct named_point *nm)
{
	char *key = want_key ? store_record_path(h->record) : NULL;
	unsigned char flags = 0, has = 0;
	double v[METRIC_COUNT], d;
	int nv = 0;

	for (int m = 0; m < METRIC_COUNT && nm == NULL; m++)
		/* History is read leniently: what is not a finite number is missing. */
		if (policy_coerce(w->v[W_METRIC + m], &d) == COERCE_OK && isfinite(d)) {
			has |= (unsigned char)(1u << m);
			v[nv++] = d;
		}
	if (nm != NULL && nm->m->has_value) {
		has = 1;
		v[nv++] = nm->m->value;
	}
	flags |= nm != NULL ? PT_NAMED : 0;
	flags |= h->stream ? PT_STREAM : 0;
	flags |= key != NULL ? PT_KEY : 0;
	flags |= key != NULL && strcmp(key, h->path) == 0 ? PT_KEY_IS_PATH : 0;
	buf_add(b, &h->instant, sizeof h->instant);
	buf_addc(b, (char)flags);
	buf_addc(b, (char)has);
	buf_add(b, v, (size_t)nv * sizeof *v);
	buf_add(b, h->path, strlen(h->path) + 1);
	if (key != NULL && !(flags & PT_KEY_IS_PATH))
		buf_add(b, key, strlen(key) + 1);
	add_pystr(b, w->v[W_TIMESTAMP], "None");
	buf_addc(b, '\0');
	add_pystr(b, w->v[W_COMMIT], "None");
	buf_addc(b, '\0');
	/* The model and GPU shown are the latest record's. */
	add_pystr(b, w->v[W_MODEL], "unknown");
	buf_addc(b, '\0');
	add_pystr(b, w->v[W_GPU], "unknown");
	buf_addc(b, '\0');
	if (nm != NULL) {
		buf_addc(b, (char)nm->better);
		buf_add(b, nm->m->unit, strlen(nm->m->unit) + 1);
	}
	free(key);
}

/*
 * The points of s[0..len) into the history of c, whose strings stay in s;
 * the model and GPU of the latest point kept become the cohort's.
 */
static void
decode_points(struct cohort *c, char *s, size_t len)
{
	char *p = s, *end, *model, *gpu, *unit;
	enum better better;

	c->h.borrowed = true;
	if (len == 0)
		return;
	end = s + len;
	while (p < end) {
		struct hist_point pt;
		unsigned char flags, has;

		memset(&pt, 0, sizeof pt);
		memcpy(&pt.instant, p, sizeof pt.instant);
		p += sizeof pt.instant;
		flags = (unsigned char)*p++;
		has = (unsigned char)*p++;
		for (int m = 0; m < METRIC_COUNT; m++)
			if ((pt.has[m] = has & (1u << m))) {
				memcpy(&pt.v[m], p, sizeof pt.v[m]);
				p += sizeof pt.v[m];
			}
		pt.path = p;
		p += strlen(p) + 1;
		if (flags & PT_KEY_IS_PATH)
			pt.key = pt.path;
		else if (flags & PT_KEY) {
			pt.key = p;
			p += strlen(p) + 1;
		}
		pt.timestamp = p;
		p += strlen(p) + 1;
		pt.commit = p;
		p += strlen(p) + 1;
		model = p;
		p += strlen(p) + 1;
		gpu = p;
		p += strlen(p) + 1;
		better = BETTER_UNKNOWN;
		unit = NULL;
		if (flags & PT_NAMED) {
			better = (enum better)*p++;
			unit = p;
			p += strlen(p) + 1;
		}
		if (history_push(&c->h, &pt, flags & PT_STREAM) == NULL)
			continue;
		if (c->latest_path == NULL || pt.instant > c->latest_instant ||
		    (pt.instant == c->latest_instant && strcmp(pt.path, c->latest_path) > 0)) {
			free(c->model);
			free(c->gpu);
			free(c->latest_path);
			c->model = estrdup(model);
			c->gpu = estrdup(gpu);
			c->latest_instant = pt.instant;
			c->latest_path = estrdup(pt.path);
			if (unit != NULL) {
				free(c->unit);
				c->unit = estrdup(unit);
				c->better = better;
			}
		}
	}
}

/*
 * Writes the points held by the cohorts still being read to the spill
 * file (made on first use, unlinked), so that memory holds no more than
 * the run's spill_at of them; under the run's lock.
 */
static void
spill(struct run *run)
{
	if (run->spill_fd < 0) {
		const char *dir = getenv("TMPDIR");
		char *name = easprintf("%s/perf-changes.XXXXXX", dir != NULL && *dir != '\0' ?
		    dir : "/tmp");

		if ((run->spill_fd = mkstemp(name)) < 0)
			die("cannot make a spill file for the history (%s): %s", name,
			    strerror(errno));
		unlink(name);
		free(name);
	}
	for (size_t i = 0; i < run->n; i++) {
		struct cohort *c = run->c[i];
		size_t done = 0;
		ssize_t w;

		if (c->phase != COLLECTING || c->pending.len == 0)
			continue;
		while (done < c->pending.len) {
			w = pwrite(run->spill_fd, c->pending.s + done, c->pending.len - done,
			    run->spill_off + (off_t)done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				die("cannot spill the history to a file: %s",
				    w < 0 ? strerror(errno) : "no space");
			done += (size_t)w;
		}
		c->chunks = erealloc(c->chunks, (c->nchunks + 1) * sizeof *c->chunks);
		c->chunks[c->nchunks].off = run->spill_off;
		c->chunks[c->nchunks++].len = c->pending.len;
		run->spill_off += (off_t)c->pending.len;
		run->pending -= c->pending.cap;
		buf_free(&c->pending);
	}
}

/*
 * Drops the points of a cohort (read into its history, or to be read
 * again); under the run's lock while reader threads run.
 */
static void
drop_points(struct run *run, struct cohort *c)
{
	run->pending -= c->pending.cap;
	buf_free(&c->pending);
	free(c->chunks);
	c->chunks = NULL;
	c->nchunks = 0;
}

/* The points of a cohort, spilled and held, in the order read (into b). */
static void
load_points(struct run *run, struct cohort *c, buf *b)
{
	for (size_t i = 0; i < c->nchunks; i++) {
		size_t done = 0;
		ssize_t r;

		buf_grow(b, c->chunks[i].len + 1);
		while (done < c->chunks[i].len) {
			r = pread(run->spill_fd, b->s + b->len + done, c->chunks[i].len - done,
			    c->chunks[i].off + (off_t)done);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				die("cannot read the spilled history back: %s",
				    r < 0 ? strerror(errno) : "file shortened");
			done += (size_t)r;
		}
		b->len += done;
	}
	if (c->pending.len > 0)
		buf_add(b, c->pending.s, c->pending.len);
	pthread_mutex_lock(&run->lock);
	drop_points(run, c);
	pthread_mutex_unlock(&run->lock);
}
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
 * One series of a record into its cohort, keyed (cohort_key(), base_len
 * bytes of it, then the name of the named metric nm; NULL: the six): a
 * point when it is a measurement, else its instant.
 */
static void
add_series(struct run *run, const struct store_hit *h, const struct view *w, buf *b,
    size_t base_len, const struct named_point *nm, bool point)
{
	struct cohort *c;
	size_t at;

	if (!point) {
		/* Only its instant: the runs that lie between two measurements. */
		pthread_mutex_lock(&run->lock);
		c = cohort_find(run, b->s, base_len, h->record);
		if (run->by_unit)
			note_unit(run, c, h->unit);
		if (c->phase == COLLECTING && (!run->again || c->again)) {
			char *key = store_record_path(h->record);

			c->skipped = erealloc(c->skipped, (c->nskipped + 1) * sizeof *c->skipped);
			c->skipped[c->nskipped++] = (struct skipped){ h->instant,
			    text_hash(key != NULL ? key : h->path) };
			free(key);
		}
		pthread_mutex_unlock(&run->lock);
		return;
	}
	at = b->len + 1;
	buf_addc(b, '\0');
	encode_point(b, h, w, !run->by_unit, nm);
	pthread_mutex_lock(&run->lock);
	c = cohort_find(run, b->s, base_len, h->record);
	if (run->by_unit)
		note_unit(run, c, h->unit);
	if (c->phase == COLLECTING && (!run->again || c->again)) {
		size_t cap = c->pending.cap;

		buf_add(&c->pending, b->s + at, b->len - at);
		run->pending += c->pending.cap - cap;
		if (run->pending > run->spill_at)
			spill(run);
	}
	pthread_mutex_unlock(&run->lock);
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

	record_view(run->keys, h->record, &w);
	buf_grow(&b, 512);
	if (!cohort_key(&w, &b)) {
		buf_free(&b);
		return;
	}
	base = b.len;
	point = measured(&w);
	add_series(run, h, &w, &b, base, NULL, point);
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
		add_series(run, h, &w, &b, base, &np[i], point);
	}
	free(np);
	free(ms);
	buf_free(&b);
}

/* The query of every record: on_hit() sorts out the measurements (measured()). */
static void
trusted_query(struct store_query *q)
{
	memset(q, 0, sizeof *q);
}

/* Reads JSON-lines records from the operands; false when one was bad. */
static bool
read_records(struct run *run, char *const *paths, int n)
{
	jsonl_reader *r = jsonl_open(paths, n);
	struct store_query q;
	struct store_hit h;
	jsonl_span s;
	cJSON *rec;
	bool good, ok;
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
	ok = jsonl_errors(r) == 0;
	jsonl_close(r);
	return ok;
}

/* Reads the cohorts of --batch; false when a record was bad. */
static bool
read_batch(struct run *run)
{
	jsonl_reader *r = jsonl_open((char *const *)&opt.batch, 1);
	struct view w;
	jsonl_span s;
	cJSON *rec;
	bool ok;

	while ((rec = jsonl_next(r, &s)) != NULL) {
		buf b = BUF_INIT;

		record_view(run->keys, rec, &w);
		if (cohort_key(&w, &b)) {
			run->batch = erealloc(run->batch, (run->nbatch + 1) * sizeof *run->batch);
			run->batch[run->nbatch++] = buf_detach(&b);
		}
		buf_free(&b);
		cJSON_Delete(rec);
	}
	ok = jsonl_errors(r) == 0;
	jsonl_close(r);
	if (run->nbatch > 0)	/* run->batch is NULL for an empty batch */
		qsort(run->batch, run->nbatch, sizeof *run->batch, text_cmp_ptr);
	return ok;
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

/*
 * SHA-256 of the first n values as stored in memory (little-endian) into
 * hex and, in the same pass, of the first at values into at_hex when
 * at <= n.
 */
static void
digest(const double *x, size_t n, char hex[SHA256_HEX], size_t at, char at_hex[SHA256_HEX])
{
	struct canon_sha *h = canon_sha_new();
	unsigned char b[8 * 512];	/* 512 values at a time */
	size_t i, j, end;

	for (i = 0; i <= n; i += j) {
		if (i == at)
			canon_sha_peek(h, at_hex);
		end = i + 512 < n ? i + 512 : n;
		end = at > i && at < end ? at : end;
		for (j = 0; i + j < end; j++) {
			uint64_t u;

			memcpy(&u, &x[i + j], sizeof u);
			for (int k = 0; k < 8; k++)
				b[8 * j + k] = (unsigned char)(u >> (8 * k));
		}
		canon_sha_update(h, b, 8 * j);
		if (i == n)
			break;
	}
	canon_sha_final(h, hex);
}

/*
 * The saved state of a series of n points made from no more points, taken
 * (marked used) under the run's lock, as analysis threads look at once.
 */
static struct saved *
find_saved(struct run *run, const char *series, size_t n)
{
	struct saved *sv = NULL;

	pthread_mutex_lock(&run->lock);
	for (size_t i = 0; i < run->nsaved && sv == NULL; i++)
		if (!run->saved[i].used && strcmp(run->saved[i].series, series) == 0 &&
		    run->saved[i].n <= n) {
			sv = &run->saved[i];
			sv->used = true;
		}
	pthread_mutex_unlock(&run->lock);
	return sv;
}

/*
 * The format of the state file: 2 carries a checksum on every line (1,
 * without them, is read as stale).
 */
enum { STATE_FORMAT = 2 };

/* The end of a state line: ,"sum":"<SHA-256 hex>"} */
#define SUM_OPEN ",\"sum\":\""
enum { SUM_TAIL = sizeof SUM_OPEN - 1 + SHA256_HEX - 1 + 2 };

/*
 * Appends o to out as a state line: its compact JSON with a last member
 * "sum", the SHA-256 of the line without that member (the same text with
 * the object closed where "sum" begins), and a newline.
 */
static void
state_line(buf *out, const cJSON *o)
{
	buf line = BUF_INIT;
	char hex[SHA256_HEX];

	json_write(&line, o, JSON_COMPACT, NULL);
	canon_sha256_hex(line.s, line.len, hex);
	buf_add(out, line.s, line.len - 1);
	buf_addf(out, SUM_OPEN "%s\"}\n", hex);
	buf_free(&line);
}

/*
 * The content of a state line s[0..len) (no newline) whose checksum holds,
 * NUL-terminated in place of its "sum" member; NULL with *why set when it
 * has none or it fails.
 */
static char *
state_checked(char *s, size_t len, const char **why)
{
	char hex[SHA256_HEX], *sum;

	if (len < SUM_TAIL + 2 || memcmp(s + len - SUM_TAIL, SUM_OPEN, sizeof SUM_OPEN - 1) != 0 ||
	    strcmp(s + len - 2, "\"}") != 0) {
		*why = "malformed state line, no checksum";
		return NULL;
	}
	sum = s + len - SUM_TAIL + sizeof SUM_OPEN - 1;
	s[len - SUM_TAIL] = '}';
	canon_sha256_hex(s, len - SUM_TAIL + 1, hex);
	if (memcmp(hex, sum, SHA256_HEX - 1) != 0) {
		*why = "checksum mismatch";
		return NULL;
	}
	s[len - SUM_TAIL + 1] = '\0';
	return s;
}

/* The header line of a state file for the options in force. */
static cJSON *
state_header(void)
{
	cJSON *o = json_new_object();

	json_set(o, "perf_changes_state", json_new_int(STATE_FORMAT));
	json_set(o, "window", json_new_int(opt.window));
	json_set(o, "pvalue", json_new_float(opt.pvalue));
	json_set(o, "all", json_new_bool(opt.all));
	return o;
}

/*
 * The merge's comparisons on a state line, one string each: lo, index
 * and hi in decimal, then the means before and after, the standard
 * deviations before and after and the p-value as C's hexadecimal floats
 * (%a, num_hex(): exact), separated by single spaces, with lo < index < hi <= n.
 * False when they are not that.
 */
static bool
load_memo(struct saved *sv, const cJSON *a)
{
	const cJSON *e;
	unsigned long long p[3];
	double f[5];
	const char *s;
	char *end;

	if (!cJSON_IsArray(a))
		return false;
	sv->memo = emalloc(((size_t)cJSON_GetArraySize(a) + 1) * sizeof *sv->memo);
	cJSON_ArrayForEach(e, a) {
		if ((s = cJSON_GetStringValue(e)) == NULL)
			return false;
		for (int k = 0; k < 8; k++) {
			/* One space between fields, none around them. */
			if ((k > 0 && *s++ != ' ') || *s == '\0' || isspace((unsigned char)*s))
				return false;
			errno = 0;
			if (k < 3) {
				if (!isdigit((unsigned char)*s))
					return false;
				p[k] = strtoull(s, &end, 10);
				if (errno != 0)
					return false;
			} else	/* ERANGE for a subnormal: still exact */
				f[k - 3] = strtod(s, &end);
			if (end == s)
				return false;
			s = end;
		}
		if (*s != '\0' || !(p[0] < p[1] && p[1] < p[2] && p[2] <= sv->n))
			return false;
		sv->memo[sv->nmemo++] = (struct changes_memo){ .lo = (size_t)p[0],
		    .hi = (size_t)p[2], .cp = { .index = (size_t)p[1],
		    .n_before = (size_t)(p[1] - p[0]), .n_after = (size_t)(p[2] - p[1]),
		    .mean_before = f[0], .mean_after = f[1], .std_before = f[2],
		    .std_after = f[3], .pvalue = f[4] } };
	}
	return true;
}

/*
 * One line of the state (line no, text s[0..len), no newline) into the
 * run: its checksum checked, then the header's options or a series' split
 * and merge. Returns NULL when it is good, else why the state is not used.
 */
static const char *
load_state_line(struct run *run, long no, char *s, size_t len, const cJSON *head)
{
	const cJSON *w, *v;
	struct saved sv = { 0 };
	const char *why = NULL;
	json_error e;
	cJSON *o;
	char *t;
	double d;

	if ((t = state_checked(s, len, &why)) == NULL) {
		/* A header without a checksum: an earlier version's state (format 1). */
		if (no == 1 && strcmp(why, "malformed state line, no checksum") == 0 &&
		    (o = json_parse(s, len, &e)) != NULL) {
			if (json_get(o, "perf_changes_state") != NULL)
				why = "a state of an earlier format, without checksums";
			cJSON_Delete(o);
		}
		return why;
	}
	if ((o = json_parse(t, strlen(t), &e)) == NULL)
		return "malformed state line";
	if (no == 1) {
		why = json_equal(o, head) ? NULL : !json_is_int(json_get(o, "perf_changes_state")) ||
		    json_num(o, "perf_changes_state") != STATE_FORMAT ? "not a state of this format" :
		    "ignoring the incremental state: not this program's state for these options";
		cJSON_Delete(o);
		return why;
	}
	w = json_get(o, "weak");
	if (!cJSON_IsString(json_get(o, "series")) ||
	    strlen(json_str(o, "digest")) != SHA256_HEX - 1 || !cJSON_IsArray(w) ||
	    !json_is_int(json_get(o, "n")) || !json_is_int(json_get(o, "resume")) ||
	    json_num(o, "n") < 0 || json_num(o, "resume") < 0) {
		cJSON_Delete(o);
		return "malformed state line";
	}
	sv.series = estrdup(json_str(o, "series"));
	memcpy(sv.digest, json_str(o, "digest"), SHA256_HEX);
	sv.n = (size_t)json_num(o, "n");
	sv.resume = (size_t)json_num(o, "resume");
	sv.early = emalloc(((size_t)cJSON_GetArraySize(w) + 1) * sizeof *sv.early);
	cJSON_ArrayForEach(v, w) {
		d = v->valuedouble;
		if (!json_is_int(v) || d < 0 || d >= (double)sv.n) {
			why = "malformed state line";
			break;
		}
		sv.early[sv.nearly++] = (size_t)d;
	}
	if (why == NULL && sv.resume >= sv.n)
		why = "malformed state line";
	if (why == NULL && json_get(o, "merge") != NULL && !load_memo(&sv, json_get(o, "merge")))
		why = "malformed state line";
	run->saved = erealloc(run->saved, (run->nsaved + 1) * sizeof *run->saved);
	run->saved[run->nsaved++] = sv;
	cJSON_Delete(o);
	return why;
}

/*
 * Loads --incremental's state; a state that cannot be used is ignored (a
 * cache), with one line naming the line of the file that failed and why:
 * a checksum that fails, a malformed line, a state of an earlier format
 * or written for other options.
 */
static void
load_state(struct run *run)
{
	FILE *fp = fopen(opt.state, "r");
	char *line = NULL;
	const char *why = NULL;
	size_t cap = 0;
	ssize_t len;
	long no = 0;
	cJSON *head;

	if (fp == NULL)
		return;
	head = state_header();
	while (why == NULL && (len = getline(&line, &cap, fp)) > 0) {
		no++;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		why = load_state_line(run, no, line, (size_t)len, head);
	}
	if (why != NULL) {
		if (strncmp(why, "ignoring", 8) == 0)
			diag(opt.state, no, "%s", why);
		else
			diag(opt.state, no, "%s: ignoring the incremental state", why);
		for (size_t i = 0; i < run->nsaved; i++) {
			free(run->saved[i].series);
			free(run->saved[i].early);
			free(run->saved[i].memo);
		}
		run->nsaved = 0;
	}
	free(line);
	fclose(fp);
	cJSON_Delete(head);
}

/* The state line of a series, after its merge. */
static void
keep_state(buf *out, const char *series, const char *hex, const struct changes_split *sp)
{
	cJSON *o = json_new_object(), *w = json_new_array(), *a = json_new_array();
	struct changes_memo *m;
	size_t nm = changes_memo_get(sp, &m);

	json_set(o, "series", json_new_string(series));
	json_set(o, "n", json_new_int((long long)sp->n));
	json_set(o, "digest", json_new_string(hex));
	json_set(o, "resume", json_new_int((long long)sp->resume));
	for (size_t i = 0; i < sp->nearly; i++)
		json_append(w, json_new_int((long long)sp->early[i]));
	json_set(o, "weak", w);
	for (size_t i = 0; i < nm; i++) {
		const struct change_point *cp = &m[i].cp;
		const double f[5] = { cp->mean_before, cp->mean_after, cp->std_before,
		    cp->std_after, cp->pvalue };
		char t[5 * 32 + 3 * 24], *e;

		e = t + snprintf(t, 3 * 24, "%zu %zu %zu", m[i].lo, cp->index, m[i].hi);
		for (int k = 0; k < 5; k++) {
			*e++ = ' ';
			e = num_hex(e, f[k]);
		}
		*e = '\0';
		json_append(a, json_new_string(t));
	}
	json_set(o, "merge", a);
	free(m);
	state_line(out, o);
	cJSON_Delete(o);
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

/* The timestamp, commit and path of point i of a cohort. */
static void
point_fields(const struct cohort *c, size_t i, char *f[AT_FIELDS])
{
	f[AT_TIMESTAMP] = estrdup(c->h.p[i].timestamp);
	f[AT_COMMIT] = estrdup(c->h.p[i].commit);
	f[AT_PATH] = estrdup(c->h.p[i].path);
}

/*
 * How many records of a cohort that are no measurement lie strictly
 * between the timestamps of its points index - 1 and index.
 */
static size_t
between(const struct cohort *c, size_t index)
{
	int64_t lo = c->h.p[index - 1].instant, hi = c->h.p[index].instant;
	uint64_t *seen = emalloc((c->nskipped + 1) * sizeof *seen);
	size_t k = 0, j;

	for (size_t i = 0; i < c->nskipped; i++) {
		if (c->skipped[i].instant <= lo || c->skipped[i].instant >= hi)
			continue;
		for (j = 0; j < k && seen[j] != c->skipped[i].key; j++)
			;
		if (j == k)
			seen[k++] = c->skipped[i].key;
	}
	free(seen);
	return k;
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
		sv = find_saved(run, series, n);
		digest(x, n, now, sv != NULL ? sv->n : SIZE_MAX, hex);
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
		keep_state(&c->state, series, now, &sp);
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
		point_fields(c, cp[i].index, f->at);
		point_fields(c, cp[i].index - 1, f->before);
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
		f->untrusted = between(c, cp[i].index);
	}
	free(cp);
	free(series);
	if (run->stats) {
		pthread_mutex_lock(&run->lock);
		run->compared += sp.compared;
		run->reused += sp.reused;
		run->analysis_s += now_thread_cpu() - t0;
		pthread_mutex_unlock(&run->lock);
	}
	changes_split_free(&sp);
}

/* Forgets the change points and state lines of a cohort. */
static void
forget(struct cohort *c)
{
	for (size_t i = 0; i < c->nfound; i++)
		for (int k = 0; k < AT_FIELDS; k++) {
			free(c->found[i].at[k]);
			free(c->found[i].before[k]);
		}
	free(c->found);
	c->found = NULL;
	c->nfound = 0;
	buf_free(&c->state);
}

/* Analyses every metric of a cohort read whole, then releases its records. */
static void
finish(struct run *run, struct cohort *c)
{
	buf points = BUF_INIT;
	double *x;
	bool *has;

	load_points(run, c, &points);
	decode_points(c, points.s, points.len);
	/* A named metric's series: the records between its points are its cohort's. */
	if (c->base != NULL) {
		pthread_mutex_lock(&run->lock);
		free(c->skipped);
		c->skipped = emalloc((c->base->nskipped + 1) * sizeof *c->skipped);
		memcpy(c->skipped, c->base->skipped, c->base->nskipped * sizeof *c->skipped);
		c->nskipped = c->base->nskipped;
		pthread_mutex_unlock(&run->lock);
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
	pthread_mutex_lock(&run->lock);
	/* Records of it came from another directory meanwhile: read it again. */
	if (c->phase == SPANNING)
		forget(c);
	else
		c->phase = ANALYSED;
	history_free(&c->h);
	pthread_mutex_unlock(&run->lock);
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
	    f->c->model, f->c->gpu, metric_table[f->metric].key, f->before[AT_COMMIT],
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

/* The Markdown table of --md. */
static void
write_md(struct run *run)
{
	const cJSON **cps = emalloc((run->nfound + 1) * sizeof *cps);
	buf out = BUF_INIT;

	for (size_t i = 0; i < run->nfound; i++)
		cps[i] = found_json(&run->found[i]);
	buf_adds(&out, "## Change points\n\n");
	if (run->nfound == 0)
		buf_adds(&out, "No change points.\n");
	else
		cpoints_markdown(&out, cps, run->nfound);
	fwrite(out.s, 1, out.len, stdout);
	for (size_t i = 0; i < run->nfound; i++)
		cJSON_Delete((cJSON *)cps[i]);
	free(cps);
	buf_free(&out);
}

/* A thread of the analysis: takes the next cohort until none is left. */
static void *
worker(void *arg)
{
	struct run *run = arg;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&run->lock);
		i = run->next++;
		pthread_mutex_unlock(&run->lock);
		if (i >= run->ntodo)
			break;
		finish(run, run->todo[i]);
	}
	return NULL;
}

/*
 * Analyses the cohorts not analysed yet, on up to PERF_STORE_THREADS
 * threads (default: the CPUs, up to 4); each cohort keeps its results,
 * gathered in cohort order, so they do not depend on the threads.
 */
static void
analyse_all(struct run *run)
{
	const char *env = getenv("PERF_STORE_THREADS");
	long nt = env != NULL ? atol(env) : sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t tid[64];
	int started = 0;

	nt = nt < 1 ? 1 : nt > (env != NULL ? 64 : 4) ? (env != NULL ? 64 : 4) : nt;
	run->todo = emalloc((run->n + 1) * sizeof *run->todo);
	for (size_t i = 0; i < run->n; i++)
		if (run->c[i]->phase == COLLECTING) {
			run->c[i]->phase = ANALYSING;
			run->todo[run->ntodo++] = run->c[i];
		}
	while (started < nt - 1 && (size_t)started + 1 < run->ntodo &&
	    pthread_create(&tid[started], NULL, worker, run) == 0)
		started++;
	worker(run);
	while (started > 0)
		pthread_join(tid[--started], NULL);
	free(run->todo);
}

/* Gathers the change points and state lines of every cohort, in cohort order. */
static void
gather(struct run *run)
{
	for (size_t i = 0; i < run->n; i++) {
		struct cohort *c = run->c[i];

		if (c->nfound > 0) {
			run->found = erealloc(run->found, (run->nfound + c->nfound) * sizeof *run->found);
			memcpy(run->found + run->nfound, c->found, c->nfound * sizeof *c->found);
			run->nfound += c->nfound;
		}
		if (c->state.len > 0)
			buf_adds(&run->state, c->state.s);
	}
}

/* A directory of the store read whole: its cohorts found nowhere else are analysed. */
static void
unit_done(size_t u, const char *name, void *ctx)
{
	struct run *run = ctx;
	struct cohort **ready;
	struct touched *t;
	size_t n = 0;

	pthread_mutex_lock(&run->lock);
	grow_units(run, u);
	run->unit_name[u] = estrdup(name);
	t = &run->touched[u];
	ready = emalloc((t->n + 1) * sizeof *ready);
	for (size_t i = 0; i < t->n; i++)
		if (--t->c[i]->open == 0 && t->c[i]->phase == COLLECTING) {
			t->c[i]->phase = ANALYSING;
			ready[n++] = t->c[i];
		}
	free(t->c);
	t->c = NULL;
	t->n = 0;
	pthread_mutex_unlock(&run->lock);
	for (size_t i = 0; i < n; i++)
		finish(run, ready[i]);
	free(ready);
}

/* Whether a directory of the store holds records of a cohort read again. */
static bool
want_unit(const char *name, void *ctx)
{
	struct run *run = ctx;

	for (size_t i = 0; i < run->n; i++)
		for (size_t k = 0; run->c[i]->again && k < run->c[i]->nunits; k++)
			if (run->unit_name[run->c[i]->units[k]] != NULL &&
			    strcmp(run->unit_name[run->c[i]->units[k]], name) == 0)
				return true;
	return false;
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

	for (size_t i = 0; i < run->n; i++) {
		struct cohort *c = run->c[i];

		if (c->phase != SPANNING)
			continue;
		forget(c);
		drop_points(run, c);
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
	run->by_unit = false;
	run->again = true;
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

	if ((st = store_open_cache(opt.store, opt.cache)) == NULL)
		return -1;
	store_want(st, wanted, W_KEYS);
	if (store_root(st) != NULL && decisions_load(store_root(st), &decisions) != 0) {
		store_close(st);
		return -1;
	}
	/* A report that cannot be read is said and skipped: it never stops the gate. */
	if (store_root(st) != NULL)
		bisect_reports_load(store_root(st), &reports);
	for (int h = 0; h < opt.nhistories; h++)
		store_add_stream(st, opt.histories[h]);
	trusted_query(&q);
	if (opt.batch != NULL && opt.state == NULL && opt.nhistories == 0 &&
	    batch_queries(run, &bq, &nbq, &bkeys)) {
		/* The batch's cohorts alone: through the store's index, when it has one. */
		run->by_unit = false;
		rc = store_scan(st, bq, nbq, on_hit, run, &raised);
	} else if (run->by_unit) {
		struct store_units u = { .done = unit_done, .unlocked = true };
		rc = store_scan_units(st, &q, 1, on_hit, &u, run, &raised);
		if (rc == 0 && raised == NULL)
			rc = read_again(run, st, &q);
	} else
		rc = store_scan(st, &q, 1, on_hit, run, &raised);
	batch_queries_free(bq, bkeys, nbq);
	store_close(st);
	if (rc == 0 && raised != NULL) {
		warnx_("cannot read the store: %s", raised);
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

static void
parse_options(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "store", required_argument, NULL, 's' },
		{ "cache", required_argument, NULL, 'C' },
		{ "history", required_argument, NULL, 'H' },
		{ "metric", required_argument, NULL, 'm' },
		{ "window", required_argument, NULL, 'w' },
		{ "pvalue", required_argument, NULL, 'p' },
		{ "min-magnitude", required_argument, NULL, 'M' },
		{ "min-points", required_argument, NULL, 'P' },
		{ "since", required_argument, NULL, 'S' },
		{ "last", required_argument, NULL, 'l' },
		{ "incremental", required_argument, NULL, 'i' },
		{ "batch", required_argument, NULL, 'B' },
		{ "all", no_argument, NULL, 'A' },
		{ "json", no_argument, NULL, 'J' },
		{ "md", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool any_metric = false;
	const char *why;
	int c, k;

	while ((c = getopt_long(argc, argv, "hH:m:p:s:w:", longopts, NULL)) != -1) {
		switch (c) {
		case 's': opt.store = optarg; break;
		case 'C': opt.cache = optarg; break;
		case 'H':
			opt.histories = erealloc(opt.histories,
			    (size_t)(opt.nhistories + 1) * sizeof *opt.histories);
			opt.histories[opt.nhistories++] = optarg;
			break;
		case 'm':
			if ((k = policy_metric_index(optarg)) >= 0) {
				opt.metric[k] = any_metric = true;
				break;
			}
			if (!nm_name_valid(optarg, &why)) {
				warnx_("--metric: '%s' is not a metric name: %s", optarg, why);
				cli_usage(usage_text, EXIT_TROUBLE);
			}
			opt.names = erealloc(opt.names, (size_t)(opt.nnames + 1) * sizeof *opt.names);
			opt.names[opt.nnames++] = optarg;
			opt.any_named = any_metric = true;
			break;
		case 'w':
			opt.window = cli_long(usage_text, "--window", optarg, 2, 100000,
			    "an integer from 2 to 100000");
			break;
		case 'p':
			opt.pvalue = cli_double(usage_text, "--pvalue", optarg, DBL_TRUE_MIN, 1,
			    "a number above 0 and at most 1");
			break;
		case 'M':
			opt.min_magnitude = cli_double(usage_text, "--min-magnitude", optarg, 0, 1e300,
			    "a number of 0 or more");
			break;
		case 'P':
			opt.min_points = cli_long(usage_text, "--min-points", optarg, 1, 1000000000,
			    "a positive integer");
			break;
		case 'S':
			opt.since = cli_time(usage_text, "--since", optarg, "an ISO time");
			opt.has_since = true;
			break;
		case 'l':
			opt.last = cli_long(usage_text, "--last", optarg, 1, 1000000000,
			    "a positive integer");
			break;
		case 'i': opt.state = optarg; break;
		case 'B': opt.batch = optarg; break;
		case 'A': opt.all = true; break;
		case 'J': opt.md = false; break;
		case 'D': opt.md = true; break;
		case 'h': cli_usage(usage_text, EXIT_PASS);
		case 'V': cli_version();
		default: cli_usage(usage_text, EXIT_TROUBLE);
		}
	}
	if (opt.has_since && opt.last > 0) {
		warnx_("--since and --last cannot be used together");
		cli_usage(usage_text, EXIT_TROUBLE);
	}
	for (k = 0; k < METRIC_COUNT; k++)
		opt.metric[k] |= !any_metric;
	opt.any_named |= !any_metric;
}

int
main(int argc, char *argv[])
{
	/*
	 * The run's state: main's own, passed to every function that needs it.
	 * Static so that what it holds stays reachable until the process ends,
	 * which frees it (the program never frees its cohorts one by one).
	 */
	static struct run state = { .lock = PTHREAD_MUTEX_INITIALIZER, .spill_at = 4 << 20, .spill_fd = -1 };
	struct run *run = &state;
	bool trouble = false, worse = false;
	size_t i;

	git_askpass_main(argc, argv);
	err_init(argv[0]);
	parse_options(argc, argv);
	run->keys = wanted_keyset();
	run->stats = getenv("PERF_CHANGES_STATS") != NULL;
	/* Undocumented, for the tests: spill points held past this many bytes. */
	if (getenv("PERF_CHANGES_SPILL") != NULL)
		run->spill_at = (size_t)strtoull(getenv("PERF_CHANGES_SPILL"), NULL, 10);
	/* The cohorts of --batch and the saved state are needed while reading. */
	if (opt.batch != NULL)
		trouble |= !read_batch(run);
	if (opt.state != NULL)
		load_state(run);
	run->by_unit = opt.store != NULL && opt.nhistories == 0 && optind == argc;
	if ((opt.store != NULL || opt.nhistories > 0) && read_store(run) != 0)
		return EXIT_TROUBLE;
	if (optind < argc || (opt.store == NULL && opt.nhistories == 0))
		trouble |= !read_records(run, argv + optind, argc - optind);
	analyse_all(run);
	if (run->n > 1)
		qsort(run->c, run->n, sizeof *run->c, cmp_cohort);
	if (opt.state != NULL) {
		cJSON *head = state_header();
		state_line(&run->state, head);
		cJSON_Delete(head);
	}
	gather(run);
	/* A tentative change point is reported, never gated. */
	for (i = 0; i < run->nfound; i++)
		worse |= run->found[i].worse && !run->found[i].tentative &&
		    decision_of(&run->found[i]) == NULL;
	if (opt.md)
		write_md(run);
	else
		for (i = 0; i < run->nfound; i++) {
			cJSON *o = found_json(&run->found[i]);
			jsonl_emit(stdout, o, NULL);
			cJSON_Delete(o);
		}
	decisions_free(&decisions);
	bisect_reports_free(&reports);
	if (opt.state != NULL &&
	    atomic_save("incremental state", opt.state, run->state.s, run->state.len) != 0)
		trouble = true;
	/* Undocumented, for the tests and the bench: what the analysis did. */
	if (run->stats)
		warnx_("analysis %.3f ms CPU; the merges compared %zu segments, reused %zu",
		    run->analysis_s * 1000, run->compared, run->reused);
	if (jsonl_finish(stdout, "standard output") != 0 || trouble)
		return EXIT_TROUBLE;
	return worse ? EXIT_GATE : EXIT_PASS;
}
