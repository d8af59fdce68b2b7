/*
 * Unit tests for gbench_fast(), Google Benchmark's file read without a
 * tree: on generated documents (rows grouped, repeated and aggregate,
 * errored, skipped, BigO; numbers of every kind; repeated names, escapes,
 * NaN, nested values, rows that are not objects, members in any order)
 * whatever it reads makes the suite gbench_parse() makes of the parsed
 * tree, and it is recognised only where the tree is; the usual file takes
 * the quick path.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "lane/import/import.h"
#include "lane/import/parsers.h"
#include "tap.h"

static uint64_t rng = 24;

static unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static const char *
pick(const char *const *v, size_t n)
{
	return v[rnd((unsigned)n)];
}
#define PICK(v) pick(v, sizeof v / sizeof *v)

/* A number as a tool or a hand writes it. */
static void
number(buf *b)
{
	static const char *const odd[] = { "-0", "0", "-0.0", "1e400", "-1e400", "4.9e-324",
	    "2.2250738585072011e-308", "9007199254740993", "12345678901234567890123",
	    "0.1", "1E+2", "3.0", "100000", "1.7976931348623157e308", "NaN", "Infinity",
	    "-Infinity", "123456789012345678", "0.30000000000000004" };

	switch (rnd(12)) {
	case 0: buf_adds(b, PICK(odd)); break;
	case 1: buf_addf(b, "%u", rnd(100000)); break;
	case 2: buf_addf(b, "%.17g", (double)rnd(1000000) / 997.0 * pow(10, (int)rnd(40) - 20)); break;
	case 3: buf_addf(b, "%.*e", (int)rnd(20), (double)rnd(1000000) / 7.0); break;
	default: buf_addf(b, "%.15g", (double)rnd(100000) / 3.0); break;
	}
}

/* A string value: mostly plain, sometimes escaped or not ASCII. */
static void
string(buf *b, const char *s)
{
	switch (rnd(100)) {
	case 0: buf_addf(b, "\"%s\\\"x\"", s); break;
	case 1: buf_addf(b, "\"%s\\u00e9\"", s); break;
	case 2: buf_addf(b, "\"%s\xc3\xa9\"", s); break;
	default: buf_addf(b, "\"%s\"", s); break;
	}
}

/* Any value a member may hold. */
static void
value(buf *b, int kind)
{
	static const char *const words[] = { "iteration", "aggregate", "mean", "median",
	    "stddev", "cv", "BigO", "RMS", "ns", "us", "ms", "s", "", "BM_A", "BM_B/8",
	    "oops" };

	switch (kind < 0 ? (int)rnd(9) : kind) {
	case 0: string(b, PICK(words)); break;
	case 1: buf_adds(b, "true"); break;
	case 2: buf_adds(b, "false"); break;
	case 3: buf_adds(b, "null"); break;
	case 4: buf_adds(b, "{\"a\":[1,2,{\"b\":null}]}"); break;
	case 5: buf_adds(b, "[]"); break;
	default: number(b); break;
	}
}

static void
member(buf *b, const char *key, int kind, bool *first, const char *sep)
{
	if (!*first)
		buf_addc(b, ',');
	*first = false;
	buf_adds(b, sep);
	buf_addf(b, "\"%s\":", key);
	if (rnd(2))
		buf_addc(b, ' ');
	value(b, kind);
}

/* One row: mostly a usual one, with every odd thing now and then. */
static void
row(buf *b, const char *sep)
{
	static const char *const ids[] = { "BM_A", "BM_B/8", "BM_C/1/2", "BM_D" };
	static const char *const types[] = { "iteration", "iteration", "aggregate", "other" };
	static const char *const aggs[] = { "mean", "median", "stddev", "cv", "BigO", "RMS" };
	static const char *const units[] = { "ns", "us", "ms", "s", "" };
	static const char *const counters[] = { "frames", "bytes x", "n", "items", "frames" };
	static const char *const rare[] = { "big_o", "rms", "label", "error_occurred",
	    "skipped", "error_message", "skip_message", "iterations", "complexity_n",
	    "family_index", "aggregate_unit", "repetition_index" };
	const char *id = PICK(ids);
	bool first = true;
	char name[64];
	int n = (int)rnd(8);

	if (rnd(60) == 0) {
		value(b, -1);	/* not an object */
		return;
	}
	buf_addc(b, '{');
	bool used[14] = { false };

	for (int i = 0; i < 12 + n; i++) {
		unsigned k = rnd(14);

		/* A name twice now and then: the tree keeps its first place, its last value. */
		if (used[k] && k != 9 && rnd(40) != 0)
			continue;
		used[k] = true;
		switch (k) {
		case 0:
			snprintf(name, sizeof name, "%s%s", id, rnd(3) ? "" : "_mean");
			if (rnd(40) == 0)
				member(b, "name", -1, &first, sep);
			else if (rnd(40) != 0) {
				if (!first)
					buf_addc(b, ',');
				first = false;
				buf_addf(b, "%s\"name\":", sep);
				string(b, name);
			}
			break;
		case 1:
			if (!first)
				buf_addc(b, ',');
			first = false;
			buf_addf(b, "%s\"run_name\":\"%s\"", sep, id);
			break;
		case 2:
			if (!first)
				buf_addc(b, ',');
			first = false;
			buf_addf(b, "%s\"run_type\":\"%s\"", sep, PICK(types));
			break;
		case 3:
			if (!first)
				buf_addc(b, ',');
			first = false;
			buf_addf(b, "%s\"aggregate_name\":\"%s\"", sep, PICK(aggs));
			break;
		case 4: member(b, "real_time", rnd(20) ? 6 : -1, &first, sep); break;
		case 5: member(b, "cpu_time", rnd(20) ? 6 : -1, &first, sep); break;
		case 6:
			if (!first)
				buf_addc(b, ',');
			first = false;
			buf_addf(b, "%s\"time_unit\":", sep);
			if (rnd(20) == 0)
				value(b, -1);
			else
				buf_addf(b, "\"%s\"", PICK(units));
			break;
		case 7: member(b, "items_per_second", rnd(10) ? 6 : -1, &first, sep); break;
		case 8: member(b, "bytes_per_second", rnd(10) ? 6 : -1, &first, sep); break;
		case 9: member(b, PICK(counters), rnd(5) ? 6 : -1, &first, sep); break;
		case 10: member(b, "repetitions", rnd(5) ? 7 : -1, &first, sep); break;
		case 11: member(b, "threads", rnd(5) ? 7 : -1, &first, sep); break;
		case 12:
			if (rnd(4) == 0)
				member(b, PICK(rare), rnd(3) == 0 ? 1 : -1, &first, sep);
			break;
		default:
			break;
		}
	}
	buf_addc(b, '}');
}

/* A document: context, rows and other members in a random order. */
static void
document(buf *b)
{
	const char *sep = rnd(2) ? "\n    " : "";
	int order[5] = { 0, 1, 2, 3, 4 }, rows = (int)rnd(8);
	bool first = true;

	for (int i = 4; i > 0; i--) {
		int j = (int)rnd((unsigned)i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	buf_addc(b, '{');
	for (int i = 0; i < 5; i++) {
		switch (order[i]) {
		case 0:
			if (rnd(10) == 0)
				break;
			buf_adds(b, first ? "" : ",");
			first = false;
			buf_addf(b, "%s\"context\": ", sep);
			if (rnd(15) == 0)
				value(b, -1);
			else
				buf_addf(b, "{\"date\":\"x\",\"executable\":\"%s\",\"num_cpus\":%u,"
				    "\"caches\":[{\"level\":1,\"size\":49152}],"
				    "\"library_build_type\":\"release\"%s}",
				    rnd(2) ? "./bin/codec" : "codec", rnd(64),
				    rnd(2) ? ",\"library_version\":\"v1.8.3\"" : "");
			break;
		case 1:
			if (rnd(15) == 0)
				break;
			buf_adds(b, first ? "" : ",");
			first = false;
			buf_addf(b, "%s\"benchmarks\": ", sep);
			if (rnd(40) == 0) {
				value(b, -1);
				break;
			}
			buf_addc(b, '[');
			for (int r = 0; r < rows; r++) {
				buf_adds(b, r ? "," : "");
				buf_adds(b, sep);
				row(b, sep);
			}
			buf_addc(b, ']');
			break;
		case 2:
			if (rnd(20) != 0)
				break;
			buf_adds(b, first ? "" : ",");
			first = false;
			buf_addf(b, "%s\"machine_info\": {}", sep);
			break;
		case 3:
			if (rnd(3) != 0)
				break;
			buf_adds(b, first ? "" : ",");
			first = false;
			buf_addf(b, "%s\"%s\": ", sep, rnd(20) == 0 ? "context" : "other");
			value(b, -1);
			break;
		default:
			if (rnd(30) != 0)
				break;
			buf_adds(b, first ? "" : ",");
			first = false;
			buf_addf(b, "%s\"benchmarks\": []", sep);
			break;
		}
	}
	buf_adds(b, rnd(2) ? "}\n" : "}");
	if (rnd(50) == 0)
		b->len -= rnd(5);	/* cut short */
}

static bool
same_num(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

static bool
same_str(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

/* Whether two suites are the same, field for field. */
static bool
same_suite(const struct import_suite *a, const struct import_suite *b)
{
	if (a->nb != b->nb || !same_str(a->workload, b->workload) ||
	    !same_str(a->tool_version, b->tool_version) ||
	    !json_identical(a->hw_context, b->hw_context) ||
	    !json_identical(a->sw_context, b->sw_context))
		return false;
	for (size_t i = 0; i < a->nb; i++) {
		const struct import_bench *x = &a->b[i], *y = &b->b[i];

		if (!same_str(x->id, y->id) || !same_str(x->error, y->error) ||
		    !same_str(x->workload, y->workload) || x->nm != y->nm ||
		    !json_identical(x->params, y->params) ||
		    !json_identical(x->settings, y->settings))
			return false;
		for (size_t j = 0; j < x->nm; j++) {
			const struct import_metric *m = &x->m[j], *n = &y->m[j];

			if (!same_str(m->name, n->name) || !same_str(m->unit, n->unit) ||
			    !same_num(m->value, n->value) || m->better != n->better ||
			    !same_str(m->error, n->error) || m->nsamples != n->nsamples ||
			    (m->samples == NULL) != (n->samples == NULL))
				return false;
			for (size_t k = 0; k < m->nsamples; k++)
				if (!same_num(m->samples[k], n->samples[k]))
					return false;
		}
	}
	return true;
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
 * Whether every record of s written without a tree (import_record_write())
 * is json_write() of import_record(), fingerprint and all.
 */
static bool
records_match(struct import_suite *s)
{
	struct import_identity id;
	bool same = true;

	memset(&id, 0, sizeof id);
	id.device = "cpu";
	for (size_t i = 0; i < s->nb && same; i++) {
		buf fast = BUF_INIT, tree = BUF_INIT;
		cJSON *rec = import_record(s, &s->b[i], &id);
		int rf = import_record_write(s, &s->b[i], &id, &fast);
		int rt = json_write(&tree, rec, JSON_COMPACT, NULL);

		blank_time(fast.s);
		blank_time(tree.s);
		same = rf == rt && (rf != 0 || strcmp(fast.s, tree.s) == 0);
		if (!same)
			printf("# record %zu:\n#  %s\n#  %s\n", i, fast.s, tree.s);
		cJSON_Delete(rec);
		buf_free(&fast);
		buf_free(&tree);
	}
	return same;
}

/* Whether import's recognition (detect_json()) reads doc as Google Benchmark's. */
static bool
recognised(const cJSON *doc)
{
	const cJSON *bs = json_get(doc, "benchmarks"), *first = cJSON_GetArrayItem(bs, 0);

	return cJSON_IsObject(doc) && cJSON_IsArray(bs) && json_get(doc, "machine_info") == NULL &&
	    (json_get(doc, "context") != NULL || json_get(first, "run_type") != NULL ||
	    json_get(first, "real_time") != NULL);
}

int
main(void)
{
	long quick = 0, slow = 0, wrong = 0, misread = 0, unlike = 0, n = 40000;
	struct import_suite a, b;
	json_error je;
	char msg[256];

	for (long i = 0; i < n; i++) {
		buf t = BUF_INIT;
		struct json_arena *arena = json_arena_new();
		cJSON *doc;
		int rs, rf;

		document(&t);
		memset(&a, 0, sizeof a);
		memset(&b, 0, sizeof b);
		a.format = b.format = "google-benchmark";	/* as import_parse() sets it */
		doc = json_parse_arena(t.s, t.len, NULL, 0, arena, &je);
		rs = doc != NULL ? gbench_parse(doc, &a, msg, sizeof msg) : -1;
		rf = gbench_fast(t.s, t.len, i % 2 == 1, &b);
		if (rs == 0 && !records_match(&a))
			unlike++;
		if (rf == 0) {
			quick++;
			if (rs != 0 || !same_suite(&a, &b)) {
				if (wrong++ < 3)
					printf("# differs: %s\n", t.s);
			}
			if (i % 2 == 1 && !recognised(doc) && misread++ < 3)
				printf("# recognised, but not by the tree: %s\n", t.s);
		} else {
			slow++;
			if (b.nb != 0 || b.b != NULL || b.workload != NULL || b.hw_context != NULL)
				wrong++;	/* not emptied */
		}
		import_suite_free(&a);
		import_suite_free(&b);
		json_arena_free(arena);
		buf_free(&t);
	}
	printf("# %ld read quickly, %ld left to the parser\n", quick, slow);
	ok(wrong == 0, "what the quick reader reads is gbench_parse()'s suite (%ld of %ld differ)",
	    wrong, n);
	ok(unlike == 0, "records written without a tree are the trees' bytes (%ld differ)", unlike);
	ok(misread == 0, "it recognises only what recognition reads as Google Benchmark");
	ok(quick > n / 10 && slow > n / 10, "both paths taken on the generated documents");

	static const char usual[] =
	    "{\n  \"context\": {\n    \"executable\": \"./codec_bench\",\n    \"num_cpus\": 16\n  },\n"
	    "  \"benchmarks\": [\n    {\n      \"name\": \"BM_Codec/0/0\",\n"
	    "      \"run_name\": \"BM_Codec/0/0\",\n      \"run_type\": \"iteration\",\n"
	    "      \"repetitions\": 3,\n      \"real_time\": 1.0212342987826920e+02,\n"
	    "      \"cpu_time\": 100.08096128070381,\n      \"time_unit\": \"ns\",\n"
	    "      \"frames\": 4.0\n    }\n  ]\n}\n";
	memset(&b, 0, sizeof b);
	ok(gbench_fast(usual, strlen(usual), true, &b) == 0 && b.nb == 1 && b.b[0].nm == 3 &&
	    strcmp(b.workload, "codec_bench") == 0 && strcmp(b.b[0].m[2].name, "frames") == 0,
	    "the tool's usual file takes the quick path");
	import_suite_free(&b);
	return done_testing();
}
