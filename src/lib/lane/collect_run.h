/*
 * collect_run: running perf-collect from a program that runs benchmarks
 * itself (perf-ab(1), perf-bisect(1)): where perf-collect is, a program
 * run in a directory with its output in a log (whose tail is shown when it
 * fails), and the record perf-collect wrote.
 */
#ifndef PERF_LANE_COLLECT_RUN_H
#define PERF_LANE_COLLECT_RUN_H

#include <cjson/cJSON.h>

/* perf-collect next to this program, else "perf-collect" (from PATH); malloc'd. */
char *collect_find(void);

/*
 * Runs argv in dir with its stdout and stderr in log. 0 when it exited
 * 0; -1 after saying why on stderr ("what: ..." and the log's tail), or
 * when perfkite was asked to stop (proc_stop_signal()).
 */
int collect_run_in(const char *dir, char **argv, const char *log, const char *what);

/* The one perf_*.json perf-collect wrote in dir, parsed; NULL when none. */
cJSON *collect_read_record(const char *dir);

/* Every perf_*.json perf-collect wrote in dir that parses, as an array. */
cJSON *collect_read_records(const char *dir);

#endif
