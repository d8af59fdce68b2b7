/*
 * perf-import's parsers over any text: the first byte picks the format
 * (or recognition, as without --format), the rest is the tool's output;
 * every suite parsed is made into records and written.
 */
#include "core/buf.h"
#include "core/json.h"
#include "fuzz.h"
#include "lane/import/import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const formats[] = {
		NULL, "google-benchmark", "pytest-benchmark", "hyperfine", "go", "catch2",
		"jmh", "benchmarkdotnet", "perfkite", "customBiggerIsBetter",
	};
	struct import_suite s;
	struct import_identity id;
	char msg[256];
	long line;
	buf out = BUF_INIT;

	err_quiet(true);
	if (size == 0)
		return 0;
	memset(&s, 0, sizeof s);
	memset(&id, 0, sizeof id);
	id.device = "fuzz";
	if (import_parse(formats[data[0] % (sizeof formats / sizeof *formats)], NULL,
	    (const char *)data + 1, size - 1, &s, &line, msg, sizeof msg) == 0) {
		for (size_t i = 0; i < s.nb; i++) {
			cJSON *rec = import_record(&s, &s.b[i], &id);
			buf_reset(&out);
			/*
			 * A tool's non-finite setting or param (Catch2's samples="nan")
			 * cannot be written: perf-import names it and exits 2.
			 */
			(void)json_write(&out, rec, JSON_COMPACT, NULL);
			cJSON_Delete(rec);
		}
		import_report_failures(&s, "fuzz");
	}
	import_suite_free(&s);
	buf_free(&out);
	return 0;
}
