/* Unit tests for json: parsing, the three writers, Python repr/str. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "tap.h"

#include "json_vectors.h"
#include "pyrepr_vectors.h"

static char *
write_as(const cJSON *v, enum json_style st)
{
	buf b = BUF_INIT;

	if (json_write(&b, v, st, NULL) != 0) {
		buf_free(&b);
		return NULL;
	}
	return buf_detach(&b);
}

static void
check_error(const char *text, const char *want, long col)
{
	json_error e;
	cJSON *v = json_parse(text, strlen(text), &e);

	ok(v == NULL && strstr(e.msg, want) != NULL && (col == 0 || e.col == col),
	    "rejects %s: '%s' (col %ld)", want, e.msg, e.col);
	cJSON_Delete(v);
}

/*
 * json_parse_fast: the tree of json_parse_arena() for the usual record,
 * NULL (the caller's cue to parse it the full way) for anything else.
 */
static void
check_fast(void)
{
	static const char *const keys[] = { "model_id", "latency", "ok", "none", "n", "model_id" };
	static const struct { const char *text; bool fast; } cases[] = {
		{ "{\"model_id\": \"m-1\", \"latency\": 20.5, \"ok\": true, \"none\": null}", true },
		{ " {\n  \"latency\": -0,\r\n\t\"n\": 12345678901234567890123, \"x\": {\"a\": [1, 2.5e-3, \"s\", {}, [], false]}} \n", true },
		{ "{\"latency\": 1E2, \"n\": -0.0, \"ok\": false, \"other\": [[[]]]}", true },
		{ "{}", true },
		/* escapes, non-ASCII and control bytes: the full parser decides */
		{ "{\"model_id\": \"m\\u0065\", \"latency\": 1}", false },
		{ "{\"lat\\u0065ncy\": 1}", false },
		{ "{\"x\": \"a\\\"b\", \"latency\": 1}", false },
		{ "{\"model_id\": \"\xc5\x81\"}", false },
		{ "{\"x\": \"\xc5\x81\"}", false },
		{ "{\"unwanted\": \"caf\u00e9\", \"latency\": 1}", false },
		{ "{\"x\": \"tab\there\"}", false },
		/* a repeated wanted key keeps its last value: the full parser's way */
		{ "{\"latency\": 1, \"latency\": 2}", false },
		/* objects and arrays of plain values at wanted keys: a record's named metrics */
		{ "{\"latency\": {\"v\": 1}}", true },
		{ "{\"latency\": [1]}", true },
		{ "{\"model_id\": {\"t\": {\"value\": 1.5e-05, \"unit\": \"s\", \"samples\": [1, 2.0]}, "
		  "\"u\": {\"value\": null}, \"e\": {}, \"a\": []}, \"n\": 1}", true },
		{ "{\"latency\": {\"a\": {\"b\": [[{\"c\": true}]]}}}", true },
		/* ... but not a repeated member name in them (the last value wins), escapes, odd values */
		{ "{\"latency\": {\"v\": 1, \"w\": 2, \"v\": 3}}", false },
		{ "{\"latency\": {\"t\": {\"value\": 1, \"value\": 2}}}", false },
		{ "{\"latency\": {\"v\\u0065\": 1}}", false },
		{ "{\"latency\": {\"v\": \"caf\u00e9\"}}", false },
		{ "{\"latency\": {\"v\": NaN}}", false },
		{ "{\"latency\": [1, Infinity]}", false },
		{ "{\"latency\": {\"v\": 1,}}", false },
		{ "{\"latency\": [1,]}", false },
		{ "{\"latency\": {\"v\" 1}}", false },
		{ "{\"latency\": {\"v\": 1]}", false },
		{ "{\"latency\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", false },
		/* odd values at wanted keys, and odd numbers anywhere */
		{ "{\"latency\": NaN}", false },
		{ "{\"latency\": -Infinity}", false },
		{ "{\"x\": Infinity}", false },
		{ "{\"latency\": 01}", false },
		{ "{\"latency\": 1.}", false },
		{ "{\"latency\": -}", false },
		{ "{\"latency\": .5}", false },
		{ "{\"latency\": +1}", false },
		/* invalid JSON and values that are not objects */
		{ "{\"latency\": 1,}", false },
		{ "{\"latency\": 1} x", false },
		{ "{\"latency\": 1", false },
		{ "{\"x\": {\"a\": 1,}, \"latency\": 1}", false },
		{ "{\"x\": [1 2]}", false },
		{ "{\"x\": tru}", false },
		{ "[1, 2]", false },
		{ "\"text\"", false },
		{ "", false },
		/* nesting deeper than the scanner goes */
		{ "{\"x\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", false },
	};
	struct json_keyset *ks = json_keyset_new(keys, sizeof keys / sizeof *keys);
	struct json_arena *fa = json_arena_new(), *sa = json_arena_new();

	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *t = cases[i].text;
		char shown[120];
		json_error e;
		cJSON *f = json_parse_fast(t, strlen(t), ks, fa);
		cJSON *sl = json_parse_arena(t, strlen(t), keys, sizeof keys / sizeof *keys, sa, &e);

		if (cases[i].fast)
			ok(f != NULL && json_identical(f, sl), "the quick scanner reads %s as the parser does",
			    err_clean(t, shown, sizeof shown));
		else
			ok(f == NULL, "the quick scanner leaves %s to the parser",
			    err_clean(t, shown, sizeof shown));
		json_arena_reset(fa);
		json_arena_reset(sa);
	}
	json_arena_free(fa);
	json_arena_free(sa);
	json_keyset_free(ks);
	{
		const char *many[65];
		char names[65][8];

		for (int k = 0; k < 65; k++) {
			snprintf(names[k], sizeof names[k], "k%d", k);
			many[k] = names[k];
		}
		ok(json_keyset_new(many, 65) == NULL, "a keyset holds 64 keys at most");
	}
	{
		/* A wanted value's object: 128 members on the quick path, 129 not. */
		static const char *const k1[] = { "metrics" };
		struct json_keyset *k = json_keyset_new(k1, 1);
		struct json_arena *a = json_arena_new(), *b = json_arena_new();
		buf t = BUF_INIT;
		json_error e;

		for (int n = 128; n <= 129; n++) {
			cJSON *f, *sl;

			buf_reset(&t);
			buf_adds(&t, "{\"metrics\": {");
			for (int i = 0; i < n; i++)
				buf_addf(&t, "%s\"m%d\": {\"value\": %d}", i ? ", " : "", i, i);
			buf_adds(&t, "}}");
			f = json_parse_fast(t.s, t.len, k, a);
			sl = json_parse_arena(t.s, t.len, k1, 1, b, &e);
			ok(n == 128 ? f != NULL && json_identical(f, sl) : f == NULL,
			    "an object of %d members in a wanted value: %s", n,
			    n == 128 ? "read as the parser does" : "left to the parser");
			json_arena_reset(a);
			json_arena_reset(b);
		}
		buf_free(&t);
		json_arena_free(a);
		json_arena_free(b);
		json_keyset_free(k);
	}
}

/*
 * The quick scanner against the full parser on generated texts, each in
 * a buffer of its exact size (a sanitizer build sees any read past it).
 * want: 1 the scanner must read the text, 0 it must leave it to the
 * parser, -1 either; whatever it reads must be the parser's tree.
 */
struct diff {
	const struct json_keyset *ks;
	const char *const *keys;
	size_t nkeys;
	struct json_arena *fa, *sa;
	int texts, bad;
};

/* cJSON's links: each member's prev is the one before, the first's the last. */
static bool
links_ok(const cJSON *obj)
{
	const cJSON *c, *last = NULL;

	for (c = obj->child; c != NULL; last = c, c = c->next)
		if (c != obj->child && c->prev != last)
			return false;
	return obj->child == NULL || obj->child->prev == last;
}

static void
diff_one(struct diff *d, const char *t, size_t n, int want)
{
	char *b = malloc(n > 0 ? n : 1), shown[200];
	json_error e;
	cJSON *f, *sl;
	bool good;

	memcpy(b, t, n);
	f = json_parse_fast(b, n, d->ks, d->fa);
	sl = json_parse_arena(b, n, d->keys, d->nkeys, d->sa, &e);
	good = f == NULL ? want != 1 : want != 0 && sl != NULL && json_identical(f, sl) &&
	    links_ok(f);
	d->texts++;
	if (!good && d->bad++ < 5) {
		char *z = strndup(t, n);

		printf("#   quick scanner %s: %s\n", f == NULL ? "gave up" : "differs",
		    err_clean(z, shown, sizeof shown));
		free(z);
	}
	json_arena_reset(d->fa);
	json_arena_reset(d->sa);
	free(b);
}

/* Every prefix of t too: the parser's way at any end of input. */
static void
diff_cut(struct diff *d, const char *t, int want)
{
	size_t n = strlen(t);

	diff_one(d, t, n, want);
	for (size_t k = 0; k < n; k++)
		diff_one(d, t, k, -1);
}

static void
check_fast_differential(void)
{
	static const char *const keys[] = { "model_id", "latency", "ok", "none", "n",
	    "a_key_of_sixteen", "a_key_of_seventeen" };
	/* Values, and whether the scanner reads them wherever they stand. */
	static const struct { const char *v; bool fast; } vals[] = {
		{ "0", true }, { "-0", true }, { "7", true }, { "-12", true }, { "1.5", true },
		{ "-0.25", true }, { "1e5", true }, { "1E+2", true }, { "2.5e-3", true },
		{ "123456789012345678901234567890", true }, { "0.1e1", true },
		{ "true", true }, { "false", true }, { "null", true },
		{ "01", false }, { "1.", false }, { "-", false }, { ".5", false }, { "+1", false },
		{ "1e", false }, { "1e+", false }, { "-a", false }, { "0x1", false },
		{ "NaN", false }, { "Infinity", false }, { "-Infinity", false },
		{ "tru", false }, { "nul", false }, { "falsy", false }, { "True", false },
		{ "\"\"", true }, { "\"a\"", true }, { "\"a b/c'd ~\x7f\"", true },
		{ "\"\\\"\"", false }, { "\"a\\\\b\"", false }, { "\"\\u00e9\"", false },
		{ "\"\\ud83d\\ude00\"", false }, { "\"\\n\"", false }, { "\"\\u0000\"", false },
		{ "\"\\x\"", false }, { "\"\xc3\xa9\"", false }, { "\"\xff\"", false },
		{ "\"\xe2\x82\"", false }, { "\"a\x01\"", false }, { "\"tab\there\"", false },
		{ "\"unterminated", false },
	};
	/* Where a value goes (at each @): in a wanted member, an unwanted one, deeper. */
	static const char *const shapes[] = {
		"{\"model_id\": @}", "{\"latency\":@,\"ok\":true}", "{\"x\": @, \"n\": 1}",
		"{\"x\": [@, @]}", "{\"x\": {\"k\": @}, \"none\": null}", "[@]", "@",
		"{\"x\": [[{\"y\": [@]}]], \"a_key_of_sixteen\": @}",
		"{\"model_id\": {\"k\": @, \"j\": [@]}}", "{\"latency\": [@, {\"v\": @}], \"ok\": []}",
	};
	/* Bad structure around good values, and repeated keys. */
	static const struct { const char *t; int want; } broken[] = {
		{ "{\"latency\": 1,}", 0 }, { "{\"latency\": 1} x", 0 }, { "{\"latency\": 1 \"ok\": 2}", 0 },
		{ "{\"x\": {\"a\": 1,}, \"latency\": 1}", 0 }, { "{\"x\": [1 2]}", 0 }, { "{\"x\": [1,]}", 0 },
		{ "{\"x\": {\"a\" 1}}", 0 }, { "{\"x\": {1: 2}}", 0 }, { "{\"x\": {\"a\": }}", 0 },
		{ "{\"x\": [}", 0 }, { "{\"x\": {]}", 0 }, { "{\"x\": ]}", 0 }, { "{\"x\": }", 0 },
		{ "{latency: 1}", 0 }, { "{\"latency\" 1}", 0 }, { "{,}", 0 }, { "{\"x\": [1]]}", 0 },
		{ "{\"x\": {}}}", 0 }, { "{\"x\": 1}}", 0 }, { "{\"x\": \"a\"\"b\"}", 0 },
		{ "{\"x\": 1\x01}", 0 }, { "{\"x\":\x0b""1}", 0 }, { "{\"x\":\x0c""1}", 0 },
		{ "\xef\xbb\xbf{}", 0 }, { "{\"ok\": {\"a\": 1}}", 1 }, { "{\"ok\": [1]}", 1 },
		{ "{\"ok\": {\"a\": 1, \"a\": 2}}", 0 }, { "{\"ok\": {\"a\": {\"b\": 1, \"b\": [2]}}}", 0 },
		{ "{\"ok\": {\"a\": [1, {\"b\": \"c\"}], \"d\": {}}}", 1 },
		/* the parser keeps the last of a repeated wanted key: the scanner gives up */
		{ "{\"latency\": 1, \"latency\": 2}", 0 }, { "{\"n\": 1, \"x\": 2, \"n\": 3}", 0 },
		/* an unwanted one is not built by either */
		{ "{\"x\": 1, \"x\": {\"a\": [2]}}", 1 },
		/* names a byte away from wanted ones, where the key hash cannot tell */
		{ "{\"a_yek_of_seventeen\": {\"a\": 1}, \"a_kez_of_sixteen\": [1], \"a_key_of_sixteeo\": [], "
		  "\"latencz\": [], \"lbtency\": {}, \"nonf\": [], \"ko\": [], \"o\": [], \"ok\": true}", 1 },
	};
	static const char *const spaces[] = { " ", "\n", "\t", "\r\n", "\n  ",
	    "                 ", "\n                               ",
	    "\n\t \r                                   " };
	static const char *const record =
	    "{\"model_id\":\"m-1\",\"latency\":20.5,\"x\":{\"a\":[1,2.5e-3,\"s\",{},[],false,null]},"
	    "\"ok\":true,\"none\":null,\"a_key_of_seventeen\":\"a value of 15 b\",\"n\":-0}";
	struct diff d = { 0 };
	char t[1024], v[200];
	buf b = BUF_INIT;

	d.keys = keys;
	d.nkeys = sizeof keys / sizeof *keys;
	d.ks = json_keyset_new(keys, d.nkeys);
	d.fa = json_arena_new();
	d.sa = json_arena_new();
	for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
		for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
			bool str = vals[i].v[0] == '"';

			/* A string value fills the vector width or not. */
			for (int pad = 0; pad < (str ? 36 : 1); pad++) {
				snprintf(v, sizeof v, "%s%.*s%s", str ? "\"" : "", pad,
				    "abcdefghijklmnopqrstuvwxyz0123456789", vals[i].v + str);
				buf_reset(&b);
				for (const char *c = shapes[s]; *c != '\0'; c++)
					if (*c == '@')
						buf_adds(&b, v);
					else
						buf_addc(&b, *c);
				diff_cut(&d, b.s, shapes[s][0] == '{' && vals[i].fast ? 1 : 0);
			}
		}
	for (size_t i = 0; i < sizeof broken / sizeof *broken; i++)
		diff_cut(&d, broken[i].t, broken[i].want);
	/* Whitespace of every kind and length at every place a token ends. */
	for (size_t at = 0; at <= strlen(record); at++)
		for (size_t w = 0; w < sizeof spaces / sizeof *spaces; w++) {
			bool between = at == 0 || at == strlen(record) ||
			    strchr("{}[],:", record[at - 1]) != NULL || strchr("{}[],:", record[at]) != NULL;
			bool in_string = false;

			for (size_t k = 0; k < at; k++)
				in_string ^= record[k] == '"';
			buf_reset(&b);
			buf_add(&b, record, at);
			buf_adds(&b, spaces[w]);
			buf_adds(&b, record + at);
			/* Inside a string spaces are text and a control byte is an error. */
			diff_one(&d, b.s, b.len, between && !in_string ? 1 : !in_string ? -1 :
			    w == 0 || w == 5 ? 1 : 0);
		}
	/* Numbers of 1 to 20 digits, the point anywhere, read to the same bits. */
	{
		unsigned long r = 12345;

		for (int nd = 1; nd <= 20; nd++)
			for (int at = 0; at <= nd; at++)
				for (int form = 0; form < 8; form++) {
					char num[64];
					int k = 0;

					if (form & 1)
						num[k++] = '-';
					if (at == 0)
						num[k++] = '0';
					for (int i = 0; i < nd; i++) {
						if (i == at && at > 0)
							num[k++] = '.';
						if (at == 0 && i == 0)
							num[k++] = '.';
						r = r * 1103515245 + 12345;
						num[k++] = (char)('0' + (i == 0 && at > 0 ?
						    1 + r / 65536 % 9 : form & 4 ? 0 : r / 65536 % 10));
					}
					if (form & 2)
						k += snprintf(num + k, sizeof num - (size_t)k, "e%s%d",
						    form & 4 ? "-" : "", (int)(r % 30));
					num[k] = '\0';
					snprintf(t, sizeof t, "{\"latency\": %s, \"x\": [%s]}", num, num);
					diff_one(&d, t, strlen(t), 1);
				}
	}
	/* A line break and indentation of every length up to past two vectors. */
	for (int n = 0; n <= 40; n++) {
		buf_reset(&b);
		buf_adds(&b, "{\"model_id\": 1,\n");
		for (int k = 0; k < n; k++)
			buf_addc(&b, k % 7 == 6 ? '\t' : ' ');
		buf_adds(&b, "\"x\": [1,\r\n");
		for (int k = 0; k < n; k++)
			buf_addc(&b, ' ');
		buf_adds(&b, "2]}");
		diff_one(&d, b.s, b.len, 1);
		buf_adds(&b, "\n");
		for (int k = 0; k < n; k++)
			buf_addc(&b, ' ');
		diff_one(&d, b.s, b.len, 1);
	}
	/* Nesting past what the scanner follows, each kind of bracket. */
	for (int deep = 30; deep <= 70; deep += 40)
		for (int obj = 0; obj < 2; obj++) {
			buf_reset(&b);
			buf_adds(&b, "{\"x\": ");
			for (int k = 0; k < deep; k++)
				buf_adds(&b, obj && k % 2 ? "{\"k\": " : "[");
			buf_adds(&b, "1");
			for (int k = deep - 1; k >= 0; k--)
				buf_adds(&b, obj && k % 2 ? "}" : "]");
			buf_adds(&b, "}");
			diff_one(&d, b.s, b.len, deep < 32 ? 1 : 0);
		}
	/* Keys and string values of 0 to 40 bytes, around the vector width. */
	for (int n = 0; n <= 40; n++) {
		char key[64], val[64];

		for (int k = 0; k < n; k++)
			key[k] = val[k] = (char)('a' + k % 26);
		key[n] = val[n] = '\0';
		snprintf(t, sizeof t, "{\"%s\": \"%s\", \"model_id\": \"%s\"}", key, val, val);
		diff_cut(&d, t, 1);
		for (int at = 0; at < n; at++) {
			/* One odd byte at each place of the string. */
			static const char odd[] = { '"', '\\', '\x01', '\x1f', '\x7f', (char)0x80, (char)0xc3, (char)0xff };

			for (size_t o = 0; o < sizeof odd; o++) {
				char c = val[at];

				val[at] = odd[o];
				snprintf(t, sizeof t, "{\"model_id\": \"%s\", \"x\": \"%s\"}", val, val);
				diff_one(&d, t, strlen(t), odd[o] == '\x7f' ? 1 : 0);
				key[at] = odd[o];
				snprintf(t, sizeof t, "{\"%s\": 1, \"n\": 2}", key);
				diff_one(&d, t, strlen(t), odd[o] == '\x7f' ? 1 : 0);
				val[at] = key[at] = c;
			}
		}
	}
	{
		/* Without an arena: cJSON's own tree, every name and value its own copy. */
		cJSON *h = json_parse_fast(record, strlen(record), d.ks, NULL);

		ok(h != NULL && cJSON_GetArraySize(h) == 6 && links_ok(h) &&
		    strcmp(h->child->string, "model_id") == 0 && h->child->string != keys[0],
		    "the quick scanner builds a heap tree without an arena");
		cJSON_Delete(h);
	}
	ok(d.bad == 0, "the quick scanner reads %d generated texts as the parser does, "
	    "or leaves them to it (%d differ)", d.texts, d.bad);
	buf_free(&b);
	json_arena_free(d.fa);
	json_arena_free(d.sa);
	json_keyset_free((struct json_keyset *)d.ks);
}

int
main(void)
{
	json_error e;
	cJSON *v, *o;
	char *s;
	size_t i;
	buf b = BUF_INIT, where = BUF_INIT;

	for (i = 0; i < sizeof json_vectors / sizeof *json_vectors; i++) {
		v = json_parse(json_vectors[i].in, strlen(json_vectors[i].in), &e);
		if (!ok(v != NULL, "parses vector %zu", i)) {
			printf("# %s\n", e.msg);
			continue;
		}
		s = write_as(v, JSON_COMPACT);
		is_str(s, json_vectors[i].compact, "compact form of vector %zu", i);
		free(s);
		s = write_as(v, JSON_CANONICAL);
		is_str(s, json_vectors[i].canon, "canonical form of vector %zu", i);
		free(s);
		s = write_as(v, JSON_INDENT2);
		is_str(s, json_vectors[i].indent2, "indent=2 form of vector %zu", i);
		free(s);
		cJSON_Delete(v);
	}

	/* Integer versus float from the source text. */
	v = json_parse("[7, 7.0, 1e2, -0, 1E400]", 24, &e);
	ok(json_is_int(cJSON_GetArrayItem(v, 0)), "7 is an integer");
	ok(!json_is_int(cJSON_GetArrayItem(v, 1)), "7.0 is a float");
	ok(!json_is_int(cJSON_GetArrayItem(v, 2)), "1e2 is a float");
	ok(isinf(cJSON_GetArrayItem(v, 4)->valuedouble), "1E400 reads as infinity");
	ok(json_write(&b, v, JSON_COMPACT, &where) == -1, "infinity is never written");
	is_str(where.s, "[4]", "the failing element is named");
	cJSON_Delete(v);

	v = json_parse("{\"a\":{\"b\":[1,NaN]}}", 19, &e);
	ok(v != NULL && isnan(cJSON_GetArrayItem(json_get(json_get(v, "a"), "b"), 1)->valuedouble),
	    "NaN token reads as a float");
	buf_reset(&b);
	ok(json_write(&b, v, JSON_CANONICAL, &where) == -1, "NaN is refused");
	is_str(where.s, "a.b[1]", "with its path");
	cJSON_Delete(v);

	v = json_parse("[Infinity,-Infinity]", 20, &e);
	ok(v != NULL && isinf(v->child->valuedouble) && v->child->next->valuedouble < 0,
	    "Infinity and -Infinity tokens read");
	cJSON_Delete(v);

	/* Errors carry their position. */
	check_error("{\"a\":1,}", "member name", 8);
	check_error("{\"a\" 1}", "expected ':'", 6);
	check_error("[1 2]", "expected ',' or ']'", 4);
	check_error("{\"a\":tru}", "unexpected", 6);
	check_error("{\"a\":\"x\ty\"}", "control character", 0);
	check_error("{\"a\":\"\xff\"}", "invalid UTF-8", 0);
	check_error("{\"a\":\"\xed\xa0\x80\"}", "invalid UTF-8", 0);
	check_error("{\"a\":\"\xc0\x80\"}", "invalid UTF-8", 0);
	check_error("{\"a\":\"\\u0000\"}", "\\u0000", 0);
	check_error("{\"a\":\"\\x\"}", "invalid escape", 0);
	check_error("{\"a\":01}", "expected ','", 0);
	check_error("{\"a\":1.}", "digits expected", 0);
	check_error("{\"a\":1e}", "digits expected", 0);
	check_error("{\"a\":1} x", "after the value", 0);
	check_error("", "end of input", 0);
	check_error("{\"a\":\"abc", "unterminated", 0);
	check_error("nan", "unexpected", 1);
	v = json_parse("{\"a\":1}\0", 8, &e);
	ok(v == NULL && strstr(e.msg, "NUL") != NULL, "rejects a NUL byte: %s", e.msg);
	v = json_parse("{\"a\":\"x\0y\"}", 11, &e);
	ok(v == NULL && strstr(e.msg, "control") != NULL, "rejects a NUL in a string");
	{
		size_t depth = JSON_MAX_DEPTH + 1;
		char *deep = malloc(depth * 2 + 1);

		memset(deep, '[', depth);
		memset(deep + depth, ']', depth);
		deep[depth * 2] = '\0';
		check_error(deep, "nesting deeper", 0);
		deep[0] = ' ';
		deep[depth * 2 - 1] = ' ';
		v = json_parse(deep, depth * 2, &e);
		ok(v != NULL, "nesting of exactly %d levels is accepted", JSON_MAX_DEPTH);
		cJSON_Delete(v);
		free(deep);
	}
	v = json_parse("{\n  \"a\": 1,\n  \"b\": x\n}", 22, &e);
	ok(v == NULL && e.line == 3 && e.col == 8, "error line and column in a "
	    "multi-line value (%ld:%ld)", e.line, e.col);

	/* Past 64 members, repeated keys are found through the parser's table. */
	{
		buf t = BUF_INIT;
		const cJSON *c;
		int n = 0;

		buf_addc(&t, '{');
		for (i = 0; i < 300; i++)
			buf_addf(&t, "\"k%zu\":%zu,", i, i);
		buf_adds(&t, "\"k5\":\"x\",\"k250\":\"y\",\"k300\":300}");
		v = json_parse(t.s, t.len, &e);
		for (c = v != NULL ? v->child : NULL; c != NULL; c = c->next)
			n++;
		ok(v != NULL && n == 301 && strcmp(v->child->next->next->next->next->next->string, "k5") == 0 &&
		    strcmp(json_str(v, "k5"), "x") == 0 && strcmp(json_str(v, "k250"), "y") == 0 &&
		    json_num(v, "k251") == 251 && json_num(v, "k300") == 300,
		    "an object of 300 members keeps a repeated key's first place and last value");
		cJSON_Delete(v);
		v = json_parse_strict(t.s, t.len, &e);
		ok(v == NULL && strcmp(e.msg, "duplicate key 'k5'") == 0,
		    "strict: a key repeated past 64 members is found (%s)", e.msg);
		buf_free(&t);
	}

	/* Building only the wanted members of a top-level object. */
	{
		static const char *const want[] = { "a", "c" };
		const char *t = "{\"a\":1,\"b\":{\"a\":[1,2,{\"x\":\"y\\u00e9\"}]},\"c\":{\"b\":2},"
		    "\"a\":3,\"d\":[true,null,-1.5e3,\"s\"]}";

		v = json_parse_keys(t, strlen(t), want, 2, &e);
		s = write_as(v, JSON_COMPACT);
		is_str(s, "{\"a\":3,\"c\":{\"b\":2}}",
		    "only wanted members are built, nested ones whole, the last duplicate wins");
		free(s);
		cJSON_Delete(v);
		t = "{\"a\":1,\"b\":{\"x\":tru}}";
		v = json_parse_keys(t, strlen(t), want, 2, &e);
		ok(v == NULL && strstr(e.msg, "unexpected") != NULL && e.col == 17,
		    "invalid JSON in a skipped member is still an error (%s, col %ld)", e.msg, e.col);
		t = "{\"b\":\"\xff\"}";
		v = json_parse_keys(t, strlen(t), want, 2, &e);
		ok(v == NULL && strstr(e.msg, "UTF-8") != NULL, "so is invalid UTF-8");
		t = "[{\"b\":1}]";
		v = json_parse_keys(t, strlen(t), want, 2, &e);
		s = write_as(v, JSON_COMPACT);
		is_str(s, "[{\"b\":1}]", "only a top-level object is projected");
		free(s);
		cJSON_Delete(v);
	}

	/* Python repr() and str(). */
	for (i = 0; i < sizeof pyrepr_vectors / sizeof *pyrepr_vectors; i++) {
		v = json_parse(pyrepr_vectors[i].in, strlen(pyrepr_vectors[i].in), &e);
		buf_reset(&b);
		json_pyrepr(&b, v);
		is_str(b.s, pyrepr_vectors[i].repr, "repr of %s", pyrepr_vectors[i].in);
		s = json_pystr_dup(v);
		is_str(s, pyrepr_vectors[i].str, "str of %s", pyrepr_vectors[i].in);
		free(s);
		cJSON_Delete(v);
	}

	/* Truthiness, set/get/remove. */
	v = json_parse("[null,false,0,0.0,\"\",[],{},true,1,-0.0,\"false\",[0],{\"a\":0}]",
	    59, &e);
	{
		const int want[] = { 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 1 };
		int k = 0, mism = 0;
		cJSON *c;

		cJSON_ArrayForEach(c, v)
			mism += json_truthy(c) != want[k++];
		ok(mism == 0 && k == 13, "Python truthiness of 13 values");
	}
	cJSON_Delete(v);
	o = json_parse("{\"a\":1,\"b\":2}", 13, &e);
	json_set(o, "a", json_new_string("x"));
	json_set(o, "c", json_new_float(3.0));
	json_set(o, "d", json_new_int(-12));
	json_remove(o, "b");
	s = write_as(o, JSON_COMPACT);
	is_str(s, "{\"a\":\"x\",\"c\":3.0,\"d\":-12}",
	    "set keeps position, appends new keys, remove drops");
	free(s);
	ok(json_get(o, "A") == NULL, "lookups are case-sensitive");
	cJSON_Delete(o);
	o = json_new_array();
	cJSON_AddItemToArray(o, json_new_finite(0.5));
	cJSON_AddItemToArray(o, json_new_finite(NAN));
	cJSON_AddItemToArray(o, json_new_finite(-INFINITY));
	s = write_as(o, JSON_COMPACT);
	is_str(s, "[0.5,null,null]", "json_new_finite: a number, else null");
	free(s);
	cJSON_Delete(o);

	buf_free(&b);
	buf_free(&where);
	{
		static const struct { const char *text, *err; } strict[] = {
			{ "{\"a\":1,\"a\":2}", "duplicate key 'a'" },
			{ "[NaN]", "unexpected 'N'" },
			{ "[-Infinity]", "invalid number" },
			{ "[1e999]", "number out of range: 1e999" },
			{ "[9223372036854775808]", "number out of range: 9223372036854775808" },
			{ "[-9223372036854775809]", "number out of range: -9223372036854775809" },
			{ "[9223372036854775807, -9223372036854775808, 1.5, 1e308]", NULL },
		};
		for (size_t k = 0; k < sizeof strict / sizeof *strict; k++) {
			json_error se;
			cJSON *sv = json_parse_strict(strict[k].text, strlen(strict[k].text), &se);

			if (strict[k].err == NULL)
				ok(sv != NULL, "strict accepts %s", strict[k].text);
			else
				ok(sv == NULL && strcmp(se.msg, strict[k].err) == 0,
				    "strict refuses %s: %s", strict[k].text, sv == NULL ? se.msg : "accepted");
			cJSON_Delete(sv);
		}
	}
	check_fast();
	check_fast_differential();
	return done_testing();
}
