/*
 * gbench: Google Benchmark's JSON (--benchmark_format=json,
 * --benchmark_out). One benchmark per run_name; its repetitions are the
 * samples. Aggregate rows (_mean, _median, _stddev, _cv) are used only
 * when there are no repetition rows (report_aggregates_only), and then
 * the mean; BigO and RMS rows are not benchmarks. An errored or skipped
 * benchmark (error_occurred, skipped) is a failed one with its message.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
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

/* A user counter of a row: a number member that is not a fixed key. */
struct counter {
	const char *name;
	double v;
};

/*
 * What the reader takes from one row, from its tree (row_of_tree()) or
 * straight from the text (the quick reader): strings "" when absent or not
 * strings, as json_str() gives them.
 */
struct row {
	bool named;		/* an object whose name is a string */
	const char *name, *run_name, *run_type, *agg, *error_message, *skip_message,
	    *time_unit;
	bool big_o, rms;	/* present, of any type */
	bool error_occurred, skipped;	/* true */
	bool has_real, has_cpu, has_items, has_bytes;
	double real, cpu, items, bytes;
	struct counter *c;	/* in the row's order */
	size_t nc;
	/* repetitions and threads when numbers: a node, or a scanned member */
	const cJSON *rep, *thr;
	const struct json_scan_member *rep_m, *thr_m;
};

/*
 * The metrics of one row, as samples of b: the four the tool names, then
 * the user counters in the row's order.
 */
static void
push_row(struct import_bench *b, const struct row *r)
{
	const char *tu = *r->time_unit != '\0' ? r->time_unit : "ns";

	if (r->has_real)
		import_push_sample(b, "time", r->real, tu);
	if (r->has_cpu)
		import_push_sample(b, "cpu_time", r->cpu, tu);
	if (r->has_items)
		import_push_sample(b, "items_per_second", r->items, "items/s");
	if (r->has_bytes)
		import_push_sample(b, "bytes_per_second", r->bytes, "B/s");
	for (size_t i = 0; i < r->nc; i++)
		import_push_sample(b, r->c[i].name, r->c[i].v, "");
}

/*
 * b's setting key set to the number v (a node) or m (scanned), unless it
 * holds that number already: the last row's value, at the first row's
 * place.
 */
static void
set_setting(struct import_bench *b, const char *key, const cJSON *v,
    const struct json_scan_member *m)
{
	const cJSON *old = json_get(b->settings, key);
	bool isint = m != NULL ? m->isint : json_is_int(v);
	const char *text = m != NULL ? m->s : isint ? v->valuestring : NULL;
	size_t n = m != NULL ? m->n : isint ? strlen(v->valuestring) : 0;

	if (old != NULL && isint && json_is_int(old) && strlen(old->valuestring) == n &&
	    memcmp(old->valuestring, text, n) == 0)
		return;
	json_set(b->settings, key, m != NULL ? json_scan_number_node(m) :
	    cJSON_Duplicate(v, true));
}

/* The settings that change what is measured. */
static void
settings(struct import_bench *b, const struct row *r)
{
	if (r->rep != NULL || r->rep_m != NULL)
		set_setting(b, "repetitions", r->rep, r->rep_m);
	if (r->thr != NULL || r->thr_m != NULL)
		set_setting(b, "threads", r->thr, r->thr_m);
}

/* The row of a parsed element; *c grows to hold its counters (*cap of them). */
static void
row_of_tree(const cJSON *row, struct row *r, struct counter **c, size_t *cap)
{
	const cJSON *v;
	size_t n = 0;

	memset(r, 0, sizeof *r);
	r->named = cJSON_IsObject(row) && cJSON_IsString(json_get(row, "name"));
	r->name = json_str(row, "name");
	r->run_name = json_str(row, "run_name");
	r->run_type = json_str(row, "run_type");
	r->agg = json_str(row, "aggregate_name");
	r->error_message = json_str(row, "error_message");
	r->skip_message = json_str(row, "skip_message");
	r->time_unit = json_str(row, "time_unit");
	r->big_o = json_get(row, "big_o") != NULL;
	r->rms = json_get(row, "rms") != NULL;
	r->error_occurred = cJSON_IsTrue(json_get(row, "error_occurred"));
	r->skipped = cJSON_IsTrue(json_get(row, "skipped"));
	r->has_real = import_num(row, "real_time", &r->real);
	r->has_cpu = import_num(row, "cpu_time", &r->cpu);
	r->has_items = import_num(row, "items_per_second", &r->items);
	r->has_bytes = import_num(row, "bytes_per_second", &r->bytes);
	if ((v = json_get(row, "repetitions")) != NULL && cJSON_IsNumber(v))
		r->rep = v;
	if ((v = json_get(row, "threads")) != NULL && cJSON_IsNumber(v))
		r->thr = v;
	if (cJSON_IsObject(row))
		cJSON_ArrayForEach(v, row)
			if (cJSON_IsNumber(v) && !fixed_key(v->string)) {
				if (n == *cap) {
					*cap = *cap ? *cap * 2 : 16;
					*c = erealloc(*c, *cap * sizeof **c);
				}
				(*c)[n].name = v->string;
				(*c)[n++].v = v->valuedouble;
			}
	r->c = *c;
	r->nc = n;
}

static void
context(const cJSON *ctx, struct import_suite *s)
{
	const cJSON *v;
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

/* The rows read so far, grouped by benchmark. */
struct reader {
	struct import_suite *s;
	struct import_index *ix;
	unsigned char *seen;	/* SEEN_* of each benchmark */
	size_t seencap;
	long k;			/* rows read */
};

/* Adds row r to its benchmark; -1 (msg filled in) when it is not one. */
static int
take_row(struct reader *rd, const struct row *r, char *msg, size_t msgsz)
{
	struct import_suite *s = rd->s;
	const char *id = r->run_name;
	bool aggregate = strcmp(r->run_type, "aggregate") == 0;
	struct import_bench *b;
	unsigned char *seen;
	long i;

	if (!r->named) {
		snprintf(msg, msgsz, "benchmarks[%ld]: not an object with a name", rd->k);
		return -1;
	}
	rd->k++;
	if (strcmp(r->agg, "BigO") == 0 || strcmp(r->agg, "RMS") == 0 || r->big_o || r->rms)
		return 0;
	if (*id == '\0')
		id = r->name;
	if ((i = import_index_find(rd->ix, s, id)) < 0) {
		import_add_bench(s, id);
		i = (long)s->nb - 1;
		import_index_add(rd->ix, s, i);
		if ((size_t)i >= rd->seencap) {
			rd->seencap = rd->seencap ? rd->seencap * 2 : 64;
			rd->seen = erealloc(rd->seen, rd->seencap);
		}
		rd->seen[i] = SEEN_NONE;
	}
	b = &s->b[i];
	seen = &rd->seen[i];
	if (r->error_occurred || r->skipped) {
		const char *m = r->error_message;
		if (*m == '\0')
			m = r->skip_message;
		if (b->error == NULL)
			b->error = estrdup(*m ? m : r->skipped ? "skipped" : "error");
		return 0;
	}
	if (aggregate) {
		/* The mean stands in only for a benchmark without repetitions. */
		if (*seen == SEEN_ITERATION || (strcmp(r->agg, "mean") != 0 &&
		    !(strcmp(r->agg, "median") == 0 && *seen == SEEN_NONE)))
			return 0;
		if (*seen == SEEN_AGGREGATE && strcmp(r->agg, "mean") != 0)
			return 0;
		for (size_t j = 0; j < b->nm; j++)
			b->m[j].nsamples = 0;
		*seen = SEEN_AGGREGATE;
		push_row(b, r);
		settings(b, r);
		return 0;
	}
	if (*seen == SEEN_AGGREGATE)
		for (size_t j = 0; j < b->nm; j++)
			b->m[j].nsamples = 0;
	*seen = SEEN_ITERATION;
	push_row(b, r);
	settings(b, r);
	return 0;
}

/* The means of every benchmark once its rows are read. */
static void
finish(struct reader *rd)
{
	struct import_suite *s = rd->s;

	for (size_t j = 0; j < s->nb; j++) {
		struct import_bench *b = &s->b[j];
		import_finish_means(b);
		if (rd->seen[j] == SEEN_AGGREGATE)
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
}

int
gbench_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz)
{
	const cJSON *rows = json_get(doc, "benchmarks"), *row;
	struct reader rd = { s, NULL, NULL, 0, 0 };
	struct counter *c = NULL;
	size_t cap = 0;
	struct row r;
	int rc = -1;

	if (!cJSON_IsArray(rows)) {
		snprintf(msg, msgsz, "benchmarks: not an array");
		return -1;
	}
	context(json_get(doc, "context"), s);
	rd.ix = import_index_new();
	cJSON_ArrayForEach(row, rows) {
		row_of_tree(row, &r, &c, &cap);
		if (take_row(&rd, &r, msg, msgsz) != 0)
			goto done;
	}
	finish(&rd);
	rc = 0;
done:
	free(c);
	free(rd.seen);
	import_index_free(rd.ix);
	return rc;
}

/*
 * The quick reader: Google Benchmark's own output read straight from the
 * text, one row at a time, building no tree but the context's. It reads
 * what json_scan_flat() reads (rows of plain strings, numbers and
 * literals, each name once); anything else, valid or not, and any row
 * gbench_parse() would fail at, returns -1 with s emptied, and the caller
 * parses the whole text as before (which reports what is wrong). The
 * suite it makes is gbench_parse()'s of the parsed text.
 */

/* The number of a fixed key (fixed_keys' order), or -1 for a counter. */
static int
key_index(const char *k, size_t n)
{
	/* fixed_keys' lengths: a name is compared only with those of its length. */
	static const unsigned char len[sizeof fixed_keys / sizeof *fixed_keys] = {
	    14, 14, 5, 16, 12, 8, 13, 14, 12, 16, 10, 5, 4, 25, 9, 16, 11, 3, 8, 8, 12, 7, 7, 9 };

	for (size_t i = 0; i < sizeof fixed_keys / sizeof *fixed_keys; i++)
		if (len[i] == n && memcmp(fixed_keys[i], k, n) == 0)
			return (int)i;
	return -1;
}

enum {
	K_AGGREGATE_NAME = 0, K_BIG_O = 2, K_BYTES = 3, K_CPU = 5, K_ERROR_MESSAGE = 6,
	K_ERROR_OCCURRED = 7, K_ITEMS = 9, K_NAME = 12, K_REAL = 14, K_REPETITIONS = 16,
	K_RMS = 17, K_RUN_NAME = 18, K_RUN_TYPE = 19, K_SKIP_MESSAGE = 20, K_SKIPPED = 21,
	K_THREADS = 22, K_TIME_UNIT = 23
};

/* Most members a row may have on the quick path. */
#define FAST_MEMBERS 64

/*
 * The row of the scanned members m[0..n): their strings copied, terminated,
 * to t (with room for them all); false when a name is repeated (the tree
 * keeps its first place and its last value: the slow path's).
 */
static bool
row_of_members(const struct json_scan_member *m, size_t n, struct row *r,
    struct counter *c, buf *t)
{
	const struct json_scan_member *other[FAST_MEMBERS];
	const char **str;
	uint32_t fixed = 0;
	size_t nc = 0, no = 0;

	memset(r, 0, sizeof *r);
	r->name = r->run_name = r->run_type = r->agg = r->error_message = r->skip_message =
	    r->time_unit = "";
	for (size_t i = 0; i < n; i++) {
		const struct json_scan_member *x = &m[i];
		int k = key_index(x->key, x->klen);

		if (k < 0) {
			for (size_t j = 0; j < no; j++)
				if (other[j]->klen == x->klen &&
				    memcmp(other[j]->key, x->key, x->klen) == 0)
					return false;
			other[no++] = x;
			if (x->type == cJSON_Number) {
				c[nc].name = t->s + t->len;
				buf_add(t, x->key, x->klen);
				buf_addc(t, '\0');
				c[nc++].v = x->d;
			}
			continue;
		}
		if (fixed & (1u << k))
			return false;
		fixed |= 1u << k;
		switch (k) {
		case K_NAME: str = &r->name; r->named = x->type == cJSON_String; break;
		case K_RUN_NAME: str = &r->run_name; break;
		case K_RUN_TYPE: str = &r->run_type; break;
		case K_AGGREGATE_NAME: str = &r->agg; break;
		case K_ERROR_MESSAGE: str = &r->error_message; break;
		case K_SKIP_MESSAGE: str = &r->skip_message; break;
		case K_TIME_UNIT: str = &r->time_unit; break;
		default: str = NULL; break;
		}
		if (str != NULL && x->type == cJSON_String) {
			*str = t->s + t->len;
			buf_add(t, x->s, x->n);
			buf_addc(t, '\0');
		}
		switch (k) {
		case K_BIG_O: r->big_o = true; break;
		case K_RMS: r->rms = true; break;
		case K_ERROR_OCCURRED: r->error_occurred = x->type == cJSON_True; break;
		case K_SKIPPED: r->skipped = x->type == cJSON_True; break;
		case K_REAL: r->has_real = x->type == cJSON_Number; r->real = x->d; break;
		case K_CPU: r->has_cpu = x->type == cJSON_Number; r->cpu = x->d; break;
		case K_ITEMS: r->has_items = x->type == cJSON_Number; r->items = x->d; break;
		case K_BYTES: r->has_bytes = x->type == cJSON_Number; r->bytes = x->d; break;
		case K_REPETITIONS: r->rep_m = x->type == cJSON_Number ? x : NULL; break;
		case K_THREADS: r->thr_m = x->type == cJSON_Number ? x : NULL; break;
		default: break;
		}
	}
	r->c = c;
	r->nc = nc;
	return true;
}

/*
 * Past the rows of the array at p (its '['), each taken into rd; NULL when
 * the quick reader cannot read them. *first: whether the first row has
 * run_type or real_time (for recognition).
 */
static const char *
fast_rows(const char *p, const char *end, struct reader *rd, bool *first)
{
	struct json_scan_member m[FAST_MEMBERS];
	struct counter c[FAST_MEMBERS];
	buf t = BUF_INIT;
	struct row r;
	const char *q;
	char msg[8];
	size_t n;

	*first = false;
	p = json_scan_ws(p + 1, end);
	if (p < end && *p == ']')
		return p + 1;
	for (;;) {
		if ((q = json_scan_flat(p, end, m, FAST_MEMBERS, &n)) == NULL)
			goto fail;
		/* Room for every string of the row, so that none moves. */
		buf_reset(&t);
		buf_grow(&t, (size_t)(q - p) + FAST_MEMBERS);
		if (!row_of_members(m, n, &r, c, &t))
			goto fail;
		for (size_t i = 0; rd->k == 0 && i < n; i++)
			if ((m[i].klen == 8 && memcmp(m[i].key, "run_type", 8) == 0) ||
			    (m[i].klen == 9 && memcmp(m[i].key, "real_time", 9) == 0))
				*first = true;
		if (take_row(rd, &r, msg, sizeof msg) != 0)
			goto fail;
		p = json_scan_ws(q, end);
		if (p < end && *p == ',') {
			p = json_scan_ws(p + 1, end);
			continue;
		}
		if (p < end && *p == ']')
			break;
		goto fail;
	}
	buf_free(&t);
	return p + 1;
fail:
	buf_free(&t);
	return NULL;
}

int
gbench_fast(const char *text, size_t len, bool detect, struct import_suite *s)
{
	const char *p = text, *end = text + len, *key, *q, *ctx = NULL, *ctx_end = NULL;
	bool rows = false, first = false, machine_info = false;
	struct reader rd = { s, NULL, NULL, 0, 0 };
	struct json_arena *arena = NULL;
	struct { const char *k; size_t n; } seen[64];
	size_t klen, nseen = 0;
	json_error je;
	cJSON *doc;
	int rc = -1;

	p = json_scan_ws(p, end);
	if (p >= end || *p != '{')
		return -1;
	rd.ix = import_index_new();
	p = json_scan_ws(p + 1, end);
	if (p < end && *p == '}')
		goto done;
	for (;;) {
		key = p + 1;
		if ((q = json_scan_string(p, end)) == NULL || nseen == 64)
			goto done;
		klen = (size_t)(q - key) - 1;
		/* A repeated name: the tree's first place and last value. */
		for (size_t i = 0; i < nseen; i++)
			if (seen[i].n == klen && memcmp(seen[i].k, key, klen) == 0)
				goto done;
		seen[nseen].k = key;
		seen[nseen++].n = klen;
		p = json_scan_ws(q, end);
		if (p >= end || *p != ':')
			goto done;
		p = json_scan_ws(p + 1, end);
		if (klen == 10 && memcmp(key, "benchmarks", 10) == 0) {
			if (p >= end || *p != '[' || (p = fast_rows(p, end, &rd, &first)) == NULL)
				goto done;
			rows = true;
		} else {
			if ((q = json_scan_skip(p, end)) == NULL)
				goto done;
			if (klen == 7 && memcmp(key, "context", 7) == 0) {
				ctx = p;
				ctx_end = q;
			} else if (klen == 12 && memcmp(key, "machine_info", 12) == 0) {
				machine_info = true;
			}
			p = q;
		}
		p = json_scan_ws(p, end);
		if (p < end && *p == ',') {
			p = json_scan_ws(p + 1, end);
			continue;
		}
		if (p < end && *p == '}')
			break;
		goto done;
	}
	if (json_scan_ws(p + 1, end) != end || !rows)
		goto done;
	/* Recognised as detect_json() does: pytest-benchmark's has machine_info. */
	if (detect && (machine_info || (ctx == NULL && !first)))
		goto done;
	if (ctx != NULL) {
		arena = json_arena_new();
		if ((doc = json_parse_arena(ctx, (size_t)(ctx_end - ctx), NULL, 0, arena, &je)) == NULL)
			goto done;
	} else
		doc = NULL;
	context(doc, s);
	finish(&rd);
	rc = 0;
done:
	json_arena_free(arena);
	free(rd.seen);
	import_index_free(rd.ix);
	if (rc != 0) {
		const char *format = s->format;
		import_suite_free(s);
		s->format = format;
	}
	return rc;
}
