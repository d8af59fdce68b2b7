/*
 * import: benchmark tools' output read into perfkite's raw records
 * (perf-import(1)): Google Benchmark, pytest-benchmark, hyperfine,
 * go test -bench, Catch2, Criterion.rs, JMH, BenchmarkDotNet and
 * perfkite's own generic JSON.
 *
 * A parser turns one input into a suite: benchmarks, each with its
 * params, tool settings and named metrics in canonical units (s, B, B/s,
 * items/s, 1/s: import_unit(), through core's unit table). A metric's
 * direction is set only where the input states it (a JMH mode,
 * BenchmarkDotNet's TheGreaterTheBetter, github-action-benchmark's
 * customBiggerIsBetter, perfkite's JSON, a runner event); otherwise it
 * stays unknown and the consumers decide (config, then unit rule).
 * import_record() makes the raw record of one benchmark, with a complete
 * v2 identity.
 */
#ifndef PERF_LANE_IMPORT_IMPORT_H
#define PERF_LANE_IMPORT_IMPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/unit.h"
#include "lane/gpu.h"
#include "lane/provenance.h"

/* Longest metric name, in bytes. */
#define IMPORT_NAME_MAX 128

struct import_metric {
	char *name;
	char *unit;		/* canonical, or the tool's own when not convertible */
	double value;		/* NaN or infinite: a failed metric */
	enum better better;	/* as the input states it (core/unit.h) */
	double *samples;	/* NULL when the input has none */
	size_t nsamples;
	char *error;		/* why the metric failed, or NULL */
};

struct import_bench {
	char *id;		/* the tool's benchmark id */
	cJSON *params;		/* object: parameters that are not in id */
	cJSON *settings;	/* object: tool settings that change what is measured */
	char *workload;		/* the suite, or NULL for the suite's own */
	char *error;		/* the tool's message for a failed benchmark, or NULL */
	bool id_has_params;	/* params are already spelled in id */
	struct import_metric *m;
	size_t nm;
};

struct import_suite {
	const char *format;	/* one of import_formats */
	char *workload;		/* the suite: executable, module, package... or NULL */
	char *tool_version;	/* when the output says it, or NULL */
	cJSON *hw_context;	/* the tool's machine facts (object), or NULL */
	cJSON *sw_context;	/* compiler, interpreter versions (object), or NULL */
	struct import_bench *b;
	size_t nb;
	size_t cap;
	/* import_record()'s profiles, made once for the suite's records */
	cJSON *hw, *sw, *hw_id, *sw_id;
	/* import_record_write()'s text of the keys every record shares */
	char *head, *profiles;
};

/* The formats, NULL-terminated, in the order detection tries them. */
extern const char *const import_formats[];

/* Whether name is one of import_formats. */
bool import_format_known(const char *name);

/* What recognition looks for, for the message when nothing matched. */
extern const char import_detect_help[];

/*
 * Parses text (the file path, for diagnostics; for criterion the tree or
 * one benchmark's directory) as format, or as the format it is recognised
 * as when format is NULL, into suite (zeroed by the caller; its format
 * set). Returns 0, or -1 with *line (0 when none) and msg filled in.
 */
int import_parse(const char *format, const char *path, const char *text, size_t len,
    struct import_suite *suite, long *line, char *msg, size_t msgsz);

void import_suite_free(struct import_suite *s);

/* A new benchmark at the end of s (id copied; params, settings empty). */
struct import_bench *import_add_bench(struct import_suite *s, const char *id);
/* A new metric of b; value in unit converted by import_unit(). */
struct import_metric *import_add_metric(struct import_bench *b, const char *name,
    double value, const char *unit);
/* Sets the samples of m (in the tool's unit, converted as m's value was). */
void import_set_samples(struct import_metric *m, const double *v, size_t n,
    const char *unit);

/*
 * Appends one sample of metric name to b (the metric is added on its first
 * sample); import_finish_means() then sets each sampled metric's value to
 * the mean of its samples.
 */
void import_push_sample(struct import_bench *b, const char *name, double v,
    const char *unit);
void import_finish_means(struct import_bench *b);

/* The "metrics" object of b: {NAME: {value, unit, better?, samples?, error?}}. */
cJSON *import_metrics_json(const struct import_bench *b);

/* Frees what b holds (not b itself). */
void import_bench_free(struct import_bench *b);

/*
 * The conversion of a tool's unit: *canon gets the canonical unit (or
 * unit itself when there is none) and the result is the factor to
 * multiply by (1 when unconverted).
 */
double import_unit(const char *unit, const char **canon);

/* "k=v,k=v" of params in key order, "default" when empty (new string). */
char *import_variant(const cJSON *params);

/* What identity the records get beside what the suite says. */
struct import_identity {
	const char *device;		/* the machine, as perf-collect sees it */
	cJSON *hardware;		/* this machine's hardware profile (copied) */
	cJSON *software;		/* runtime facts to add to the software profile, or NULL */
	const cJSON *regression_thresholds;	/* NULL: {} */
	const cJSON *thresholds;	/* NULL: {} */
	const char *worker_log;		/* NULL: null */
	cJSON *benchmark_version;	/* NULL: 1 */
	const char *const *overrides;	/* "KEY=VALUE" strings, NULL-terminated, or NULL */
	/* provenance */
	const char *commit, *run_source, *branch, *pr_number, *test_scope,
	    *build_url, *build_id, *job_id;
};

/* The keys --identity may set. */
extern const char *const import_identity_keys[];
/* Whether "KEY=VALUE" names one of them (benchmark_version: an integer). */
bool import_identity_valid(const char *kv, char *msg, size_t msgsz);

/*
 * Reads path (NULL or "-": standard input; label names it in diagnostics)
 * and parses it as format, or as the format it is recognised as when
 * format is NULL (said on stderr). Problems are reported as
 * "prog: LABEL:LINE: ..."; returns 0 or -1.
 */
int import_read(const char *format, const char *path, const char *label,
    struct import_suite *s);
/* import_read() of text already read (path: for criterion's siblings, or NULL). */
int import_text(const char *format, const char *path, const char *text, size_t len,
    const char *label, struct import_suite *s);

/* The provenance of id from the environment (options may have changed e). */
void import_provenance(struct import_identity *id, const struct provenance_env *e);

/* The hardware profile of this machine with count GPUs, as perf-collect writes it. */
cJSON *import_hardware_profile(const struct gpu *g, long count);

/*
 * Reports each failed benchmark and failed metric of s on stderr (label:
 * the input); returns how many records will carry a failure.
 */
long import_report_failures(const struct import_suite *s, const char *label);

/*
 * The raw record of benchmark b of s (whose profiles it makes on the first
 * call: every record of a suite has the same identity id).
 */
cJSON *import_record(struct import_suite *s, const struct import_bench *b,
    const struct import_identity *id);

/*
 * import_record() of b as compact JSON, appended to out: the bytes
 * json_write() writes of it, without the tree (the keys every record of
 * the suite shares are written once, then copied). Returns 0, or -1 with
 * out unchanged when a value is not a finite number (json_write() of
 * import_record() then says where).
 */
int import_record_write(struct import_suite *s, const struct import_bench *b,
    const struct import_identity *id, buf *out);

#endif
