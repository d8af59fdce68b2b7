/*
 * Unit tests for import: the unit conversion table, the variant of a
 * params object, metric samples and means.
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

	return done_testing();
}
