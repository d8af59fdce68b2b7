/*
 * provenance: provenance of a run (perf-normalize(1), perf-lane(1)): which
 * Buildkite variables say what, and the run-source inference.
 */
#ifndef PERF_LANE_PROVENANCE_H
#define PERF_LANE_PROVENANCE_H

#include <stdbool.h>
#include <stddef.h>

/* Each field is NULL when the variable is unset (options may fill them). */
struct provenance_env {
	const char *run_source;		/* PERF_RUN_SOURCE */
	const char *pull_request;	/* BUILDKITE_PULL_REQUEST */
	const char *branch;		/* BUILDKITE_BRANCH */
	const char *test_scope;		/* TEST_SCOPE */
	const char *commit;		/* BUILDKITE_COMMIT */
	const char *build_url;		/* BUILDKITE_BUILD_URL */
	const char *build_id;		/* BUILDKITE_BUILD_ID */
	const char *job_id;		/* BUILDKITE_JOB_ID */
};

void provenance_env_load(struct provenance_env *e);

/* BUILDKITE_PULL_REQUEST truthiness: non-empty and not exactly false, 0, None or none. */
bool provenance_pr_truthy(const char *s);

/* One of pr, local, scheduled_main, unknown (exactly). */
bool provenance_run_source_valid(const char *s);

/* Python's s.strip().lower() (ASCII letters lowered) into a new string. */
char *provenance_strip_lower(const char *s);

/*
 * The run source of a record: the explicit value if valid after strip/lower,
 * else pr, scheduled_main, local or unknown from the other variables.
 * When warn is set and the explicit value is non-empty and invalid,
 * prints the reference's "Invalid PERF_RUN_SOURCE=<repr>; inferring run
 * source" line on stderr. Returns a static string.
 */
const char *provenance_infer_run_source(const struct provenance_env *e, bool warn);

#endif
