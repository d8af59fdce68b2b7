/*
 * seed: the reviewed seeding of a new baseline (perf-seed(1)): which
 * CALIBRATION_NEEDED artifacts may become seeds, what a seed holds, where
 * it is staged, and the checks a prepared seed must pass again before it
 * is uploaded. Messages are the reference's, word for word.
 */
#ifndef PERF_LANE_SEED_H
#define PERF_LANE_SEED_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "lane/identity.h"

#define SEED_REASON_STATUS "Approved baseline seed from CALIBRATION_NEEDED source artifact"

/*
 * Prepare: a source artifact that may be seeded. Returns NULL, or the
 * reference's message for the first check it fails (a new string).
 */
char *seed_check_source(const cJSON *rec);

/* Upload: a prepared seed record. NULL, or the message (a new string). */
char *seed_check_prepared(const cJSON *rec);

/* The reference's PR-number truthiness: truthy and not "false"/"0"/"None"/"none". */
bool seed_pr_truthy(const cJSON *v);

/*
 * Prepare: the provenance of a record (job_id, else build_id, else
 * commit_sha and timestamp), as a new string; NULL when it has none.
 */
char *seed_provenance(const cJSON *rec);

/* The six-key identity as an object of strings (the manifest's "identity"). */
cJSON *seed_identity_json(const struct identity *id);
/* workload_id, variant_id, benchmark_version as strings (the manifest's "recipe_cohort"). */
cJSON *seed_cohort_json(const struct identity *id);

/*
 * Prepare: the seed of src. ts is its timestamp, reason the approval
 * rationale, operator NULL for none, source_path the source's real path,
 * index 1..n in the batch.
 */
cJSON *seed_build(const cJSON *src, const char *ts, const char *reason,
    const char *operator, const char *source_path, int index, int n);

/*
 * The store path of a seed: "<S(model_id)>/<S(timestamp)>_<S(commit_sha or
 * unknown)>_seed[_NN].json", _NN only when n > 1. NULL when model_id or
 * timestamp is not a string.
 */
char *seed_path(const cJSON *seed, int index, int n);

/*
 * Prepare: the reservation's name, SHA-256 of the canonical JSON of
 * {"identity": ..., "repository": ...}. hex holds 65 bytes.
 */
void seed_reservation_name(const cJSON *identity, const cJSON *repository, char *hex);

/*
 * Prepare: the timestamp order of n records: order[] gets indices,
 * dated ones ascending (ties in input order), then the undated in input
 * order. When warn, prints the reference's warning for each undated one.
 */
void seed_order(const cJSON *const *recs, int n, int *order, bool warn);

/*
 * Reseed (perf-seed(1) reseed): FastVideo's reviewed baseline shift of a
 * cohort that has a baseline already (its reseed-performance-baseline
 * skill). A reseed record is a source artifact's fields that the cohort's
 * records hold, made a successful, eligible PASS at a fresh timestamp,
 * with the baseline_reseed_* provenance.
 */
#define RESEED_REASON_STATUS_FMT "Approved baseline reseed from %s source artifact"

/* A REGRESSION or PASS scheduled-main artifact: NULL, or the message. */
char *reseed_check_source(const cJSON *rec);
/* A prepared reseed record: NULL, or the message. */
char *reseed_check_prepared(const cJSON *rec);
/* Provenance, never inferred as a baseline field: baseline_reseed*, baseline_seed*. */
bool reseed_provenance_key(const char *key);
/*
 * The reseed of src: its keys (in its order) that fields (a sorted array
 * of n strings) holds or that the procedure sets, timestamp ts, success
 * and baseline_eligible true, comparison_status PASS (and its reason when
 * kept), then baseline_reseed, _reason, _source_result, _source_timestamp,
 * _source_success, _batch_size, _batch_index, _operator (when not NULL),
 * _max_intra_batch_regression.
 */
cJSON *reseed_build(const cJSON *src, char *const *fields, size_t nfields, const char *ts,
    const char *reason, const char *operator, const char *source_path, int index, int n,
    double max_regression);
/* "<S(model_id)>/<S(timestamp)>_<S(commit_sha or unknown)>_reseed_NN.json", or NULL. */
char *reseed_path(const cJSON *rec, int index);

#endif
