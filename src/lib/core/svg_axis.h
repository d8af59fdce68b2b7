/*
 * svg_axis: the ticks of a figure's axis and their labels, written once for
 * every figure. A linear axis gets "nice" steps (1, 2 or 5 times a power of
 * ten) and a log axis every 1-2-5 value in range; a label carries as many
 * decimals as its step needs, so no two labels of one axis read the same.
 */
#ifndef PERF_CORE_SVG_AXIS_H
#define PERF_CORE_SVG_AXIS_H

#include <stddef.h>

#define SVGAXIS_MAX 64
#define SVGAXIS_LABEL 48

struct svgaxis {
	double lo, hi;		/* the domain; a linear one widened to whole steps */
	double step;		/* a linear axis' step; 0 for a log axis */
	int decimals;		/* a linear axis' label decimals */
	int n;			/* ticks, ascending */
	double v[SVGAXIS_MAX];
	char label[SVGAXIS_MAX][SVGAXIS_LABEL];
};

/*
 * About target ticks over [lo, hi] at a step of 1, 2 or 5 times a power of
 * ten; the domain is widened to whole steps. A domain of one value (or one
 * narrower than 1e-9 of its magnitude) is widened by 5% each side (by 1 at
 * zero); non-finite bounds give [0, 1]. Labels have the decimals the step
 * needs (step 0.005: three), never "-0".
 */
void svgaxis_linear(struct svgaxis *a, double lo, double hi, int target);

/*
 * The ticks of a log axis over [lo, hi] (0 < lo <= hi): every 1, 2 and 5
 * times a power of ten in range; when that gives fewer than min_ticks, also
 * 3 and 7, then every 1, 1.5, 2, 3 ... 9 times a power of ten. The domain is
 * kept as given. At most SVGAXIS_MAX ticks, the lowest first.
 */
void svgaxis_log(struct svgaxis *a, double lo, double hi, int min_ticks);

/*
 * The ticks of a ratio axis (log scale) whose domain is [10^log_lo,
 * 10^log_hi], drawn from x0 over width pixels: the ratios a reader knows
 * (0.1 0.2 0.25 0.5 0.67 0.8 0.9 0.95 0.98 1 1.02 1.05 1.1 1.25 1.5 2 3 4
 * 5 10 20 50 100) inside the domain, each at least gap pixels right of
 * the tick before it, except 1, which is always kept (the next is then
 * measured from it). Labels are the shortest decimal ("0.67", "1.25",
 * "100"), so they always differ. A tick's position is x0 + (log10(v) -
 * log_lo) / (log_hi - log_lo) * width, as a figure computes it.
 */
void svgaxis_ratio(struct svgaxis *a, double log_lo, double log_hi, double x0, double width,
    double gap);

/*
 * Widens the domain [*lo, *hi] (log10 values, for a log axis) each side by
 * frac of its span, and by at least min_pad: the room that keeps the
 * outermost marks off the frame.
 */
void svgaxis_pad(double *lo, double *hi, double frac, double min_pad);

/* v with decimals decimals ("%.*f" rounding), never "-0". */
void svgaxis_format(char s[SVGAXIS_LABEL], double v, int decimals);

/* The decimals a step of step needs so that its multiples read apart. */
int svgaxis_decimals(double step);

/* An estimate of a label's width, never less than its rendered width, in
 * a sans-serif font of font_px pixels. */
double svgaxis_text_width(const char *s, double font_px);

/*
 * The text-anchor that keeps a label of width w at x inside [left, right]:
 * "middle" when centred fits, else "start" or "end".
 */
const char *svgaxis_anchor(double x, double w, double left, double right);

#endif
