/* memmem() */
#define _GNU_SOURCE
/*
 * catch2: Catch2's XML reporter (-r xml), v2 (<Catch>) and v3
 * (<Catch2TestRun>). One benchmark per <BenchmarkResults>, named by its
 * test case, the sections around it and its own name joined with "/";
 * time is <mean value> (nanoseconds); a <failed message> inside it makes
 * a failed benchmark. The XML is read by a small scanner of its own:
 * elements, attributes, comments, CDATA, the declaration, entities.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "core/num.h"
#include "lane/import/parsers.h"

#define DEPTH_MAX 256
#define ATTR_MAX 32

struct tag {
	char *name;
	int nattr;
	char *key[ATTR_MAX], *val[ATTR_MAX];
	bool close, empty;
};

struct scan {
	const char *p, *end;
	long line;
	char *msg;
	size_t msgsz;
};

static void
tag_free(struct tag *t)
{
	free(t->name);
	for (int i = 0; i < t->nattr; i++) {
		free(t->key[i]);
		free(t->val[i]);
	}
	memset(t, 0, sizeof *t);
}

static const char *
attr(const struct tag *t, const char *key)
{
	for (int i = 0; i < t->nattr; i++)
		if (strcmp(t->key[i], key) == 0)
			return t->val[i];
	return NULL;
}

static void
advance(struct scan *sc, const char *to)
{
	for (; sc->p < to; sc->p++)
		if (*sc->p == '\n')
			sc->line++;
}

/* Skips up to and past the text end; false when it never comes. */
static bool
skip_past(struct scan *sc, const char *end)
{
	const char *q = memmem(sc->p, (size_t)(sc->end - sc->p), end, strlen(end));

	if (q == NULL)
		return false;
	advance(sc, q + strlen(end));
	return true;
}

/* An attribute value with its entities decoded. */
static char *
decode(const char *s, size_t n)
{
	buf b = BUF_INIT;
	static const struct { const char *ent; char c; } ents[] = {
		{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' },
		{ "&apos;", '\'' },
	};

	for (size_t i = 0; i < n; i++) {
		bool done = false;
		if (s[i] != '&') {
			buf_addc(&b, s[i]);
			continue;
		}
		for (size_t e = 0; e < sizeof ents / sizeof *ents && !done; e++) {
			size_t el = strlen(ents[e].ent);
			if (i + el <= n && strncmp(s + i, ents[e].ent, el) == 0) {
				buf_addc(&b, ents[e].c);
				i += el - 1;
				done = true;
			}
		}
		if (!done && i + 2 < n && s[i + 1] == '#') {
			char *end;
			bool hex = s[i + 2] == 'x';
			unsigned long c = strtoul(s + i + 2 + hex, &end, hex ? 16 : 10);
			if (end < s + n && *end == ';' && c > 0 && c < 0x110000) {
				/* UTF-8 of the code point. */
				if (c < 0x80) {
					buf_addc(&b, (char)c);
				} else if (c < 0x800) {
					buf_addc(&b, (char)(0xc0 | (c >> 6)));
					buf_addc(&b, (char)(0x80 | (c & 0x3f)));
				} else if (c < 0x10000) {
					buf_addc(&b, (char)(0xe0 | (c >> 12)));
					buf_addc(&b, (char)(0x80 | ((c >> 6) & 0x3f)));
					buf_addc(&b, (char)(0x80 | (c & 0x3f)));
				} else {
					buf_addc(&b, (char)(0xf0 | (c >> 18)));
					buf_addc(&b, (char)(0x80 | ((c >> 12) & 0x3f)));
					buf_addc(&b, (char)(0x80 | ((c >> 6) & 0x3f)));
					buf_addc(&b, (char)(0x80 | (c & 0x3f)));
				}
				i = (size_t)(end - s);
				done = true;
			}
		}
		if (!done)
			buf_addc(&b, '&');
	}
	buf_addc(&b, '\0');
	return buf_detach(&b);
}

static bool
fail(struct scan *sc, const char *what)
{
	snprintf(sc->msg, sc->msgsz, "%s", what);
	return false;
}

/*
 * The next tag into *t (text between tags is skipped): true, or false at
 * the end (t->name NULL) or on an error (msg set).
 */
static bool
next_tag(struct scan *sc, struct tag *t)
{
	const char *q;

	memset(t, 0, sizeof *t);
	for (;;) {
		if ((q = memchr(sc->p, '<', (size_t)(sc->end - sc->p))) == NULL) {
			advance(sc, sc->end);
			return false;
		}
		advance(sc, q);
		if (sc->end - sc->p >= 4 && strncmp(sc->p, "<!--", 4) == 0) {
			if (!skip_past(sc, "-->"))
				return fail(sc, "an unterminated comment");
			continue;
		}
		if (sc->end - sc->p >= 9 && strncmp(sc->p, "<![CDATA[", 9) == 0) {
			if (!skip_past(sc, "]]>"))
				return fail(sc, "an unterminated CDATA section");
			continue;
		}
		if (sc->end - sc->p >= 2 && (sc->p[1] == '?' || sc->p[1] == '!')) {
			if (!skip_past(sc, ">"))
				return fail(sc, "an unterminated declaration");
			continue;
		}
		break;
	}
	advance(sc, sc->p + 1);
	if (sc->p < sc->end && *sc->p == '/') {
		t->close = true;
		advance(sc, sc->p + 1);
	}
	q = sc->p;
	while (sc->p < sc->end && (isalnum((unsigned char)*sc->p) || strchr("_-.:", *sc->p)))
		sc->p++;
	if (sc->p == q)
		return fail(sc, "a tag without a name");
	t->name = estrndup(q, (size_t)(sc->p - q));
	for (;;) {
		const char *k;
		char quote;

		while (sc->p < sc->end && isspace((unsigned char)*sc->p))
			advance(sc, sc->p + 1);
		if (sc->p >= sc->end)
			return fail(sc, "an unterminated tag");
		if (*sc->p == '>') {
			sc->p++;
			return true;
		}
		if (*sc->p == '/' && sc->p + 1 < sc->end && sc->p[1] == '>') {
			t->empty = true;
			sc->p += 2;
			return true;
		}
		k = sc->p;
		while (sc->p < sc->end && (isalnum((unsigned char)*sc->p) || strchr("_-.:", *sc->p)))
			sc->p++;
		if (sc->p == k || sc->p + 1 >= sc->end || *sc->p != '=' ||
		    (sc->p[1] != '"' && sc->p[1] != '\''))
			return fail(sc, "a malformed attribute");
		if (t->nattr == ATTR_MAX)
			return fail(sc, "too many attributes");
		t->key[t->nattr] = estrndup(k, (size_t)(sc->p - k));
		quote = sc->p[1];
		sc->p += 2;
		q = memchr(sc->p, quote, (size_t)(sc->end - sc->p));
		if (q == NULL) {
			t->nattr++;
			t->val[t->nattr - 1] = estrdup("");
			return fail(sc, "an unterminated attribute value");
		}
		t->val[t->nattr++] = decode(sc->p, (size_t)(q - sc->p));
		advance(sc, q + 1);
	}
}

/* The path of the open elements that name a benchmark, joined with "/". */
static char *
joined(char **names, int n, const char *last)
{
	buf b = BUF_INIT;

	for (int i = 0; i < n; i++)
		if (names[i] != NULL)
			buf_addf(&b, "%s%s", b.len ? "/" : "", names[i]);
	buf_addf(&b, "%s%s", b.len ? "/" : "", last);
	return buf_detach(&b);
}

int
catch2_parse(const char *text, size_t len, struct import_suite *s, long *line,
    char *msg, size_t msgsz)
{
	struct scan sc = { text, text + len, 1, msg, msgsz };
	char *open[DEPTH_MAX], *names[DEPTH_MAX];
	struct import_bench *cur = NULL;
	struct tag t;
	int depth = 0, rc = -1;
	bool root = false;

	while (next_tag(&sc, &t)) {
		const char *v;
		double d;

		if (t.close) {
			if (depth == 0 || strcmp(open[depth - 1], t.name) != 0) {
				snprintf(msg, msgsz, "</%s> closes %s", t.name, depth ?
				    open[depth - 1] : "nothing");
				goto bad;
			}
			depth--;
			if (strcmp(open[depth], "BenchmarkResults") == 0)
				cur = NULL;
			free(open[depth]);
			free(names[depth]);
			tag_free(&t);
			continue;
		}
		if (depth == 0 && !root) {
			if (strcmp(t.name, "Catch") != 0 && strcmp(t.name, "Catch2TestRun") != 0) {
				snprintf(msg, msgsz, "<%s>: not a Catch2 XML report", t.name);
				goto bad;
			}
			root = true;
			if ((v = attr(&t, "name")) != NULL)
				s->workload = estrdup(v);
			if ((v = attr(&t, "catch2-version")) != NULL)
				s->tool_version = estrdup(v);
		}
		if (strcmp(t.name, "BenchmarkResults") == 0) {
			char *id = joined(names, depth, (v = attr(&t, "name")) ? v : "");
			cur = import_add_bench(s, id);
			free(id);
			if ((v = attr(&t, "samples")) != NULL && num_py_float(v, &d))
				json_set(cur->settings, "samples", json_new_float(d));
			if ((v = attr(&t, "resamples")) != NULL && num_py_float(v, &d))
				json_set(cur->settings, "resamples", json_new_float(d));
		} else if (cur != NULL && strcmp(t.name, "mean") == 0) {
			if ((v = attr(&t, "value")) == NULL || !num_py_float(v, &d)) {
				snprintf(msg, msgsz, "<mean>: value is not a number");
				goto bad;
			}
			import_add_metric(cur, "time", d, "ns");
		} else if (cur != NULL && strcmp(t.name, "failed") == 0) {
			free(cur->error);
			cur->error = estrdup((v = attr(&t, "message")) ? v : "failed");
		}
		if (!t.empty) {
			if (depth == DEPTH_MAX) {
				snprintf(msg, msgsz, "elements nested too deep");
				goto bad;
			}
			open[depth] = estrdup(t.name);
			names[depth] = (strcmp(t.name, "TestCase") == 0 ||
			    strcmp(t.name, "Section") == 0) && attr(&t, "name") != NULL ?
			    estrdup(attr(&t, "name")) : NULL;
			depth++;
		}
		tag_free(&t);
	}
	if (*msg != '\0')
		goto bad;
	if (!root) {
		snprintf(msg, msgsz, "no <Catch> or <Catch2TestRun> element");
		goto bad;
	}
	if (depth > 0) {
		snprintf(msg, msgsz, "<%s> is never closed", open[depth - 1]);
		goto bad;
	}
	rc = 0;
	goto done;
bad:
	*line = sc.line;
done:
	tag_free(&t);
	while (depth > 0) {
		depth--;
		free(open[depth]);
		free(names[depth]);
	}
	return rc;
}
