/*
 * perf-analyze: the analysis of a paired campaign (perf-analyze(1),
 * doc/campaign-report.md): the vq.benchmark-report/1
 * document as a text table (default), as JSON (--json), as CSV (--csv) and
 * as a standalone SVG figure (--svg), all rendered from the one report.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/campaign.h"
#include "campaign/campaign_figure.h"
#include "core/atomic.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/csv.h"
#include "core/err.h"
#include "core/json.h"
#include "core/num.h"
#include "core/opt.h"
#include "core/path.h"

static struct {
	const char *csv;	/* --csv file */
	const char *svg;	/* --svg file */
	bool json;
} opt;

static const struct opt_def options[] = {
	{ 0, "json", 'j', NULL,
	    "write the vq.benchmark-report/1 document instead of the table", NULL, NULL },
	{ 0, "csv", 'c', "file",
	    "one row per node class, workload and variant (RFC 4180, CRLF)", NULL, NULL },
	{ 0, "svg", 's', "file", "write a standalone figure to file", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-analyze [--json] [--csv file] [--svg file] plan.json results.json\n",
	.width = 12,
	.flags = 0,
	.opts = options,
};

/* The break-even cell: "237 (244)", "237 (-)", "-", or "" when not faster. */
static void
break_even_text(const cJSON *cell, char *out, size_t n)
{
	const cJSON *be = json_get(cell, "break_even"), *r, *rc;

	*out = '\0';
	if (!cJSON_IsObject(be))
		return;
	r = json_get(be, "runs");
	rc = json_get(be, "runs_conservative");
	if (!cJSON_IsNumber(r)) {
		snprintf(out, n, "-");
		return;
	}
	if (cJSON_IsNumber(rc))
		snprintf(out, n, "%.0f (%.0f)", ceil(r->valuedouble), ceil(rc->valuedouble));
	else
		snprintf(out, n, "%.0f (-)", ceil(r->valuedouble));
}

static void
ratio_text(const cJSON *cell, char *ratio, char *interval, size_t n)
{
	const cJSON *r = json_get(cell, "ratio"), *iv = json_get(cell, "interval");

	if (cJSON_IsObject(r) && strcmp(json_str(cell, "verdict"), "incomparable") != 0)
		snprintf(ratio, n, "%.3f", json_num(r, "geometric_mean"));
	else
		snprintf(ratio, n, "-");
	if (cJSON_IsObject(iv) && strcmp(json_str(cell, "verdict"), "incomparable") != 0)
		snprintf(interval, n, "%.3f-%.3f", json_num(iv, "low"), json_num(iv, "high"));
	else
		snprintf(interval, n, "-");
}

/* A table row of cells with widths; fmt is one %-*s per column. */
struct table {
	char ***rows;
	int nrows, ncols;
	int *width;
};

static void
table_add(struct table *t, const char *const *cells)
{
	t->rows = erealloc(t->rows, (size_t)(t->nrows + 1) * sizeof *t->rows);
	t->rows[t->nrows] = ecalloc((size_t)t->ncols, sizeof **t->rows);
	for (int c = 0; c < t->ncols; c++) {
		int w = (int)strlen(cells[c]);

		t->rows[t->nrows][c] = estrdup(cells[c]);
		if (w > t->width[c])
			t->width[c] = w;
	}
	t->nrows++;
}

static void
table_print(buf *b, struct table *t)
{
	for (int r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			if (c == t->ncols - 1)
				buf_addf(b, "%s", t->rows[r][c]);
			else
				buf_addf(b, "%-*s  ", t->width[c], t->rows[r][c]);
			free(t->rows[r][c]);
		}
		while (b->len > 0 && b->s[b->len - 1] == ' ')
			b->s[--b->len] = '\0';
		buf_addc(b, '\n');
		free(t->rows[r]);
	}
	free(t->rows);
	free(t->width);
}

static struct table
table_new(int ncols)
{
	struct table t = { NULL, 0, ncols, ecalloc((size_t)ncols, sizeof(int)) };

	return t;
}

/* A note per block of cell e's list (excluded or missing), with its items. */
static void
block_notes(buf *notes, const cJSON *e, const char *list, const char *items)
{
	const cJSON *x, *r;

	cJSON_ArrayForEach(x, json_get(e, list)) {
		buf_addf(notes, "  %s %s %s: block %s %s:", json_str(e, "node_class"),
		    json_str(e, "workload"), json_str(e, "variant"),
		    json_get(x, "block")->valuestring, list);
		cJSON_ArrayForEach(r, json_get(x, items))
			buf_addf(notes, " %s", r->valuestring);
		buf_addc(notes, '\n');
	}
}

/* The table of node classes. */
static void
node_class_table(buf *b, const cJSON *rep)
{
	struct table t = table_new(5);
	const cJSON *e, *x;

	table_add(&t, (const char *const[]){ "node class", "cpu model", "comparable",
	    "measured", "warm-up" });
	cJSON_ArrayForEach(e, json_get(rep, "node_classes")) {
		buf models = BUF_INIT;
		char m[32], w[32];

		cJSON_ArrayForEach(x, json_get(e, "cpu_models"))
			buf_addf(&models, "%s%s", models.len > 0 ? "; " : "", x->valuestring);
		snprintf(m, sizeof m, "%s", json_get(e, "measured_runs")->valuestring);
		snprintf(w, sizeof w, "%s", json_get(e, "warmup_runs")->valuestring);
		table_add(&t, (const char *const[]){ json_str(e, "node_class"),
		    models.len > 0 ? models.s : "(not recorded)",
		    cJSON_IsTrue(json_get(e, "comparable")) ? "yes" : "no", m, w });
		buf_free(&models);
	}
	table_print(b, &t);
}

/* The notes of a cell: its blocks left out, an unusual verdict, a missing break-even. */
static void
cell_notes(buf *notes, const cJSON *e)
{
	const cJSON *bej = json_get(e, "break_even");

	block_notes(notes, e, "excluded", "reasons");
	block_notes(notes, e, "missing", "runs");
	if (strcmp(json_str(e, "verdict"), "faster") != 0 &&
	    strcmp(json_str(e, "verdict"), "equivalent") != 0 &&
	    strcmp(json_str(e, "verdict"), "slower") != 0)
		buf_addf(notes, "  %s %s %s: %s: %s\n", json_str(e, "node_class"),
		    json_str(e, "workload"), json_str(e, "variant"), json_str(e, "verdict"),
		    json_str(e, "verdict_reason"));
	if (cJSON_IsObject(bej) && cJSON_IsString(json_get(bej, "reason")))
		buf_addf(notes, "  %s %s %s: break-even %s: %s\n", json_str(e, "node_class"),
		    json_str(e, "workload"), json_str(e, "variant"),
		    cJSON_IsNumber(json_get(bej, "runs")) ? "conservative count unavailable" :
		    "unavailable", json_str(bej, "reason"));
}

/* The table of cells; their notes go to notes. */
static void
cell_table(buf *b, buf *notes, const cJSON *rep)
{
	struct table t = table_new(11);
	const cJSON *e;

	table_add(&t, (const char *const[]){ "node class", "workload", "variant", "pairs",
	    "excluded", "missing", "ratio", "interval", "verdict", "break-even", "" });
	cJSON_ArrayForEach(e, json_get(rep, "cells")) {
		char pairs[48], ex[24], mi[24], ratio[64], iv[96], be[64];

		snprintf(pairs, sizeof pairs, "%s/%s", json_get(e, "retained_pairs")->valuestring,
		    json_get(e, "planned_pairs")->valuestring);
		snprintf(ex, sizeof ex, "%s", json_get(e, "excluded_pairs")->valuestring);
		snprintf(mi, sizeof mi, "%s", json_get(e, "missing_pairs")->valuestring);
		ratio_text(e, ratio, iv, sizeof iv);
		break_even_text(e, be, sizeof be);
		table_add(&t, (const char *const[]){ json_str(e, "node_class"),
		    json_str(e, "workload"), json_str(e, "variant"), pairs, ex, mi, ratio, iv,
		    json_str(e, "verdict"), be, "" });
		cell_notes(notes, e);
	}
	table_print(b, &t);
}

/* The table of aggregates. */
static void
aggregate_table(buf *b, const cJSON *rep)
{
	struct table t = table_new(4);
	const cJSON *e, *x;

	table_add(&t, (const char *const[]){ "node class", "variant", "ratio", "workloads" });
	cJSON_ArrayForEach(e, json_get(rep, "aggregates")) {
		char ratio[64];
		buf wl = BUF_INIT;

		if (cJSON_IsNumber(json_get(e, "geometric_mean")))
			snprintf(ratio, sizeof ratio, "%.3f", json_num(e, "geometric_mean"));
		else
			snprintf(ratio, sizeof ratio, "-");
		buf_addf(&wl, "%d included", cJSON_GetArraySize(json_get(e, "workloads")));
		cJSON_ArrayForEach(x, json_get(e, "left_out"))
			buf_addf(&wl, "; %s left out (%s)", json_str(x, "workload"),
			    json_str(x, "reason"));
		table_add(&t, (const char *const[]){ json_str(e, "node_class"), json_str(e, "variant"),
		    ratio, wl.s });
		buf_free(&wl);
	}
	table_print(b, &t);
}

static void
text_report(buf *b, const cJSON *rep)
{
	const cJSON *st = json_get(rep, "settings");
	buf notes = BUF_INIT;
	char nb[NUM_BUFSZ], mb[NUM_BUFSZ];

	buf_addf(b, "campaign %s: baseline %s, %s repeats, confidence %s, margin %s, %s cores "
	    "per run\n", json_str(rep, "plan_id"), json_str(json_get(rep, "applies_to"), "baseline"),
	    json_get(st, "repeats")->valuestring,
	    num_repr(nb, json_num(st, "confidence")), num_repr(mb, json_num(st, "margin")),
	    json_get(st, "cores")->valuestring);
	buf_addf(b, "plan_sha256    %s\nresults_sha256 %s\n\n", json_str(rep, "plan_sha256"),
	    json_str(rep, "results_sha256"));
	node_class_table(b, rep);
	buf_addc(b, '\n');
	cell_table(b, &notes, rep);
	buf_addc(b, '\n');
	buf_adds(b, "aggregates (equal-weight geometric mean of the workloads' ratios; no "
	    "interval):\n");
	aggregate_table(b, rep);
	buf_adds(b, "\nratio = T_baseline / T_variant of steady time (above 1: the variant is "
	    "faster); interval: Student t on the mean log ratio; break-even: runs to repay "
	    "build and deployment, rounded up (conservative count in parentheses)\n");
	if (notes.len > 0) {
		buf_adds(b, "\nnotes:\n");
		buf_add(b, notes.s, notes.len);
	}
	buf_free(&notes);
}

/* The CSV: one row per node class, workload and variant. */
static void
csv_report(buf *b, const cJSON *rep)
{
	static const char *const head[] = { "node_class", "workload", "variant",
	    "planned_pairs", "retained_pairs", "excluded_pairs", "missing_pairs",
	    "geometric_mean", "median", "min", "max", "interval_low", "interval_high",
	    "verdict", "verdict_reason", "break_even_runs", "break_even_runs_conservative",
	    "break_even_reason" };
	const cJSON *e;

	for (size_t i = 0; i < sizeof head / sizeof *head; i++)
		buf_addf(b, "%s%s", i > 0 ? "," : "", head[i]);
	buf_adds(b, "\r\n");
	cJSON_ArrayForEach(e, json_get(rep, "cells")) {
		const cJSON *r = json_get(e, "ratio"), *iv = json_get(e, "interval");
		const cJSON *be = json_get(e, "break_even");
		const cJSON *vals[] = { json_get(e, "node_class"), json_get(e, "workload"),
		    json_get(e, "variant"), json_get(e, "planned_pairs"),
		    json_get(e, "retained_pairs"), json_get(e, "excluded_pairs"),
		    json_get(e, "missing_pairs"), json_get(r, "geometric_mean"),
		    json_get(r, "median"), json_get(r, "min"), json_get(r, "max"),
		    json_get(iv, "low"), json_get(iv, "high"), json_get(e, "verdict"),
		    json_get(e, "verdict_reason"), json_get(be, "runs"),
		    json_get(be, "runs_conservative"), json_get(be, "reason") };

		for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
			if (i > 0)
				buf_addc(b, ',');
			csv_value(b, vals[i]);
		}
		buf_adds(b, "\r\n");
	}
}

/* Reads the options into opt; exits on a usage error. */
static void
parse_options(int argc, char *argv[])
{
	int c;

	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		switch (c) {
		case 'j': opt.json = true; break;
		case 'c': opt.csv = optarg; break;
		case 's': opt.svg = optarg; break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
}

/* Exports never overwrite an input or each other, links included. */
static bool
exports_apart(const char *plan_file, const char *results_file)
{
	const char *files[4] = { plan_file, results_file };
	int nfiles = 2;

	for (int k = 0; k < 2; k++) {
		const char *d = k == 0 ? opt.csv : opt.svg;

		if (d == NULL)
			continue;
		for (int i = 0; i < nfiles; i++)
			if (path_same_file(d, files[i])) {
				warnx("--%s: %s is the same file as %s", k == 0 ? "csv" : "svg", d,
				    files[i]);
				return false;
			}
		files[nfiles++] = d;
	}
	return true;
}

/* The report of the plan and results files, or NULL after saying why. */
static cJSON *
analyze(const char *plan_file, const char *results_file)
{
	struct problems p = { NULL, 0 };
	struct plan pl;
	struct results res = { NULL, "" };
	buf ptext = BUF_INIT, rtext = BUF_INIT;
	cJSON *rep = NULL;

	if (buf_read_file(&ptext, plan_file) != 0) {
		warn("%s", plan_file);
		return NULL;
	}
	if (buf_read_file(&rtext, results_file) != 0) {
		warn("%s", results_file);
		buf_free(&ptext);
		return NULL;
	}
	if (plan_load(ptext.s, ptext.len, &pl, &p) != 0 ||
	    results_load(rtext.s, rtext.len, &pl, &res, &p) != 0)
		warnx("%s: %s", p.v[0].code, p.v[0].detail);
	else
		rep = campaign_analyze(&pl, &res);
	results_free(&res);
	problems_free(&p);
	plan_free(&pl);
	buf_free(&ptext);
	buf_free(&rtext);
	return rep;
}

/* Renders the report with fn and saves it to path. 0, or -1 (said). */
static int
export(const char *what, const char *path, void (*fn)(buf *, const cJSON *), const cJSON *rep)
{
	buf b = BUF_INIT;
	int rc;

	fn(&b, rep);
	rc = atomic_save(what, path, b.s, b.len);
	buf_free(&b);
	return rc;
}

static void
json_report(buf *b, const cJSON *rep)
{
	json_write(b, rep, JSON_INDENT2, NULL);
	buf_addc(b, '\n');
}

int
main(int argc, char *argv[])
{
	buf out = BUF_INIT;
	cJSON *rep;
	int rc = EXIT_PASS;

	err_init(argv[0]);
	parse_options(argc, argv);
	if (argc - optind != 2)
		opt_usage(&option_table, EXIT_TROUBLE);
	if (!exports_apart(argv[optind], argv[optind + 1]))
		return EXIT_TROUBLE;
	if ((rep = analyze(argv[optind], argv[optind + 1])) == NULL)
		return EXIT_TROUBLE;
	(opt.json ? json_report : text_report)(&out, rep);
	if (opt.csv != NULL && export("CSV", opt.csv, csv_report, rep) != 0)
		rc = EXIT_TROUBLE;
	if (opt.svg != NULL && export("SVG", opt.svg, campaign_svg, rep) != 0)
		rc = EXIT_TROUBLE;
	if (fwrite(out.s, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
		warn("write error on standard output");
		rc = EXIT_TROUBLE;
	}
	cJSON_Delete(rep);
	buf_free(&out);
	return rc;
}
