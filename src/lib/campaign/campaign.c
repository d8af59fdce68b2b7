#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/campaign.h"
#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "core/paired.h"
#include "core/pyrandom.h"
#include "core/text.h"

void
problems_add(struct problems *p, const char *code, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	p->v = erealloc(p->v, (size_t)(p->n + 1) * sizeof *p->v);
	p->v[p->n].code = code;
	p->v[p->n].detail = estrdup(msg);
	p->n++;
}

void
problems_free(struct problems *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->v[i].detail);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

static bool
is_str(const cJSON *v)
{
	return cJSON_IsString(v);
}

static bool
is_nonempty_str(const cJSON *v)
{
	return cJSON_IsString(v) && v->valuestring[0] != '\0';
}

static bool
is_int(const cJSON *v)
{
	return json_is_int(v);
}

static bool
absent(const cJSON *v)
{
	return v == NULL || cJSON_IsNull(v);
}

/* An optional number >= 0 (absent: def). */
static bool
opt_nonneg(const cJSON *v, double def, double *out)
{
	if (v == NULL) {
		*out = def;
		return true;
	}
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0))
		return false;
	*out = v->valuedouble;
	return true;
}

static void
load_variants(struct plan *pl, struct problems *p)
{
	const cJSON *vs = json_get(pl->doc, "variants"), *v, *lib, *e;
	int i = 0;

	if (!cJSON_IsArray(vs) || cJSON_GetArraySize(vs) < 2) {
		problems_add(p, "invalid_plan", "variants must be an array of at least two objects");
		return;
	}
	pl->variants = ecalloc((size_t)cJSON_GetArraySize(vs), sizeof *pl->variants);
	cJSON_ArrayForEach(v, vs) {
		struct plan_variant *pv = &pl->variants[i];
		const cJSON *name = json_get(v, "name"), *dig = json_get(v, "runtime_digest");
		const cJSON *flags = json_get(v, "build_flags"), *st = json_get(v, "storage_bytes");

		if (!cJSON_IsObject(v)) {
			problems_add(p, "invalid_plan", "variants[%d] is not an object", i);
			i++;
			continue;
		}
		if (!is_nonempty_str(name))
			problems_add(p, "invalid_plan", "variants[%d].name must be a non-empty string", i);
		if (!is_nonempty_str(dig))
			problems_add(p, "invalid_plan",
			    "variants[%d].runtime_digest must be a non-empty string", i);
		if (!is_str(flags))
			problems_add(p, "invalid_plan", "variants[%d].build_flags must be a string", i);
		lib = json_get(v, "libraries");
		if (lib != NULL) {
			if (!cJSON_IsObject(lib))
				problems_add(p, "invalid_plan",
				    "variants[%d].libraries must be an object of strings", i);
			else
				cJSON_ArrayForEach(e, lib)
					if (!is_str(e)) {
						problems_add(p, "invalid_plan",
						    "variants[%d].libraries.%s must be a string", i, e->string);
						break;
					}
		}
		if (!opt_nonneg(json_get(v, "build_cost_core_seconds"), 0, &pv->build_cost))
			problems_add(p, "invalid_plan",
			    "variants[%d].build_cost_core_seconds must be a number >= 0", i);
		if (!opt_nonneg(json_get(v, "deployment_cost_core_seconds"), 0, &pv->deploy_cost))
			problems_add(p, "invalid_plan",
			    "variants[%d].deployment_cost_core_seconds must be a number >= 0", i);
		pv->int_costs = (json_get(v, "build_cost_core_seconds") == NULL ||
		    is_int(json_get(v, "build_cost_core_seconds"))) &&
		    (json_get(v, "deployment_cost_core_seconds") == NULL ||
		    is_int(json_get(v, "deployment_cost_core_seconds")));
		if (st != NULL) {
			if (!is_int(st) || st->valuedouble < 0)
				problems_add(p, "invalid_plan",
				    "variants[%d].storage_bytes must be an integer >= 0", i);
			else {
				pv->has_storage = true;
				pv->storage = strtoll(st->valuestring, NULL, 10);
			}
		}
		pv->name = is_str(name) ? name->valuestring : NULL;
		pv->digest = is_str(dig) ? dig->valuestring : NULL;
		pv->flags = is_str(flags) ? flags->valuestring : "";
		pv->libraries = cJSON_IsObject(lib) ? lib : NULL;
		for (int j = 0; j < i; j++) {
			if (pv->name != NULL && pl->variants[j].name != NULL &&
			    strcmp(pv->name, pl->variants[j].name) == 0)
				problems_add(p, "invalid_plan", "variant name '%s' is used twice",
				    pv->name);
			if (pv->digest != NULL && *pv->digest != '\0' &&
			    pl->variants[j].digest != NULL &&
			    strcmp(pv->digest, pl->variants[j].digest) == 0)
				problems_add(p, "duplicate_runtime_digest",
				    "variants '%s' and '%s' share the runtime_digest %s",
				    pl->variants[j].name != NULL ? pl->variants[j].name : "?",
				    pv->name != NULL ? pv->name : "?", pv->digest);
		}
		i++;
	}
	pl->nvariants = i;
}

static void
load_workloads(struct plan *pl, struct problems *p)
{
	const cJSON *ws = json_get(pl->doc, "workloads"), *w, *cs, *c;
	int i = 0;

	if (!cJSON_IsArray(ws) || cJSON_GetArraySize(ws) < 1) {
		problems_add(p, "invalid_plan", "workloads must be an array of at least one object");
		return;
	}
	pl->workloads = ecalloc((size_t)cJSON_GetArraySize(ws), sizeof *pl->workloads);
	cJSON_ArrayForEach(w, ws) {
		struct plan_workload *pw = &pl->workloads[i];
		const cJSON *name = json_get(w, "name"), *dig = json_get(w, "input_digest");
		int k = 0;

		if (!cJSON_IsObject(w)) {
			problems_add(p, "invalid_plan", "workloads[%d] is not an object", i);
			i++;
			continue;
		}
		if (!is_nonempty_str(name))
			problems_add(p, "invalid_plan", "workloads[%d].name must be a non-empty string", i);
		if (!is_nonempty_str(dig))
			problems_add(p, "invalid_plan",
			    "workloads[%d].input_digest must be a non-empty string", i);
		pw->name = is_str(name) ? name->valuestring : NULL;
		pw->digest = is_str(dig) ? dig->valuestring : NULL;
		for (int j = 0; j < i; j++)
			if (pw->name != NULL && pl->workloads[j].name != NULL &&
			    strcmp(pw->name, pl->workloads[j].name) == 0)
				problems_add(p, "invalid_plan", "workload name '%s' is used twice",
				    pw->name);
		cs = json_get(w, "checks");
		if (cs == NULL || (cJSON_IsArray(cs) && cJSON_GetArraySize(cs) == 0)) {
			problems_add(p, "workload_without_checks", "workload '%s' declares no check",
			    pw->name != NULL ? pw->name : "?");
			i++;
			continue;
		}
		if (!cJSON_IsArray(cs)) {
			problems_add(p, "invalid_plan", "workloads[%d].checks must be an array", i);
			i++;
			continue;
		}
		pw->checks = ecalloc((size_t)cJSON_GetArraySize(cs), sizeof *pw->checks);
		cJSON_ArrayForEach(c, cs) {
			const cJSON *q = json_get(c, "quantity");
			struct plan_check *pc = &pw->checks[k];

			if (!cJSON_IsObject(c) || !is_nonempty_str(q)) {
				problems_add(p, "invalid_plan",
				    "workloads[%d].checks[%d] must be an object with a quantity", i, k);
				k++;
				continue;
			}
			pc->quantity = q->valuestring;
			for (int j = 0; j < k; j++)
				if (pw->checks[j].quantity != NULL &&
				    strcmp(pw->checks[j].quantity, pc->quantity) == 0)
					problems_add(p, "invalid_plan",
					    "workload '%s' checks '%s' twice",
					    pw->name != NULL ? pw->name : "?", pc->quantity);
			if (!opt_nonneg(json_get(c, "abs_tolerance"), 0, &pc->abs_tol) ||
			    !opt_nonneg(json_get(c, "rel_tolerance"), 0, &pc->rel_tol))
				problems_add(p, "invalid_plan",
				    "workloads[%d].checks[%d]: tolerances must be numbers >= 0", i, k);
			k++;
		}
		pw->nchecks = k;
		i++;
	}
	pl->nworkloads = i;
}

/* An integer member >= min; false after adding a problem (code for the range). */
static bool
int_member(struct plan *pl, const cJSON *obj, const char *key, const char *where,
    long long min, const char *range_code, long long *out, struct problems *p)
{
	const cJSON *v = json_get(obj, key);
	long long x;

	if (!is_int(v)) {
		problems_add(p, "invalid_plan", "%s%s must be an integer", where, key);
		return false;
	}
	x = strtoll(v->valuestring, NULL, 10);
	if (x < min) {
		problems_add(p, range_code, "%s%s must be at least %lld, not %lld", where, key,
		    min, x);
		return false;
	}
	(void)pl;
	*out = x;
	return true;
}

int
plan_load(const char *text, size_t len, struct plan *pl, struct problems *p)
{
	const cJSON *v, *lay;
	json_error e;
	int i = 0;

	memset(pl, 0, sizeof *pl);
	pl->base = -1;
	if ((pl->doc = json_parse_strict(text, len, &e)) == NULL) {
		problems_add(p, "invalid_json", "line %ld: %s", e.line, e.msg);
		return -1;
	}
	if (!cJSON_IsObject(pl->doc)) {
		problems_add(p, "invalid_plan", "the plan is not a JSON object");
		return -1;
	}
	canon_sha256(pl->doc, pl->sha);
	v = json_get(pl->doc, "schema_name");
	if (!is_str(v) || strcmp(v->valuestring, "vq.benchmark-plan/1") != 0)
		problems_add(p, "invalid_plan", "schema_name must be \"vq.benchmark-plan/1\"");
	v = json_get(pl->doc, "plan_id");
	if (!is_nonempty_str(v))
		problems_add(p, "invalid_plan", "plan_id must be a non-empty string");
	pl->id = is_str(v) ? v->valuestring : "";
	v = json_get(pl->doc, "baseline");
	if (!is_nonempty_str(v))
		problems_add(p, "invalid_plan", "baseline must be a non-empty string");
	pl->baseline = is_str(v) ? v->valuestring : NULL;
	load_variants(pl, p);
	load_workloads(pl, p);
	v = json_get(pl->doc, "node_classes");
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
		problems_add(p, "invalid_plan", "node_classes must be a non-empty array of strings");
	else {
		const cJSON *c;

		pl->node_classes = ecalloc((size_t)cJSON_GetArraySize(v), sizeof *pl->node_classes);
		cJSON_ArrayForEach(c, v) {
			if (!is_nonempty_str(c)) {
				problems_add(p, "invalid_plan",
				    "node_classes[%d] must be a non-empty string", i);
				pl->node_classes[i++] = "";
				continue;
			}
			for (int j = 0; j < i; j++)
				if (strcmp(pl->node_classes[j], c->valuestring) == 0)
					problems_add(p, "invalid_plan",
					    "node class '%s' is listed twice", c->valuestring);
			pl->node_classes[i++] = c->valuestring;
		}
		pl->nnode_classes = i;
	}
	lay = json_get(pl->doc, "layout");
	if (!cJSON_IsObject(lay))
		problems_add(p, "invalid_plan", "layout must be an object");
	else {
		int_member(pl, lay, "mpi_ranks", "layout.", 1, "invalid_plan", &pl->mpi_ranks, p);
		int_member(pl, lay, "threads_per_rank", "layout.", 1, "invalid_plan",
		    &pl->threads, p);
	}
	int_member(pl, pl->doc, "warmup", "", 0, "invalid_plan", &pl->warmup, p);
	int_member(pl, pl->doc, "repeats", "", 5, "repeats_below_minimum", &pl->repeats, p);
	{
		long long s;

		if (int_member(pl, pl->doc, "seed", "", 0, "invalid_plan", &s, p))
			pl->seed = (uint64_t)s;
	}
	v = json_get(pl->doc, "confidence");
	if (!cJSON_IsNumber(v) || !(v->valuedouble > 0 && v->valuedouble < 1))
		problems_add(p, "invalid_plan", "confidence must be a number between 0 and 1");
	else
		pl->confidence = v->valuedouble;
	v = json_get(pl->doc, "margin");
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0))
		problems_add(p, "invalid_plan", "margin must be a number >= 0");
	else
		pl->margin = v->valuedouble;
	if (pl->baseline != NULL && *pl->baseline != '\0' && pl->nvariants > 0) {
		pl->base = plan_variant_index(pl, pl->baseline);
		if (pl->base < 0)
			problems_add(p, "unknown_baseline", "baseline '%s' is not a variant",
			    pl->baseline);
	}
	return p->n > 0 ? -1 : 0;
}

void
plan_free(struct plan *pl)
{
	for (int i = 0; i < pl->nworkloads; i++)
		free(pl->workloads[i].checks);
	free(pl->workloads);
	free(pl->variants);
	free(pl->node_classes);
	cJSON_Delete(pl->doc);
	memset(pl, 0, sizeof *pl);
}

int
plan_variant_index(const struct plan *pl, const char *name)
{
	for (int i = 0; i < pl->nvariants; i++)
		if (pl->variants[i].name != NULL && strcmp(pl->variants[i].name, name) == 0)
			return i;
	return -1;
}

int
plan_workload_index(const struct plan *pl, const char *name)
{
	for (int i = 0; i < pl->nworkloads; i++)
		if (pl->workloads[i].name != NULL && strcmp(pl->workloads[i].name, name) == 0)
			return i;
	return -1;
}

int
plan_node_class_index(const struct plan *pl, const char *name)
{
	for (int i = 0; i < pl->nnode_classes; i++)
		if (strcmp(pl->node_classes[i], name) == 0)
			return i;
	return -1;
}

char *
campaign_report_dir(const char *dir, const struct plan *pl, const struct order_run *r)
{
	return easprintf("%s%scampaign/%s/%lld/%s/%s", dir, *dir != '\0' ? "/" : "",
	    pl->node_classes[r->node_class], r->block, pl->workloads[r->workload].name,
	    pl->variants[r->variant].name);
}

struct order_run *
plan_order(const struct plan *pl, size_t *n)
{
	size_t per_block = (size_t)pl->nworkloads * (size_t)pl->nvariants;
	size_t blocks = (size_t)(pl->warmup + pl->repeats), k = 0;
	struct order_run *o = ecalloc((size_t)pl->nnode_classes * blocks * per_block + 1, sizeof *o);
	struct order_run *pairs = ecalloc(per_block + 1, sizeof *pairs);
	struct pyrandom m;

	/* One generator for the whole plan. */
	pyrandom_seed(&m, pl->seed);
	for (int c = 0; c < pl->nnode_classes; c++)
		for (long long b = 1 - pl->warmup; b <= pl->repeats; b++) {
			size_t j = 0;

			for (int w = 0; w < pl->nworkloads; w++)
				for (int v = 0; v < pl->nvariants; v++)
					pairs[j++] = (struct order_run){ c, w, v, b };
			pyrandom_shuffle(&m, pairs, per_block, sizeof *pairs);
			memcpy(o + k, pairs, per_block * sizeof *pairs);
			k += per_block;
		}
	free(pairs);
	*n = k;
	return o;
}

cJSON *
plan_order_json(const struct plan *pl)
{
	cJSON *out = json_new_object(), *arr = json_new_array();
	size_t n;
	struct order_run *o = plan_order(pl, &n);

	json_set(out, "plan_id", json_new_string(pl->id));
	json_set(out, "plan_sha256", json_new_string(pl->sha));
	for (size_t i = 0; i < n; i++) {
		cJSON *e = json_new_object();

		json_set(e, "node_class", json_new_string(pl->node_classes[o[i].node_class]));
		json_set(e, "block", json_new_int(o[i].block));
		json_set(e, "warmup", json_new_bool(o[i].block <= 0));
		json_set(e, "workload", json_new_string(pl->workloads[o[i].workload].name));
		json_set(e, "variant", json_new_string(pl->variants[o[i].variant].name));
		json_append(arr, e);
	}
	json_set(out, "order", arr);
	free(o);
	return out;
}

/* ---- results ---- */

static const char *const statuses[] = { "completed", "failed", "unconverged",
    "time_exceeded", "oom_killed", "killed" };

/* The shape of one run; NULL or what is wrong. */
static const char *
run_shape(const cJSON *r)
{
	const cJSON *v, *h, *e;
	bool known = false;

	if (!cJSON_IsObject(r))
		return "is not an object";
	if (!is_str(json_get(r, "workload")) || !is_str(json_get(r, "variant")) ||
	    !is_str(json_get(r, "node_class")))
		return "needs workload, variant and node_class strings";
	if (!is_int(json_get(r, "block")))
		return "needs an integer block";
	v = json_get(r, "status");
	for (size_t i = 0; is_str(v) && i < sizeof statuses / sizeof *statuses; i++)
		known |= strcmp(v->valuestring, statuses[i]) == 0;
	if (!known)
		return "has no known status";
	if (!is_str(json_get(r, "runtime_digest")))
		return "needs a runtime_digest string";
	h = json_get(r, "hardware");
	if (!absent(h)) {
		if (!cJSON_IsObject(h))
			return "has a hardware that is not an object";
		v = json_get(h, "cpu_model");
		if (!absent(v) && !is_nonempty_str(v))
			return "has a hardware.cpu_model that is not a non-empty string";
		v = json_get(h, "mpi_ranks");
		if (!absent(v) && (!is_int(v) || v->valuedouble < 1))
			return "has a hardware.mpi_ranks that is not an integer >= 1";
		v = json_get(h, "threads_per_rank");
		if (!absent(v) && (!is_int(v) || v->valuedouble < 1))
			return "has a hardware.threads_per_rank that is not an integer >= 1";
	}
	v = json_get(r, "steady_seconds");
	if (!absent(v) && (!cJSON_IsNumber(v) || !(v->valuedouble > 0)))
		return "has a steady_seconds that is not a number > 0";
	static const char *const nonneg[] = { "startup_seconds", "cpu_seconds", "peak_rss_mb" };
	for (size_t i = 0; i < 3; i++) {
		v = json_get(r, nonneg[i]);
		if (!absent(v) && (!cJSON_IsNumber(v) || !(v->valuedouble >= 0)))
			return "has a startup_seconds, cpu_seconds or peak_rss_mb that is not a number >= 0";
	}
	v = json_get(r, "scf_iterations");
	if (!absent(v) && (!is_int(v) || v->valuedouble < 0))
		return "has a scf_iterations that is not an integer >= 0";
	v = json_get(r, "values");
	if (!absent(v)) {
		if (!cJSON_IsObject(v))
			return "has values that are not an object";
		cJSON_ArrayForEach(e, v)
			if (!absent(e) && !cJSON_IsNumber(e))
				return "has a value that is not a number";
	}
	return NULL;
}

static int
cmp_run(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	static const char *const keys[] = { "node_class", "workload", "variant" };
	int c;
	long long bx, by;

	for (int i = 0; i < 3; i++)
		if ((c = strcmp(json_get(x, keys[i])->valuestring,
		    json_get(y, keys[i])->valuestring)) != 0)
			return c;
	bx = strtoll(json_get(x, "block")->valuestring, NULL, 10);
	by = strtoll(json_get(y, "block")->valuestring, NULL, 10);
	return (bx > by) - (bx < by);
}

/* The runs sorted by their key, as an array of pointers. */
static const cJSON **
sorted_runs(const cJSON *runs, int *n)
{
	const cJSON **v, *r;
	int k = 0;

	*n = cJSON_GetArraySize(runs);
	v = ecalloc((size_t)*n + 1, sizeof *v);
	cJSON_ArrayForEach(r, runs)
		v[k++] = r;
	if (k > 1)
		qsort(v, (size_t)k, sizeof *v, cmp_run);
	return v;
}

int
results_load(const char *text, size_t len, const struct plan *pl, struct results *r,
    struct problems *p)
{
	const cJSON *v, *runs, *run, **sorted;
	cJSON *copy, *arr;
	json_error e;
	int i = 0, n;

	memset(r, 0, sizeof *r);
	if ((r->doc = json_parse_strict(text, len, &e)) == NULL) {
		problems_add(p, "invalid_json", "line %ld: %s", e.line, e.msg);
		return -1;
	}
	if (!cJSON_IsObject(r->doc)) {
		problems_add(p, "invalid_results", "the results are not a JSON object");
		return -1;
	}
	v = json_get(r->doc, "schema_name");
	if (!is_str(v) || strcmp(v->valuestring, "vq.benchmark-results/1") != 0) {
		problems_add(p, "invalid_results", "schema_name must be \"vq.benchmark-results/1\"");
		return -1;
	}
	v = json_get(r->doc, "plan_sha256");
	runs = json_get(r->doc, "runs");
	if (!is_str(v) || !cJSON_IsArray(runs)) {
		problems_add(p, "invalid_results", "needs a plan_sha256 string and a runs array");
		return -1;
	}
	if (strcmp(v->valuestring, pl->sha) != 0) {
		problems_add(p, "plan_mismatch", "the results were recorded for plan %s, not %s",
		    v->valuestring, pl->sha);
		return -1;
	}
	cJSON_ArrayForEach(run, runs) {
		const char *bad = run_shape(run);
		long long b;

		if (bad != NULL) {
			problems_add(p, "invalid_results", "runs[%d] %s", i, bad);
			return -1;
		}
		b = strtoll(json_get(run, "block")->valuestring, NULL, 10);
		if (plan_node_class_index(pl, json_get(run, "node_class")->valuestring) < 0 ||
		    plan_workload_index(pl, json_get(run, "workload")->valuestring) < 0 ||
		    plan_variant_index(pl, json_get(run, "variant")->valuestring) < 0 ||
		    b < 1 - pl->warmup || b > pl->repeats) {
			problems_add(p, "unplanned_run", "runs[%d] (%s, %s, %s, block %lld) is not "
			    "in the plan", i, json_get(run, "node_class")->valuestring,
			    json_get(run, "workload")->valuestring,
			    json_get(run, "variant")->valuestring, b);
			return -1;
		}
		i++;
	}
	sorted = sorted_runs(runs, &n);
	for (i = 1; i < n; i++)
		if (cmp_run(&sorted[i - 1], &sorted[i]) == 0) {
			problems_add(p, "duplicate_run", "two runs of (%s, %s, %s, block %s)",
			    json_get(sorted[i], "node_class")->valuestring,
			    json_get(sorted[i], "workload")->valuestring,
			    json_get(sorted[i], "variant")->valuestring,
			    json_get(sorted[i], "block")->valuestring);
			free(sorted);
			return -1;
		}
	/* The digest does not depend on the order the runs were recorded in. */
	copy = cJSON_Duplicate(r->doc, true);
	arr = json_new_array();
	for (i = 0; i < n; i++)
		json_append(arr, cJSON_Duplicate(sorted[i], true));
	json_set(copy, "runs", arr);
	canon_sha256(copy, r->sha);
	cJSON_Delete(copy);
	free(sorted);
	return 0;
}

void
results_free(struct results *r)
{
	cJSON_Delete(r->doc);
	memset(r, 0, sizeof *r);
}

/* ---- analysis ---- */

struct index {
	const struct plan *pl;
	const cJSON **run;	/* [nc][wl][var][block - (1 - warmup)] */
	long long nblocks;
};

static const cJSON **
slot(struct index *ix, int c, int w, int v, long long b)
{
	const struct plan *pl = ix->pl;
	size_t k = (((size_t)c * (size_t)pl->nworkloads + (size_t)w) * (size_t)pl->nvariants +
	    (size_t)v) * (size_t)ix->nblocks + (size_t)(b - (1 - pl->warmup));

	return &ix->run[k];
}

static cJSON *
copy_or_null(const cJSON *v)
{
	return absent(v) ? json_new_null() : cJSON_Duplicate(v, true);
}

static cJSON *
figures(const cJSON *run)
{
	static const char *const keys[] = { "steady_seconds", "startup_seconds", "cpu_seconds",
	    "peak_rss_mb", "scf_iterations" };
	cJSON *o = json_new_object();

	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		json_set(o, keys[i], copy_or_null(json_get(run, keys[i])));
	return o;
}

/* The run-level exclusion reasons of one side of a pair. */
static void
run_reasons(const struct plan *pl, const cJSON *run, int variant, const char *side, cJSON *reasons)
{
	const char *status = json_get(run, "status")->valuestring;
	const cJSON *h = json_get(run, "hardware"), *mr, *tr;
	char r[96];

	if (strcmp(status, "completed") != 0) {
		snprintf(r, sizeof r, "%s_status_%s", side, status);
		json_append(reasons, json_new_string(r));
		return;
	}
	if (strcmp(json_get(run, "runtime_digest")->valuestring, pl->variants[variant].digest) != 0) {
		snprintf(r, sizeof r, "%s_runtime_digest_mismatch", side);
		json_append(reasons, json_new_string(r));
	}
	mr = cJSON_IsObject(h) ? json_get(h, "mpi_ranks") : NULL;
	tr = cJSON_IsObject(h) ? json_get(h, "threads_per_rank") : NULL;
	if ((!absent(mr) && mr->valuedouble != (double)pl->mpi_ranks) ||
	    (!absent(tr) && tr->valuedouble != (double)pl->threads)) {
		snprintf(r, sizeof r, "%s_layout_mismatch", side);
		json_append(reasons, json_new_string(r));
	}
	if (absent(json_get(run, "steady_seconds"))) {
		snprintf(r, sizeof r, "%s_steady_seconds_missing", side);
		json_append(reasons, json_new_string(r));
	}
}

static const cJSON *
cpu_model(const cJSON *run)
{
	const cJSON *h = json_get(run, "hardware"), *m;

	m = cJSON_IsObject(h) ? json_get(h, "cpu_model") : NULL;
	return absent(m) ? NULL : m;
}

static const cJSON *
value_of(const cJSON *run, const char *q)
{
	const cJSON *vals = json_get(run, "values"), *v;

	v = cJSON_IsObject(vals) ? json_get(vals, q) : NULL;
	return absent(v) ? NULL : v;
}

static void
pair_reasons(const struct plan_workload *w, const cJSON *b, const cJSON *v, cJSON *reasons)
{
	const cJSON *mb = cpu_model(b), *mv = cpu_model(v);
	char r[300];

	if (mb != NULL && mv != NULL && strcmp(mb->valuestring, mv->valuestring) != 0)
		json_append(reasons, json_new_string("cpu_model_mismatch"));
	for (int k = 0; k < w->nchecks; k++) {
		const struct plan_check *c = &w->checks[k];
		const cJSON *xb = value_of(b, c->quantity), *xv = value_of(v, c->quantity);

		if (xb == NULL || xv == NULL) {
			snprintf(r, sizeof r, "check_value_missing:%s", c->quantity);
			json_append(reasons, json_new_string(r));
		} else if (fabs(xv->valuedouble - xb->valuedouble) >
		    c->abs_tol + c->rel_tol * fabs(xb->valuedouble)) {
			snprintf(r, sizeof r, "check_failed:%s", c->quantity);
			json_append(reasons, json_new_string(r));
		}
	}
}

/* A cell's retained pairs and what is computed from them (no JSON). */
struct cell_stats {
	int n;				/* retained pairs */
	long long nexcluded, nmissing;
	double *ratios, *savings;	/* per retained pair */
	struct paired ps;		/* with n > 0 */
	double t, low, high;		/* the interval, with n >= 2 */
	const char *verdict, *why;
	/* The break-even, with a "faster" verdict. */
	double cost, mean_saving, sd_saving, saving_low;
};

/* A block with a run missing on either side. */
static cJSON *
missing_json(long long b, const cJSON *rb, const cJSON *rv)
{
	cJSON *m = json_new_object(), *sides = json_new_array();

	if (rb == NULL)
		json_append(sides, json_new_string("baseline"));
	if (rv == NULL)
		json_append(sides, json_new_string("variant"));
	json_set(m, "block", json_new_int(b));
	json_set(m, "runs", sides);
	return m;
}

/* A retained pair: its ratio and saving, and both runs' figures. */
static cJSON *
pair_json(long long b, double ratio, double saving, const cJSON *rb, const cJSON *rv)
{
	cJSON *pr = json_new_object();

	json_set(pr, "block", json_new_int(b));
	json_set(pr, "ratio", json_new_float(ratio));
	json_set(pr, "saving_core_seconds", json_new_float(saving));
	json_set(pr, "baseline", figures(rb));
	json_set(pr, "variant", figures(rv));
	return pr;
}

/*
 * Sorts a cell's blocks into retained pairs (their ratios and savings in
 * st, their rows in pairs), excluded pairs (with their reasons) and
 * missing ones.
 */
static void
cell_pairs(struct index *ix, int c, int w, int v, struct cell_stats *st, cJSON *pairs,
    cJSON *excluded, cJSON *missing)
{
	const struct plan *pl = ix->pl;
	long long cores = pl->mpi_ranks * pl->threads;

	for (long long b = 1; b <= pl->repeats; b++) {
		const cJSON *rb = *slot(ix, c, w, pl->base, b), *rv = *slot(ix, c, w, v, b);
		cJSON *reasons;
		double tb, tv;

		if (rb == NULL || rv == NULL) {
			json_append(missing, missing_json(b, rb, rv));
			st->nmissing++;
			continue;
		}
		reasons = json_new_array();
		run_reasons(pl, rb, pl->base, "baseline", reasons);
		run_reasons(pl, rv, v, "variant", reasons);
		if (cJSON_GetArraySize(reasons) == 0)
			pair_reasons(&pl->workloads[w], rb, rv, reasons);
		if (cJSON_GetArraySize(reasons) > 0) {
			cJSON *x = json_new_object();

			json_set(x, "block", json_new_int(b));
			json_set(x, "reasons", reasons);
			json_append(excluded, x);
			st->nexcluded++;
			continue;
		}
		cJSON_Delete(reasons);
		tb = json_get(rb, "steady_seconds")->valuedouble;
		tv = json_get(rv, "steady_seconds")->valuedouble;
		st->ratios[st->n] = tb / tv;
		st->savings[st->n] = (tb - tv) * (double)cores;
		json_append(pairs, pair_json(b, st->ratios[st->n], st->savings[st->n], rb, rv));
		st->n++;
	}
}

/* The statistics of the retained pairs, the verdict, and the break-even. */
static void
cell_compute(const struct plan *pl, int v, bool comparable, struct cell_stats *st)
{
	int n = st->n;
	double ms = 0, ss = 0;

	if (n > 0)
		paired_summarize(st->ratios, n, pl->confidence, &st->ps);
	if (n >= 2) {
		st->t = st->ps.t;
		st->low = st->ps.low;
		st->high = st->ps.high;
	}
	if (!comparable) {
		st->verdict = "incomparable";
		st->why = "node_class_has_several_cpu_models";
	} else if (n < pl->repeats) {
		st->verdict = "inconclusive";
		st->why = "fewer_retained_pairs_than_repeats";
	} else
		st->verdict = paired_verdict(st->low, st->high, pl->margin, &st->why);
	if (strcmp(st->verdict, "faster") != 0)
		return;
	st->cost = pl->variants[v].build_cost + pl->variants[v].deploy_cost;
	for (int i = 0; i < n; i++)
		ms += st->savings[i];
	ms /= n;
	for (int i = 0; i < n; i++)
		ss += (st->savings[i] - ms) * (st->savings[i] - ms);
	ss = sqrt(ss / (n - 1));
	st->mean_saving = ms;
	st->sd_saving = ss;
	st->saving_low = ms - st->t * ss / sqrt((double)n);
}

static cJSON *
ratio_json(const struct cell_stats *st)
{
	cJSON *ratio;

	if (st->n == 0)
		return json_new_null();
	ratio = json_new_object();
	json_set(ratio, "geometric_mean", json_new_float(st->ps.geometric_mean));
	json_set(ratio, "median", json_new_float(st->ps.median));
	json_set(ratio, "min", json_new_float(st->ps.min));
	json_set(ratio, "max", json_new_float(st->ps.max));
	json_set(ratio, "mean_log", json_new_float(st->ps.mean_log));
	json_set(ratio, "sd_log", st->n >= 2 ? json_new_float(st->ps.sd_log) : json_new_null());
	return ratio;
}

static cJSON *
interval_json(const struct cell_stats *st)
{
	cJSON *interval;

	if (st->n < 2)
		return json_new_null();
	interval = json_new_object();
	json_set(interval, "low", json_new_float(st->low));
	json_set(interval, "high", json_new_float(st->high));
	json_set(interval, "t_quantile", json_new_float(st->t));
	return interval;
}

static cJSON *
break_even_json(const struct plan *pl, int v, const struct cell_stats *st)
{
	double cost = st->cost, ms = st->mean_saving, lb = st->saving_low;
	cJSON *be;

	if (strcmp(st->verdict, "faster") != 0)
		return json_new_null();
	be = json_new_object();
	/* Integers stay integers (doc/campaign-report.md "Numbers"). */
	json_set(be, "cost_core_seconds", pl->variants[v].int_costs && fabs(cost) < 9e15 ?
	    json_new_int((long long)cost) : json_new_float(cost));
	json_set(be, "mean_saving_core_seconds", json_new_float(ms));
	json_set(be, "sd_saving_core_seconds", json_new_float(st->sd_saving));
	json_set(be, "saving_lower_bound_core_seconds", json_new_float(lb));
	json_set(be, "runs", ms > 0 ? json_new_float(cost / ms) : json_new_null());
	json_set(be, "runs_conservative", ms > 0 && lb > 0 ? json_new_float(cost / lb) :
	    json_new_null());
	json_set(be, "reason", ms <= 0 ? json_new_string("mean_saving_not_positive") :
	    lb <= 0 ? json_new_string("saving_lower_bound_not_positive") : json_new_null());
	return be;
}

/* One cell: its pairs, statistics, verdict and break-even. Sets *mean_log_out. */
static cJSON *
cell(struct index *ix, int c, int w, int v, bool comparable, double *mean_log_out,
    long long *retained)
{
	const struct plan *pl = ix->pl;
	cJSON *o = json_new_object(), *pairs = json_new_array(), *excluded = json_new_array();
	cJSON *missing = json_new_array();
	struct cell_stats st;

	memset(&st, 0, sizeof st);
	st.ratios = ecalloc((size_t)pl->repeats + 1, sizeof *st.ratios);
	st.savings = ecalloc((size_t)pl->repeats + 1, sizeof *st.savings);
	cell_pairs(ix, c, w, v, &st, pairs, excluded, missing);
	cell_compute(pl, v, comparable, &st);
	json_set(o, "node_class", json_new_string(pl->node_classes[c]));
	json_set(o, "workload", json_new_string(pl->workloads[w].name));
	json_set(o, "variant", json_new_string(pl->variants[v].name));
	json_set(o, "planned_pairs", json_new_int(pl->repeats));
	json_set(o, "retained_pairs", json_new_int(st.n));
	json_set(o, "excluded_pairs", json_new_int(st.nexcluded));
	json_set(o, "missing_pairs", json_new_int(st.nmissing));
	json_set(o, "pairs", pairs);
	json_set(o, "excluded", excluded);
	json_set(o, "missing", missing);
	json_set(o, "ratio", ratio_json(&st));
	json_set(o, "interval", interval_json(&st));
	json_set(o, "verdict", json_new_string(st.verdict));
	json_set(o, "verdict_reason", json_new_string(st.why));
	json_set(o, "break_even", break_even_json(pl, v, &st));
	*mean_log_out = st.n > 0 ? st.ps.mean_log : 0;
	*retained = st.n;
	free(st.ratios);
	free(st.savings);
	return o;
}

/* applies_to: what the report is about. */
static cJSON *
applies_to_json(const struct plan *pl)
{
	cJSON *o, *arr, *a2;

	o = json_new_object();
	json_set(o, "baseline", json_new_string(pl->baseline));
	arr = json_new_array();
	for (int v = 0; v < pl->nvariants; v++) {
		cJSON *e = json_new_object();

		json_set(e, "name", json_new_string(pl->variants[v].name));
		json_set(e, "runtime_digest", json_new_string(pl->variants[v].digest));
		json_set(e, "build_flags", json_new_string(pl->variants[v].flags));
		json_set(e, "libraries", pl->variants[v].libraries != NULL ?
		    cJSON_Duplicate(pl->variants[v].libraries, true) : json_new_object());
		json_append(arr, e);
	}
	json_set(o, "variants", arr);
	arr = json_new_array();
	for (int w = 0; w < pl->nworkloads; w++) {
		cJSON *e = json_new_object();

		json_set(e, "name", json_new_string(pl->workloads[w].name));
		json_set(e, "input_digest", json_new_string(pl->workloads[w].digest));
		json_append(arr, e);
	}
	json_set(o, "workloads", arr);
	arr = json_new_array();
	for (int c = 0; c < pl->nnode_classes; c++)
		json_append(arr, json_new_string(pl->node_classes[c]));
	json_set(o, "node_classes", arr);
	a2 = json_new_object();
	json_set(a2, "mpi_ranks", json_new_int(pl->mpi_ranks));
	json_set(a2, "threads_per_rank", json_new_int(pl->threads));
	json_set(o, "layout", a2);
	return o;
}

/* settings: the design and the statistics used. */
static cJSON *
settings_json(const struct plan *pl)
{
	cJSON *o, *a2;

	o = json_new_object();
	json_set(o, "warmup", json_new_int(pl->warmup));
	json_set(o, "repeats", json_new_int(pl->repeats));
	json_set(o, "seed", cJSON_Duplicate(json_get(pl->doc, "seed"), true));
	json_set(o, "confidence", cJSON_Duplicate(json_get(pl->doc, "confidence"), true));
	json_set(o, "margin", cJSON_Duplicate(json_get(pl->doc, "margin"), true));
	json_set(o, "cores", json_new_int(pl->mpi_ranks * pl->threads));
	a2 = json_new_object();
	json_set(a2, "low", json_new_float(1 / (1 + pl->margin)));
	json_set(a2, "high", json_new_float(1 + pl->margin));
	json_set(o, "equivalence_band", a2);
	for (int k = 0; k < 2; k++) {
		a2 = json_new_object();
		json_set(a2, "statistic", json_new_string(k == 0 ? "mean_log_ratio" :
		    "mean_paired_saving_core_seconds"));
		json_set(a2, "distribution", json_new_string("student_t"));
		json_set(a2, "sides", json_new_string(k == 0 ? "two_sided" : "lower_bound"));
		json_set(a2, "quantile", json_new_float((1 + pl->confidence) / 2));
		json_set(o, k == 0 ? "ratio_interval" : "break_even_interval", a2);
	}
	return o;
}

/* costs: what each variant costs to build, deploy and store. */
static cJSON *
costs_json(const struct plan *pl)
{
	cJSON *arr;

	arr = json_new_array();
	for (int v = 0; v < pl->nvariants; v++) {
		const cJSON *pv = NULL;
		cJSON *e;

		if (v == pl->base)
			continue;
		cJSON_ArrayForEach(pv, json_get(pl->doc, "variants"))
			if (strcmp(json_get(pv, "name")->valuestring, pl->variants[v].name) == 0)
				break;
		e = json_new_object();
		json_set(e, "variant", json_new_string(pl->variants[v].name));
		json_set(e, "build_cost_core_seconds", json_get(pv, "build_cost_core_seconds") ?
		    cJSON_Duplicate(json_get(pv, "build_cost_core_seconds"), true) : json_new_int(0));
		json_set(e, "deployment_cost_core_seconds",
		    json_get(pv, "deployment_cost_core_seconds") ?
		    cJSON_Duplicate(json_get(pv, "deployment_cost_core_seconds"), true) :
		    json_new_int(0));
		json_set(e, "storage_bytes", pl->variants[v].has_storage ?
		    json_new_int(pl->variants[v].storage) : json_new_null());
		json_append(arr, e);
	}
	return arr;
}

/*
 * The CPU models the measured runs of node class c report, sorted, the
 * measured and warm-up runs counted: a new array of *nm (borrowed strings).
 */
static const char **
node_class_models(const struct plan *pl, const struct results *r, int c, int *nm,
    long long *measured, long long *warm)
{
	const char **models = NULL;
	const cJSON *run;

	*nm = 0;
	*measured = *warm = 0;
	cJSON_ArrayForEach(run, json_get(r->doc, "runs")) {
		const cJSON *m;
		bool seen = false;

		if (strcmp(json_get(run, "node_class")->valuestring, pl->node_classes[c]) != 0)
			continue;
		if (strtoll(json_get(run, "block")->valuestring, NULL, 10) <= 0) {
			(*warm)++;
			continue;
		}
		(*measured)++;
		if ((m = cpu_model(run)) == NULL)
			continue;
		for (int i = 0; i < *nm && !seen; i++)
			seen = strcmp(models[i], m->valuestring) == 0;
		if (!seen) {
			models = erealloc(models, (size_t)(*nm + 1) * sizeof *models);
			models[(*nm)++] = m->valuestring;
		}
	}
	if (*nm > 1)
		qsort(models, (size_t)*nm, sizeof *models, text_cmp_ptr);
	return models;
}

/* node_classes: their CPU models; comparable[c] when one model at most. */
static cJSON *
node_classes_json(const struct plan *pl, const struct results *r, bool *comparable)
{
	cJSON *arr = json_new_array();

	for (int c = 0; c < pl->nnode_classes; c++) {
		long long measured, warm;
		int nm;
		const char **models = node_class_models(pl, r, c, &nm, &measured, &warm);
		cJSON *e = json_new_object(), *ml = json_new_array();

		for (int i = 0; i < nm; i++)
			json_append(ml, json_new_string(models[i]));
		comparable[c] = nm <= 1;
		json_set(e, "node_class", json_new_string(pl->node_classes[c]));
		json_set(e, "cpu_models", ml);
		json_set(e, "comparable", json_new_bool(comparable[c]));
		json_set(e, "measured_runs", json_new_int(measured));
		json_set(e, "warmup_runs", json_new_int(warm));
		json_append(arr, e);
		free(models);
	}
	return arr;
}

/* cells: one per node class, workload and variant other than the baseline. */
static cJSON *
cells_json(struct index *ix, const bool *comparable, double *mean_log, long long *kept)
{
	const struct plan *pl = ix->pl;
	cJSON *arr;

	arr = json_new_array();
	for (int c = 0; c < pl->nnode_classes; c++)
		for (int w = 0; w < pl->nworkloads; w++)
			for (int v = 0; v < pl->nvariants; v++) {
				size_t k = ((size_t)c * (size_t)pl->nworkloads + (size_t)w) *
				    (size_t)pl->nvariants + (size_t)v;

				if (v == pl->base)
					continue;
				json_append(arr, cell(ix, c, w, v, comparable[c], &mean_log[k],
				    &kept[k]));
			}
	return arr;
}

/* aggregates: per node class and variant, over the workloads with every pair. */
static cJSON *
aggregates_json(const struct plan *pl, const bool *comparable, const double *mean_log,
    const long long *kept)
{
	cJSON *arr;

	arr = json_new_array();
	for (int c = 0; c < pl->nnode_classes; c++)
		for (int v = 0; v < pl->nvariants; v++) {
			cJSON *e, *inc = json_new_array(), *left = json_new_array();
			double sum = 0;
			int ninc = 0;

			if (v == pl->base) {
				cJSON_Delete(inc);
				cJSON_Delete(left);
				continue;
			}
			for (int w = 0; w < pl->nworkloads; w++) {
				size_t k = ((size_t)c * (size_t)pl->nworkloads + (size_t)w) *
				    (size_t)pl->nvariants + (size_t)v;
				cJSON *l;

				if (comparable[c] && kept[k] == pl->repeats) {
					json_append(inc, json_new_string(pl->workloads[w].name));
					sum += mean_log[k];
					ninc++;
					continue;
				}
				l = json_new_object();
				json_set(l, "workload", json_new_string(pl->workloads[w].name));
				json_set(l, "reason", json_new_string(!comparable[c] ?
				    "node_class_incomparable" : "incomplete_pairs"));
				json_append(left, l);
			}
			e = json_new_object();
			json_set(e, "node_class", json_new_string(pl->node_classes[c]));
			json_set(e, "variant", json_new_string(pl->variants[v].name));
			json_set(e, "comparable", json_new_bool(comparable[c]));
			json_set(e, "geometric_mean", ninc > 0 ? json_new_float(exp(sum / ninc)) :
			    json_new_null());
			json_set(e, "workloads", inc);
			json_set(e, "left_out", left);
			json_append(arr, e);
		}
	return arr;
}

cJSON *
campaign_analyze(const struct plan *pl, const struct results *r)
{
	struct index ix = { pl, NULL, pl->warmup + pl->repeats };
	cJSON *rep = json_new_object();
	const cJSON *run;
	bool *comparable = ecalloc((size_t)pl->nnode_classes, sizeof *comparable);
	double *mean_log = ecalloc((size_t)pl->nnode_classes * (size_t)pl->nworkloads *
	    (size_t)pl->nvariants + 1, sizeof *mean_log);
	long long *kept = ecalloc((size_t)pl->nnode_classes * (size_t)pl->nworkloads *
	    (size_t)pl->nvariants + 1, sizeof *kept);
	size_t cells = (size_t)pl->nnode_classes * (size_t)pl->nworkloads * (size_t)pl->nvariants;

	ix.run = ecalloc(cells * (size_t)ix.nblocks + 1, sizeof *ix.run);
	cJSON_ArrayForEach(run, json_get(r->doc, "runs")) {
		int c = plan_node_class_index(pl, json_get(run, "node_class")->valuestring);
		int w = plan_workload_index(pl, json_get(run, "workload")->valuestring);
		int v = plan_variant_index(pl, json_get(run, "variant")->valuestring);

		*slot(&ix, c, w, v, strtoll(json_get(run, "block")->valuestring, NULL, 10)) = run;
	}
	json_set(rep, "schema_name", json_new_string("vq.benchmark-report/1"));
	json_set(rep, "plan_id", json_new_string(pl->id));
	json_set(rep, "plan_sha256", json_new_string(pl->sha));
	json_set(rep, "results_sha256", json_new_string(r->sha));
	json_set(rep, "applies_to", applies_to_json(pl));
	json_set(rep, "settings", settings_json(pl));
	json_set(rep, "costs", costs_json(pl));
	json_set(rep, "node_classes", node_classes_json(pl, r, comparable));
	json_set(rep, "cells", cells_json(&ix, comparable, mean_log, kept));
	json_set(rep, "aggregates", aggregates_json(pl, comparable, mean_log, kept));
	free(ix.run);
	free(comparable);
	free(mean_log);
	free(kept);
	return rep;
}
