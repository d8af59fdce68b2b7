/* Unit tests for events: the reference's stage mapping and the event file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lane/events.h"
#include "core/json.h"
#include "tap.h"

static void
comps(const char *stages, const char *want, const char *name)
{
	json_error e;
	cJSON *s = json_parse(stages, strlen(stages), &e);
	double c[COMP_COUNT];
	bool h[COMP_COUNT];
	char got[128];
	int n = 0;

	events_components(s, c, h);
	for (int i = 0; i < COMP_COUNT; i++)
		if (h[i])
			n += snprintf(got + n, sizeof got - (size_t)n, "%s%g", i ? "," : "", c[i]);
		else
			n += snprintf(got + n, sizeof got - (size_t)n, "%snull", i ? "," : "");
	is_str(got, want, "%s", name);
	cJSON_Delete(s);
}

int
main(void)
{
	char path[] = "/tmp/perf-events-test-XXXXXX";
	struct events ev;
	FILE *fp;
	int fd;

	comps("{\"prompt_encoding_stage\":{\"execution_time\":1.25,\"stage_class\":\"TextEncodingStage\","
	    "\"component_metric\":\"text_encoder_time_s\"}}", "1.25,null,null", "row 1");
	comps("{\"prompt_encoding_stage\":{\"execution_time\":1.2,\"stage_class\":\"TextEncodingStage\"},"
	    "\"denoising_stage\":{\"execution_time\":3.4,\"stage_class\":\"DenoisingStage\"},"
	    "\"decoding_stage\":{\"execution_time\":0.8,\"stage_class\":\"DecodingStage\"}}",
	    "1.2,3.4,0.8", "stage_class lookup");
	comps("{\"x\":{\"execution_time\":2.0,\"stage_class\":\"MyDenoisingStage\","
	    "\"component_metric\":\"dit_time_s\"}}", "null,2,null", "subclasses carry the metric");
	comps("{\"a\":{\"execution_time\":1.0,\"stage_class\":\"Cosmos25TextEncodingStage\","
	    "\"component_metric\":\"text_encoder_time_s\"},\"b\":{\"execution_time\":2.0,"
	    "\"stage_class\":\"Cosmos25AutoDenoisingStage\",\"component_metric\":\"dit_time_s\"}}",
	    "1,2,null", "Cosmos25 stages");
	comps("{\"d\":{\"execution_time\":4.2,\"stage_class\":\"CosmosDenoisingStage\","
	    "\"component_metric\":\"dit_time_s\"}}", "null,4.2,null", "component_metric wins");
	comps("{\"TextEncodingStage\":{\"execution_time\":1.0},\"DenoisingStage\":{\"execution_time\":2.0},"
	    "\"DecodingStage\":{\"execution_time\":3.0}}", "1,2,3", "legacy class-name keys");
	comps("{\"a\":{\"execution_time\":2.0,\"stage_class\":\"DenoisingStage\"},"
	    "\"b\":{\"execution_time\":3.5,\"stage_class\":\"DenoisingStage\"}}", "null,5.5,null",
	    "duplicates accumulate");
	comps("{\"a\":{\"execution_time\":0.2,\"stage_class\":\"PostDecodeFrameProcessStage\"},"
	    "\"b\":{\"execution_time\":0.4,\"stage_class\":\"VideoSaveStage\"},"
	    "\"c\":{\"execution_time\":0.1,\"stage_class\":\"AudioMuxStage\"}}", "null,null,null",
	    "unmapped stages are ignored");
	comps("{\"a\":null,\"b\":\"not-a-stage-metric-dict\",\"decoding\":{\"execution_time\":0.8,"
	    "\"stage_class\":\"DecodingStage\"}}", "null,null,0.8", "malformed entries skipped");
	comps("{\"a\":{\"execution_time\":1.0,\"stage_class\":null}}", "null,null,null",
	    "a null stage_class is not the key");
	comps("{\"DenoisingStage\":{\"stage_class\":\"DenoisingStage\"}}", "null,null,null",
	    "a missing execution_time is skipped");
	comps("{\"a\":{\"execution_time\":1.0,\"stage_class\":\"DenoisingStage\","
	    "\"component_metric\":\"vae_encode_time_s\"}}", "null,1,null",
	    "an unknown component_metric falls back to the class");

	fd = mkstemp(path);
	fp = fdopen(fd, "w");
	fputs("{\"event\":\"runtime\",\"python\":\"3.12.4\"}\n"
	    "{\"event\":\"run\",\"phase\":\"warmup\",\"generation_time_s\":40.0}\n"
	    "{\"event\":\"run\",\"phase\":\"measure\",\"generation_time_s\":30,\"peak_memory_mb\":10000}\n"
	    "not json\n"
	    "{\"event\":\"run\",\"generation_time_s\":-1}\n"
	    "{\"event\":\"sprint\"}\n"
	    "{\"event\":\"run\",\"generation_time_s\":31.5,\"peak_memory_mb\":0,\"stages\":"
	    "{\"d\":{\"execution_time\":8.0,\"stage_class\":\"DenoisingStage\"}}}\n", fp);
	fclose(fp);
	fprintf(stderr, "# (expect three event diagnostics)\n");
	events_read(path, "bench: PERF_EVENTS", &ev);
	ok(ev.nruns == 3 && ev.bad == 3, "three runs, three bad lines (%zu, %ld)", ev.nruns, ev.bad);
	ok(ev.lines == 7, "seven event lines, valid or not (%ld)", ev.lines);
	ok(ev.runs[0].warmup && !ev.runs[1].warmup && !ev.runs[2].warmup, "phases");
	ok(ev.runs[0].peak == NULL, "a peak not reported is unknown");
	ok(json_is_int(ev.runs[1].peak) && !json_is_int(ev.runs[2].peak) &&
	    ev.runs[2].peak->valuedouble == 0.0,
	    "an integer peak keeps its type; a reported 0 is 0.0");
	ok(ev.runs[2].has_comp[COMP_DIT] && ev.runs[2].comp[COMP_DIT] == 8.0, "stages of a run");
	ok(ev.runtime != NULL, "the runtime event");
	events_free(&ev);
	unlink(path);
	events_read(path, NULL, &ev);
	ok(ev.nruns == 0 && ev.runtime == NULL && ev.lines == 0, "a missing file has no events");
	return done_testing();
}
