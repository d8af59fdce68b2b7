/*
 * gbench: Google Benchmark's JSON (--benchmark_format=json,
 * --benchmark_out). One benchmark per run_name; its repetitions are the
 * samples. Aggregate rows (_mean, _median, _stddev, _cv) are used only
 * when there are no repetition rows (report_aggregates_only), and then
 * the mean; BigO and RMS rows are not benchmarks. An errored or skipped
 * benchmark (error_occurred, skipped) is a failed one with its message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "lane/import/parsers.h"

/* Members that are not user counters, sorted for bsearch(). */
static const char *const fixed_keys[] = {
	"aggregate_name", "aggregate_unit", "big_o", "bytes_per_second", "complexity_n",
	"cpu_time", "error_message", "error_occurred", "family_index", "items_per_second",
	"iterations", "label", "name", "per_family_instance_index", "real_time",
	"repetition_index", "repetitions", "rms", "run_name", "run_type", "skip_message",
	"skipped", "threads", "time_unit",
};

static int
cmp_key(const void *k, const void *e)
{
	return strcmp(k, *(const char *const *)e);
}

static bool
fixed_key(const char *k)
{
	return bsearch(k, fixed_keys, sizeof fixed_keys / sizeof *fixed_keys,
	    sizeof *fixed_keys, cmp_key) != NULL;
}

/* The benchmark's state while its rows are read. */
enum { SEEN_NONE, SEEN_AGGREGATE, SEEN_ITERATION };

/* The metrics of one row, as samples of b. */
static void
push_row(struct import_bench *b, const cJSON *row)
{
	const char *tu = json_str(row, "time_unit");
	const cJSON *v;
	double d;

	if (*tu == '\0')
		tu = "ns";
	if (import_num(row, "real_time", &d))
		import_push_sample(b, "time", d, tu);
	if (import_num(row, "cpu_time", &d))
		import_push_sample(b, "cpu_time", d, tu);
	if (import_num(row, "items_per_second", &d))
		import_push_sample(b, "items_per_second", d, "items/s");
	if (import_num(row, "bytes_per_second", &d))
		import_push_sample(b, "bytes_per_second", d, "B/s");
	cJSON_ArrayForEach(v, row)
		if (cJSON_IsNumber(v) && !fixed_key(v->string))
			import_push_sample(b, v->string, v->valuedouble, "");
}

/* The settings that change what is measured. */
static void
settings(struct import_bench *b, const cJSON *row)
{
	const cJSON *v;

	if ((v = json_get(row, "repetitions")) != NULL && cJSON_IsNumber(v))
		json_set(b->settings, "repetitions", cJSON_Duplicate(v, true));
	if ((v = json_get(row, "threads")) != NULL && cJSON_IsNumber(v))
		json_set(b->settings, "threads", cJSON_Duplicate(v, true));
}

static void
context(const cJSON *doc, struct import_suite *s)
{
	const cJSON *ctx = json_get(doc, "context"), *v;
	const char *exe = json_str(ctx, "executable"), *slash;
	static const char *const hw[] = { "num_cpus", "mhz_per_cpu", "caches",
	    "cpu_scaling_enabled" };

	if (*exe != '\0') {
		slash = strrchr(exe, '/');
		s->workload = estrdup(slash != NULL ? slash + 1 : exe);
	}
	if (cJSON_IsString(json_get(ctx, "library_version")))
		s->tool_version = estrdup(json_str(ctx, "library_version"));
	s->hw_context = json_new_object();
	for (size_t i = 0; i < sizeof hw / sizeof *hw; i++)
		if ((v = json_get(ctx, hw[i])) != NULL)
			json_set(s->hw_context, hw[i], cJSON_Duplicate(v, true));
	if ((v = json_get(ctx, "library_build_type")) != NULL) {
		s->sw_context = json_new_object();
		json_set(s->sw_context, "library_build_type", cJSON_Duplicate(v, true));
	}
}

int
gbench_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz)
{
	const cJSON *rows = json_get(doc, "benchmarks"), *row;
	struct import_index *ix;
	unsigned char *seen = NULL;
	size_t seencap = 0;
	long i, k = 0;
	int rc = -1;

	if (!cJSON_IsArray(rows)) {
		snprintf(msg, msgsz, "benchmarks: not an array");
		return -1;
	}
	context(doc, s);
	ix = import_index_new();
	cJSON_ArrayForEach(row, rows) {
		const char *agg = json_str(row, "aggregate_name");
		const char *id = json_str(row, "run_name");
		bool aggregate = strcmp(json_str(row, "run_type"), "aggregate") == 0;
		struct import_bench *b;

		if (!cJSON_IsObject(row) || !cJSON_IsString(json_get(row, "name"))) {
			snprintf(msg, msgsz, "benchmarks[%ld]: not an object with a name", k);
			goto done;
		}
		k++;
		if (strcmp(agg, "BigO") == 0 || strcmp(agg, "RMS") == 0 ||
		    json_get(row, "big_o") != NULL || json_get(row, "rms") != NULL)
			continue;
		if (*id == '\0')
			id = json_str(row, "name");
		if ((i = import_index_find(ix, s, id)) < 0) {
			b = import_add_bench(s, id);
			i = (long)s->nb - 1;
			import_index_add(ix, s, i);
			if ((size_t)i >= seencap) {
				seencap = seencap ? seencap * 2 : 64;
				seen = erealloc(seen, seencap);
			}
			seen[i] = SEEN_NONE;
		}
		b = &s->b[i];
		if (cJSON_IsTrue(json_get(row, "error_occurred")) ||
		    cJSON_IsTrue(json_get(row, "skipped"))) {
			const char *m = json_str(row, "error_message");
			if (*m == '\0')
				m = json_str(row, "skip_message");
			if (b->error == NULL)
				b->error = estrdup(*m ? m : cJSON_IsTrue(json_get(row, "skipped")) ?
				    "skipped" : "error");
			continue;
		}
		if (aggregate) {
			/* The mean stands in only for a benchmark without repetitions. */
			if (seen[i] == SEEN_ITERATION || (strcmp(agg, "mean") != 0 &&
			    !(strcmp(agg, "median") == 0 && seen[i] == SEEN_NONE)))
				continue;
			if (seen[i] == SEEN_AGGREGATE && strcmp(agg, "mean") != 0)
				continue;
			for (size_t j = 0; j < b->nm; j++)
				b->m[j].nsamples = 0;
			seen[i] = SEEN_AGGREGATE;
			push_row(b, row);
			settings(b, row);
			continue;
		}
		if (seen[i] == SEEN_AGGREGATE)
			for (size_t j = 0; j < b->nm; j++)
				b->m[j].nsamples = 0;
		seen[i] = SEEN_ITERATION;
		push_row(b, row);
		settings(b, row);
	}
	for (size_t j = 0; j < s->nb; j++) {
		struct import_bench *b = &s->b[j];
		import_finish_means(b);
		if (seen[j] == SEEN_AGGREGATE)
			for (size_t m = 0; m < b->nm; m++) {
				free(b->m[m].samples);
				b->m[m].samples = NULL;
				b->m[m].nsamples = 0;
			}
		/* A benchmark that errored keeps no half of its measurements. */
		if (b->error != NULL)
			for (size_t m = 0; m < b->nm; m++) {
				free(b->m[m].name);
				free(b->m[m].unit);
				free(b->m[m].samples);
				free(b->m[m].error);
			}
		if (b->error != NULL)
			b->nm = 0;
	}
	rc = 0;
done:
	free(seen);
	import_index_free(ix);
	return rc;
}
