/*
 * pytest: pytest-benchmark's --benchmark-json. One benchmark per
 * fullname (its params already in it); time is stats.mean, the samples
 * stats.data when --benchmark-save-data kept them; numbers in extra_info
 * are metrics of their own, of unknown direction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "lane/import/parsers.h"

/* The stable facts of machine_info: hardware, then software. */
static void
machine(const cJSON *doc, struct import_suite *s)
{
	const cJSON *mi = json_get(doc, "machine_info"), *cpu = json_get(mi, "cpu"), *v;
	static const char *const cpu_keys[] = { "brand_raw", "brand", "arch", "count",
	    "vendor_id_raw", "vendor_id" };
	static const char *const sw_keys[] = { "python_implementation", "python_version",
	    "python_compiler", "system", "release" };
	cJSON *c = json_new_object();

	s->hw_context = json_new_object();
	if ((v = json_get(mi, "machine")) != NULL)
		json_set(s->hw_context, "machine", cJSON_Duplicate(v, true));
	for (size_t i = 0; i < sizeof cpu_keys / sizeof *cpu_keys; i++)
		if ((v = json_get(cpu, cpu_keys[i])) != NULL)
			json_set(c, cpu_keys[i], cJSON_Duplicate(v, true));
	json_set(s->hw_context, "cpu", c);
	s->sw_context = json_new_object();
	for (size_t i = 0; i < sizeof sw_keys / sizeof *sw_keys; i++)
		if ((v = json_get(mi, sw_keys[i])) != NULL)
			json_set(s->sw_context, sw_keys[i], cJSON_Duplicate(v, true));
	if (cJSON_IsString(json_get(doc, "version")))
		s->tool_version = estrdup(json_str(doc, "version"));
}

int
pytest_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz)
{
	const cJSON *rows = json_get(doc, "benchmarks"), *row, *v;
	long k = -1;

	if (!cJSON_IsArray(rows)) {
		snprintf(msg, msgsz, "benchmarks: not an array");
		return -1;
	}
	machine(doc, s);
	cJSON_ArrayForEach(row, rows) {
		const cJSON *stats = json_get(row, "stats"), *data = json_get(stats, "data");
		const char *id = json_str(row, "fullname"), *sep;
		struct import_bench *b;
		double mean;

		k++;
		if (*id == '\0')
			id = json_str(row, "name");
		if (*id == '\0' || !import_num(stats, "mean", &mean)) {
			snprintf(msg, msgsz, "benchmarks[%ld]: %s", k, *id == '\0' ?
			    "no fullname or name" : "stats.mean: not a number");
			return -1;
		}
		b = import_add_bench(s, id);
		b->id_has_params = true;
		if ((sep = strstr(id, "::")) != NULL)
			b->workload = estrndup(id, (size_t)(sep - id));
		if (cJSON_IsObject(v = json_get(row, "params")))
			cJSON_ArrayForEach(v, v)
				json_set(b->params, v->string, cJSON_Duplicate(v, true));
		if (cJSON_IsString(v = json_get(row, "group")))
			json_set(b->params, "group", cJSON_Duplicate(v, true));
		if (cJSON_IsObject(v = json_get(row, "options")))
			cJSON_ArrayForEach(v, v)
				json_set(b->settings, v->string, cJSON_Duplicate(v, true));
		import_add_metric(b, "time", mean, "s");
		if (cJSON_IsArray(data)) {
			struct import_metric *m = &b->m[b->nm - 1];
			size_t n = (size_t)cJSON_GetArraySize(data), i = 0;
			double *d = emalloc((n ? n : 1) * sizeof *d);
			cJSON_ArrayForEach(v, data)
				d[i++] = cJSON_IsNumber(v) ? v->valuedouble : 0.0 / 0.0;
			import_set_samples(m, d, n, "s");
			free(d);
		}
		cJSON_ArrayForEach(v, json_get(row, "extra_info"))
			if (cJSON_IsNumber(v) && strcmp(v->string, "time") != 0)
				import_add_metric(b, v->string, v->valuedouble, "");
	}
	return 0;
}
