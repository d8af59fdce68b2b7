#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/err.h"
#include "core/git.h"
#include "lane/store/sparse.h"

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Patterns past this many: the set is made anew of what is needed now. */
#define SPARSE_MAX 4096

bool
sparse_on(const char *root)
{
	char *mark = easprintf("%s/.git/" SPARSE_MARK, root);
	struct stat st;
	bool on = stat(mark, &st) == 0;

	free(mark);
	return on;
}

/* Runs git in root; on failure reports "root: what: <git's error>". */
static int
run(const char *root, const char *what, const char *const *args, const char *in, size_t n,
    buf *out)
{
	buf err = BUF_INIT;
	char *msg;
	int rc = git_run(root, args, in, n, out, &err);

	if (rc != 0 && what != NULL) {
		msg = git_last_error(&err);
		warnx("%s: %s: %s", root, what, msg);
		free(msg);
	}
	buf_free(&err);
	return rc;
}

int
sparse_all(const char *root)
{
	char *mark;

	if (!sparse_on(root))
		return 0;
	if (run(root, "cannot check out the whole store", ARGS("sparse-checkout", "disable"),
	    NULL, 0, NULL) != 0)
		return -1;
	mark = easprintf("%s/.git/" SPARSE_MARK, root);
	unlink(mark);
	free(mark);
	return 0;
}

/* Whether the store-relative path is absent from the work tree. */
static bool
absent(const char *root, const char *rel)
{
	char *full = easprintf("%s/%s", root, rel);
	struct stat st;
	bool gone = lstat(full, &st) != 0;

	free(full);
	return gone;
}

/* A no-cone pattern that matches the store-relative path rel alone. */
static void
add_pattern(buf *b, const char *rel)
{
	buf_addc(b, '/');
	for (const char *p = rel; *p != '\0'; p++) {
		if (strchr("*?[\\ !#", *p) != NULL)
			buf_addc(b, '\\');
		buf_addc(b, *p);
	}
	buf_addc(b, '\n');
}

/* The number of patterns in the work tree's sparse-checkout file. */
static size_t
patterns(const char *root)
{
	char *path = easprintf("%s/.git/info/sparse-checkout", root);
	buf b = BUF_INIT;
	size_t n = 0;

	if (buf_read_file(&b, path) == 0)
		for (size_t i = 0; i < b.len; i++)
			n += b.s[i] == '\n';
	buf_free(&b);
	free(path);
	return n;
}

static bool
json_file(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base != NULL ? base + 1 : path;
	n = strlen(base);
	return base[0] != '.' && n >= 5 && strcmp(base + n - 5, ".json") == 0;
}

/*
 * Adds to need the record files a walk of dirs[0..nd) reads, as HEAD
 * holds them (a level of directories at a time), to missing those absent.
 */
static int
walk_tree(const char *root, char *const *dirs, size_t nd,
    bool (*known)(const char *rel, void *ctx), void *ctx, buf *need, buf *missing)
{
	char **level = NULL, **next = NULL;
	size_t nl = 0, nn = 0;
	int rc = 0;

	for (size_t i = 0; i < nd; i++) {
		level = erealloc(level, (nl + 1) * sizeof *level);
		level[nl++] = estrdup(dirs[i]);
	}
	while (rc == 0 && nl > 0) {
		const char **args = emalloc((nl + 6) * sizeof *args);
		char *line, *end, *tab;
		buf out = BUF_INIT;
		size_t na = 0;

		args[na++] = "--literal-pathspecs";
		args[na++] = "ls-tree";
		args[na++] = "-z";
		args[na++] = "HEAD";
		args[na++] = "--";
		for (size_t i = 0; i < nl; i++) {
			/* "D/": what D holds; the top's, the top's. */
			char *p = strcmp(level[i], ".") == 0 ? estrdup(".") :
			    easprintf("%s/", level[i]);

			free(level[i]);
			level[i] = p;
			args[na++] = p;
		}
		args[na] = NULL;
		if (run(root, "cannot list the store's files", args, NULL, 0, &out) != 0)
			rc = -1;
		/* "<mode> <type> <hash>\t<path>\0" */
		for (line = out.s; rc == 0 && line < out.s + out.len; line = end + 1) {
			const char *path, *base;

			end = line + strlen(line);
			if ((tab = strchr(line, '\t')) == NULL)
				continue;
			path = tab + 1;
			base = strrchr(path, '/');
			base = base != NULL ? base + 1 : path;
			if (base[0] == '.')
				continue;	/* hidden: no walk reads it */
			if (strstr(line, " tree ") != NULL && strstr(line, " tree ") < tab) {
				if (!known(path, ctx)) {
					next = erealloc(next, (nn + 1) * sizeof *next);
					next[nn++] = estrdup(path);
				}
			} else if (json_file(path)) {
				add_pattern(need, path);
				if (absent(root, path))
					add_pattern(missing, path);
			}
		}
		buf_free(&out);
		free(args);
		for (size_t i = 0; i < nl; i++)
			free(level[i]);
		free(level);
		level = next;
		nl = nn;
		next = NULL;
		nn = 0;
	}
	for (size_t i = 0; i < nl; i++)
		free(level[i]);
	free(level);
	return rc;
}

int
sparse_need(const char *root, char *const *files, size_t nf, char *const *dirs, size_t nd,
    bool (*known)(const char *rel, void *ctx), void *ctx)
{
	buf need = BUF_INIT, missing = BUF_INIT;
	int rc = 0;

	if (!sparse_on(root))
		return 0;
	buf_adds(&need, SPARSE_BASE);
	for (size_t i = 0; i < nf; i++) {
		add_pattern(&need, files[i]);
		if (absent(root, files[i]))
			add_pattern(&missing, files[i]);
	}
	if (nd > 0)
		rc = walk_tree(root, dirs, nd, known, ctx, &need, &missing);
	/* The directories walked are there, if with no record checked out. */
	for (size_t i = 0; rc == 0 && i < nd; i++) {
		char *full = easprintf("%s/%s", root, dirs[i]), *spec = easprintf("HEAD:%s",
		    dirs[i]);
		struct stat st;

		if (stat(full, &st) != 0 && run(root, NULL, ARGS("--literal-pathspecs",
		    "cat-file", "-e", spec), NULL, 0, NULL) == 0 && atomic_mkdirs(full) != 0) {
			warn("%s: cannot create", full);
			rc = -1;
		}
		free(full);
		free(spec);
	}
	/* Git fetches the blobs of what it checks out, in one request. */
	if (rc == 0 && missing.len > 0) {
		size_t k = 0;

		for (size_t i = 0; i < missing.len; i++)
			k += missing.s[i] == '\n';
		if (patterns(root) + k > SPARSE_MAX)
			rc = run(root, "cannot check out the store's files", ARGS("sparse-checkout",
			    "set", "--no-cone", "--stdin"), need.s, need.len, NULL);
		else
			rc = run(root, "cannot check out the store's files", ARGS("sparse-checkout",
			    "add", "--stdin"), missing.s, missing.len, NULL);
	}
	buf_free(&need);
	buf_free(&missing);
	return rc == 0 ? 0 : -1;
}

int
sparse_need_file(const char *root, const char *rel)
{
	char *spec;
	buf pat = BUF_INIT;
	int rc = 0;

	if (!sparse_on(root) || !absent(root, rel))
		return 0;
	spec = easprintf("HEAD:%s", rel);
	if (run(root, NULL, ARGS("cat-file", "-e", spec), NULL, 0, NULL) == 0) {
		add_pattern(&pat, rel);
		rc = run(root, "cannot check out the store's files", ARGS("sparse-checkout", "add",
		    "--stdin"), pat.s, pat.len, NULL);
	}
	free(spec);
	buf_free(&pat);
	return rc == 0 ? 0 : -1;
}
