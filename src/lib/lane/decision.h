/*
 * decision: the reviewed decisions on a cohort's history (perf-seed(1)
 * accept, acknowledge, invalid, revert; perfkite(7) "Decisions").
 *
 * A decision is a record of its own kind, never a tracking record: it is
 * stored as "<store>/.perfkite-decisions/<id>.decision", a hidden
 * directory and a name that is not "*.json", so that neither the
 * reference's loader nor perfkite's tracking-record reader ever reads it.
 * Decisions are append-only: a revert names the decision it undoes, and
 * for one (cohort, metric, record) the newest decision still in force
 * wins.
 */
#ifndef PERF_LANE_DECISION_H
#define PERF_LANE_DECISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "lane/identity.h"
#include "lane/policy.h"

#define DECISIONS_DIR ".perfkite-decisions"
#define DECISION_SUFFIX ".decision"
#define DECISION_ID_LEN 16

enum decision_kind { DECISION_ACCEPT, DECISION_ACKNOWLEDGE, DECISION_INVALID, DECISION_REVERT };

struct decision {
	char *id;
	enum decision_kind kind;
	char *by, *when, *reason, *link;	/* link NULL when none */
	int64_t instant;		/* of when */
	char *identity[IDENTITY_KEYS];	/* str() of each identity value */
	bool metric[METRIC_COUNT];
	/*
	 * Named metrics (lane/named_metric.h) by their name within the
	 * cohort, sorted, no duplicate; stored as "named_metrics", a member
	 * written only when there is one, so that a decision on the six
	 * keeps its bytes and its id.
	 */
	char **named;
	size_t nnamed;
	char *record;			/* the store path of the record it applies to */
	char *record_timestamp, *commit;
	int64_t record_instant;
	char *reverts;			/* a revert's decision, else NULL */
	bool in_force;			/* not reverted (set by decisions_load) */
	char *path;			/* where it is stored, store-relative */
};

struct decisions {
	struct decision *d;	/* newest first: by (when, id) descending */
	size_t n;
};

/* "accept", "acknowledge", "invalid", "revert". */
const char *decision_kind_name(enum decision_kind k);
/* The state a decision gives a change point: "accepted", "acknowledged", "invalid". */
const char *decision_state_name(enum decision_kind k);
/* The kind named s; false when s names none. */
bool decision_kind_of(const char *s, enum decision_kind *k);

/*
 * The stored object of a decision (its members in the documented order),
 * its id computed: the first 16 hex digits of the SHA-256 of the
 * canonical JSON of the object without "id". d->id is set to it.
 */
cJSON *decision_json(struct decision *d);

/* The store path of a decision: ".perfkite-decisions/<id>.decision" (new string). */
char *decision_path(const char *id);

/* d->record_instant from d->record_timestamp: ISOTIME_MIN when none or unparsable. */
void decision_set_record_instant(struct decision *d);

/*
 * Reads a stored decision; NULL when it is one, or why not (a new string).
 * d's strings become the caller's (decision_free).
 */
char *decision_parse(const cJSON *o, struct decision *d);
void decision_free(struct decision *d);

/*
 * Loads every decision of the store directory dir (a missing directory or
 * decisions directory is none), newest first, with in_force set. Returns
 * 0, or -1 after reporting a decision file that cannot be read (its name).
 */
int decisions_load(const char *dir, struct decisions *ds);
void decisions_free(struct decisions *ds);

/*
 * (a, ap) against (b, bp) in window order: by instant, then by store path;
 * below, at or above 0 like strcmp.
 */
int decision_order(int64_t a, const char *ap, int64_t b, const char *bp);

/* The decision with that id, or NULL. */
const struct decision *decisions_find(const struct decisions *ds, const char *id);

/* Adds the named metric name to d (kept sorted, once). */
void decision_add_named(struct decision *d, const char *name);

/* Whether the decision is on the named metric name. */
bool decision_on_named(const struct decision *d, const char *name);

/* Whether the decision is on the cohort of the identity values v. */
bool decision_on(const struct decision *d, char *const *v);

/*
 * The newest decision in force (never a revert) on the record (store path)
 * of the cohort v for metric m, or NULL.
 */
const struct decision *decisions_latest(const struct decisions *ds, char *const *v, int m,
    const char *record);

/*
 * The accept in force for metric m of the cohort v whose record is the
 * latest ((record instant, record path) greatest): where the metric's
 * baseline starts afresh. NULL when none.
 */
const struct decision *decisions_accept(const struct decisions *ds, char *const *v, int m);

/*
 * The accept in force for metric m of the cohort v whose record lies after
 * (lo, lo_path) and at or before (hi, hi_path), in window order: a change
 * point between those records is the accepted change. NULL when none.
 */
const struct decision *decisions_accept_between(const struct decisions *ds, char *const *v,
    int m, int64_t lo, const char *lo_path, int64_t hi, const char *hi_path);

/*
 * decisions_latest, decisions_accept and decisions_accept_between for the
 * named metric name (its name within the cohort) instead of one of the six.
 */
const struct decision *decisions_latest_named(const struct decisions *ds, char *const *v,
    const char *name, const char *record);
const struct decision *decisions_accept_named(const struct decisions *ds, char *const *v,
    const char *name);
const struct decision *decisions_accept_between_named(const struct decisions *ds,
    char *const *v, const char *name, int64_t lo, const char *lo_path, int64_t hi,
    const char *hi_path);

/*
 * Whether a record of the cohort (at instant, stored at path) is in the
 * baseline that the accept a starts, for its metrics: never a record before
 * the accepted one ((instant, path) order); the accepted record itself
 * (eligible like a seed); a record the store's rule makes eligible
 * (eligible); and a scheduled-main REGRESSION that ran before the accept
 * was decided (it failed only against the level the accept replaced).
 */
bool decision_admits(const struct decision *a, int64_t instant, const char *path,
    const cJSON *rec, bool eligible);

#endif
