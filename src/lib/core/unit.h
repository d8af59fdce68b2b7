/*
 * unit: the units of named metrics (perfkite(7) "Named metrics"): a tool's
 * unit to perfkite's canonical one, the unit rule of a metric's direction,
 * and a value's display, scaled back ("12.3 ns", "1.2 GB/s").
 *
 * Canonical units: "s" (times, and time per operation), "B" (sizes, and
 * bytes per operation), "B/s", "items/s" and "1/s" (rates). Any other unit
 * is custom and kept as written ("allocs/op", "tokens", "%", "").
 */
#ifndef PERF_CORE_UNIT_H
#define PERF_CORE_UNIT_H

#include <stdbool.h>
#include <stddef.h>

/* Which way a metric improves. BETTER_UNKNOWN is never gated. */
enum better { BETTER_UNKNOWN, BETTER_LOWER, BETTER_HIGHER };

/* "lower", "higher" or "unknown". */
const char *better_name(enum better b);
/* "lower" or "higher" to *b; false for anything else. */
bool better_parse(const char *s, enum better *b);

/*
 * A tool's unit to the canonical unit: value_in_unit * *factor is the
 * value in *canonical (a static string, or unit itself when the unit is
 * custom, then *factor is 1). Recognised, case-sensitively:
 *   time:  ns, us, µs (U+00B5 or U+03BC), ms, s, sec, min, h, and each
 *          with "/op" (Go's ns/op, JMH's us/op: time per operation) -> "s"
 *   size:  B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB
 *          (powers of 1024), and each with "/op" -> "B"
 *   rates: each size per time ("MB/s", "GiB/ms") -> "B/s"; "items/T",
 *          "ops/T", "op/T" for a time T -> "items/s" or "1/s" (ops);
 *          "1/T", "Hz" -> "1/s"
 * Returns true when the unit was recognised (canonical or converted).
 */
bool unit_canonical(const char *unit, const char **canonical, double *factor);

/*
 * The unit rule of a direction, on a unit as written (canonical or not):
 * a time, a size, an allocation count ("allocs", "allocs/op",
 * "allocations") or an instruction count ("instructions", "instr",
 * "insns", "cycles", each also "/op") is lower-is-better; anything per
 * second ("X/s", "Hz", and per any time unit) and "ops/..." higher; any
 * other unit (a custom one, "", "%") BETTER_UNKNOWN. Never guesses lower.
 */
enum better unit_better(const char *unit);

/* Room for unit_format()'s text, the unit included (up to 64 bytes of it). */
#define UNIT_FMTSZ 128

/*
 * The display of a value v in unit (canonical): scaled to a prefix that
 * puts it in [1, 1000) where one exists, with one decimal: "12.3 ns",
 * "1.2 GB/s", "812.5/s", "3.4k/s", "3.4M items/s". Times go from ps to s
 * (then stay in s: "120.0 s"); sizes and rates use powers of 1000 (k, M,
 * G, T, P; sizes KB, MB...). A custom unit: the value with up to 6
 * significant digits and the unit after a space ("42 allocs/op"; "0.25"
 * for ""). Non-finite values: "n/a". Returns buf.
 */
char *unit_format(char buf[UNIT_FMTSZ], double v, const char *unit);

/*
 * unit_format() of an axis label, the ticks step apart (in unit): as many
 * decimals as the step needs in the label's prefix, one at least, so that
 * adjacent labels never read the same ("1.00 MB", "1.02 MB" where one
 * decimal shows "1.0 MB" twice). A step of 0 is unit_format().
 */
char *unit_format_step(char buf[UNIT_FMTSZ], double v, double step, const char *unit);

#endif
