#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/svg_axis.h"
#include "core/xml.h"
#include "frames/frames_figure.h"

/* Page geometry, in SVG user units (pixels). */
#define WIDTH 980
#define LEFT 70
#define TOP 96
#define PLOT_W 560
#define PLOT_H 360
#define LEGEND_X (LEFT + PLOT_W + 30)
#define ROW_H 18
#define PAIR_GAP 8	/* between one pair's legend rows and the next's */

struct axis {
	double lo, hi;	/* log10 of the domain */
};

static double
at(const struct axis *a, double v, double from, double len)
{
	return from + (log10(v) - a->lo) / (a->hi - a->lo) * len;
}

static double
x_of(const struct axis *a, double p)
{
	return at(a, 1 / (1 - p), LEFT, PLOT_W);
}

static double
y_of(const struct axis *a, double ms)
{
	return TOP + PLOT_H - at(a, ms, 0, PLOT_H);
}

/*
 * Frame-time gridlines, each labelled: every 1-2-5 value in range, finer
 * steps when those are too few to read the axis by.
 */
static void
y_ticks(buf *b, const struct axis *a)
{
	struct svgaxis t;

	svgaxis_log(&t, pow(10, a->lo), pow(10, a->hi), 4);
	for (int i = 0; i < t.n; i++) {
		double y = y_of(a, t.v[i]);

		buf_addf(b, "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" class=\"grid\"/>\n",
		    LEFT, y, LEFT + PLOT_W, y);
		buf_addf(b, "<text x=\"%d\" y=\"%.2f\" class=\"ytick\">%s</text>\n", LEFT - 6,
		    y + 4, t.label[i]);
	}
}

/* The common frame budgets, 60 and 30 per second, where they are in range. */
static void
budgets(buf *b, const struct axis *a, const char *unit)
{
	static const struct { double ms; const char *label; int rate; } budget[] = {
		{ 1000.0 / 60, "16.7", 60 }, { 1000.0 / 30, "33.3", 30 },
	};

	for (size_t i = 0; i < sizeof budget / sizeof *budget; i++) {
		double y;

		if (log10(budget[i].ms) < a->lo || log10(budget[i].ms) > a->hi)
			continue;
		y = y_of(a, budget[i].ms);
		buf_addf(b, "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" class=\"budget\"/>\n",
		    LEFT, y, LEFT + PLOT_W, y);
		/* At the left, where the curves start low, haloed to read over a curve. */
		buf_addf(b, "<text x=\"%d\" y=\"%.2f\" class=\"budgetl\">%s ms budget, %d "
		    "%ss/s</text>\n", LEFT + 6, y - 4, budget[i].label, budget[i].rate, unit);
	}
}

/* Percentile gridlines: 0, 50, 90, 99, 99.9 ... inside the domain. */
static void
x_ticks(buf *b, const struct axis *a)
{
	static const char *const label[] = { "0%", "50%", "90%", "99%", "99.9%", "99.99%",
	    "99.999%", "99.9999%" };

	for (int k = 0; k < 8; k++) {
		double q = k == 0 ? 1 : k == 1 ? 2 : pow(10, k - 1), x;

		if (log10(q) > a->hi + 1e-9)
			break;
		x = at(a, q, LEFT, PLOT_W);
		buf_addf(b, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" class=\"grid\"/>\n",
		    x, TOP, x, TOP + PLOT_H);
		buf_addf(b, "<text x=\"%.2f\" y=\"%d\" class=\"xtick\">%s</text>\n", x,
		    TOP + PLOT_H + 16, label[k]);
	}
}

static void
style(buf *b)
{
	buf_adds(b, "<style>\n"
	    "text { font-family: sans-serif; font-size: 12px; fill: #222; }\n"
	    ".title { font-size: 16px; font-weight: bold; }\n"
	    ".sub { fill: #555; }\n"
	    ".warn { fill: #b00020; font-weight: bold; }\n"
	    ".grid { stroke: #e3e3e3; stroke-width: 1; }\n"
	    ".frame { fill: none; stroke: #999; }\n"
	    ".ytick { text-anchor: end; fill: #555; }\n"
	    ".xtick { text-anchor: middle; fill: #555; }\n"
	    ".axis { fill: #333; }\n"
	    ".curve { fill: none; stroke-width: 1.6; }\n"
	    ".baseline { stroke: #1f6fb4; }\n"
	    ".successor { stroke: #e07b00; stroke-dasharray: 6 3; }\n"
	    ".swatch.baseline { fill: #1f6fb4; }\n"
	    ".swatch.successor { fill: #e07b00; }\n"
	    ".low { fill: #b00020; }\n"
	    ".budget { stroke: #8a8a8a; stroke-width: 1; stroke-dasharray: 2 3; }\n"
	    ".budgetl { fill: #555; font-size: 11px; paint-order: stroke; stroke: #fff; "
	    "stroke-width: 3px; }\n"
	    ".delta { fill: #333; }\n"
	    ".run:hover .curve { stroke-width: 3.5; }\n"
	    "</style>\n");
}

/*
 * The legend's order: pair by pair (in the order pairs first appear), each
 * pair's baseline before its successor. Returns the number of pairs; pair[k]
 * is the pair of order[k].
 */
static int
legend_order(const struct frames_svg_run *runs, int nruns, int *order, int *pair)
{
	bool *done = ecalloc((size_t)nruns + 1, sizeof *done);
	int n = 0, pairs = 0;

	for (int i = 0; i < nruns; i++) {
		if (done[i])
			continue;
		for (int pass = 0; pass < 2; pass++)
			for (int j = i; j < nruns; j++) {
				bool base = strcmp(runs[j].variant, "baseline") == 0;

				if (done[j] || base != (pass == 0) ||
				    strcmp(runs[j].repeat_id, runs[i].repeat_id) != 0)
					continue;
				done[j] = true;
				pair[n] = pairs;
				order[n++] = j;
			}
		pairs++;
	}
	free(done);
	return pairs;
}

/* The report's median frame time of one run, or NAN. */
static double
run_median(const cJSON *rep, const char *repeat_id, const char *variant)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, json_get(rep, "runs"))
		if (strcmp(json_str(r, "repeat_id"), repeat_id) == 0 &&
		    strcmp(json_str(r, "variant"), variant) == 0) {
			const cJSON *v = json_get(json_get(r, "metrics"), "median_frame_time_ms");
			return cJSON_IsNumber(v) ? v->valuedouble : NAN;
		}
	return NAN;
}

/* "10.0% lower", "2.5% higher", "unchanged": a reduction in words. */
static void
change(buf *b, double reduction_percent)
{
	char t[SVGAXIS_LABEL];

	svgaxis_format(t, fabs(reduction_percent), 1);
	if (strcmp(t, "0.0") == 0)
		buf_adds(b, "unchanged");
	else
		buf_addf(b, "%s%% %s", t, reduction_percent > 0 ? "lower" : "higher");
}

/* The paired median deltas, under the legend from y; returns the next y. */
static int
deltas(buf *b, const cJSON *rep, const char *unit, int y)
{
	const cJSON *d, *pairs = json_get(rep, "paired_deltas");
	char m0[SVGAXIS_LABEL], m1[SVGAXIS_LABEL];

	if (cJSON_GetArraySize(pairs) == 0)
		return y;
	buf_addf(b, "<text x=\"%d\" y=\"%d\" class=\"axis\">median %s time, successor "
	    "against baseline</text>\n", LEGEND_X, y, unit);
	cJSON_ArrayForEach(d, pairs) {
		const char *id = json_str(d, "repeat_id");
		double base = run_median(rep, id, "baseline"), succ = run_median(rep, id, "successor");

		y += ROW_H;
		buf_addf(b, "<text x=\"%d\" y=\"%d\" class=\"delta\">", LEGEND_X, y);
		xml_escape(b, id);
		buf_adds(b, ": ");
		if (isfinite(base) && isfinite(succ)) {
			svgaxis_format(m0, base, 2);
			svgaxis_format(m1, succ, 2);
			buf_addf(b, "%s \xe2\x86\x92 %s ms, ", m0, m1);
		}
		change(b, json_num(d, "median_frame_time_reduction_percent"));
		buf_adds(b, "</text>\n");
	}
	if (cJSON_IsNumber(json_get(json_get(rep, "delta_summary"),
	    "median_frame_time_reduction_percent"))) {
		y += ROW_H;
		buf_addf(b, "<text x=\"%d\" y=\"%d\" class=\"axis\">median of the pairs: ",
		    LEGEND_X, y);
		change(b, json_num(json_get(rep, "delta_summary"),
		    "median_frame_time_reduction_percent"));
		buf_adds(b, "</text>\n");
	}
	return y;
}

/*
 * The figure, written in document order. Over 100 lines on purpose: most
 * are the document's fixed text (title, style sheet, axis labels), one
 * template read top to bottom; the computed parts are in the helpers above.
 */
void
frames_svg(buf *b, const cJSON *rep, const struct frames_svg_run *runs, int nruns)
{
	const cJSON *cap = json_get(rep, "capture"), *ms = json_get(rep, "measurement");
	bool tick = strcmp(json_str(cap, "kind"), "server_tick") == 0;
	const char *unit = tick ? "tick" : "frame";
	double lo = INFINITY, hi = 0, qmax = 10;
	struct axis ax, ay;
	int y = TOP + 20;
	int *order = ecalloc((size_t)nruns + 1, sizeof *order);
	int *pair = ecalloc((size_t)nruns + 1, sizeof *pair);
	int npairs = legend_order(runs, nruns, order, pair);
	int ndeltas = cJSON_GetArraySize(json_get(rep, "paired_deltas"));
	int h = TOP + PLOT_H + 70, legend_h = TOP + 42 + nruns * ROW_H + npairs * PAIR_GAP +
	    (ndeltas > 0 ? (ndeltas + 3) * ROW_H : 0);

	for (int i = 0; i < nruns; i++)
		for (int k = 0; k < runs[i].ncurve; k++) {
			double v = runs[i].curve[k].ms, q = 1 / (1 - runs[i].curve[k].p);

			if (v < lo)
				lo = v;
			if (v > hi)
				hi = v;
			if (q > qmax)
				qmax = q;
		}
	if (!(lo > 0) || !(hi >= lo))
		lo = hi = 1;
	ay.lo = log10(lo);
	ay.hi = log10(hi);
	svgaxis_pad(&ay.lo, &ay.hi, 0.06, 0.02);
	ax.lo = 0;
	ax.hi = log10(qmax) * 1.02;
	if (legend_h + 40 > h)
		h = legend_h + 40;

	buf_addf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	    "viewBox=\"0 0 %d %d\" role=\"img\">\n", WIDTH, h, WIDTH, h);
	buf_adds(b, "<metadata>");
	buf_adds(b, "manifest_sha256 ");
	xml_escape(b, json_str(rep, "manifest_sha256"));
	{
		const cJSON *r;

		cJSON_ArrayForEach(r, json_get(rep, "runs")) {
			buf_adds(b, "\n");
			xml_escape(b, json_str(r, "sample_file"));
			buf_adds(b, " ");
			xml_escape(b, json_str(r, "sample_sha256"));
		}
	}
	buf_adds(b, "</metadata>\n");
	style(b);
	buf_addf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", WIDTH, h);
	buf_addf(b, "<text x=\"%d\" y=\"26\" class=\"title\">%s-time distribution per run: "
	    "baseline and successor</text>\n", LEFT, tick ? "Tick" : "Frame");
	buf_addf(b, "<text x=\"%d\" y=\"46\" class=\"sub\">", LEFT);
	xml_escape(b, json_str(cap, "kind"));
	buf_adds(b, ", ");
	xml_escape(b, json_str(cap, "environment"));
	buf_adds(b, ", ");
	xml_escape(b, json_str(cap, "tool"));
	buf_adds(b, " ");
	xml_escape(b, json_str(cap, "version"));
	buf_addf(b, "; window %g to %g ms; acceptance not evaluated</text>\n",
	    json_num(ms, "window_start_ms"), json_num(ms, "window_end_ms"));
	if (strcmp(json_str(rep, "sample_origin"), "synthetic") == 0)
		buf_addf(b, "<text x=\"%d\" y=\"66\" class=\"warn\">SYNTHETIC SAMPLES: not "
		    "measurements</text>\n", LEFT);
	else
		buf_addf(b, "<text x=\"%d\" y=\"66\" class=\"sub\">sample origin: measured "
		    "(hashes record provenance; they do not authenticate it)</text>\n", LEFT);

	y_ticks(b, &ay);
	x_ticks(b, &ax);
	budgets(b, &ay, unit);
	buf_addf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n",
	    LEFT, TOP, PLOT_W, PLOT_H);
	buf_addf(b, "<text x=\"%d\" y=\"%d\" class=\"xtick\">percentile of included %ss "
	    "(log of 1/(1-p))</text>\n", LEFT + PLOT_W / 2, TOP + PLOT_H + 36, unit);
	buf_addf(b, "<text transform=\"translate(18 %d) rotate(-90)\" class=\"xtick\">%s "
	    "time, ms (log)</text>\n", TOP + PLOT_H / 2, unit);

	/* The curves, baseline first so successors draw on top. */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < nruns; i++) {
			const struct frames_svg_run *r = &runs[i];
			bool base = strcmp(r->variant, "baseline") == 0;

			if (base != (pass == 0))
				continue;
			buf_adds(b, "<g class=\"run\"><title>");
			xml_escape(b, r->repeat_id);
			buf_adds(b, " ");
			xml_escape(b, r->variant);
			buf_addf(b, ": %lld included %ss, coverage %.2f%%</title>\n", r->intervals,
			    unit, r->coverage * 100);
			buf_addf(b, "<polyline class=\"curve %s\" points=\"", base ? "baseline" :
			    "successor");
			for (int k = 0; k < r->ncurve; k++)
				buf_addf(b, "%s%.2f,%.2f", k ? " " : "", x_of(&ax, r->curve[k].p),
				    y_of(&ay, r->curve[k].ms));
			buf_adds(b, "\"/>\n</g>\n");
		}

	/* The legend: pair by pair, baseline then successor, with coverage. */
	buf_addf(b, "<text x=\"%d\" y=\"%d\" class=\"axis\">run, variant: coverage of the "
	    "window</text>\n", LEGEND_X, TOP + 4);
	buf_addf(b, "<text x=\"%d\" y=\"%d\" class=\"sub\">in parentheses: the %ss in the "
	    "window</text>\n", LEGEND_X, TOP + 20, unit);
	for (int k = 0; k < nruns; k++) {
		const struct frames_svg_run *r = &runs[order[k]];
		bool base = strcmp(r->variant, "baseline") == 0;

		y = TOP + 42 + k * ROW_H + pair[k] * PAIR_GAP;
		buf_addf(b, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" class=\"swatch "
		    "%s\"/>\n", LEGEND_X, y - 5, base ? "baseline" : "successor");
		buf_addf(b, "<text x=\"%d\" y=\"%d\"%s>", LEGEND_X + 20, y,
		    r->coverage < 0.995 ? " class=\"low\"" : "");
		xml_escape(b, r->repeat_id);
		buf_adds(b, ", ");
		xml_escape(b, r->variant);
		buf_addf(b, ": %.2f%% (%lld %s%s)</text>\n", r->coverage * 100, r->intervals, unit,
		    r->intervals == 1 ? "" : "s");
	}
	deltas(b, rep, unit, y + 2 * ROW_H);
	buf_adds(b, "</svg>\n");
	free(order);
	free(pair);
}
