/*
 * ab_figure: the figure of a perf-ab report (perf-ab(1) --svg): one row per
 * compared metric, on the left each pair's ratio head / base in the order
 * the pairs ran, on the right the geometric mean and its interval against
 * the shaded equivalence band on a logarithmic axis, with the verdict.
 * The same report gives the same bytes.
 */
#ifndef PERF_CAMPAIGN_AB_FIGURE_H
#define PERF_CAMPAIGN_AB_FIGURE_H

#include <cjson/cJSON.h>

#include "core/buf.h"

void ab_svg(buf *b, const cJSON *report);

#endif
