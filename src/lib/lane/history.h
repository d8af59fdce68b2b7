/*
 * history: the records of one comparison cohort as the gates read them
 * from the store: each record's instant, store path and six metric values
 * (what is not a finite number is missing), ordered by (timestamp, path),
 * a stream line that repeats a record already read being dropped.
 */
#ifndef PERF_LANE_HISTORY_H
#define PERF_LANE_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/strmap.h"
#include "lane/policy.h"
#include "lane/store/read.h"

struct hist_point {
	int64_t instant;
	char *path;
	char *key;		/* store_record_path() of its content, or NULL */
	char *timestamp;	/* str() of timestamp and commit_sha, when asked */
	char *commit;
	double v[METRIC_COUNT];
	bool has[METRIC_COUNT];
	/*
	 * Values of named metrics the caller asked for (NaN: missing), a
	 * malloc'd array the history frees, or NULL (history_add sets none).
	 */
	double *named;
};

struct history {
	struct hist_point *p;
	size_t n, cap;
	bool meta;		/* keep timestamp and commit */
	bool no_streams;	/* no stream line comes: nothing to drop */
	bool borrowed;		/* the points' strings are the caller's (history_push) */
	/* store paths read, against a stream's repeats */
	struct strmap keys;
};

/*
 * Adds the record of a store hit (a stream line that repeats a path
 * already read is dropped). Returns the point, or NULL when dropped.
 */
struct hist_point *history_add(struct history *h, const struct store_hit *hit);

/*
 * Adds a point made by the caller (a stream point whose key a point
 * before it had is dropped: NULL). Its strings become the history's,
 * unless h->borrowed.
 */
struct hist_point *history_push(struct history *h, const struct hist_point *pt, bool stream);

/* Orders the points by (instant, path). */
void history_sort(struct history *h);

void history_free(struct history *h);

#endif
