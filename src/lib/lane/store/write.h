/*
 * write: writing the history store, a directory or a git remote
 * (perf-upload(1)).
 *
 * A directory store is written under an exclusive lock (the hidden file
 * ".perfkite-lock" in it), each record file created whole under a hidden
 * temporary name, fsync'ed and moved into place without ever replacing a
 * file. A batch is counted as one more revision in ".perfkite-revision"
 * before its first record is placed: after a crash the counter may count
 * a batch that added nothing, never records it did not count. The next
 * writer of a directory sweeps the temporary files killed writers left.
 * Concurrent writers take turns; readers never lock and never see a
 * partial file.
 *
 * A git store is written in its cache clone (see git_store.h): the batch's
 * files are committed together and the commit pushed.
 */
#ifndef PERF_LANE_STORE_WRITE_H
#define PERF_LANE_STORE_WRITE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct store_writer store_writer;

/*
 * Opens the store for writing (a missing directory is created). cache is
 * the --cache directory of a git store, or NULL for the default. A git
 * remote that cannot be reached leaves the store usable (its commits wait
 * in the cache): store_writer_remote_error() says why. NULL after reporting.
 */
store_writer *store_writer_open(const char *spec, const char *cache);

/*
 * Opens the store only to look at it: a directory store is neither
 * created nor locked (a git store's cache is still fetched).
 */
store_writer *store_writer_open_readonly(const char *spec, const char *cache);

/* The store for messages ("dir" or the remote without its password). */
const char *store_writer_shown(const store_writer *w);
/* The directory the record files are in (the cache's work tree for git). */
const char *store_writer_dir(const store_writer *w);
/* Why the git remote could not be reached, or NULL. */
const char *store_writer_remote_error(const store_writer *w);

enum store_writer_have { STOREW_ABSENT, STOREW_SAME, STOREW_OTHER, STOREW_ERROR };

/* What the store holds at rel (store-relative) compared with the n bytes. */
enum store_writer_have store_writer_check(store_writer *w, const char *rel, const char *data, size_t n);

/*
 * Writes a new record file (its directories are made). Returns 0; 1 when
 * a file is already there (left as it is: a racing writer won); -1 after
 * reporting another problem.
 */
int store_writer_put(store_writer *w, const char *rel, const char *data, size_t n);

/*
 * Makes the files written since the last call a revision of the store:
 * for git, one commit with message msg, pushed (retried when the remote
 * moved). Returns 0; 1 when they are committed but could not be pushed
 * (they wait in the cache); -1 after reporting another problem.
 */
int store_writer_commit(store_writer *w, const char *msg);

/* The store's current revision (a counter or the remote head), or NULL for none. */
const char *store_writer_revision(const store_writer *w);

/*
 * The compare-and-swap of a seed upload: adds the n files (none of which
 * may exist) as the revision that follows store_writer_revision(), or fails
 * without changing anything when the store moved since it was opened.
 * Returns 0 with the new revision in out, or -1 after reporting.
 */
int store_writer_swap(store_writer *w, char *const *rel, char *const *data, const size_t *len,
    size_t n, const char *msg, char out[64]);

/*
 * Whether the store keeps an index (its ".perfkite-index" exists and
 * PERF_STORE_INDEX is not 0): then every commit updates it (index.h).
 */
bool store_writer_indexed(const store_writer *w);

/*
 * Builds the store's index, or repairs it (full: from nothing); a git
 * store's is committed and pushed. Returns 0, or -1 after reporting.
 */
int store_writer_reindex(store_writer *w, bool full);

void store_writer_close(store_writer *w);

#endif
