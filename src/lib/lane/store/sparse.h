/*
 * sparse: the work tree of a git store's partial clone (perfkite(7) "Git
 * store"). A fresh cache is cloned without blobs (--filter=blob:none)
 * and checked out sparsely (no-cone patterns): every hidden entry of the
 * store's top always (the store index, .perfkite-decisions, .perfkite's
 * bisect reports: what programs read through store_root() beside the
 * records, few and small), then only the record files a reader or
 * writer needs, git fetching their blobs from the remote as they are
 * checked out. A file the work tree lacks after that is not in the
 * commit checked out.
 */
#ifndef PERF_LANE_STORE_SPARSE_H
#define PERF_LANE_STORE_SPARSE_H

#include <stdbool.h>
#include <stddef.h>

/* In .git: this work tree is perfkite's sparse checkout of a partial clone. */
#define SPARSE_MARK "perfkite-sparse"

/* What a sparse checkout always holds (no-cone patterns, one a line). */
#define SPARSE_BASE "/.*\n"

/* Whether the git work tree root is such a sparse checkout. */
bool sparse_on(const char *root);

/* Every file of the tree checked out: sparse checkout off. 0, or -1 after reporting. */
int sparse_all(const char *root);

/*
 * Checks out, where root is sparse, the store-relative files[0..nf) (those
 * HEAD does not hold stay absent) and every record file ("*.json", none
 * hidden) that a walk of the directories dirs[0..nd) reads: in each,
 * and below it down to the directories for which known(rel, ctx) is
 * true (read on their own). 0, or -1 after reporting.
 */
int sparse_need(const char *root, char *const *files, size_t nf, char *const *dirs,
    size_t nd, bool (*known)(const char *rel, void *ctx), void *ctx);

/*
 * Checks out the store-relative file rel where root is sparse and HEAD
 * holds it (a writer about to look at or place it). 0, or -1 after reporting.
 */
int sparse_need_file(const char *root, const char *rel);

#endif
