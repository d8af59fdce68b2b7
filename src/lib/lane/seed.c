#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/canon.h"
#include "core/err.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/text.h"
#include "lane/named_metric.h"
#include "lane/policy.h"
#include "lane/provenance.h"
#include "lane/seed.h"
#include "lane/store/read.h"

bool
seed_pr_truthy(const cJSON *v)
{
	char *s;
	bool t;

	if (!json_truthy(v))
		return false;
	s = json_pystr_dup(v);
	t = provenance_pr_truthy(s);
	free(s);
	return t;
}

static bool
is_string(const cJSON *v, const char *want)
{
	return cJSON_IsString(v) && strcmp(v->valuestring, want) == 0;
}

/* A non-empty string model_id (the reference's first check). */
static char *
check_model_id(const cJSON *rec)
{
	const cJSON *v = json_get(rec, "model_id");

	if (!cJSON_IsString(v) || *v->valuestring == '\0')
		return estrdup("baseline seed records require a non-empty string model_id");
	return NULL;
}

static char *
check_identity(const cJSON *rec)
{
	struct identity id;
	char *msg = NULL;

	identity_of(rec, &id);
	if (!id.uses_v2)
		msg = estrdup("baseline seeds require a v2 record with exact comparable "
		    "identity fields");
	else if (!id.complete)
		msg = estrdup(id.error);
	identity_free(&id);
	return msg;
}

/*
 * Whether a record measured named metrics (lane/named_metric.h): a valid
 * "metrics" object with at least one value. An invalid one: *msg set.
 */
static bool
has_named(const cJSON *rec, char **msg)
{
	struct named_metric *m;
	char err[256];
	size_t n;
	bool any = false;

	*msg = NULL;
	if ((m = nm_parse(json_get(rec, "metrics"), &n, err, sizeof err)) == NULL) {
		*msg = easprintf("baseline seed records require valid named metrics: %s", err);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		any = any || m[i].has_value;
	free(m);
	return any;
}

/*
 * The measurements, in the canonical order: latency, throughput and memory
 * finite and positive; component times absent, null, or finite and >= 0.
 * A record with named metrics needs none of the six (an imported
 * benchmark has none), but those it has are checked alike.
 */
static char *
check_measurements(const cJSON *rec)
{
	const cJSON *v;
	double d;
	char *msg;
	bool named = has_named(rec, &msg);

	if (msg != NULL)
		return msg;
	for (int i = 0; i < METRIC_COUNT; i++) {
		const char *k = metric_table[i].key;
		bool required = i <= METRIC_MEMORY;

		v = json_get(rec, k);
		if (v == NULL || cJSON_IsNull(v)) {
			if (required && !named)
				return easprintf("baseline seed records require a finite positive "
				    "%s measurement", k);
			continue;
		}
		if (cJSON_IsBool(v) || policy_coerce(v, &d) != COERCE_OK || !isfinite(d))
			return easprintf("baseline seed records require a finite %s measurement", k);
		if (required && d <= 0)
			return easprintf("baseline seed records require a positive %s measurement", k);
		if (!required && d < 0)
			return easprintf("baseline seed records require a non-negative %s "
			    "measurement", k);
	}
	return NULL;
}

/*
 * "its KEY is V" (repr() of a string, str() of another value), or "it has
 * no KEY", added to b.
 */
static void
found(buf *b, const char *key, const cJSON *v)
{
	char *str;

	if (v == NULL) {
		buf_addf(b, "it has no %s", key);
		return;
	}
	buf_addf(b, "its %s is ", key);
	if (cJSON_IsString(v))
		text_py_repr(b, v->valuestring, strlen(v->valuestring));
	else {
		str = json_pystr_dup(v);
		buf_adds(b, str);
		free(str);
	}
}

/*
 * The reference's refusal of a source that is not scheduled_main, naming
 * the run source it has.
 */
static char *
found_run_source(const cJSON *v)
{
	buf b = BUF_INIT;

	buf_adds(&b, "baseline seeds require a scheduled_main source artifact (");
	found(&b, "run_source", v);
	buf_adds(&b, ")");
	return buf_detach(&b);
}

/*
 * The reference's refusal of a source that is not of a full suite on main,
 * naming the branch and the test_scope it has, and where test_scope comes
 * from.
 */
static char *
found_scope(const cJSON *branch, const cJSON *scope)
{
	buf b = BUF_INIT;

	buf_adds(&b, "baseline seeds require a main-branch full-suite source artifact (");
	found(&b, "branch", branch);
	buf_adds(&b, ", ");
	found(&b, "test_scope", scope);
	buf_adds(&b, "; test_scope is the TEST_SCOPE of the run that collected it, "
	    "full for the full suite)");
	return buf_detach(&b);
}

/*
 * What a source artifact of baseline what ("seeds", "reseeds") must be:
 * a benchmark's identity and measurements, normalized v2. NULL, or the
 * message.
 */
static char *
check_source_common(const cJSON *rec, const char *what)
{
	const cJSON *v;
	char *msg;

	if ((msg = check_model_id(rec)) != NULL || (msg = check_identity(rec)) != NULL ||
	    (msg = check_measurements(rec)) != NULL)
		return msg;
	v = json_get(rec, "result_schema_version");
	if (!cJSON_IsNumber(v) || v->valuedouble != 2)
		return easprintf("baseline %s require a normalized v2 source artifact", what);
	return NULL;
}

char *
seed_check_source(const cJSON *rec)
{
	const cJSON *v;
	char *msg;

	if ((msg = check_source_common(rec, "seeds")) != NULL)
		return msg;
	if (!is_string(json_get(rec, "comparison_status"), "CALIBRATION_NEEDED"))
		return estrdup("baseline seeds require a CALIBRATION_NEEDED source artifact");
	if (!cJSON_IsTrue(json_get(rec, "success")))
		return estrdup("baseline seeds require a successful source artifact");
	if (!cJSON_IsFalse(json_get(rec, "baseline_eligible")))
		return estrdup("baseline seeds require a baseline_eligible=false source artifact");
	if (!is_string((v = json_get(rec, "run_source")), "scheduled_main"))
		return found_run_source(v);
	if (seed_pr_truthy(json_get(rec, "pr_number")))
		return estrdup("baseline seeds require a non-PR source artifact");
	if (!is_string(json_get(rec, "branch"), "main") ||
	    !is_string(json_get(rec, "test_scope"), "full"))
		return found_scope(json_get(rec, "branch"), json_get(rec, "test_scope"));
	return NULL;
}

/*
 * What a prepared record of either kind (flag "baseline_seed" or
 * "baseline_reseed") must be: a benchmark's identity and measurements,
 * flag true, successful, eligible and passing. NULL, or the message.
 */
static char *
check_prepared_common(const cJSON *rec, const char *flag)
{
	char *msg;

	if ((msg = check_identity(rec)) != NULL || (msg = check_model_id(rec)) != NULL ||
	    (msg = check_measurements(rec)) != NULL)
		return msg;
	if (!cJSON_IsTrue(json_get(rec, flag)))
		return easprintf("prepared records must have %s=true", flag);
	if (!cJSON_IsTrue(json_get(rec, "success")) ||
	    !cJSON_IsTrue(json_get(rec, "baseline_eligible")))
		return estrdup("prepared records must be successful and baseline eligible");
	if (!is_string(json_get(rec, "comparison_status"), "PASS"))
		return estrdup("prepared records must have comparison_status=PASS");
	return NULL;
}

/* The approval rationale at key, non-empty once stripped; NULL, or the message. */
static char *
check_prepared_reason(const cJSON *rec, const char *key)
{
	const cJSON *v = json_get(rec, key);
	size_t n;

	if (!cJSON_IsString(v) || (text_py_strip(v->valuestring, &n), n == 0))
		return estrdup("prepared records must retain a non-empty approval rationale");
	return NULL;
}

char *
seed_check_prepared(const cJSON *rec)
{
	char *msg;

	if ((msg = check_prepared_common(rec, "baseline_seed")) != NULL)
		return msg;
	if (!is_string(json_get(rec, "baseline_seed_source_status"), "CALIBRATION_NEEDED"))
		return estrdup("prepared records must retain CALIBRATION_NEEDED source provenance");
	if ((msg = check_prepared_reason(rec, "baseline_seed_reason")) != NULL)
		return msg;
	if (!cJSON_IsTrue(json_get(rec, "baseline_seed_source_success")) ||
	    !is_string(json_get(rec, "baseline_seed_source_run_source"), "scheduled_main") ||
	    !is_string(json_get(rec, "baseline_seed_source_branch"), "main") ||
	    !is_string(json_get(rec, "baseline_seed_source_test_scope"), "full") ||
	    seed_pr_truthy(json_get(rec, "baseline_seed_source_pr_number")))
		return estrdup("prepared records must retain trusted scheduled-main source "
		    "provenance");
	return NULL;
}

char *
seed_provenance(const cJSON *rec)
{
	const cJSON *job = json_get(rec, "job_id"), *build = json_get(rec, "build_id");
	const cJSON *sha = json_get(rec, "commit_sha"), *ts = json_get(rec, "timestamp");
	buf b = BUF_INIT;
	char *s;

	if (json_truthy(job) || json_truthy(build)) {
		s = json_pystr_dup(json_truthy(job) ? job : build);
		buf_addf(&b, "%s:%s", json_truthy(job) ? "job" : "build", s);
		free(s);
		return buf_detach(&b);
	}
	if (!json_truthy(sha) && !json_truthy(ts))
		return NULL;
	buf_adds(&b, "commit:");
	if (sha != NULL)
		json_pyrepr(&b, sha);
	else
		buf_adds(&b, "None");
	buf_addc(&b, '\n');
	if (ts != NULL)
		json_pyrepr(&b, ts);
	else
		buf_adds(&b, "None");
	return buf_detach(&b);
}

cJSON *
seed_identity_json(const struct identity *id)
{
	cJSON *o = json_new_object();

	for (int i = 0; i < IDENTITY_KEYS; i++)
		json_set(o, identity_keys[i], json_new_string(id->value[i]));
	return o;
}

cJSON *
seed_cohort_json(const struct identity *id)
{
	cJSON *o = json_new_object();

	for (int i = 0; i < 3; i++)
		json_set(o, identity_keys[i], json_new_string(id->value[i]));
	return o;
}

/* A copy of src[key], or null when it is missing (Python's dict.get). */
static cJSON *
copy_of(const cJSON *src, const char *key)
{
	const cJSON *v = json_get(src, key);

	return v != NULL ? cJSON_Duplicate(v, true) : json_new_null();
}

cJSON *
seed_build(const cJSON *src, const char *ts, const char *reason,
    const char *operator, const char *source_path, int index, int n)
{
	static const char *const copied[] = { "comparison_status", "timestamp", "success",
	    "run_source", "branch", "test_scope", "pr_number" };
	cJSON *seed = cJSON_Duplicate(src, true);
	char key[64];

	json_set(seed, "timestamp", json_new_string(ts));
	json_set(seed, "success", json_new_bool(true));
	json_set(seed, "baseline_eligible", json_new_bool(true));
	json_set(seed, "comparison_status", json_new_string("PASS"));
	json_set(seed, "comparison_status_reason", json_new_string(SEED_REASON_STATUS));
	json_set(seed, "baseline_seed", json_new_bool(true));
	json_set(seed, "baseline_seed_reason", json_new_string(reason));
	for (size_t i = 0; i < sizeof copied / sizeof *copied; i++) {
		snprintf(key, sizeof key, "baseline_seed_source_%s",
		    i == 0 ? "status" : copied[i]);
		json_set(seed, key, copy_of(src, copied[i]));
	}
	json_set(seed, "baseline_seed_batch_size", json_new_int(n));
	json_set(seed, "baseline_seed_batch_index", json_new_int(index));
	json_set(seed, "baseline_seed_source_result", json_new_string(source_path));
	if (operator != NULL)
		json_set(seed, "baseline_seed_operator", json_new_string(operator));
	return seed;
}

char *
seed_path(const cJSON *seed, int index, int n)
{
	char *p = store_record_path(seed), *s;
	size_t len;

	if (p == NULL)
		return NULL;
	len = strlen(p) - 5;	/* without ".json" */
	if (n > 1)
		s = easprintf("%.*s_seed_%02d.json", (int)len, p, index);
	else
		s = easprintf("%.*s_seed.json", (int)len, p);
	free(p);
	return s;
}

void
seed_reservation_name(const cJSON *identity, const cJSON *repository, char *hex)
{
	cJSON *o = json_new_object();

	json_set(o, "identity", cJSON_Duplicate(identity, true));
	json_set(o, "repository", cJSON_Duplicate(repository, true));
	if (canon_sha256(o, hex) != 0)
		die("the reservation of a non-finite identity");
	cJSON_Delete(o);
}

void
seed_order(const cJSON *const *recs, int n, int *order, bool warn)
{
	int64_t *t = ecalloc((size_t)n + 1, sizeof *t);
	bool *dated = ecalloc((size_t)n + 1, sizeof *dated);
	int k = 0;
	char *s;

	for (int i = 0; i < n; i++) {
		const cJSON *v = json_get(recs[i], "timestamp");

		s = v != NULL ? json_pystr_dup(v) : estrdup("None");
		dated[i] = isotime_parse(s, &t[i]);
		free(s);
		if (!dated[i] && warn)
			fprintf(stderr, "Warning: source artifact %d has a missing or unparsable "
			    "timestamp; preserving its input order after timestamped sources.\n",
			    i + 1);
	}
	/* Insertion sort: stable, and batches are small. */
	for (int i = 0; i < n; i++) {
		int j;

		if (!dated[i])
			continue;
		for (j = k; j > 0 && t[order[j - 1]] > t[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
		k++;
	}
	for (int i = 0; i < n; i++)
		if (!dated[i])
			order[k++] = i;
	free(t);
	free(dated);
}

char *
reseed_check_source(const cJSON *rec)
{
	const cJSON *v;
	char *msg;

	if ((msg = check_source_common(rec, "reseeds")) != NULL)
		return msg;
	v = json_get(rec, "comparison_status");
	if (!is_string(v, "REGRESSION") && !is_string(v, "PASS"))
		return estrdup("baseline reseeds require a REGRESSION or PASS source artifact");
	if (!is_string(json_get(rec, "run_source"), "scheduled_main"))
		return estrdup("baseline reseeds require a scheduled_main source artifact");
	if (seed_pr_truthy(json_get(rec, "pr_number")))
		return estrdup("baseline reseeds require a non-PR source artifact");
	if (!is_string(json_get(rec, "branch"), "main") ||
	    !is_string(json_get(rec, "test_scope"), "full"))
		return estrdup("baseline reseeds require a main-branch full-suite source artifact");
	return NULL;
}

char *
reseed_check_prepared(const cJSON *rec)
{
	char *msg;

	if ((msg = check_prepared_common(rec, "baseline_reseed")) != NULL ||
	    (msg = check_prepared_reason(rec, "baseline_reseed_reason")) != NULL)
		return msg;
	if (!json_is_int(json_get(rec, "baseline_reseed_batch_index")) ||
	    !json_is_int(json_get(rec, "baseline_reseed_batch_size")))
		return estrdup("prepared records have invalid baseline reseed batch indices");
	return NULL;
}

bool
reseed_provenance_key(const char *key)
{
	return strncmp(key, "baseline_reseed", 15) == 0 || strncmp(key, "baseline_seed", 13) == 0;
}

static bool
in_fields(const char *key, char *const *fields, size_t n)
{
	static const char *const always[] = { "model_id", "timestamp", "success",
	    "baseline_eligible", "comparison_status" };

	for (size_t i = 0; i < sizeof always / sizeof *always; i++)
		if (strcmp(key, always[i]) == 0)
			return true;
	return bsearch(&key, fields, n, sizeof *fields, text_cmp_ptr) != NULL;
}

cJSON *
reseed_build(const cJSON *src, char *const *fields, size_t nfields, const char *ts,
    const char *reason, const char *operator, const char *source_path, int index, int n,
    double max_regression)
{
	cJSON *r = json_new_object();
	const cJSON *v, *status = json_get(src, "comparison_status");
	char *why;

	cJSON_ArrayForEach(v, src)
		if (!reseed_provenance_key(v->string) && in_fields(v->string, fields, nfields))
			json_set(r, v->string, cJSON_Duplicate(v, true));
	json_set(r, "timestamp", json_new_string(ts));
	json_set(r, "success", json_new_bool(true));
	json_set(r, "baseline_eligible", json_new_bool(true));
	json_set(r, "comparison_status", json_new_string("PASS"));
	if (json_get(r, "comparison_status_reason") != NULL) {
		why = easprintf(RESEED_REASON_STATUS_FMT, cJSON_IsString(status) ?
		    status->valuestring : "?");
		json_set(r, "comparison_status_reason", json_new_string(why));
		free(why);
	}
	json_set(r, "baseline_reseed", json_new_bool(true));
	json_set(r, "baseline_reseed_reason", json_new_string(reason));
	json_set(r, "baseline_reseed_source_result", json_new_string(source_path));
	json_set(r, "baseline_reseed_source_timestamp", copy_of(src, "timestamp"));
	json_set(r, "baseline_reseed_source_success", copy_of(src, "success"));
	json_set(r, "baseline_reseed_batch_size", json_new_int(n));
	json_set(r, "baseline_reseed_batch_index", json_new_int(index));
	if (operator != NULL)
		json_set(r, "baseline_reseed_operator", json_new_string(operator));
	json_set(r, "baseline_reseed_max_intra_batch_regression", json_new_float(max_regression));
	return r;
}

char *
reseed_path(const cJSON *rec, int index)
{
	char *p = store_record_path(rec), *s;

	if (p == NULL)
		return NULL;
	s = easprintf("%.*s_reseed_%02d.json", (int)(strlen(p) - 5), p, index);
	free(p);
	return s;
}
