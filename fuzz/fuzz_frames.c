/*
 * The frame CSV parser: the input as a recording of a short window (so
 * that the end, the coverage and the metrics are reached), checked line by
 * line and finished.
 */
#include "frames/frames.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long long pop[4] = { 1, 0, 0, 1 };
	struct frames_csv c;
	char path[64], hex[65];
	int fd = fuzz_file(data, size, path);

	err_quiet(true);
	frames_csv_init(&c, 30, true, 60, 90, true, pop);
	c.want_curve = size % 2 == 0;
	frames_csv_read(&c, path, hex);
	if (c.code == NULL && (c.metrics[FM_MEDIAN_FT] < 0.001 || c.ncurve < 0))
		abort();
	frames_csv_free(&c);
	close(fd);
	return 0;
}
