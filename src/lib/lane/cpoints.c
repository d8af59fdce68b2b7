#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/num.h"
#include "core/unit.h"
#include "core/xml.h"
#include "lane/cpoints.h"
#include "lane/identity.h"
#include "lane/policy.h"
#include "lane/store/read.h"

/* Whether a change point's direction is "worse". */
static bool
cpoints_worse(const cJSON *cp)
{
	return strcmp(json_str(cp, "direction"), "worse") == 0;
}

/* A table cell (no value becomes markup in an annotation). */
static void
cell(buf *out, const char *s)
{
	buf_addc(out, ' ');
	xml_md_text(out, s);
	buf_adds(out, " |");
}

/*
 * The p-value of a change point as text: two significant digits, and "<1e-300" for one below
 * that (0 included: it underflowed), never "0".
 */
static void
pvalue_text(buf *out, const cJSON *cp)
{
	const cJSON *pv = json_get(cp, "pvalue");

	if (!cJSON_IsNumber(pv))
		buf_addc(out, '-');
	else if (pv->valuedouble < 1e-300)
		buf_adds(out, "<1e-300");
	else
		buf_addf(out, "%.2g", pv->valuedouble);
}

/* Where a change point's metric sorts: the six in order, then named ones (with a "unit"). */
static int
metric_order(const cJSON *cp)
{
	int mi = policy_metric_index(json_str(cp, "metric"));

	return mi < 0 || json_get(cp, "unit") != NULL ? METRIC_COUNT : mi;
}

static int
precision(const cJSON *cp)
{
	int mi = policy_metric_index(json_str(cp, "metric"));

	return mi >= 0 ? metric_table[mi].precision : 3;
}

/*
 * A mean and its standard deviation: a named metric's (with a "unit")
 * scaled for display ("20.0 µs ± 64.7 ns"), the six's at their precision.
 */
static void
value(buf *out, const cJSON *cp, const char *mean, const char *sd)
{
	char a[NUM_BUFSZ], b[NUM_BUFSZ], ua[UNIT_FMTSZ], ub[UNIT_FMTSZ];
	const cJSON *m = json_get(cp, mean), *s = json_get(cp, sd);
	const cJSON *unit = json_get(cp, "unit");

	if (cJSON_IsNumber(m) && cJSON_IsNumber(s) && cJSON_IsString(unit)) {
		xml_md_text(out, unit_format(ua, m->valuedouble, unit->valuestring));
		buf_adds(out, " ± ");
		xml_md_text(out, unit_format(ub, s->valuedouble, unit->valuestring));
	} else if (cJSON_IsNumber(m) && cJSON_IsNumber(s))
		buf_addf(out, "%s ± %s", num_fixed(a, m->valuedouble, precision(cp)),
		    num_fixed(b, s->valuedouble, precision(cp)));
}

static bool
tentative(const cJSON *cp)
{
	return cJSON_IsTrue(json_get(cp, "tentative"));
}

/* The first 7 characters of a commit. */
static void
short_sha(buf *out, const char *sha)
{
	char t[8];

	snprintf(t, sizeof t, "%s", sha != NULL ? sha : "");
	xml_md_text(out, t);
}

/* The cohort of a change point: its identity keys, model and GPU, joined by \x1f. */
static void
cohort_of(buf *out, const cJSON *cp)
{
	for (int k = 0; k < IDENTITY_KEYS; k++) {
		const cJSON *v = json_get(cp, identity_keys[k]);
		buf_adds(out, cJSON_IsString(v) ? v->valuestring : "\x1e");
		buf_addc(out, '\x1f');
	}
	buf_adds(out, json_str(cp, "model_id"));
	buf_addc(out, '\x1f');
	buf_adds(out, json_str(cp, "gpu_type"));
}

/* An event: the change points of one cohort at one record, all metrics. */
struct event {
	const cJSON **cp;
	size_t n;
	char *cohort, *record;
};

static bool
event_worse(const struct event *e)
{
	for (size_t i = 0; i < e->n; i++)
		if (cpoints_worse(e->cp[i]))
			return true;
	return false;
}

/* Worse first (an event with a worse change), then newest first, then as given. */
static int
cmp_event(const struct event *x, const struct event *y)
{
	bool wx = event_worse(x), wy = event_worse(y);
	int64_t tx = store_record_instant(x->cp[0]), ty = store_record_instant(y->cp[0]);

	if (wx != wy)
		return wx ? -1 : 1;
	if (tx != ty)
		return tx > ty ? -1 : 1;
	return 0;
}

/* The change points grouped into events, in the order of their first. */
static struct event *
events_of(const cJSON **cps, size_t n, size_t *nev)
{
	struct event *ev = ecalloc(n + 1, sizeof *ev);
	size_t ne = 0, i, k;

	for (i = 0; i < n; i++) {
		buf c = BUF_INIT, r = BUF_INIT;

		cohort_of(&c, cps[i]);
		buf_addf(&r, "%s\x1f%s\x1f%s", json_str(cps[i], "path"),
		    json_str(cps[i], "commit_sha"), json_str(cps[i], "timestamp"));
		for (k = 0; k < ne; k++)
			if (strcmp(ev[k].cohort, c.s) == 0 && strcmp(ev[k].record, r.s) == 0)
				break;
		if (k == ne) {
			ev[ne].cohort = buf_detach(&c);
			ev[ne].record = buf_detach(&r);
			ev[ne].cp = ecalloc(n + 1, sizeof *ev[ne].cp);
			ne++;
		}
		ev[k].cp[ev[k].n++] = cps[i];
		buf_free(&c);
		buf_free(&r);
	}
	/*
	 * Metrics in canonical order within an event, named metrics after the
	 * six in the order given (insertion sort: stable).
	 */
	for (k = 0; k < ne; k++)
		for (i = 1; i < ev[k].n; i++)
			for (size_t j = i; j > 0 && metric_order(ev[k].cp[j]) <
			    metric_order(ev[k].cp[j - 1]); j--) {
				const cJSON *t = ev[k].cp[j];
				ev[k].cp[j] = ev[k].cp[j - 1];
				ev[k].cp[j - 1] = t;
			}
	*nev = ne;
	return ev;
}

/*
 * The model of an event's row, with what tells its cohort apart from
 * another row's of the same model and GPU: the identity keys whose values
 * differ, or the kind (legacy, v2) when one has no identity.
 */
static void
model_label(buf *out, const struct event *ev, size_t ne, size_t i)
{
	const cJSON *a = ev[i].cp[0];
	bool differs[IDENTITY_KEYS] = { false }, kind = false, any = false;
	bool av2 = json_get(a, identity_keys[IDENTITY_WORKLOAD]) != NULL;

	for (size_t j = 0; j < ne; j++) {
		const cJSON *b = ev[j].cp[0];

		if (strcmp(ev[j].cohort, ev[i].cohort) == 0 ||
		    strcmp(json_str(a, "model_id"), json_str(b, "model_id")) != 0 ||
		    strcmp(json_str(a, "gpu_type"), json_str(b, "gpu_type")) != 0)
			continue;
		if (av2 != (json_get(b, identity_keys[IDENTITY_WORKLOAD]) != NULL)) {
			kind = any = true;
			continue;
		}
		for (int k = 0; k < IDENTITY_KEYS; k++)
			if (strcmp(json_str(a, identity_keys[k]), json_str(b, identity_keys[k])) != 0)
				differs[k] = any = true;
	}
	xml_md_text(out, json_str(a, "model_id"));
	if (!any)
		return;
	buf_adds(out, " (");
	if (kind)
		buf_adds(out, av2 ? "v2" : "legacy");
	for (int k = 0; av2 && k < IDENTITY_KEYS; k++)
		if (differs[k]) {
			buf_adds(out, kind ? ", " : "");
			xml_md_text(out, identity_keys[k]);
			buf_addc(out, ' ');
			xml_md_text(out, json_str(a, identity_keys[k]));
			kind = true;
		}
	buf_addc(out, ')');
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

/* The change of one change point: "worse +5.5%", "tentative" when it is. */
static void
change_text(buf *out, const cJSON *cp)
{
	const cJSON *fc = json_get(cp, "forward_change_percent");
	char a[NUM_BUFSZ];

	if (cJSON_IsNumber(fc))
		buf_addf(out, "%s %s%s%%", cpoints_worse(cp) ? "worse" :
		    strcmp(json_str(cp, "direction"), "unknown") == 0 ? "changed" : "better",
		    fc->valuedouble >= 0 ? "+" : "", num_fixed(a, fc->valuedouble, 1));
	else
		xml_md_text(out, json_str(cp, "direction"));
	buf_adds(out, decided_words(cp));
	if (tentative(cp))
		buf_adds(out, ", tentative");
	/* A stored bisect found its culprit (perf-changes(1) "culprit"). */
	if (cJSON_IsString(json_get(json_get(cp, "culprit"), "short"))) {
		buf_adds(out, ", culprit: ");
		xml_md_text(out, json_str(json_get(cp, "culprit"), "short"));
	}
}

/* The runs before and after a change point: "40 / 25". */
static void
runs_text(buf *out, const cJSON *cp)
{
	const cJSON *b = json_get(cp, "n_before"), *a = json_get(cp, "n_after");

	if (cJSON_IsNumber(b) && cJSON_IsNumber(a))
		buf_addf(out, "%.0f / %.0f", b->valuedouble, a->valuedouble);
}

/* One cell listing a field of each change point of an event, a line each. */
static void
listed(buf *out, const struct event *e, void (*f)(buf *, const cJSON *))
{
	buf_addc(out, ' ');
	for (size_t i = 0; i < e->n; i++) {
		if (i > 0)
			buf_adds(out, "<br>");
		f(out, e->cp[i]);
	}
	buf_adds(out, " |");
}

static void
metric_text(buf *out, const cJSON *cp)
{
	xml_md_text(out, json_str(cp, "metric"));
}

static void
before_text(buf *out, const cJSON *cp)
{
	value(out, cp, "mean_before", "stddev_before");
}

static void
after_text(buf *out, const cJSON *cp)
{
	value(out, cp, "mean_after", "stddev_after");
}

/* "previous..commit", and how many untrusted runs lie between. */
static void
range_text(buf *out, const cJSON *cp)
{
	const cJSON *u = json_get(cp, "untrusted_between");

	buf_addc(out, ' ');
	short_sha(out, json_str(json_get(cp, "previous"), "commit_sha"));
	buf_adds(out, "..");
	short_sha(out, json_str(cp, "commit_sha"));
	if (cJSON_IsNumber(u) && u->valuedouble >= 1)
		buf_addf(out, " (%.0f untrusted run%s between)", u->valuedouble,
		    u->valuedouble >= 2 ? "s" : "");
	buf_adds(out, " |");
}

/* The index of a change point, -1 when it has none. */
static double
index_of(const cJSON *cp)
{
	const cJSON *v = json_get(cp, "index");

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/*
 * Whether b is the change point that follows a in the same series:
 * a's segment after it ends where b is.
 */
static bool
adjacent(const cJSON *a, const cJSON *b)
{
	const cJSON *na = json_get(a, "n_after");

	return cJSON_IsNumber(na) && index_of(a) >= 0 &&
	    index_of(a) + na->valuedouble == index_of(b);
}

/*
 * The drifts: runs of two or more adjacent change points of one series in
 * one direction, each with its total change from the level before the
 * first to the level after the last.
 */
static void
drifts(buf *out, const struct event *ev, size_t ne, const cJSON **cps, size_t n)
{
	const cJSON **s = ecalloc(n + 1, sizeof *s), *mb, *ma;
	char **key = ecalloc(n + 1, sizeof *key);
	char a[NUM_BUFSZ], b[NUM_BUFSZ], c[NUM_BUFSZ];
	bool header = false;
	double total;
	size_t i, j, k, e;

	/* By series (cohort and metric), then index; stable. */
	for (i = 0; i < n; i++) {
		buf kb = BUF_INIT;

		cohort_of(&kb, cps[i]);
		buf_addf(&kb, "\x1d%s", json_str(cps[i], "metric"));
		for (k = i; k > 0 && (strcmp(kb.s, key[k - 1]) < 0 || (strcmp(kb.s, key[k - 1]) == 0 &&
		    index_of(cps[i]) < index_of(s[k - 1]))); k--) {
			s[k] = s[k - 1];
			key[k] = key[k - 1];
		}
		s[k] = cps[i];
		key[k] = buf_detach(&kb);
	}
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && strcmp(key[j], key[i]) == 0 && adjacent(s[j - 1], s[j]) &&
		    cpoints_worse(s[j]) == cpoints_worse(s[i]); j++)
			;
		if (j - i < 2)
			continue;
		mb = json_get(s[i], "mean_before");
		ma = json_get(s[j - 1], "mean_after");
		total = cJSON_IsNumber(mb) && cJSON_IsNumber(ma) && mb->valuedouble != 0 ?
		    (ma->valuedouble / mb->valuedouble - 1.0) * 100.0 : 0;

		if (!header)
			buf_adds(out, "\nDrifts (adjacent change points in one direction, from the "
			    "first to the last):\n\n");
		header = true;
		for (e = 0; e < ne && !(strncmp(key[i], ev[e].cohort, strlen(ev[e].cohort)) == 0 &&
		    key[i][strlen(ev[e].cohort)] == '\x1d'); e++)
			;
		buf_adds(out, "- ");
		if (e < ne)
			model_label(out, ev, ne, e);
		else
			xml_md_text(out, json_str(s[i], "model_id"));
		buf_adds(out, " on ");
		xml_md_text(out, json_str(s[i], "gpu_type"));
		buf_adds(out, ", ");
		xml_md_text(out, json_str(s[i], "metric"));
		buf_addf(out, ": %s %s%s%% over %zu steps, %s → %s, ",
		    cpoints_worse(s[i]) ? "worse" : "better", total >= 0 ? "+" : "",
		    num_fixed(a, total, 1), j - i,
		    num_fixed(b, cJSON_IsNumber(mb) ? mb->valuedouble : 0, precision(s[i])),
		    num_fixed(c, cJSON_IsNumber(ma) ? ma->valuedouble : 0, precision(s[i])));
		short_sha(out, json_str(json_get(s[i], "previous"), "commit_sha"));
		buf_adds(out, "..");
		short_sha(out, json_str(s[j - 1], "commit_sha"));
		buf_addc(out, '\n');
	}
	for (i = 0; i < n; i++)
		free(key[i]);
	free(key);
	free(s);
}

void
cpoints_markdown(buf *out, const cJSON **cps, size_t n)
{
	struct event *ev, t;
	size_t ne, i, k;

	ev = events_of(cps, n, &ne);
	/* Insertion sort: stable, and the lists are short. */
	for (i = 1; i < ne; i++)
		for (k = i; k > 0 && cmp_event(&ev[k], &ev[k - 1]) < 0; k--) {
			t = ev[k];
			ev[k] = ev[k - 1];
			ev[k - 1] = t;
		}
	buf_adds(out, "| Model | GPU | Metric | Change | Before | After | Runs before / after | "
	    "p-value | Range | Timestamp |\n");
	buf_adds(out, "|---|---|---|---|---|---|---|---|---|---|\n");
	for (i = 0; i < ne; i++) {
		buf_adds(out, "| ");
		model_label(out, ev, ne, i);
		buf_adds(out, " |");
		cell(out, json_str(ev[i].cp[0], "gpu_type"));
		listed(out, &ev[i], metric_text);
		listed(out, &ev[i], change_text);
		listed(out, &ev[i], before_text);
		listed(out, &ev[i], after_text);
		listed(out, &ev[i], runs_text);
		listed(out, &ev[i], pvalue_text);
		range_text(out, ev[i].cp[0]);
		cell(out, json_str(ev[i].cp[0], "timestamp"));
		buf_addc(out, '\n');
	}
	drifts(out, ev, ne, cps, n);
	for (i = 0; i < ne; i++) {
		free(ev[i].cp);
		free(ev[i].cohort);
		free(ev[i].record);
	}
	free(ev);
}
