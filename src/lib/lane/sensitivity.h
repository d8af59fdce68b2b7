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
 * 1 - ta/m. s is estimated as 1.4826 MAD / median of the window, times
 * the small-sample factor of Croux and Rousseeuw (1992) that makes it
 * unbiased at normal noise. The detectable regression is linear in s and
 * is computed at the estimate; a chance is not, and is the unbiased
 * estimate of the chance given the estimate's scatter (a chi whose degrees
 * of freedom fit the MAD's), a Student t tail (sens.c, exceed()).
 */
#ifndef PERF_LANE_SENSITIVITY_H
#define PERF_LANE_SENSITIVITY_H

#include <stdbool.h>
#include <stddef.h>

/* Fewest values of a window from which noise is estimated. */
#define SENS_MIN_RUNS 5

/* The false-alarm rate above which a floor is "noisy", and the one suggested. */
#define SENS_NOISY_RATE 0.05
#define SENS_TARGET_RATE 0.01

struct sens_noise {
	size_t n;	/* values in the window */
	bool known;	/* n >= SENS_MIN_RUNS and a positive median */
	double median;
	double spread;	/* 1.4826 MAD / median, as reported */
};

/* The noise of the window v[0..n) (any order; v is not changed). */
void sens_noise_of(const double *v, size_t n, struct sens_noise *out);

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
	/* For SENS_NOISY and SENS_BLIND: floors with a SENS_TARGET_RATE
	 * false-alarm rate, and the regression they detect. */
	double floor_percent, floor_absolute, floor_mde;
};

/*
 * Assesses a metric: SENS_UNKNOWN without known noise or a baseline;
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
