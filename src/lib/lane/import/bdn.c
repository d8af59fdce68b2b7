/*
 * bdn: BenchmarkDotNet's full JSON report (JsonExporter.Full). One
 * benchmark per entry, by FullName (else Type.Method with its
 * Parameters); time is Statistics.Mean (ns), its samples the workload's
 * actual measurements; the memory diagnoser's values and every Metrics[]
 * entry by its Descriptor.Id, with TheGreaterTheBetter as its direction.
 * An entry without Statistics failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "lane/import/parsers.h"

static void
host(const cJSON *doc, struct import_suite *s)
{
	static const char *const hw[] = { "ProcessorName", "PhysicalProcessorCount",
	    "PhysicalCoreCount", "LogicalCoreCount", "Architecture" };
	static const char *const sw[] = { "OsVersion", "RuntimeVersion", "Configuration",
	    "HasRyuJit", "DotNetCliVersion", "JitModules" };
	const cJSON *h = json_get(doc, "HostEnvironmentInfo"), *v;

	s->hw_context = json_new_object();
	for (size_t i = 0; i < sizeof hw / sizeof *hw; i++)
		if ((v = json_get(h, hw[i])) != NULL)
			json_set(s->hw_context, hw[i], cJSON_Duplicate(v, true));
	s->sw_context = json_new_object();
	for (size_t i = 0; i < sizeof sw / sizeof *sw; i++)
		if ((v = json_get(h, sw[i])) != NULL)
			json_set(s->sw_context, sw[i], cJSON_Duplicate(v, true));
	if (cJSON_IsString(json_get(h, "BenchmarkDotNetVersion")))
		s->tool_version = estrdup(json_str(h, "BenchmarkDotNetVersion"));
}

/* "N=1000&M=2" or "N=1000, M=2" into params. */
static void
parameters(cJSON *params, const char *text)
{
	char *copy = estrdup(text), *p = copy, *eq;

	while (*p != '\0') {
		size_t n = strcspn(p, "&,");
		char sep = p[n];

		p[n] = '\0';
		p += strspn(p, " ");
		if ((eq = strchr(p, '=')) != NULL) {
			*eq = '\0';
			json_set(params, p, json_new_string(eq + 1));
		}
		p += strlen(p);
		if (sep != '\0')
			p++;
	}
	free(copy);
}

/* The workload's actual measurements, ns per operation. */
static void
samples(struct import_metric *m, const cJSON *meas)
{
	const cJSON *x;
	double *d = NULL, ns, ops;
	size_t n = 0;

	cJSON_ArrayForEach(x, meas) {
		if (strcmp(json_str(x, "IterationMode"), "Workload") != 0 ||
		    strcmp(json_str(x, "IterationStage"), "Actual") != 0 ||
		    !import_num(x, "Nanoseconds", &ns) || !import_num(x, "Operations", &ops) ||
		    ops <= 0)
			continue;
		d = erealloc(d, (n + 1) * sizeof *d);
		d[n++] = ns / ops;
	}
	if (n > 0)
		import_set_samples(m, d, n, "ns");
	free(d);
}

/* The memory diagnoser's block, under the ids BenchmarkDotNet's Metrics use. */
static void
memory(struct import_bench *b, const cJSON *mem)
{
	double d, ops;

	if (mem == NULL)
		return;
	if (import_num(mem, "BytesAllocatedPerOperation", &d))
		import_add_metric(b, "Allocated Memory", d, "B");
	if (!import_num(mem, "TotalOperations", &ops) || ops <= 0)
		return;
	if (import_num(mem, "Gen0Collections", &d))
		import_add_metric(b, "Gen0Collects", d / ops * 1000, "");
	if (import_num(mem, "Gen1Collections", &d))
		import_add_metric(b, "Gen1Collects", d / ops * 1000, "");
	if (import_num(mem, "Gen2Collections", &d))
		import_add_metric(b, "Gen2Collects", d / ops * 1000, "");
}

int
bdn_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz)
{
	const cJSON *e, *v;
	long k = -1;

	host(doc, s);
	cJSON_ArrayForEach(e, json_get(doc, "Benchmarks")) {
		const cJSON *st = json_get(e, "Statistics");
		const char *full = json_str(e, "FullName"), *ns = json_str(e, "Namespace");
		const char *type = json_str(e, "Type"), *method = json_str(e, "Method");
		const char *info = json_str(e, "DisplayInfo"), *job;
		struct import_bench *b;
		char *id;
		double mean;

		k++;
		if (*full != '\0')
			id = estrdup(full);
		else if (*type != '\0' && *method != '\0')
			id = easprintf("%s.%s", type, method);
		else {
			snprintf(msg, msgsz, "Benchmarks[%ld]: no FullName, Type or Method", k);
			return -1;
		}
		b = import_add_bench(s, id);
		free(id);
		b->id_has_params = *full != '\0';
		if (*type != '\0')
			b->workload = *ns != '\0' ? easprintf("%s.%s", ns, type) : estrdup(type);
		parameters(b->params, json_str(e, "Parameters"));
		if ((job = strstr(info, ": ")) != NULL) {
			char *j = estrdup(job + 2);
			j[strcspn(j, " [")] = '\0';
			json_set(b->settings, "job", json_new_string(j));
			free(j);
		}
		if (!cJSON_IsObject(st)) {
			b->error = estrdup("no statistics: the benchmark did not run");
			continue;
		}
		if (!import_num(st, "Mean", &mean)) {
			snprintf(msg, msgsz, "Benchmarks[%ld]: Statistics.Mean: not a number", k);
			return -1;
		}
		samples(import_add_metric(b, "time", mean, "ns"), json_get(e, "Measurements"));
		memory(b, json_get(e, "Memory"));
		cJSON_ArrayForEach(v, json_get(e, "Metrics")) {
			const cJSON *d = json_get(v, "Descriptor"), *gb;
			const char *name = json_str(d, "Id");
			struct import_metric *m;
			double val;

			if (*name == '\0' || !import_num(v, "Value", &val))
				continue;
			m = import_add_metric(b, name, val, json_str(d, "Unit"));
			if ((gb = json_get(d, "TheGreaterTheBetter")) != NULL && cJSON_IsBool(gb))
				m->better = cJSON_IsTrue(gb) ? BETTER_HIGHER : BETTER_LOWER;
		}
	}
	return 0;
}
