#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/canon.h"
#include "core/err.h"
#include "core/isotime.h"
#include "core/json.h"
#include "lane/decision.h"
#include "lane/named_metric.h"
#include "lane/store/hidden_dir.h"

static const char *const kind_names[] = { "accept", "acknowledge", "invalid", "revert" };
static const char *const state_names[] = { "accepted", "acknowledged", "invalid", "reverted" };

const char *
decision_kind_name(enum decision_kind k)
{
	return kind_names[k];
}

const char *
decision_state_name(enum decision_kind k)
{
	return state_names[k];
}

bool
decision_kind_of(const char *s, enum decision_kind *k)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(s, kind_names[i]) == 0) {
			*k = (enum decision_kind)i;
			return true;
		}
	return false;
}

static cJSON *
string_or_null(const char *s)
{
	return s != NULL ? json_new_string(s) : json_new_null();
}

cJSON *
decision_json(struct decision *d)
{
	cJSON *o = json_new_object(), *ident = json_new_object(), *metrics = json_new_array();
	char hex[SHA256_HEX];

	json_set(o, "decision_schema_version", json_new_int(1));
	json_set(o, "kind", json_new_string(kind_names[d->kind]));
	json_set(o, "by", json_new_string(d->by));
	json_set(o, "when", json_new_string(d->when));
	json_set(o, "reason", json_new_string(d->reason));
	json_set(o, "link", string_or_null(d->link));
	for (int k = 0; k < IDENTITY_KEYS; k++)
		json_set(ident, identity_keys[k], json_new_string(d->identity[k]));
	json_set(o, "identity", ident);
	for (int m = 0; m < METRIC_COUNT; m++)
		if (d->metric[m])
			json_append(metrics, json_new_string(metric_table[m].key));
	json_set(o, "metrics", metrics);
	if (d->nnamed > 0) {
		cJSON *named = json_new_array();

		for (size_t j = 0; j < d->nnamed; j++)
			json_append(named, json_new_string(d->named[j]));
		json_set(o, "named_metrics", named);
	}
	json_set(o, "record", json_new_string(d->record));
	json_set(o, "record_timestamp", string_or_null(d->record_timestamp));
	json_set(o, "commit_sha", string_or_null(d->commit));
	json_set(o, "reverts", string_or_null(d->reverts));
	if (canon_sha256(o, hex) != 0)
		die("a decision that cannot be written as canonical JSON");
	hex[DECISION_ID_LEN] = '\0';
	free(d->id);
	d->id = estrdup(hex);
	/* The id first, for people reading the file. */
	cJSON *out = json_new_object(), *v;

	json_set(out, "id", json_new_string(hex));
	while ((v = o->child) != NULL) {
		char *key = estrdup(v->string);

		json_set(out, key, json_take(o, key));
		free(key);
	}
	cJSON_Delete(o);
	return out;
}

char *
decision_path(const char *id)
{
	return easprintf("%s/%s%s", DECISIONS_DIR, id, DECISION_SUFFIX);
}

/* o[key] as a new string: a non-empty string, or NULL (null allowed when nullable). */
static bool
take_string(const cJSON *o, const char *key, bool nullable, char **out)
{
	const cJSON *v = json_get(o, key);

	*out = NULL;
	if (cJSON_IsString(v) && *v->valuestring != '\0') {
		*out = estrdup(v->valuestring);
		return true;
	}
	return nullable && (v == NULL || cJSON_IsNull(v));
}

void
decision_set_record_instant(struct decision *d)
{
	d->record_instant = ISOTIME_MIN;
	if (d->record_timestamp != NULL && !isotime_parse(d->record_timestamp, &d->record_instant))
		d->record_instant = ISOTIME_MIN;
}

char *
decision_parse(const cJSON *o, struct decision *d)
{
	const cJSON *v, *ident = json_get(o, "identity"), *metrics = json_get(o, "metrics");
	const cJSON *named = json_get(o, "named_metrics");
	const char *why;
	char *kind = NULL;
	bool any = false;

	memset(d, 0, sizeof *d);
	if (!cJSON_IsObject(o))
		return estrdup("a decision must be a JSON object");
	v = json_get(o, "decision_schema_version");
	if (!cJSON_IsNumber(v) || v->valuedouble != 1)
		return estrdup("unsupported or missing decision_schema_version");
	if (!take_string(o, "id", false, &d->id) || !take_string(o, "kind", false, &kind) ||
	    !decision_kind_of(kind, &d->kind)) {
		free(kind);
		return estrdup("a decision needs an id and a kind (accept, acknowledge, invalid, "
		    "revert)");
	}
	free(kind);
	if (!take_string(o, "by", false, &d->by) || !take_string(o, "when", false, &d->when) ||
	    !isotime_parse(d->when, &d->instant) || !take_string(o, "reason", false, &d->reason))
		return estrdup("a decision needs by, when (an ISO 8601 time) and reason");
	if (!take_string(o, "link", true, &d->link) ||
	    !take_string(o, "record_timestamp", true, &d->record_timestamp) ||
	    !take_string(o, "commit_sha", true, &d->commit) ||
	    !take_string(o, "reverts", true, &d->reverts) ||
	    !take_string(o, "record", false, &d->record))
		return estrdup("a decision's record, link, record_timestamp, commit_sha and "
		    "reverts must be strings (or null)");
	if ((d->kind == DECISION_REVERT) != (d->reverts != NULL))
		return estrdup("a revert, and only a revert, names the decision it reverts");
	if (!cJSON_IsObject(ident))
		return estrdup("a decision's identity must be an object");
	for (int k = 0; k < IDENTITY_KEYS; k++)
		if (!take_string(ident, identity_keys[k], false, &d->identity[k]))
			return estrdup("a decision's identity must hold the six identity keys as "
			    "strings");
	if (!cJSON_IsArray(metrics))
		return estrdup("a decision's metrics must be an array");
	cJSON_ArrayForEach(v, metrics) {
		int m = cJSON_IsString(v) ? policy_metric_index(v->valuestring) : -1;

		if (m < 0)
			return estrdup("a decision's metrics must name metrics");
		d->metric[m] = any = true;
	}
	if (named != NULL && !cJSON_IsArray(named))
		return estrdup("a decision's named_metrics must be an array");
	cJSON_ArrayForEach(v, named) {
		if (!cJSON_IsString(v) || !nm_name_valid(v->valuestring, &why))
			return estrdup("a decision's named_metrics must name metrics");
		decision_add_named(d, v->valuestring);
		any = true;
	}
	if (!any)
		return estrdup("a decision names at least one metric");
	decision_set_record_instant(d);
	d->in_force = true;
	return NULL;
}

void
decision_free(struct decision *d)
{
	free(d->id);
	free(d->by);
	free(d->when);
	free(d->reason);
	free(d->link);
	for (int k = 0; k < IDENTITY_KEYS; k++)
		free(d->identity[k]);
	for (size_t j = 0; j < d->nnamed; j++)
		free(d->named[j]);
	free(d->named);
	free(d->record);
	free(d->record_timestamp);
	free(d->commit);
	free(d->reverts);
	free(d->path);
	memset(d, 0, sizeof *d);
}

/* Newest first: (when, id) descending. */
static int
newest_first(const void *a, const void *b)
{
	const struct decision *x = a, *y = b;

	if (x->instant != y->instant)
		return x->instant > y->instant ? -1 : 1;
	return -strcmp(x->id, y->id);
}

/* One decision file: kept, or warned and the whole load failed. */
static int
load_decision(void *ctx, const char *file, const char *path, const cJSON *o)
{
	struct decisions *ds = ctx;
	struct decision x;
	char *why;

	if ((why = decision_parse(o, &x)) != NULL) {
		warnx("%s: %s", file, why);
		free(why);
		decision_free(&x);
		return -1;
	}
	x.path = estrdup(path);
	ds->d = erealloc(ds->d, (ds->n + 1) * sizeof *ds->d);
	ds->d[ds->n++] = x;
	return 0;
}

int
decisions_load(const char *dir, struct decisions *ds)
{
	memset(ds, 0, sizeof *ds);
	if (hidden_dir_load(dir, DECISIONS_DIR, DECISION_SUFFIX, "decisions", true,
	    load_decision, ds) != 0) {
		decisions_free(ds);
		return -1;
	}
	if (ds->n > 1)
		qsort(ds->d, ds->n, sizeof *ds->d, newest_first);
	/* Newest first: a revert undoes what it names, unless itself undone. */
	for (size_t i = 0; i < ds->n; i++) {
		struct decision *x = &ds->d[i];

		if (x->kind != DECISION_REVERT || !x->in_force)
			continue;
		for (size_t j = i + 1; j < ds->n; j++)
			if (strcmp(ds->d[j].id, x->reverts) == 0)
				ds->d[j].in_force = false;
	}
	return 0;
}

void
decisions_free(struct decisions *ds)
{
	for (size_t i = 0; i < ds->n; i++)
		decision_free(&ds->d[i]);
	free(ds->d);
	memset(ds, 0, sizeof *ds);
}

int
decision_order(int64_t a, const char *ap, int64_t b, const char *bp)
{
	if (a != b)
		return a < b ? -1 : 1;
	return strcmp(ap, bp);
}

const struct decision *
decisions_find(const struct decisions *ds, const char *id)
{
	for (size_t i = 0; i < ds->n; i++)
		if (strcmp(ds->d[i].id, id) == 0)
			return &ds->d[i];
	return NULL;
}

void
decision_add_named(struct decision *d, const char *name)
{
	size_t at = 0;
	int c = 1;

	while (at < d->nnamed && (c = strcmp(d->named[at], name)) < 0)
		at++;
	if (at < d->nnamed && c == 0)
		return;
	d->named = erealloc(d->named, (d->nnamed + 1) * sizeof *d->named);
	memmove(d->named + at + 1, d->named + at, (d->nnamed - at) * sizeof *d->named);
	d->named[at] = estrdup(name);
	d->nnamed++;
}

bool
decision_on_named(const struct decision *d, const char *name)
{
	for (size_t j = 0; j < d->nnamed; j++)
		if (strcmp(d->named[j], name) == 0)
			return true;
	return false;
}

/* Whether d is on metric m of the six (name NULL) or on the named metric name. */
static bool
on_metric(const struct decision *d, int m, const char *name)
{
	return name != NULL ? decision_on_named(d, name) : d->metric[m];
}

bool
decision_on(const struct decision *d, char *const *v)
{
	for (int k = 0; k < IDENTITY_KEYS; k++)
		if (strcmp(d->identity[k], v[k]) != 0)
			return false;
	return true;
}

static const struct decision *
latest(const struct decisions *ds, char *const *v, int m, const char *name,
    const char *record)
{
	for (size_t i = 0; i < ds->n; i++) {
		const struct decision *d = &ds->d[i];

		if (d->in_force && d->kind != DECISION_REVERT && on_metric(d, m, name) &&
		    strcmp(d->record, record) == 0 && decision_on(d, v))
			return d;
	}
	return NULL;
}

const struct decision *
decisions_latest(const struct decisions *ds, char *const *v, int m, const char *record)
{
	return latest(ds, v, m, NULL, record);
}

const struct decision *
decisions_latest_named(const struct decisions *ds, char *const *v, const char *name,
    const char *record)
{
	return latest(ds, v, 0, name, record);
}

static const struct decision *
accept_of(const struct decisions *ds, char *const *v, int m, const char *name)
{
	const struct decision *best = NULL;

	for (size_t i = 0; i < ds->n; i++) {
		const struct decision *d = &ds->d[i];

		if (!d->in_force || d->kind != DECISION_ACCEPT || !on_metric(d, m, name) ||
		    !decision_on(d, v))
			continue;
		/* The newest decision on a record wins: an older accept there is superseded. */
		if (latest(ds, v, m, name, d->record) != d)
			continue;
		if (best == NULL || decision_order(d->record_instant, d->record,
		    best->record_instant, best->record) > 0)
			best = d;
	}
	return best;
}

const struct decision *
decisions_accept(const struct decisions *ds, char *const *v, int m)
{
	return accept_of(ds, v, m, NULL);
}

const struct decision *
decisions_accept_named(const struct decisions *ds, char *const *v, const char *name)
{
	return accept_of(ds, v, 0, name);
}

bool
decision_admits(const struct decision *a, int64_t instant, const char *path,
    const cJSON *rec, bool eligible)
{
	const cJSON *st = json_get(rec, "comparison_status"), *rs = json_get(rec, "run_source");

	if (decision_order(instant, path, a->record_instant, a->record) < 0)
		return false;
	if (strcmp(path, a->record) == 0 || eligible)
		return true;
	return cJSON_IsString(st) && strcmp(st->valuestring, "REGRESSION") == 0 &&
	    cJSON_IsString(rs) && strcmp(rs->valuestring, "scheduled_main") == 0 &&
	    instant < a->instant;
}

static const struct decision *
accept_between(const struct decisions *ds, char *const *v, int m, const char *name,
    int64_t lo, const char *lo_path, int64_t hi, const char *hi_path)
{
	for (size_t i = 0; i < ds->n; i++) {
		const struct decision *d = &ds->d[i];

		if (d->in_force && d->kind == DECISION_ACCEPT && on_metric(d, m, name) &&
		    decision_on(d, v) && latest(ds, v, m, name, d->record) == d &&
		    decision_order(d->record_instant, d->record, lo, lo_path) > 0 &&
		    decision_order(d->record_instant, d->record, hi, hi_path) <= 0)
			return d;
	}
	return NULL;
}

const struct decision *
decisions_accept_between(const struct decisions *ds, char *const *v, int m, int64_t lo,
    const char *lo_path, int64_t hi, const char *hi_path)
{
	return accept_between(ds, v, m, NULL, lo, lo_path, hi, hi_path);
}

const struct decision *
decisions_accept_between_named(const struct decisions *ds, char *const *v, const char *name,
    int64_t lo, const char *lo_path, int64_t hi, const char *hi_path)
{
	return accept_between(ds, v, 0, name, lo, lo_path, hi, hi_path);
}
