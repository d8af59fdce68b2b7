#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lane/change_report.h"
#include "core/json.h"
#include "core/num.h"
#include "lane/policy.h"
#include "lane/store/read.h"

/* Whether a change point's direction is "worse". */
static bool
cpoints_worse(const cJSON *cp)
{
	return strcmp(json_str(cp, "direction"), "worse") == 0;
}

/* Worse first, then newest first, then as given (the sort is stable by position). */
static int
cmp_cp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	int64_t tx = store_record_instant(x), ty = store_record_instant(y);

	if (cpoints_worse(x) != cpoints_worse(y))
		return cpoints_worse(x) ? -1 : 1;
	if (tx != ty)
		return tx > ty ? -1 : 1;
	return 0;
}

/*
 * A table cell, as perf-summarize writes its cells: line breaks as spaces,
 * "|" as "/", "<" as "&lt;" (no value becomes markup in an annotation).
 */
static void
cell(buf *out, const char *s)
{
	buf_adds(out, " ");
	for (; s != NULL && *s; s++)
		switch (*s) {
		case '\n': case '\r': buf_addc(out, ' '); break;
		case '|': buf_addc(out, '/'); break;
		case '<': buf_adds(out, "&lt;"); break;
		default: buf_addc(out, *s);
		}
	buf_adds(out, " |");
}

static void
value(buf *out, const cJSON *cp, const char *mean, const char *sd, int prec)
{
	char a[NUM_BUFSZ], b[NUM_BUFSZ];
	const cJSON *m = json_get(cp, mean), *s = json_get(cp, sd);

	if (!cJSON_IsNumber(m) || !cJSON_IsNumber(s)) {
		cell(out, "");
		return;
	}
	buf_addf(out, " %s ± %s |", num_fixed(a, m->valuedouble, prec),
	    num_fixed(b, s->valuedouble, prec));
}

/* " (acknowledged)" and the like for a decided change point, else "". */
static const char *
decided_words(const cJSON *cp)
{
	const char *kind = json_str(json_get(cp, "decision"), "kind");

	if (strcmp(kind, "accepted") == 0)
		return " (accepted)";
	if (strcmp(kind, "acknowledged") == 0)
		return " (acknowledged)";
	if (strcmp(kind, "invalid") == 0)
		return " (invalid)";
	return "";
}

void
cpoints_markdown(buf *out, const cJSON **cps, size_t n)
{
	char a[NUM_BUFSZ], p[32], commit[8];
	size_t i, k;

	/* Insertion sort: stable, and the lists are short. */
	for (i = 1; i < n; i++)
		for (k = i; k > 0 && cmp_cp(&cps[k], &cps[k - 1]) < 0; k--) {
			const cJSON *t = cps[k];
			cps[k] = cps[k - 1];
			cps[k - 1] = t;
		}
	buf_adds(out, "| Model | GPU | Metric | Change | Before | After | p-value | Commit | "
	    "Timestamp |\n");
	buf_adds(out, "|---|---|---|---|---|---|---|---|---|\n");
	for (i = 0; i < n; i++) {
		const cJSON *cp = cps[i], *fc = json_get(cp, "forward_change_percent"),
		    *pv = json_get(cp, "pvalue");
		const char *metric = json_str(cp, "metric");
		int mi = policy_metric_index(metric);
		int prec = mi >= 0 ? metric_table[mi].precision : 3;

		buf_addc(out, '|');
		cell(out, json_str(cp, "model_id"));
		cell(out, json_str(cp, "gpu_type"));
		cell(out, metric);
		if (cJSON_IsNumber(fc))
			buf_addf(out, " %s %s%s%%%s |", cpoints_worse(cp) ? "worse" : "better",
			    fc->valuedouble >= 0 ? "+" : "", num_fixed(a, fc->valuedouble, 1),
			    decided_words(cp));
		else
			cell(out, json_str(cp, "direction"));
		value(out, cp, "mean_before", "stddev_before", prec);
		value(out, cp, "mean_after", "stddev_after", prec);
		if (cJSON_IsNumber(pv))
			snprintf(p, sizeof p, "%.2g", pv->valuedouble);
		else
			snprintf(p, sizeof p, "-");
		cell(out, p);
		snprintf(commit, sizeof commit, "%s", json_str(cp, "commit_sha"));
		cell(out, commit);
		cell(out, json_str(cp, "timestamp"));
		buf_addc(out, '\n');
	}
}
