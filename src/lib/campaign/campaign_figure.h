/*
 * campaign_figure: the standalone figure of a campaign report
 * (perf-analyze(1) --svg): workloads grouped by
 * node class and variant on a shared logarithmic axis, each cell's
 * geometric mean with its Student t interval, the reference line at 1 and
 * the shaded equivalence band, counts and verdicts per row, tooltips with
 * the reasons, the whole report embedded as inert metadata and the
 * digests under the plot. The same report gives the same bytes.
 */
#ifndef PERF_CAMPAIGN_CAMPAIGN_FIGURE_H
#define PERF_CAMPAIGN_CAMPAIGN_FIGURE_H

#include <cjson/cJSON.h>

#include "core/buf.h"

void campaign_svg(buf *b, const cJSON *report);

#endif
