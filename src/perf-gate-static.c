/*
 * perf-gate-static: the fixed per-GPU threshold gate. Raw records in, the
 * same records out with "static_failures" (the reference's per-record
 * attribution strings) added; exit 1 when any record breaches
 * its selected thresholds block. Named metrics (the record's "metrics")
 * are checked against the block's "max" and "min" objects, keyed by
 * "<benchmark_id>/<name>" globs (lane/named_metric.h). With --tail, the
 * worker-log tail of each breaching record goes to stderr.
 */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/num.h"
#include "core/opt.h"
#include "core/text.h"
#include "lane/logtail.h"
#include "lane/named_metric.h"
#include "lane/policy.h"

static struct {
	bool tail;
	long breaches;
} opt;

static const struct opt_def options[] = {
	{ 't', "tail", 0, NULL,
	    "for each breaching record, print its worker log tail", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-gate-static [-t] [file ...]\n",
	.width = 12,
	.flags = 0,
	.opts = options,
};

/* A value of the check as a finite float; 0 null, 1 ok, -1 reported. */
static int
check_value(jsonl_reader *r, const jsonl_span *s, const cJSON *v,
    const char *what, double *out)
{
	switch (policy_coerce(v, out)) {
	case COERCE_NULL:
		return 0;
	case COERCE_OK:
		if (isfinite(*out))
			return 1;
		jsonl_error(r, s, "%s is not a finite number", what);
		return -1;
	default:
		jsonl_error(r, s, "%s must be a number", what);
		return -1;
	}
}

/* Fills failures; -1 after reporting a bad value. */
static int
static_failures(jsonl_reader *r, const jsonl_span *s, const cJSON *raw,
    const char *id, cJSON *failures)
{
	const cJSON *thr = json_get(raw, "thresholds");
	const struct metric *m;
	char what[96], cur_s[NUM_BUFSZ], thr_s[NUM_BUFSZ], *msg;
	double cur, lim;
	int a, b;

	if (!cJSON_IsObject(thr))
		return 0;
	for (int i = 0; i < METRIC_COUNT; i++) {
		m = &metric_table[i];
		if (m->static_key == NULL)
			continue;
		snprintf(what, sizeof what, "thresholds.%s", m->static_key);
		if ((a = check_value(r, s, json_get(raw, m->raw_key), m->raw_key,
		    &cur)) < 0 ||
		    (b = check_value(r, s, json_get(thr, m->static_key), what,
		    &lim)) < 0)
			return -1;
		if (a == 0 || b == 0)
			continue;
		/* The record's rounded value, so both gates agree at a boundary. */
		cur = num_round(cur, m->precision);
		if (cur <= lim)
			continue;
		msg = easprintf("%s %s exceeded fixed threshold (current=%s, "
		    "threshold=%s)", id, m->raw_key, num_fixed(cur_s, cur, 3),
		    num_fixed(thr_s, lim, 3));
		json_append(failures, json_new_string(msg));
		free(msg);
	}
	return 0;
}

/* Checks a "max" or "min" block of named bounds; -1 after reporting it. */
static int
check_bounds(jsonl_reader *r, const jsonl_span *s, const cJSON *bounds, const char *which)
{
	const cJSON *e;
	buf b = BUF_INIT;

	if (bounds == NULL || cJSON_IsNull(bounds))
		return 0;
	if (!cJSON_IsObject(bounds)) {
		jsonl_error(r, s, "thresholds.%s must be an object", which);
		return -1;
	}
	cJSON_ArrayForEach(e, bounds)
		if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) {
			text_py_repr(&b, e->string, strlen(e->string));
			jsonl_error(r, s, "thresholds.%s.%s must be a finite number", which, b.s);
			buf_free(&b);
			return -1;
		}
	return 0;
}

/* "<value> <unit>", exact: the value as Python's repr(). */
static char *
exact(char out[NUM_BUFSZ + 80], double v, const char *unit)
{
	char n[NUM_BUFSZ];

	snprintf(out, NUM_BUFSZ + 80, "%s%s%.64s", num_repr(n, v), *unit ? " " : "", unit);
	return out;
}

/*
 * The named metrics' static failures: a value above its "max" or below
 * its "min". -1 after reporting a bad metrics object or bound.
 */
static int
named_failures(jsonl_reader *r, const jsonl_span *s, const cJSON *raw,
    const char *id, cJSON *failures)
{
	const cJSON *thr = json_get(raw, "thresholds");
	const cJSON *max = json_get(thr, "max"), *min = json_get(thr, "min");
	struct named_metric *m;
	char err[256], a[NUM_BUFSZ + 80], b[NUM_BUFSZ + 80], *key, *msg;
	size_t n;
	double lim;
	bool bad;

	if ((m = nm_parse(json_get(raw, "metrics"), &n, err, sizeof err)) == NULL) {
		jsonl_error(r, s, "%s", err);
		return -1;
	}
	if (!cJSON_IsObject(thr) || check_bounds(r, s, max, "max") != 0 ||
	    check_bounds(r, s, min, "min") != 0) {
		free(m);
		return cJSON_IsObject(thr) ? -1 : 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (!m[i].has_value)
			continue;
		key = nm_key(id, m[i].name);
		if (cJSON_IsObject(max) && nm_static_bound(max, key, &lim, &bad) &&
		    m[i].value > lim) {
			msg = easprintf("%s %s exceeded fixed threshold (current=%s, "
			    "threshold=%s)", id, m[i].name, exact(a, m[i].value, m[i].unit),
			    exact(b, lim, m[i].unit));
			json_append(failures, json_new_string(msg));
			free(msg);
		}
		if (cJSON_IsObject(min) && nm_static_bound(min, key, &lim, &bad) &&
		    m[i].value < lim) {
			msg = easprintf("%s %s fell below fixed minimum (current=%s, "
			    "minimum=%s)", id, m[i].name, exact(a, m[i].value, m[i].unit),
			    exact(b, lim, m[i].unit));
			json_append(failures, json_new_string(msg));
			free(msg);
		}
		free(key);
	}
	free(m);
	return 0;
}

static void
print_tail(const char *id, const cJSON *raw)
{
	const cJSON *p = json_get(raw, "worker_log_path");
	buf b = BUF_INIT;

	logtail_block(&b, id, cJSON_IsString(p) ? p->valuestring : NULL);
	buf_addc(&b, '\n');
	fwrite(b.s, 1, b.len, stderr);
	fflush(stderr);
	buf_free(&b);
}

static void
process_record(jsonl_reader *r, const jsonl_span *s, cJSON *raw)
{
	const cJSON *idv = json_get(raw, "benchmark_id");
	const cJSON *log = json_get(raw, "worker_log_path");
	const char *id = "unknown";
	cJSON *failures;

	if (idv != NULL && !cJSON_IsString(idv)) {
		jsonl_error(r, s, "benchmark_id must be a string");
		return;
	}
	if (idv != NULL)
		id = idv->valuestring;
	if (log != NULL && !cJSON_IsString(log) && !cJSON_IsNull(log)) {
		jsonl_error(r, s, "worker_log_path must be a string or null");
		return;
	}
	failures = json_new_array();
	if (static_failures(r, s, raw, id, failures) != 0 ||
	    named_failures(r, s, raw, id, failures) != 0) {
		cJSON_Delete(failures);
		return;
	}
	if (cJSON_GetArraySize(failures) > 0) {
		opt.breaches++;
		if (opt.tail)
			print_tail(id, raw);
	}
	json_set(raw, "static_failures", failures);
	jsonl_put(r, s, raw);
}

int
main(int argc, char *argv[])
{
	int c;

	err_init(argv[0]);
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		switch (c) {
		case 't': opt.tail = true; break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
	if (jsonl_filter(argv + optind, argc - optind, process_record) != 0)
		return EXIT_TROUBLE;
	return opt.breaches > 0 ? EXIT_GATE : EXIT_PASS;
}
