#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "core/num.h"
#include "core/text.h"
#include "lane/config.h"
#include "lane/named_metric.h"
#include "lane/policy.h"

/* A JSON integer that is not a boolean, with its value. */
static bool
json_integer(const cJSON *v, long *out)
{
	long long ll;

	if (!json_is_int(v))
		return false;
	if (num_py_int(v->valuestring, &ll) != 1 || ll < -(1LL << 53) || ll > (1LL << 53))
		return false;
	*out = (long)ll;
	return true;
}

static bool
nonblank_string(const cJSON *v)
{
	size_t n;

	if (!cJSON_IsString(v))
		return false;
	text_py_strip(v->valuestring, &n);
	return n > 0;
}

char *
config_validate(const cJSON *cfg, const char *path)
{
	static const char *v2keys[] = { "workload_id", "variant_id",
	    "benchmark_version", "quality_metadata" };
	const cJSON *v, *rc, *e, *csv;
	buf missing = BUF_INIT, b = BUF_INIT;
	long n;
	size_t i;

	if (!cJSON_IsObject(cfg))
		return easprintf("%s: a benchmark config must be a JSON object", path);
	if (json_get(cfg, "benchmark_id") == NULL)
		return easprintf("%s: missing required benchmark config fields: benchmark_id",
		    path);
	v = json_get(cfg, "regression_thresholds");
	if (v != NULL && !cJSON_IsObject(v))
		return easprintf("%s: benchmark config field 'regression_thresholds' must "
		    "be an object", path);
	rc = json_get(cfg, "run_config");
	v = json_get(rc, "gpu_types");
	if (cJSON_IsObject(rc) && v != NULL && !cJSON_IsNull(v)) {
		bool ok = cJSON_IsArray(v);
		cJSON_ArrayForEach(e, v)
			ok &= cJSON_IsString(e) && e->valuestring[0] != '\0';
		if (!ok)
			return easprintf("%s: run_config.gpu_types must be a list of non-empty "
			    "strings", path);
	}
	csv = json_get(cfg, "config_schema_version");
	if (csv == NULL || cJSON_IsNull(csv)) {
		for (i = 0; i < 4; i++)
			if (json_get(cfg, v2keys[i]) != NULL)
				return easprintf("%s: v2 benchmark identity fields require "
				    "config_schema_version=2", path);
		return NULL;	/* a v1 config: nothing else is checked */
	}
	if (!config_is_v2(cfg)) {
		char *msg;

		json_pyrepr(&b, csv);
		msg = easprintf("%s: unsupported benchmark config_schema_version=%s",
		    path, b.s);
		buf_free(&b);
		return msg;
	}
	for (i = 0; i < 3; i++)
		if (json_get(cfg, v2keys[i]) == NULL)
			buf_addf(&missing, "%s%s", missing.len ? ", " : "", v2keys[i]);
	if (missing.len > 0) {
		char *msg = easprintf("%s: missing required v2 identity fields: %s",
		    path, missing.s);
		buf_free(&missing);
		return msg;
	}
	for (i = 0; i < 2; i++)
		if (!nonblank_string(json_get(cfg, v2keys[i])))
			return easprintf("%s: v2 identity field '%s' must be a non-empty "
			    "string", path, v2keys[i]);
	if (!json_integer(json_get(cfg, "benchmark_version"), &n))
		return easprintf("%s: v2 identity field 'benchmark_version' must be an "
		    "integer", path);
	v = json_get(cfg, "quality_metadata");
	if (v != NULL && !cJSON_IsObject(v))
		return easprintf("%s: optional v2 metadata field 'quality_metadata' must "
		    "be an object", path);
	return NULL;
}

bool
config_is_v2(const cJSON *cfg)
{
	const cJSON *v = json_get(cfg, "config_schema_version");

	/* Numeric equality, as the reference: 2 and 2.0, not "2" or true. */
	return cJSON_IsNumber(v) && v->valuedouble == 2.0;
}

char *
config_display_id(const cJSON *cfg)
{
	const cJSON *v = json_get(cfg, "benchmark_id");

	return v != NULL ? json_pystr_dup(v) : estrdup("None");
}

const cJSON *
config_run_config(const cJSON *cfg)
{
	static cJSON empty = { .type = cJSON_Object };
	const cJSON *rc = json_get(cfg, "run_config");

	if (!json_truthy(rc))
		return &empty;
	return cJSON_IsObject(rc) ? rc : NULL;
}

char *
config_run_counts(const cJSON *cfg, long *warmup, long *measure)
{
	const cJSON *rc = config_run_config(cfg), *v;
	char *id = config_display_id(cfg), *msg = NULL;

	*warmup = 1;
	*measure = 3;
	if (rc == NULL) {
		msg = easprintf("%s: run_config must be an object", id);
		goto done;
	}
	if ((v = json_get(rc, "num_warmup_runs")) != NULL &&
	    (!json_integer(v, warmup) || *warmup < 0)) {
		msg = easprintf("%s: run_config.num_warmup_runs must be a non-negative "
		    "integer", id);
		goto done;
	}
	if ((v = json_get(rc, "num_measurement_runs")) != NULL &&
	    (!json_integer(v, measure) || *measure < 1))
		msg = easprintf("%s: run_config.num_measurement_runs must be a positive "
		    "integer", id);
done:
	free(id);
	return msg;
}

/* A count that must be null or a positive integer. */
static char *
positive_count(const cJSON *v, const char *id, const char *name, long *out)
{
	*out = 0;
	if (v == NULL || cJSON_IsNull(v))
		return NULL;
	if (!json_integer(v, out) || *out < 1)
		return easprintf("%s: %s must be a positive integer", id, name);
	return NULL;
}

char *
config_gpu_count(const cJSON *cfg, long *count)
{
	static const char *par[] = { "tp_size", "sp_size" };
	const cJSON *ik = json_get(cfg, "init_kwargs"), *rc = config_run_config(cfg), *v;
	char *id = config_display_id(cfg), *msg;
	long ngpus, required, parallel = 0, p, declared;

	if ((msg = positive_count(json_get(ik, "num_gpus"), id,
	    "init_kwargs.num_gpus", &ngpus)) != NULL ||
	    (msg = positive_count(json_get(rc, "required_gpus"), id,
	    "run_config.required_gpus", &required)) != NULL)
		goto done;
	for (int i = 0; i < 2; i++) {
		v = json_get(ik, par[i]);
		if (v == NULL || cJSON_IsNull(v) || (json_integer(v, &p) && p == -1))
			continue;
		if (!json_integer(v, &p) || p < 1) {
			msg = easprintf("%s: init_kwargs.%s must be -1 or a positive integer",
			    id, par[i]);
			goto done;
		}
		parallel = p > parallel ? p : parallel;
	}
	if (parallel == 0)
		parallel = 1;
	if (ngpus && required && ngpus != required) {
		msg = easprintf("%s: init_kwargs.num_gpus (%ld) must match "
		    "run_config.required_gpus (%ld)", id, ngpus, required);
		goto done;
	}
	declared = ngpus ? ngpus : required;
	if (declared && declared < parallel) {
		msg = easprintf("%s: declared GPU count (%ld) must be at least "
		    "max(tp_size, sp_size) (%ld)", id, declared, parallel);
		goto done;
	}
	*count = declared ? declared : parallel;
done:
	free(id);
	return msg;
}

cJSON *
config_thresholds(const cJSON *cfg, const char *device, char **err)
{
	const cJSON *t = json_get(cfg, "thresholds"), *c;
	cJSON *def;

	*err = NULL;
	if (t != NULL && !cJSON_IsObject(t)) {
		char *id = config_display_id(cfg);

		*err = easprintf("%s: thresholds must be an object", id);
		free(id);
		return NULL;
	}
	cJSON_ArrayForEach(c, t)
		if (strstr(device, c->string) != NULL)
			return cJSON_Duplicate(c, true);
	if ((c = json_get(t, "default")) != NULL)
		return cJSON_Duplicate(c, true);
	def = json_new_object();
	json_set(def, "max_generation_time_s", json_new_float(120.0));
	json_set(def, "max_peak_memory_mb", json_new_float(30000.0));
	return def;
}

char *
config_gpu_types_skip(const cJSON *cfg, const char *device)
{
	const cJSON *rc = config_run_config(cfg), *types = json_get(rc, "gpu_types"), *e;
	buf b = BUF_INIT, d = BUF_INIT;
	char *id, *msg;

	if (!cJSON_IsArray(types) || cJSON_GetArraySize(types) == 0)
		return NULL;
	cJSON_ArrayForEach(e, types)
		if (cJSON_IsString(e) && strstr(device, e->valuestring) != NULL)
			return NULL;
	id = config_display_id(cfg);
	json_pyrepr(&b, types);
	text_py_repr(&d, device, strlen(device));
	msg = easprintf("%s is restricted to gpu_types=%s, current device is %s",
	    id, b.s, d.s);
	free(id);
	buf_free(&b);
	buf_free(&d);
	return msg;
}

/* The top-level keys the reference reads, and description (shipped configs). */
static const char *const top_keys[] = {
	"benchmark_id", "config_schema_version", "workload_id", "variant_id",
	"benchmark_version", "quality_metadata", "variant_metadata", "description",
	"model", "revision", "init_kwargs", "generation_kwargs", "test_prompts",
	"run_config", "thresholds", "regression_thresholds",
};
static const char *const field_keys[] = {
	"threshold_percent", "threshold_absolute", "gated",
};
/* The strings the reference reads as a gated boolean (trimmed, any case). */
static const char *const gated_words[] = {
	"1", "true", "yes", "on", "0", "false", "no", "off",
};

#define NELEM(a) (sizeof (a) / sizeof *(a))

/* Levenshtein distance of a and b (keys are short). */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), *row = ecalloc(lb + 1, sizeof *row);
	size_t i, j, diag_, up, d;

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		diag_ = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			up = row[j];
			d = diag_ + (a[i - 1] != b[j - 1]);
			if (up + 1 < d)
				d = up + 1;
			if (row[j - 1] + 1 < d)
				d = row[j - 1] + 1;
			row[j] = d;
			diag_ = up;
		}
	}
	d = row[lb];
	free(row);
	return d;
}

static const char *
closest(const char *key, const char *const *known, size_t n)
{
	const char *best = known[0];
	size_t bd = edit_distance(key, known[0]), d;

	for (size_t i = 1; i < n; i++)
		if ((d = edit_distance(key, known[i])) < bd) {
			bd = d;
			best = known[i];
		}
	return best;
}

/*
 * Where "key": appears in text from *pos on: its line, and *pos moves past
 * it (so a nested key is looked for after its parent). 0 when not found.
 */
static long
key_line(const char *text, const char *key, const char **pos)
{
	size_t kl = strlen(key);
	const char *p = *pos, *q;
	long line = 1;

	if (text == NULL || p == NULL)
		return 0;
	while ((p = strchr(p, '"')) != NULL) {
		if (strncmp(p + 1, key, kl) == 0 && p[kl + 1] == '"') {
			q = p + kl + 2;
			q += strspn(q, " \t\r\n");
			if (*q == ':') {
				for (const char *c = text; c < p; c++)
					line += *c == '\n';
				*pos = q;
				return line;
			}
		}
		p++;
	}
	return 0;
}

static void
issue(struct config_issue **v, size_t *n, long line, bool error, char *msg)
{
	*v = erealloc(*v, (*n + 1) * sizeof **v);
	(*v)[*n].line = line;
	(*v)[*n].error = error;
	(*v)[*n].msg = msg;
	(*n)++;
}

static void
lint_metric(const char *metric, const cJSON *o, const char *text, const char *pos,
    struct config_issue **v, size_t *n)
{
	const cJSON *f;
	const char *at;
	double d;
	long line;
	size_t i, len;
	char *low;

	cJSON_ArrayForEach(f, o) {
		at = pos;
		line = key_line(text, f->string, &at);
		for (i = 0; i < NELEM(field_keys) && strcmp(f->string, field_keys[i]) != 0; i++)
			;
		if (i == NELEM(field_keys)) {
			issue(v, n, line, false, easprintf("unknown key '%s' in "
			    "regression_thresholds.%s (did you mean '%s'?)", f->string, metric,
			    closest(f->string, field_keys, NELEM(field_keys))));
			continue;
		}
		if (strcmp(f->string, "gated") == 0) {
			if (cJSON_IsBool(f) || cJSON_IsNull(f))
				continue;
			if (cJSON_IsString(f)) {
				low = estrdup(text_py_strip(f->valuestring, &len));
				low[len] = '\0';
				for (char *c = low; *c; c++)
					*c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
				for (i = 0; i < NELEM(gated_words) && strcmp(low, gated_words[i]) != 0; i++)
					;
				free(low);
				if (i < NELEM(gated_words))
					continue;
			}
			issue(v, n, line, false, easprintf("regression_thresholds.%s.gated is "
			    "not a boolean (true or false): the default is kept", metric));
			continue;
		}
		if (cJSON_IsNull(f))
			continue;
		if (cJSON_IsBool(f)) {
			issue(v, n, line, false, easprintf("regression_thresholds.%s.%s is a "
			    "boolean, not a number: the default is kept", metric, f->string));
			continue;
		}
		switch (policy_coerce(f, &d)) {
		case COERCE_BAD:
			issue(v, n, line, true, easprintf("regression_thresholds.%s.%s must be "
			    "a number%s", metric, f->string,
			    strcmp(f->string, "threshold_percent") == 0 ?
			    " (a fraction: 0.05 is 5%)" : ""));
			break;
		case COERCE_OK:
			if (!isfinite(d))
				issue(v, n, line, true, easprintf("regression_thresholds.%s.%s is "
				    "not a finite number", metric, f->string));
			break;
		default:
			break;
		}
	}
}

struct config_issue *
config_lint(const cJSON *cfg, const char *text, size_t *n)
{
	struct config_issue *v = NULL;
	const cJSON *k, *rt;
	const char *pos, *at, *known[METRIC_COUNT];
	long line;
	size_t i;

	*n = 0;
	for (i = 0; i < METRIC_COUNT; i++)
		known[i] = metric_table[i].key;
	cJSON_ArrayForEach(k, cfg) {
		for (i = 0; i < NELEM(top_keys) && strcmp(k->string, top_keys[i]) != 0; i++)
			;
		if (i < NELEM(top_keys))
			continue;
		pos = text;
		issue(&v, n, key_line(text, k->string, &pos), false, easprintf("unknown "
		    "top-level key '%s' (did you mean '%s'?)", k->string,
		    closest(k->string, top_keys, NELEM(top_keys))));
	}
	rt = json_get(cfg, "regression_thresholds");
	pos = text;
	key_line(text, "regression_thresholds", &pos);
	if (!cJSON_IsObject(rt))
		rt = NULL;
	cJSON_ArrayForEach(k, rt) {
		at = pos;
		line = key_line(text, k->string, &at);
		if (strcmp(k->string, "metrics") == 0) {
			/* The named metrics' policy block (lane/named_metric.h). */
			char err[256];

			if (nm_policy_check(k, err, sizeof err) != 0)
				issue(&v, n, line, true, easprintf("regression_thresholds.metrics%s%s",
				    err[0] == '\'' ? "." : " ", err));
			continue;
		}
		if (policy_metric_index(k->string) < 0) {
			issue(&v, n, line, false, easprintf("unknown key '%s' in "
			    "regression_thresholds (did you mean '%s'?)", k->string,
			    closest(k->string, known, METRIC_COUNT)));
			continue;
		}
		if (cJSON_IsNull(k))
			continue;
		if (!cJSON_IsObject(k)) {
			issue(&v, n, line, false, easprintf("regression_thresholds.%s is not an "
			    "object: the defaults are kept", k->string));
			continue;
		}
		lint_metric(k->string, k, text, at, &v, n);
	}
	return v;
}

void
config_issues_free(struct config_issue *issues, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(issues[i].msg);
	free(issues);
}
