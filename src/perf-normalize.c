/*
 * perf-normalize: raw benchmark records in, tracking records out, exactly
 * as the reference's comparator normalizes them: renamed and
 * coerced metrics, the effective regression policy of all six metrics,
 * provenance from the record then the environment, the run source, and the
 * identity keys. The transient static_failures key passes through.
 */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/opt.h"
#include "lane/named_metric.h"
#include "lane/policy.h"
#include "lane/provenance.h"

static struct {
	struct provenance_env env;
	bool run_source_given;	/* --run-source: replaces the record's own */
} opt;

/* The identity and its metadata: copied when present and not null, in this order. */
static const char *const metadata_keys[] = {
	"result_schema_version", "workload_id", "variant_id",
	"benchmark_version", "recipe", "recipe_fingerprint",
	"hardware_profile", "hardware_profile_id", "software_profile",
	"software_profile_id", "environment_metadata",
	"environment_fingerprint", "quality_metadata", "variant_metadata",
};

/* Taken from recipe.benchmark when still missing, appended after the rest. */
static const char *const fallback_keys[] = {
	"workload_id", "variant_id", "benchmark_version",
};

static const struct opt_def options[] = {
	{ 'r', "run-source", 0, "source",
	    "the run source of every record, replacing the record's own", NULL, NULL },
	{ 0, "commit", 'C', "sha", "the commit (default BUILDKITE_COMMIT)", NULL, NULL },
	{ 0, "branch", 'B', "name", "the branch (default BUILDKITE_BRANCH)", NULL, NULL },
	{ 0, "pr-number", 'P', "n",
	    "the pull request (default BUILDKITE_PULL_REQUEST)", NULL, NULL },
	{ 0, "test-scope", 'S', "scope", "the test scope (default TEST_SCOPE)", NULL, NULL },
	{ 0, "build-url", 'U', "url",
	    "the build (default BUILDKITE_BUILD_URL, _BUILD_ID, _JOB_ID)", "--build-url url, --build-id id, --job-id id", NULL },
	{ 0, "build-id", 'I', "id", NULL, NULL, NULL },
	{ 0, "job-id", 'J', "id", NULL, NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-normalize [-r run-source] [--commit sha] [--branch name]\n"
	    "                      [--pr-number n] [--test-scope scope]\n"
	    "                      [--build-url url] [--build-id id] [--job-id id]\n"
	    "                      [file ...]\n",
	.width = 26,
	.flags = 0,
	.opts = options,
};

/*
 * A string-valued key of the raw record: its value, def when absent, NULL
 * after reporting a value of another type (null included).
 */
static const char *
string_key(jsonl_reader *r, const jsonl_span *s, const cJSON *raw,
    const char *key, const char *def)
{
	const cJSON *v = json_get(raw, key);

	if (v == NULL)
		return def;
	if (cJSON_IsString(v))
		return v->valuestring;
	jsonl_error(r, s, "%s must be a string", key);
	return NULL;
}

/* A metric value as a float or null; NULL after reporting a bad value. */
static cJSON *
metric_value(jsonl_reader *r, const jsonl_span *s, const cJSON *raw,
    const char *key)
{
	double d;

	switch (policy_coerce(json_get(raw, key), &d)) {
	case COERCE_NULL:
		return json_new_null();
	case COERCE_OK:
		if (isfinite(d))
			return json_new_float(d);
		jsonl_error(r, s, "%s is not a finite number", key);
		return NULL;
	default:
		jsonl_error(r, s, "%s must be a number", key);
		return NULL;
	}
}

/* A provenance key: the raw value if truthy, else the variable, else "". */
static cJSON *
provenance(const cJSON *raw, const char *key, const char *env)
{
	const cJSON *v = json_get(raw, key);

	if (json_truthy(v))
		return cJSON_Duplicate(v, true);
	return json_new_string(env != NULL ? env : "");
}

/* pr_number: as provenance(), then "" unless its string form is a PR. */
static cJSON *
pr_number(const cJSON *raw)
{
	cJSON *v = provenance(raw, "pr_number", opt.env.pull_request);
	char *str = json_pystr_dup(v);
	bool keep = provenance_pr_truthy(str);

	free(str);
	if (keep)
		return v;
	cJSON_Delete(v);
	return json_new_string("");
}

static const char *
run_source(const cJSON *raw)
{
	/* The inference runs (and may warn) for every record, as the reference. */
	const char *inferred = provenance_infer_run_source(&opt.env, true);
	const cJSON *v = json_get(raw, "run_source");
	static char kept[32];
	char *norm;

	/*
	 * PERF_RUN_SOURCE is the reference's fallback, used only when the record
	 * has no valid run source; the option is perfkite's and says what the
	 * run is, as perf-lane's does.
	 */
	if (opt.run_source_given || !cJSON_IsString(v))
		return inferred;
	norm = provenance_strip_lower(v->valuestring);
	if (provenance_run_source_valid(norm)) {
		snprintf(kept, sizeof kept, "%s", norm);
		free(norm);
		return kept;
	}
	free(norm);
	return inferred;
}

static bool
static_failures_valid(const cJSON *v)
{
	const cJSON *c;

	if (!cJSON_IsArray(v))
		return false;
	cJSON_ArrayForEach(c, v)
		if (!cJSON_IsString(c))
			return false;
	return true;
}

/*
 * Checks the named metrics and their policy block (lane/named_metric.h);
 * false after reporting a problem.
 */
static bool
checked_named(jsonl_reader *r, const jsonl_span *s, const cJSON *raw)
{
	struct named_metric *m;
	char err[256];
	size_t n;

	if ((m = nm_parse(json_get(raw, "metrics"), &n, err, sizeof err)) == NULL) {
		jsonl_error(r, s, "%s", err);
		return false;
	}
	free(m);
	if (nm_policy_check(json_get(json_get(raw, "regression_thresholds"), "metrics"), err,
	    sizeof err) != 0) {
		jsonl_error(r, s, "regression_thresholds.metrics%s%s",
		    err[0] == '\'' ? "." : " ", err);
		return false;
	}
	return true;
}

/*
 * Checks the raw record's types and thresholds: *model_id, *gpu_type and
 * pol get what it gives. False after reporting a problem.
 */
static bool
checked_raw(jsonl_reader *r, const jsonl_span *s, const cJSON *raw, const char **model_id,
    const char **gpu_type, struct metric_policy *pol)
{
	const cJSON *v;
	char bad[64];

	if ((*model_id = string_key(r, s, raw, "benchmark_id", "unknown")) == NULL ||
	    (*gpu_type = string_key(r, s, raw, "device", "unknown")) == NULL)
		return false;
	v = json_get(raw, "timestamp");
	if (json_truthy(v) && !cJSON_IsString(v)) {
		jsonl_error(r, s, "timestamp must be a string");
		return false;
	}
	if (json_truthy(json_get(raw, "commit")) &&
	    !cJSON_IsString(json_get(raw, "commit"))) {
		jsonl_error(r, s, "commit must be a string");
		return false;
	}
	v = json_get(raw, "static_failures");
	if (v != NULL && !static_failures_valid(v)) {
		jsonl_error(r, s, "static_failures must be an array of strings");
		return false;
	}
	if (policy_merge(json_get(raw, "regression_thresholds"), pol, bad,
	    sizeof bad) != 0) {
		jsonl_error(r, s, "regression_thresholds.%s is not a finite number",
		    bad);
		return false;
	}
	return checked_named(r, s, raw);
}

/*
 * Builds the normalized record; NULL after reporting a problem. Subtrees
 * of raw are moved into the result.
 */
static cJSON *
normalize(jsonl_reader *r, const jsonl_span *s, cJSON *raw)
{
	struct metric_policy pol[METRIC_COUNT];
	const char *model_id, *gpu_type;
	const cJSON *v = json_get(raw, "timestamp"), *bench, *sf = json_get(raw, "static_failures");
	cJSON *out, *m;
	char ts[40];
	size_t i;

	if (!checked_raw(r, s, raw, &model_id, &gpu_type, pol))
		return NULL;
	out = json_new_object();
	json_set(out, "model_id", json_new_string(model_id));
	json_set(out, "timestamp", json_truthy(v) ? json_new_string(v->valuestring) :
	    json_new_string(isotime_format(ts, isotime_now())));
	json_set(out, "commit_sha", provenance(raw, "commit", opt.env.commit));
	json_set(out, "gpu_type", json_new_string(gpu_type));
	for (i = 0; i < METRIC_COUNT; i++) {
		if ((m = metric_value(r, s, raw, metric_table[i].raw_key)) == NULL) {
			cJSON_Delete(out);
			return NULL;
		}
		json_set(out, metric_table[i].key, m);
	}
	/* Named metrics follow the six, as the raw record gives them. */
	if (json_get(raw, "metrics") != NULL)
		json_set(out, "metrics", json_take(raw, "metrics"));
	m = policy_to_json(pol);
	if ((v = json_get(json_get(raw, "regression_thresholds"), "metrics")) != NULL)
		json_set(m, "metrics", json_take(json_get(raw, "regression_thresholds"),
		    "metrics"));
	json_set(out, "regression_thresholds", m);
	json_set(out, "success", json_new_bool(true));
	json_set(out, "run_source", json_new_string(run_source(raw)));
	json_set(out, "baseline_eligible", json_new_bool(false));
	json_set(out, "branch", provenance(raw, "branch", opt.env.branch));
	json_set(out, "pr_number", pr_number(raw));
	json_set(out, "test_scope", provenance(raw, "test_scope", opt.env.test_scope));
	json_set(out, "build_url", provenance(raw, "build_url", opt.env.build_url));
	json_set(out, "build_id", provenance(raw, "build_id", opt.env.build_id));
	json_set(out, "job_id", provenance(raw, "job_id", opt.env.job_id));
	/* The raw record is not needed afterwards: move its subtrees over. */
	for (i = 0; i < sizeof metadata_keys / sizeof *metadata_keys; i++) {
		v = json_get(raw, metadata_keys[i]);
		if (v != NULL && !cJSON_IsNull(v))
			json_set(out, metadata_keys[i], json_take(raw, metadata_keys[i]));
	}
	bench = json_get(json_get(out, "recipe"), "benchmark");
	for (i = 0; i < sizeof fallback_keys / sizeof *fallback_keys; i++) {
		v = json_get(bench, fallback_keys[i]);
		if (json_get(out, fallback_keys[i]) == NULL && v != NULL &&
		    !cJSON_IsNull(v))
			json_set(out, fallback_keys[i], cJSON_Duplicate(v, true));
	}
	if (sf != NULL)
		json_set(out, "static_failures", json_take(raw, "static_failures"));
	return out;
}

static void
process_record(jsonl_reader *r, const jsonl_span *s, cJSON *raw)
{
	cJSON *out = normalize(r, s, raw);

	if (out == NULL)
		return;
	jsonl_put(r, s, out);
	cJSON_Delete(out);
}

int
main(int argc, char *argv[])
{
	char *norm;
	int c;

	err_init(argv[0]);
	provenance_env_load(&opt.env);
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		switch (c) {
		case 'r':
			norm = provenance_strip_lower(optarg);
			if (!provenance_run_source_valid(norm)) {
				warnx("invalid run source '%s': expected pr, local, "
				    "scheduled_main or unknown", optarg);
				opt_usage(&option_table, EXIT_TROUBLE);
			}
			free(norm);
			opt.env.run_source = optarg;
			opt.run_source_given = true;
			break;
		case 'C': opt.env.commit = optarg; break;
		case 'B': opt.env.branch = optarg; break;
		case 'P': opt.env.pull_request = optarg; break;
		case 'S': opt.env.test_scope = optarg; break;
		case 'U': opt.env.build_url = optarg; break;
		case 'I': opt.env.build_id = optarg; break;
		case 'J': opt.env.job_id = optarg; break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
	return jsonl_filter(argv + optind, argc - optind, process_record);
}
