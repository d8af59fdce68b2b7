/*
 * The normalizer: perf-normalize itself (its main, renamed) over the input
 * as a file of raw records, its output thrown away.
 */
#include "fuzz.h"

int normalize_main(int argc, char *argv[]);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (freopen("/dev/null", "w", stdout) == NULL)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	extern int optind;
	char path[64];
	int fd = fuzz_file(data, size, path);
	char *argv[] = { "perf-normalize", "--run-source", "pr", "--commit", "abc", path, NULL };

	err_quiet(true);
	optind = 0;	/* getopt starts over */
	normalize_main(6, argv);
	close(fd);
	return 0;
}
