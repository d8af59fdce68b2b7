/*
 * cohort: the series of perf-changes(1): cohorts, their points, spilling,
 * and the threads that analyse them (lane/cohort.h).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "core/strmap.h"
#include "core/text.h"
#include "lane/cohort.h"
#include "lane/history.h"
#include "lane/identity.h"
#include "lane/named_metric.h"
#include "lane/policy.h"
#include "lane/store/read.h"

static const char *wanted[W_KEYS] = { "model_id", "gpu_type", "timestamp", "commit_sha",
	"result_schema_version", [W_SUCCESS] = "success", "baseline_eligible", "run_source",
	"comparison_status", "metrics", "regression_thresholds" };

/* wanted[] made whole, and its keyset; once, before anything is read. */
struct json_keyset *
cohort_keyset(void)
{
	int i;

	for (i = 0; i < IDENTITY_KEYS; i++)
		wanted[W_IDENT + i] = identity_keys[i];
	for (i = 0; i < METRIC_COUNT; i++)
		wanted[W_METRIC + i] = metric_table[i].key;
	return json_keyset_new(wanted, W_KEYS);
}

const char *const *
cohort_wanted(void)
{
	return wanted;
}

void
cohort_view(const struct json_keyset *ks, const cJSON *rec, struct view *w)
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
bool
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
bool
cohort_measured(const struct view *w, bool all)
{
	static const char *const verdicts[] = { "PASS", "REGRESSION", "CALIBRATION_NEEDED",
		"RECIPE_MISMATCH" };
	const cJSON *succ = w->v[W_SUCCESS], *elig = w->v[W_ELIGIBLE], *src = w->v[W_SOURCE];
	bool ok = succ == NULL || json_truthy(succ);

	if (all)
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
 * when new; under the lock of cs.
 */
struct cohort *
cohort_find(struct cohorts *cs, const char *key, size_t base_len, const cJSON *rec)
{
	struct identity id;
	struct cohort *c, *base = NULL;
	struct strmap_entry *e;
	bool added;

	if ((e = strmap_find(&cs->cohorts, key)) != NULL)
		return e->ptr;
	if (key[base_len] == '\x1d') {
		char *b = estrndup(key, base_len);

		base = cohort_find(cs, b, base_len, rec);
		free(b);
	}
	e = strmap_put(&cs->cohorts, key, &added);
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
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? cs->cap * 2 : 64;
		cs->c = erealloc(cs->c, cs->cap * sizeof *cs->c);
	}
	cs->c[cs->n++] = c;
	return c;
}

/* Makes room for store unit u. */
static void
grow_units(struct cohorts *cs, size_t u)
{
	if (u < cs->nunits)
		return;
	cs->touched = erealloc(cs->touched, (u + 1) * sizeof *cs->touched);
	cs->unit_name = erealloc(cs->unit_name, (u + 1) * sizeof *cs->unit_name);
	memset(cs->touched + cs->nunits, 0, (u + 1 - cs->nunits) * sizeof *cs->touched);
	memset(cs->unit_name + cs->nunits, 0, (u + 1 - cs->nunits) * sizeof *cs->unit_name);
	cs->nunits = u + 1;
}

/*
 * Notes that c has a record in store unit u; one that turns up in a new
 * unit after its analysis began spans units.
 */
static void
note_unit(struct cohorts *cs, struct cohort *c, size_t u)
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
	grow_units(cs, u);
	t = &cs->touched[u];
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
void
cohort_decode_points(struct cohort *c, char *s, size_t len)
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
 * cs->spill_at of them; under the lock of cs.
 */
static void
spill(struct cohorts *cs)
{
	if (cs->spill_fd < 0) {
		const char *dir = getenv("TMPDIR");
		char *name = easprintf("%s/perf-changes.XXXXXX", dir != NULL && *dir != '\0' ?
		    dir : "/tmp");

		if ((cs->spill_fd = mkstemp(name)) < 0)
			die_errno("cannot make a spill file for the history (%s)",
			    name);
		unlink(name);
		free(name);
	}
	for (size_t i = 0; i < cs->n; i++) {
		struct cohort *c = cs->c[i];
		size_t done = 0;
		ssize_t w;

		if (c->phase != COLLECTING || c->pending.len == 0)
			continue;
		while (done < c->pending.len) {
			w = pwrite(cs->spill_fd, c->pending.s + done, c->pending.len - done,
			    cs->spill_off + (off_t)done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				die("cannot spill the history to a file: %s",
				    w < 0 ? strerror(errno) : "no space");
			done += (size_t)w;
		}
		c->chunks = erealloc(c->chunks, (c->nchunks + 1) * sizeof *c->chunks);
		c->chunks[c->nchunks].off = cs->spill_off;
		c->chunks[c->nchunks++].len = c->pending.len;
		cs->spill_off += (off_t)c->pending.len;
		cs->pending -= c->pending.cap;
		buf_free(&c->pending);
	}
}

/*
 * Drops the points of a cohort (read into its history, or to be read
 * again); under the lock of cs while reader threads run.
 */
void
cohort_drop_points(struct cohorts *cs, struct cohort *c)
{
	cs->pending -= c->pending.cap;
	buf_free(&c->pending);
	free(c->chunks);
	c->chunks = NULL;
	c->nchunks = 0;
}

/* The points of a cohort, spilled and held, in the order read (into b). */
void
cohort_load_points(struct cohorts *cs, struct cohort *c, buf *b)
{
	for (size_t i = 0; i < c->nchunks; i++) {
		size_t done = 0;
		ssize_t r;

		buf_grow(b, c->chunks[i].len + 1);
		while (done < c->chunks[i].len) {
			r = pread(cs->spill_fd, b->s + b->len + done, c->chunks[i].len - done,
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
	pthread_mutex_lock(&cs->lock);
	cohort_drop_points(cs, c);
	pthread_mutex_unlock(&cs->lock);
}

/*
 * One series of a record into its cohort, keyed (cohort_key(), base_len
 * bytes of it, then the name of the named metric nm; NULL: the six): a
 * point when it is a measurement, else its instant.
 */
void
cohort_add_series(struct cohorts *cs, const struct store_hit *h, const struct view *w,
    buf *b, size_t base_len, const struct named_point *nm, bool point)
{
	struct cohort *c;
	size_t at;

	if (!point) {
		/* Only its instant: the runs that lie between two measurements. */
		pthread_mutex_lock(&cs->lock);
		c = cohort_find(cs, b->s, base_len, h->record);
		if (cs->by_unit)
			note_unit(cs, c, h->unit);
		if (c->phase == COLLECTING && (!cs->again || c->again)) {
			char *key = store_record_path(h->record);

			c->skipped = erealloc(c->skipped, (c->nskipped + 1) * sizeof *c->skipped);
			c->skipped[c->nskipped++] = (struct skipped){ h->instant,
			    text_hash(key != NULL ? key : h->path) };
			free(key);
		}
		pthread_mutex_unlock(&cs->lock);
		return;
	}
	at = b->len + 1;
	buf_addc(b, '\0');
	encode_point(b, h, w, !cs->by_unit, nm);
	pthread_mutex_lock(&cs->lock);
	c = cohort_find(cs, b->s, base_len, h->record);
	if (cs->by_unit)
		note_unit(cs, c, h->unit);
	if (c->phase == COLLECTING && (!cs->again || c->again)) {
		size_t cap = c->pending.cap;

		buf_add(&c->pending, b->s + at, b->len - at);
		cs->pending += c->pending.cap - cap;
		if (cs->pending > cs->spill_at)
			spill(cs);
	}
	pthread_mutex_unlock(&cs->lock);
}

/* The timestamp, commit and path of point i of a cohort. */
void
cohort_point_fields(const struct cohort *c, size_t i, char *f[AT_FIELDS])
{
	f[AT_TIMESTAMP] = estrdup(c->h.p[i].timestamp);
	f[AT_COMMIT] = estrdup(c->h.p[i].commit);
	f[AT_PATH] = estrdup(c->h.p[i].path);
}

/*
 * How many records of a cohort that are no measurement lie strictly
 * between the timestamps of its points index - 1 and index.
 */
size_t
cohort_between(const struct cohort *c, size_t index)
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

/* Forgets the change points and state lines of a cohort. */
void
cohort_forget(struct cohort *c)
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

/* A thread of the analysis: takes the next cohort until none is left. */
static void *
worker(void *arg)
{
	struct cohorts *cs = arg;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&cs->lock);
		i = cs->next++;
		pthread_mutex_unlock(&cs->lock);
		if (i >= cs->ntodo)
			break;
		cs->finish(cs->todo[i], cs->arg);
	}
	return NULL;
}

/*
 * Analyses the cohorts not analysed yet, on as many threads as the store
 * is read with (store_thread_count()); each cohort keeps its results,
 * gathered in cohort order, so they do not depend on the threads.
 */
void
cohort_analyse_all(struct cohorts *cs)
{
	int nt = store_thread_count(0);
	pthread_t tid[STORE_MAX_THREADS];
	int started = 0;

	cs->todo = emalloc((cs->n + 1) * sizeof *cs->todo);
	for (size_t i = 0; i < cs->n; i++)
		if (cs->c[i]->phase == COLLECTING) {
			cs->c[i]->phase = ANALYSING;
			cs->todo[cs->ntodo++] = cs->c[i];
		}
	while (started < nt - 1 && (size_t)started + 1 < cs->ntodo &&
	    pthread_create(&tid[started], NULL, worker, cs) == 0)
		started++;
	worker(cs);
	while (started > 0)
		pthread_join(tid[--started], NULL);
	free(cs->todo);
}

/* A directory of the store read whole: its cohorts found nowhere else are analysed. */
void
cohort_unit_done(struct cohorts *cs, size_t u, const char *name)
{
	struct cohort **ready;
	struct touched *t;
	size_t n = 0;

	pthread_mutex_lock(&cs->lock);
	grow_units(cs, u);
	cs->unit_name[u] = estrdup(name);
	t = &cs->touched[u];
	ready = emalloc((t->n + 1) * sizeof *ready);
	for (size_t i = 0; i < t->n; i++)
		if (--t->c[i]->open == 0 && t->c[i]->phase == COLLECTING) {
			t->c[i]->phase = ANALYSING;
			ready[n++] = t->c[i];
		}
	free(t->c);
	t->c = NULL;
	t->n = 0;
	pthread_mutex_unlock(&cs->lock);
	for (size_t i = 0; i < n; i++)
		cs->finish(ready[i], cs->arg);
	free(ready);
}

/* Whether a directory of the store holds records of a cohort read again. */
bool
cohort_want_unit(const struct cohorts *cs, const char *name)
{
	for (size_t i = 0; i < cs->n; i++)
		for (size_t k = 0; cs->c[i]->again && k < cs->c[i]->nunits; k++)
			if (cs->unit_name[cs->c[i]->units[k]] != NULL &&
			    strcmp(cs->unit_name[cs->c[i]->units[k]], name) == 0)
				return true;
	return false;
}
