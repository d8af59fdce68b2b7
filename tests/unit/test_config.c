/* Unit tests for config: the reference's test cases. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "lane/config.h"
#include "core/json.h"
#include "tap.h"

static cJSON *
parse(const char *s)
{
	json_error e;

	return json_parse(s, strlen(s), &e);
}

#define V2 "\"benchmark_id\":\"wan-t2v-1.3b-2gpu\",\"config_schema_version\":2," \
	"\"workload_id\":\"wan-t2v\",\"variant_id\":\"1.3b-sp2\",\"benchmark_version\":2"

static void
valid(const char *text, const char *name)
{
	cJSON *c = parse(text);
	char *msg = config_validate(c, "wan.json");

	ok(msg == NULL, "valid: %s%s%s", name, msg ? " -- " : "", msg ? msg : "");
	free(msg);
	cJSON_Delete(c);
}

static void
invalid(const char *text, const char *want)
{
	cJSON *c = parse(text);
	char *msg = config_validate(c, "wan.json");

	is_str(msg, want, "invalid: %s", want);
	free(msg);
	cJSON_Delete(c);
}

static void
gpus(const char *text, long want, const char *err)
{
	cJSON *c = parse(text);
	long n = 0;
	char *msg = config_gpu_count(c, &n);

	if (err == NULL)
		ok(msg == NULL && n == want, "GPU count %ld for %s (%s)", want, text,
		    msg ? msg : "ok");
	else
		is_str(msg, err, "GPU count error for %s", text);
	free(msg);
	cJSON_Delete(c);
}

static void
counts(const char *text, long w, long m, const char *err)
{
	cJSON *c = parse(text);
	long gw, gm;
	char *msg = config_run_counts(c, &gw, &gm);

	if (err == NULL)
		ok(msg == NULL && gw == w && gm == m, "run counts (%ld, %ld) for %s", w, m, text);
	else
		is_str(msg, err, "run counts error for %s", text);
	free(msg);
	cJSON_Delete(c);
}

static void
thresholds(const char *cfg, const char *device, const char *want)
{
	cJSON *c = parse(cfg), *t;
	char *err;
	buf b = BUF_INIT;

	t = config_thresholds(c, device, &err);
	json_write(&b, t, JSON_COMPACT, NULL);
	is_str(b.s, want, "thresholds for %s", device);
	buf_free(&b);
	cJSON_Delete(t);
	cJSON_Delete(c);
}

int
main(void)
{
	cJSON *c;
	char *s;

	/* Which configs are valid, and the first error of an invalid one. */
	valid("{\"benchmark_id\":\"legacy-benchmark\"}", "v1");
	c = parse("{\"benchmark_id\":\"legacy-benchmark\"}");
	ok(!config_is_v2(c), "a v1 config is not v2");
	s = config_display_id(c);
	is_str(s, "legacy-benchmark", "display id");
	free(s);
	cJSON_Delete(c);
	valid("{" V2 ",\"quality_metadata\":{\"some\":\"data\"}}", "v2 with metadata");
	c = parse("{" V2 "}");
	ok(config_is_v2(c), "v2");
	cJSON_Delete(c);
	invalid("{\"benchmark_id\":\"a\",\"config_schema_version\":2,\"workload_id\":\"w\"}",
	    "wan.json: missing required v2 identity fields: variant_id, benchmark_version");
	invalid("{" V2 ",\"workload_id\":{}}",
	    "wan.json: v2 identity field 'workload_id' must be a non-empty string");
	invalid("{" V2 ",\"workload_id\":\"\"}",
	    "wan.json: v2 identity field 'workload_id' must be a non-empty string");
	invalid("{" V2 ",\"workload_id\":\"   \"}",
	    "wan.json: v2 identity field 'workload_id' must be a non-empty string");
	invalid("{" V2 ",\"variant_id\":[]}",
	    "wan.json: v2 identity field 'variant_id' must be a non-empty string");
	invalid("{" V2 ",\"variant_id\":\"\"}",
	    "wan.json: v2 identity field 'variant_id' must be a non-empty string");
	invalid("{" V2 ",\"variant_id\":\"   \"}",
	    "wan.json: v2 identity field 'variant_id' must be a non-empty string");
	invalid("{" V2 ",\"benchmark_version\":null}",
	    "wan.json: v2 identity field 'benchmark_version' must be an integer");
	invalid("{" V2 ",\"benchmark_version\":\"1\"}",
	    "wan.json: v2 identity field 'benchmark_version' must be an integer");
	invalid("{" V2 ",\"benchmark_version\":1.5}",
	    "wan.json: v2 identity field 'benchmark_version' must be an integer");
	invalid("{" V2 ",\"benchmark_version\":true}",
	    "wan.json: v2 identity field 'benchmark_version' must be an integer");
	invalid("{" V2 ",\"benchmark_version\":3.0}",
	    "wan.json: v2 identity field 'benchmark_version' must be an integer");
	valid("{" V2 ",\"benchmark_version\":-1}", "negative versions are integers");
	invalid("{\"benchmark_id\":\"a\",\"workload_id\":\"w\",\"variant_id\":\"v\","
	    "\"benchmark_version\":1}",
	    "wan.json: v2 benchmark identity fields require config_schema_version=2");
	invalid("{\"benchmark_id\":\"a\",\"config_schema_version\":null,\"quality_metadata\":null}",
	    "wan.json: v2 benchmark identity fields require config_schema_version=2");
	invalid("{" V2 ",\"quality_metadata\":[\"not\",\"an\",\"object\"]}",
	    "wan.json: optional v2 metadata field 'quality_metadata' must be an object");
	valid("{\"benchmark_id\":\"a\",\"regression_thresholds\":{\"latency\":"
	    "{\"threshold_percent\":0.1}}}", "regression_thresholds object");
	invalid("{\"benchmark_id\":\"a\",\"regression_thresholds\":[]}",
	    "wan.json: benchmark config field 'regression_thresholds' must be an object");
	invalid("{\"benchmark_id\":\"a\",\"regression_thresholds\":null}",
	    "wan.json: benchmark config field 'regression_thresholds' must be an object");
	invalid("{\"name\":\"x\"}", "wan.json: missing required benchmark config fields: benchmark_id");
	valid("{\"benchmark_id\":null}", "a null benchmark_id passes discovery");
	invalid("{\"benchmark_id\":\"a\",\"config_schema_version\":1}",
	    "wan.json: unsupported benchmark config_schema_version=1");
	invalid("{\"benchmark_id\":\"a\",\"config_schema_version\":\"2\"}",
	    "wan.json: unsupported benchmark config_schema_version='2'");
	invalid("{\"benchmark_id\":\"a\",\"config_schema_version\":[2]}",
	    "wan.json: unsupported benchmark config_schema_version=[2]");
	invalid("{\"benchmark_id\":\"a\",\"config_schema_version\":true}",
	    "wan.json: unsupported benchmark config_schema_version=True");
	valid("{" V2 ",\"config_schema_version\":2.0}", "2.0 equals 2");

	/* gpu_types: a list of non-empty strings */
	invalid("{\"benchmark_id\":\"a\",\"run_config\":{\"gpu_types\":\"GB10\"}}",
	    "wan.json: run_config.gpu_types must be a list of non-empty strings");
	invalid("{\"benchmark_id\":\"a\",\"run_config\":{\"gpu_types\":[\"GB10\",3]}}",
	    "wan.json: run_config.gpu_types must be a list of non-empty strings");
	invalid("{\"benchmark_id\":\"a\",\"run_config\":{\"gpu_types\":[\"\"]}}",
	    "wan.json: run_config.gpu_types must be a list of non-empty strings");
	invalid("{\"benchmark_id\":\"a\",\"run_config\":{\"gpu_types\":[null]}}",
	    "wan.json: run_config.gpu_types must be a list of non-empty strings");
	valid("{\"benchmark_id\":\"a\",\"run_config\":{\"gpu_types\":[\" \"]}}", "whitespace passes");
	valid("{\"benchmark_id\":\"a\",\"run_config\":{\"gpu_types\":[]}}", "[] passes");
	valid("{\"benchmark_id\":\"a\",\"run_config\":5}", "a non-object run_config skips the check");
	c = parse("{\"benchmark_id\":\"b\",\"run_config\":{\"gpu_types\":[\"GB10\"]}}");
	s = config_gpu_types_skip(c, "NVIDIA GB10");
	ok(s == NULL, "GB10 runs on NVIDIA GB10");
	s = config_gpu_types_skip(c, "NVIDIA L40S");
	is_str(s, "b is restricted to gpu_types=['GB10'], current device is 'NVIDIA L40S'",
	    "and is skipped elsewhere");
	free(s);
	s = config_gpu_types_skip(c, "NVIDIA H100 80GB HBM3");
	ok(s != NULL, "H100 skipped too");
	free(s);
	cJSON_Delete(c);
	c = parse("{\"benchmark_id\":\"b\",\"run_config\":{\"gpu_types\":[]}}");
	ok(config_gpu_types_skip(c, "NVIDIA L40S") == NULL, "[] runs anywhere");
	cJSON_Delete(c);

	/* The run counts: warm-up and measured runs, defaults and overrides. */
	counts("{\"benchmark_id\":\"b\"}", 1, 3, NULL);
	counts("{\"benchmark_id\":\"b\",\"run_config\":null}", 1, 3, NULL);
	counts("{\"benchmark_id\":\"b\",\"run_config\":{\"num_warmup_runs\":2,"
	    "\"num_measurement_runs\":5}}", 2, 5, NULL);
	counts("{\"benchmark_id\":\"b\",\"run_config\":{\"num_warmup_runs\":1,"
	    "\"num_measurement_runs\":0}}", 0, 0,
	    "b: run_config.num_measurement_runs must be a positive integer");
	counts("{\"benchmark_id\":\"b\",\"run_config\":{\"num_warmup_runs\":-1}}", 0, 0,
	    "b: run_config.num_warmup_runs must be a non-negative integer");
	counts("{\"benchmark_id\":\"b\",\"run_config\":{\"num_warmup_runs\":null}}", 0, 0,
	    "b: run_config.num_warmup_runs must be a non-negative integer");
	counts("{\"benchmark_id\":\"b\",\"run_config\":{\"num_measurement_runs\":2.0}}", 0, 0,
	    "b: run_config.num_measurement_runs must be a positive integer");
	counts("{\"benchmark_id\":\"b\",\"run_config\":{\"num_warmup_runs\":true}}", 0, 0,
	    "b: run_config.num_warmup_runs must be a non-negative integer");

	/* The GPUs a benchmark needs: required_gpus, else tp_size, else one. */
	gpus("{\"benchmark_id\":\"b\",\"run_config\":{\"required_gpus\":2}}", 2, NULL);
	gpus("{\"benchmark_id\":\"b\",\"init_kwargs\":{\"tp_size\":2}}", 2, NULL);
	gpus("{\"benchmark_id\":\"b\"}", 1, NULL);
	gpus("{\"benchmark_id\":\"b\",\"init_kwargs\":{\"sp_size\":-1,\"tp_size\":null}}", 1, NULL);
	gpus("{\"benchmark_id\":\"b\",\"init_kwargs\":{\"num_gpus\":1},\"run_config\":"
	    "{\"required_gpus\":2}}", 0,
	    "b: init_kwargs.num_gpus (1) must match run_config.required_gpus (2)");
	gpus("{\"benchmark_id\":\"b\",\"init_kwargs\":{\"num_gpus\":1,\"tp_size\":2},"
	    "\"run_config\":{\"required_gpus\":1}}", 0,
	    "b: declared GPU count (1) must be at least max(tp_size, sp_size) (2)");
	gpus("{\"benchmark_id\":\"b\",\"init_kwargs\":{\"num_gpus\":0}}", 0,
	    "b: init_kwargs.num_gpus must be a positive integer");
	gpus("{\"benchmark_id\":\"b\",\"run_config\":{\"required_gpus\":true}}", 0,
	    "b: run_config.required_gpus must be a positive integer");
	gpus("{\"benchmark_id\":\"b\",\"init_kwargs\":{\"sp_size\":0}}", 0,
	    "b: init_kwargs.sp_size must be -1 or a positive integer");

	/* Static thresholds: first key in file order that is a substring, then default, then built-in. */
	thresholds("{\"thresholds\":{\"L40S\":{\"max_generation_time_s\":34.0},"
	    "\"default\":{\"max_generation_time_s\":120.0}}}", "NVIDIA L40S",
	    "{\"max_generation_time_s\":34.0}");
	thresholds("{\"thresholds\":{\"L40S\":{\"a\":1},\"default\":{\"a\":2}}}", "NVIDIA H100",
	    "{\"a\":2}");
	thresholds("{\"thresholds\":{\"NVIDIA\":{\"a\":1},\"L40S\":{\"a\":2}}}", "NVIDIA L40S",
	    "{\"a\":1}");
	thresholds("{\"thresholds\":{\"l40s\":{\"a\":1}}}", "NVIDIA L40S",
	    "{\"max_generation_time_s\":120.0,\"max_peak_memory_mb\":30000.0}");
	thresholds("{}", "cpu", "{\"max_generation_time_s\":120.0,\"max_peak_memory_mb\":30000.0}");
	thresholds("{\"thresholds\":{\"default\":{\"a\":2},\"L40S\":{\"a\":1}}}", "NVIDIA L40S",
	    "{\"a\":1}");
	return done_testing();
}
