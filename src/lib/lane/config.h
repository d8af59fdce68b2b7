/*
 * config: benchmark configs as the reference validates and reads them
 * (perf-collect(1) "Configs").
 */
#ifndef PERF_LANE_CONFIG_H
#define PERF_LANE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/*
 * The reference's discovery-time validation, rules in their order, first
 * failure wins. Returns NULL when valid, else the exact message, starting
 * with "<path>: " (a new string).
 */
char *config_validate(const cJSON *cfg, const char *path);

/* v2: config_schema_version equal to 2 (validated configs only). */
bool config_is_v2(const cJSON *cfg);

/* The display id (benchmark_id as text; "None" for null). New string. */
char *config_display_id(const cJSON *cfg);

/*
 * run_config as an object ({} for null and other falsy values), or NULL
 * when it is something truthy that is not an object.
 */
const cJSON *config_run_config(const cJSON *cfg);

/*
 * Run counts: defaults 1 and 3 when the keys are absent. Returns
 * NULL, or the message ("<id>: run_config.num_warmup_runs must be a
 * non-negative integer").
 */
char *config_run_counts(const cJSON *cfg, long *warmup, long *measure);

/*
 * The GPU count from init_kwargs.num_gpus, run_config.required_gpus,
 * tp_size and sp_size. Returns NULL, or the reference's message.
 */
char *config_gpu_count(const cJSON *cfg, long *count);

/*
 * The selected static thresholds block: the first key of
 * "thresholds" in file order that is a substring of device, else
 * "default", else the built-in {120.0, 30000.0}. A new tree; NULL (with
 * *err set) when "thresholds" is present but not an object.
 */
cJSON *config_thresholds(const cJSON *cfg, const char *device, char **err);

/*
 * The gpu_types gate: NULL when the benchmark may run on
 * device, else the reference's skip reason.
 */
char *config_gpu_types_skip(const cJSON *cfg, const char *device);

/* A config typo found by config_lint(). */
struct config_issue {
	long line;		/* of the key in the file, 0 when unknown */
	bool error;		/* an error, else a warning */
	char *msg;
};

/*
 * Typos the reference passes over silently: keys it never reads at the top
 * level or in regression_thresholds (warnings naming the closest known
 * key by edit distance), a regression threshold that is not a number (an
 * error: "5%"), and a threshold or gated value of a type the reference
 * ignores (a warning: the default is kept). Every form the reference
 * applies stays silent. text is the file's text, to find lines. Returns
 * the issues (*n of them), a new array for config_issues_free().
 */
struct config_issue *config_lint(const cJSON *cfg, const char *text, size_t *n);
void config_issues_free(struct config_issue *issues, size_t n);

#endif
