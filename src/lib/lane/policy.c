#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/json.h"
#include "core/num.h"
#include "core/text.h"
#include "lane/policy.h"
#include "lane/provenance.h"

const struct metric metric_table[METRIC_COUNT] = {
	{ "latency", "avg_generation_time_s", "max_generation_time_s",
	  "Latency", "s", 3, false, 0.08, 0.5, true },
	{ "throughput", "throughput_fps", NULL,
	  "Throughput", "fps", 3, true, 0.08, 0.05, true },
	{ "memory", "max_peak_memory_mb", "max_peak_memory_mb",
	  "Memory", "MB", 1, false, 0.05, 256.0, true },
	{ "text_encoder_time_s", "text_encoder_time_s", "max_text_encoder_time_s",
	  "Text Enc", "s", 3, false, 0.05, 0.25, true },
	{ "dit_time_s", "dit_time_s", "max_dit_time_s",
	  "DiT", "s", 3, false, 0.05, 0.25, true },
	{ "vae_decode_time_s", "vae_decode_time_s", "max_vae_decode_time_s",
	  "VAE Decode", "s", 3, false, 0.05, 0.25, true },
};

int
policy_metric_index(const char *key)
{
	for (int i = 0; i < METRIC_COUNT; i++)
		if (strcmp(metric_table[i].key, key) == 0)
			return i;
	return -1;
}

enum coerce
policy_coerce(const cJSON *v, double *out)
{
	if (v == NULL || cJSON_IsNull(v))
		return COERCE_NULL;
	if (cJSON_IsBool(v)) {
		*out = cJSON_IsTrue(v) ? 1.0 : 0.0;
		return COERCE_OK;
	}
	if (cJSON_IsNumber(v)) {
		*out = v->valuedouble;
		return COERCE_OK;
	}
	if (cJSON_IsString(v) && num_py_float(v->valuestring, out))
		return COERCE_OK;
	return COERCE_BAD;
}

/* An override of threshold_percent or threshold_absolute, or false. */
static bool
override_number(const cJSON *v, double *out)
{
	if (v == NULL || cJSON_IsNull(v) || cJSON_IsBool(v))
		return false;
	return policy_coerce(v, out) == COERCE_OK;
}

static bool
override_gated(const cJSON *v, bool *out)
{
	static const char *yes[] = { "1", "true", "yes", "on" };
	static const char *no[] = { "0", "false", "no", "off" };
	const char *s;
	size_t n, i;

	if (cJSON_IsBool(v)) {
		*out = cJSON_IsTrue(v);
		return true;
	}
	if (!cJSON_IsString(v))
		return false;
	s = text_py_strip(v->valuestring, &n);
	for (i = 0; i < 4; i++) {
		if (strlen(yes[i]) == n && strncasecmp(s, yes[i], n) == 0) {
			*out = true;
			return true;
		}
		if (strlen(no[i]) == n && strncasecmp(s, no[i], n) == 0) {
			*out = false;
			return true;
		}
	}
	return false;
}

int
policy_merge(const cJSON *overrides, struct metric_policy p[METRIC_COUNT],
    char *bad, size_t n)
{
	const cJSON *o;
	double d;
	int i;

	for (i = 0; i < METRIC_COUNT; i++) {
		p[i].threshold_percent = metric_table[i].threshold_percent;
		p[i].threshold_absolute = metric_table[i].threshold_absolute;
		p[i].gated = metric_table[i].gated;
		o = json_get(overrides, metric_table[i].key);
		if (!cJSON_IsObject(o))
			continue;
		if (override_number(json_get(o, "threshold_percent"), &d)) {
			if (!isfinite(d)) {
				snprintf(bad, n, "%s.threshold_percent",
				    metric_table[i].key);
				return -1;
			}
			p[i].threshold_percent = d;
		}
		if (override_number(json_get(o, "threshold_absolute"), &d)) {
			if (!isfinite(d)) {
				snprintf(bad, n, "%s.threshold_absolute",
				    metric_table[i].key);
				return -1;
			}
			p[i].threshold_absolute = d;
		}
		override_gated(json_get(o, "gated"), &p[i].gated);
	}
	return 0;
}

cJSON *
policy_to_json(const struct metric_policy p[METRIC_COUNT])
{
	cJSON *all = json_new_object(), *m;

	for (int i = 0; i < METRIC_COUNT; i++) {
		m = json_new_object();
		json_set(m, "threshold_percent", json_new_float(p[i].threshold_percent));
		json_set(m, "threshold_absolute", json_new_float(p[i].threshold_absolute));
		json_set(m, "gated", json_new_bool(p[i].gated));
		json_set(all, metric_table[i].key, m);
	}
	return all;
}

bool
policy_upload_parse(const char *s, enum upload_policy *p, char **norm)
{
	static const char *const names[] = { "never", "pass", "always" };
	char *v = provenance_strip_lower(s);

	for (int i = 0; i < 3; i++)
		if (strcmp(v, names[i]) == 0) {
			*p = (enum upload_policy)i;
			free(v);
			return true;
		}
	if (norm != NULL)
		*norm = v;
	else
		free(v);
	return false;
}
