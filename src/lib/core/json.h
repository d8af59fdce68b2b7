/*
 * json: JSON text to cJSON trees and back, the way the reference's Python
 * json module reads and writes it.
 *
 * Ownership: a tree that json_parse*(), json_new_*() or json_take()
 * returns belongs to the caller, who frees it with cJSON_Delete() (a tree
 * built in an arena belongs to the arena and is never freed alone);
 * json_append() and json_set() consume the value they are given (json_set
 * may free it, moving its content into the member it replaces); every
 * other function borrows its arguments, and what json_get() and json_str()
 * return is borrowed from the tree, valid while the tree is unchanged.
 *
 * The files, as jq splits jv: json.c the tree and its accessors,
 * json_parse.c the parser, json_fast.c the quick wanted-keys scanner (its
 * speed rationale at its top), json_write.c the writer; json_private.h is
 * what they share and no other file includes.
 *
 * cJSON is the tree (lookups are always case-sensitive); parsing and
 * writing are done here because cJSON cannot keep what the reference's
 * byte-identical output needs:
 *   - integer versus float from the source text: a number node written
 *     without fraction or exponent carries JSON_INT in its type and its
 *     exact decimal text in valuestring (integers of any size survive);
 *     every other number node is a float, written as Python's repr;
 *   - a duplicated key keeps its first position and takes the last value;
 *   - the tokens NaN, Infinity and -Infinity are read as floats;
 *   - output is ASCII with \uXXXX escapes (surrogate pairs), as
 *     json.dumps(ensure_ascii=True) writes it.
 * Non-finite numbers are never written: the writers fail instead.
 */
#ifndef PERF_CORE_JSON_H
#define PERF_CORE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

/* Type bit of a number node that is an integer (see above); test it with json_is_int(). */
#define JSON_INT (1 << 12)
/* Deepest nesting the parser accepts (Python's own limit is near 1000). */
#define JSON_MAX_DEPTH 512

typedef struct {
	long line;	/* line of the error, counted from the first line (1) */
	long col;	/* byte column, 1-based */
	char msg[160];
} json_error;

/*
 * Parses exactly one JSON value from text[0..len) (surrounding whitespace
 * allowed). Returns the tree, or NULL with *err filled in.
 */
cJSON *json_parse(const char *text, size_t len, json_error *err);

/*
 * json_parse() as RFC 8259 reads JSON, for inputs that must be exact: a
 * duplicate key, NaN or Infinity, a number that overflows a double and an
 * integer outside signed 64 bits are errors.
 */
cJSON *json_parse_strict(const char *text, size_t len, json_error *err);

/* New nodes (exit on allocation failure). */
cJSON *json_new_object(void);
cJSON *json_new_array(void);
cJSON *json_new_string(const char *s);
cJSON *json_new_bool(bool b);
cJSON *json_new_null(void);
/* Appends v to an array. */
void json_append(cJSON *arr, cJSON *v);

/*
 * json_parse(), building of a top-level object only the members named in
 * keys[0..nkeys): the others are checked (invalid JSON is still an error)
 * but not built. keys == NULL builds everything.
 */
cJSON *json_parse_keys(const char *text, size_t len, const char *const *keys,
    size_t nkeys, json_error *err);

/*
 * Trees of many small records without malloc and free per node: nodes and
 * strings come from an arena, and json_arena_reset() releases a tree whole.
 * Such a tree must never be given to cJSON_Delete() or changed.
 */
struct json_arena;
struct json_arena *json_arena_new(void);
cJSON *json_parse_arena(const char *text, size_t len, const char *const *keys,
    size_t nkeys, struct json_arena *arena, json_error *err);
void json_arena_reset(struct json_arena *a);
void json_arena_free(struct json_arena *a);

/*
 * A quicker json_parse_arena() for the usual record, a top-level object
 * whose wanted members (keyset, at most 64 keys), each once, and other
 * values hold only plain strings (no escape, control or non-ASCII byte),
 * numbers, true, false, null, and objects and arrays of those (a wanted
 * one's objects with at most 128 members, none repeated: a record's named
 * metrics). It builds the tree
 * json_parse_arena() builds for the same keys; for any other text,
 * valid or not, it returns NULL, and the caller parses the text with
 * json_parse_arena() (which also reports what is wrong). The arena may
 * hold garbage then. The keyset keeps the caller's key strings, which
 * must outlive it; the member names of a tree in an arena are those
 * strings. Without an arena the tree is cJSON's, for cJSON_Delete().
 */
struct json_keyset;
struct json_keyset *json_keyset_new(const char *const *keys, size_t n);	/* NULL over 64 */
void json_keyset_free(struct json_keyset *ks);
/* The position of key among those given to json_keyset_new(), or -1. */
int json_keyset_index(const struct json_keyset *ks, const char *key);
cJSON *json_parse_fast(const char *text, size_t len, const struct json_keyset *ks,
    struct json_arena *arena);

/*
 * The quick scanner's pieces, for a reader of one large document that
 * builds only what it needs (perf-import's Google Benchmark reader). They
 * read what json_parse_fast() reads (plain strings, numbers of the
 * grammar, true, false, null, and containers of those) and return NULL
 * for anything else, valid or not: the caller then parses the text with
 * json_parse*(), which reports what is wrong. Each returns the position
 * past what it read.
 */
/* Past JSON whitespace at p. */
const char *json_scan_ws(const char *p, const char *end);
/* Past the plain string whose opening quote is at p, or NULL. */
const char *json_scan_string(const char *p, const char *end);
/* Past the value at p (whitespace before it allowed), or NULL. */
const char *json_scan_skip(const char *p, const char *end);

/* One member of a flat object (json_scan_flat()). */
struct json_scan_member {
	const char *key;	/* its name: a span of the text, not terminated */
	size_t klen;
	int type;		/* cJSON_String, _Number, _True, _False, _NULL, _Object, _Array */
	const char *s;		/* a string's text, a number's token (spans) */
	size_t n;
	double d;		/* a number's value, as the parser reads it */
	bool isint;		/* a number without fraction or exponent */
};

/*
 * The object at p (whitespace before it allowed) as at most max members
 * m[0..*n), in order (a nested object or array is checked, its member
 * given only its type); NULL when it is not an object, has more members,
 * or holds anything the scanner does not read. A repeated name is the
 * caller's to find.
 */
const char *json_scan_flat(const char *p, const char *end, struct json_scan_member *m,
    size_t max, size_t *n);

/* The number node the parser builds of a json_scan_flat() number (cJSON's, for cJSON_Delete()). */
cJSON *json_scan_number_node(const struct json_scan_member *m);

/* Number nodes. json_new_int keeps the exact text; json_new_float is a float. */
cJSON *json_new_int(long long v);
cJSON *json_new_float(double v);
/* json_new_float(v) for a finite v, else null (JSON has no NaN or infinity). */
cJSON *json_new_finite(double v);
bool json_is_int(const cJSON *v);

/* Case-sensitive member lookup (NULL when absent or obj is not an object). */
cJSON *json_get(const cJSON *obj, const char *key);
/* Sets obj[key] = v: in place when the key exists, appended otherwise. */
void json_set(cJSON *obj, const char *key, cJSON *v);
/* Removes obj[key] if present. */
void json_remove(cJSON *obj, const char *key);
/* Detaches obj[key] and hands it (key included) to the caller; NULL if absent. */
cJSON *json_take(cJSON *obj, const char *key);
/* Python truthiness: null, false, 0, 0.0, "", [] and {} are false. */
bool json_truthy(const cJSON *v);
/* The string at key, or "" when it is absent or not a string. */
const char *json_str(const cJSON *obj, const char *key);
/* The number at key, or NaN when it is absent or not a number. */
double json_num(const cJSON *obj, const char *key);
/*
 * Python's == on two parsed values: objects as dicts (key order ignored),
 * numbers by value (1 == 1.0), except that a boolean only equals a boolean.
 */
bool json_equal(const cJSON *a, const cJSON *b);
/*
 * Whether two trees are the same node for node: members in order, types,
 * names, text and the bits of every number (for tests of the parsers).
 */
bool json_identical(const cJSON *a, const cJSON *b);

enum json_style {
	JSON_COMPACT,	/* insertion order, "," and ":" */
	JSON_INDENT2,	/* json.dumps(indent=2): the reference's files */
	JSON_CANONICAL	/* sort_keys=True, separators=(",", ":") */
};

/*
 * Appends the text of v to out. Returns 0, or -1 when v holds a
 * non-finite number; then *where (if not NULL) names its path, like
 * "regression_thresholds.latency.threshold_percent".
 */
int json_write(buf *out, const cJSON *v, enum json_style style, buf *where);

/* Appends the JSON string literal of s (ASCII, escaped). */
void json_write_string(buf *out, const char *s);

/*
 * Python's repr() and str() of a parsed value: None, True, False, 2, 2.0,
 * 'text', [1, 'a'], {'a': 1}; str() of a string is the string itself.
 */
void json_pyrepr(buf *out, const cJSON *v);
void json_pystr(buf *out, const cJSON *v);
/* json_pystr into a new string. */
char *json_pystr_dup(const cJSON *v);

#endif
