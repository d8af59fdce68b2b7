/*
 * named_metric: the metrics a record carries beside the reference's six
 * (perfkite(7) "Named metrics"), and the policy that gates each.
 *
 * A raw or tracking record may hold
 *
 *   "metrics": {NAME: {"value": V, "unit": "U", "better": "lower"|"higher",
 *                      "samples": [V, ...]}, ...}
 *
 * NAME: 1 to NM_NAME_MAX bytes of UTF-8, no control character (C0, DEL,
 * C1). value: a finite number, or null for a metric that failed to
 * measure (kept, shown, never compared). unit: a string, canonical (see
 * core/unit.h), "" when absent. better: optional. samples: optional array
 * of finite numbers. Other members are kept and ignored. A record with
 * only the six has no "metrics" key, and none is ever added to it.
 *
 * A metric's key, what globs and static thresholds name, is
 * "<benchmark>/<NAME>": the record's benchmark_id (raw) or model_id
 * (normalized), then the name: "BM_Sort/1024/time".
 *
 * The policy of named metrics is the "metrics" member of the record's
 * regression_thresholds (copied from the benchmark config, as the six's
 * policy is): {GLOB: {"threshold_percent": F, "threshold_absolute": A,
 * "gated": G, "better": "lower"|"higher"}}, every field optional.
 * threshold_percent is a fraction (0.05 is 5%), threshold_absolute is in
 * the metric's canonical unit.
 *
 * Globs: '*' matches any run of bytes ('/' included), '?' one UTF-8
 * character, '\' makes the next character literal; anything else matches
 * itself; a glob matches the whole key. Several globs may match one key:
 * each field is taken, separately, from the most specific matching glob
 * that sets it: the one with the most literal bytes, and of those
 * the first in the block. So {"BM_Sort*": {"threshold_percent": 0.1},
 * "*cpu_time": {"gated": false}} gives BM_Sort/8/cpu_time both.
 *
 * Direction, first that applies: the metric's own "better" (the input
 * said so), the policy's "better", the unit rule (unit_better()). None:
 * BETTER_UNKNOWN, recorded and shown, never gated, with a warning
 * (nm_unknown_warning()). Never guessed.
 *
 * Defaults: threshold_percent 0.05, threshold_absolute 0, gated when the
 * direction is known. A gated: true on a metric of unknown direction
 * does not gate it.
 */
#ifndef PERF_LANE_NAMED_METRIC_H
#define PERF_LANE_NAMED_METRIC_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/unit.h"

#define NM_NAME_MAX 128
#define NM_DEFAULT_PERCENT 0.05
#define NM_DEFAULT_ABSOLUTE 0.0

/* One named metric of a record; its strings borrow from the record's tree. */
struct named_metric {
	const char *name;
	bool has_value;		/* false: "value" is null (failed to measure) */
	double value;
	const char *unit;	/* "" when absent */
	enum better better;	/* as the record states it, else BETTER_UNKNOWN */
	const cJSON *samples;	/* the array, or NULL */
};

/*
 * Whether name is a valid metric name (length, control characters);
 * false with the reason (a static string) in *why.
 */
bool nm_name_valid(const char *name, const char **why);

/*
 * Reads a record's "metrics" value (NULL when the key is absent: *n = 0).
 * Returns a new array of *n metrics in the record's order (free() it), or
 * NULL with a message naming the metric ("metrics.'x'.value must be a
 * finite number or null", the name as Python's repr()) in err[0..errn)
 * when the value is invalid.
 */
struct named_metric *nm_parse(const cJSON *metrics, size_t *n, char *err, size_t errn);

/* Whether glob matches key whole (see above). */
bool nm_glob_match(const char *glob, const char *key);

/* How specific a glob is: its count of literal bytes. */
size_t nm_glob_literals(const char *glob);

/* "<benchmark>/<name>", a new string. */
char *nm_key(const char *benchmark, const char *name);

/* Where a resolved direction came from. */
enum nm_source { NM_FROM_NONE, NM_FROM_RECORD, NM_FROM_CONFIG, NM_FROM_UNIT };

/* The effective policy of one named metric. */
struct nm_policy {
	double threshold_percent;	/* fraction */
	double threshold_absolute;	/* canonical unit */
	bool gated;			/* never true when better is unknown */
	bool needs_direction;	/* unknown direction and not "gated": false: warn */
	enum better better;
	enum nm_source source;		/* of better */
};

/*
 * Checks a policy block ({GLOB: {...}}, the value of
 * regression_thresholds.metrics; NULL is valid: no block). Returns 0, or
 * -1 with a message naming the field ("'BM_*'.threshold_percent must be
 * a finite number") in err. Fields: threshold_percent and
 * threshold_absolute finite numbers, gated a boolean, better "lower" or
 * "higher"; other fields and non-object policies are errors (a typo must
 * not silently keep a default).
 */
int nm_policy_check(const cJSON *block, char *err, size_t errn);

/*
 * The effective policy of metric m (of the record whose benchmark is
 * benchmark) under a checked block (NULL for none).
 */
void nm_policy_resolve(const cJSON *block, const char *benchmark,
    const struct named_metric *m, struct nm_policy *p);

/*
 * The warning for a metric of unknown direction (a new string, no
 * newline): it names the metric and the config key that would fix it:
 *   metric "BM_X/rss" (unit "pages") has no known direction: recorded, not
 *   gated; set regression_thresholds.metrics."BM_X/rss".better to "lower"
 *   or "higher"
 */
char *nm_unknown_warning(const char *key, const char *unit);

/*
 * A static bound of metric key in a static thresholds sub-block ("max" or
 * "min" of the selected thresholds object: {GLOB: number}): the number of
 * the most specific matching glob (as above). Returns false when none
 * matches; *bad is set when the matching value is not a finite number.
 */
bool nm_static_bound(const cJSON *bounds, const char *key, double *out, bool *bad);

#endif
