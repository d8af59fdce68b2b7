/*
 * bisect_report: the bisect reports a history store keeps (perf-bisect(1)
 * --store), read back so that the change points they explain can name
 * their culprit (perf-changes(1) "culprit").
 *
 * A report is a record of its own kind, never a tracking record: it is
 * stored as "<store>/.perfkite/bisect/<ts>_<good12>_<bad12>.json" (schema
 * "perfkite.bisect-report/1"), under a hidden directory that neither the
 * reference's loader nor perfkite's tracking-record reader looks into.
 * A report that cannot be read is a warning naming its file (and line),
 * then skipped: a foreign or damaged file never stops a gate.
 */
#ifndef PERF_LANE_BISECT_REPORT_H
#define PERF_LANE_BISECT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "lane/identity.h"

#define BISECT_REPORTS_DIR ".perfkite/bisect"
#define BISECT_REPORT_SCHEMA "perfkite.bisect-report/1"

struct bisect_report_culprit {
	char *commit, *subject;	/* subject "" when the report has none */
	double share;		/* of the whole change; NAN when not given */
	bool dependency;	/* only a lock file or a submodule changed */
};

struct bisect_report {
	char *path;		/* store-relative */
	int64_t instant;	/* of created_at; ISOTIME_MIN when none */
	char *good, *bad, *metric;
	/*
	 * The cohort, from the change point it was started from
	 * (--from-change): the six identity values when the change has them
	 * (v2), else model_id and gpu_type; no cohort (any) without one.
	 */
	bool has_cohort, v2;
	char *identity[IDENTITY_KEYS], *model, *gpu;
	struct bisect_report_culprit *k;	/* the largest share first */
	size_t nk;
};

struct bisect_reports {
	struct bisect_report *r;	/* newest first: (instant, path) descending */
	size_t n;
};

/*
 * Loads the reports of the store directory dir (none when it has no
 * reports directory), newest first. Only reports whose status is "found"
 * are kept. Every file that cannot be read, is not JSON or not a bisect
 * report is reported as a warning ("FILE:LINE: ..." or "FILE: ...") and
 * skipped; returns how many were.
 */
size_t bisect_reports_load(const char *dir, struct bisect_reports *rs);
void bisect_reports_free(struct bisect_reports *rs);

/*
 * The newest report that covers a change point of metric, of the cohort
 * (ident: its six identity values, or NULL for a legacy cohort; model
 * and gpu), between the records of the commits prev and commit. A report
 * covers it when it bisected the same metric on that cohort (or named
 * none; a named metric NAME of model is also "<model>/NAME", as
 * perf-bisect --metric BENCHMARK/NAME names it), and either its good..bad is prev..commit or one of its culprits
 * is commit itself (a wider bisect whose culprit the change point brackets
 * alone). Commits are equal when one is a prefix of the other of at least
 * 7 hex digits. *first is set to the index of the first culprit that
 * applies; *all tells whether every culprit does (the same range) or only
 * that one. NULL when none covers it.
 */
const struct bisect_report *bisect_reports_covering(const struct bisect_reports *rs,
    char *const *ident, const char *model, const char *gpu, const char *metric,
    const char *prev, const char *commit, size_t *first, bool *all);

/*
 * The "culprit" object of a change point: {"commit", "short" (7 digits),
 * "subject", "share" (or null), "dependency_change", "report" (the
 * report's store path)}.
 */
cJSON *bisect_report_culprit_json(const struct bisect_report *r, size_t i);

#endif
