/*
 * Unit tests for named metrics: units (core/unit), record parsing, globs,
 * direction and policy resolution, static bounds (lane/named_metric).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/unit.h"
#include "lane/named_metric.h"
#include "tap.h"

static cJSON *
parse(const char *s)
{
	json_error e;

	return json_parse(s, strlen(s), &e);
}

static void
test_canonical(void)
{
	static const struct {
		const char *unit, *canonical;
		double factor;
	} v[] = {
		{ "ns", "s", 1e-9 }, { "us", "s", 1e-6 }, { "\xc2\xb5s", "s", 1e-6 },
		{ "\xce\xbcs", "s", 1e-6 }, { "ms", "s", 1e-3 }, { "s", "s", 1 },
		{ "min", "s", 60 }, { "ns/op", "s", 1e-9 }, { "us/op", "s", 1e-6 },
		{ "B", "B", 1 }, { "KB", "B", 1e3 }, { "MB", "B", 1e6 }, { "GiB", "B", 1073741824.0 },
		{ "B/op", "B", 1 }, { "MB/s", "B/s", 1e6 }, { "GB/s", "B/s", 1e9 },
		{ "KiB/ms", "B/s", 1024e3 }, { "items/s", "items/s", 1 },
		{ "items/ms", "items/s", 1e3 }, { "ops/s", "1/s", 1 }, { "ops/ms", "1/s", 1e3 },
		{ "ops/us", "1/s", 1e6 }, { "op/s", "1/s", 1 }, { "1/s", "1/s", 1 },
		{ "Hz", "1/s", 1 },
	};
	const char *c;
	double f;

	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		bool r = unit_canonical(v[i].unit, &c, &f);

		ok(r && strcmp(c, v[i].canonical) == 0 && fabs(f / v[i].factor - 1) < 1e-12,
		    "unit_canonical %s -> %s x %g (got %s x %g)", v[i].unit, v[i].canonical,
		    v[i].factor, c, f);
	}
	ok(!unit_canonical("allocs/op", &c, &f) && strcmp(c, "allocs/op") == 0 && f == 1,
	    "a custom unit is kept as written, factor 1");
	ok(!unit_canonical("", &c, &f) && strcmp(c, "") == 0, "an empty unit is custom");
	ok(!unit_canonical("NS", &c, &f), "units are case-sensitive");
	ok(!unit_canonical("tokens/op", &c, &f), "tokens/op is custom");
}

static void
test_unit_better(void)
{
	static const char *const lower[] = { "s", "ns", "ms", "ns/op", "B", "MB", "B/op",
	    "allocs", "allocs/op", "allocations", "instructions", "instr/op", "cycles" };
	static const char *const higher[] = { "B/s", "MB/s", "items/s", "1/s", "Hz",
	    "ops/s", "ops/ms", "ops/call", "tokens/s", "frames/ms", "req/min" };
	static const char *const unknown[] = { "", "%", "tokens", "pages", "x", "allocsx",
	    "score", "ratio/op", "s/s2" };

	for (size_t i = 0; i < sizeof lower / sizeof *lower; i++)
		ok(unit_better(lower[i]) == BETTER_LOWER, "unit rule: %s is lower", lower[i]);
	for (size_t i = 0; i < sizeof higher / sizeof *higher; i++)
		ok(unit_better(higher[i]) == BETTER_HIGHER, "unit rule: %s is higher", higher[i]);
	for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++)
		ok(unit_better(unknown[i]) == BETTER_UNKNOWN, "unit rule: '%s' is unknown, "
		    "never lower", unknown[i]);
}

static void
test_format(void)
{
	static const struct {
		double v;
		const char *unit, *want;
	} v[] = {
		{ 12.3e-9, "s", "12.3 ns" }, { 1.5e-6, "s", "1.5 us" }, { 2.5e-3, "s", "2.5 ms" },
		{ 28.5, "s", "28.5 s" }, { 120, "s", "120.0 s" }, { 0, "s", "0.0 s" },
		{ 0.9999999, "s", "1.0 s" }, { 999.96e-9, "s", "1.0 us" }, { 3e-13, "s", "0.3 ps" },
		{ 1.2e9, "B/s", "1.2 GB/s" }, { 512, "B", "512.0 B" }, { 1536, "B", "1.5 KB" },
		{ 10840e6, "B", "10.8 GB" }, { 812.5, "1/s", "812.5/s" }, { 3400, "1/s", "3.4k/s" },
		{ 3.4e6, "items/s", "3.4M items/s" }, { -2e-9, "s", "-2.0 ns" },
		{ 42, "allocs/op", "42 allocs/op" }, { 0.25, "", "0.25" },
		{ 1234567, "tokens", "1.23457e+06 tokens" }, { NAN, "s", "n/a" },
	};
	char b[UNIT_FMTSZ];

	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		is_str(unit_format(b, v[i].v, v[i].unit), v[i].want, "unit_format %g %s",
		    v[i].v, v[i].unit);
}

/* Axis labels: the decimals the step needs, so that adjacent ticks differ. */
static void
test_format_step(void)
{
	static const struct {
		double v, step;
		const char *unit, *want;
	} v[] = {
		{ 1.02e6, 2e4, "B", "1.02 MB" }, { 1e6, 2e4, "B", "1.00 MB" },
		{ 1.04e6, 5e3, "B", "1.040 MB" }, { 2.001e-3, 1e-6, "s", "2.001 ms" },
		{ 1.5e9, 5e8, "B/s", "1.5 GB/s" }, { 3410, 10, "1/s", "3.41k/s" },
		{ 3.42e6, 1e4, "items/s", "3.42M items/s" }, { 12.3e-9, 0, "s", "12.3 ns" },
		{ 1000002, 1, "tokens", "1000002 tokens" }, { 42, 5, "allocs/op", "42 allocs/op" },
	};
	char b[UNIT_FMTSZ], prev[UNIT_FMTSZ];

	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		is_str(unit_format_step(b, v[i].v, v[i].step, v[i].unit), v[i].want,
		    "unit_format_step %g %g %s", v[i].v, v[i].step, v[i].unit);
	/* ticks 1.00 MB to 1.10 MB every 10 kB: each label its own */
	prev[0] = '\0';
	for (int k = 0; k <= 10; k++) {
		unit_format_step(b, 1e6 + k * 1e4, 1e4, "B");
		ok(strcmp(b, prev) != 0, "tick %d: %s after %s", k, b, prev);
		strcpy(prev, b);
	}
}

/* nm_parse on text: the error, or "" and the metrics in *m. */
static const char *
parse_metrics(const char *text, cJSON **tree, struct named_metric **m, size_t *n)
{
	static char err[256];

	*tree = parse(text);
	err[0] = '\0';
	*m = nm_parse(*tree, n, err, sizeof err);
	return err;
}

static void
test_parse(void)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "[]", "metrics must be an object" },
		{ "{\"a\":1}", "metrics.'a' must be an object" },
		{ "{\"a\":{}}", "metrics.'a' has no value" },
		{ "{\"a\":{\"value\":\"1\"}}", "metrics.'a'.value must be a finite number or null" },
		{ "{\"a\":{\"value\":NaN}}", "metrics.'a'.value must be a finite number or null" },
		{ "{\"a\":{\"value\":true}}", "metrics.'a'.value must be a finite number or null" },
		{ "{\"a\":{\"value\":1,\"unit\":3}}", "metrics.'a'.unit must be a string" },
		{ "{\"a\":{\"value\":1,\"better\":\"smaller\"}}",
		  "metrics.'a'.better must be \"lower\" or \"higher\"" },
		{ "{\"a\":{\"value\":1,\"samples\":[1,\"x\"]}}",
		  "metrics.'a'.samples must be an array of finite numbers" },
		{ "{\"a\":{\"value\":1,\"samples\":[Infinity]}}",
		  "metrics.'a'.samples must be an array of finite numbers" },
		{ "{\"\":{\"value\":1}}", "metrics.'' name is empty" },
		{ "{\"a\\u0001b\":{\"value\":1}}", "metrics.'a\\x01b' name holds a control character" },
		{ "{\"a\\u0085b\":{\"value\":1}}", "metrics.'a\\x85b' name holds a control character" },
		{ "{\"a\\u007fb\":{\"value\":1}}", "metrics.'a\\x7fb' name holds a control character" },
	};
	struct named_metric *m;
	cJSON *t;
	size_t n;
	const char *e;
	char name[200];

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		e = parse_metrics(bad[i].text, &t, &m, &n);
		ok(m == NULL, "nm_parse rejects %s", bad[i].text);
		is_str(e, bad[i].err, "its message");
		cJSON_Delete(t);
	}
	e = parse_metrics("{\"BM_Sort/1024/time\":{\"value\":2.5e-05,\"unit\":\"s\","
	    "\"better\":\"lower\",\"samples\":[2.4e-05,2.6e-05],\"note\":\"x\"},"
	    "\"caf\\u00e9 \\u2603\":{\"value\":null,\"better\":\"higher\"},"
	    "\"n\":{\"value\":7}}", &t, &m, &n);
	ok(m != NULL && n == 3, "nm_parse reads three metrics (%s)", e);
	if (m != NULL && n == 3) {
		is_str(m[0].name, "BM_Sort/1024/time", "first name, in record order");
		ok(m[0].has_value && m[0].value == 2.5e-05, "its value");
		is_str(m[0].unit, "s", "its unit");
		ok(m[0].better == BETTER_LOWER, "its stated direction");
		ok(cJSON_GetArraySize(m[0].samples) == 2, "its samples");
		ok(!m[1].has_value && m[1].better == BETTER_HIGHER, "a null value: failed, kept");
		is_str(m[1].name, "caf\xc3\xa9 \xe2\x98\x83", "non-ASCII names are fine");
		ok(m[2].has_value && strcmp(m[2].unit, "") == 0 && m[2].better == BETTER_UNKNOWN &&
		    m[2].samples == NULL, "unit, better and samples are optional");
	}
	free(m);
	cJSON_Delete(t);
	m = nm_parse(NULL, &n, name, sizeof name);
	ok(m != NULL && n == 0, "no metrics key: no metrics");
	free(m);
	memset(name, 'x', 128);
	name[128] = '\0';
	ok(nm_name_valid(name, &e), "a name of 128 bytes is valid");
	name[128] = 'x';
	name[129] = '\0';
	ok(!nm_name_valid(name, &e) && strcmp(e, "is longer than 128 bytes") == 0,
	    "a name of 129 bytes is not");
}

static void
test_glob(void)
{
	static const struct {
		const char *glob, *key;
		bool match;
	} v[] = {
		{ "BM_Sort/*", "BM_Sort/1024/time", true }, { "BM_Sort/*", "BM_Sort/", true },
		{ "BM_Sort/*", "BM_Sor/1", false }, { "*/cpu_time", "BM_Sort/8/cpu_time", true },
		{ "*/cpu_time", "BM_Sort/8/cpu_time_x", false }, { "*", "", true },
		{ "*", "anything/at/all", true }, { "a?c", "abc", true }, { "a?c", "ac", false },
		{ "a?c", "a\xc3\xa9" "c", true }, { "a*b*c", "axxbyyc", true },
		{ "a*b*c", "axxbyy", false }, { "a\\*", "a*", true }, { "a\\*", "ab", false },
		{ "a\\?", "a?", true }, { "exact", "exact", true }, { "exact", "exactly", false },
		{ "**x", "yx", true }, { "*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaa", false },
	};

	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		ok(nm_glob_match(v[i].glob, v[i].key) == v[i].match, "glob '%s' %s '%s'",
		    v[i].glob, v[i].match ? "matches" : "does not match", v[i].key);
	ok(nm_glob_literals("BM_Sort/*") == 8 && nm_glob_literals("*/cpu_time") == 9 &&
	    nm_glob_literals("a\\*?") == 2, "literal counts");
}

/* The policy of metric m of benchmark b under block text (or NULL). */
static struct nm_policy
policy(const char *block, const char *b, const char *name, const char *unit, enum better bt)
{
	struct named_metric m = { name, true, 1, unit, bt, NULL };
	struct nm_policy p;
	cJSON *blk = block ? parse(block) : NULL;
	char err[200];

	if (nm_policy_check(blk, err, sizeof err) != 0)
		printf("# check failed: %s\n", err);
	nm_policy_resolve(blk, b, &m, &p);
	cJSON_Delete(blk);
	return p;
}

static void
test_policy(void)
{
	const char *blk = "{\"BM_Sort/*\":{\"threshold_percent\":0.1,\"better\":\"higher\"},"
	    "\"*/cpu_time\":{\"gated\":false},"
	    "\"BM_Sort/8/*\":{\"threshold_absolute\":1e-06},"
	    "\"BM_Sort/*/time\":{\"threshold_absolute\":2e-06},"
	    "\"*/rss\":{\"better\":\"lower\"}}";
	struct nm_policy p;

	p = policy(NULL, "b", "time", "s", BETTER_UNKNOWN);
	ok(p.threshold_percent == 0.05 && p.threshold_absolute == 0 && p.gated &&
	    p.better == BETTER_LOWER && p.source == NM_FROM_UNIT, "defaults: 5%%, 0, gated, "
	    "unit rule");
	p = policy(NULL, "b", "tokens", "1/s", BETTER_LOWER);
	ok(p.better == BETTER_LOWER && p.source == NM_FROM_RECORD,
	    "the record's direction wins over the unit rule");
	p = policy(blk, "BM_Sort/8", "time", "s", BETTER_LOWER);
	ok(p.better == BETTER_LOWER && p.source == NM_FROM_RECORD,
	    "the record's direction wins over the config");
	p = policy(blk, "BM_Sort/8", "time", "s", BETTER_UNKNOWN);
	ok(p.better == BETTER_HIGHER && p.source == NM_FROM_CONFIG,
	    "the config's direction wins over the unit rule");
	ok(p.threshold_percent == 0.1, "threshold_percent from BM_Sort/*");
	ok(p.threshold_absolute == 2e-06, "threshold_absolute: BM_Sort/*/time (13 literals) "
	    "over BM_Sort/8/* (10) (got %g)", p.threshold_absolute);
	p = policy(blk, "BM_Sort/8", "cpu_time", "s", BETTER_UNKNOWN);
	ok(!p.gated && p.threshold_percent == 0.1 && !p.needs_direction,
	    "fields merge from several globs: gated from */cpu_time, percent from BM_Sort/*");
	p = policy(blk, "BM_Other", "rss", "pages", BETTER_UNKNOWN);
	ok(p.gated && p.better == BETTER_LOWER && p.source == NM_FROM_CONFIG,
	    "the config gives a direction to a custom unit");
	p = policy(blk, "BM_Other", "pages", "pages", BETTER_UNKNOWN);
	ok(!p.gated && p.better == BETTER_UNKNOWN && p.source == NM_FROM_NONE &&
	    p.needs_direction, "unknown direction: not gated, warned, never lower");
	p = policy("{\"*\":{\"gated\":true}}", "b", "pages", "pages", BETTER_UNKNOWN);
	ok(!p.gated && p.needs_direction, "gated: true cannot gate an unknown direction");
	p = policy("{\"*\":{\"gated\":false}}", "b", "pages", "pages", BETTER_UNKNOWN);
	ok(!p.gated && !p.needs_direction, "gated: false silences the warning");
	p = policy("{\"a/x\":{\"threshold_percent\":0.2},\"a/*\":{\"threshold_percent\":0.3},"
	    "\"a/?\":{\"threshold_percent\":0.4}}", "a", "x", "s", BETTER_UNKNOWN);
	ok(p.threshold_percent == 0.2, "an exact key is the most specific");
	p = policy("{\"a/?\":{\"threshold_percent\":0.4},\"?/x\":{\"threshold_percent\":0.5}}",
	    "a", "x", "s", BETTER_UNKNOWN);
	ok(p.threshold_percent == 0.4, "of equally specific globs, the first wins");
}

static void
test_policy_check(void)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "[]", "must be an object" },
		{ "{\"a\":1}", "'a' must be an object" },
		{ "{\"a\":{\"threshold_percent\":\"5%\"}}", "'a'.threshold_percent must be a "
		  "finite number" },
		{ "{\"a\":{\"threshold_absolute\":NaN}}", "'a'.threshold_absolute must be a "
		  "finite number" },
		{ "{\"a\":{\"gated\":\"yes\"}}", "'a'.gated must be true or false" },
		{ "{\"a\":{\"better\":\"smaller\"}}", "'a'.better must be \"lower\" or \"higher\"" },
		{ "{\"a\":{\"treshold_percent\":1}}", "'a'.treshold_percent is not a policy field "
		  "(threshold_percent, threshold_absolute, gated, better)" },
	};
	char err[256];
	cJSON *t;

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		t = parse(bad[i].text);
		err[0] = '\0';
		ok(nm_policy_check(t, err, sizeof err) == -1, "policy check rejects %s",
		    bad[i].text);
		is_str(err, bad[i].err, "its message");
		cJSON_Delete(t);
	}
	t = parse("{\"BM_*\":{\"threshold_percent\":0.1,\"threshold_absolute\":0,"
	    "\"gated\":false,\"better\":\"higher\"}}");
	ok(nm_policy_check(t, err, sizeof err) == 0, "a full policy is valid");
	cJSON_Delete(t);
	ok(nm_policy_check(NULL, err, sizeof err) == 0, "no block is valid");
}

static void
test_warning_and_bounds(void)
{
	char *w = nm_unknown_warning("BM_X/rss", "pages");
	cJSON *b = parse("{\"BM_Sort/*\":1.0,\"BM_Sort/1024/time\":2e-05,\"x/*\":\"a\"}");
	double v = 0;
	bool bad;

	is_str(w, "metric \"BM_X/rss\" (unit \"pages\") has no known direction: recorded, "
	    "not gated; set regression_thresholds.metrics.\"BM_X/rss\".better to \"lower\" "
	    "or \"higher\"", "the warning names the metric and the key that fixes it");
	free(w);
	ok(nm_static_bound(b, "BM_Sort/1024/time", &v, &bad) && !bad && v == 2e-05,
	    "static bound: the exact key");
	ok(nm_static_bound(b, "BM_Sort/8/time", &v, &bad) && !bad && v == 1.0,
	    "static bound: a glob");
	ok(!nm_static_bound(b, "BM_Other/time", &v, &bad), "static bound: none");
	ok(nm_static_bound(b, "x/y", &v, &bad) && bad, "static bound: not a number");
	cJSON_Delete(b);
	w = nm_key("BM_Sort/1024", "time");
	is_str(w, "BM_Sort/1024/time", "nm_key");
	free(w);
	ok(strcmp(better_name(BETTER_UNKNOWN), "unknown") == 0 &&
	    strcmp(better_name(BETTER_HIGHER), "higher") == 0, "better_name");
}

int
main(void)
{
	test_canonical();
	test_unit_better();
	test_format();
	test_format_step();
	test_parse();
	test_glob();
	test_policy();
	test_policy_check();
	test_warning_and_bounds();
	return done_testing();
}
