/*
 * generic: perfkite's own JSON (perfkite(7) "Generic benchmark JSON"):
 *   {"suite": "...", "benchmarks": [{"name": "...", "params": {...},
 *    "metrics": {"NAME": {"value": V, "unit": "U", "better": "lower"|"higher",
 *    "samples": [...]}}, "error": "..."}]}
 * and github-action-benchmark's arrays, [{"name", "unit", "value"}]: one
 * benchmark per name with the metric "value", whose direction is the one
 * --format customSmallerIsBetter or customBiggerIsBetter names.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "lane/import/parsers.h"

/* One metric object; false with msg on a bad one. */
static bool
metric(struct import_bench *b, const cJSON *m, char *msg, size_t msgsz)
{
	const cJSON *v = json_get(m, "value"), *better = json_get(m, "better"), *x;
	const cJSON *unit = json_get(m, "unit"), *smp = json_get(m, "samples");
	struct import_metric *im;
	double *d;
	size_t n = 0;

	if (!cJSON_IsObject(m) || !cJSON_IsNumber(v) || (unit != NULL && !cJSON_IsString(unit))) {
		snprintf(msg, msgsz, "want {\"value\": number, \"unit\": string}");
		return false;
	}
	if (better != NULL && (!cJSON_IsString(better) ||
	    (strcmp(better->valuestring, "lower") != 0 && strcmp(better->valuestring, "higher") != 0))) {
		snprintf(msg, msgsz, "better: not \"lower\" or \"higher\"");
		return false;
	}
	if (smp != NULL && !cJSON_IsArray(smp)) {
		snprintf(msg, msgsz, "samples: not an array");
		return false;
	}
	if (strlen(m->string) > IMPORT_NAME_MAX) {
		snprintf(msg, msgsz, "a name longer than %d bytes", IMPORT_NAME_MAX);
		return false;
	}
	im = import_add_metric(b, m->string, v->valuedouble, unit ? unit->valuestring : "");
	if (better != NULL)
		im->better = better->valuestring[0] == 'l' ? BETTER_LOWER : BETTER_HIGHER;
	if (smp != NULL) {
		d = emalloc((size_t)(cJSON_GetArraySize(smp) + 1) * sizeof *d);
		cJSON_ArrayForEach(x, smp)
			d[n++] = cJSON_IsNumber(x) ? x->valuedouble : NAN;
		import_set_samples(im, d, n, unit ? unit->valuestring : "");
		free(d);
	}
	return true;
}

/* github-action-benchmark's array: better from the format's name. */
static int
gab(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz)
{
	enum better better = strcmp(s->format, "customBiggerIsBetter") == 0 ?
	    BETTER_HIGHER : strcmp(s->format, "customSmallerIsBetter") == 0 ?
	    BETTER_LOWER : BETTER_UNKNOWN;
	const cJSON *e;
	long k = -1;

	cJSON_ArrayForEach(e, doc) {
		const char *name = json_str(e, "name");
		const cJSON *v = json_get(e, "value");
		struct import_metric *m;

		k++;
		if (*name == '\0' || !cJSON_IsNumber(v)) {
			snprintf(msg, msgsz, "[%ld]: want name and a number value", k);
			return -1;
		}
		m = import_add_metric(import_add_bench(s, name), "value", v->valuedouble,
		    json_str(e, "unit"));
		m->better = better;
	}
	return 0;
}

int
generic_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz)
{
	const cJSON *e, *m, *v;
	long k = -1;
	char why[160];

	if (cJSON_IsArray(doc))
		return gab(doc, s, msg, msgsz);
	if (!cJSON_IsArray(json_get(doc, "benchmarks"))) {
		snprintf(msg, msgsz, "benchmarks: not an array");
		return -1;
	}
	if (cJSON_IsString(v = json_get(doc, "suite")))
		s->workload = estrdup(v->valuestring);
	cJSON_ArrayForEach(e, json_get(doc, "benchmarks")) {
		const char *name = json_str(e, "name");
		struct import_bench *b;

		k++;
		if (*name == '\0' || !cJSON_IsObject(json_get(e, "metrics"))) {
			snprintf(msg, msgsz, "benchmarks[%ld]: want a name and a metrics object", k);
			return -1;
		}
		b = import_add_bench(s, name);
		cJSON_ArrayForEach(v, json_get(e, "params"))
			json_set(b->params, v->string, cJSON_Duplicate(v, true));
		cJSON_ArrayForEach(v, json_get(e, "settings"))
			json_set(b->settings, v->string, cJSON_Duplicate(v, true));
		if (cJSON_IsString(v = json_get(e, "error")))
			b->error = estrdup(v->valuestring);
		cJSON_ArrayForEach(m, json_get(e, "metrics"))
			if (!metric(b, m, why, sizeof why)) {
				snprintf(msg, msgsz, "benchmarks[%ld].metrics.%.60s: %s", k,
				    m->string, why);
				return -1;
			}
	}
	return 0;
}
