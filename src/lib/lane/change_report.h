/*
 * change_report: change points as perf-changes writes them (one JSON object
 * each), read back by whoever shows them: the Markdown table of
 * perf-changes --md and of perf-summarize's "Change points" section.
 */
#ifndef PERF_LANE_CHANGE_REPORT_H
#define PERF_LANE_CHANGE_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

/*
 * Appends the Markdown table of cps[0..n) (n >= 1): a header row, then
 * the worse changes first, newest first within each (cps is sorted so).
 */
void cpoints_markdown(buf *out, const cJSON **cps, size_t n);

#endif
