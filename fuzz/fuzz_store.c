/*
 * The history store reader: the input as a record file of a directory
 * store and as a JSON-lines history stream (gzip included), scanned with
 * the queries perf-gate-rolling makes, once the fast way (the raw-text
 * prefilter and the quick parser) and once the full parser's way
 * (store_slow()): both find the same records, with the same matches and
 * the same trees, and raise the same error.
 */
#include "fuzz.h"

#include <sys/stat.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/json.h"
#include "lane/store/read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[] = "/tmp/perfkite-fuzz-store.XXXXXX";
static char *record;
static int nq;		/* the queries of the scan under way */

/* The keys perf-gate-rolling builds (store_want()), so that the quick parser runs. */
static const char *const want[] = { "latency", "throughput", "memory",
    "regression_thresholds", "gpu_type" };

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

/* Each hit as text: where, when, which queries, and the tree built. */
static void
on_hit(const struct store_hit *h, void *ctx)
{
	buf *b = ctx;
	char *tree = cJSON_PrintUnformatted(h->record);

	buf_addf(b, "%s %d %lld %zu", h->path, h->stream, (long long)h->instant, h->len);
	for (int i = 0; i < nq; i++)
		buf_addc(b, h->match[i] ? '1' : '0');
	buf_addf(b, " %s\n", tree != NULL ? tree : "?");
	free(tree);
}

/* One scan of the store and the stream with n queries; the hits into b. */
static void
scan(const char *stream, const struct store_query *q, int n, bool slow, buf *b,
    char **raised)
{
	store *s = store_open(dir);

	if (s == NULL)
		abort();
	if (slow)
		store_slow(s);
	store_want(s, want, sizeof want / sizeof *want);
	store_add_stream(s, stream);
	nq = n;
	if (store_scan(s, q, n, on_hit, b, raised) != 0)
		buf_adds(b, "scan failed\n");
	store_close(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], *raised = NULL, *slow_raised = NULL;
	char *values[] = { "model-a", "bench-a", "NVIDIA H100 80GB HBM3", "1", "hw-1", "sw-1",
	    "ppol-1", "recipe-1", NULL };
	struct store_query q[3];
	buf fast = BUF_INIT, slow = BUF_INIT;
	int fd = fuzz_file(data, size, path);

	err_quiet(true);
	if (atomic_write_file(record, data, size) != 0)
		abort();
	memset(q, 0, sizeof q);
	store_identity_queries(values, &q[0], &q[1]);
	q[2].keys[0] = "model_id";
	q[2].values[0] = "model-a";
	q[2].nkeys = 1;
	q[2].successful_only = q[2].eligible_only = true;
	/*
	 * The two identity queries alone (each constrains workload_id and
	 * variant_id: the prefilter reads them), then with a third that does
	 * not (no prefilter): each the fast way and the full parser's way.
	 */
	for (int n = 2; n <= 3; n++) {
		scan(path, q, n, false, &fast, &raised);
		scan(path, q, n, true, &slow, &slow_raised);
		if (fast.len != slow.len ||
		    (fast.len > 0 && memcmp(fast.s, slow.s, fast.len) != 0))
			abort();	/* the fast path skipped or built what the parser would not */
		if ((raised == NULL) != (slow_raised == NULL) ||
		    (raised != NULL && strcmp(raised, slow_raised) != 0))
			abort();
		buf_free(&fast);
		buf_free(&slow);
		free(raised);
		free(slow_raised);
		raised = slow_raised = NULL;
	}
	close(fd);
	return 0;
}
