/*
 * hyperfine: --export-json. One benchmark per result, by its command (the
 * -n name, or the command with its parameters expanded; parameters that
 * the name does not carry are appended to the id); time is the mean and
 * its samples the times; user_time, system_time; memory_usage_byte as
 * peak_memory when the version writes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "lane/import/parsers.h"

/* The numbers of an array (non-numbers as NaN); *n their count. */
static double *
numbers(const cJSON *arr, size_t *n)
{
	const cJSON *v;
	double *d;
	size_t i = 0;

	*n = (size_t)cJSON_GetArraySize(arr);
	d = emalloc((*n ? *n : 1) * sizeof *d);
	cJSON_ArrayForEach(v, arr)
		d[i++] = cJSON_IsNumber(v) ? v->valuedouble : 0.0 / 0.0;
	return d;
}

int
hyperfine_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz)
{
	const cJSON *rows = json_get(doc, "results"), *row, *v;
	long k = -1;

	cJSON_ArrayForEach(row, rows) {
		const char *cmd = json_str(row, "command");
		struct import_bench *b;
		struct import_metric *m;
		double mean, d, *arr;
		size_t n;

		k++;
		if (*cmd == '\0' || !import_num(row, "mean", &mean)) {
			snprintf(msg, msgsz, "results[%ld]: %s", k, *cmd == '\0' ?
			    "no command" : "mean: not a number");
			return -1;
		}
		b = import_add_bench(s, cmd);
		if (cJSON_IsObject(v = json_get(row, "parameters")))
			cJSON_ArrayForEach(v, v)
				json_set(b->params, v->string, cJSON_Duplicate(v, true));
		m = import_add_metric(b, "time", mean, "s");
		if (cJSON_IsArray(v = json_get(row, "times"))) {
			arr = numbers(v, &n);
			import_set_samples(m, arr, n, "s");
			free(arr);
		}
		if (import_num(row, "user", &d))
			import_add_metric(b, "user_time", d, "s");
		if (import_num(row, "system", &d))
			import_add_metric(b, "system_time", d, "s");
		v = json_get(row, "memory_usage_byte");
		if (cJSON_IsNumber(v)) {
			import_add_metric(b, "peak_memory", v->valuedouble, "B");
		} else if (cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0) {
			arr = numbers(v, &n);
			d = 0;
			for (size_t i = 0; i < n; i++)
				d += arr[i];
			m = import_add_metric(b, "peak_memory", d / (double)n, "B");
			import_set_samples(m, arr, n, "B");
			free(arr);
		}
	}
	return 0;
}
