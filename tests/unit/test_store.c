/* Unit tests for store: reading, filters, the prefilter, paths, instants. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/isotime.h"
#include "core/json.h"
#include "lane/store/read.h"
#include "tap.h"

static char dir[] = "/tmp/perf-store-XXXXXX";

static void
put(const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *fp;

	snprintf(path, sizeof path, "%s/%s", dir, rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	atomic_mkdirs(path);
	*slash = '/';
	fp = fopen(path, "w");
	fputs(text, fp);
	fclose(fp);
}

static void
collect(const struct store_hit *h, void *ctx)
{
	buf *b = ctx;

	buf_addf(b, "%s%s%s", b->len ? " " : "", h->path, h->match[0] ? "" : "!");
}

static char *
scan(const char *spec, const struct store_query *q, int nq, char **raised)
{
	buf b = BUF_INIT;
	store *s = store_open(spec);

	if (s == NULL)
		return NULL;
	if (store_scan(s, q, nq, collect, &b, raised) != 0)
		buf_adds(&b, "(error)");
	store_close(s);
	return buf_detach(&b);
}

int
main(void)
{
	struct store_query q[2];
	json_error e;
	cJSON *v;
	char *got, *raised, *p, sub[600];
	const char *text;

	mkdtemp(dir);
	put("m/a.json", "{\"workload_id\":\"w\",\"variant_id\":\"v\",\"success\":true}");
	put("m/b.json", "{\"workload_id\":\"w\",\"variant_id\":\"other\"}");
	put("m/c.json", "{\"workload_id\":\"w\",\"variant_id\":\"v\",\"success\":false}");
	put("m/d.json", "{\"workload_id\":\"w\",\"variant_id\":\"v\",\"run_source\":\"pr\","
	    "\"baseline_eligible\":false}");
	put("m/e.txt", "{\"workload_id\":\"w\",\"variant_id\":\"v\"}");
	put(".hidden/f.json", "{\"workload_id\":\"w\",\"variant_id\":\"v\"}");
	put("m/.g.json", "{\"workload_id\":\"w\",\"variant_id\":\"v\"}");
	put("n/deep/h.json", "{\"workload_id\":\"w\",\"variant_id\":\"v\",\"baseline_eligible\":true}");
	/* Broken but without the cohort's strings: never parsed, never warned. */
	put("n/skip.json", "{\"workload_id\":\"x\",\"oops");

	memset(q, 0, sizeof q);
	q[0].keys[0] = "workload_id";
	q[0].values[0] = "w";
	q[0].keys[1] = "variant_id";
	q[0].values[1] = "v";
	q[0].nkeys = 2;
	got = scan(dir, q, 1, &raised);
	ok(got != NULL && raised == NULL, "a directory store scans");
	/* Order is the walk's; sort the words for the comparison. */
	ok(strstr(got, "m/a.json") && strstr(got, "m/c.json") && strstr(got, "m/d.json") &&
	    strstr(got, "n/deep/h.json") && !strstr(got, "b.json") && !strstr(got, "e.txt") &&
	    !strstr(got, "hidden") && !strstr(got, ".g.json"),
	    "*.json files below, hidden ones skipped, identity filtered: %s", got);
	free(got);

	q[0].successful_only = true;
	q[0].eligible_only = true;
	got = scan(dir, q, 1, &raised);
	ok(strstr(got, "m/a.json") && strstr(got, "n/deep/h.json") && !strstr(got, "c.json") &&
	    !strstr(got, "d.json"), "successful and eligible filters: %s", got);
	free(got);

	q[1] = q[0];
	q[1].values[1] = "other";
	q[1].successful_only = q[1].eligible_only = false;
	got = scan(dir, q, 2, &raised);
	ok(strstr(got, "m/b.json!") != NULL, "each hit says which queries it matches: %s", got);
	free(got);

	put("z/list.json", "[1]");
	put("y/bad.json", "{\"a\":\"\xff\"}");
	got = scan(dir, q, 1, &raised);
	is_str(raised, "'utf-8' codec can't decode byte 0xff in position 6: invalid start byte",
	    "the first failing file in path order raises");
	free(raised);
	free(got);

	/* A typo must not read as an empty history (issue 22 item 4). */
	fprintf(stderr, "# (expect a no-such-store diagnostic)\n");
	ok(scan("/nonexistent/store", q, 1, &raised) == NULL, "a missing store is an error");
	snprintf(sub, sizeof sub, "%s/m/a.json", dir);
	fprintf(stderr, "# (expect a not-a-directory diagnostic)\n");
	ok(scan(sub, q, 1, &raised) == NULL, "a file is not a store");

	text = "{\"model_id\":\"a/b\",\"timestamp\":\"2026-06-16T00:00:00+00:00\","
	    "\"commit_sha\":\"\"}";
	v = json_parse(text, strlen(text), &e);
	p = store_record_path(v);
	is_str(p, "a_b/2026-06-16T00_00_00_00_00_unknown.json",
	    "store path: sanitized parts, unknown commit");
	free(p);
	ok(store_record_instant(v) == 1781568000000000LL, "instant of the timestamp");
	json_set(v, "timestamp", json_new_string("junk"));
	ok(store_record_instant(v) == ISOTIME_MIN, "an unparsable timestamp is the oldest");
	json_set(v, "timestamp", json_new_int(5));
	ok(store_record_path(v) == NULL, "a non-string timestamp has no path");
	cJSON_Delete(v);

	/* One thread count for the scan and for perf-changes' analysis. */
	setenv("PERF_STORE_THREADS", "8", 1);
	ok(store_thread_count(0) == 8 && store_thread_count(2) == 8,
	    "PERF_STORE_THREADS wins over what is asked, and over the 4 of the default");
	setenv("PERF_STORE_THREADS", "1000", 1);
	ok(store_thread_count(0) == STORE_MAX_THREADS, "PERF_STORE_THREADS at most 64");
	setenv("PERF_STORE_THREADS", "junk", 1);
	ok(store_thread_count(3) == 1, "a PERF_STORE_THREADS that is no number is 1");
	setenv("PERF_STORE_THREADS", "-2", 1);
	ok(store_thread_count(3) == 1, "a PERF_STORE_THREADS below 1 is 1");
	unsetenv("PERF_STORE_THREADS");
	ok(store_thread_count(3) == 3 && store_thread_count(9) == 4,
	    "without the variable, what is asked, at most 4");
	ok(store_thread_count(0) >= 1 && store_thread_count(0) <= 4,
	    "without either, the CPUs, at most 4: %d", store_thread_count(0));
	return done_testing();
}
