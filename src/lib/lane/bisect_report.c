#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/isotime.h"
#include "core/json.h"
#include "lane/bisect_report.h"
#include "lane/policy.h"
#include "lane/store/hidden_dir.h"

static void
report_free(struct bisect_report *r)
{
	free(r->path);
	free(r->good);
	free(r->bad);
	free(r->metric);
	for (int k = 0; k < IDENTITY_KEYS; k++)
		free(r->identity[k]);
	free(r->model);
	free(r->gpu);
	for (size_t i = 0; i < r->nk; i++) {
		free(r->k[i].commit);
		free(r->k[i].subject);
	}
	free(r->k);
	memset(r, 0, sizeof *r);
}

/* A string member as it is, or NULL when it is not a non-empty string. */
static char *
str_dup(const cJSON *o, const char *key)
{
	const cJSON *v = json_get(o, key);

	return cJSON_IsString(v) && *v->valuestring != '\0' ? estrdup(v->valuestring) : NULL;
}

/* str() of a member, "None" when it is missing, as perf-changes names a cohort. */
static char *
pystr_dup(const cJSON *o, const char *key)
{
	const cJSON *v = json_get(o, key);

	return v != NULL ? json_pystr_dup(v) : estrdup("None");
}

/* The cohort of the change point the bisect started from, when it had one. */
static void
parse_cohort(const cJSON *change, struct bisect_report *r)
{
	if (!cJSON_IsObject(change))
		return;
	r->has_cohort = true;
	r->v2 = json_get(change, identity_keys[IDENTITY_WORKLOAD]) != NULL;
	for (int k = 0; r->v2 && k < IDENTITY_KEYS; k++)
		r->identity[k] = pystr_dup(change, identity_keys[k]);
	r->model = pystr_dup(change, "model_id");
	r->gpu = pystr_dup(change, "gpu_type");
}

/*
 * Reads a stored report into r: NULL when it is one, else why not (a
 * static string). *found is false for a report that found no culprit.
 */
static const char *
parse_report(const cJSON *o, struct bisect_report *r, bool *found)
{
	const cJSON *k, *ks = json_get(o, "culprits");
	int64_t t;

	*found = false;
	if (!cJSON_IsObject(o))
		return "not a bisect report: not a JSON object";
	if (!cJSON_IsString(json_get(o, "schema")) ||
	    strcmp(json_str(o, "schema"), BISECT_REPORT_SCHEMA) != 0)
		return "not a bisect report: its schema is not " BISECT_REPORT_SCHEMA;
	if (!cJSON_IsString(json_get(o, "status")))
		return "a bisect report needs a status";
	if ((r->good = str_dup(o, "good")) == NULL || (r->bad = str_dup(o, "bad")) == NULL ||
	    (r->metric = str_dup(o, "metric")) == NULL)
		return "a bisect report needs good, bad and metric";
	if (!cJSON_IsArray(ks))
		return "a bisect report needs culprits, an array";
	r->instant = isotime_parse(json_str(o, "created_at"), &t) ? t : ISOTIME_MIN;
	cJSON_ArrayForEach(k, ks)
		if (!cJSON_IsString(json_get(k, "commit")) || *json_str(k, "commit") == '\0')
			return "a culprit of a bisect report needs its commit";
	if (strcmp(json_str(o, "status"), "found") != 0 || cJSON_GetArraySize(ks) == 0)
		return NULL;
	r->k = ecalloc((size_t)cJSON_GetArraySize(ks), sizeof *r->k);
	cJSON_ArrayForEach(k, ks) {
		struct bisect_report_culprit *c = &r->k[r->nk++];
		const cJSON *sh = json_get(k, "share");

		c->commit = estrdup(json_str(k, "commit"));
		c->subject = estrdup(json_str(k, "subject"));
		c->share = cJSON_IsNumber(sh) && isfinite(sh->valuedouble) ? sh->valuedouble : NAN;
		c->dependency = cJSON_IsTrue(json_get(k, "dependency_change"));
	}
	parse_cohort(json_get(o, "change"), r);
	*found = true;
	return NULL;
}

static int
newest_first(const void *a, const void *b)
{
	const struct bisect_report *x = a, *y = b;

	if (x->instant != y->instant)
		return x->instant > y->instant ? -1 : 1;
	return strcmp(y->path, x->path);
}

/* One report file: kept when it holds a report, warned when it is not one. */
static int
load_report(void *ctx, const char *file, const char *path, const cJSON *o)
{
	struct bisect_reports *rs = ctx;
	struct bisect_report x;
	const char *why;
	bool found;

	memset(&x, 0, sizeof x);
	if ((why = parse_report(o, &x, &found)) != NULL)
		warnx("%s: %s", file, why);
	if (why == NULL && found) {
		x.path = estrdup(path);
		rs->r = erealloc(rs->r, (rs->n + 1) * sizeof *rs->r);
		rs->r[rs->n++] = x;
	} else
		report_free(&x);
	return why == NULL ? 0 : -1;
}

size_t
bisect_reports_load(const char *dir, struct bisect_reports *rs)
{
	size_t bad;

	memset(rs, 0, sizeof *rs);
	bad = hidden_dir_load(dir, BISECT_REPORTS_DIR, ".json", "bisect reports", false,
	    load_report, rs);
	if (rs->n > 1)
		qsort(rs->r, rs->n, sizeof *rs->r, newest_first);
	return bad;
}

void
bisect_reports_free(struct bisect_reports *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		report_free(&rs->r[i]);
	free(rs->r);
	memset(rs, 0, sizeof *rs);
}

/* Whether a and b name one commit: one a prefix of the other, 7 hex digits at least. */
static bool
same_commit(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b), n = na < nb ? na : nb;

	if (n < 7)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)a[i]) ||
		    tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
			return false;
	return true;
}

static bool
on_cohort(const struct bisect_report *r, char *const *ident, const char *model,
    const char *gpu)
{
	if (!r->has_cohort)
		return true;
	if (r->v2 != (ident != NULL))
		return false;
	if (r->v2) {
		for (int k = 0; k < IDENTITY_KEYS; k++)
			if (strcmp(r->identity[k], ident[k]) != 0)
				return false;
		return true;
	}
	return strcmp(r->model, model) == 0 && strcmp(r->gpu, gpu) == 0;
}

/*
 * Whether a report of metric rm bisected the change point's metric of
 * benchmark model: the same name, or, for a named metric (none of the
 * six), "<model>/<metric>" (perf-bisect --metric BENCHMARK/NAME).
 */
static bool
same_metric(const char *rm, const char *model, const char *metric)
{
	size_t n = model != NULL ? strlen(model) : 0;

	if (strcmp(rm, metric) == 0)
		return true;
	return model != NULL && policy_metric_index(metric) < 0 && strncmp(rm, model, n) == 0 &&
	    rm[n] == '/' && strcmp(rm + n + 1, metric) == 0;
}

const struct bisect_report *
bisect_reports_covering(const struct bisect_reports *rs, char *const *ident, const char *model,
    const char *gpu, const char *metric, const char *prev, const char *commit, size_t *first,
    bool *all)
{
	for (size_t i = 0; i < rs->n; i++) {
		const struct bisect_report *r = &rs->r[i];

		if (!same_metric(r->metric, model, metric) || !on_cohort(r, ident, model, gpu))
			continue;
		if (same_commit(r->good, prev) && same_commit(r->bad, commit)) {
			*first = 0;
			*all = true;
			return r;
		}
		for (size_t k = 0; k < r->nk; k++)
			if (same_commit(r->k[k].commit, commit)) {
				*first = k;
				*all = false;
				return r;
			}
	}
	return NULL;
}

cJSON *
bisect_report_culprit_json(const struct bisect_report *r, size_t i)
{
	const struct bisect_report_culprit *c = &r->k[i];
	cJSON *o = json_new_object();
	char s[8];

	snprintf(s, sizeof s, "%.7s", c->commit);
	json_set(o, "commit", json_new_string(c->commit));
	json_set(o, "short", json_new_string(s));
	json_set(o, "subject", json_new_string(c->subject));
	json_set(o, "share", json_new_finite(c->share));
	json_set(o, "dependency_change", json_new_bool(c->dependency));
	json_set(o, "report", json_new_string(r->path));
	return o;
}
