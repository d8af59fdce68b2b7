/*
 * read: the history store, read side (perf-gate-rolling(1) --store,
 * perfkite(7)).
 *
 * A store is a directory laid out as the reference's dataset (or a git
 * repository holding one, read through a local clone): every
 * "*.json" file below it, recursively, is one record; hidden files and
 * directories are never read. History may also come as JSON-lines streams
 * (gzip allowed), the export of a store that a CI cache keeps.
 *
 * One scan answers several queries at once (a batch of records needs two
 * each), so the store is read once per batch. A record is parsed only when
 * its text can satisfy a query: a file whose "workload_id"/"variant_id"
 * values (read from the raw text) match no query is not parsed at all.
 * That prefilter only ever skips what it can prove: a text holding any
 * backslash (an escape may spell a key or a value) is always parsed.
 *
 * A store that is not there is an error, never an empty history (a typo
 * in a scheduled job would otherwise check nothing, forever); a store that
 * holds no record is read, with a warning naming it.
 */
#ifndef PERF_LANE_STORE_READ_H
#define PERF_LANE_STORE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

#define STORE_MAX_KEYS 8

/* One query: str(record[key]) == value for each key, plus the reference's filters. */
struct store_query {
	const char *keys[STORE_MAX_KEYS];
	const char *values[STORE_MAX_KEYS];	/* Python str() of the wanted value */
	int nkeys;
	bool successful_only;	/* drop records whose success is present and falsy */
	bool eligible_only;	/* baseline_eligible is true, or neither key present */
	/*
	 * Hints for a scan through the store index (index.h): the caller's
	 * answer depends only on the newest (by timestamp, then path) newest
	 * matches (0: on all), or, with distinct, on one match of each
	 * combination of identity values and filter inputs (what
	 * identity_add_other_recipe() reads). A scan may still deliver more.
	 */
	int newest;
	bool distinct;
};

/* A record that matched at least one query; valid during the callback only. */
struct store_hit {
	const cJSON *record;
	const char *path;	/* store-relative path ("model/ts_sha.json"); for a
				 * stream line, the path it would have in a store */
	bool stream;		/* read from a JSON-lines stream */
	int64_t instant;	/* its timestamp; ISOTIME_MIN when unparsable */
	const char *text;	/* the record as stored */
	size_t len;
	const bool *match;	/* match[i] for each query */
	size_t unit;		/* 0 for a file at the top of the store or a
				 * stream line, i for the i-th top-level
				 * directory (store_scan_units) */
};

/* How store_scan_units() reads the store's top-level directories. */
struct store_units {
	/* Whether the top-level directory name is read (NULL: all are). */
	bool (*want)(const char *name, void *ctx);
	/*
	 * Called, without the scan's lock, once directory unit (named name)
	 * has been read whole: no hit of that unit comes after. Unit 0 (the
	 * files at the top, read first, and the streams, read last) has none.
	 */
	void (*done)(size_t unit, const char *name, void *ctx);
	bool quiet;		/* no warnings: a second reading of the store */
	/*
	 * hit() may run on several reader threads at once: the caller locks
	 * what it shares (by default the scan holds its lock around hit()).
	 */
	bool unlocked;
};

typedef struct store store;

/*
 * The two lookups of a comparison identity (values: str() of the six
 * identity keys, in identity order): its exact cohort, successful and
 * baseline-eligible (the rolling baseline), and its (workload, variant, version) across
 * profiles, successful.
 */
void store_identity_queries(char *const *values, struct store_query *exact,
    struct store_query *cohort);

/* Whether a record satisfies a query (its keys and its filters). */
bool store_query_matches(const struct store_query *q, const cJSON *rec);

/*
 * The store every program uses, decided in one place: the --store value
 * opt when given, else $PERFORMANCE_TRACKING_ROOT when set, else
 * /tmp/perf-tracking. An empty value (set but empty) is used as the
 * reference uses it, as is: the working directory, returned as ".". A git
 * remote written without its "git+" prefix ("https://...", "ssh://...",
 * "git@host:path", "hf://...", any "scheme://") is refused with a hint, as
 * it would otherwise become a local directory named after the scheme.
 * Returns the spec, or NULL after reporting.
 */
const char *store_spec(const char *opt);

/*
 * Opens the history: spec is a directory, which must exist ("SPEC: no such
 * store" otherwise), a git store "git+URL" (read through its cache clone
 * under cache, NULL for the default: see git_store.h; the remote is
 * fetched first and must be reachable; an empty remote is an empty store),
 * or NULL for none. Returns NULL after reporting a store that cannot be
 * used.
 */
store *store_open_cache(const char *spec, const char *cache);
/* store_open_cache with the default cache. */
store *store_open(const char *spec);
/*
 * A scan that reads no record at all (in the store and its streams) warns
 * "SPEC: the store holds no records" unless this was called (a staging
 * root, say, that is empty by design).
 */
void store_empty_ok(store *s);

/*
 * Every record read by the full parser, without the raw-text prefilter or
 * the quick parser: what the fast path must always equal (the fuzzer, the
 * tests).
 */
void store_slow(store *s);

/*
 * Only these top-level keys of the records are needed (besides those the
 * queries and the store itself use): the rest is checked but not built.
 * keys must outlive the store. Default: every key.
 */
void store_want(store *s, const char *const *keys, size_t n);

/*
 * The most reader threads a scan uses (default: the CPUs, up to 4);
 * PERF_STORE_THREADS overrides it. One is cheapest in CPU when every
 * record is a hit (the hits are delivered under a lock).
 */
void store_threads(store *s, int n);

/* The most threads store_thread_count() ever answers. */
#define STORE_MAX_THREADS 64

/*
 * How many threads a pass over the store (or over what it read) uses:
 * PERF_STORE_THREADS when set (1 to STORE_MAX_THREADS; below 1 or not a
 * number: 1), else asked when above 0, else the CPUs; without the
 * variable, at most 4. What a scan uses (store_threads()), and what a
 * program that analyses the history on threads of its own should use.
 */
int store_thread_count(int asked);

/* Adds a JSON-lines history stream (file name, "-" for stdin). */
void store_add_stream(store *s, const char *file);

/*
 * Reads every record once and calls hit() for each that matches a query.
 * Returns 0 when the history was read (see *raised), -1 after reporting a
 * store that could not be read (an unreadable directory or stream).
 *
 * As the reference's loader, a record file that is not valid JSON is
 * skipped with a warning, while one that is not UTF-8 or whose value is
 * not an object makes every lookup fail: then *raised (when not NULL) is
 * set to a new string with the reference's exception text for the first
 * such file in path order, and hit() may still have been called.
 */
int store_scan(store *s, const struct store_query *q, int nq,
    void (*hit)(const struct store_hit *, void *), void *ctx, char **raised);

/*
 * store_scan, directory by directory: a record held in one top-level
 * directory of the store is complete when its done() comes, so that a
 * caller can analyse and release what it read there.
 */
int store_scan_units(store *s, const struct store_query *q, int nq,
    void (*hit)(const struct store_hit *, void *), const struct store_units *u,
    void *ctx, char **raised);

/*
 * The warnings of the last scan: records skipped as invalid JSON, history
 * files that could not be read (each reported with its file and line).
 */
size_t store_warnings(const store *s);

void store_close(store *s);

/* The directory the store's records are in (a git store's cache), or NULL for none. */
const char *store_root(const store *s);

/*
 * The store path of a record, "<S(model_id)>/<S(timestamp)>_<S(commit_sha
 * or "unknown")>.json", S being the reference's sanitize(); NULL when one
 * of those values is not a string.
 */
char *store_record_path(const cJSON *rec);

/*
 * The bytes a record is stored as: without perfkite's transient keys
 * (static_failures, comparison), indented by two spaces, no final newline
 * (as the reference writes them). Returns 0, or -1 for a non-finite number
 * (*where, when given, names it).
 */
int store_record_text(const cJSON *rec, buf *out, buf *where);

/*
 * The reference's timestamp of a record: str() of "timestamp" parsed as an
 * ISO instant; ISOTIME_MIN when missing, falsy or unparsable.
 */
int64_t store_record_instant(const cJSON *rec);

#endif
