/*
 * events: what a benchmark runner reports (perf-collect(1) "Runner
 * protocol"): one JSON object per line in the file named by PERF_EVENTS,
 *   {"event":"run","phase":"warmup"|"measure","generation_time_s":28.5,
 *    "peak_memory_mb":10840.0,"stages":{...}}
 *   {"event":"runtime","resolved_attention_backend":...,"python":...}
 *   {"event":"metric","name":"tokens_per_s","value":812.5,"unit":"1/s",
 *    "better":"higher","phase":"measure"}
 * and the reference's mapping of stage logs to component metrics.
 */
#ifndef PERF_LANE_EVENTS_H
#define PERF_LANE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

enum { COMP_TEXT_ENCODER, COMP_DIT, COMP_VAE_DECODE, COMP_COUNT };

/* The component keys in that order. */
extern const char *const events_component_keys[COMP_COUNT];

struct run_event {
	bool warmup;
	double seconds;
	cJSON *peak;			/* the reported number, or NULL if none */
	double comp[COMP_COUNT];
	bool has_comp[COMP_COUNT];
};

struct events {
	struct run_event *runs;
	size_t nruns;
	cJSON *runtime;			/* the last runtime event, or NULL */
	/*
	 * The metric events of measured runs (issue 24), as a record's
	 * "metrics" (lane/named_metric.h): {NAME: {"value": the mean,
	 * "unit": canonical, "better"?, "samples": [one a run]}}, in the
	 * order first reported; NULL when there were none.
	 */
	cJSON *named;
	long lines;			/* event lines, valid or not */
	long bad;			/* lines reported and ignored */
};

/*
 * Reads an events file. A line that is not a valid event is reported on
 * stderr as "prog: LABEL:LINE: ..." (label names the file in diagnostics;
 * NULL: its path) and counted in bad. A missing file has no events.
 * Returns 0.
 */
int events_read(const char *path, const char *label, struct events *ev);
void events_free(struct events *ev);

/* The three component times of one run from its stages mapping. */
void events_components(const cJSON *stages, double comp[COMP_COUNT],
    bool has[COMP_COUNT]);

#endif
