/*
 * index: the store index (perfkite(7) "Store index"), a cache of a
 * directory store that lets a reader of a few cohorts read a few files.
 *
 * It lives in the store's hidden directory ".perfkite-index" (hidden, and
 * no "*.json" in it: the reference's loader and every record reader skip
 * it): a MANIFEST, and one file per cohort (the str() of workload_id,
 * variant_id and benchmark_version, as the lookups compare them) listing
 * each record file of the cohort with its identity, the inputs of the
 * successful and baseline-eligible filters, its timestamp and its path.
 *
 * The MANIFEST records, for every directory of the store, what it was
 * when indexed (inode, modification and change times); a reader stats
 * them and reads in full every directory that changed since, so that a
 * foreign write (a file added, removed, renamed over, a directory added
 * or renamed) is never missed and the answer equals a full scan. A file
 * rewritten in place, without a rename, changes no directory: that alone
 * is not seen until the directory changes or the index is rebuilt.
 *
 * The writers update it under the store's lock after placing their
 * records; a writer killed half-way leaves directories whose times no
 * longer match (read in full) or cohort files whose generation the
 * MANIFEST does not name (the index is then not used at all): stale,
 * never wrong. PERF_STORE_INDEX=0 turns it off for every reader.
 *
 * A git store's index is committed with the records. Inodes and times
 * mean nothing on another clone: its MANIFEST also records each
 * directory's git tree ("t" lines; for the store's top, whose tree holds
 * the index, the SHA-256 of its listing without it, its directories by
 * name alone), and a reader of a git store compares them with its HEAD's
 * (git ls-tree) instead. A directory HEAD's tree lacks is gone, whatever
 * the work tree (a partial clone's sparse checkout, sparse.h) holds.
 */
#ifndef PERF_LANE_STORE_INDEX_H
#define PERF_LANE_STORE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lane/store/read.h"

#define STORE_INDEX_DIR ".perfkite-index"

/* Whether readers and writers use the index (PERF_STORE_INDEX is not "0"). */
bool store_index_enabled(void);

/*
 * Brings the index of the directory store root up to date: the
 * directories that changed since it was written are read again (the
 * store-relative files written[0..n) always are), or, with full or
 * without a usable index, every directory. With git, root is the work
 * tree of a git store's clone and what changed is told by HEAD's trees;
 * a directory that changed is listed from them where it can be, and of
 * its files only those written and those whose blob moved are read
 * (checked out, in a partial clone: fetched).
 * The caller holds the store's lock. Returns 0, or -1 after reporting.
 */
int store_index_update(const char *root, char *const *written, size_t n, bool full, bool git);

/*
 * Records in the MANIFEST of the git work tree root the trees of what
 * git's index holds staged (the records and the index's other files;
 * env: NAME=VALUE entries for git, GIT_INDEX_FILE say, or NULL): to be
 * staged and committed with them. Returns 0, or -1 after reporting.
 */
int store_index_seal(const char *root, char *const *env);

/* What a scan reads when the index can answer its queries. */
struct store_index_plan {
	char **files;		/* store-relative record files, sorted */
	size_t nfiles;
	char **dirs;		/* directories that changed: read their files */
	size_t ndirs;
	char **known;		/* every directory the index covers, sorted */
	size_t nknown;
	size_t nrecords;	/* the records of the directories that did not change */
};

/*
 * The plan for the queries q[0..nq) on the store root, or NULL when the
 * index cannot answer them (none, unusable, disabled, or a query that
 * does not name a cohort). With hints, a query's newest and distinct are
 * honoured (no history stream is read beside the store). With git, root
 * is a git store's work tree, checked against its HEAD's trees.
 */
struct store_index_plan *store_index_plan(const char *root, const struct store_query *q,
    int nq, bool hints, bool git);

/* Whether the store-relative directory rel is one the plan covers. */
bool store_index_known(const struct store_index_plan *p, const char *rel);

void store_index_plan_free(struct store_index_plan *p);

#endif
