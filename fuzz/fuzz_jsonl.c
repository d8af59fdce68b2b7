/* The JSON-lines reader, gzip included: any bytes, never a crash or a leak. */
#include "fuzz.h"
#include "core/jsonl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], *paths[1] = { path };
	int fd = fuzz_file(data, size, path);
	jsonl_reader *r;
	jsonl_span s;
	cJSON *v;

	err_quiet(true);
	r = jsonl_open(paths, 1);
	while ((v = jsonl_next(r, &s)) != NULL)
		cJSON_Delete(v);
	jsonl_close(r);
	close(fd);
	return 0;
}
