/*
 * Unit tests for import: the unit conversion table, the variant of a
 * params object, metric samples and means, and records written without
 * a tree as json_write() writes the tree.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "lane/import/import.h"
#include "tap.h"

static void
unit(const char *u, const char *canon, double factor)
{
	const char *c;
	double f = import_unit(u, &c);

	ok(strcmp(c, canon) == 0 && f == factor, "%s is %g %s (got %g %s)", u, factor, canon, f, c);
}

/* text with its "timestamp" value blanked (records are made at different times). */
static void
blank_time(char *text)
{
	char *t = strstr(text, "\"timestamp\":\"");

	if (t != NULL)
		for (t += 13; *t != '"' && *t != '\0'; t++)
			*t = 'T';
}

/*
 * Every record of doc (format fmt) written by import_record_write() is
 * json_write() of import_record(); returns how many differ.
 */
static int
records_as_trees(const char *fmt, const char *doc, const struct import_identity *id)
{
	struct import_suite s;
	int bad = 0;

	if (import_text(fmt, NULL, doc, strlen(doc), "doc", &s) != 0)
		return -1;
	for (size_t i = 0; i < s.nb; i++) {
		buf fast = BUF_INIT, tree = BUF_INIT;
		cJSON *rec = import_record(&s, &s.b[i], id);
		int rf = import_record_write(&s, &s.b[i], id, &fast);
		int rt = json_write(&tree, rec, JSON_COMPACT, NULL);

		blank_time(fast.s);
		blank_time(tree.s);
		if (rf != rt || (rf == 0 && strcmp(fast.s, tree.s) != 0)) {
			printf("# record %zu:\n#  %s\n#  %s\n", i, fast.s, tree.s);
			bad++;
		}
		if (rf != 0 && fast.len != 0)
			bad++;	/* a failed write leaves nothing */
		cJSON_Delete(rec);
		buf_free(&fast);
		buf_free(&tree);
	}
	import_suite_free(&s);
	return bad;
}

int
main(void)
{
	struct import_bench b;
	json_error e;
	cJSON *p;
	char *v;

	unit("ns", "s", 1e-9);
	unit("us", "s", 1e-6);
	unit("\xc2\xb5s", "s", 1e-6);
	unit("ms", "s", 1e-3);
	unit("ns/op", "s", 1e-9);
	unit("B/op", "B", 1);
	unit("KiB", "B", 1024);
	unit("MB", "B", 1e6);
	unit("MB/s", "B/s", 1e6);
	unit("MB/sec", "B/s", 1e6);
	unit("ops/ms", "1/s", 1e3);
	unit("ops/s", "1/s", 1);
	unit("items/s", "items/s", 1);
	unit("allocs/op", "allocs/op", 1);
	unit("widgets", "widgets", 1);
	unit("", "", 1);
	/* The old importer's own table, row by row: each converts as before. */
	unit("s", "s", 1);
	unit("sec", "s", 1);
	unit("seconds", "s", 1);
	unit("\xce\xbcs", "s", 1e-6);
	unit("ps", "s", 1e-12);
	unit("min", "s", 60);
	unit("s/op", "s", 1);
	unit("ms/op", "s", 1e-3);
	unit("us/op", "s", 1e-6);
	unit("\xc2\xb5s/op", "s", 1e-6);
	unit("ps/op", "s", 1e-12);
	unit("B", "B", 1);
	unit("bytes", "B", 1);
	unit("byte", "B", 1);
	unit("KB", "B", 1e3);
	unit("kB", "B", 1e3);
	unit("GB", "B", 1e9);
	unit("MiB", "B", 1048576.0);
	unit("GiB", "B", 1073741824.0);
	unit("B/s", "B/s", 1);
	unit("KB/s", "B/s", 1e3);
	unit("kB/s", "B/s", 1e3);
	unit("GB/s", "B/s", 1e9);
	unit("KiB/s", "B/s", 1024.0);
	unit("MiB/s", "B/s", 1048576.0);
	unit("GiB/s", "B/s", 1073741824.0);
	unit("KB/sec", "B/s", 1e3);
	unit("GB/sec", "B/s", 1e9);
	unit("1/s", "1/s", 1);
	unit("Hz", "1/s", 1);
	unit("ops/us", "1/s", 1e6);
	unit("ops/\xc2\xb5s", "1/s", 1e6);
	unit("ops/ns", "1/s", 1e9);
	unit("ops/min", "1/s", 1.0 / 60);
	/* What core's table knows, the importer converts too (JMH's min/op). */
	unit("min/op", "s", 60);
	unit("TB", "B", 1e12);

	p = json_parse("{\"mode\":\"thrpt\",\"size\":1000,\"on\":true}", 38, &e);
	v = import_variant(p);
	is_str(v, "mode=thrpt,size=1000,on=True", "the variant: params in the tool's order, as Python's str()");
	free(v);
	cJSON_Delete(p);
	p = json_new_object();
	v = import_variant(p);
	is_str(v, "default", "no params: the default variant");
	free(v);
	cJSON_Delete(p);

	memset(&b, 0, sizeof b);
	import_push_sample(&b, "time", 2, "us");
	import_push_sample(&b, "time", 4, "us");
	for (int i = 0; i < 10; i++)
		import_push_sample(&b, "n", i, "");
	import_finish_means(&b);
	ok(b.nm == 2 && b.m[0].nsamples == 2 && b.m[0].samples[1] == 4e-6 &&
	    b.m[0].value == 3e-6, "samples converted, their mean the value");
	ok(b.m[1].nsamples == 10 && b.m[1].value == 4.5 && strcmp(b.m[1].unit, "") == 0,
	    "ten samples (the array grows)");
	import_push_sample(&b, "nan", NAN, "s");
	import_finish_means(&b);
	ok(b.m[2].error != NULL && strcmp(b.m[2].error, "sample 1 is not a finite number (NaN)") == 0,
	    "a non-finite sample fails its metric");
	import_bench_free(&b);

	static const char gb[] =
	    "{\"context\":{\"executable\":\"/x/codec\",\"num_cpus\":4,\"library_version\":\"v1.8.3\"},"
	    "\"benchmarks\":[{\"name\":\"BM_A/8\",\"run_name\":\"BM_A/8\",\"run_type\":\"iteration\","
	    "\"repetitions\":2,\"threads\":1,\"real_time\":1.5,\"cpu_time\":1.25,\"time_unit\":\"us\","
	    "\"items_per_second\":123456.789,\"frames\":4.0},"
	    "{\"name\":\"BM_A/8\",\"run_name\":\"BM_A/8\",\"run_type\":\"iteration\",\"repetitions\":2,"
	    "\"threads\":1,\"real_time\":1.7000000000000002,\"cpu_time\":0.1,\"time_unit\":\"us\",\"frames\":NaN},"
	    "{\"name\":\"BM_\\\"q\\\" \\u00e9\\ud83d\\ude00\",\"error_occurred\":true,\"error_message\":\"no\\ndevice\"}]}";
	static const char pk[] =
	    "{\"benchmarks\":[{\"name\":\"decode\",\"params\":{\"batch\":8,\"f\":2.5,\"m\":\"tiny\"},"
	    "\"metrics\":{\"tok\":{\"value\":812.5,\"unit\":\"1/s\",\"better\":\"higher\",\"samples\":[800,825.0]},"
	    "\"lat\":{\"value\":1e-7,\"unit\":\"ms\",\"better\":\"lower\"}}},"
	    "{\"name\":\"bad\",\"params\":{\"x\":Infinity},\"metrics\":{\"t\":{\"value\":1,\"unit\":\"s\"}}}]}";
	struct import_identity id;
	static const char *const over[] = { "workload_id=w\"x", "benchmark_version=7", "commit=c0", NULL };

	memset(&id, 0, sizeof id);
	ok(records_as_trees("google-benchmark", gb, &id) == 0,
	    "Google Benchmark records written directly are the trees' bytes (failed, escaped, NaN)");
	ok(records_as_trees(NULL, pk, &id) == 0,
	    "perfkite records: params, directions, a non-finite param writes nothing");
	id.overrides = over;
	id.device = "cpu \"x\"";
	id.hardware = json_parse("{\"device_type\":\"cpu\",\"gpus\":[]}", 32, &e);
	id.thresholds = id.hardware;
	id.worker_log = "/tmp/w.log";
	ok(records_as_trees("google-benchmark", gb, &id) == 0 && records_as_trees(NULL, pk, &id) == 0,
	    "the same with --identity overrides, thresholds, a worker log and a hardware profile");
	cJSON_Delete(id.hardware);

	return done_testing();
}
