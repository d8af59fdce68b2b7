/* Unit tests for policy: the table, coercion, the override merge. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "lane/policy.h"
#include "tap.h"

static cJSON *
parse(const char *s)
{
	json_error e;

	return json_parse(s, strlen(s), &e);
}

static char *
merged(const char *overrides)
{
	struct metric_policy p[METRIC_COUNT];
	cJSON *o = overrides ? parse(overrides) : NULL, *j;
	char bad[64];
	buf b = BUF_INIT;

	if (policy_merge(o, p, bad, sizeof bad) != 0) {
		cJSON_Delete(o);
		return strdup(bad);
	}
	j = policy_to_json(p);
	json_write(&b, j, JSON_COMPACT, NULL);
	cJSON_Delete(j);
	cJSON_Delete(o);
	return buf_detach(&b);
}

#define DEF_THROUGHPUT "\"throughput\":{\"threshold_percent\":0.08,\"threshold_absolute\":0.05,\"gated\":true}"
#define DEF_REST "\"memory\":{\"threshold_percent\":0.05,\"threshold_absolute\":256.0,\"gated\":true}," \
	"\"text_encoder_time_s\":{\"threshold_percent\":0.05,\"threshold_absolute\":0.25,\"gated\":true}," \
	"\"dit_time_s\":{\"threshold_percent\":0.05,\"threshold_absolute\":0.25,\"gated\":true}," \
	"\"vae_decode_time_s\":{\"threshold_percent\":0.05,\"threshold_absolute\":0.25,\"gated\":true}}"
#define DEF_LATENCY "{\"latency\":{\"threshold_percent\":0.08,\"threshold_absolute\":0.5,\"gated\":true}"

int
main(void)
{
	const char *defaults = DEF_LATENCY "," DEF_THROUGHPUT "," DEF_REST;
	cJSON *v;
	double d;
	char *s;

	ok(strcmp(metric_table[0].key, "latency") == 0 &&
	    strcmp(metric_table[5].key, "vae_decode_time_s") == 0,
	    "canonical metric order");
	ok(metric_table[METRIC_THROUGHPUT].higher_is_better &&
	    !metric_table[METRIC_LATENCY].higher_is_better, "directions");
	ok(policy_metric_index("dit_time_s") == METRIC_DIT &&
	    policy_metric_index("nope") == -1, "metric lookup");
	is_str(metric_table[METRIC_LATENCY].unit, "s", "latency is in seconds");
	is_str(metric_table[METRIC_THROUGHPUT].unit, "fps", "throughput is in frames a second");
	is_str(metric_table[METRIC_MEMORY].unit, "MB", "memory is in megabytes");
	ok(strcmp(metric_table[METRIC_TEXT_ENCODER].unit, "s") == 0 &&
	    strcmp(metric_table[METRIC_DIT].unit, "s") == 0 &&
	    strcmp(metric_table[METRIC_VAE_DECODE].unit, "s") == 0, "the stages are in seconds");

	s = merged(NULL);
	is_str(s, defaults, "no overrides: the defaults, written as the reference");
	free(s);
	s = merged("[\"not\",\"a\",\"mapping\"]");
	is_str(s, defaults, "a non-object container gives the defaults");
	free(s);
	s = merged("{\"latency\":{\"threshold_percent\":0.09,\"threshold_absolute\":0.75,"
	    "\"gated\":true},\"throughput\":{\"gated\":false}}");
	is_str(s, "{\"latency\":{\"threshold_percent\":0.09,\"threshold_absolute\":0.75,"
	    "\"gated\":true},\"throughput\":{\"threshold_percent\":0.08,"
	    "\"threshold_absolute\":0.05,\"gated\":false}," DEF_REST,
	    "overrides merge per metric and field");
	free(s);
	s = merged("{\"latency\":{\"threshold_percent\":true,\"threshold_absolute\":false,"
	    "\"gated\":\"false\"}}");
	is_str(s, "{\"latency\":{\"threshold_percent\":0.08,\"threshold_absolute\":0.5,"
	    "\"gated\":false}," DEF_THROUGHPUT "," DEF_REST,
	    "boolean thresholds are ignored, a \"false\" string is read");
	free(s);
	s = merged("{\"latency\":{\"threshold_percent\":1,\"threshold_absolute\":\" 2_0 \","
	    "\"gated\":\" ON \"},\"memory\":{\"gated\":1,\"threshold_absolute\":\"x\"},"
	    "\"bogus\":{\"gated\":false}}");
	is_str(s, "{\"latency\":{\"threshold_percent\":1.0,\"threshold_absolute\":20.0,"
	    "\"gated\":true}," DEF_THROUGHPUT "," DEF_REST,
	    "integers and numeric strings become floats; 1 is not a boolean; "
	    "unknown metrics ignored");
	free(s);
	s = merged("{\"dit_time_s\":{\"threshold_absolute\":\"nan\"}}");
	is_str(s, "dit_time_s.threshold_absolute", "a NaN override is refused by name");
	free(s);

	v = parse("[null,true,false,10,\"1.5\",\" 2 \",\"abc\",[],{},1e400,\"-inf\"]");
	ok(policy_coerce(NULL, &d) == COERCE_NULL, "missing is null");
	ok(policy_coerce(cJSON_GetArrayItem(v, 0), &d) == COERCE_NULL, "null is null");
	ok(policy_coerce(cJSON_GetArrayItem(v, 1), &d) == COERCE_OK && d == 1.0, "true is 1.0");
	ok(policy_coerce(cJSON_GetArrayItem(v, 2), &d) == COERCE_OK && d == 0.0, "false is 0.0");
	ok(policy_coerce(cJSON_GetArrayItem(v, 3), &d) == COERCE_OK && d == 10.0, "10 is 10.0");
	ok(policy_coerce(cJSON_GetArrayItem(v, 4), &d) == COERCE_OK && d == 1.5, "\"1.5\"");
	ok(policy_coerce(cJSON_GetArrayItem(v, 5), &d) == COERCE_OK && d == 2.0, "\" 2 \"");
	ok(policy_coerce(cJSON_GetArrayItem(v, 6), &d) == COERCE_BAD, "\"abc\" is not a number");
	ok(policy_coerce(cJSON_GetArrayItem(v, 7), &d) == COERCE_BAD, "an array is not a number");
	ok(policy_coerce(cJSON_GetArrayItem(v, 8), &d) == COERCE_BAD, "an object is not a number");
	ok(policy_coerce(cJSON_GetArrayItem(v, 9), &d) == COERCE_OK && isinf(d),
	    "1e400 coerces to infinity (callers refuse it)");
	ok(policy_coerce(cJSON_GetArrayItem(v, 10), &d) == COERCE_OK && isinf(d) && d < 0,
	    "\"-inf\" coerces to -infinity");
	cJSON_Delete(v);
	return done_testing();
}
