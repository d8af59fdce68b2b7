/*
 * Unit tests for perf-changes' library seams: the --incremental state file
 * (lane/change_state.h: its checksums, and the states that are stale) and
 * the cohorts (lane/cohort.h: the cohort key, what is a measurement, and
 * points that go to the spill file and come back as they were read).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/canon.h"
#include "core/json.h"
#include "lane/change_state.h"
#include "lane/cohort.h"
#include "lane/history.h"
#include "lane/policy.h"
#include "lane/store/read.h"
#include "tap.h"

static char dir[] = "/tmp/perf-change-state-XXXXXX";

static cJSON *
parse(const char *text)
{
	json_error e;

	return json_parse(text, strlen(text), &e);
}

/* Writes text to dir/name; returns the path (static). */
static const char *
put(const char *name, const char *text)
{
	static char path[512];
	FILE *fp;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fp = fopen(path, "w");
	fputs(text, fp);
	fclose(fp);
	return path;
}

/* The state line of the JSON text into out. */
static void
line_of(buf *out, const char *text)
{
	cJSON *o = parse(text);

	change_state_line(out, o);
	cJSON_Delete(o);
}

/* How many series a state file text loads for the options of head. */
static size_t
loaded(const char *text, const cJSON *head)
{
	struct change_state st = CHANGE_STATE_INIT;
	size_t n;

	change_state_load(&st, put("state", text), head);
	n = st.nsaved;
	for (size_t i = 0; i < st.nsaved; i++) {
		free(st.saved[i].series);
		free(st.saved[i].early);
		free(st.saved[i].memo);
	}
	free(st.saved);
	return n;
}

static void
test_lines(void)
{
	buf b = BUF_INIT;
	char hex[SHA256_HEX], want[200];
	const char *why = NULL;
	char *s;

	line_of(&b, "{\"a\":1,\"b\":\"x\"}");
	canon_sha256_hex("{\"a\":1,\"b\":\"x\"}", 15, hex);
	snprintf(want, sizeof want, "{\"a\":1,\"b\":\"x\",\"sum\":\"%s\"}\n", hex);
	is_str(b.s, want, "a state line: its JSON, then the SHA-256 of it as the last member");
	b.s[--b.len] = '\0';
	s = change_state_checked(b.s, b.len, &why);
	is_str(s, "{\"a\":1,\"b\":\"x\"}", "a line whose checksum holds: its content");
	buf_free(&b);

	line_of(&b, "{\"a\":1,\"b\":\"x\"}");
	b.s[--b.len] = '\0';
	b.s[5] = '2';
	ok(change_state_checked(b.s, b.len, &why) == NULL && strcmp(why, "checksum mismatch") == 0,
	    "one byte changed: the checksum fails");
	buf_free(&b);

	buf_adds(&b, "{\"a\":1}");
	ok(change_state_checked(b.s, b.len, &why) == NULL &&
	    strcmp(why, "malformed state line, no checksum") == 0, "a line without a sum");
	buf_free(&b);
}

static void
test_load(void)
{
	cJSON *head = change_state_header(50, 0.001, false), *other;
	buf b = BUF_INIT, h = BUF_INIT;
	buf plain = BUF_INIT;
	char series[300];
	struct change_state st = CHANGE_STATE_INIT;
	struct saved *sv;

	json_write(&plain, head, JSON_COMPACT, NULL);
	is_str(plain.s, "{\"perf_changes_state\":2,\"window\":50,\"pvalue\":0.001,\"all\":false}",
	    "the header: format 2 and the options the splits depend on");
	change_state_line(&h, head);
	snprintf(series, sizeof series, "{\"series\":\"k\",\"n\":3,\"digest\":\"%064d\","
	    "\"resume\":1,\"weak\":[1],\"merge\":[\"0 1 3 0x1p+0 0x1p+1 0x0p+0 0x0p+0 0x1p-20\"]}", 0);
	buf_adds(&b, h.s);
	line_of(&b, series);
	ok(loaded(b.s, head) == 1, "a state for these options is loaded");

	change_state_load(&st, put("state", b.s), head);
	ok(st.nsaved == 1 && st.saved[0].n == 3 && st.saved[0].resume == 1 &&
	    st.saved[0].nearly == 1 && st.saved[0].early[0] == 1 && st.saved[0].nmemo == 1 &&
	    st.saved[0].memo[0].cp.index == 1 && st.saved[0].memo[0].cp.mean_after == 2,
	    "a series line: its length, resume point, weak points and merge");
	ok(change_state_find(&st, "k", 2) == NULL, "never for a series shorter than the saved one");
	ok(change_state_find(&st, "other", 3) == NULL, "never for another series");
	sv = change_state_find(&st, "k", 4);
	ok(sv == &st.saved[0], "for the same series grown");
	ok(change_state_find(&st, "k", 4) == NULL, "taken once");

	other = change_state_header(40, 0.001, false);
	ok(loaded(b.s, other) == 0, "a state written for another window is stale");
	cJSON_Delete(other);
	other = change_state_header(50, 0.001, true);
	ok(loaded(b.s, other) == 0, "a state written without --all is stale with it");
	cJSON_Delete(other);

	b.s[h.len + 12] ^= 1;
	ok(loaded(b.s, head) == 0, "a series line whose checksum fails: the whole state is stale");

	buf_free(&b);
	buf_adds(&b, "{\"perf_changes_state\":1,\"window\":50,\"pvalue\":0.001,\"all\":false}\n");
	ok(loaded(b.s, head) == 0, "a state of format 1, without checksums, is stale");
	buf_free(&b);

	buf_adds(&b, h.s);
	line_of(&b, "{\"series\":\"k\",\"n\":3,\"digest\":\"x\",\"resume\":1,\"weak\":[]}");
	ok(loaded(b.s, head) == 0, "a series line with a malformed digest is stale");
	buf_free(&b);

	buf_adds(&b, h.s);
	snprintf(series, sizeof series, "{\"series\":\"k\",\"n\":3,\"digest\":\"%064d\","
	    "\"resume\":3,\"weak\":[]}", 0);
	line_of(&b, series);
	ok(loaded(b.s, head) == 0, "a split that resumes past its series is stale");

	unlink(put("state", ""));
	change_state_load(&st, "/nonexistent/state", head);
	ok(st.nsaved == 1, "a state file that is not there loads nothing");
	free(st.saved[0].series);
	free(st.saved[0].early);
	free(st.saved[0].memo);
	free(st.saved);
	buf_free(&plain);
	buf_free(&b);
	buf_free(&h);
	cJSON_Delete(head);
}

static void
test_digest(void)
{
	double x[1000];
	char all[SHA256_HEX], at[SHA256_HEX], want[SHA256_HEX], none[SHA256_HEX] = "";

	for (int i = 0; i < 1000; i++)
		x[i] = i * 0.5 - 7;
	change_state_digest(x, 600, want, SIZE_MAX, none);
	change_state_digest(x, 1000, all, 600, at);
	is_str(at, want, "the digest of a prefix, in the same pass, across 512-value blocks");
	ok(none[0] == '\0', "no prefix digest asked, none written");
	change_state_digest(x, 1000, want, SIZE_MAX, none);
	is_str(all, want, "the digest of the whole is the same with a prefix asked");
	x[999] = 1;
	change_state_digest(x, 1000, want, SIZE_MAX, none);
	ok(strcmp(all, want) != 0, "the digest changes with the last value");
}

/* A store hit for rec at path. */
static void
hit_of(struct store_hit *h, const cJSON *rec, const char *path)
{
	memset(h, 0, sizeof *h);
	h->record = rec;
	h->path = path;
	h->instant = store_record_instant(rec);
}

static void
test_cohort(void)
{
	/* Static: what the cohorts hold stays reachable, as in perf-changes. */
	static struct cohorts cs = COHORTS_INIT;
	static struct json_keyset *ks;
	struct store_hit hit;
	struct view w;
	struct cohort *c;
	buf key = BUF_INIT, pts = BUF_INIT;
	char text[400];
	cJSON *rec;

	ks = cohort_keyset();
	rec = parse("{\"model_id\":\"m\",\"gpu_type\":\"g\"}");
	cohort_view(ks, rec, &w);
	ok(cohort_key(&w, &key) && strcmp(key.s, "legacy\x1fm\x1fg") == 0,
	    "a legacy record's cohort: its model and GPU");
	ok(cohort_measured(&w, false), "a legacy record without a verdict is a measurement");
	cJSON_Delete(rec);
	buf_free(&key);

	rec = parse("{\"workload_id\":\"w\",\"variant_id\":\"v\",\"result_schema_version\":2,"
	    "\"run_source\":\"pull_request\",\"baseline_eligible\":false}");
	cohort_view(ks, rec, &w);
	ok(!cohort_key(&w, &key), "an incomplete v2 identity has no cohort");
	ok(!cohort_measured(&w, false) && cohort_measured(&w, true),
	    "a pull-request run is no measurement, but with --all");
	cJSON_Delete(rec);
	buf_free(&key);

	/* Every point spilled at once: they come back in the order read. */
	cs.spill_at = 0;
	for (int i = 0; i < 3; i++) {
		snprintf(text, sizeof text, "{\"model_id\":\"m\",\"gpu_type\":\"g%s\","
		    "\"timestamp\":\"2026-06-1%dT00:00:00+00:00\",\"commit_sha\":\"c%d\",\"%s\":%d.5}",
		    i == 2 ? "2" : "", 3 - i, i, metric_table[0].key, i);
		rec = parse(text);
		snprintf(text, sizeof text, "m/%d.json", i);
		hit_of(&hit, rec, text);
		cohort_view(ks, rec, &w);
		buf_reset(&key);
		cohort_key(&w, &key);
		cohort_add_series(&cs, &hit, &w, &key, key.len, NULL, true);
		cJSON_Delete(rec);
	}
	ok(cs.n == 2 && cs.spill_fd >= 0 && cs.pending == 0,
	    "two cohorts, their points in the spill file");
	c = cs.c[0];
	ok(c->nchunks == 2 && c->pending.len == 0, "a cohort's points spilled as two chunks");
	cohort_load_points(&cs, c, &pts);
	cohort_decode_points(c, pts.s, pts.len);
	ok(c->h.n == 2 && c->h.p[0].v[0] == 0.5 && c->h.p[1].v[0] == 1.5 && c->h.p[0].has[0] &&
	    !c->h.p[0].has[1], "the points back as read: values and which metrics they have");
	is_str(c->h.p[1].commit, "c1", "their commits");
	is_str(c->latest_path, "m/0.json", "the latest record is the newest timestamp's");
	ok(c->nchunks == 0 && c->chunks == NULL, "loaded points are dropped from the cohort");
	history_free(&c->h);
	buf_free(&pts);
	buf_free(&key);
	close(cs.spill_fd);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	setenv("TMPDIR", dir, 1);
	test_lines();
	test_load();
	test_digest();
	test_cohort();
	unlink(put("state", ""));
	rmdir(dir);
	return done_testing();
}
