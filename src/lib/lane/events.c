#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/unit.h"
#include "lane/events.h"
#include "lane/named_metric.h"

const char *const events_component_keys[COMP_COUNT] = {
	"text_encoder_time_s", "dit_time_s", "vae_decode_time_s",
};

/* The reference's STAGE_METRIC_MAP. */
static const struct {
	const char *stage_class;
	int comp;
} stage_map[] = {
	{ "TextEncodingStage", COMP_TEXT_ENCODER },
	{ "DenoisingStage", COMP_DIT },
	{ "DmdDenoisingStage", COMP_DIT },
	{ "DecodingStage", COMP_VAE_DECODE },
};

static int
component_of(const char *key)
{
	for (int i = 0; i < COMP_COUNT; i++)
		if (strcmp(key, events_component_keys[i]) == 0)
			return i;
	return -1;
}

void
events_components(const cJSON *stages, double comp[COMP_COUNT],
    bool has[COMP_COUNT])
{
	const cJSON *st, *cls, *cm, *t;
	int c;

	for (c = 0; c < COMP_COUNT; c++) {
		comp[c] = 0;
		has[c] = false;
	}
	cJSON_ArrayForEach(st, stages) {
		if (!cJSON_IsObject(st) || st->string == NULL)
			continue;	/* malformed stage data is skipped */
		cm = json_get(st, "component_metric");
		c = cJSON_IsString(cm) ? component_of(cm->valuestring) : -1;
		if (c < 0) {
			/* stage_class when the key exists (even null), else the stage key. */
			cls = json_get(st, "stage_class");
			const char *name = cls != NULL ?
			    (cJSON_IsString(cls) ? cls->valuestring : NULL) : st->string;
			for (size_t i = 0; name != NULL && i < sizeof stage_map / sizeof *stage_map; i++)
				if (strcmp(name, stage_map[i].stage_class) == 0)
					c = stage_map[i].comp;
		}
		if (c < 0)
			continue;
		t = json_get(st, "execution_time");
		if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble))
			continue;
		comp[c] += t->valuedouble;	/* duplicates accumulate */
		has[c] = true;
	}
}

static bool
read_run(jsonl_reader *r, const jsonl_span *s, const cJSON *ev, struct run_event *run)
{
	const cJSON *phase = json_get(ev, "phase"), *t = json_get(ev, "generation_time_s");
	const cJSON *peak = json_get(ev, "peak_memory_mb");

	memset(run, 0, sizeof *run);
	if (phase != NULL && !(cJSON_IsString(phase) &&
	    (strcmp(phase->valuestring, "warmup") == 0 ||
	    strcmp(phase->valuestring, "measure") == 0))) {
		jsonl_error(r, s, "run event: phase must be \"warmup\" or \"measure\"");
		return false;
	}
	if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || t->valuedouble < 0) {
		jsonl_error(r, s, "run event: generation_time_s must be a non-negative number");
		return false;
	}
	if (peak != NULL && !cJSON_IsNull(peak) &&
	    (!cJSON_IsNumber(peak) || !isfinite(peak->valuedouble) || peak->valuedouble < 0)) {
		jsonl_error(r, s, "run event: peak_memory_mb must be a non-negative number");
		return false;
	}
	run->warmup = phase != NULL && strcmp(phase->valuestring, "warmup") == 0;
	run->seconds = t->valuedouble;
	/*
	 * A reported 0 is 0.0, as the reference's "or 0.0"; a peak not
	 * reported stays unknown (NULL), never a measured 0.0.
	 */
	if (cJSON_IsNumber(peak))
		run->peak = peak->valuedouble != 0 ? cJSON_Duplicate(peak, true) :
		    json_new_float(0.0);
	events_components(json_get(ev, "stages"), run->comp, run->has_comp);
	return true;
}

/*
 * A metric event: its value, in the canonical unit, appended to the
 * samples of its metric in ev->named (a warm-up's is dropped). False after
 * reporting an invalid one.
 */
static bool
read_metric(jsonl_reader *r, const jsonl_span *s, const cJSON *e, struct events *ev)
{
	const cJSON *name = json_get(e, "name"), *v = json_get(e, "value");
	const cJSON *unit = json_get(e, "unit"), *better = json_get(e, "better");
	const cJSON *phase = json_get(e, "phase");
	const char *why, *canon = "";
	double factor = 1;
	enum better b;
	cJSON *m;

	if (!cJSON_IsString(name) || !nm_name_valid(name->valuestring, &why)) {
		jsonl_error(r, s, "metric event: name must be a metric name%s%s",
		    cJSON_IsString(name) ? ": " : "", cJSON_IsString(name) ? why : "");
		return false;
	}
	if (!cJSON_IsNumber(v) || cJSON_IsBool(v) || !isfinite(v->valuedouble)) {
		jsonl_error(r, s, "metric event: value must be a finite number");
		return false;
	}
	if (unit != NULL && !cJSON_IsString(unit)) {
		jsonl_error(r, s, "metric event: unit must be a string");
		return false;
	}
	if (better != NULL && (!cJSON_IsString(better) || !better_parse(better->valuestring, &b))) {
		jsonl_error(r, s, "metric event: better must be \"lower\" or \"higher\"");
		return false;
	}
	if (phase != NULL && !(cJSON_IsString(phase) &&
	    (strcmp(phase->valuestring, "warmup") == 0 ||
	    strcmp(phase->valuestring, "measure") == 0))) {
		jsonl_error(r, s, "metric event: phase must be \"warmup\" or \"measure\"");
		return false;
	}
	if (unit != NULL)
		unit_canonical(unit->valuestring, &canon, &factor);
	if ((m = json_get(ev->named, name->valuestring)) != NULL &&
	    strcmp(json_str(m, "unit"), canon) != 0) {
		jsonl_error(r, s, "metric event: %s was reported in %s before, now in %s",
		    name->valuestring, *json_str(m, "unit") ? json_str(m, "unit") : "no unit",
		    *canon ? canon : "no unit");
		return false;
	}
	if (phase != NULL && strcmp(phase->valuestring, "warmup") == 0)
		return true;
	if (m == NULL) {
		if (ev->named == NULL)
			ev->named = json_new_object();
		m = json_new_object();
		json_set(m, "value", json_new_null());
		json_set(m, "unit", json_new_string(canon));
		if (better != NULL)
			json_set(m, "better", json_new_string(better->valuestring));
		json_set(m, "samples", json_new_array());
		json_set(ev->named, name->valuestring, m);
	}
	json_append(json_get(m, "samples"), json_new_float(v->valuedouble * factor));
	return true;
}

/* Each metric's value: the mean of its samples. */
static void
named_means(cJSON *named)
{
	cJSON *m, *x;

	cJSON_ArrayForEach(m, named) {
		double sum = 0;
		int n = 0;

		cJSON_ArrayForEach(x, json_get(m, "samples")) {
			sum += x->valuedouble;
			n++;
		}
		cJSON_ReplaceItemInObjectCaseSensitive(m, "value", json_new_float(sum / n));
	}
}

int
events_read(const char *path, const char *label, struct events *ev)
{
	char *paths[1] = { (char *)path };
	jsonl_reader *r;
	jsonl_span s;
	const cJSON *kind;
	cJSON *e;
	FILE *fp;
	long records = 0, rejected = 0;

	memset(ev, 0, sizeof *ev);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	fclose(fp);
	r = jsonl_open(paths, 1);
	if (label != NULL)
		jsonl_label(r, label);
	while ((e = jsonl_next(r, &s)) != NULL) {
		records++;
		kind = json_get(e, "event");
		if (cJSON_IsString(kind) && strcmp(kind->valuestring, "run") == 0) {
			ev->runs = erealloc(ev->runs, (ev->nruns + 1) * sizeof *ev->runs);
			if (read_run(r, &s, e, &ev->runs[ev->nruns]))
				ev->nruns++;
			else
				rejected++;
		} else if (cJSON_IsString(kind) && strcmp(kind->valuestring, "runtime") == 0) {
			cJSON_Delete(ev->runtime);
			ev->runtime = e;
			continue;
		} else if (cJSON_IsString(kind) && strcmp(kind->valuestring, "metric") == 0) {
			if (!read_metric(r, &s, e, ev))
				rejected++;
		} else {
			jsonl_error(r, &s, "unknown event (expected \"run\", \"runtime\" or "
			    "\"metric\")");
			rejected++;
		}
		cJSON_Delete(e);
	}
	named_means(ev->named);
	ev->bad = jsonl_errors(r);
	/* The lines read as JSON, and those that could not be. */
	ev->lines = records + (ev->bad - rejected);
	jsonl_close(r);
	return 0;
}

void
events_free(struct events *ev)
{
	for (size_t i = 0; i < ev->nruns; i++)
		cJSON_Delete(ev->runs[i].peak);
	free(ev->runs);
	cJSON_Delete(ev->runtime);
	cJSON_Delete(ev->named);
	memset(ev, 0, sizeof *ev);
}
