#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/err.h"
#include "core/lock.h"
#include "lane/store/git_store.h"
#include "lane/store/index.h"
#include "lane/store/sparse.h"
#include "lane/store/write.h"

#define LOCK_FILE ".perfkite-lock"
#define REVISION_FILE ".perfkite-revision"

struct store_writer {
	gitstore *git;		/* NULL for a directory store */
	char *dir;
	int lockfd;
	char revision[64];	/* "" for none */
	bool counted;		/* the batch's revision is counted already */
	char **added;		/* files put since the last commit */
	size_t nadded;
	char **swept;		/* directories swept of temporary files */
	size_t nswept;
};

/*
 * Removes what killed writers left in dir (their temporary files, older
 * than ATOMIC_STALE_AGE), once per directory, so that a store that is
 * itself a git work tree never commits them.
 */
static void
sweep(store_writer *w, const char *dir)
{
	for (size_t i = 0; i < w->nswept; i++)
		if (strcmp(w->swept[i], dir) == 0)
			return;
	w->swept = erealloc(w->swept, (w->nswept + 1) * sizeof *w->swept);
	w->swept[w->nswept++] = estrdup(dir);
	atomic_sweep(dir, ATOMIC_STALE_AGE);
}

/* The directory store's revision counter: 0 when there is none yet. */
static int
read_revision(store_writer *w, long long *v)
{
	char *path = easprintf("%s/" REVISION_FILE, w->dir), text[64];
	ssize_t n;
	int fd;

	*v = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		free(path);
		return errno == ENOENT ? 0 : -1;
	}
	n = read(fd, text, sizeof text - 1);
	close(fd);
	free(path);
	if (n < 0)
		return -1;
	text[n] = '\0';
	*v = strtoll(text, NULL, 10);
	return 0;
}

static int
write_revision(store_writer *w, long long v)
{
	char *path = easprintf("%s/" REVISION_FILE, w->dir), text[32];
	int rc, n = snprintf(text, sizeof text, "%lld\n", v);

	rc = atomic_write_file(path, text, (size_t)n);
	if (rc != 0)
		warn("%s: cannot write", path);
	free(path);
	return rc;
}

static int
open_dir(store_writer *w, const char *spec, bool readonly)
{
	char *path;
	long long rev;

	w->dir = estrdup(spec);
	if (readonly)
		goto revision;
	if (atomic_mkdirs(spec) != 0) {
		warn("%s: cannot create the store", spec);
		return -1;
	}
	path = easprintf("%s/" LOCK_FILE, spec);
	w->lockfd = lock_open(path, 0);
	if (w->lockfd < 0) {
		warn("%s: cannot lock the store", path);
		free(path);
		return -1;
	}
	free(path);
	sweep(w, spec);
revision:
	if (read_revision(w, &rev) != 0) {
		warn("%s/" REVISION_FILE ": cannot read", spec);
		return -1;
	}
	snprintf(w->revision, sizeof w->revision, "%lld", rev);
	return 0;
}

static store_writer *
open_store(const char *spec, const char *cache, bool readonly)
{
	store_writer *w = ecalloc(1, sizeof *w);

	w->lockfd = -1;
	if (gitstore_is_spec(spec)) {
		if ((w->git = gitstore_open(spec, cache, true)) == NULL) {
			free(w);
			return NULL;
		}
		w->dir = estrdup(gitstore_dir(w->git));
		if (gitstore_head(w->git) != NULL)
			snprintf(w->revision, sizeof w->revision, "%s", gitstore_head(w->git));
		return w;
	}
	if (open_dir(w, spec, readonly) != 0) {
		store_writer_close(w);
		return NULL;
	}
	return w;
}

store_writer *
store_writer_open(const char *spec, const char *cache)
{
	return open_store(spec, cache, false);
}

store_writer *
store_writer_open_readonly(const char *spec, const char *cache)
{
	return open_store(spec, cache, true);
}

const char *
store_writer_shown(const store_writer *w)
{
	return w->git != NULL ? gitstore_shown(w->git) : w->dir;
}

const char *
store_writer_dir(const store_writer *w)
{
	return w->dir;
}

const char *
store_writer_remote_error(const store_writer *w)
{
	return w->git != NULL ? gitstore_remote_error(w->git) : NULL;
}

const char *
store_writer_revision(const store_writer *w)
{
	return w->revision[0] != '\0' ? w->revision : NULL;
}

enum store_writer_have
store_writer_check(store_writer *w, const char *rel, const char *data, size_t n)
{
	char *path = easprintf("%s/%s", w->dir, rel);
	enum store_writer_have have = STOREW_OTHER;
	struct stat st;
	buf b = BUF_INIT;
	char chunk[65536];
	ssize_t r;
	int fd;

	/* A partial clone's file that is not checked out yet (sparse.h). */
	if (w->git != NULL && sparse_need_file(w->dir, rel) != 0) {
		free(path);
		return STOREW_ERROR;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		have = errno == ENOENT || errno == ENOTDIR ? STOREW_ABSENT : STOREW_ERROR;
		if (have == STOREW_ERROR)
			warn("%s: cannot read", path);
		free(path);
		return have;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == n) {
		while ((r = read(fd, chunk, sizeof chunk)) > 0)
			buf_add(&b, chunk, (size_t)r);
		if (r < 0) {
			warn("%s: cannot read", path);
			have = STOREW_ERROR;
		} else if (b.len == n && (n == 0 || memcmp(b.s, data, n) == 0))
			have = STOREW_SAME;
	}
	close(fd);
	buf_free(&b);
	free(path);
	return have;
}

int
store_writer_put(store_writer *w, const char *rel, const char *data, size_t n)
{
	char *path = easprintf("%s/%s", w->dir, rel), *slash = strrchr(path, '/');
	int rc = 0;

	if (w->git != NULL && sparse_need_file(w->dir, rel) != 0) {
		free(path);
		return -1;
	}
	*slash = '\0';
	if (atomic_mkdirs(path) != 0) {
		warn("%s: cannot create", path);
		free(path);
		return -1;
	}
	if (w->git == NULL)
		sweep(w, path);
	*slash = '/';
	/*
	 * The revision is counted before the batch's first record is placed:
	 * a writer killed half-way leaves a counter that counts its batch
	 * (perhaps one that added nothing), never records it did not count.
	 */
	if (w->git == NULL && !w->counted) {
		long long rev = w->revision[0] != '\0' ? strtoll(w->revision, NULL, 10) : 0;

		if (write_revision(w, rev + 1) != 0) {
			free(path);
			return -1;
		}
		snprintf(w->revision, sizeof w->revision, "%lld", rev + 1);
		w->counted = true;
	}
	if (atomic_create_file(path, data, n) != 0) {
		if (errno == EEXIST)
			rc = 1;
		else {
			warn("%s: cannot write", path);
			rc = -1;
		}
	} else {
		w->added = erealloc(w->added, (w->nadded + 1) * sizeof *w->added);
		w->added[w->nadded++] = estrdup(rel);
	}
	free(path);
	return rc;
}

bool
store_writer_indexed(const store_writer *w)
{
	char *path = easprintf("%s/" STORE_INDEX_DIR, w->dir);
	struct stat st;
	bool has = store_index_enabled() && lstat(path, &st) == 0 && S_ISDIR(st.st_mode);

	free(path);
	return has;
}

int
store_writer_reindex(store_writer *w, bool full)
{
	if (w->git == NULL)
		return store_index_update(w->dir, NULL, 0, full, false);
	if (store_index_update(w->dir, NULL, 0, full, true) != 0 ||
	    gitstore_commit(w->git, NULL, 0, "perfkite: the store index built anew", true) != 0)
		return -1;
	if (gitstore_unpushed(w->git) == 0)
		return 0;
	if (gitstore_remote_error(w->git) != NULL) {
		warnx("%s: cannot reach the store: %s", gitstore_shown(w->git),
		    gitstore_remote_error(w->git));
		return -1;
	}
	return gitstore_push(w->git, 20);
}

static void
forget_added(store_writer *w)
{
	for (size_t i = 0; i < w->nadded; i++)
		free(w->added[i]);
	free(w->added);
	w->added = NULL;
	w->nadded = 0;
}

int
store_writer_commit(store_writer *w, const char *msg)
{
	int rc = 0;

	if (w->git == NULL) {
		/* Counted when its first record was placed (store_writer_put). */
		w->counted = false;
		/*
		 * A store with an index gets the batch in it, still under the
		 * lock. The records are in place already: an index that could
		 * not be written is stale, which its readers see (index.h).
		 */
		if (w->nadded > 0 && store_writer_indexed(w))
			store_index_update(w->dir, w->added, w->nadded, false, false);
		forget_added(w);
		return 0;
	}
	/*
	 * An index the store has is brought up to date and committed with the
	 * records; one that could not be is left as it was: stale, which its
	 * readers see by the trees.
	 */
	if (w->nadded > 0) {
		bool indexed = store_writer_indexed(w) &&
		    store_index_update(w->dir, w->added, w->nadded, false, true) == 0;

		if (gitstore_commit(w->git, w->added, w->nadded, msg, indexed) != 0)
			rc = -1;
	}
	forget_added(w);
	if (rc != 0)
		return -1;
	if (gitstore_remote_error(w->git) != NULL)
		return 1;	/* the remote is out of reach: reported when opened */
	if (gitstore_unpushed(w->git) == 0)
		return 0;
	return gitstore_push(w->git, 20) == 0 ? 0 : 1;
}

int
store_writer_swap(store_writer *w, char *const *rel, char *const *data, const size_t *len,
    size_t n, const char *msg, char out[64])
{
	char commit[41];
	size_t i, j;

	if (w->git != NULL) {
		if (gitstore_remote_error(w->git) != NULL) {
			warnx("%s: cannot reach the store: %s", gitstore_shown(w->git),
			    gitstore_remote_error(w->git));
			return -1;
		}
		if (gitstore_commit_on_head(w->git, rel, data, len, n, msg, commit) != 0)
			return -1;
		snprintf(out, 64, "%s", commit);
		return 0;
	}
	/* Under the store's lock since it was opened: nothing moved meanwhile. */
	for (i = 0; i < n; i++)
		if (store_writer_put(w, rel[i], data[i], len[i]) != 0) {
			warnx("%s/%s: the seed was not added", w->dir, rel[i]);
			break;
		}
	if (i < n) {
		for (j = 0; j < w->nadded; j++) {
			char *path = easprintf("%s/%s", w->dir, w->added[j]);

			unlink(path);
			free(path);
		}
		forget_added(w);
		return -1;
	}
	snprintf(out, 64, "%s", w->revision);
	return store_writer_commit(w, msg);
}

void
store_writer_close(store_writer *w)
{
	if (w == NULL)
		return;
	gitstore_close(w->git);
	if (w->lockfd >= 0)
		close(w->lockfd);
	forget_added(w);
	for (size_t i = 0; i < w->nswept; i++)
		free(w->swept[i]);
	free(w->swept);
	free(w->dir);
	free(w);
}
