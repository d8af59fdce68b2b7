/*
 * perf-import: a benchmark tool's output to raw records, one per
 * benchmark (perf-import(1)): Google Benchmark, pytest-benchmark,
 * hyperfine, go test -bench, Catch2, Criterion.rs, JMH, BenchmarkDotNet
 * and perfkite's generic JSON, the format recognised from the content
 * unless --format names it. Every input is read and checked before any
 * record is written, so a malformed one leaves nothing half-written.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/opt.h"
#include "lane/gpu.h"
#include "lane/import/import.h"
#include "lane/provenance.h"

static struct {
	const char *format;
	const char **identity;		/* --identity KEY=VALUE, NULL-terminated */
	size_t nidentity;
	struct provenance_env env;
	struct gpu gpu;
} opt;

static const struct opt_def options[] = {
	{ 'f', "format", 0, "format",
	    "google-benchmark, pytest-benchmark, hyperfine, go, catch2,\n"
	    "criterion, jmh, benchmarkdotnet, perfkite, customSmallerIsBetter\n"
	    "or customBiggerIsBetter (default: recognised from the content)", NULL, NULL },
	{ 'i', "identity", 0, "key=value",
	    "set an identity or provenance key of every record", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-import [-f format] [-i key=value ...] [file ...]\n",
	.width = 26,
	.flags = 0,
	.opts = options,
};

/*
 * The records of one suite appended to out. A record with a value that is
 * not a finite number is made again as a tree, whose writer names it.
 */
static int
records(struct import_suite *s, const struct import_identity *id, buf *out,
    const char *label)
{
	buf where = BUF_INIT, scratch = BUF_INIT;
	size_t start = out->len;
	int rc = 0;

	for (size_t i = 0; i < s->nb && rc == 0; i++) {
		cJSON *rec;

		if (import_record_write(s, &s->b[i], id, out) == 0) {
			buf_addc(out, '\n');
			/* Room for the rest, at the first record's size and a quarter. */
			if (i == 0)
				buf_grow(out, (s->nb - 1) * (out->len - start) * 5 / 4);
			continue;
		}
		rec = import_record(s, &s->b[i], id);
		buf_reset(&scratch);
		if (json_write(&scratch, rec, JSON_COMPACT, &where) != 0)
			diag(label, 0, "%s: cannot write %s: not a finite number", s->b[i].id,
			    where.s);
		else
			diag(label, 0, "%s: cannot write it", s->b[i].id);
		rc = -1;
		cJSON_Delete(rec);
	}
	buf_free(&where);
	buf_free(&scratch);
	return rc;
}

static void
add_identity(const char *kv)
{
	char msg[160];

	if (!import_identity_valid(kv, msg, sizeof msg)) {
		warnx("%s", msg);
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	opt.identity = erealloc(opt.identity, (opt.nidentity + 2) * sizeof *opt.identity);
	opt.identity[opt.nidentity++] = kv;
	opt.identity[opt.nidentity] = NULL;
}

int
main(int argc, char *argv[])
{
	struct import_identity id;
	struct import_suite s;
	buf out = BUF_INIT;
	long failed = 0;
	int c, n, bad = 0;

	err_init(argv[0]);
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		switch (c) {
		case 'f':
			if (!import_format_known(optarg)) {
				warnx("unknown format '%s'", optarg);
				opt_usage(&option_table, EXIT_TROUBLE);
			}
			opt.format = optarg;
			break;
		case 'i': add_identity(optarg); break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
	provenance_env_load(&opt.env);
	gpu_open(&opt.gpu);
	memset(&id, 0, sizeof id);
	import_provenance(&id, &opt.env);
	id.device = gpu_device_name(&opt.gpu);
	id.hardware = import_hardware_profile(&opt.gpu, opt.gpu.cuda ? opt.gpu.count : 0);
	id.overrides = opt.identity;
	n = argc - optind;
	for (int i = 0; i < (n > 0 ? n : 1); i++) {
		const char *path = n > 0 ? argv[optind + i] : "-";
		const char *label = strcmp(path, "-") == 0 ? "<stdin>" : path;

		if (import_read(opt.format, path, label, &s) != 0) {
			bad++;
			continue;
		}
		failed += import_report_failures(&s, label);
		if (records(&s, &id, &out, label) != 0)
			bad++;
		import_suite_free(&s);
	}
	/* All or nothing: a malformed input writes no record at all. */
	if (bad == 0 && out.len > 0 && fwrite(out.s, 1, out.len, stdout) != out.len)
		bad++;
	if (jsonl_finish(stdout, "standard output") != 0)
		bad++;
	buf_free(&out);
	cJSON_Delete(id.hardware);
	gpu_close(&opt.gpu);
	free(opt.identity);
	return bad > 0 ? EXIT_TROUBLE : failed > 0 ? EXIT_GATE : EXIT_PASS;
}
