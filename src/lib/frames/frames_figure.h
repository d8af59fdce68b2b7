/*
 * frames_figure: the standalone figure of a perf-frames comparison: the
 * per-run frame-time distributions of both variants as percentile curves
 * (frame time on a log axis against 1/(1-p) on a log axis, so the tail
 * has room), each run's coverage of the measurement window beside it.
 */
#ifndef PERF_FRAMES_FRAMES_FIGURE_H
#define PERF_FRAMES_FRAMES_FIGURE_H

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "frames/frames.h"

struct frames_svg_run {
	const char *repeat_id, *variant;
	double coverage;
	long long intervals;
	const struct frames_point *curve;
	int ncurve;
};

/* Appends the SVG document of the report rep and its runs' curves. */
void frames_svg(buf *out, const cJSON *rep, const struct frames_svg_run *runs, int nruns);

#endif
