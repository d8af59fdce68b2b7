#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/canon.h"
#include "core/err.h"
#include "core/git.h"
#include "core/lock.h"
#include "core/text.h"
#include "lane/store/git_store.h"
#include "lane/store/index.h"
#include "lane/store/sparse.h"

struct gitstore {
	char *url;		/* the remote as git reads it */
	char *shown;		/* the remote for messages */
	char *dir;		/* the cache clone */
	char *branch;		/* the remote's default branch */
	char *tracking;		/* "refs/remotes/origin/<branch>" */
	char head[41];		/* the fetched remote head, "" for none */
	char *remote_error;	/* why the fetch failed, or NULL */
	int lockfd;
	bool fresh;		/* opened: the work tree was clean then */
};

/* In .git: the last user of the cache left it clean (gitstore_close_clean). */
#define CLEAN_MARK "perfkite-clean"

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

bool
gitstore_is_spec(const char *spec)
{
	return spec != NULL && strncmp(spec, "git+", 4) == 0;
}

/* Runs git in the cache; on failure reports "what: <git's error>". */
static int
run(gitstore *g, const char *what, const char *const *args, const char *in,
    size_t n, buf *out)
{
	buf err = BUF_INIT;
	char *msg;
	int rc = git_run(g->dir, args, in, n, out, &err);

	if (rc != 0 && what != NULL) {
		msg = git_last_error(&err);
		warnx("%s: %s: %s", g->shown, what, msg);
		free(msg);
	}
	buf_free(&err);
	return rc;
}

/* The output of a git command that prints one line, or NULL. */
static char *
line_of(gitstore *g, const char *const *args)
{
	buf out = BUF_INIT;
	size_t n;

	if (run(g, NULL, args, NULL, 0, &out) != 0 || out.len == 0) {
		buf_free(&out);
		return NULL;
	}
	n = strcspn(out.s, "\r\n");
	out.s[n] = '\0';
	if (n == 0) {
		buf_free(&out);
		return NULL;
	}
	return buf_detach(&out);
}

static char *
default_cache(void)
{
	const char *v;

	if ((v = getenv("PERF_STORE_CACHE")) != NULL && *v != '\0')
		return estrdup(v);
	if ((v = getenv("XDG_CACHE_HOME")) != NULL && *v == '/')
		return easprintf("%s/perfkite", v);
	if ((v = getenv("HOME")) != NULL && *v != '\0')
		return easprintf("%s/.cache/perfkite", v);
	return estrdup("/tmp/perfkite-cache");
}

/* "<cache>/<readable name>-<12 hex of the remote's digest>" */
static char *
cache_path(const char *cache, const char *url, const char *shown)
{
	char hex[SHA256_HEX], *name, *s, *p;
	const char *from = strstr(shown, "://");

	canon_sha256_hex(url, strlen(url), hex);
	name = text_sanitize(from != NULL ? from + 3 : shown);
	if (strlen(name) > 60)
		name[60] = '\0';
	for (p = name; *p == '_'; p++)
		;
	s = easprintf("%s/%s-%.12s", cache, *p != '\0' ? p : "store", hex);
	free(name);
	return s;
}

/* Removes what a killed run may have left in .git: lock files, a rebase. */
static void
clear_stale_locks(const char *dir)
{
	DIR *d;
	struct dirent *e;
	char *path;
	size_t n;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, "objects") == 0)
			continue;
		path = easprintf("%s/%s", dir, e->d_name);
		n = strlen(e->d_name);
		if (n > 5 && strcmp(e->d_name + n - 5, ".lock") == 0)
			unlink(path);
		else if (e->d_type == DT_DIR)
			clear_stale_locks(path);
		free(path);
	}
	closedir(d);
}

static void
recover(gitstore *g)
{
	char *git = easprintf("%s/.git", g->dir), *p;
	struct stat st;

	/* Under the lock no git runs here: every lock file is stale. */
	clear_stale_locks(git);
	p = easprintf("%s/rebase-merge", git);
	if (stat(p, &st) == 0 && run(g, NULL, ARGS("rebase", "--abort"), NULL, 0, NULL) != 0)
		atomic_remove_tree(p);
	free(p);
	p = easprintf("%s/rebase-apply", git);
	if (stat(p, &st) == 0 && run(g, NULL, ARGS("rebase", "--abort"), NULL, 0, NULL) != 0)
		atomic_remove_tree(p);
	free(p);
	free(git);
	/* Files written but never committed were never acknowledged. */
	if (run(g, NULL, ARGS("rev-parse", "-q", "--verify", "HEAD"), NULL, 0, NULL) == 0)
		run(g, NULL, ARGS("reset", "-q", "--hard", "HEAD"), NULL, 0, NULL);
	else
		run(g, NULL, ARGS("rm", "-r", "-q", "--cached", "--ignore-unmatch", "."),
		    NULL, 0, NULL);
	run(g, NULL, ARGS("clean", "-f", "-d", "-q"), NULL, 0, NULL);
}

/* Removes clones that a killed run left half done ("<dir>.tmp-*"). */
static void
clear_stale_clones(const char *dir)
{
	char *copy = estrdup(dir), *slash = strrchr(copy, '/'), *path;
	const char *base = slash + 1;
	size_t bn = strlen(base);
	struct dirent *e;
	DIR *d;

	*slash = '\0';
	if ((d = opendir(copy)) != NULL) {
		while ((e = readdir(d)) != NULL)
			if (strncmp(e->d_name, base, bn) == 0 &&
			    strncmp(e->d_name + bn, ".tmp-", 5) == 0) {
				path = easprintf("%s/%s", copy, e->d_name);
				atomic_remove_tree(path);
				free(path);
			}
		closedir(d);
	}
	free(copy);
}

/* A partial clone's work tree: sparse, the store's hidden entries checked out. */
static int
sparse_start(const char *dir, buf *err)
{
	char *mark;
	int fd;

	if (git_run(dir, ARGS("sparse-checkout", "set", "--no-cone", "--stdin"), SPARSE_BASE,
	    strlen(SPARSE_BASE), NULL, err) != 0)
		return -1;
	/* An empty remote has nothing to check out. */
	if (git_run(dir, ARGS("rev-parse", "-q", "--verify", "HEAD"), NULL, 0, NULL, NULL) == 0 &&
	    git_run(dir, ARGS("checkout", "-q"), NULL, 0, NULL, err) != 0)
		return -1;
	mark = easprintf("%s/.git/" SPARSE_MARK, dir);
	fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	free(mark);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int
clone(gitstore *g)
{
	char *tmp = easprintf("%s.tmp-%ld", g->dir, (long)getpid());
	buf err = BUF_INIT;
	char *msg;
	int rc;

	clear_stale_clones(g->dir);
	/*
	 * With the index: the commits and trees, and of the blobs only what
	 * is checked out (sparse.h). A server that cannot filter sends every
	 * blob (git says so and goes on): a full clone, checked out sparsely.
	 */
	if (store_index_enabled())
		rc = git_run(NULL, ARGS("clone", "-q", "--no-tags", "--filter=blob:none",
		    "--no-checkout", "--", g->url, tmp), NULL, 0, NULL, &err);
	else
		rc = git_run(NULL, ARGS("clone", "-q", "--no-tags", "--", g->url, tmp), NULL, 0,
		    NULL, &err);
	if (rc == 0 && store_index_enabled())
		rc = sparse_start(tmp, &err);
	if (rc != 0) {
		msg = git_last_error(&err);
		warnx("%s: cannot clone the store: %s", g->shown, msg);
		free(msg);
		atomic_remove_tree(tmp);
	} else if (rename(tmp, g->dir) != 0) {
		warn("%s: cannot move the clone into place", g->dir);
		atomic_remove_tree(tmp);
		rc = -1;
	}
	buf_free(&err);
	free(tmp);
	return rc;
}

static int
lock(gitstore *g)
{
	char *path = easprintf("%s.lock", g->dir);

	/* Not close-on-exec: a git that outlives us keeps the cache locked. */
	g->lockfd = lock_open(path, LOCK_OPT_INHERIT);
	if (g->lockfd < 0) {
		warn("%s: cannot lock the store cache", path);
		free(path);
		return -1;
	}
	free(path);
	return 0;
}

/* Fetches the remote; 0, or -1 with the reason in g->remote_error. */
static int
fetch(gitstore *g)
{
	buf err = BUF_INIT;
	int rc;

	free(g->remote_error);
	g->remote_error = NULL;
	rc = git_run(g->dir, ARGS("fetch", "-q", "--prune", "--no-tags", "origin",
	    "+refs/heads/*:refs/remotes/origin/*"), NULL, 0, NULL, &err);
	if (rc != 0)
		g->remote_error = git_last_error(&err);
	buf_free(&err);
	return rc == 0 ? 0 : -1;
}

/* Reads the fetched head of the branch into g->head ("" when none). */
static void
read_head(gitstore *g)
{
	char *h = line_of(g, ARGS("rev-parse", "-q", "--verify", g->tracking));

	snprintf(g->head, sizeof g->head, "%s", h != NULL ? h : "");
	free(h);
}

/*
 * In a rebase stopped by conflicts: when every conflicting path is the
 * store index's, takes the remote's side of each (in a rebase, "ours")
 * and says true; false when a record conflicts, or nothing does.
 */
static bool
index_conflicts(gitstore *g)
{
	buf out = BUF_INIT;
	char *line, *save = NULL;
	bool all = true, any = false;

	if (run(g, NULL, ARGS("diff", "--name-only", "--diff-filter=U"), NULL, 0, &out) != 0 ||
	    out.len == 0) {
		buf_free(&out);
		return false;
	}
	for (line = strtok_r(out.s, "\n", &save); line != NULL; line = strtok_r(NULL, "\n",
	    &save)) {
		any = true;
		all &= strncmp(line, STORE_INDEX_DIR "/", strlen(STORE_INDEX_DIR) + 1) == 0;
	}
	if (!any || !all) {
		buf_free(&out);
		return false;
	}
	/* Out of the text again: strtok_r cut it. */
	buf_reset(&out);
	run(g, NULL, ARGS("diff", "--name-only", "--diff-filter=U"), NULL, 0, &out);
	for (line = strtok_r(out.s, "\n", &save); line != NULL; line = strtok_r(NULL, "\n",
	    &save))
		if (run(g, NULL, ARGS("checkout", "--ours", "--", line), NULL, 0, NULL) != 0 ||
		    run(g, NULL, ARGS("add", "--", line), NULL, 0, NULL) != 0)
			/* Removed on the remote's side. */
			run(g, NULL, ARGS("rm", "-q", "-f", "--", line), NULL, 0, NULL);
	buf_free(&out);
	return true;
}

/*
 * Puts the local commits on top of the fetched head. A local commit that
 * adds a file the remote holds with other bytes cannot be: reported.
 */
static int
integrate(gitstore *g)
{
	buf out = BUF_INIT;
	int rc;

	read_head(g);
	if (g->head[0] == '\0')
		return 0;
	if (run(g, NULL, ARGS("rev-parse", "-q", "--verify", "HEAD"), NULL, 0, &out) != 0) {
		buf_free(&out);
		return run(g, "cannot check out the store", ARGS("reset", "-q", "--hard",
		    g->head), NULL, 0, NULL) == 0 ? 0 : -1;
	}
	/* Nothing fetched and nothing local: nothing to rebase (a rebase reads every file). */
	if (strncmp(out.s, g->head, 40) == 0) {
		buf_free(&out);
		return 0;
	}
	buf_reset(&out);
	rc = run(g, NULL, ARGS("-c", "core.editor=true", "rebase", "-q", g->head), NULL, 0,
	    NULL);
	/* Both changed the index: the remote's copy (stale, never wrong). */
	for (int step = 0; rc != 0 && step < 1000 && index_conflicts(g); step++) {
		rc = run(g, NULL, ARGS("-c", "core.editor=true", "rebase", "--continue"), NULL,
		    0, NULL);
		/* A commit of nothing but the index is left empty by it: dropped. */
		if (rc != 0 && run(g, NULL, ARGS("diff", "--name-only", "--diff-filter=U"), NULL,
		    0, &out) == 0 && out.len == 0 && run(g, NULL, ARGS("diff", "--cached",
		    "--quiet"), NULL, 0, NULL) == 0)
			rc = run(g, NULL, ARGS("-c", "core.editor=true", "rebase", "--skip"), NULL,
			    0, NULL);
		buf_reset(&out);
	}
	if (rc == 0) {
		buf_free(&out);
		return 0;
	}
	run(g, NULL, ARGS("diff", "--name-only", "--diff-filter=U"), NULL, 0, &out);
	run(g, NULL, ARGS("rebase", "--abort"), NULL, 0, NULL);
	warnx("%s: a record of an earlier upload that was never pushed conflicts with "
	    "the remote: %s", g->shown, out.len > 0 ? strtok(out.s, "\n") : "?");
	buf_free(&out);
	return -1;
}

/* Makes sure commits can be made: an author when git has none configured. */
static void
set_identity(gitstore *g)
{
	if (run(g, NULL, ARGS("config", "--get", "user.email"), NULL, 0, NULL) == 0)
		return;
	run(g, NULL, ARGS("config", "user.name", "perfkite"), NULL, 0, NULL);
	run(g, NULL, ARGS("config", "user.email", "perfkite@localhost"), NULL, 0, NULL);
}

char *
gitstore_cache_dir(const char *spec, const char *cache)
{
	char *base = cache != NULL ? estrdup(cache) : default_cache();
	char *shown = git_redact(spec + 4), *dir = cache_path(base, spec + 4, shown);

	free(base);
	free(shown);
	return dir;
}

gitstore *
gitstore_open(const char *spec, const char *cache, bool offline_ok)
{
	gitstore *g = ecalloc(1, sizeof *g);
	char *base = cache != NULL ? estrdup(cache) : default_cache(), *git, *real;
	struct stat st;
	bool cloned = false;

	g->lockfd = -1;
	g->url = estrdup(spec + 4);
	g->shown = git_redact(g->url);
	if (*g->url == '\0') {
		warnx("%s: no remote after git+", spec);
		goto fail;
	}
	if (atomic_mkdirs(base) != 0 || (real = realpath(base, NULL)) == NULL) {
		warn("%s: cannot create the store cache", base);
		goto fail;
	}
	/* Absolute: git runs in it and is given paths inside it. */
	g->dir = cache_path(real, g->url, g->shown);
	free(real);
	if (lock(g) != 0)
		goto fail;
	git = easprintf("%s/.git", g->dir);
	if (stat(git, &st) != 0) {
		if (clone(g) != 0) {
			free(git);
			goto fail;
		}
		cloned = true;
	} else {
		/* Left clean by a reader: nothing to clear (and the mark goes). */
		char *mark = easprintf("%s/" CLEAN_MARK, git);

		if (unlink(mark) != 0)
			recover(g);
		free(mark);
	}
	free(git);
	g->fresh = true;
	g->branch = line_of(g, ARGS("symbolic-ref", "--short", "HEAD"));
	if (g->branch == NULL)
		g->branch = estrdup("main");
	g->tracking = easprintf("refs/remotes/origin/%s", g->branch);
	set_identity(g);
	/* A clone made just now is what a fetch would bring. */
	if (!cloned && fetch(g) != 0) {
		if (!offline_ok) {
			warnx("%s: cannot fetch the store: %s", g->shown, g->remote_error);
			goto fail;
		}
		warnx("%s: cannot reach the remote, using the cache: %s", g->shown,
		    g->remote_error);
	}
	if (integrate(g) != 0)
		goto fail;
	free(base);
	return g;
fail:
	free(base);
	gitstore_close(g);
	return NULL;
}

const char *
gitstore_dir(const gitstore *g)
{
	return g->dir;
}

const char *
gitstore_shown(const gitstore *g)
{
	return g->shown;
}

const char *
gitstore_remote_error(const gitstore *g)
{
	return g->remote_error;
}

const char *
gitstore_head(const gitstore *g)
{
	return g->head[0] != '\0' ? g->head : NULL;
}

int
gitstore_commit(gitstore *g, char *const *paths, size_t n, const char *msg, bool index)
{
	buf list = BUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		buf_add(&list, paths[i], strlen(paths[i]) + 1);
	if (n > 0)
		/* --sparse: in a sparse checkout, new files outside its patterns too. */
		rc = run(g, "cannot add the records", ARGS("add", "--sparse",
		    "--pathspec-from-file=-", "--pathspec-file-nul"), list.s, list.len, NULL);
	/* The index's files, then its MANIFEST again with the trees staged. */
	if (rc == 0 && index)
		rc = run(g, "cannot add the store index", ARGS("add", "-A", "--",
		    STORE_INDEX_DIR), NULL, 0, NULL) != 0 || store_index_seal(g->dir, NULL) != 0 ||
		    run(g, "cannot add the store index", ARGS("add", "--",
		    STORE_INDEX_DIR "/MANIFEST"), NULL, 0, NULL) != 0 ? -1 : 0;
	if (rc == 0 && run(g, NULL, ARGS("diff", "--cached", "--quiet"), NULL, 0, NULL) == 0) {
		buf_free(&list);
		return 0;
	}
	if (rc == 0)
		rc = run(g, "cannot commit the records", ARGS("-c", "commit.gpgsign=false",
		    "commit", "-q", "--no-verify", "-m", msg), NULL, 0, NULL);
	buf_free(&list);
	return rc == 0 ? 0 : -1;
}

long
gitstore_unpushed(gitstore *g)
{
	char *range, *n;
	long v;

	if (run(g, NULL, ARGS("rev-parse", "-q", "--verify", "HEAD"), NULL, 0, NULL) != 0)
		return 0;
	range = g->head[0] != '\0' ? easprintf("%s..HEAD", g->head) : estrdup("HEAD");
	n = line_of(g, ARGS("rev-list", "--count", range));
	v = n != NULL ? strtol(n, NULL, 10) : 0;
	free(range);
	free(n);
	return v;
}

/* True when git push --porcelain says a ref was refused because the remote moved. */
static bool
lost_race(const buf *out, const buf *err)
{
	static const char *const why[] = { "fetch first", "non-fast-forward",
	    "stale info", "failed to update ref", "failed to lock", "cannot lock ref",
	    "incorrect old value" };
	const char *s;

	for (int k = 0; k < 2; k++) {
		s = (k == 0 ? out : err)->s;
		for (size_t i = 0; s != NULL && i < sizeof why / sizeof *why; i++)
			if (strstr(s, why[i]) != NULL)
				return true;
	}
	return false;
}

/*
 * Pushes rev to the branch: 0; 1 when the remote moved; 2 when a lock file
 * in the remote was in the way (its path in *lock); -1 on another error.
 * *why is every error line git wrote.
 */
static int
push(gitstore *g, const char *rev, char **why, char **lock)
{
	char *ref = easprintf("%s:refs/heads/%s", rev, g->branch);
	buf out = BUF_INIT, err = BUF_INIT;
	int rc = git_run(g->dir, ARGS("push", "--porcelain", "-q", "origin", ref), NULL, 0,
	    &out, &err);

	*why = NULL;
	*lock = NULL;
	if (rc != 0) {
		*why = git_errors(&err);
		if ((*lock = git_lock_conflict(&err)) != NULL)
			rc = 2;
		else
			rc = lost_race(&out, &err) ? 1 : -1;
	}
	free(ref);
	buf_free(&out);
	buf_free(&err);
	return rc;
}

/* Sleeps a random time in [ms/2, ms), so racing uploaders spread out. */
static void
back_off(int ms)
{
	struct timespec ts;
	long us = (long)ms * 500 + (long)(random() % ((long)ms * 500 + 1));

	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (us % 1000000) * 1000;
	nanosleep(&ts, NULL);
}

/*
 * A lock file in the remote that a push found in its way: a push running
 * now holds one for milliseconds; one a killed push left stays until
 * someone removes it. Says which and how.
 */
static void
report_lock(const gitstore *g, const char *why, const char *lock, bool stale)
{
	warnx("%s: cannot push: the remote holds a lock file%s: %s; make sure no push to "
	    "the remote is running (no git-receive-pack process on the machine that "
	    "holds it), then remove %s", g->shown, stale ? " that a killed push left "
	    "(still there a second later)" : " (a push running now, or one that was killed)",
	    why, lock);
}

int
gitstore_push(gitstore *g, int tries)
{
	char *why = NULL, *lock = NULL, *seen = NULL;
	int rc = -1;

	srandom((unsigned)getpid() ^ (unsigned)time(NULL));
	for (int t = 1; t <= tries; t++) {
		if (gitstore_unpushed(g) == 0) {
			free(seen);
			return 0;
		}
		free(why);
		rc = push(g, "HEAD", &why, &lock);
		if (rc == 2) {
			/* The same lock a second later: left by a killed push, not a race. */
			if (seen != NULL && strcmp(seen, lock) == 0) {
				report_lock(g, why, lock, true);
				free(lock);
				free(seen);
				free(why);
				return -1;
			}
			free(seen);
			seen = lock;
			back_off(2000);
		} else if (rc <= 0)
			break;
		else
			/* The remote moved: take what it has and go again. */
			back_off(50 << (t < 6 ? t : 6));
		if (fetch(g) != 0) {
			free(why);
			why = estrdup(g->remote_error);
			rc = -1;
			break;
		}
		if (integrate(g) != 0) {
			free(why);
			free(seen);
			return -1;
		}
	}
	free(seen);
	if (rc == 2)
		warnx("%s: cannot push: a lock file in the remote was in the way (%d tries): %s",
		    g->shown, tries, why);
	else if (rc > 0)
		warnx("%s: cannot push: the remote kept moving (%d tries): %s", g->shown,
		    tries, why);
	else if (rc < 0)
		warnx("%s: cannot push: %s", g->shown, why);
	free(why);
	return rc == 0 ? 0 : -1;
}

/*
 * The store index of the work tree (at the fetched head) brought up to
 * date with files[0..n) written in it: the work tree is reset after the
 * commit. false when the store keeps no index, the work tree holds local
 * commits, or the update failed (the commit then leaves the index stale).
 */
static bool
index_for_head(gitstore *g, char *const *files, char *const *bytes, const size_t *len,
    size_t n)
{
	char *path = easprintf("%s/" STORE_INDEX_DIR, g->dir), *h;
	struct stat st;
	bool ok = store_index_enabled() && lstat(path, &st) == 0 && S_ISDIR(st.st_mode);

	free(path);
	h = ok ? line_of(g, ARGS("rev-parse", "-q", "--verify", "HEAD")) : NULL;
	ok = h != NULL && strcmp(h, g->head) == 0;
	free(h);
	for (size_t i = 0; ok && i < n; i++) {
		char *full = easprintf("%s/%s", g->dir, files[i]), *slash = strrchr(full, '/');

		*slash = '\0';
		ok = atomic_mkdirs(full) == 0;
		*slash = '/';
		ok = ok && atomic_write_file(full, bytes[i], len[i]) == 0;
		free(full);
	}
	return ok && store_index_update(g->dir, files, n, false, true) == 0;
}

int
gitstore_commit_on_head(gitstore *g, char *const *files, char *const *bytes,
    const size_t *len, size_t n, const char *msg, char out[41])
{
	char *index = easprintf("%s/.git/perfkite-cas-index-%ld", g->dir, (long)getpid());
	char *envv[] = { NULL, NULL }, *tree = NULL, *commit = NULL, *why = NULL, *lock = NULL;
	buf res = BUF_INIT, err = BUF_INIT;
	bool indexed;
	int rc = -1;
	size_t i;

	envv[0] = easprintf("GIT_INDEX_FILE=%s", index);
	indexed = g->head[0] != '\0' && index_for_head(g, files, bytes, len, n);
	if (git_run_env(g->dir, envv, g->head[0] != '\0' ? ARGS("read-tree", g->head) :
	    ARGS("read-tree", "--empty"), NULL, 0, NULL, &err) != 0)
		goto git_failed;
	for (i = 0; i < n; i++) {
		char *info;
		size_t k;

		buf_reset(&res);
		if (git_run_env(g->dir, envv, ARGS("hash-object", "-w", "--no-filters",
		    "--stdin"), bytes[i], len[i], &res, &err) != 0 || res.len == 0)
			goto git_failed;
		k = strcspn(res.s, "\n");
		res.s[k] = '\0';
		info = easprintf("100644,%s,%s", res.s, files[i]);
		if (git_run_env(g->dir, envv, ARGS("update-index", "--add", "--cacheinfo",
		    info), NULL, 0, NULL, &err) != 0) {
			free(info);
			goto git_failed;
		}
		free(info);
	}
	/* The index with them, as gitstore_commit has it. */
	if (indexed && (git_run_env(g->dir, envv, ARGS("add", "-A", "--", STORE_INDEX_DIR),
	    NULL, 0, NULL, &err) != 0 || store_index_seal(g->dir, envv) != 0 ||
	    git_run_env(g->dir, envv, ARGS("add", "--", STORE_INDEX_DIR "/MANIFEST"), NULL, 0,
	    NULL, &err) != 0))
		goto git_failed;
	buf_reset(&res);
	if (git_run_env(g->dir, envv, ARGS("write-tree"), NULL, 0, &res, &err) != 0 ||
	    res.len == 0)
		goto git_failed;
	tree = estrndup(res.s, strcspn(res.s, "\n"));
	buf_reset(&res);
	if (git_run_env(g->dir, envv, g->head[0] != '\0' ?
	    ARGS("commit-tree", tree, "-p", g->head, "-m", msg) :
	    ARGS("commit-tree", tree, "-m", msg), NULL, 0, &res, &err) != 0 || res.len == 0)
		goto git_failed;
	commit = estrndup(res.s, strcspn(res.s, "\n"));
	/* Without force: a remote that moved since the fetch refuses it. */
	switch (push(g, commit, &why, &lock)) {
	case 0:
		snprintf(out, 41, "%s", commit);
		rc = 0;
		break;
	case 1:
		warnx("%s: the store changed since it was checked (its head is no longer "
		    "%s); nothing was uploaded: %s", g->shown, g->head[0] != '\0' ? g->head :
		    "empty", why);
		break;
	case 2:
		report_lock(g, why, lock, false);
		break;
	default:
		warnx("%s: cannot push: %s", g->shown, why);
	}
	free(lock);
	goto done;
git_failed:
	why = git_last_error(&err);
	warnx("%s: cannot make the commit: %s", g->shown, why);
done:
	/* The work tree as HEAD has it: what was pushed comes with the next fetch. */
	if (indexed) {
		run(g, NULL, ARGS("reset", "-q", "--hard", "HEAD"), NULL, 0, NULL);
		run(g, NULL, ARGS("clean", "-f", "-d", "-q"), NULL, 0, NULL);
	}
	unlink(index);
	free(index);
	free(envv[0]);
	free(tree);
	free(commit);
	free(why);
	buf_free(&res);
	buf_free(&err);
	return rc;
}

void
gitstore_close_clean(gitstore *g)
{
	char *mark;
	int fd;

	if (g == NULL)
		return;
	if (g->fresh && g->dir != NULL) {
		mark = easprintf("%s/.git/" CLEAN_MARK, g->dir);
		if ((fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0666)) >= 0)
			close(fd);
		free(mark);
	}
	gitstore_close(g);
}

void
gitstore_close(gitstore *g)
{
	if (g == NULL)
		return;
	if (g->lockfd >= 0)
		close(g->lockfd);
	free(g->url);
	free(g->shown);
	free(g->dir);
	free(g->branch);
	free(g->tracking);
	free(g->remote_error);
	free(g);
}

/* Runs git for gitstore_publish; on failure reports "shown: what: <git's error>". */
static int
publish_run(const char *shown, const char *what, const char *dir, const char *const *args)
{
	buf err = BUF_INIT;
	char *msg;
	int rc = git_run(dir, args, NULL, 0, NULL, &err);

	if (rc != 0) {
		msg = git_last_error(&err);
		warnx("%s: %s: %s", shown, what, msg);
		free(msg);
	}
	buf_free(&err);
	return rc;
}

int
gitstore_publish(const char *spec, const char *def_branch, const char *dir, const char *msg)
{
	const char *tmpdir = getenv("TMPDIR") != NULL && *getenv("TMPDIR") != '\0' ?
	    getenv("TMPDIR") : "/tmp";
	char *url, *hash, *shown, *scratch, *gitdir = NULL, *gd = NULL, *ref = NULL;
	const char *branch = def_branch;
	int rc = -1;

	if (!gitstore_is_spec(spec) || spec[4] == '\0') {
		warnx("%s: not a git remote (git+URL[#branch])", spec);
		return -1;
	}
	url = estrdup(spec + 4);
	if ((hash = strrchr(url, '#')) != NULL) {
		*hash = '\0';
		branch = hash + 1;
	}
	shown = git_redact(url);
	if (*url == '\0' || *branch == '\0') {
		warnx("%s: no remote or no branch (git+URL[#branch])", shown);
		free(url);
		free(shown);
		return -1;
	}
	scratch = easprintf("%s/perfkite-publish-XXXXXX", tmpdir);
	if (mkdtemp(scratch) == NULL) {
		warn("%s: cannot make a scratch directory", scratch);
		goto out;
	}
	gitdir = easprintf("%s/git", scratch);
	gd = easprintf("--git-dir=%s", gitdir);
	ref = easprintf("HEAD:refs/heads/%s", branch);
	/* A fresh repository: one commit without a parent, whatever dir held before. */
	if (publish_run(shown, "git init", NULL, ARGS("init", "-q", "--bare", gitdir)) != 0 ||
	    publish_run(shown, "git add", dir, ARGS(gd, "--work-tree=.", "add", "-A", "-f",
	    ".")) != 0 ||
	    publish_run(shown, "git commit", dir, ARGS("-c", "user.name=perfkite", "-c",
	    "user.email=perfkite@localhost", "-c", "commit.gpgsign=false", gd, "--work-tree=.",
	    "commit", "-q", "--allow-empty", "--no-verify", "-m", msg)) != 0 ||
	    publish_run(shown, "cannot publish", NULL, ARGS(gd, "push", "-q", "-f", "--", url,
	    ref)) != 0)
		goto out;
	rc = 0;
out:
	if (gitdir != NULL)
		atomic_remove_tree(scratch);
	free(ref);
	free(gd);
	free(gitdir);
	free(scratch);
	free(shown);
	free(url);
	return rc;
}
