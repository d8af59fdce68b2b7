/*
 * jmh: JMH's -rf json. One benchmark per entry: its id the benchmark with
 * its mode and params; score in scoreUnit with the direction the mode
 * implies (thrpt higher; avgt, sample, ss lower), the samples its rawData;
 * each secondary metric by its name (a leading "\u00b7" dropped), direction
 * unknown. JMH writes a non-finite score as the string "NaN": a failed
 * metric.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "lane/import/parsers.h"

/* A score: a number, or JMH's "NaN", "Infinity", "-Infinity" strings. */
static bool
score(const cJSON *v, double *d)
{
	if (cJSON_IsNumber(v)) {
		*d = v->valuedouble;
		return true;
	}
	if (cJSON_IsString(v) && (strcmp(v->valuestring, "NaN") == 0 ||
	    strcmp(v->valuestring, "Infinity") == 0 || strcmp(v->valuestring, "-Infinity") == 0)) {
		*d = v->valuestring[0] == 'N' ? NAN : v->valuestring[0] == '-' ? -INFINITY :
		    INFINITY;
		return true;
	}
	return false;
}

/* One metric of an entry: false when its score is missing. */
static bool
metric(struct import_bench *b, const char *name, const cJSON *m,
    enum better better)
{
	const char *unit = json_str(m, "scoreUnit");
	const cJSON *fork, *v;
	struct import_metric *x;
	double d, *raw = NULL;
	size_t n = 0;

	if (!score(json_get(m, "score"), &d))
		return false;
	x = import_add_metric(b, name, d, unit);
	x->better = better;
	cJSON_ArrayForEach(fork, json_get(m, "rawData"))
		cJSON_ArrayForEach(v, fork) {
			raw = erealloc(raw, (n + 1) * sizeof *raw);
			if (!score(v, &raw[n]))
				raw[n] = NAN;
			n++;
		}
	if (n > 0)
		import_set_samples(x, raw, n, unit);
	free(raw);
	return true;
}

int
jmh_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz)
{
	static const char *const set_keys[] = { "threads", "forks", "warmupIterations",
	    "warmupTime", "warmupBatchSize", "measurementIterations", "measurementTime",
	    "measurementBatchSize" };
	static const char *const sw_keys[] = { "jdkVersion", "vmName", "vmVersion", "jvmArgs" };
	const cJSON *e, *v;
	long k = -1;

	if (!cJSON_IsArray(doc)) {
		snprintf(msg, msgsz, "not an array of JMH results");
		return -1;
	}
	cJSON_ArrayForEach(e, doc) {
		const char *id = json_str(e, "benchmark"), *mode = json_str(e, "mode"), *dot;
		struct import_bench *b;
		enum better better = BETTER_UNKNOWN;

		k++;
		if (*id == '\0' || !cJSON_IsObject(json_get(e, "primaryMetric"))) {
			snprintf(msg, msgsz, "[%ld]: %s", k, *id == '\0' ? "no benchmark" :
			    "no primaryMetric");
			return -1;
		}
		b = import_add_bench(s, id);
		if ((dot = strrchr(id, '.')) != NULL)
			b->workload = estrndup(id, (size_t)(dot - id));
		json_set(b->params, "mode", json_new_string(mode));
		cJSON_ArrayForEach(v, json_get(e, "params"))
			json_set(b->params, v->string, cJSON_Duplicate(v, true));
		for (size_t i = 0; i < sizeof set_keys / sizeof *set_keys; i++)
			if ((v = json_get(e, set_keys[i])) != NULL)
				json_set(b->settings, set_keys[i], cJSON_Duplicate(v, true));
		if (s->tool_version == NULL && cJSON_IsString(json_get(e, "jmhVersion")))
			s->tool_version = estrdup(json_str(e, "jmhVersion"));
		if (s->sw_context == NULL) {
			s->sw_context = json_new_object();
			for (size_t i = 0; i < sizeof sw_keys / sizeof *sw_keys; i++)
				if ((v = json_get(e, sw_keys[i])) != NULL)
					json_set(s->sw_context, sw_keys[i], cJSON_Duplicate(v, true));
		}
		if (strcmp(mode, "thrpt") == 0)
			better = BETTER_HIGHER;
		else if (strcmp(mode, "avgt") == 0 || strcmp(mode, "sample") == 0 ||
		    strcmp(mode, "ss") == 0)
			better = BETTER_LOWER;
		if (!metric(b, "score", json_get(e, "primaryMetric"), better)) {
			snprintf(msg, msgsz, "[%ld]: primaryMetric.score: not a number", k);
			return -1;
		}
		cJSON_ArrayForEach(v, json_get(e, "secondaryMetrics")) {
			const char *name = v->string;
			if (strncmp(name, "\xc2\xb7", 2) == 0)
				name += 2;
			if (!metric(b, name, v, BETTER_UNKNOWN)) {
				snprintf(msg, msgsz, "[%ld]: secondaryMetrics: a score is not a number", k);
				return -1;
			}
		}
	}
	return 0;
}
