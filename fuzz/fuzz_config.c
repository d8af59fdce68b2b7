/* The benchmark config validator over any JSON value. */
#include "lane/config.h"
#include "fuzz.h"
#include "core/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error je;
	cJSON *v = json_parse((const char *)data, size, &je);
	char *why;

	err_quiet(true);
	if (v == NULL)
		return 0;
	why = config_validate(v, "fuzz.json");
	if (why == NULL) {
		long w, m, g;
		char *e;

		free(config_display_id(v));
		free(config_run_counts(v, &w, &m));
		free(config_gpu_count(v, &g));
		e = NULL;
		cJSON_Delete(config_thresholds(v, "NVIDIA H100 80GB HBM3", &e));
		free(e);
		free(config_gpu_types_skip(v, "NVIDIA L40S"));
	}
	free(why);
	cJSON_Delete(v);
	return 0;
}
