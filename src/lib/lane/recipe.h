/*
 * recipe: the identity block of a v2 raw record (perf-collect(1)
 * "Record"): the recipe and its fingerprint, the hardware, software and
 * environment profiles and their ids. Values of FASTVIDEO_<X> variables
 * are read as PERF_<X> first.
 */
#ifndef PERF_LANE_RECIPE_H
#define PERF_LANE_RECIPE_H

#include <stdbool.h>

#include <cjson/cJSON.h>

/* One visible GPU, as the hardware profile describes it. */
struct hw_gpu {
	const char *name;
	unsigned long long total_bytes;
	int cc_major, cc_minor;
};

/*
 * The reference's model path normalization: NULL for none; a local
 * path as Path(text).expanduser().as_posix() writes it, ".." kept.
 */
char *recipe_model_path(const cJSON *value);

/*
 * The recipe of a v2 config for the measured prompt (runtime: the runner's
 * "runtime" event, or NULL). NULL with *err set when the benchmark block
 * lacks an identity field; *err may also be set for a bad prompt list.
 */
cJSON *recipe_build(const cJSON *cfg, long count, const cJSON *runtime, char **err);

/* The measured prompt: test_prompts[0], "A cinematic video." when absent. */
const cJSON *recipe_prompt(const cJSON *cfg, char **err);

/* recipe_fingerprint: SHA-256 without the runtime values and benchmark_id. */
int recipe_fingerprint(const cJSON *recipe, char hex[65]);

/*
 * The hardware profile of count GPUs of which nvisible are described in
 * gpus (cuda false: the CPU profile); interconnect the GPUs' link (as
 * "none_or_partial"), written "single_gpu" for one GPU.
 */
cJSON *recipe_hardware_profile(bool cuda, long count, const struct hw_gpu *gpus,
    int nvisible, const char *interconnect);

/* The software profile from the runtime event and the environment. */
cJSON *recipe_software_profile(const cJSON *runtime);

/* environment_metadata; sysname etc. from uname(). */
cJSON *recipe_environment_metadata(const cJSON *runtime, const cJSON *hw,
    const cJSON *sw);

/* "<prefix>" + 16 hex of the canonical SHA-256 of v, as a new string node. */
cJSON *recipe_profile_id(const cJSON *v, const char *prefix);

/* "X.Y" of a version string as the reference extracts it; NULL for none. */
char *recipe_major_minor(const char *version);

#endif
