/*
 * dash: the HTML dashboard of perf-summarize (perf-summarize(1), drawn
 * without plotly): one self-contained page, inline CSS and inline SVG, no
 * script, nothing fetched. Records are grouped into cohorts as the
 * reference groups them (v2 cohorts merge across display renames; invalid
 * v2 and legacy v1 records stay scoped by model and GPU), with one
 * time-series chart per metric and cohort.
 */
#ifndef PERF_LANE_DASH_H
#define PERF_LANE_DASH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

struct dash;

/* The top-level keys of a record the dashboard reads, *n of them. */
const char *const *dash_keys(size_t *n);

/* A dashboard of the records not older than days before now (µs). */
struct dash *dash_new(int64_t now, long days);

/*
 * Adds a record when its timestamp is within the window (an unparsable one
 * is kept). current marks the batch being summarized: highlighted, and
 * preferred to the same record read from the store: add the batch first.
 */
void dash_add(struct dash *d, const cJSON *rec, bool current);

/*
 * dash_add() of a record whose instant (store_record_instant()) and store
 * path (its key against duplicates; NULL for none) are known.
 */
void dash_add_at(struct dash *d, const cJSON *rec, bool current, int64_t instant,
    const char *key);

/*
 * A change point as perf-changes writes it: drawn as a vertical line on
 * its cohort's chart of its metric, with the commit and the change in its
 * hover text.
 */
void dash_add_change(struct dash *d, const cJSON *cp);

/* The page. */
void dash_render(struct dash *d, buf *out);

/*
 * The dashboard's console lines: "Loaded N records across ...", the skipped
 * plots, "Generated N metric plot(s)".
 */
void dash_report(struct dash *d, FILE *fp);

void dash_free(struct dash *d);

#endif
