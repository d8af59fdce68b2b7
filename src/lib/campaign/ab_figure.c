#include <math.h>
#include <stdio.h>
#include <string.h>

#include "campaign/ab.h"
#include "campaign/ab_figure.h"
#include "core/json.h"
#include "core/xml.h"

#define WIDTH 900
#define LABEL_W 230
#define PANEL_W 300
#define GAP 30
#define ROW_H 70
#define TOP 50

static void
widen(double *l, double *h, double v)
{
	if (isfinite(v) && v > 0) {
		if (log10(v) < *l)
			*l = log10(v);
		if (log10(v) > *h)
			*h = log10(v);
	}
}

/* The log10 domain of every plotted value, the band and 1, padded. */
static void
domain(const cJSON *rep, double *lo, double *hi)
{
	const cJSON *e, *x;
	double l = 0, h = 0;

	cJSON_ArrayForEach(e, json_get(rep, "results")) {
		if (!cJSON_IsArray(json_get(e, "ratios")))
			continue;
		widen(&l, &h, 1 + json_num(e, "band"));
		widen(&l, &h, 1 / (1 + json_num(e, "band")));
		widen(&l, &h, json_num(json_get(e, "interval"), "low"));
		widen(&l, &h, json_num(json_get(e, "interval"), "high"));
		cJSON_ArrayForEach(x, json_get(e, "ratios"))
			widen(&l, &h, x->valuedouble);
	}
	if (h - l < 0.004) {
		l -= 0.002;
		h += 0.002;
	}
	*lo = l - (h - l) * 0.08;
	*hi = h + (h - l) * 0.08;
}

void
ab_svg(buf *b, const cJSON *rep)
{
	const cJSON *e, *x;
	double lo, hi;
	int rows = 0, row = 0, height;
	int x1 = LABEL_W, x2 = LABEL_W + PANEL_W + GAP;

	cJSON_ArrayForEach(e, json_get(rep, "results"))
		rows += cJSON_IsArray(json_get(e, "ratios"));
	height = TOP + rows * ROW_H + 40;
	domain(rep, &lo, &hi);
	buf_addf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	    "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
	    WIDTH, height, WIDTH, height);
	buf_addf(b, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, height);
	buf_addf(b, "<text x=\"10\" y=\"20\" font-size=\"15\">perf-ab: head / base, %d "
	    "pairs</text>\n", (int)json_num(rep, "pairs"));
	buf_addf(b, "<text x=\"%d\" y=\"%d\">ratio per pair, in run order</text>\n", x1, TOP - 8);
	buf_addf(b, "<text x=\"%d\" y=\"%d\">geometric mean, interval, band</text>\n", x2,
	    TOP - 8);
	cJSON_ArrayForEach(e, json_get(rep, "results")) {
		const cJSON *iv = json_get(e, "interval");
		double y0 = TOP + row * ROW_H, mid = y0 + ROW_H / 2.0, band = json_num(e, "band");
		int n = cJSON_GetArraySize(json_get(e, "ratios")), i = 0;
		const char *v = json_str(e, "verdict");
		const char *color = strcmp(v, "slower") == 0 ? "#c62828" :
		    strcmp(v, "slower_within_band") == 0 ? "#ef6c00" :
		    strcmp(v, "faster") == 0 ? "#2e7d32" :
		    strcmp(v, "faster_within_band") == 0 ? "#66bb6a" :
		    strcmp(v, "equivalent") == 0 ? "#1565c0" : "#616161";

		if (!cJSON_IsArray(json_get(e, "ratios")))
			continue;
#define YOF(r) (y0 + ROW_H - 8 - (log10(r) - lo) / (hi - lo) * (ROW_H - 16))
#define XOF(r) (x2 + (log10(r) - lo) / (hi - lo) * PANEL_W)
		buf_adds(b, "<text x=\"10\" y=\"");
		buf_addf(b, "%.1f\">", mid);
		xml_escape(b, json_str(e, "benchmark_id"));
		buf_adds(b, " ");
		xml_escape(b, json_str(e, "metric"));
		buf_addf(b, "</text>\n<text x=\"10\" y=\"%.1f\" fill=\"%s\">%s</text>\n",
		    mid + 15, color, ab_verdict_label(v));
		/* Left: the pairs over time, the band and 1. */
		buf_addf(b, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#e3f2fd\"/>\n",
		    x1, YOF(1 + band), PANEL_W, YOF(1 / (1 + band)) - YOF(1 + band));
		buf_addf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#9e9e9e\"/>\n",
		    x1, YOF(1), x1 + PANEL_W, YOF(1));
		cJSON_ArrayForEach(x, json_get(e, "ratios")) {
			double px = x1 + (n > 1 ? (double)i / (n - 1) : 0.5) * PANEL_W;

			buf_addf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n", px,
			    YOF(x->valuedouble), color);
			i++;
		}
		/* Right: the interval against the band. */
		buf_addf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#e3f2fd\"/>\n",
		    XOF(1 / (1 + band)), y0 + 8, XOF(1 + band) - XOF(1 / (1 + band)), ROW_H - 16);
		buf_addf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#9e9e9e\"/>\n",
		    XOF(1), y0 + 8, XOF(1), y0 + ROW_H - 8);
		if (cJSON_IsObject(iv))
			buf_addf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			    "stroke=\"%s\" stroke-width=\"3\"/>\n", XOF(json_num(iv, "low")), mid,
			    XOF(json_num(iv, "high")), mid, color);
		if (isfinite(json_num(e, "ratio")) && json_num(e, "ratio") > 0)
			buf_addf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n",
			    XOF(json_num(e, "ratio")), mid, color);
		buf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%.3f</text>\n",
		    XOF(json_num(e, "ratio")) - 12, mid - 8, json_num(e, "ratio"));
#undef YOF
#undef XOF
		row++;
	}
	buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"10\">axis: %.3f to %.3f (log); "
	    "shaded: the equivalence band; grey line: 1</text>\n", x1, height - 12,
	    pow(10, lo), pow(10, hi));
	buf_adds(b, "</svg>\n");
}
