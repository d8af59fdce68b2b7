/*
 * perf-plan: validates a campaign plan (vq.benchmark-plan/1), prints its
 * digest and seeded run order; perf-plan digest DIR prints the input
 * digest of a directory (perf-plan(1), doc/campaign-report.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/campaign.h"
#include "campaign/tree_digest.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/json.h"
#include "core/opt.h"

static const struct opt_def options[] = {
	{ 0, "json", 'j', NULL,
	    "print {plan_id, plan_sha256, order} instead of the table", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-plan [--json] plan.json\n"
	    "       perf-plan digest dir\n",
	.width = 12,
	.flags = 0,
	.opts = options,
};

/* Prints the order as a table, columns as wide as their widest cell. */
static void
print_table(const struct plan *pl)
{
	size_t n, wc = 10, ww = 8, wv = 7;
	struct order_run *o = plan_order(pl, &n);
	long long warm = pl->warmup, runs = (long long)n;

	for (size_t i = 0; i < n; i++) {
		size_t a = strlen(pl->node_classes[o[i].node_class]);
		size_t b = strlen(pl->workloads[o[i].workload].name);
		size_t c = strlen(pl->variants[o[i].variant].name);

		wc = a > wc ? a : wc;
		ww = b > ww ? b : ww;
		wv = c > wv ? c : wv;
	}
	printf("plan %s: %d variants (baseline %s), %d workloads, %d node classes, "
	    "%lld warm-up and %lld measured blocks\n", pl->id, pl->nvariants, pl->baseline,
	    pl->nworkloads, pl->nnode_classes, warm, pl->repeats);
	printf("plan_sha256 %s\n", pl->sha);
	printf("run order (%lld runs, seed %llu):\n", runs, (unsigned long long)pl->seed);
	printf("%6s  %-*s  %-11s  %-*s  %s\n", "#", (int)wc, "node class", "block", (int)ww,
	    "workload", "variant");
	for (size_t i = 0; i < n; i++) {
		char block[32];

		if (o[i].block <= 0)
			snprintf(block, sizeof block, "%lld warm-up", o[i].block);
		else
			snprintf(block, sizeof block, "%lld", o[i].block);
		printf("%6zu  %-*s  %-11s  %-*s  %s\n", i + 1, (int)wc,
		    pl->node_classes[o[i].node_class], block, (int)ww,
		    pl->workloads[o[i].workload].name, pl->variants[o[i].variant].name);
	}
	free(o);
}

static int
digest(const char *dir)
{
	char hex[SHA256_HEX], *why = NULL;

	if (tree_digest(dir, hex, &why) != 0) {
		warnx("%s", why);
		free(why);
		return EXIT_TROUBLE;
	}
	printf("%s\n", hex);
	return fflush(stdout) == 0 ? EXIT_PASS : EXIT_TROUBLE;
}

int
main(int argc, char *argv[])
{
	struct problems p = { NULL, 0 };
	struct plan pl;
	bool json = false;
	buf text = BUF_INIT, out = BUF_INIT;
	int c, rc;

	err_init(argv[0]);
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
	if (argc - optind == 2 && strcmp(argv[optind], "digest") == 0 && !json)
		return digest(argv[optind + 1]);
	if (argc - optind != 1)
		opt_usage(&option_table, EXIT_TROUBLE);
	if (buf_read_file(&text, argv[optind]) != 0) {
		warn("%s", argv[optind]);
		return EXIT_TROUBLE;
	}
	if (plan_load(text.s, text.len, &pl, &p) != 0) {
		/* Every problem, one line each. */
		for (int i = 0; i < p.n; i++)
			warnx("%s: %s", p.v[i].code, p.v[i].detail);
		problems_free(&p);
		plan_free(&pl);
		buf_free(&text);
		return EXIT_TROUBLE;
	}
	if (json) {
		cJSON *o = plan_order_json(&pl);

		json_write(&out, o, JSON_INDENT2, NULL);
		buf_addc(&out, '\n');
		fwrite(out.s, 1, out.len, stdout);
		cJSON_Delete(o);
	} else
		print_table(&pl);
	rc = fflush(stdout) == 0 && !ferror(stdout) ? EXIT_PASS : EXIT_TROUBLE;
	if (rc != EXIT_PASS)
		warn("write error on standard output");
	plan_free(&pl);
	buf_free(&text);
	buf_free(&out);
	return rc;
}
