/*
 * cohort: the series of perf-changes(1), the change points of the history.
 * A comparison cohort (the exact identity of a v2 record, model and GPU
 * of a legacy one) holds the points of its records, compact, until it is
 * analysed: read from the store directory by directory, a cohort is
 * analysed as soon as every directory it came from has been read whole,
 * on the reader's thread; points held past spill_at bytes go to an
 * unlinked spill file. Each named metric of a cohort is a series
 * of its own, keyed by the cohort's key, \x1d and its name.
 *
 * What the analysis of one cohort is (cs->finish) is the caller's; the
 * cohorts are analysed on up to PERF_STORE_THREADS threads, and each
 * keeps its own results, so that they do not depend on the threads.
 */
#ifndef PERF_LANE_COHORT_H
#define PERF_LANE_COHORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/strmap.h"
#include "lane/changes.h"
#include "lane/history.h"
#include "lane/identity.h"
#include "lane/named_metric.h"
#include "lane/policy.h"
#include "lane/store/read.h"

/*
 * The members of a record a change-point analysis reads, by position in
 * wanted[]: found in one pass over the record (cohort_view()) rather than
 * looked up one by one; the last four decide whether it is a measurement
 * (cohort_measured()).
 */
enum {
	W_MODEL, W_GPU, W_TIMESTAMP, W_COMMIT, W_SCHEMA,
	W_IDENT,			/* identity_keys[], in their order */
	W_METRIC = W_IDENT + IDENTITY_KEYS,	/* metric_table[], in its order */
	W_SUCCESS = W_METRIC + METRIC_COUNT,
	W_ELIGIBLE, W_SOURCE, W_STATUS,
	W_NAMED, W_POLICY,		/* the named metrics, and their policy */
	W_KEYS
};

/* A record's members of wanted[] (json_get()'s: the first of a name), NULL when absent. */
struct view {
	const cJSON *v[W_KEYS];
};

/* A named metric of a record, with its direction as its policy resolves it. */
struct named_point {
	const struct named_metric *m;
	enum better better;
};

/*
 * Where a cohort stands while a store is read directory by directory: its
 * records are analysed and released once every directory they came from
 * has been read whole; one that turns up in another directory after that
 * spans directories and is read again at the end.
 */
enum phase { COLLECTING, ANALYSING, ANALYSED, SPANNING };

/*
 * A comparison cohort, its records and its change points: who it is,
 * the values of its series, what is shown of it, and what its analysis
 * found.
 */
struct cohort {
	/* Identity. */
	char *key;		/* kind and identity, joined by \x1f (then \x1d and a name) */
	size_t base_len;	/* of key, the kind and identity */
	char *name;		/* a named metric's series: its name; NULL: the six */
	struct cohort *base;	/* a named metric's series: the cohort's six */
	bool v2;
	char *ident[IDENTITY_KEYS];	/* v2: str() of the identity keys */
	/* The series: its points while read, held or spilled, then analysed. */
	buf pending;		/* its points read and not spilled (encode_point) */
	struct chunk *chunks;	/* its points spilled, in the order read */
	size_t nchunks;
	struct history h;	/* its points while it is analysed */
	struct skipped *skipped;	/* its records that are no measurement */
	size_t nskipped;
	enum phase phase;
	bool again;		/* read again in the second pass */
	size_t *units, nunits;	/* the store directories it was read from */
	size_t open;		/* of those, the ones not read whole yet */
	/* Provenance and display: of its latest record. */
	char *model, *gpu;
	int64_t latest_instant;
	char *latest_path;
	enum better better;	/* a named metric's direction */
	char *unit;		/* a named metric's unit */
	/* What its analysis found. */
	struct found *found;
	size_t nfound;
	buf state;		/* its lines of the new state file */
};

/*
 * A record that is no measurement: its instant, and a hash of its store
 * path, so that a stream repeating a store's record counts it once.
 */
struct skipped {
	int64_t instant;
	uint64_t key;
};

/* Points of a cohort written to the spill file. */
struct chunk {
	off_t off;
	size_t len;
};

/* The timestamp, commit and path of a record at a change point. */
enum { AT_TIMESTAMP, AT_COMMIT, AT_PATH, AT_FIELDS };

/* A reported change point. */
struct found {
	const struct cohort *c;
	int metric;		/* of the six; a named metric's series: 0 */
	bool worse;
	struct change_point cp;
	bool tentative;		/* fewer than --min-points records on a side */
	size_t untrusted;	/* records no measurement between before and at */
	char *at[AT_FIELDS], *before[AT_FIELDS];
};

/* The cohorts with records in one directory of the store. */
struct touched {
	struct cohort **c;
	size_t n;
};

/*
 * The cohorts of one analysis and what they hold while the history is
 * read; reader and analysis threads share it under its lock.
 * COHORTS_INIT, then finish (and arg) set, before anything is read.
 */
struct cohorts {
	/* The cohorts, by key. */
	struct cohort **c;
	size_t n, cap;
	struct strmap cohorts;	/* key to struct cohort, of c[] */
	pthread_mutex_t lock;	/* the cohorts, while the store is read */
	/* Reading the store directory by directory. */
	bool by_unit;		/* analysing directory by directory */
	bool again;		/* the second pass, over cohorts that span them */
	struct touched *touched;	/* by store unit */
	char **unit_name;
	size_t nunits;
	/* The points held, and spilled. */
	size_t pending;		/* bytes held for points, all cohorts together */
	size_t spill_at;	/* spill them all when they pass this */
	int spill_fd;		/* the spill file (unlinked), or -1 */
	off_t spill_off;
	/* The analysis: what it does with a cohort read whole, and its threads. */
	void (*finish)(struct cohort *c, void *arg);
	void *arg;
	struct cohort **todo;	/* analysed when every record is read */
	size_t ntodo, next;
};

#define COHORTS_INIT { .lock = PTHREAD_MUTEX_INITIALIZER, .spill_at = 4 << 20, .spill_fd = -1 }

/*
 * wanted[] made whole (the identity keys and the six metrics' keys filled
 * in), and its keyset; once, before anything is read.
 */
struct json_keyset *cohort_keyset(void);

/* wanted[], W_KEYS names, made whole by cohort_keyset(). */
const char *const *cohort_wanted(void);

/* A record's members of wanted[] into w (the first of a name; NULL when absent). */
void cohort_view(const struct json_keyset *ks, const cJSON *rec, struct view *w);

/*
 * The cohort key of a record into b ("v2" and the identity, or "legacy",
 * model and GPU, joined by \x1f); false for an incomplete v2 identity,
 * which is never compared (as the rolling gate).
 */
bool cohort_key(const struct view *w, buf *b);

/*
 * Whether a record is a measurement of its series: every record with
 * all; else one the rolling gate trusts as a baseline, and every
 * scheduled-main run that measured, whatever the gate said of it.
 */
bool cohort_measured(const struct view *w, bool all);

/*
 * The cohort of key (made by cohort_key() from rec, the first base_len
 * bytes; then, for a named metric's series, \x1d and its name), created
 * when new; under the lock of cs.
 */
struct cohort *cohort_find(struct cohorts *cs, const char *key, size_t base_len,
    const cJSON *rec);

/*
 * One series of a record into its cohort, keyed by b (cohort_key(),
 * base_len bytes of it, then the name of the named metric nm; NULL: the
 * six): a point when point, else its instant alone. Takes the lock of cs;
 * spills the held points when they pass spill_at. The point is encoded
 * after the key in b, which keeps it.
 */
void cohort_add_series(struct cohorts *cs, const struct store_hit *h, const struct view *w,
    buf *b, size_t base_len, const struct named_point *nm, bool point);

/*
 * The points of a cohort, spilled and held, in the order read, into b,
 * then dropped from the cohort (cohort_drop_points()). Exits when the
 * spill file cannot be read back.
 */
void cohort_load_points(struct cohorts *cs, struct cohort *c, buf *b);

/*
 * Drops the points of a cohort (read into its history, or to be read
 * again); under the lock of cs while reader threads run.
 */
void cohort_drop_points(struct cohorts *cs, struct cohort *c);

/*
 * The points of s[0..len) (cohort_load_points()) into the history of c,
 * whose strings stay in s; the model and GPU of the latest point kept
 * become the cohort's.
 */
void cohort_decode_points(struct cohort *c, char *s, size_t len);

/* The timestamp, commit and path of point i of a cohort, copied. */
void cohort_point_fields(const struct cohort *c, size_t i, char *f[AT_FIELDS]);

/*
 * How many records of a cohort that are no measurement lie strictly
 * between the timestamps of its points index - 1 and index.
 */
size_t cohort_between(const struct cohort *c, size_t index);

/* Forgets the change points and state lines of a cohort. */
void cohort_forget(struct cohort *c);

/*
 * Analyses (cs->finish) the cohorts still collecting, on as many threads
 * as the store is read with (store_thread_count(0)).
 */
void cohort_analyse_all(struct cohorts *cs);

/*
 * For store_units.done, reading directory by directory: the cohorts of
 * directory u found in no directory still being read are analysed
 * (cs->finish) on the calling thread.
 */
void cohort_unit_done(struct cohorts *cs, size_t u, const char *name);

/*
 * For store_units.want in the second pass: whether directory name holds
 * a cohort read again.
 */
bool cohort_want_unit(const struct cohorts *cs, const char *name);

#endif
