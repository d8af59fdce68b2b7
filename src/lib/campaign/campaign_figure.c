#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/campaign_figure.h"
#include "core/buf.h"
#include "core/json.h"
#include "core/svg_axis.h"
#include "core/xml.h"

/* Page geometry, in SVG user units (pixels). */
#define WIDTH 980
#define LEFT 200	/* workload labels */
#define PLOT_W 470
#define RIGHT_X (LEFT + PLOT_W + 18)
#define ROW_H 22
#define HEAD_H 30
#define TOP 78

struct axis {
	double lo, hi;	/* log10 of the domain */
};

static double
x_of(const struct axis *a, double v)
{
	return LEFT + (log10(v) - a->lo) / (a->hi - a->lo) * PLOT_W;
}

static void
widen(double *lo, double *hi, double v)
{
	if (isfinite(v) && v > 0) {
		if (v < *lo)
			*lo = v;
		if (v > *hi)
			*hi = v;
	}
}

/* The domain: every plotted value, the band and 1, with a margin. */
static struct axis
make_axis(const cJSON *rep)
{
	const cJSON *band = json_get(json_get(rep, "settings"), "equivalence_band"), *c;
	double lo = 1, hi = 1;
	struct axis a;

	widen(&lo, &hi, json_num(band, "low"));
	widen(&lo, &hi, json_num(band, "high"));
	cJSON_ArrayForEach(c, json_get(rep, "cells")) {
		if (strcmp(json_str(c, "verdict"), "incomparable") == 0)
			continue;
		widen(&lo, &hi, json_num(json_get(c, "ratio"), "geometric_mean"));
		widen(&lo, &hi, json_num(json_get(c, "interval"), "low"));
		widen(&lo, &hi, json_num(json_get(c, "interval"), "high"));
	}
	cJSON_ArrayForEach(c, json_get(rep, "aggregates"))
		widen(&lo, &hi, json_num(c, "geometric_mean"));
	a.lo = log10(lo);
	a.hi = log10(hi);
	svgaxis_pad(&a.lo, &a.hi, 0.08, 0.01);
	return a;
}

/* Ticks: 1 and the ratios a reader knows inside the domain, thinned to fit. */
static void
ticks(buf *b, const struct axis *a, double y0, double y1)
{
	struct svgaxis t;

	svgaxis_ratio(&t, a->lo, a->hi, LEFT, PLOT_W, 42);
	for (int i = 0; i < t.n; i++) {
		double x = x_of(a, t.v[i]);

		buf_addf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" class=\"grid\"/>\n",
		    x, y0, x, y1);
		buf_addf(b, "<text x=\"%.2f\" y=\"%.2f\" class=\"tick\">%s</text>\n", x, y1 + 14,
		    t.label[i]);
	}
}

static const char *
verdict_class(const char *v)
{
	if (strcmp(v, "faster") == 0)
		return "faster";
	if (strcmp(v, "slower") == 0)
		return "slower";
	if (strcmp(v, "equivalent") == 0)
		return "equivalent";
	return "inconclusive";
}

/* The row's tooltip: the figures and the reasons behind exclusions and gaps. */
static void
cell_title(buf *b, const cJSON *c)
{
	const cJSON *x, *r;
	char t[128];

	buf_adds(b, "<title>");
	snprintf(t, sizeof t, "%s / %s / %s: ", json_str(c, "node_class"), json_str(c, "workload"),
	    json_str(c, "variant"));
	xml_escape(b, t);
	xml_escape(b, json_str(c, "verdict"));
	buf_adds(b, " (");
	xml_escape(b, json_str(c, "verdict_reason"));
	buf_adds(b, ")");
	if (cJSON_IsObject(json_get(c, "ratio")))
		buf_addf(b, "&#10;geometric mean %.4f, median %.4f, min %.4f, max %.4f",
		    json_num(json_get(c, "ratio"), "geometric_mean"),
		    json_num(json_get(c, "ratio"), "median"), json_num(json_get(c, "ratio"), "min"),
		    json_num(json_get(c, "ratio"), "max"));
	if (cJSON_IsObject(json_get(c, "interval")))
		buf_addf(b, "&#10;interval %.4f to %.4f (t = %.4f)",
		    json_num(json_get(c, "interval"), "low"), json_num(json_get(c, "interval"), "high"),
		    json_num(json_get(c, "interval"), "t_quantile"));
	cJSON_ArrayForEach(x, json_get(c, "excluded")) {
		buf_addf(b, "&#10;block %s excluded:", json_get(x, "block")->valuestring);
		cJSON_ArrayForEach(r, json_get(x, "reasons")) {
			buf_addc(b, ' ');
			xml_escape(b, r->valuestring);
		}
	}
	cJSON_ArrayForEach(x, json_get(c, "missing")) {
		buf_addf(b, "&#10;block %s missing:", json_get(x, "block")->valuestring);
		cJSON_ArrayForEach(r, json_get(x, "runs"))
			buf_addf(b, " %s", r->valuestring);
	}
	buf_adds(b, "</title>\n");
}

/* "Unavailable" in the middle of the plot, on white: never a point at 1. */
static void
unavailable(buf *b, double y)
{
	double cx = LEFT + PLOT_W / 2.0;

	buf_addf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"74\" height=\"15\" rx=\"3\" "
	    "class=\"na-bg\"/>\n", cx - 37, y - 8);
	buf_addf(b, "<text x=\"%.2f\" y=\"%.2f\" class=\"na\">Unavailable</text>\n", cx, y + 4);
}

static void
cell_row(buf *b, const struct axis *a, const cJSON *c, double y)
{
	const cJSON *r = json_get(c, "ratio"), *iv = json_get(c, "interval");
	const char *v = json_str(c, "verdict");
	bool incomparable = strcmp(v, "incomparable") == 0;
	double gm = json_num(r, "geometric_mean");

	buf_adds(b, "<g class=\"row\">\n");
	cell_title(b, c);
	buf_addf(b, "<rect x=\"0\" y=\"%.2f\" width=\"%d\" height=\"%d\" class=\"hit\"/>\n",
	    y - ROW_H / 2.0, WIDTH, ROW_H);
	buf_addf(b, "<text x=\"%d\" y=\"%.2f\" class=\"label\">", LEFT - 10, y + 4);
	xml_escape(b, json_str(c, "workload"));
	buf_adds(b, "</text>\n");
	if (incomparable || !cJSON_IsObject(r) || !(gm > 0))
		unavailable(b, y);
	else {
		if (cJSON_IsObject(iv)) {
			double x0 = x_of(a, json_num(iv, "low")), x1 = x_of(a, json_num(iv, "high"));

			buf_addf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" class=\"ci\"/>\n",
			    x0, y, x1, y);
			buf_addf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" class=\"ci\"/>\n",
			    x0, y - 4, x0, y + 4);
			buf_addf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" class=\"ci\"/>\n",
			    x1, y - 4, x1, y + 4);
		}
		buf_addf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4.5\" class=\"pt %s\"/>\n",
		    x_of(a, gm), y, verdict_class(v));
	}
	buf_addf(b, "<text x=\"%d\" y=\"%.2f\" class=\"info\">%s/%s pairs \xc2\xb7 ", RIGHT_X,
	    y + 4, json_get(c, "retained_pairs")->valuestring,
	    json_get(c, "planned_pairs")->valuestring);
	buf_addf(b, "<tspan class=\"v-%s\">", incomparable ? "incomparable" : verdict_class(v));
	xml_escape(b, v);
	buf_addf(b, "</tspan> \xc2\xb7 %s excluded \xc2\xb7 %s missing</text>\n",
	    json_get(c, "excluded_pairs")->valuestring, json_get(c, "missing_pairs")->valuestring);
	buf_adds(b, "</g>\n");
}

static void
aggregate_row(buf *b, const struct axis *a, const cJSON *g, double y)
{
	const cJSON *x;
	double gm = json_num(g, "geometric_mean");

	buf_adds(b, "<g class=\"row\">\n<title>");
	xml_escape(b, json_str(g, "node_class"));
	buf_adds(b, " / ");
	xml_escape(b, json_str(g, "variant"));
	buf_addf(b, ": equal-weight geometric mean over %d workload(s), no interval",
	    cJSON_GetArraySize(json_get(g, "workloads")));
	cJSON_ArrayForEach(x, json_get(g, "left_out")) {
		buf_adds(b, "&#10;left out: ");
		xml_escape(b, json_str(x, "workload"));
		buf_adds(b, " (");
		xml_escape(b, json_str(x, "reason"));
		buf_adds(b, ")");
	}
	buf_adds(b, "</title>\n");
	buf_addf(b, "<rect x=\"0\" y=\"%.2f\" width=\"%d\" height=\"%d\" class=\"hit\"/>\n",
	    y - ROW_H / 2.0, WIDTH, ROW_H);
	buf_addf(b, "<text x=\"%d\" y=\"%.2f\" class=\"label agg\">all workloads</text>\n",
	    LEFT - 10, y + 4);
	if (!(gm > 0))
		unavailable(b, y);
	else {
		double cx = x_of(a, gm);

		buf_addf(b, "<path d=\"M%.2f %.2fl5.5 5.5l-5.5 5.5l-5.5 -5.5z\" class=\"agg-pt\"/>\n",
		    cx, y - 5.5);
	}
	buf_addf(b, "<text x=\"%d\" y=\"%.2f\" class=\"info\">aggregate of %d \xc2\xb7 %d left out</text>\n",
	    RIGHT_X, y + 4, cJSON_GetArraySize(json_get(g, "workloads")),
	    cJSON_GetArraySize(json_get(g, "left_out")));
	buf_adds(b, "</g>\n");
}

static const cJSON *
aggregate_of(const cJSON *rep, const char *nc, const char *variant)
{
	const cJSON *g;

	cJSON_ArrayForEach(g, json_get(rep, "aggregates"))
		if (strcmp(json_str(g, "node_class"), nc) == 0 &&
		    strcmp(json_str(g, "variant"), variant) == 0)
			return g;
	return NULL;
}

/*
 * The figure, written in document order. Over 100 lines on purpose: most
 * are the document's fixed text (title, metadata, style sheet, legend), one
 * template read top to bottom; the computed parts are in the helpers above.
 */
void
campaign_svg(buf *b, const cJSON *rep)
{
	const cJSON *st = json_get(rep, "settings"), *band = json_get(st, "equivalence_band");
	const cJSON *nc, *v, *c, *applies = json_get(rep, "applies_to");
	struct axis a = make_axis(rep);
	buf body = BUF_INIT, json = BUF_INIT;
	double y = TOP, y_top, height, bx0, bx1, x1;
	int groups = 0;

	/* The rows, grouped by node class and variant, workloads in plan order. */
	cJSON_ArrayForEach(nc, json_get(applies, "node_classes"))
		cJSON_ArrayForEach(v, json_get(applies, "variants")) {
			const cJSON *g;

			if (strcmp(json_str(v, "name"), json_str(applies, "baseline")) == 0)
				continue;
			if (groups++ > 0)
				buf_addf(&body, "<line x1=\"12\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" "
				    "class=\"sep\"/>\n", y - ROW_H / 2.0 + 4, WIDTH - 12,
				    y - ROW_H / 2.0 + 4);
			y += HEAD_H - ROW_H / 2.0;
			buf_addf(&body, "<text x=\"12\" y=\"%.2f\" class=\"group\">", y - 4);
			xml_escape(&body, nc->valuestring);
			buf_adds(&body, " \xc2\xb7 ");
			xml_escape(&body, json_str(v, "name"));
			buf_adds(&body, " vs ");
			xml_escape(&body, json_str(applies, "baseline"));
			buf_adds(&body, "</text>\n");
			y += ROW_H / 2.0 + 4;
			cJSON_ArrayForEach(c, json_get(rep, "cells"))
				if (strcmp(json_str(c, "node_class"), nc->valuestring) == 0 &&
				    strcmp(json_str(c, "variant"), json_str(v, "name")) == 0) {
					cell_row(&body, &a, c, y);
					y += ROW_H;
				}
			if ((g = aggregate_of(rep, nc->valuestring, json_str(v, "name"))) != NULL) {
				aggregate_row(&body, &a, g, y);
				y += ROW_H;
			}
		}
	y_top = TOP;
	height = y + 112;
	bx0 = x_of(&a, json_num(band, "low"));
	bx1 = x_of(&a, json_num(band, "high"));
	x1 = x_of(&a, 1);

	buf_addf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
	    "viewBox=\"0 0 %d %.0f\" role=\"img\" aria-labelledby=\"title\">\n", WIDTH, height,
	    WIDTH, height);
	buf_adds(b, "<title id=\"title\">");
	xml_escape(b, json_str(rep, "plan_id"));
	buf_adds(b, ": steady-time ratio of each variant against the baseline</title>\n");
	/* The whole report, inert: shared with the figure, never run. */
	json_write(&json, rep, JSON_COMPACT, NULL);
	buf_adds(b, "<metadata id=\"vq-benchmark-report\" data-schema=\"vq.benchmark-report/1\">");
	xml_escape(b, json.s);
	buf_adds(b, "</metadata>\n");
	buf_adds(b, "<style>\n"
	    "text{font-family:'DejaVu Sans','Helvetica Neue',Arial,sans-serif;fill:#222}\n"
	    ".h1{font-size:16px;font-weight:bold}.h2{font-size:12px;fill:#555}\n"
	    ".group{font-size:13px;font-weight:bold}.label{font-size:12px;text-anchor:end}\n"
	    ".agg{font-style:italic}.info{font-size:11px;fill:#444}.tick{font-size:11px;"
	    "text-anchor:middle;fill:#555}.na{font-size:11px;fill:#888;font-style:italic;"
	    "text-anchor:middle}.na-bg{fill:#fff;stroke:#ddd}.sep{stroke:#ccc;stroke-width:1}\n"
	    ".dir{font-size:11px;fill:#666}\n"
	    ".grid{stroke:#e2e2e2;stroke-width:1}.band{fill:#e8eef5}.one{stroke:#333;"
	    "stroke-width:1.2}\n.ci{stroke:#333;stroke-width:1.4}.pt{stroke-width:1.6}\n"
	    ".faster{fill:#1a7f37;stroke:#1a7f37}.slower{fill:#c0392b;stroke:#c0392b}"
	    ".equivalent{fill:#4a5a6a;stroke:#4a5a6a}.inconclusive{fill:#fff;stroke:#555}\n"
	    ".agg-pt{fill:#7a4fbf}.v-faster{fill:#1a7f37}.v-slower{fill:#c0392b}"
	    ".v-equivalent{fill:#4a5a6a}.v-inconclusive{fill:#555}.v-incomparable{fill:#888}\n"
	    ".hit{fill:transparent}.row:hover .hit{fill:#f6f8fa}.digest{font-size:10px;"
	    "fill:#666;font-family:'DejaVu Sans Mono',monospace}.axis{font-size:12px;"
	    "text-anchor:middle}\n</style>\n");
	buf_adds(b, "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n");
	buf_adds(b, "<text x=\"12\" y=\"26\" class=\"h1\">");
	xml_escape(b, json_str(rep, "plan_id"));
	buf_adds(b, ": T<tspan baseline-shift=\"sub\" font-size=\"10px\">baseline</tspan> / "
	    "T<tspan baseline-shift=\"sub\" font-size=\"10px\">variant</tspan> of steady time"
	    "</text>\n");
	buf_addf(b, "<text x=\"12\" y=\"46\" class=\"h2\">geometric mean of paired ratios with "
	    "its %g%% Student t interval; shaded: equivalence band %.4g to %.4g "
	    "(margin %g); above 1: the variant is faster</text>\n",
	    json_num(st, "confidence") * 100, json_num(band, "low"), json_num(band, "high"),
	    json_num(st, "margin"));
	/* The band and the reference line behind the rows. */
	buf_addf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" class=\"band\"/>\n",
	    bx0, y_top, bx1 - bx0, y - y_top);
	ticks(b, &a, y_top, y);
	buf_addf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" class=\"one\"/>\n",
	    x1, y_top, x1, y);
	buf_add(b, body.s, body.len);
	buf_addf(b, "<text x=\"%.2f\" y=\"%.2f\" class=\"axis\">ratio (log scale)</text>\n",
	    LEFT + PLOT_W / 2.0, y + 34);
	buf_addf(b, "<text x=\"%d\" y=\"%.2f\" class=\"dir\">\xe2\x86\x90 variant slower</text>\n",
	    LEFT, y + 34);
	buf_addf(b, "<text x=\"%d\" y=\"%.2f\" class=\"dir\" text-anchor=\"end\">variant faster "
	    "\xe2\x86\x92</text>\n", LEFT + PLOT_W, y + 34);
	/* Legend. */
	{
		double ly = y + 58, lx = 12;
		static const char *const names[] = { "faster", "equivalent", "slower",
		    "inconclusive" };

		for (size_t i = 0; i < 4; i++) {
			buf_addf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4.5\" class=\"pt %s\"/>"
			    "<text x=\"%.2f\" y=\"%.2f\" class=\"info\">%s</text>\n", lx + 5, ly - 4,
			    names[i], lx + 14, ly, names[i]);
			lx += 100;
		}
		buf_addf(b, "<path d=\"M%.2f %.2fl5.5 5.5l-5.5 5.5l-5.5 -5.5z\" class=\"agg-pt\"/>"
		    "<text x=\"%.2f\" y=\"%.2f\" class=\"info\">aggregate (no interval)</text>\n",
		    lx + 5, ly - 9.5, lx + 14, ly);
		lx += 160;
		buf_addf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"16\" height=\"10\" class=\"band\"/>"
		    "<text x=\"%.2f\" y=\"%.2f\" class=\"info\">equivalence band</text>\n",
		    lx, ly - 9, lx + 22, ly);
	}
	buf_addf(b, "<text x=\"12\" y=\"%.2f\" class=\"digest\">plan_sha256 %s</text>\n", y + 84,
	    json_str(rep, "plan_sha256"));
	buf_addf(b, "<text x=\"12\" y=\"%.2f\" class=\"digest\">results_sha256 %s</text>\n",
	    y + 100, json_str(rep, "results_sha256"));
	buf_adds(b, "</svg>\n");
	(void)groups;
	buf_free(&body);
	buf_free(&json);
}
