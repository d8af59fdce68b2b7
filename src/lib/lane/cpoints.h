/*
 * cpoints: change points as perf-changes writes them (one JSON object
 * each), read back by whoever shows them: the Markdown table of
 * perf-changes --md and of perf-summarize's "Change points" section.
 */
#ifndef PERF_LANE_CPOINTS_H
#define PERF_LANE_CPOINTS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

/*
 * Appends the Markdown table of cps[0..n) (n >= 1): a header row, then one
 * row per event (the change points of one cohort at one record, their
 * metrics listed one per line in each cell), worse events first, newest
 * first within each; each row with its range previous..commit (and the
 * untrusted runs between), the runs before and after, "tentative" where a
 * change point is, a p-value below 1e-300 as "<1e-300", and what tells its
 * cohort apart from another row's of the same model and GPU. Then the
 * drifts: runs of adjacent change points of one series in one direction,
 * with their total change. A field that is absent (an older perf-changes)
 * is left out.
 */
void cpoints_markdown(buf *out, const cJSON **cps, size_t n);

#endif
