/*
 * git_store: a history store kept in a git repository (perf-upload(1) "Git
 * store"): "git+URL", any remote git reaches, a Hugging Face dataset
 * repository over https among them.
 *
 * The store is read and written through a local clone, the cache, under
 * --cache DIR (default $PERF_STORE_CACHE, else $XDG_CACHE_HOME/perfkite,
 * else ~/.cache/perfkite), one clone per remote. The cache is only ever
 * touched under an exclusive lock (a file beside it, held by git's
 * children too), so uploaders and readers on one machine take turns.
 * Opening the store fetches the remote and puts the commits of an earlier
 * run that were never pushed on top of what was fetched; whatever a killed
 * run left behind (git's lock files, a half rebase, files never
 * committed) is cleared first.
 */
#ifndef PERF_LANE_STORE_GIT_STORE_H
#define PERF_LANE_STORE_GIT_STORE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gitstore gitstore;

/* True when spec names a git store ("git+..."). */
bool gitstore_is_spec(const char *spec);

/*
 * Opens the store: locks, clones or recovers the cache, fetches, rebases
 * local commits (where both changed the store index, the remote's copy is
 * taken: stale for the local records, which its readers see). With offline_ok, a fetch that fails is remembered (see
 * gitstore_remote_error) and the cache is used as it is; otherwise it is
 * reported and NULL returned. NULL after reporting any other problem.
 */
gitstore *gitstore_open(const char *spec, const char *cache, bool offline_ok);

/* Where the cache clone of the store spec is (or will be), a new string. */
char *gitstore_cache_dir(const char *spec, const char *cache);

/* The work tree of the cache: the store as a directory. */
const char *gitstore_dir(const gitstore *g);
/* The remote, its password (if any) removed, for messages. */
const char *gitstore_shown(const gitstore *g);
/* Why the remote could not be reached when the store was opened, or NULL. */
const char *gitstore_remote_error(const gitstore *g);

/* The remote branch's commit as fetched (40 hex), or NULL for an empty remote. */
const char *gitstore_head(const gitstore *g);

/*
 * Commits the files at paths (store-relative, already written in the work
 * tree) as one commit with message msg; with index, the store index as
 * its writer left it in the work tree too, its MANIFEST sealed with the
 * commit's trees (index.h). Nothing to commit: nothing is. Returns 0, or
 * -1 after reporting.
 */
int gitstore_commit(gitstore *g, char *const *paths, size_t n, const char *msg,
    bool index);

/*
 * Pushes the commits that are not on the remote yet (none: nothing
 * happens). A push rejected because the remote moved is fetched, rebased
 * and tried again, up to tries times in all. Returns 0, or -1 after
 * reporting.
 */
int gitstore_push(gitstore *g, int tries);

/* The number of local commits not on the remote. */
long gitstore_unpushed(gitstore *g);

/*
 * Compare-and-swap: one commit whose parent is the fetched head (a root
 * commit for an empty remote) adding files[i] with bytes[i]/len[i], pushed
 * without force. A remote that moved since it was fetched rejects it:
 * then nothing is retried. Returns 0 with the commit in out (41 bytes),
 * or -1 after reporting.
 */
int gitstore_commit_on_head(gitstore *g, char *const *files, char *const *bytes,
    const size_t *len, size_t n, const char *msg, char out[41]);

/* Unlocks and releases. */
void gitstore_close(gitstore *g);

/*
 * gitstore_close for a caller that wrote nothing in the work tree: the
 * next gitstore_open skips clearing what a killed run may have left
 * (a git reset and clean, which read every file of the store).
 */
void gitstore_close_clean(gitstore *g);

/*
 * Publishes the directory dir (a site, say) as the whole tree of a branch
 * of the git remote spec, "git+URL#branch" (branch defaults to
 * def_branch), as the store reaches its remote (core/git.h: no
 * prompts, the token through GIT_ASKPASS, never on a command line): one
 * commit without a parent, message msg, force-pushed, so that the branch
 * holds the latest publication only and never grows. dir is not changed
 * (git's own files go to a scratch directory, removed after). Returns 0,
 * or -1 after reporting, the remote's password never shown.
 */
int gitstore_publish(const char *spec, const char *def_branch, const char *dir,
    const char *msg);

#endif
