/*
 * perf-frames: the equivalent-workload frame-time comparison
 * (perf-frames(1), doc/frames-report.md). Validates
 * a manifest of paired baseline/successor recordings and every CSV, and
 * prints the arithmetic report: per-run frame-time, rate and AI metrics,
 * variant aggregates as medians of per-run metrics, and paired deltas.
 * The report never evaluates acceptance. The first problem, in the
 * documented order, rejects the whole comparison: exit 2, nothing on
 * stdout, "perf-frames: <code>: <detail>" on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/canon.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/json.h"
#include "core/num.h"
#include "core/opt.h"
#include "core/path.h"
#include "core/utf8.h"
#include "frames/frames.h"
#include "frames/frames_figure.h"

static struct {
	const char *out[2];	/* -o report, --svg figure */
	bool lines;		/* --jsonl */
} opt;

static const struct opt_def options[] = {
	{ 'o', "output", 0, "report",
	    "write the report to report", "-o report, --output report", NULL },
	{ 0, "jsonl", 'j', NULL, "print one JSON line per run", NULL, NULL },
	{ 0, "svg", 's', "file",
	    "write a standalone figure of each run's frame times", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-frames [-o report] [--jsonl] [--svg file] manifest.json\n",
	.width = 26,
	.flags = 0,
	.opts = options,
};

static const char *const top_keys[] = { "schema_version", "sample_origin", "runs", NULL };
static const char *const run_keys[] = {
	"variant", "repeat_id", "artifact_id", "addon_ids", "engine_version", "hardware",
	"workload", "capture", "sample_file", NULL,
};
static const char *const hardware_keys[] = { "cpu", "gpu", "ram_gib", "os", "driver", NULL };
static const char *const workload_keys[] = {
	"map", "route", "players", "ai", "vehicles", "entities", "settings", "warmup_seconds",
	"duration_seconds", NULL,
};
static const char *const capture_keys[] = { "kind", "environment", "tool", "version", NULL };
static const char *const pop_keys[] = { "players", "ai", "vehicles", "entities" };
/* The conditions every recording shares. */
static const char *const condition_keys[] = { "engine_version", "hardware", "workload",
	"capture" };

/* One run of the manifest and, once read, its recording. */
struct run {
	const cJSON *o;
	const char *variant, *repeat_id, *sample_file;
	char *path;		/* sample_file resolved against the manifest */
	char *real;		/* its real path */
	struct frames_csv csv;
	char sha[SHA256_HEX];
};

struct comparison {
	const char *manifest;
	cJSON *doc;
	struct run *runs;
	int nruns;
	char sha[SHA256_HEX];
	/* The window, from the first run (all are equal). */
	double W, D, E;
	bool W_int, E_int;
	long long pop[4];	/* the declared populations (equal in every run) */
	bool curves;		/* the figure is asked for */
	/* Repeat ids in order of first appearance, and their two runs. */
	const char **ids;
	int *base, *succ, nids;
};

/* Prints "perf-frames: code: detail" and returns -1. */
__attribute__((format(printf, 2, 3))) static int
bad(const char *code, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	warnx("%s: %s", code, msg);
	return -1;
}

static bool
is_text(const cJSON *v)
{
	return cJSON_IsString(v) && v->valuestring[0] != '\0';
}

/* Exactly the keys of want: the first missing one, then the first extra one. */
static int
exact_keys(const struct comparison *cmp, const cJSON *o, const char *where,
    const char *const *want)
{
	const cJSON *m;

	if (!cJSON_IsObject(o))
		return bad("invalid_manifest", "%s: %s is not an object", cmp->manifest, where);
	for (int i = 0; want[i] != NULL; i++)
		if (json_get(o, want[i]) == NULL)
			return bad("invalid_manifest", "%s: %s: missing key \"%s\"", cmp->manifest,
			    where, want[i]);
	cJSON_ArrayForEach(m, o) {
		int i;

		for (i = 0; want[i] != NULL && strcmp(want[i], m->string) != 0; i++)
			;
		if (want[i] == NULL) {
			char clean[200];

			return bad("invalid_manifest", "%s: %s: unexpected key \"%s\"",
			    cmp->manifest, where, err_clean(m->string, clean, sizeof clean));
		}
	}
	return 0;
}

static int
need_text(const struct comparison *cmp, const cJSON *o, const char *where, const char *key)
{
	if (!is_text(json_get(o, key)))
		return bad("invalid_manifest", "%s: %s.%s: must be a non-empty string",
		    cmp->manifest, where, key);
	return 0;
}

/* invalid_manifest for one run: its keys, then each member's type, in schema order. */
static int
check_run_shape(const struct comparison *cmp, int i)
{
	const cJSON *r = cmp->runs[i].o, *v, *hw, *wl, *cap, *a;
	char where[64], sub[80];

	snprintf(where, sizeof where, "runs[%d]", i);
	if (exact_keys(cmp, r, where, run_keys) != 0)
		return -1;
	v = json_get(r, "variant");
	if (!cJSON_IsString(v) || (strcmp(v->valuestring, "baseline") != 0 &&
	    strcmp(v->valuestring, "successor") != 0))
		return bad("invalid_manifest", "%s: %s.variant: must be \"baseline\" or "
		    "\"successor\"", cmp->manifest, where);
	if (need_text(cmp, r, where, "repeat_id") != 0 ||
	    need_text(cmp, r, where, "artifact_id") != 0)
		return -1;
	a = json_get(r, "addon_ids");
	if (!cJSON_IsArray(a))
		return bad("invalid_manifest", "%s: %s.addon_ids: must be an array of non-empty "
		    "strings", cmp->manifest, where);
	cJSON_ArrayForEach(v, a)
		if (!is_text(v))
			return bad("invalid_manifest", "%s: %s.addon_ids: must be an array of "
			    "non-empty strings", cmp->manifest, where);
	if (need_text(cmp, r, where, "engine_version") != 0)
		return -1;
	hw = json_get(r, "hardware");
	snprintf(sub, sizeof sub, "%s.hardware", where);
	if (exact_keys(cmp, hw, sub, hardware_keys) != 0 || need_text(cmp, hw, sub, "cpu") != 0 ||
	    need_text(cmp, hw, sub, "gpu") != 0)
		return -1;
	v = json_get(hw, "ram_gib");
	if (!cJSON_IsNumber(v) || !(v->valuedouble > 0))
		return bad("invalid_manifest", "%s: %s.ram_gib: must be a number > 0",
		    cmp->manifest, sub);
	if (need_text(cmp, hw, sub, "os") != 0 || need_text(cmp, hw, sub, "driver") != 0)
		return -1;
	wl = json_get(r, "workload");
	snprintf(sub, sizeof sub, "%s.workload", where);
	if (exact_keys(cmp, wl, sub, workload_keys) != 0 || need_text(cmp, wl, sub, "map") != 0 ||
	    need_text(cmp, wl, sub, "route") != 0)
		return -1;
	v = json_get(wl, "settings");
	if (!cJSON_IsObject(v) || v->child == NULL)
		return bad("invalid_manifest", "%s: %s.settings: must be a non-empty object",
		    cmp->manifest, sub);
	if (!cJSON_IsNumber(json_get(wl, "warmup_seconds")))
		return bad("invalid_manifest", "%s: %s.warmup_seconds: must be a number",
		    cmp->manifest, sub);
	if (!cJSON_IsNumber(json_get(wl, "duration_seconds")))
		return bad("invalid_manifest", "%s: %s.duration_seconds: must be a number",
		    cmp->manifest, sub);
	cap = json_get(r, "capture");
	snprintf(sub, sizeof sub, "%s.capture", where);
	if (exact_keys(cmp, cap, sub, capture_keys) != 0)
		return -1;
	for (int k = 0; capture_keys[k] != NULL; k++)
		if (need_text(cmp, cap, sub, capture_keys[k]) != 0)
			return -1;
	return need_text(cmp, r, where, "sample_file");
}

/* A population as an integer: JSON integers only (never true, never 12.0). */
static bool
pop_value(const cJSON *v, long long *out)
{
	if (!json_is_int(v))
		return false;
	*out = strtoll(v->valuestring, NULL, 10);	/* strict JSON: within 64 bits */
	return true;
}

static int
check_population(const struct comparison *cmp, int i, long long pop[4])
{
	const cJSON *wl = json_get(cmp->runs[i].o, "workload");
	long long rest;

	for (int k = 0; k < 4; k++)
		if (!pop_value(json_get(wl, pop_keys[k]), &pop[k]) || pop[k] < (k == 0 ? 1 : 0))
			return bad("invalid_population", "%s: runs[%d].workload.%s: must be an "
			    "integer >= %d", cmp->manifest, i, pop_keys[k], k == 0 ? 1 : 0);
	/* entities >= players + ai + vehicles, without overflow */
	rest = pop[3];
	for (int k = 0; k < 3; k++) {
		if (pop[k] > rest)
			return bad("invalid_population", "%s: runs[%d].workload.entities: %lld is "
			    "fewer than players + ai + vehicles", cmp->manifest, i, pop[3]);
		rest -= pop[k];
	}
	return 0;
}

/* A number as its JSON text. */
static const char *
num_text(const cJSON *v, char s[NUM_BUFSZ])
{
	if (json_is_int(v)) {
		snprintf(s, NUM_BUFSZ, "%s", v->valuestring);
		return s;
	}
	return num_repr(s, v->valuedouble);
}

static int
check_duration(const struct comparison *cmp, int i)
{
	const cJSON *wl = json_get(cmp->runs[i].o, "workload");
	char s[NUM_BUFSZ];

	if (json_get(wl, "warmup_seconds")->valuedouble < 30)
		return bad("measurement_too_short", "%s: runs[%d].workload.warmup_seconds: %s is "
		    "under 30", cmp->manifest, i, num_text(json_get(wl, "warmup_seconds"), s));
	if (json_get(wl, "duration_seconds")->valuedouble < 60)
		return bad("measurement_too_short", "%s: runs[%d].workload.duration_seconds: %s "
		    "is under 60", cmp->manifest, i,
		    num_text(json_get(wl, "duration_seconds"), s));
	return 0;
}

static int
check_capture(const struct comparison *cmp, int i)
{
	const cJSON *cap = json_get(cmp->runs[i].o, "capture");
	const char *kind = json_get(cap, "kind")->valuestring;
	const char *env = json_get(cap, "environment")->valuestring;
	char clean[200];

	if (strcmp(kind, "client_frame") != 0 && strcmp(kind, "server_tick") != 0)
		return bad("invalid_capture", "%s: runs[%d].capture.kind: \"%s\" is not "
		    "client_frame or server_tick", cmp->manifest, i,
		    err_clean(kind, clean, sizeof clean));
	if (strcmp(env, "client") != 0 && strcmp(env, "dedicated_server") != 0 &&
	    strcmp(env, "workbench_headless") != 0)
		return bad("invalid_capture", "%s: runs[%d].capture.environment: \"%s\" is not "
		    "client, dedicated_server or workbench_headless", cmp->manifest, i,
		    err_clean(env, clean, sizeof clean));
	if (strcmp(env, "dedicated_server") == 0 && strcmp(kind, "client_frame") == 0)
		return bad("invalid_capture", "%s: runs[%d].capture: a dedicated_server cannot "
		    "record client_frame", cmp->manifest, i);
	return 0;
}

static int
check_pairing(struct comparison *cmp)
{
	char clean[200];

	cmp->ids = ecalloc((size_t)cmp->nruns + 1, sizeof *cmp->ids);
	cmp->base = ecalloc((size_t)cmp->nruns + 1, sizeof *cmp->base);
	cmp->succ = ecalloc((size_t)cmp->nruns + 1, sizeof *cmp->succ);
	for (int i = 0; i < cmp->nruns; i++) {
		struct run *r = &cmp->runs[i];
		int k;

		for (k = 0; k < cmp->nids && strcmp(cmp->ids[k], r->repeat_id) != 0; k++)
			;
		if (k == cmp->nids) {
			cmp->ids[cmp->nids++] = r->repeat_id;
			cmp->base[k] = cmp->succ[k] = -1;
		}
		if (strcmp(r->variant, "baseline") == 0)
			cmp->base[k] = cmp->base[k] == -1 ? i : -2;
		else
			cmp->succ[k] = cmp->succ[k] == -1 ? i : -2;
	}
	for (int k = 0; k < cmp->nids; k++)
		if (cmp->base[k] < 0 || cmp->succ[k] < 0)
			return bad("invalid_pairing", "%s: repeat_id \"%s\" must appear exactly once "
			    "as baseline and once as successor", cmp->manifest,
			    err_clean(cmp->ids[k], clean, sizeof clean));
	if (cmp->nids < 3)
		return bad("invalid_pairing", "%s: %d paired repeat_id%s; at least 3 are needed",
		    cmp->manifest, cmp->nids, cmp->nids == 1 ? "" : "s");
	return 0;
}

static bool
canon_equal(const cJSON *a, const cJSON *b)
{
	buf x = BUF_INIT, y = BUF_INIT;
	bool eq;

	canon_json(&x, a);
	canon_json(&y, b);
	eq = x.len == y.len && memcmp(x.s, y.s, x.len) == 0;
	buf_free(&x);
	buf_free(&y);
	return eq;
}

static int
check_identity(const struct comparison *cmp)
{
	for (int i = 0; i < cmp->nruns; i++) {
		int f = 0;

		while (strcmp(cmp->runs[f].variant, cmp->runs[i].variant) != 0)
			f++;
		for (int k = 0; k < 2; k++) {
			const char *key = k == 0 ? "artifact_id" : "addon_ids";

			if (!canon_equal(json_get(cmp->runs[i].o, key), json_get(cmp->runs[f].o, key)))
				return bad("identity_changed", "%s: runs[%d].%s differs from runs[%d], "
				    "the first %s run", cmp->manifest, i, key, f, cmp->runs[i].variant);
		}
	}
	return 0;
}

static int
check_conditions(const struct comparison *cmp)
{
	for (int i = 1; i < cmp->nruns; i++)
		for (int k = 0; k < 4; k++) {
			const cJSON *a = json_get(cmp->runs[0].o, condition_keys[k]);
			const cJSON *b = json_get(cmp->runs[i].o, condition_keys[k]), *m;

			if (canon_equal(a, b))
				continue;
			/* Name the first member that differs, where there is one. */
			if (cJSON_IsObject(a))
				cJSON_ArrayForEach(m, a) {
					const cJSON *n = json_get(b, m->string);

					if (n != NULL && !canon_equal(m, n))
						return bad("unequal_conditions", "%s: runs[%d].%s.%s differs "
						    "from runs[0]", cmp->manifest, i, condition_keys[k],
						    m->string);
				}
			return bad("unequal_conditions", "%s: runs[%d].%s differs from runs[0]",
			    cmp->manifest, i, condition_keys[k]);
		}
	return 0;
}

static int
check_reuse(struct comparison *cmp)
{
	char *dir = estrdup(cmp->manifest), *slash = strrchr(dir, '/');

	if (slash != NULL)
		slash[1] = '\0';
	else
		dir[0] = '\0';
	for (int i = 0; i < cmp->nruns; i++) {
		struct run *r = &cmp->runs[i];

		r->path = r->sample_file[0] == '/' || dir[0] == '\0' ? estrdup(r->sample_file) :
		    easprintf("%s%s", dir, r->sample_file);
		r->real = path_resolve(r->path);
		for (int j = 0; j < i; j++)
			if (strcmp(cmp->runs[j].real, r->real) == 0) {
				free(dir);
				return bad("reused_sample_file", "%s: runs[%d] and runs[%d] both read %s",
				    cmp->manifest, j, i, r->real);
			}
	}
	free(dir);
	return 0;
}

/* The window and the declared populations, from the (equal) workloads. */
static void
window(struct comparison *cmp)
{
	const cJSON *wl = json_get(cmp->runs[0].o, "workload");
	const cJSON *w = json_get(wl, "warmup_seconds"), *d = json_get(wl, "duration_seconds");
	const long long lim = INT64_MAX / 2000;	/* 1000 * (w + d) fits */
	long long wi = 0, di = 0;

	cmp->W = 1000 * w->valuedouble;
	cmp->D = 1000 * d->valuedouble;
	cmp->E = cmp->W + cmp->D;
	/* Python keeps integers exact; these stay integers while they fit. */
	if (json_is_int(w))
		wi = strtoll(w->valuestring, NULL, 10);
	if (json_is_int(d))
		di = strtoll(d->valuestring, NULL, 10);
	cmp->W_int = json_is_int(w) && wi <= lim && wi >= -lim;
	cmp->E_int = cmp->W_int && json_is_int(d) && di <= lim && di >= -lim;
	if (cmp->W_int)
		cmp->W = (double)(wi * 1000);
	if (cmp->E_int)
		cmp->E = (double)(wi * 1000 + di * 1000);
}

static int
load_manifest(struct comparison *cmp)
{
	buf text = BUF_INIT;
	json_error je;
	char msg[160];
	const cJSON *runs, *r;
	int rc = -1, n;

	if (buf_read_file(&text, cmp->manifest) != 0) {
		bad("invalid_json", "%s: cannot read: %s", cmp->manifest, strerror(errno));
		goto out;
	}
	canon_sha256_hex(text.s, text.len, cmp->sha);
	if (utf8_error(text.s, text.len, msg, sizeof msg)) {
		bad("invalid_json", "%s: not UTF-8: %s", cmp->manifest, msg);
		goto out;
	}
	cmp->doc = json_parse_strict(text.s, text.len, &je);
	if (cmp->doc == NULL) {
		bad("invalid_json", "%s:%ld:%ld: %s", cmp->manifest, je.line, je.col, je.msg);
		goto out;
	}
	/* The top level. */
	if (exact_keys(cmp, cmp->doc, "the top level", top_keys) != 0)
		goto out;
	r = json_get(cmp->doc, "schema_version");
	if (!json_is_int(r) || strcmp(r->valuestring, "1") != 0) {
		bad("invalid_manifest", "%s: schema_version: must be the integer 1", cmp->manifest);
		goto out;
	}
	r = json_get(cmp->doc, "sample_origin");
	if (!cJSON_IsString(r) || (strcmp(r->valuestring, "synthetic") != 0 &&
	    strcmp(r->valuestring, "measured") != 0)) {
		bad("invalid_manifest", "%s: sample_origin: must be \"synthetic\" or \"measured\"",
		    cmp->manifest);
		goto out;
	}
	runs = json_get(cmp->doc, "runs");
	if (!cJSON_IsArray(runs)) {
		bad("invalid_manifest", "%s: runs: must be an array", cmp->manifest);
		goto out;
	}
	n = cJSON_GetArraySize(runs);
	cmp->runs = ecalloc((size_t)n + 1, sizeof *cmp->runs);
	cJSON_ArrayForEach(r, runs)
		cmp->runs[cmp->nruns++].o = r;
	/* Each category over every run before the next category. */
	for (int i = 0; i < n; i++)
		if (check_run_shape(cmp, i) != 0)
			goto out;
	for (int i = 0; i < n; i++) {
		struct run *ru = &cmp->runs[i];

		ru->variant = json_get(ru->o, "variant")->valuestring;
		ru->repeat_id = json_get(ru->o, "repeat_id")->valuestring;
		ru->sample_file = json_get(ru->o, "sample_file")->valuestring;
	}
	for (int i = 0; i < n; i++)
		if (check_population(cmp, i, cmp->pop) != 0)
			goto out;
	for (int i = 0; i < n; i++)
		if (check_duration(cmp, i) != 0)
			goto out;
	for (int i = 0; i < n; i++)
		if (check_capture(cmp, i) != 0)
			goto out;
	if (check_pairing(cmp) != 0 || check_identity(cmp) != 0 ||
	    check_conditions(cmp) != 0 || check_reuse(cmp) != 0)
		goto out;
	window(cmp);
	rc = 0;
out:
	buf_free(&text);
	return rc;
}

/* Reads every recording, in manifest order; the first problem stops. */
static int
read_samples(struct comparison *cmp)
{
	for (int i = 0; i < cmp->nruns; i++) {
		struct run *r = &cmp->runs[i];
		struct frames_csv *c = &r->csv;

		frames_csv_init(c, cmp->W, cmp->W_int, cmp->D, cmp->E, cmp->E_int, cmp->pop);
		c->want_curve = cmp->curves;
		if (frames_csv_read(c, r->path, r->sha) != 0) {
			char clean[512];

			err_clean(r->path, clean, sizeof clean);
			if (c->err_line > 0)
				return bad(c->code, "%s:%ld: %s", clean, c->err_line, c->detail);
			return bad(c->code, "%s: %s", clean, c->detail);
		}
	}
	return 0;
}

/* ---- the report ---- */

/* Stable (as Python's sorted) ascending order of a short list. */
static void
sort_small(double *v, int n)
{
	for (int i = 1; i < n; i++) {
		double x = v[i];
		int j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static double
median_of(double *v, int n)
{
	sort_small(v, n);
	return frames_median(v, (size_t)n);
}

static cJSON *
metrics_json(const double m[FM_NMETRICS])
{
	cJSON *o = json_new_object();

	for (int k = 0; k < FM_NMETRICS; k++)
		json_set(o, frames_metric_keys[k], json_new_float(m[k]));
	return o;
}

static cJSON *
number(double v, bool is_int)
{
	return is_int ? json_new_int((long long)v) : json_new_float(v);
}

static cJSON *
dup(const cJSON *v)
{
	cJSON *d = cJSON_Duplicate(v, 1);

	if (d == NULL)
		die("out of memory");
	return d;
}

static cJSON *
variant_json(const struct comparison *cmp, const char *variant)
{
	cJSON *o = json_new_object();
	double m[FM_NMETRICS], *v = emalloc((size_t)cmp->nruns * sizeof *v);
	int first = -1, n = 0;

	for (int i = 0; i < cmp->nruns; i++)
		if (strcmp(cmp->runs[i].variant, variant) == 0) {
			if (first < 0)
				first = i;
			n++;
		}
	for (int k = 0; k < FM_NMETRICS; k++) {
		int j = 0;

		for (int i = 0; i < cmp->nruns; i++)
			if (strcmp(cmp->runs[i].variant, variant) == 0)
				v[j++] = cmp->runs[i].csv.metrics[k];
		m[k] = median_of(v, j);
	}
	json_set(o, "artifact_id", dup(json_get(cmp->runs[first].o, "artifact_id")));
	json_set(o, "addon_ids", dup(json_get(cmp->runs[first].o, "addon_ids")));
	json_set(o, "runs", json_new_int(n));
	json_set(o, "aggregate", metrics_json(m));
	free(v);
	return o;
}

static cJSON *
run_json(const struct comparison *cmp, const struct run *r)
{
	static const char *const edge[] = { "", "warmup", "end", "warmup_and_end" };
	const struct frames_csv *c = &r->csv;
	cJSON *o = json_new_object(), *ex = json_new_array();

	json_set(o, "repeat_id", json_new_string(r->repeat_id));
	json_set(o, "variant", json_new_string(r->variant));
	json_set(o, "sample_file", json_new_string(r->sample_file));
	json_set(o, "sample_sha256", json_new_string(r->sha));
	json_set(o, "rows", json_new_int(c->rows));
	json_set(o, "included_intervals", json_new_int((long long)c->n));
	json_set(o, "included_seconds", json_new_float(c->included_ms / 1000));
	json_set(o, "measurement_coverage_fraction", json_new_float(c->included_ms / cmp->D));
	for (size_t i = 0; i < c->nbnd; i++) {
		const struct frames_boundary *b = &c->bnd[i];
		cJSON *e = json_new_object();

		json_set(e, "frame_index", json_new_int(b->frame_index));
		json_set(e, "boundary", json_new_string(edge[b->edge]));
		json_set(e, "start_ms", number(b->start, b->start_int));
		json_set(e, "end_ms", json_new_float(b->end));
		json_set(e, "duration_ms", json_new_float(b->duration));
		json_set(e, "overlap_ms", number(b->overlap, b->overlap_int));
		json_append(ex, e);
	}
	json_set(o, "excluded_boundary_intervals", ex);
	json_set(o, "metrics", metrics_json(c->metrics));
	return o;
}

static const char *const delta_keys[] = {
	"median_frame_time_reduction_percent", "p99_frame_time_reduction_percent",
	"throughput_increase_percent",
};

/* The paired deltas d[k][pair], in order of the repeat ids' first appearance. */
static void
paired_deltas(const struct comparison *cmp, double *d[3])
{
	for (int k = 0; k < 3; k++)
		d[k] = emalloc((size_t)cmp->nids * sizeof *d[k]);
	for (int k = 0; k < cmp->nids; k++) {
		const double *b = cmp->runs[cmp->base[k]].csv.metrics;
		const double *s = cmp->runs[cmp->succ[k]].csv.metrics;

		d[0][k] = (b[FM_MEDIAN_FT] - s[FM_MEDIAN_FT]) / b[FM_MEDIAN_FT] * 100;
		d[1][k] = (b[FM_P99_FT] - s[FM_P99_FT]) / b[FM_P99_FT] * 100;
		d[2][k] = (s[FM_THROUGHPUT] - b[FM_THROUGHPUT]) / b[FM_THROUGHPUT] * 100;
	}
}

/* The report's "paired_deltas". */
static cJSON *
deltas_json(const struct comparison *cmp, double *const d[3])
{
	cJSON *a = json_new_array(), *o;

	for (int k = 0; k < cmp->nids; k++) {
		o = json_new_object();
		json_set(o, "repeat_id", json_new_string(cmp->ids[k]));
		for (int j = 0; j < 3; j++)
			json_set(o, delta_keys[j], json_new_float(d[j][k]));
		json_append(a, o);
	}
	return a;
}

/* The report's "measurement": the window and the checks' limits. */
static cJSON *
measurement_json(const struct comparison *cmp)
{
	const cJSON *wl = json_get(cmp->runs[0].o, "workload");
	cJSON *o = json_new_object();

	json_set(o, "warmup_seconds", dup(json_get(wl, "warmup_seconds")));
	json_set(o, "duration_seconds", dup(json_get(wl, "duration_seconds")));
	json_set(o, "window_start_ms", number(cmp->W, cmp->W_int));
	json_set(o, "window_end_ms", number(cmp->E, cmp->E_int));
	json_set(o, "minimum_intervals", json_new_int(FRAMES_MIN_INTERVALS));
	json_set(o, "minimum_coverage_fraction", json_new_float(FRAMES_MIN_COVERAGE));
	return o;
}

static cJSON *
report(const struct comparison *cmp)
{
	const cJSON *cap = json_get(cmp->runs[0].o, "capture");
	cJSON *rep = json_new_object(), *o, *a;
	double *d[3];

	json_set(rep, "acceptance", json_new_string("not_evaluated"));
	json_set(rep, "sample_origin", dup(json_get(cmp->doc, "sample_origin")));
	json_set(rep, "manifest_sha256", json_new_string(cmp->sha));
	o = json_new_object();
	for (int k = 0; capture_keys[k] != NULL; k++)
		json_set(o, capture_keys[k], dup(json_get(cap, capture_keys[k])));
	json_set(rep, "capture", o);
	json_set(rep, "measurement", measurement_json(cmp));
	o = json_new_object();
	json_set(o, "baseline", variant_json(cmp, "baseline"));
	json_set(o, "successor", variant_json(cmp, "successor"));
	json_set(rep, "variants", o);
	a = json_new_array();
	for (int i = 0; i < cmp->nruns; i++)
		json_append(a, run_json(cmp, &cmp->runs[i]));
	json_set(rep, "runs", a);
	paired_deltas(cmp, d);
	json_set(rep, "paired_deltas", deltas_json(cmp, d));
	o = json_new_object();
	for (int j = 0; j < 3; j++) {
		json_set(o, delta_keys[j], json_new_float(median_of(d[j], cmp->nids)));
		free(d[j]);
	}
	json_set(rep, "delta_summary", o);
	return rep;
}

/* One line per run for jq: repeat_id, variant, metrics. */
static void
jsonl(buf *out, const struct comparison *cmp)
{
	for (int i = 0; i < cmp->nruns; i++) {
		cJSON *o = json_new_object();

		json_set(o, "repeat_id", json_new_string(cmp->runs[i].repeat_id));
		json_set(o, "variant", json_new_string(cmp->runs[i].variant));
		json_set(o, "metrics", metrics_json(cmp->runs[i].csv.metrics));
		json_write(out, o, JSON_COMPACT, NULL);
		buf_addc(out, '\n');
		cJSON_Delete(o);
	}
}

static void
svg(buf *out, const struct comparison *cmp, const cJSON *rep)
{
	struct frames_svg_run *v = ecalloc((size_t)cmp->nruns, sizeof *v);

	for (int i = 0; i < cmp->nruns; i++) {
		const struct run *r = &cmp->runs[i];

		v[i].repeat_id = r->repeat_id;
		v[i].variant = r->variant;
		v[i].coverage = r->csv.included_ms / cmp->D;
		v[i].intervals = (long long)r->csv.n;
		v[i].curve = r->csv.curve;
		v[i].ncurve = r->csv.ncurve;
	}
	frames_svg(out, rep, v, cmp->nruns);
	free(v);
}

/* Outputs never overwrite an input or each other, links included. */
static int
check_outputs(const struct comparison *cmp, const char *const out[2])
{
	static const char *const name[2] = { "-o", "--svg" };

	for (int k = 0; k < 2; k++) {
		if (out[k] == NULL)
			continue;
		if (path_same_file(out[k], cmp->manifest)) {
			warnx("%s: %s is the manifest; refusing to overwrite it", name[k], out[k]);
			return -1;
		}
		for (int i = 0; i < cmp->nruns; i++)
			if (path_same_file(out[k], cmp->runs[i].path)) {
				warnx("%s: %s is the recording of runs[%d]; refusing to overwrite it",
				    name[k], out[k], i);
				return -1;
			}
	}
	if (out[0] != NULL && out[1] != NULL && path_same_file(out[0], out[1])) {
		warnx("-o and --svg name one file: %s", out[0]);
		return -1;
	}
	return 0;
}

static void
comparison_free(struct comparison *cmp)
{
	for (int i = 0; i < cmp->nruns; i++) {
		frames_csv_free(&cmp->runs[i].csv);
		free(cmp->runs[i].path);
		free(cmp->runs[i].real);
	}
	free(cmp->runs);
	free(cmp->ids);
	free(cmp->base);
	free(cmp->succ);
	cJSON_Delete(cmp->doc);
}

/* Reads the options into opt; exits on a usage error. */
static void
parse_options(int argc, char *argv[])
{
	int c;

	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		switch (c) {
		case 'o': opt.out[0] = optarg; break;
		case 'j': opt.lines = true; break;
		case 's': opt.out[1] = optarg; break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
}

/* The report to -o, the figure to --svg, the report or its lines to stdout. */
static int
write_outputs(const struct comparison *cmp)
{
	buf doc = BUF_INIT, std = BUF_INIT, fig = BUF_INIT;
	cJSON *rep = report(cmp);
	int rc = EXIT_TROUBLE;

	json_write(&doc, rep, JSON_INDENT2, NULL);
	buf_addc(&doc, '\n');
	if (opt.lines)
		jsonl(&std, cmp);
	else if (opt.out[0] == NULL)
		buf_add(&std, doc.s, doc.len);
	if (opt.out[1] != NULL)
		svg(&fig, cmp, rep);
	if ((opt.out[0] != NULL && atomic_save("report", opt.out[0], doc.s, doc.len) != 0) ||
	    (opt.out[1] != NULL && atomic_save("figure", opt.out[1], fig.s, fig.len) != 0))
		goto done;
	if (fwrite(std.s, 1, std.len, stdout) != std.len ||
	    fflush(stdout) != 0) {
		warn("write error on standard output");
		goto done;
	}
	rc = EXIT_PASS;
done:
	cJSON_Delete(rep);
	buf_free(&doc);
	buf_free(&std);
	buf_free(&fig);
	return rc;
}

int
main(int argc, char *argv[])
{
	struct comparison cmp;
	int rc = EXIT_TROUBLE;

	err_init(argv[0]);
	parse_options(argc, argv);
	if (argc - optind != 1)
		opt_usage(&option_table, EXIT_TROUBLE);
	memset(&cmp, 0, sizeof cmp);
	cmp.manifest = argv[optind];
	cmp.curves = opt.out[1] != NULL;
	if (load_manifest(&cmp) == 0 && check_outputs(&cmp, opt.out) == 0 &&
	    read_samples(&cmp) == 0)
		rc = write_outputs(&cmp);
	comparison_free(&cmp);
	return rc;
}
