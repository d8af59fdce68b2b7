/*
 * num: numbers as the reference (Python) reads, rounds and prints them, and
 * the strict parser every program uses for numeric options.
 *
 * Nothing here depends on the locale: perfkite never calls setlocale(), so
 * the C library works in the "C" locale.
 */
#ifndef PERF_CORE_NUM_H
#define PERF_CORE_NUM_H

#include <stdbool.h>
#include <stddef.h>

/* Room for any output of num_repr() and num_fixed() with precision <= 17. */
#define NUM_BUFSZ 400

/*
 * Python's float(str): surrounding whitespace, a sign, digits with single
 * underscores between them, ".5", "5.", exponents, and "nan", "inf",
 * "infinity" in any case. Returns false when s is not such a number.
 */
bool num_py_float(const char *s, double *out);

/*
 * Python's int(str) in base 10 (whitespace, sign, underscores between
 * digits, leading zeros). Returns 0 when s is not an integer, 1 when *out
 * holds it, 2 when it overflowed (then *out is LLONG_MAX or LLONG_MIN).
 */
int num_py_int(const char *s, long long *out);

/* Python's round(x, nd) for a float: half to even on the exact value. */
double num_round(double x, int nd);

/*
 * Python's format(x, ".<prec>f"): "nan" (never "-nan"), "inf", "-inf",
 * otherwise the correctly rounded fixed-point text.
 */
char *num_fixed(char buf[NUM_BUFSZ], double x, int prec);

/*
 * Python's repr(float): shortest round-trip digits, exponent form when the
 * decimal exponent is below -4 or at least 16 ("1e-05", "1e+16"), at least
 * one fractional digit otherwise ("10.0"); "nan", "inf", "-inf".
 */
char *num_repr(char buf[NUM_BUFSZ], double x);
/*
 * x as printf's %a writes it (exact: strtod() reads back the same double)
 * at o, which has room for 32 bytes; returns the end, unterminated.
 * Normal numbers without printf (perf-changes' state holds hundreds a
 * series).
 */
char *num_hex(char *o, double x);

/*
 * The value of a JSON number literal s[0..n) (already checked against the
 * JSON grammar), correctly rounded as strtod() does, without strtod() for
 * the short numbers that make up most records.
 */
double num_parse_json(const char *s, size_t n);

/*
 * For qsort() of doubles and of size_t values, ascending (NaN sorts with
 * everything as equal: callers sort finite values).
 */
int num_cmp_double(const void *a, const void *b);
int num_cmp_size(const void *a, const void *b);

/*
 * Strict parsing of option values: the whole string must be a number in
 * [min, max] (finite for doubles). Return false otherwise.
 */
bool num_opt_long(const char *s, long min, long max, long *out);
bool num_opt_double(const char *s, double min, double max, double *out);

#endif
