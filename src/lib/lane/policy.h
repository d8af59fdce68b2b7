/*
 * policy: the six tracked metrics and the rolling regression policy, as
 * one table every program reads (perf-normalize(1)), the per-record
 * override merge and the reference's numeric coercion.
 */
#ifndef PERF_LANE_POLICY_H
#define PERF_LANE_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

enum {
	METRIC_LATENCY,
	METRIC_THROUGHPUT,
	METRIC_MEMORY,
	METRIC_TEXT_ENCODER,
	METRIC_DIT,
	METRIC_VAE_DECODE,
	METRIC_COUNT
};

struct metric {
	const char *key;	/* normalized record key */
	const char *raw_key;	/* raw record key */
	const char *static_key;	/* key in a static thresholds block, or NULL */
	const char *label;	/* Markdown column label */
	const char *unit;	/* the unit of its values ("s", "fps", "MB"), as charts caption them */
	int precision;		/* decimals in tables and failure strings */
	bool higher_is_better;
	double threshold_percent;	/* default, as a fraction */
	double threshold_absolute;	/* default, in the metric's unit */
	bool gated;			/* default */
};

/* The metrics in canonical order (table columns, loops, key order). */
extern const struct metric metric_table[METRIC_COUNT];

/* Index of the metric with normalized key `key`, or -1. */
int policy_metric_index(const char *key);

struct metric_policy {
	double threshold_percent;
	double threshold_absolute;
	bool gated;
};

enum coerce { COERCE_NULL, COERCE_OK, COERCE_BAD };

/*
 * The reference's "safe float": NULL or null -> COERCE_NULL; a number,
 * a boolean (1.0/0.0) or a numeric string as Python's float() reads it ->
 * COERCE_OK with *out set (possibly non-finite: callers decide); anything
 * else (other strings, arrays, objects) -> COERCE_BAD, where the reference
 * quietly used None.
 */
enum coerce policy_coerce(const cJSON *v, double *out);

/*
 * Resolves the effective policy of a record from its regression_thresholds
 * value (any JSON value or NULL), field by field over the defaults.
 * Returns 0, or -1 when an accepted override is not finite; then bad (size
 * n) names it, like "latency.threshold_percent".
 */
int policy_merge(const cJSON *overrides, struct metric_policy p[METRIC_COUNT],
    char *bad, size_t n);

/* The serialized effective policy: six metrics, each {percent, absolute, gated}. */
cJSON *policy_to_json(const struct metric_policy p[METRIC_COUNT]);

/* The upload policy (PERF_UPLOAD_POLICY): never, pass or always. */
enum upload_policy { UPLOAD_NEVER, UPLOAD_PASS, UPLOAD_ALWAYS };

/*
 * Reads an upload policy as the reference reads PERF_UPLOAD_POLICY: trimmed
 * (Python's str.strip()) and lower-cased first, so "PASS" and " Always "
 * are valid. Returns false for anything else; then, when norm is not NULL,
 * *norm is set to a new string with the trimmed, lower-cased value, which
 * the reference's warning shows (as repr()).
 */
bool policy_upload_parse(const char *s, enum upload_policy *p, char **norm);

#endif
