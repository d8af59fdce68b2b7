#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "core/text.h"
#include "core/unit.h"
#include "lane/named_metric.h"

bool
nm_name_valid(const char *name, const char **why)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t n = strlen(name);

	if (n == 0) {
		*why = "is empty";
		return false;
	}
	if (n > NM_NAME_MAX) {
		*why = "is longer than 128 bytes";
		return false;
	}
	for (size_t i = 0; i < n; i++)
		/* C0, DEL, and C1 (U+0080..U+009F: 0xC2 0x80..0x9F in UTF-8). */
		if (s[i] < 0x20 || s[i] == 0x7f ||
		    (s[i] == 0xc2 && i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f)) {
			*why = "holds a control character";
			return false;
		}
	return true;
}

/* Appends "metrics.<repr of name>" to b: the path of a metric in messages. */
static void
name_path(buf *b, const char *name)
{
	buf_addf(b, "metrics.");
	text_py_repr(b, name, strlen(name));
}

static struct named_metric *
parse_fail(struct named_metric *v, char *err, size_t errn, const char *name,
    const char *what)
{
	buf b = BUF_INIT;

	if (name != NULL)
		name_path(&b, name);
	else
		buf_addf(&b, "metrics");
	snprintf(err, errn, "%s%s%s", b.s, what[0] == '.' ? "" : " ", what);
	buf_free(&b);
	free(v);
	return NULL;
}

struct named_metric *
nm_parse(const cJSON *metrics, size_t *n, char *err, size_t errn)
{
	struct named_metric *v;
	const cJSON *e, *x;
	const char *why;
	size_t k = 0;

	*n = 0;
	if (metrics == NULL)
		return ecalloc(1, sizeof *v);
	if (!cJSON_IsObject(metrics))
		return parse_fail(NULL, err, errn, NULL, "must be an object");
	v = ecalloc((size_t)cJSON_GetArraySize(metrics) + 1, sizeof *v);
	cJSON_ArrayForEach(e, metrics) {
		struct named_metric *m = &v[k];

		m->name = e->string;
		if (!nm_name_valid(e->string, &why)) {
			char w[64];

			snprintf(w, sizeof w, "name %s", why);
			return parse_fail(v, err, errn, e->string, w);
		}
		if (!cJSON_IsObject(e))
			return parse_fail(v, err, errn, e->string, "must be an object");
		x = json_get(e, "value");
		if (cJSON_IsNull(x))
			m->has_value = false;
		else if (cJSON_IsNumber(x) && !cJSON_IsBool(x) && isfinite(x->valuedouble)) {
			m->has_value = true;
			m->value = x->valuedouble;
		} else
			return parse_fail(v, err, errn, e->string,
			    x == NULL ? "has no value" : ".value must be a finite number or null");
		x = json_get(e, "unit");
		if (x != NULL && !cJSON_IsString(x))
			return parse_fail(v, err, errn, e->string, ".unit must be a string");
		m->unit = x != NULL ? x->valuestring : "";
		x = json_get(e, "better");
		m->better = BETTER_UNKNOWN;
		if (x != NULL && !cJSON_IsNull(x) &&
		    (!cJSON_IsString(x) || !better_parse(x->valuestring, &m->better)))
			return parse_fail(v, err, errn, e->string,
			    ".better must be \"lower\" or \"higher\"");
		x = json_get(e, "samples");
		if (x != NULL && !cJSON_IsNull(x)) {
			const cJSON *s;

			if (!cJSON_IsArray(x))
				return parse_fail(v, err, errn, e->string,
				    ".samples must be an array of finite numbers");
			cJSON_ArrayForEach(s, x)
				if (!cJSON_IsNumber(s) || !isfinite(s->valuedouble))
					return parse_fail(v, err, errn, e->string,
					    ".samples must be an array of finite numbers");
			m->samples = x;
		}
		k++;
	}
	*n = k;
	return v;
}

/* The length of the UTF-8 character at s (1 for a stray byte). */
static size_t
char_len(const unsigned char *s)
{
	size_t n = *s < 0x80 ? 1 : *s >= 0xf0 ? 4 : *s >= 0xe0 ? 3 : *s >= 0xc0 ? 2 : 1;

	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 1;
	return n;
}

bool
nm_glob_match(const char *glob, const char *key)
{
	const char *g = glob, *k = key, *star_g = NULL, *star_k = NULL;

	/* Iterative, with backtracking to the last '*': linear in practice. */
	while (*k != '\0') {
		if (*g == '*') {
			star_g = ++g;
			star_k = k;
			continue;
		}
		if (*g == '?') {
			g++;
			k += char_len((const unsigned char *)k);
			continue;
		}
		if (*g == '\\' && g[1] != '\0')
			g++;
		if (*g != '\0' && *g == *k) {
			g++;
			k++;
			continue;
		}
		if (star_g == NULL)
			return false;
		g = star_g;
		k = ++star_k;
	}
	while (*g == '*')
		g++;
	return *g == '\0';
}

size_t
nm_glob_literals(const char *glob)
{
	size_t n = 0;

	for (const char *g = glob; *g != '\0'; g++) {
		if (*g == '*' || *g == '?')
			continue;
		if (*g == '\\' && g[1] != '\0')
			g++;
		n++;
	}
	return n;
}

char *
nm_key(const char *benchmark, const char *name)
{
	return easprintf("%s/%s", benchmark, name);
}

/* Prints "<repr of glob>.<field> <what>" into err. */
static int
check_fail(char *err, size_t errn, const char *glob, const char *field, const char *what)
{
	buf b = BUF_INIT;

	text_py_repr(&b, glob, strlen(glob));
	snprintf(err, errn, "%s%s%s %s", b.s, field ? "." : "", field ? field : "", what);
	buf_free(&b);
	return -1;
}

int
nm_policy_check(const cJSON *block, char *err, size_t errn)
{
	const cJSON *p, *f;
	enum better b;

	if (block == NULL)
		return 0;
	if (!cJSON_IsObject(block)) {
		snprintf(err, errn, "must be an object");
		return -1;
	}
	cJSON_ArrayForEach(p, block) {
		if (!cJSON_IsObject(p))
			return check_fail(err, errn, p->string, NULL, "must be an object");
		cJSON_ArrayForEach(f, p) {
			const char *k = f->string;

			if (strcmp(k, "threshold_percent") == 0 ||
			    strcmp(k, "threshold_absolute") == 0) {
				if (!cJSON_IsNumber(f) || !isfinite(f->valuedouble))
					return check_fail(err, errn, p->string, k,
					    "must be a finite number");
			} else if (strcmp(k, "gated") == 0) {
				if (!cJSON_IsBool(f))
					return check_fail(err, errn, p->string, k,
					    "must be true or false");
			} else if (strcmp(k, "better") == 0) {
				if (!cJSON_IsString(f) || !better_parse(f->valuestring, &b))
					return check_fail(err, errn, p->string, k,
					    "must be \"lower\" or \"higher\"");
			} else
				return check_fail(err, errn, p->string, k,
				    "is not a policy field (threshold_percent, "
				    "threshold_absolute, gated, better)");
		}
	}
	return 0;
}

/*
 * The field of the most specific glob of block matching key that sets it
 * (most literals, then first), or NULL.
 */
static const cJSON *
best_field(const cJSON *block, const char *key, const char *field)
{
	const cJSON *p, *f, *best = NULL;
	size_t best_lit = 0;

	cJSON_ArrayForEach(p, block) {
		size_t lit;

		if ((f = json_get(p, field)) == NULL)
			continue;
		lit = nm_glob_literals(p->string);
		if (best != NULL && lit <= best_lit)
			continue;
		if (!nm_glob_match(p->string, key))
			continue;
		best = f;
		best_lit = lit;
	}
	return best;
}

void
nm_policy_resolve(const cJSON *block, const char *benchmark,
    const struct named_metric *m, struct nm_policy *p)
{
	const cJSON *f;
	char *key = NULL;
	bool gated = true;

	p->threshold_percent = NM_DEFAULT_PERCENT;
	p->threshold_absolute = NM_DEFAULT_ABSOLUTE;
	p->better = m->better;
	p->source = m->better != BETTER_UNKNOWN ? NM_FROM_RECORD : NM_FROM_NONE;
	if (cJSON_IsObject(block) && cJSON_GetArraySize(block) > 0) {
		key = nm_key(benchmark, m->name);
		if ((f = best_field(block, key, "threshold_percent")) != NULL &&
		    cJSON_IsNumber(f))
			p->threshold_percent = f->valuedouble;
		if ((f = best_field(block, key, "threshold_absolute")) != NULL &&
		    cJSON_IsNumber(f))
			p->threshold_absolute = f->valuedouble;
		if ((f = best_field(block, key, "gated")) != NULL && cJSON_IsBool(f))
			gated = cJSON_IsTrue(f);
		if (p->source == NM_FROM_NONE &&
		    (f = best_field(block, key, "better")) != NULL && cJSON_IsString(f) &&
		    better_parse(f->valuestring, &p->better))
			p->source = NM_FROM_CONFIG;
		free(key);
	}
	if (p->source == NM_FROM_NONE &&
	    (p->better = unit_better(m->unit)) != BETTER_UNKNOWN)
		p->source = NM_FROM_UNIT;
	p->gated = gated && p->better != BETTER_UNKNOWN;
	p->needs_direction = gated && p->better == BETTER_UNKNOWN;
}

char *
nm_unknown_warning(const char *key, const char *unit)
{
	buf b = BUF_INIT;

	buf_addf(&b, "metric ");
	json_write_string(&b, key);
	buf_addf(&b, " (unit ");
	json_write_string(&b, unit);
	buf_addf(&b, ") has no known direction: recorded, not gated; set "
	    "regression_thresholds.metrics.");
	json_write_string(&b, key);
	buf_addf(&b, ".better to \"lower\" or \"higher\"");
	return buf_detach(&b);
}

bool
nm_static_bound(const cJSON *bounds, const char *key, double *out, bool *bad)
{
	const cJSON *p, *best = NULL;
	size_t best_lit = 0;

	*bad = false;
	cJSON_ArrayForEach(p, bounds) {
		size_t lit = nm_glob_literals(p->string);

		if (best != NULL && lit <= best_lit)
			continue;
		if (!nm_glob_match(p->string, key))
			continue;
		best = p;
		best_lit = lit;
	}
	if (best == NULL)
		return false;
	if (!cJSON_IsNumber(best) || cJSON_IsBool(best) || !isfinite(best->valuedouble))
		*bad = true;
	else
		*out = best->valuedouble;
	return true;
}
