/*
 * identity: the comparison identity of a tracking record
 * (perf-gate-rolling(1)): six keys whose string forms must all be equal
 * for two records to be compared.
 */
#ifndef PERF_LANE_IDENTITY_H
#define PERF_LANE_IDENTITY_H

#include <stdbool.h>

#include <cjson/cJSON.h>

/* The identity's slots, in the canonical order of identity_keys[]. */
enum identity_slot {
	IDENTITY_WORKLOAD,		/* workload_id */
	IDENTITY_VARIANT,		/* variant_id */
	IDENTITY_BENCHMARK_VERSION,	/* benchmark_version */
	IDENTITY_RECIPE,		/* recipe_fingerprint */
	IDENTITY_HARDWARE,		/* hardware_profile_id */
	IDENTITY_SOFTWARE,		/* software_profile_id */
	IDENTITY_KEYS
};

/* The keys of the slots: identity_keys[IDENTITY_RECIPE] is "recipe_fingerprint". */
extern const char *const identity_keys[IDENTITY_KEYS];

struct identity {
	bool uses_v2;		/* str(result_schema_version) == "2" or a key present */
	bool complete;		/* every key present, not null, not blank */
	char *value[IDENTITY_KEYS];	/* Python str() of each value ("None" when missing) */
	char *error;		/* the reference's error text when incomplete, else NULL */
};

/* Whether an identity value counts as missing: absent, null or blank (str.strip()). */
bool identity_value_missing(const cJSON *v);
/*
 * Whether a record with the identity values v (NULL when absent) and the
 * result_schema_version schema (or NULL) uses the v2 identity: a key
 * present, or str(schema) == "2".
 */
bool identity_uses_v2(const cJSON *schema, const cJSON *const v[IDENTITY_KEYS]);

/* Fills id from a tracking record; release with identity_free(). */
void identity_of(const cJSON *rec, struct identity *id);
void identity_free(struct identity *id);

/*
 * Whether a and b are two benchmarks of one imported suite (perf-import(1):
 * both have recipe.tool) with different recipe.benchmark.benchmark_id.
 * Such benchmarks share the suite's workload, variant and version, so the
 * other's fingerprint is another benchmark's, never another recipe.
 */
bool identity_other_benchmark(const cJSON *a, const cJSON *b);

/* Adds identity_other_recipe(rec, fp), when there is one, to the set fps[0..*n). */
void identity_add_other_recipe(const cJSON *rec, const char *fp, char ***fps, size_t *n);

#endif
