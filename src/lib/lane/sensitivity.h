/*
 * sensitivity: how sensitive the rolling gate is at a cohort's noise. The rule is
 * the reference's: a regression when the current value is past the median
 * of the baseline window by more than the percent floor AND the absolute
 * floor. From the run-to-run noise of the cohort, this gives the rule's
 * false-alarm rate (the chance that a run without any change fails) and
 * its minimum detectable regression (the smallest slowdown it catches with
 * a given power), and advice when the floors do not fit the noise.
 *
 * The model. Runs vary by a relative spread s (log-normal noise, which
 * normal noise of the same spread matches closely at the spreads where the
 * numbers matter). In log space the current value is one draw, variance
 * s^2, and the baseline is the median of nb draws, variance v(nb) s^2
 * (stats_median_var), so the log ratio current/baseline has variance
 * s^2 (1 + v). The percent floor is a log-ratio floor log(1 + tp); the
 * absolute floor ta at a median m is a ratio floor log(1 + ta/m), whose
 * baseline part is scaled by m/(m + ta). The two conditions move together,
 * so the chance that both hold is taken as the smaller of the two chances
 * (normal approximation). Higher-is-better metrics mirror it: 1 - tp and
 * 1 - ta/m. s is estimated from the successive differences of the
 * window (sens_noise_of()), unbiased at normal noise. The detectable
 * regression is linear in s and is computed at the estimate; a chance is not, and is the unbiased
 * estimate of the chance given the estimate's scatter (a chi whose degrees
 * of freedom fit the estimate's), a Student t tail (sensitivity.c, exceed()).
 */
#ifndef PERF_LANE_SENSITIVITY_H
#define PERF_LANE_SENSITIVITY_H

#include <stdbool.h>
#include <stddef.h>

/* Fewest values of a window from which noise is estimated, and a shift told. */
#define SENS_MIN_RUNS 5
#define SENS_SHIFT_RUNS 10

/* The false-alarm rate above which a floor is "noisy", and the one suggested. */
#define SENS_NOISY_RATE 0.05
#define SENS_TARGET_RATE 0.01

/* Why the noise is unknown (SENS_KNOWN: it is not). */
enum sens_why { SENS_FEW_RUNS, SENS_NOT_POSITIVE, SENS_NO_SPREAD, SENS_KNOWN };

struct sens_noise {
	size_t n;	/* values in the window */
	bool known;	/* n >= SENS_MIN_RUNS, a positive median, a spread */
	enum sens_why why;
	double median;
	double spread;	/* run to run: of the successive differences, / median */
	double level_spread;	/* of the values: 1.4826 MAD / median */
	bool shift;	/* level_spread over (2 + 10/n) spread: a step or trend */
};

/*
 * The noise of the window v[0..n), oldest first (v is not changed). The
 * spread is the scale of the successive differences d, median
 * |d - median(d)| / (0.6745 sqrt(2)), over the median of the values,
 * times a factor that makes it unbiased at normal noise: a level shift
 * moves one difference and a steady trend all of them alike, so neither
 * is taken for noise. The spread of the values themselves, 1.4826 MAD /
 * median, is level_spread; shift says it is wider than run-to-run noise
 * explains (over 1.5 + 10/n times the spread, from SENS_SHIFT_RUNS values
 * on: 1.5% of windows of 20 values without a change, and 96% of those
 * with a step of five times the noise), so a step or a trend lies inside
 * the window. Unknown (why) with
 * fewer than SENS_MIN_RUNS values, a median that is not positive, or no
 * run-to-run spread at all (values equal, or tied at the precision they
 * were recorded with): then spread and level_spread are 0.
 */
void sens_noise_of(const double *v, size_t n, struct sens_noise *out);

/* "few_runs", "median_not_positive", "no_spread"; NULL for SENS_KNOWN. */
const char *sens_noise_why(enum sens_why w);

/* The reference rule as one metric of one record applies it. */
struct sens_gate {
	double tp, ta;	/* percent floor (a fraction), absolute floor */
	bool higher;	/* higher is better */
	size_t nb;	/* values the baseline median had (at least 1) */
};

/* The chance that a run without any change exceeds both floors. */
double sens_false_alarm(const struct sens_noise *ns, const struct sens_gate *g);

/*
 * The smallest regression (a fraction of the baseline: 0.072 for 7.2%)
 * that exceeds both floors with probability power (0.5 <= power < 1).
 */
double sens_mde(const struct sens_noise *ns, const struct sens_gate *g, double power);

enum sens_advice { SENS_UNKNOWN, SENS_OK, SENS_NOISY, SENS_BLIND };

struct sens_report {
	enum sens_advice advice;
	double far, mde;	/* when the advice is not SENS_UNKNOWN */
	/* For SENS_NOISY and SENS_BLIND: floors with at most a
	 * SENS_TARGET_RATE false-alarm rate, as a config says them (two
	 * significant digits: the percent rounded up, an absolute floor that
	 * narrows rounded down), and the regression they detect. */
	double floor_percent, floor_absolute, floor_mde;
};

/*
 * Assesses a metric: SENS_UNKNOWN without known noise or a baseline
 * (never a floor suggested);
 * SENS_NOISY when the false-alarm rate is over SENS_NOISY_RATE; SENS_BLIND
 * when the minimum detectable regression is over twice the percent floor;
 * SENS_OK otherwise.
 */
void sens_assess(const struct sens_noise *ns, const struct sens_gate *g, double power,
    struct sens_report *out);

/* "unknown", "ok", "noisy", "blind". */
const char *sens_advice_name(enum sens_advice a);

/*
 * The noise-aware rules of perf-gate-rolling --rule (never the default).
 * SENS_RULE_PREDICTION: the current value is past the one-sided Student t
 * prediction bound of the window, mean + t(confidence, n-1) s sqrt(1 + 1/n)
 * with s the sample standard deviation (n - 1), in log space when every
 * value is positive (in linear space otherwise); higher-is-better metrics
 * mirror it (mean - ...). SENS_RULE_ZSCORE: the z of the current value
 * against the mean and sample standard deviation of the window (linear
 * space, as Conbench's lookback z-score) is over the threshold in the
 * regressing direction.
 */
enum sens_rule { SENS_RULE_REFERENCE, SENS_RULE_PREDICTION, SENS_RULE_ZSCORE };

/* "reference", "prediction", "zscore". */
const char *sens_rule_name(enum sens_rule r);

struct sens_verdict {
	bool exceeded;	/* past the bound in the regressing direction */
	double limit;	/* the bound, in the metric's unit */
	double z;	/* SENS_RULE_ZSCORE: the z, positive when worse */
	size_t n;	/* values of the window */
};

/*
 * Applies rule (SENS_RULE_PREDICTION or SENS_RULE_ZSCORE) to the current
 * value cur against the window v[0..n) (oldest first); param is the
 * confidence or the z threshold. False, without a verdict, when the rule
 * cannot judge: fewer than SENS_MIN_RUNS values, a window without spread,
 * or a value that is not finite.
 */
bool sens_rule_check(enum sens_rule rule, const double *v, size_t n, double cur,
    bool higher, double param, struct sens_verdict *out);

#endif
