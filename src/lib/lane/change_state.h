/*
 * change_state: the state file of perf-changes(1) --incremental, a cache
 * of the split step of every series, so that a run over a history that
 * only grew resumes each split where the last one stopped.
 *
 * The file is JSON lines. The first is the header: the format and the
 * options the splits depend on (change_state_header()); every other is
 * one series: its key, its length n, the SHA-256 of its first n values
 * (change_state_digest()), where the split resumes, its weak change
 * points and the comparisons its last merge made. Every line ends with a
 * member "sum", the SHA-256 of the line without it (change_state_line()).
 *
 * A state that cannot be used is stale, never an error: a checksum that
 * fails, a malformed line, a state of an earlier format (1, without
 * checksums) or one written for other options is ignored whole, with one
 * line naming the line of the file and why.
 */
#ifndef PERF_LANE_CHANGE_STATE_H
#define PERF_LANE_CHANGE_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/canon.h"
#include "lane/changes.h"

/* The split state of one series kept by --incremental. */
struct saved {
	char *series;		/* cohort key \x1e metric key */
	size_t n;
	char digest[SHA256_HEX];
	size_t resume, *early, nearly;
	struct changes_memo *memo;	/* the comparisons its last merge used */
	size_t nmemo;
	bool used;
};

/* The state read from a file, and the new one; threads take saved states at once. */
struct change_state {
	struct saved *saved;
	size_t nsaved;
	pthread_mutex_t lock;	/* of saved[].used */
	buf out;		/* the new state file */
};

#define CHANGE_STATE_INIT { .lock = PTHREAD_MUTEX_INITIALIZER }

/*
 * SHA-256 of the first n values as stored in memory (little-endian) into
 * hex and, in the same pass, of the first at values into at_hex when
 * at <= n.
 */
void change_state_digest(const double *x, size_t n, char hex[SHA256_HEX], size_t at,
    char at_hex[SHA256_HEX]);

/*
 * The saved state of a series of n points made from no more points, taken
 * (marked used) under the lock of st; NULL for none.
 */
struct saved *change_state_find(struct change_state *st, const char *series, size_t n);

/*
 * Appends o to out as a state line: its compact JSON with a last member
 * "sum", the SHA-256 of the line without that member, and a newline.
 */
void change_state_line(buf *out, const cJSON *o);

/*
 * The content of a state line s[0..len) (no newline) whose checksum holds,
 * NUL-terminated in place of its "sum" member; NULL with *why set when it
 * has none ("malformed state line, no checksum") or it fails ("checksum
 * mismatch").
 */
char *change_state_checked(char *s, size_t len, const char **why);

/* The header line of a state file for these options (the caller deletes it). */
cJSON *change_state_header(long window, double pvalue, bool all);

/*
 * Loads the state file path, written for the options whose header is
 * head, into st's saved states; a file that is not there is no
 * state; a state that cannot be used is ignored (above).
 */
void change_state_load(struct change_state *st, const char *path, const cJSON *head);

/* Appends the state line of a series, after its merge, to out. */
void change_state_keep(buf *out, const char *series, const char *hex,
    const struct changes_split *sp);

#endif
