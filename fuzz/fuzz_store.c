/*
 * The history store reader: the input as a record file of a directory
 * store and as a JSON-lines history stream (gzip included), scanned with
 * the queries perf-gate-rolling makes.
 */
#include "fuzz.h"

#include <sys/stat.h>

#include "core/atomic.h"
#include "lane/store/read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[] = "/tmp/perfkite-fuzz-store.XXXXXX";
static char *record;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *m;

	(void)argc;
	(void)argv;
	if (mkdtemp(dir) == NULL)
		abort();
	m = easprintf("%s/model-a", dir);
	mkdir(m, 0777);
	record = easprintf("%s/2026-07-01T00:00:00+00:00_abcdef1.json", m);
	free(m);
	return 0;
}

static void
on_hit(const struct store_hit *h, void *ctx)
{
	(*(size_t *)ctx) += h->len + (h->record != NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], *raised = NULL;
	char *values[] = { "model-a", "bench-a", "NVIDIA H100 80GB HBM3", "1", "hw-1", "sw-1",
	    "ppol-1", "recipe-1", NULL };
	struct store_query q[3];
	size_t seen = 0;
	int fd = fuzz_file(data, size, path);
	store *s;

	err_quiet(true);
	if (atomic_write_file(record, data, size) != 0)
		abort();
	memset(q, 0, sizeof q);
	store_identity_queries(values, &q[0], &q[1]);
	q[2].keys[0] = "model_id";
	q[2].values[0] = "model-a";
	q[2].nkeys = 1;
	q[2].successful_only = q[2].eligible_only = true;
	s = store_open(dir);
	if (s != NULL) {
		store_add_stream(s, path);
		store_scan(s, q, 3, on_hit, &seen, &raised);
		store_close(s);
	}
	free(raised);
	close(fd);
	return 0;
}
