/* memmem() */
#define _GNU_SOURCE
/*
 * import: the suite model, units, detection, dispatch to the parsers
 * and the raw record of one imported benchmark.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "core/canon.h"
#include "core/err.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/num.h"
#include "core/text.h"
#include "core/unit.h"
#include "lane/import/import.h"
#include "lane/import/parsers.h"
#include "lane/recipe.h"

const char *const import_formats[] = {
	"google-benchmark", "pytest-benchmark", "hyperfine", "go", "catch2",
	"criterion", "jmh", "benchmarkdotnet", "perfkite", NULL
};

const char import_detect_help[] =
    "a Google Benchmark, pytest-benchmark, hyperfine, JMH, BenchmarkDotNet, "
    "Criterion or perfkite JSON document, go test -bench text, Catch2 XML, "
    "or a Criterion directory";

bool
import_format_known(const char *name)
{
	if (strcmp(name, "customSmallerIsBetter") == 0 || strcmp(name, "customBiggerIsBetter") == 0)
		return true;
	for (int i = 0; import_formats[i] != NULL; i++)
		if (strcmp(import_formats[i], name) == 0)
			return true;
	return false;
}

/*
 * The tools' spellings that core's unit table (unit_canonical()) does not
 * know: whole words, lowercase kB, picoseconds. ops/ns is here for its
 * factor: core divides by the time (1 / 1e-9 is not 1e9 in binary).
 */
static const struct unit_row {
	const char *unit, *canon;
	double factor;
} units[] = {
	{ "seconds", "s", 1 }, { "ps", "s", 1e-12 }, { "ps/op", "s", 1e-12 },
	{ "bytes", "B", 1 }, { "byte", "B", 1 }, { "kB", "B", 1e3 }, { "kB/s", "B/s", 1e3 },
	{ "ops/ns", "1/s", 1e9 },
};

double
import_unit(const char *unit, const char **canon)
{
	double f;

	/* A counter without a unit, the most common: no table to search. */
	if (*unit == '\0') {
		*canon = unit;
		return 1;
	}
	for (size_t i = 0; i < sizeof units / sizeof *units; i++)
		if (units[i].unit[0] == unit[0] && strcmp(units[i].unit, unit) == 0) {
			*canon = units[i].canon;
			return units[i].factor;
		}
	if (unit_canonical(unit, canon, &f))
		return f;
	*canon = unit;
	return 1;
}

void
import_bench_free(struct import_bench *b)
{
	for (size_t j = 0; j < b->nm; j++) {
		free(b->m[j].name);
		free(b->m[j].unit);
		free(b->m[j].samples);
		free(b->m[j].error);
	}
	free(b->m);
	free(b->id);
	free(b->workload);
	free(b->error);
	cJSON_Delete(b->params);
	cJSON_Delete(b->settings);
	memset(b, 0, sizeof *b);
}

void
import_suite_free(struct import_suite *s)
{
	for (size_t i = 0; i < s->nb; i++)
		import_bench_free(&s->b[i]);
	free(s->b);
	free(s->workload);
	free(s->tool_version);
	cJSON_Delete(s->hw_context);
	cJSON_Delete(s->sw_context);
	cJSON_Delete(s->hw);
	cJSON_Delete(s->sw);
	cJSON_Delete(s->hw_id);
	cJSON_Delete(s->sw_id);
	free(s->head);
	free(s->profiles);
	memset(s, 0, sizeof *s);
}

struct import_bench *
import_add_bench(struct import_suite *s, const char *id)
{
	struct import_bench *b;

	if (s->nb == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->b = erealloc(s->b, s->cap * sizeof *s->b);
	}
	b = &s->b[s->nb++];
	memset(b, 0, sizeof *b);
	b->id = estrdup(id);
	b->params = json_new_object();
	b->settings = json_new_object();
	return b;
}

/*
 * A metric name as records carry it: at most IMPORT_NAME_MAX bytes (cut
 * before a UTF-8 sequence, not inside one), control characters as spaces.
 */
static char *
metric_name(const char *name)
{
	size_t n = strlen(name);
	char *m;

	if (n > IMPORT_NAME_MAX) {
		n = IMPORT_NAME_MAX;
		while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
			n--;
	}
	m = estrndup(name, n);
	for (char *c = m; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	return m;
}

struct import_metric *
import_add_metric(struct import_bench *b, const char *name, double value,
    const char *unit)
{
	struct import_metric *m;
	const char *canon;
	double f = import_unit(unit, &canon);

	char *clean = metric_name(name);

	/* A metric named twice keeps its first place and takes the last value. */
	for (size_t i = 0; i < b->nm; i++)
		if (strcmp(b->m[i].name, clean) == 0) {
			free(clean);
			m = &b->m[i];
			free(m->unit);
			free(m->samples);
			free(m->error);
			goto fill;
		}
	b->m = erealloc(b->m, (b->nm + 1) * sizeof *b->m);
	m = &b->m[b->nm++];
	m->name = clean;
fill:
	m->unit = estrdup(canon);
	m->value = value * f;
	m->better = BETTER_UNKNOWN;
	m->samples = NULL;
	m->nsamples = 0;
	m->error = NULL;
	if (!isfinite(m->value))
		m->error = easprintf("not a finite number (%s)", isnan(value) ? "NaN" :
		    value > 0 ? "Infinity" : "-Infinity");
	return m;
}

void
import_set_samples(struct import_metric *m, const double *v, size_t n,
    const char *unit)
{
	const char *canon;
	double f = import_unit(unit, &canon);

	free(m->samples);
	m->samples = emalloc((n ? n : 1) * sizeof *m->samples);
	for (size_t i = 0; i < n; i++)
		m->samples[i] = v[i] * f;
	m->nsamples = n;
}

char *
import_variant(const cJSON *params)
{
	buf b = BUF_INIT;
	const cJSON *p;
	const cJSON **sorted;
	size_t n = 0, i;

	cJSON_ArrayForEach(p, params)
		n++;
	if (n == 0)
		return estrdup("default");
	sorted = emalloc(n * sizeof *sorted);
	i = 0;
	cJSON_ArrayForEach(p, params)
		sorted[i++] = p;
	/* Insertion order is the tool's own: keep it, as the tool prints it. */
	for (i = 0; i < n; i++) {
		char *v = json_pystr_dup(sorted[i]);
		buf_addf(&b, "%s%s=%s", i ? "," : "", sorted[i]->string, v);
		free(v);
	}
	free(sorted);
	return buf_detach(&b);
}

/* Whether the file at path is a directory. */
static bool
is_dir(const char *path)
{
	struct stat st;

	return path != NULL && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The format of a parsed JSON document, or NULL. */
static const char *
detect_json(const cJSON *doc)
{
	const cJSON *bs = json_get(doc, "benchmarks"), *first;

	if (cJSON_IsArray(doc)) {
		first = cJSON_GetArrayItem(doc, 0);
		if (json_get(first, "primaryMetric") != NULL && json_get(first, "benchmark") != NULL)
			return "jmh";
		if (cJSON_IsString(json_get(first, "name")) && json_get(first, "value") != NULL &&
		    json_get(first, "unit") != NULL)
			return "perfkite";
		return NULL;
	}
	if (!cJSON_IsObject(doc))
		return NULL;
	first = cJSON_GetArrayItem(bs, 0);
	if (cJSON_IsArray(bs) && json_get(doc, "machine_info") != NULL)
		return "pytest-benchmark";
	if (cJSON_IsArray(bs) && (json_get(doc, "context") != NULL ||
	    json_get(first, "run_type") != NULL || json_get(first, "real_time") != NULL))
		return "google-benchmark";
	if (cJSON_IsArray(json_get(doc, "results")) &&
	    json_get(cJSON_GetArrayItem(json_get(doc, "results"), 0), "command") != NULL)
		return "hyperfine";
	if (cJSON_IsArray(json_get(doc, "Benchmarks")))
		return "benchmarkdotnet";
	if (cJSON_IsArray(bs))
		return "perfkite";
	if (json_get(doc, "full_id") != NULL || json_get(doc, "mean") != NULL ||
	    json_get(doc, "Mean") != NULL)
		return "criterion";
	return NULL;
}

/* The first non-blank byte of text. */
static const char *
skip_blank(const char *text, size_t len)
{
	size_t i = 0;

	/* A UTF-8 byte order mark, as .NET writes one. */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len && strchr(" \t\r\n", text[i]) != NULL)
		i++;
	return text + i;
}

/* The format of non-JSON text, or NULL. */
static const char *
detect_text(const char *p, const char *text, size_t len)
{
	if (p < text + len && *p == '<')
		return memmem(text, len, "<Catch", 6) != NULL ? "catch2" : NULL;
	if (go_looks_like(text, len))
		return "go";
	return NULL;
}

int
import_parse(const char *format, const char *path, const char *text, size_t len,
    struct import_suite *suite, long *line, char *msg, size_t msgsz)
{
	static const struct {
		const char *name;
		int (*parse)(const cJSON *, struct import_suite *, char *, size_t);
	} json_parsers[] = {
		{ "google-benchmark", gbench_parse }, { "pytest-benchmark", pytest_parse },
		{ "hyperfine", hyperfine_parse }, { "jmh", jmh_parse },
		{ "benchmarkdotnet", bdn_parse }, { "perfkite", generic_parse },
	};
	const char *p = skip_blank(text, len);
	bool json = p < text + len && (*p == '{' || *p == '[');
	struct json_arena *arena;
	json_error je;
	cJSON *doc;
	int rc = -1;

	*line = 0;
	*msg = '\0';
	if (format == NULL && is_dir(path))
		format = "criterion";
	if (format == NULL && !json && (format = detect_text(p, text, len)) == NULL) {
		snprintf(msg, msgsz, "unrecognised input: looked for %s", import_detect_help);
		return -1;
	}
	suite->format = format;
	if (format != NULL && strcmp(format, "go") == 0)
		return go_parse(text, len, suite, line, msg, msgsz);
	if (format != NULL && strcmp(format, "catch2") == 0)
		return catch2_parse(text, len, suite, line, msg, msgsz);
	if (format != NULL && strcmp(format, "criterion") == 0 && is_dir(path))
		return criterion_parse_dir(path, suite, line, msg, msgsz);
	/* Google Benchmark's usual file, read without a tree (the slow path's answer). */
	if (json && (format == NULL || strcmp(format, "google-benchmark") == 0) &&
	    gbench_fast(p, len - (size_t)(p - text), format == NULL, suite) == 0) {
		suite->format = "google-benchmark";
		return 0;
	}
	/* One parse, into an arena: a suite's file can be large. */
	arena = json_arena_new();
	if ((doc = json_parse_arena(p, len - (size_t)(p - text), NULL, 0, arena, &je)) == NULL) {
		/* Lines counted from the first non-blank byte: add those before. */
		for (const char *q = text; q < p; q++)
			if (*q == '\n')
				je.line++;
		*line = je.line;
		if (format == NULL)
			snprintf(msg, msgsz, "unrecognised input: looked for %s", import_detect_help);
		else
			snprintf(msg, msgsz, "%s", je.msg);
		goto done;
	}
	if (format == NULL && (format = suite->format = detect_json(doc)) == NULL) {
		snprintf(msg, msgsz, "unrecognised input: looked for %s", import_detect_help);
		goto done;
	}
	if (strcmp(format, "criterion") == 0)
		rc = criterion_parse_file(doc, path, suite, msg, msgsz);
	if (strncmp(format, "custom", 6) == 0) {
		rc = generic_parse(doc, suite, msg, msgsz);
		suite->format = "perfkite";
	}
	for (size_t i = 0; i < sizeof json_parsers / sizeof *json_parsers; i++)
		if (strcmp(json_parsers[i].name, format) == 0)
			rc = json_parsers[i].parse(doc, suite, msg, msgsz);
done:
	json_arena_free(arena);
	return rc;
}

const char *const import_identity_keys[] = {
	"workload_id", "variant_id", "benchmark_version", "recipe_fingerprint",
	"hardware_profile_id", "software_profile_id", "device", "commit",
	"run_source", "branch", "pr_number", "test_scope", "build_url", "build_id",
	"job_id", NULL
};

bool
import_identity_valid(const char *kv, char *msg, size_t msgsz)
{
	const char *eq = strchr(kv, '=');
	long long n;

	if (eq == NULL) {
		snprintf(msg, msgsz, "--identity %s: not KEY=VALUE", kv);
		return false;
	}
	for (int i = 0; import_identity_keys[i] != NULL; i++)
		if (strlen(import_identity_keys[i]) == (size_t)(eq - kv) &&
		    strncmp(import_identity_keys[i], kv, (size_t)(eq - kv)) == 0) {
			if (strcmp(import_identity_keys[i], "benchmark_version") == 0) {
				char *end;
				n = strtoll(eq + 1, &end, 10);
				if (eq[1] == '\0' || *end != '\0' || n < 0) {
					snprintf(msg, msgsz, "--identity benchmark_version: "
					    "not a non-negative integer");
					return false;
				}
			}
			return true;
		}
	snprintf(msg, msgsz, "--identity %.*s: not a key it sets", (int)(eq - kv), kv);
	return false;
}

/* The --identity value of key, or NULL. */
static const char *
override(const struct import_identity *id, const char *key)
{
	const char *found = NULL;
	size_t n = strlen(key);

	for (int i = 0; id->overrides != NULL && id->overrides[i] != NULL; i++)
		if (strncmp(id->overrides[i], key, n) == 0 && id->overrides[i][n] == '=')
			found = id->overrides[i] + n + 1;	/* the last one wins */
	return found;
}

/* The string at key: the override, else v, else "". */
static cJSON *
str_key(const struct import_identity *id, const char *key, const char *v)
{
	const char *o = override(id, key);

	return json_new_string(o != NULL ? o : v != NULL ? v : "");
}

static const char *
stated_better(enum better b)
{
	return b == BETTER_LOWER ? "lower" : b == BETTER_HIGHER ? "higher" : NULL;
}

/* The metrics object of b. */
cJSON *
import_metrics_json(const struct import_bench *b)
{
	cJSON *all = json_new_object(), *m, *arr;

	for (size_t i = 0; i < b->nm; i++) {
		const struct import_metric *x = &b->m[i];

		m = json_new_object();
		json_set(m, "value", json_new_finite(x->value));
		json_set(m, "unit", json_new_string(x->unit));
		if (stated_better(x->better) != NULL)
			json_set(m, "better", json_new_string(stated_better(x->better)));
		/*
		 * Samples are finite numbers: a failed metric keeps none, nor
		 * does a metric one of whose samples is not a number.
		 */
		bool finite = x->samples != NULL && x->error == NULL;
		for (size_t j = 0; finite && j < x->nsamples; j++)
			finite = isfinite(x->samples[j]);
		if (finite) {
			arr = json_new_array();
			for (size_t j = 0; j < x->nsamples; j++)
				json_append(arr, json_new_finite(x->samples[j]));
			json_set(m, "samples", arr);
		}
		if (x->error != NULL)
			json_set(m, "error", json_new_string(x->error));
		json_set(all, x->name, m);
	}
	return all;
}

/* The keys every record of a suite shares, after benchmark_id. */
static void
record_head(cJSON *rec, const struct import_identity *id)
{
	json_set(rec, "result_schema_version", json_new_int(2));
	json_set(rec, "device", str_key(id, "device", id->device));
	json_set(rec, "thresholds", id->thresholds != NULL ?
	    cJSON_Duplicate(id->thresholds, true) : json_new_object());
	json_set(rec, "worker_log_path", id->worker_log != NULL ?
	    json_new_string(id->worker_log) : json_new_null());
	json_set(rec, "regression_thresholds", id->regression_thresholds != NULL ?
	    cJSON_Duplicate(id->regression_thresholds, true) : json_new_object());
	json_set(rec, "commit", str_key(id, "commit", id->commit));
	json_set(rec, "run_source", str_key(id, "run_source", id->run_source));
	json_set(rec, "branch", str_key(id, "branch", id->branch));
	json_set(rec, "pr_number", str_key(id, "pr_number", id->pr_number));
	json_set(rec, "test_scope", str_key(id, "test_scope", id->test_scope));
	json_set(rec, "build_url", str_key(id, "build_url", id->build_url));
	json_set(rec, "build_id", str_key(id, "build_id", id->build_id));
	json_set(rec, "job_id", str_key(id, "job_id", id->job_id));
}

/* The suite's profiles and their ids, made on the first call. */
static void
suite_profiles(struct import_suite *s, const struct import_identity *id)
{
	const char *o;
	cJSON *hw, *sw;

	if (s->hw != NULL)
		return;
	hw = id->hardware != NULL ? cJSON_Duplicate(id->hardware, true) : json_new_object();
	if (s->hw_context != NULL)
		json_set(hw, "tool_context", cJSON_Duplicate(s->hw_context, true));
	s->hw = hw;
	s->hw_id = (o = override(id, "hardware_profile_id")) != NULL ?
	    json_new_string(o) : recipe_profile_id(hw, "hw-");
	sw = id->software != NULL ? cJSON_Duplicate(id->software, true) : json_new_object();
	json_set(sw, "tool", json_new_string(s->format));
	json_set(sw, "tool_version", s->tool_version != NULL ?
	    json_new_string(s->tool_version) : json_new_null());
	if (s->sw_context != NULL)
		json_set(sw, "tool_context", cJSON_Duplicate(s->sw_context, true));
	s->sw = sw;
	s->sw_id = (o = override(id, "software_profile_id")) != NULL ?
	    json_new_string(o) : recipe_profile_id(sw, "sw-");
}

/* The profile keys of a record, from the suite's (made by suite_profiles()). */
static void
record_profiles(cJSON *rec, const struct import_suite *s)
{
	json_set(rec, "hardware_profile", cJSON_Duplicate(s->hw, true));
	json_set(rec, "hardware_profile_id", cJSON_Duplicate(s->hw_id, true));
	json_set(rec, "software_profile", cJSON_Duplicate(s->sw, true));
	json_set(rec, "software_profile_id", cJSON_Duplicate(s->sw_id, true));
}

/* What one record is made of beside the suite's shared keys. */
struct record_parts {
	char *bid;		/* benchmark_id */
	const char *workload;
	char *variant;
	cJSON *recipe;		/* NULL when written without a tree */
	cJSON *version;		/* benchmark_version (in recipe, if any) */
	const char *fp_override;	/* --identity recipe_fingerprint */
	char fp[SHA256_HEX];	/* "" when it could not be made */
};

/* The canonical JSON of a recipe without its benchmark_id: what recipe_fingerprint() hashes. */
static int
recipe_canonical(buf *c, const struct import_suite *s, const struct import_bench *b,
    const struct record_parts *r)
{
	/* The keys in byte order, as JSON_CANONICAL sorts them. */
	buf_adds(c, "{\"benchmark\":{\"benchmark_version\":");
	if (json_write(c, r->version, JSON_CANONICAL, NULL) != 0)
		return -1;
	buf_adds(c, ",\"variant_id\":");
	json_write_string(c, r->variant);
	buf_adds(c, ",\"workload_id\":");
	json_write_string(c, r->workload);
	buf_adds(c, "},\"recipe_schema_version\":2,\"tool\":{\"benchmark\":");
	json_write_string(c, b->id);
	buf_adds(c, ",\"format\":");
	json_write_string(c, s->format);
	buf_adds(c, ",\"params\":");
	if (json_write(c, b->params, JSON_CANONICAL, NULL) != 0)
		return -1;
	buf_adds(c, ",\"settings\":");
	if (json_write(c, b->settings, JSON_CANONICAL, NULL) != 0)
		return -1;
	buf_adds(c, "}}");
	return 0;
}

/* The recipe as json_write() writes record_parts()' tree of it, appended to out. */
static int
recipe_write(buf *out, const struct import_suite *s, const struct import_bench *b,
    const struct record_parts *r)
{
	buf_adds(out, "{\"recipe_schema_version\":2,\"benchmark\":{\"benchmark_id\":");
	json_write_string(out, r->bid);
	buf_adds(out, ",\"workload_id\":");
	json_write_string(out, r->workload);
	buf_adds(out, ",\"variant_id\":");
	json_write_string(out, r->variant);
	buf_adds(out, ",\"benchmark_version\":");
	if (json_write(out, r->version, JSON_COMPACT, NULL) != 0)
		return -1;
	buf_adds(out, "},\"tool\":{\"format\":");
	json_write_string(out, s->format);
	buf_adds(out, ",\"benchmark\":");
	json_write_string(out, b->id);
	buf_adds(out, ",\"params\":");
	if (json_write(out, b->params, JSON_COMPACT, NULL) != 0)
		return -1;
	buf_adds(out, ",\"settings\":");
	if (json_write(out, b->settings, JSON_COMPACT, NULL) != 0)
		return -1;
	buf_adds(out, "}}");
	return 0;
}

/*
 * The parts of b's record; tree: with the recipe as a tree (import_record()),
 * else only what recipe_write() needs, the fingerprint hashed from
 * recipe_canonical() (import_record_write(): the same bytes, no tree).
 */
static void
record_parts(const struct import_suite *s, const struct import_bench *b,
    const struct import_identity *id, struct record_parts *r, bool tree)
{
	cJSON *bench, *tool;
	char *pv = import_variant(b->params);
	const char *o;

	r->workload = override(id, "workload_id");
	if (r->workload == NULL)
		r->workload = b->workload != NULL ? b->workload : s->workload != NULL ?
		    s->workload : s->format;
	r->variant = (o = override(id, "variant_id")) != NULL ? estrdup(o) : estrdup(pv);
	/* Params outside the tool's own id join it, so that one id is one benchmark. */
	r->bid = cJSON_GetArraySize(b->params) > 0 && !b->id_has_params ?
	    easprintf("%s[%s]", b->id, pv) : estrdup(b->id);
	free(pv);
	if (!tree) {
		buf c = BUF_INIT;

		r->recipe = NULL;
		if ((o = override(id, "benchmark_version")) != NULL)
			r->version = json_new_int(strtoll(o, NULL, 10));
		else
			r->version = id->benchmark_version != NULL ?
			    cJSON_Duplicate(id->benchmark_version, true) : json_new_int(1);
		r->fp_override = override(id, "recipe_fingerprint");
		if (r->fp_override == NULL) {
			if (recipe_canonical(&c, s, b, r) == 0)
				canon_sha256_hex(c.s, c.len, r->fp);
			else
				r->fp[0] = '\0';
		}
		buf_free(&c);
		return;
	}
	r->recipe = json_new_object();
	json_set(r->recipe, "recipe_schema_version", json_new_int(2));
	bench = json_new_object();
	json_set(bench, "benchmark_id", json_new_string(r->bid));
	json_set(bench, "workload_id", json_new_string(r->workload));
	json_set(bench, "variant_id", json_new_string(r->variant));
	if ((o = override(id, "benchmark_version")) != NULL)
		r->version = json_new_int(strtoll(o, NULL, 10));
	else
		r->version = id->benchmark_version != NULL ?
		    cJSON_Duplicate(id->benchmark_version, true) : json_new_int(1);
	json_set(bench, "benchmark_version", r->version);
	json_set(r->recipe, "benchmark", bench);
	tool = json_new_object();
	json_set(tool, "format", json_new_string(s->format));
	json_set(tool, "benchmark", json_new_string(b->id));
	json_set(tool, "params", cJSON_Duplicate(b->params, true));
	json_set(tool, "settings", cJSON_Duplicate(b->settings, true));
	json_set(r->recipe, "tool", tool);
	r->fp_override = override(id, "recipe_fingerprint");
	if (r->fp_override == NULL && recipe_fingerprint(r->recipe, r->fp) != 0)
		r->fp[0] = '\0';
}

static void
record_parts_free(struct record_parts *r, bool tree)
{
	free(r->bid);
	free(r->variant);
	cJSON_Delete(r->recipe);
	if (!tree)
		cJSON_Delete(r->version);
}

cJSON *
import_record(struct import_suite *s, const struct import_bench *b,
    const struct import_identity *id)
{
	cJSON *rec = json_new_object();
	struct record_parts r;
	char ts[40];

	record_parts(s, b, id, &r, true);
	json_set(rec, "benchmark_id", json_new_string(r.bid));
	record_head(rec, id);
	json_set(rec, "timestamp", json_new_string(isotime_format(ts, isotime_now())));
	if (b->error != NULL)
		json_set(rec, "error", json_new_string(b->error));
	json_set(rec, "metrics", import_metrics_json(b));
	json_set(rec, "recipe", r.recipe);
	json_set(rec, "recipe_fingerprint", r.fp_override != NULL ?
	    json_new_string(r.fp_override) : r.fp[0] != '\0' ? json_new_string(r.fp) :
	    json_new_null());
	suite_profiles(s, id);
	record_profiles(rec, s);
	json_set(rec, "workload_id", json_new_string(r.workload));
	json_set(rec, "variant_id", json_new_string(r.variant));
	json_set(rec, "benchmark_version", cJSON_Duplicate(r.version, true));
	if (cJSON_GetArraySize(b->params) > 0)
		json_set(rec, "params", cJSON_Duplicate(b->params, true));
	r.recipe = NULL;	/* rec holds it */
	record_parts_free(&r, true);
	return rec;
}

/* The members of object o as compact JSON, without its braces (new string). */
static int
members_text(cJSON *o, char **text)
{
	buf t = BUF_INIT;
	int rc = json_write(&t, o, JSON_COMPACT, NULL);

	cJSON_Delete(o);
	if (rc != 0 || t.len < 2) {
		buf_free(&t);
		return -1;
	}
	t.s[t.len - 1] = '\0';
	*text = estrdup(t.s + 1);
	buf_free(&t);
	return 0;
}

/* A double as json_write() writes json_new_finite() of it. */
static void
finite_write(buf *out, double v)
{
	char num[NUM_BUFSZ];

	if (isfinite(v))
		buf_adds(out, num_repr(num, v));
	else
		buf_add(out, "null", 4);
}

/* The metrics object of b, as json_write() writes import_metrics_json(). */
static void
metrics_write(buf *out, const struct import_bench *b)
{
	buf_addc(out, '{');
	for (size_t i = 0; i < b->nm; i++) {
		const struct import_metric *x = &b->m[i];
		bool finite = x->samples != NULL && x->error == NULL;

		if (i > 0)
			buf_addc(out, ',');
		json_write_string(out, x->name);
		buf_adds(out, ":{\"value\":");
		finite_write(out, x->value);
		buf_adds(out, ",\"unit\":");
		json_write_string(out, x->unit);
		if (stated_better(x->better) != NULL) {
			buf_adds(out, ",\"better\":");
			json_write_string(out, stated_better(x->better));
		}
		for (size_t j = 0; finite && j < x->nsamples; j++)
			finite = isfinite(x->samples[j]);
		if (finite) {
			buf_adds(out, ",\"samples\":[");
			for (size_t j = 0; j < x->nsamples; j++) {
				if (j > 0)
					buf_addc(out, ',');
				finite_write(out, x->samples[j]);
			}
			buf_addc(out, ']');
		}
		if (x->error != NULL) {
			buf_adds(out, ",\"error\":");
			json_write_string(out, x->error);
		}
		buf_addc(out, '}');
	}
	buf_addc(out, '}');
}

int
import_record_write(struct import_suite *s, const struct import_bench *b,
    const struct import_identity *id, buf *out)
{
	struct record_parts r;
	size_t start = out->len;
	char ts[40];
	int rc = -1;
	cJSON *o;

	if (s->head == NULL) {
		suite_profiles(s, id);
		o = json_new_object();
		record_head(o, id);
		if (members_text(o, &s->head) != 0)
			return -1;
		o = json_new_object();
		record_profiles(o, s);
		if (members_text(o, &s->profiles) != 0)
			return -1;
	}
	record_parts(s, b, id, &r, false);
	buf_adds(out, "{\"benchmark_id\":");
	json_write_string(out, r.bid);
	buf_addc(out, ',');
	buf_adds(out, s->head);
	buf_adds(out, ",\"timestamp\":\"");
	buf_adds(out, isotime_format(ts, isotime_now()));
	buf_addc(out, '"');
	if (b->error != NULL) {
		buf_adds(out, ",\"error\":");
		json_write_string(out, b->error);
	}
	buf_adds(out, ",\"metrics\":");
	metrics_write(out, b);
	buf_adds(out, ",\"recipe\":");
	if (recipe_write(out, s, b, &r) != 0)
		goto done;
	buf_adds(out, ",\"recipe_fingerprint\":");
	if (r.fp_override != NULL)
		json_write_string(out, r.fp_override);
	else if (r.fp[0] != '\0')
		json_write_string(out, r.fp);
	else
		buf_add(out, "null", 4);
	buf_addc(out, ',');
	buf_adds(out, s->profiles);
	buf_adds(out, ",\"workload_id\":");
	json_write_string(out, r.workload);
	buf_adds(out, ",\"variant_id\":");
	json_write_string(out, r.variant);
	buf_adds(out, ",\"benchmark_version\":");
	if (json_write(out, r.version, JSON_COMPACT, NULL) != 0)
		goto done;
	if (cJSON_GetArraySize(b->params) > 0) {
		buf_adds(out, ",\"params\":");
		if (json_write(out, b->params, JSON_COMPACT, NULL) != 0)
			goto done;
	}
	buf_addc(out, '}');
	rc = 0;
done:
	if (rc != 0) {
		out->len = start;
		if (out->cap > 0)
			out->s[start] = '\0';
	}
	record_parts_free(&r, false);
	return rc;
}

struct import_index {
	long *slot;	/* bench index + 1, 0 empty */
	size_t cap, n;
};

struct import_index *
import_index_new(void)
{
	struct import_index *ix = ecalloc(1, sizeof *ix);

	ix->cap = 1024;
	ix->slot = ecalloc(ix->cap, sizeof *ix->slot);
	return ix;
}

long
import_index_find(const struct import_index *ix, const struct import_suite *s,
    const char *id)
{
	size_t i = (size_t)text_hash(id) & (ix->cap - 1);

	for (; ix->slot[i] != 0; i = (i + 1) & (ix->cap - 1))
		if (strcmp(s->b[ix->slot[i] - 1].id, id) == 0)
			return ix->slot[i] - 1;
	return -1;
}

void
import_index_add(struct import_index *ix, const struct import_suite *s, long k)
{
	size_t i;

	if (2 * (ix->n + 1) > ix->cap) {
		struct import_index big = { ecalloc(ix->cap * 2, sizeof *ix->slot), ix->cap * 2, 0 };
		for (size_t j = 0; j < ix->cap; j++)
			if (ix->slot[j] != 0)
				import_index_add(&big, s, ix->slot[j] - 1);
		free(ix->slot);
		*ix = big;
	}
	i = (size_t)text_hash(s->b[k].id) & (ix->cap - 1);
	while (ix->slot[i] != 0)
		i = (i + 1) & (ix->cap - 1);
	ix->slot[i] = k + 1;
	ix->n++;
}

void
import_index_free(struct import_index *ix)
{
	if (ix != NULL)
		free(ix->slot);
	free(ix);
}

void
import_push_sample(struct import_bench *b, const char *name, double v, const char *unit)
{
	struct import_metric *m = NULL;
	const char *canon;
	double f = import_unit(unit, &canon);

	char *clean = NULL;

	/* The name as stored (the common name needs no cleaning: no copy). */
	const unsigned char *c = (const unsigned char *)name;
	while (*c >= 0x20 && *c != 0x7f)
		c++;
	if (*c != '\0' || c - (const unsigned char *)name > IMPORT_NAME_MAX)
		name = clean = metric_name(name);
	for (size_t i = 0; i < b->nm; i++)
		if (strcmp(b->m[i].name, name) == 0)
			m = &b->m[i];
	if (m == NULL)
		m = import_add_metric(b, name, 0, canon);
	free(clean);
	if (m->samples == NULL) {
		m->samples = emalloc(4 * sizeof *m->samples);
		m->nsamples = 0;
	} else if ((m->nsamples & (m->nsamples - 1)) == 0 && m->nsamples >= 4) {
		m->samples = erealloc(m->samples, 2 * m->nsamples * sizeof *m->samples);
	}
	m->samples[m->nsamples++] = v * f;
}

void
import_finish_means(struct import_bench *b)
{
	for (size_t i = 0; i < b->nm; i++) {
		struct import_metric *m = &b->m[i];
		double sum = 0;

		if (m->samples == NULL || m->nsamples == 0)
			continue;
		for (size_t j = 0; j < m->nsamples; j++) {
			if (!isfinite(m->samples[j]) && m->error == NULL)
				m->error = easprintf("sample %zu is not a finite number (%s)",
				    j + 1, isnan(m->samples[j]) ? "NaN" :
				    m->samples[j] > 0 ? "Infinity" : "-Infinity");
			sum += m->samples[j];
		}
		m->value = sum / (double)m->nsamples;
	}
}

bool
import_num(const cJSON *o, const char *key, double *out)
{
	const cJSON *v = json_get(o, key);

	if (!cJSON_IsNumber(v))
		return false;
	*out = v->valuedouble;
	return true;
}

int
import_text(const char *format, const char *path, const char *text, size_t len,
    const char *label, struct import_suite *s)
{
	bool stdin_ = path == NULL || strcmp(path, "-") == 0;
	long line;
	char msg[512];

	memset(s, 0, sizeof *s);
	if (format != NULL && strcmp(format, "criterion") == 0 && stdin_) {
		diag(label, 0, "criterion is read from its files or directory, not standard input");
		return -1;
	}
	if (import_parse(format, path, text, len, s, &line, msg, sizeof msg) != 0) {
		/* What it was read as, when that was a guess. */
		if (format == NULL && s->format != NULL)
			diag(label, 0, "read as %s", s->format);
		diag(label, line, "%s", msg);
		import_suite_free(s);
		return -1;
	}
	if (format == NULL)
		diag(label, 0, "read as %s", s->format);

	if (s->nb == 0) {
		diag(label, 0, "no benchmark in it (read as %s)", s->format);
		import_suite_free(s);
		return -1;
	}
	return 0;
}

/* Gzip input, as every perfkite reader takes it: b decompressed in place. */
static int
gunzip(buf *b)
{
	z_stream z;
	buf out = BUF_INIT;
	unsigned char chunk[65536];
	int rc;

	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)b->s;
	z.avail_in = (unsigned)b->len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof chunk;
		rc = inflate(&z, Z_NO_FLUSH);
		if (rc != Z_OK && rc != Z_STREAM_END) {
			inflateEnd(&z);
			buf_free(&out);
			return -1;
		}
		buf_add(&out, chunk, sizeof chunk - z.avail_out);
		/* Concatenated members, as gzip writes them, are read one after another. */
		if (rc == Z_STREAM_END && z.avail_in > 0)
			rc = inflateReset(&z) == Z_OK ? Z_OK : Z_STREAM_END;
	} while (rc != Z_STREAM_END);
	inflateEnd(&z);
	if (out.s == NULL)
		buf_adds(&out, "");
	buf_free(b);
	*b = out;
	return 0;
}

/*
 * buf_read_file() of path, a large file read straight into a buf sized
 * once from its size (no chunk copies, no regrowth).
 */
static int
read_whole(buf *b, const char *path)
{
	struct stat st;
	ssize_t n;
	int fd, e;

	buf_reset(b);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return buf_read_file(b, path);
	}
	for (;;) {
		buf_grow(b, b->len < (size_t)st.st_size ? (size_t)st.st_size - b->len : 65536);
		n = read(fd, b->s + b->len, b->cap - b->len - 1);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		b->len += (size_t)n;
		b->s[b->len] = '\0';
	}
	close(fd);
	return 0;
}

/* Files at least this large are read at their size in one go. */
#define WHOLE_MIN (1 << 20)

/*
 * A large JSON file at path read whole into a buffer of its size (*len
 * bytes): one allocation, no growth, no zeroed copy. NULL for anything
 * else (then it is read as before): a small file, not a regular one, or
 * text that does not start as JSON does (the JSON parsers read no byte
 * past *len; the text formats are given a terminated copy). Not mapped: a
 * file truncated by another process while it is read would be SIGBUS, not
 * the error it is here (a short read sends it down the ordinary path).
 */
static char *
read_json(const char *path, size_t *len)
{
	struct stat st;
	const char *p;
	size_t got = 0;
	ssize_t n;
	char *m;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < WHOLE_MIN) {
		close(fd);
		return NULL;
	}
	m = emalloc((size_t)st.st_size);
	while (got < (size_t)st.st_size &&
	    ((n = read(fd, m + got, (size_t)st.st_size - got)) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			got += (size_t)n;
	close(fd);
	*len = got;
	p = skip_blank(m, got);
	if (got == (size_t)st.st_size && p < m + got && (*p == '{' || *p == '['))
		return m;
	free(m);
	return NULL;
}

int
import_read(const char *format, const char *path, const char *label,
    struct import_suite *s)
{
	bool stdin_ = path == NULL || strcmp(path, "-") == 0;
	buf b = BUF_INIT;
	char *whole;
	size_t len;
	int rc;

	memset(s, 0, sizeof *s);
	if (!stdin_ && !is_dir(path) && (whole = read_json(path, &len)) != NULL) {
		rc = import_text(format, path, whole, len, label, s);
		free(whole);
		return rc;
	}
	if (is_dir(path)) {
		if (format != NULL && strcmp(format, "criterion") != 0) {
			diag(label, 0, "a directory is read only as criterion");
			return -1;
		}
	} else if (read_whole(&b, stdin_ ? "/dev/stdin" : path) != 0) {
		diag(label, 0, "cannot read: %s", strerror(errno));
		buf_free(&b);
		return -1;
	} else if (b.len >= 2 && (unsigned char)b.s[0] == 0x1f &&
	    (unsigned char)b.s[1] == 0x8b && gunzip(&b) != 0) {
		diag(label, 0, "cannot read: not valid gzip data");
		buf_free(&b);
		return -1;
	}
	rc = import_text(format, path, b.s, b.len, label, s);
	buf_free(&b);
	return rc;
}

void
import_provenance(struct import_identity *id, const struct provenance_env *e)
{
	id->commit = e->commit;
	id->run_source = provenance_infer_run_source(e, false);
	id->branch = e->branch;
	id->pr_number = provenance_pr_truthy(e->pull_request) ? e->pull_request : NULL;
	id->test_scope = e->test_scope;
	id->build_url = e->build_url;
	id->build_id = e->build_id;
	id->job_id = e->job_id;
}

cJSON *
import_hardware_profile(const struct gpu *g, long count)
{
	struct hw_gpu h[GPU_MAX];

	for (int i = 0; i < g->count; i++) {
		h[i].name = g->dev[i].name;
		h[i].total_bytes = g->dev[i].total_bytes;
		h[i].cc_major = g->dev[i].cc_major;
		h[i].cc_minor = g->dev[i].cc_minor;
	}
	return recipe_hardware_profile(g->cuda, count, h, g->count,
	    gpu_interconnect(g, (int)count));
}

long
import_report_failures(const struct import_suite *s, const char *label)
{
	long n = 0;

	for (size_t i = 0; i < s->nb; i++) {
		const struct import_bench *b = &s->b[i];
		bool failed = b->error != NULL;

		if (b->error != NULL)
			diag(label, 0, "%s: failed: %s", b->id, b->error);
		for (size_t j = 0; j < b->nm; j++)
			if (b->m[j].error != NULL) {
				diag(label, 0, "%s: %s: %s", b->id, b->m[j].name, b->m[j].error);
				failed = true;
			}
		n += failed;
	}
	return n;
}
