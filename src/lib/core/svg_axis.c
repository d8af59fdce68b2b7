#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/num.h"
#include "core/svg_axis.h"

int
svgaxis_decimals(double step)
{
	if (!(step > 0) || step >= 1 || !isfinite(step))
		return 0;
	/* 0.005 needs three, 0.01 two: the tolerance absorbs log10's error. */
	return (int)ceil(-log10(step) - 1e-9);
}

void
svgaxis_format(char s[SVGAXIS_LABEL], double v, int decimals)
{
	char t[NUM_BUFSZ];
	const char *p;
	size_t n;

	if (decimals > 17)
		decimals = 17;
	num_fixed(t, v, decimals < 0 ? 0 : decimals);
	p = t;
	if (*p == '-' && strspn(p + 1, "0.") == strlen(p + 1))
		p++;	/* "-0.00" reads "0.00" */
	n = strlen(p);
	if (n >= SVGAXIS_LABEL)
		n = SVGAXIS_LABEL - 1;	/* past 1e46: no figure draws that */
	memcpy(s, p, n);
	s[n] = '\0';
}

/* A step of 1, 2 or 5 times a power of ten giving about n ticks over span. */
static double
nice_step(double span, int n)
{
	double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;

	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

void
svgaxis_linear(struct svgaxis *a, double lo, double hi, int target)
{
	double span, k0, k1;

	memset(a, 0, sizeof *a);
	if (!isfinite(lo) || !isfinite(hi)) {
		lo = 0;
		hi = 1;
	}
	if (lo > hi) {
		double t = lo;
		lo = hi;
		hi = t;
	}
	if (hi - lo <= 1e-9 * fmax(fabs(lo), fabs(hi))) {
		double pad = fabs(hi) > 0 ? fabs(hi) * 0.05 : 1;
		lo -= pad;
		hi += pad;
	}
	if (target < 1)
		target = 1;
	span = hi - lo;
	a->step = nice_step(span, target);
	for (;;) {
		/* A bound within a millionth of a step of a multiple is on it. */
		k0 = floor(lo / a->step + 1e-9);
		if (k0 * a->step - lo > a->step * 1e-6)
			k0--;
		k1 = ceil(hi / a->step - 1e-9);
		if (hi - k1 * a->step > a->step * 1e-6)
			k1++;
		if (k1 - k0 + 1 <= SVGAXIS_MAX)
			break;
		a->step *= 2;
	}
	a->decimals = svgaxis_decimals(a->step);
	a->lo = k0 * a->step;
	a->hi = k1 * a->step;
	for (double k = k0; k <= k1; k++) {
		a->v[a->n] = k * a->step;
		svgaxis_format(a->label[a->n], a->v[a->n], a->decimals);
		a->n++;
	}
}

/* m times ten to the e, exactly as near as division allows. */
static double
scaled(double m, int e)
{
	return e < 0 ? m / pow(10, -e) : m * pow(10, e);
}

void
svgaxis_log(struct svgaxis *a, double lo, double hi, int min_ticks)
{
	static const double set0[] = { 1, 2, 5 }, set1[] = { 1, 2, 3, 5, 7 },
	    set2[] = { 1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9 };
	static const struct { const double *m; int n; } sets[] = {
		{ set0, 3 }, { set1, 5 }, { set2, 10 },
	};

	memset(a, 0, sizeof *a);
	if (!(lo > 0) || !isfinite(lo) || !isfinite(hi) || hi < lo)
		return;
	a->lo = lo;
	a->hi = hi;
	for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
		int e0 = (int)floor(log10(lo)) - 1, e1 = (int)ceil(log10(hi)) + 1;

		a->n = 0;
		for (int e = e0; e <= e1 && a->n < SVGAXIS_MAX; e++)
			for (int k = 0; k < sets[s].n && a->n < SVGAXIS_MAX; k++) {
				double m = sets[s].m[k], v = scaled(m, e);
				int d = (m != floor(m)) - e;

				if (v < lo * (1 - 1e-9) || v > hi * (1 + 1e-9))
					continue;
				a->v[a->n] = v;
				svgaxis_format(a->label[a->n], v, d < 0 ? 0 : d);
				a->n++;
			}
		if (a->n >= min_ticks)
			break;
	}
}

void
svgaxis_ratio(struct svgaxis *a, double log_lo, double log_hi, double x0, double width,
    double gap)
{
	static const double nice[] = { 0.1, 0.2, 0.25, 0.5, 0.67, 0.8, 0.9, 0.95, 0.98, 1,
	    1.02, 1.05, 1.1, 1.25, 1.5, 2, 3, 4, 5, 10, 20, 50, 100 };
	double last = -1e9;

	memset(a, 0, sizeof *a);
	a->lo = pow(10, log_lo);
	a->hi = pow(10, log_hi);
	for (size_t i = 0; i < sizeof nice / sizeof *nice; i++) {
		double v = nice[i], x;

		if (log10(v) < log_lo || log10(v) > log_hi)
			continue;
		x = x0 + (log10(v) - log_lo) / (log_hi - log_lo) * width;
		if (x - last < gap && v != 1)
			continue;
		last = x;
		a->v[a->n] = v;
		snprintf(a->label[a->n], SVGAXIS_LABEL, "%g", v);
		a->n++;
	}
}

void
svgaxis_pad(double *lo, double *hi, double frac, double min_pad)
{
	double pad = (*hi - *lo) * frac;

	if (pad < min_pad)
		pad = min_pad;
	*lo -= pad;
	*hi += pad;
}

double
svgaxis_text_width(const char *s, double font_px)
{
	double w = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c & 0xc0) == 0x80)
			continue;	/* a UTF-8 continuation byte */
		if (strchr(".,:;'|!il -", c) != NULL)
			w += 0.4;
		else if (c >= 'A' && c <= 'Z')
			w += 0.78;
		else if (c == 'm' || c == 'w' || c == '%' || c >= 0x80)
			w += 1.0;
		else
			w += 0.65;	/* digits and most letters of DejaVu Sans */
	}
	return w * font_px;
}

const char *
svgaxis_anchor(double x, double w, double left, double right)
{
	if (x + w / 2 > right)
		return "end";
	if (x - w / 2 < left)
		return "start";
	return "middle";
}
