/* The store index: its files, its writer and its reader's plan (index.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/canon.h"
#include "core/err.h"
#include "core/file_batch.h"
#include "core/git.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/utf8.h"
#include "lane/identity.h"
#include "lane/store/index.h"
#include "lane/store/read.h"
#include "lane/store/sparse.h"

#define MANIFEST STORE_INDEX_DIR "/MANIFEST"
#define COHORTS STORE_INDEX_DIR "/cohorts"
#define FORMAT 1

/* A combination's flags: the filters' inputs, and which keys are absent or null. */
enum {
	F_SUCCESS = 1,		/* success absent or truthy */
	F_ELIGIBLE = 2,		/* baseline_eligible true, or neither it nor run_source */
	F_TRUSTED = 4,		/* run_source "scheduled_main" or baseline_eligible true */
	F_NONE = 8		/* F_NONE << k: identity key k absent or null */
};

/* What the lookups can tell of a record: its flags and the str() of its identity. */
struct combo {
	unsigned flags;
	char *v[IDENTITY_KEYS];
};

struct entry {
	char *path;		/* store-relative */
	int64_t instant;
	unsigned long long ino;
	size_t combo;
};

struct cohort {
	char hash[17];
	struct combo *c;
	size_t nc;
	struct entry *e;
	size_t ne;
	long gen;
	bool loaded, changed;
};

struct dirstat {
	unsigned long long ino;
	long long ms, mns, cs, cns;
};

struct dir {
	char *rel;		/* "." for the store itself */
	struct dirstat st;
	bool uncovered;		/* holds a name the index cannot list: always read */
	size_t nfiles;		/* its record files */
	char *tree;		/* a git store's: its tree when indexed ("t" line), or NULL */
	bool dirty, gone;
	bool moved;		/* a git store's: its tree is not the one indexed */
};

struct mcohort {
	char hash[17];
	size_t count;
	long gen;
	char **dirs;		/* the directories its records are in */
	size_t ndirs;
};

struct manifest {
	long gen;
	struct dir *d;
	size_t nd;
	struct mcohort *k;
	size_t nk;
	char **always;		/* record files read whenever the index is used */
	size_t na;
	bool git;		/* it has "t" lines: a git store's coverage */
};

bool
store_index_enabled(void)
{
	const char *v = getenv("PERF_STORE_INDEX");

	return v == NULL || strcmp(v, "0") != 0;
}

/* Splits line at tabs into at most max fields (the last keeps the rest). */
static size_t
split(char *line, char **f, size_t max)
{
	size_t n = 0;

	f[n++] = line;
	while (n < max && (line = strchr(line, '\t')) != NULL) {
		*line++ = '\0';
		f[n++] = line;
	}
	return n;
}

static bool
parse_ll(const char *s, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno == 0 && end != s && *end == '\0';
}

static bool
parse_time(const char *s, long long *sec, long long *ns)
{
	char tmp[64], *dot;

	if (strlen(s) >= sizeof tmp)
		return false;
	strcpy(tmp, s);
	if ((dot = strchr(tmp, '.')) == NULL)
		return false;
	*dot = '\0';
	return parse_ll(tmp, sec) && parse_ll(dot + 1, ns);
}

/* A name or value the line format can hold: no tab, newline or carriage return. */
static bool
plain(const char *s)
{
	return strpbrk(s, "\t\n\r") == NULL;
}

/*
 * Writes n bytes to path by a hidden temporary file renamed into place.
 * Not synced: a file a crash leaves short or empty fails its checks (its
 * gzip trailer, its end line), and an index that fails them is not used.
 */
static int
save(const char *path, const void *data, size_t n)
{
	char *tmp, *slash = strrchr(path, '/');
	ssize_t w;
	size_t off = 0;
	int fd, e;

	tmp = easprintf("%.*s/.%s.tmp.%ld", (int)(slash - path), path, slash + 1, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0)
		goto fail;
	while (off < n) {
		if ((w = write(fd, (const char *)data + off, n - off)) < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			close(fd);
			errno = e;
			goto fail;
		}
		off += (size_t)w;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0)
		goto fail;
	free(tmp);
	return 0;
fail:
	e = errno;
	warnx("%s: cannot write the store index: %s", path, strerror(e));
	unlink(tmp);
	free(tmp);
	return -1;
}

/* data[0..n) as gzip into out. */
static void
gzip_to(const char *data, size_t n, buf *out)
{
	z_stream z;

	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		die("cannot compress: out of memory");
	buf_reset(out);
	buf_grow(out, deflateBound(&z, (uLong)n) + 1);
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)out->s;
	z.avail_out = (uInt)(out->cap - 1);
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		die("cannot compress the store index");
	out->len = z.total_out;
	deflateEnd(&z);
}

/* Reads path, gunzipped when it is gzip, into b; -1 when unreadable or corrupt. */
static int
read_index_file(const char *path, buf *b)
{
	buf raw = BUF_INIT;
	z_stream z;
	int rc = -1, zr;

	buf_reset(b);
	if (buf_read_file(&raw, path) != 0)
		goto out;
	if (raw.len < 2 || (unsigned char)raw.s[0] != 0x1f || (unsigned char)raw.s[1] != 0x8b) {
		buf_add(b, raw.s, raw.len);
		rc = 0;
		goto out;
	}
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 31) != Z_OK)
		goto out;
	z.next_in = (Bytef *)raw.s;
	z.avail_in = (uInt)raw.len;
	do {
		buf_grow(b, raw.len * 4 + 65536);
		z.next_out = (Bytef *)b->s + b->len;
		z.avail_out = (uInt)(b->cap - b->len - 1);
		zr = inflate(&z, Z_NO_FLUSH);
		b->len = z.total_out;
	} while (zr == Z_OK);
	inflateEnd(&z);
	b->s[b->len] = '\0';
	rc = zr == Z_STREAM_END && z.avail_in == 0 ? 0 : -1;
out:
	buf_free(&raw);
	return rc;
}

static void
manifest_free(struct manifest *m)
{
	for (size_t i = 0; i < m->nd; i++) {
		free(m->d[i].rel);
		free(m->d[i].tree);
	}
	free(m->d);
	for (size_t i = 0; i < m->nk; i++) {
		for (size_t j = 0; j < m->k[i].ndirs; j++)
			free(m->k[i].dirs[j]);
		free(m->k[i].dirs);
	}
	free(m->k);
	for (size_t i = 0; i < m->na; i++)
		free(m->always[i]);
	free(m->always);
	memset(m, 0, sizeof *m);
}

static struct dir *find_dir(const struct manifest *m, const char *rel);

/* Reads the MANIFEST of root; -1 when there is none or it is not whole. */
static int
manifest_load(const char *root, struct manifest *m)
{
	char *path = easprintf("%s/" MANIFEST, root), *line, *next, *f[8];
	buf b = BUF_INIT;
	bool ended = false;
	long long v, w;
	int rc = -1;

	memset(m, 0, sizeof *m);
	if (buf_read_file(&b, path) != 0 || b.len == 0 || b.s[b.len - 1] != '\n')
		goto out;
	line = b.s;
	next = strchr(line, '\n');
	*next = '\0';
	if (sscanf(line, "perfkite-index %lld %lld", &v, &w) != 2 || v != FORMAT)
		goto out;
	m->gen = (long)w;
	for (line = next + 1; *line != '\0' && !ended; line = next + 1) {
		size_t n;

		next = strchr(line, '\n');
		*next = '\0';
		n = split(line, f, 8);
		if (strcmp(f[0], "d") == 0 && n == 7) {
			struct dir d = { 0 };
			long long ino, nf;

			if (!parse_ll(f[2], &ino) || !parse_time(f[3], &d.st.ms, &d.st.mns) ||
			    !parse_time(f[4], &d.st.cs, &d.st.cns) || !parse_ll(f[5], &nf))
				goto out;
			d.st.ino = (unsigned long long)ino;
			d.uncovered = strcmp(f[1], "u") == 0;
			d.nfiles = (size_t)nf;
			d.rel = estrdup(f[6]);
			m->d = erealloc(m->d, (m->nd + 1) * sizeof *m->d);
			m->d[m->nd++] = d;
		} else if (strcmp(f[0], "k") == 0 && n == 5) {
			struct mcohort k = { 0 };
			char *s, *save = NULL;

			if (strlen(f[1]) != 16 || !parse_ll(f[2], &v) || !parse_ll(f[3], &w))
				goto out;
			memcpy(k.hash, f[1], 17);
			k.count = (size_t)v;
			k.gen = (long)w;
			for (s = strtok_r(f[4], ",", &save); s != NULL; s = strtok_r(NULL, ",", &save)) {
				if (!parse_ll(s, &v) || v < 0 || (size_t)v >= m->nd)
					goto out;
				k.dirs = erealloc(k.dirs, (k.ndirs + 1) * sizeof *k.dirs);
				k.dirs[k.ndirs++] = estrdup(m->d[v].rel);
			}
			m->k = erealloc(m->k, (m->nk + 1) * sizeof *m->k);
			m->k[m->nk++] = k;
		} else if (strcmp(f[0], "t") == 0 && n == 3) {
			struct dir *d = find_dir(m, f[2]);

			if (d == NULL || d->tree != NULL)
				goto out;
			d->tree = estrdup(f[1]);
			m->git = true;
		} else if (strcmp(f[0], "a") == 0 && n == 2) {
			m->always = erealloc(m->always, (m->na + 1) * sizeof *m->always);
			m->always[m->na++] = estrdup(f[1]);
		} else if (strcmp(f[0], "end") == 0 && n == 4) {
			if (!parse_ll(f[1], &v) || (size_t)v != m->nd || !parse_ll(f[2], &v) ||
			    (size_t)v != m->nk || !parse_ll(f[3], &v) || (size_t)v != m->na)
				goto out;
			ended = true;
		} else
			goto out;
	}
	/* The store itself is always covered: without it nothing is. */
	rc = ended && m->nd > 0 && strcmp(m->d[0].rel, ".") == 0 ? 0 : -1;
out:
	if (rc != 0)
		manifest_free(m);
	buf_free(&b);
	free(path);
	return rc;
}

static int
cmp_dir(const void *a, const void *b)
{
	const struct dir *x = a, *y = b;

	/* "." first, then by path. */
	if (strcmp(x->rel, ".") == 0 || strcmp(y->rel, ".") == 0)
		return strcmp(x->rel, ".") == 0 ? (strcmp(y->rel, ".") == 0 ? 0 : -1) : 1;
	return strcmp(x->rel, y->rel);
}

static struct dir *
find_dir(const struct manifest *m, const char *rel)
{
	struct dir key = { .rel = (char *)rel };

	return bsearch(&key, m->d, m->nd, sizeof *m->d, cmp_dir);
}

static struct mcohort *
find_mcohort(const struct manifest *m, const char *hash)
{
	for (size_t i = 0; i < m->nk; i++)
		if (strcmp(m->k[i].hash, hash) == 0)
			return &m->k[i];
	return NULL;
}

static void
fill_stat(const struct stat *st, struct dirstat *d)
{
	d->ino = (unsigned long long)st->st_ino;
	d->ms = (long long)st->st_mtim.tv_sec;
	d->mns = st->st_mtim.tv_nsec;
	d->cs = (long long)st->st_ctim.tv_sec;
	d->cns = st->st_ctim.tv_nsec;
}

static bool
same_stat(const struct dirstat *a, const struct dirstat *b)
{
	return a->ino == b->ino && a->ms == b->ms && a->mns == b->mns && a->cs == b->cs &&
	    a->cns == b->cns;
}

/* root/rel as a path ("." is root itself). */
static char *
full_path(const char *root, const char *rel)
{
	return strcmp(rel, ".") == 0 ? estrdup(root) : easprintf("%s/%s", root, rel);
}

/* The store-relative path of name in the directory rel. */
static char *
join(const char *rel, const char *name)
{
	return strcmp(rel, ".") == 0 ? estrdup(name) : easprintf("%s/%s", rel, name);
}

/* The directory part of a store-relative path ("." at the top). */
static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash == NULL ? estrdup(".") : estrndup(path, (size_t)(slash - path));
}

/* Marks the manifest's directories that changed since it was written. */
static void
check_dirs(const char *root, struct manifest *m)
{
	for (size_t i = 0; i < m->nd; i++) {
		struct dir *d = &m->d[i];
		char *full = full_path(root, d->rel);
		struct dirstat now;
		struct stat st;

		if (lstat(full, &st) != 0 || !S_ISDIR(st.st_mode))
			d->gone = d->dirty = true;
		else {
			fill_stat(&st, &now);
			d->dirty = d->uncovered || !same_stat(&now, &d->st);
		}
		free(full);
	}
}

/* ---- a git store's coverage ---- */

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* A directory of a git tree: its path ("." for the top) and what covers it. */
struct tree {
	char *path;
	char *hash;
};

struct trees {
	struct tree *t;
	size_t n;
};

static int
cmp_tree(const void *a, const void *b)
{
	return strcmp(((const struct tree *)a)->path, ((const struct tree *)b)->path);
}

static void
trees_free(struct trees *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->t[i].path);
		free(t->t[i].hash);
	}
	free(t->t);
	memset(t, 0, sizeof *t);
}

static void
trees_add(struct trees *t, const char *path, const char *hash)
{
	t->t = erealloc(t->t, (t->n + 1) * sizeof *t->t);
	t->t[t->n].path = estrdup(path);
	t->t[t->n++].hash = estrdup(hash);
}

/* Whether a git path is the index or inside it. */
static bool
in_index(const char *path)
{
	size_t n = strlen(STORE_INDEX_DIR);

	return strncmp(path, STORE_INDEX_DIR, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/*
 * The coverage of rev (a commit or a tree) of the git work tree root: the
 * tree hash of every directory below the top, and for the top, whose tree
 * holds the index itself, the SHA-256 of its listing without the index.
 * Two git ls-tree, whatever the store's size. -1 when git cannot tell.
 * The top's listing names its directories without their trees: a change
 * below one is its own directory's, and the top stays clean.
 */
static int
git_trees(const char *root, const char *rev, struct trees *out)
{
	char *gd = easprintf("--git-dir=%s/.git", root), *line, *next, *tab, hex[SHA256_HEX];
	buf top = BUF_INIT, all = BUF_INIT, kept = BUF_INIT;
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (git_run(root, ARGS(gd, "ls-tree", rev), NULL, 0, &top, NULL) != 0 ||
	    git_run(root, ARGS(gd, "ls-tree", "-r", "-d", rev), NULL, 0, &all, NULL) != 0)
		goto out;
	for (line = top.s; line != NULL && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		next = next != NULL ? next + 1 : line + strlen(line);
		tab = memchr(line, '\t', (size_t)(next - line));
		if (tab != NULL && strncmp(tab + 1, STORE_INDEX_DIR "\n",
		    strlen(STORE_INDEX_DIR) + 1) == 0)
			continue;
		/* A directory by its name: its own tree covers what it holds. */
		if (tab != NULL && memmem(line, (size_t)(tab - line), " tree ", 6) != NULL)
			buf_adds(&kept, "tree ");
		else if (tab != NULL)
			buf_add(&kept, line, (size_t)(tab - line));
		buf_add(&kept, tab != NULL ? tab : line, (size_t)(next - (tab != NULL ? tab : line)));
	}
	canon_sha256_hex(kept.s, kept.len, hex);
	trees_add(out, ".", hex);
	for (line = all.s; line != NULL && *line != '\0'; line = next) {
		char *f[3], *sp;

		next = strchr(line, '\n');
		if (next == NULL)
			goto out;
		*next++ = '\0';
		/* "<mode> tree <hash>\t<path>" */
		if ((tab = strchr(line, '\t')) == NULL)
			goto out;
		*tab = '\0';
		f[0] = line;
		if ((sp = strchr(f[0], ' ')) == NULL || (f[1] = strchr(sp + 1, ' ')) == NULL)
			goto out;
		f[2] = tab + 1;
		if (!in_index(f[2]))
			trees_add(out, f[2], f[1] + 1);
	}
	if (out->n > 1)
		qsort(out->t, out->n, sizeof *out->t, cmp_tree);
	rc = 0;
out:
	if (rc != 0)
		trees_free(out);
	buf_free(&top);
	buf_free(&all);
	buf_free(&kept);
	free(gd);
	return rc;
}

/* What covers the directory rel in t: "-" when the tree has no such directory. */
static const char *
tree_of(const struct trees *t, const char *rel)
{
	struct tree key = { .path = (char *)rel }, *f;

	f = bsearch(&key, t->t, t->n, sizeof *t->t, cmp_tree);
	return f != NULL ? f->hash : "-";
}

/*
 * Marks the manifest's directories whose git tree is not the one indexed
 * (or that the index cannot list): a foreign commit's, read again.
 */
static void
git_check_dirs(const char *root, struct manifest *m, const struct trees *t)
{
	for (size_t i = 0; i < m->nd; i++) {
		struct dir *d = &m->d[i];
		char *full;
		struct stat st;

		d->moved = d->tree == NULL || strcmp(d->tree, tree_of(t, d->rel)) != 0;
		d->dirty = d->uncovered || d->moved;
		/*
		 * Gone: not in HEAD's tree (a sparse checkout lacks directories
		 * it holds), or, in the tree, not a directory here.
		 */
		if (d->dirty && strcmp(tree_of(t, d->rel), "-") == 0)
			d->gone = true;
		else if (d->dirty && !sparse_on(root)) {
			full = full_path(root, d->rel);
			d->gone = lstat(full, &st) != 0 || !S_ISDIR(st.st_mode);
			free(full);
		}
	}
}

/*
 * Checks the manifest's coverage: a git store's by its HEAD's trees (-1
 * when the manifest has none, or git cannot tell), else by stat.
 */
static int
check_coverage(const char *root, struct manifest *m, bool git)
{
	struct trees t;

	if (!git) {
		check_dirs(root, m);
		return 0;
	}
	if (!m->git || git_trees(root, "HEAD", &t) != 0)
		return -1;
	git_check_dirs(root, m, &t);
	trees_free(&t);
	return 0;
}

int
store_index_seal(const char *root, char *const *env)
{
	char *path = easprintf("%s/" MANIFEST, root), *gd = easprintf("--git-dir=%s/.git", root);
	char *line, *next, *tree = NULL;
	buf b = BUF_INIT, res = BUF_INIT, err = BUF_INIT, out = BUF_INIT, tl = BUF_INIT;
	struct trees t = { 0 };
	bool ended = false;
	int rc = -1;

	if (buf_read_file(&b, path) != 0 || b.len == 0 || b.s[b.len - 1] != '\n') {
		warnx("%s: cannot read the store index", path);
		goto out;
	}
	if (git_run_env(root, env, ARGS(gd, "write-tree"), NULL, 0, &res, &err) != 0 ||
	    res.len == 0) {
		char *msg = git_last_error(&err);

		warnx("%s: cannot seal the store index: %s", root, msg);
		free(msg);
		goto out;
	}
	tree = estrndup(res.s, strcspn(res.s, "\n"));
	if (git_trees(root, tree, &t) != 0) {
		warnx("%s: cannot list the trees of the store", root);
		goto out;
	}
	/* The MANIFEST again, its "t" lines those of this tree, before the end line. */
	for (line = b.s; *line != '\0'; line = next) {
		next = strchr(line, '\n') + 1;
		if (strncmp(line, "t\t", 2) == 0)
			continue;
		if (strncmp(line, "end\t", 4) == 0) {
			buf_add(&out, tl.s, tl.len);
			ended = true;
		} else if (strncmp(line, "d\t", 2) == 0) {
			const char *from = line;
			char *rel;

			for (int k = 0; k < 6; k++)
				from = strchr(from, '\t') + 1;
			rel = estrndup(from, (size_t)(next - 1 - from));
			buf_addf(&tl, "t\t%s\t%s\n", tree_of(&t, rel), rel);
			free(rel);
		}
		buf_add(&out, line, (size_t)(next - line));
	}
	if (!ended) {
		warnx("%s: the store index is not whole", path);
		goto out;
	}
	rc = save(path, out.s, out.len);
out:
	trees_free(&t);
	free(tree);
	buf_free(&b);
	buf_free(&res);
	buf_free(&err);
	buf_free(&out);
	buf_free(&tl);
	free(gd);
	free(path);
	return rc;
}

/* The cohort file name of the three str() values of a cohort. */
static void
cohort_hash(const char *w, const char *v, const char *ver, char out[17])
{
	buf b = BUF_INIT;
	char hex[SHA256_HEX];

	buf_add(&b, w, strlen(w) + 1);
	buf_add(&b, v, strlen(v) + 1);
	buf_add(&b, ver, strlen(ver));
	canon_sha256_hex(b.s, b.len, hex);
	memcpy(out, hex, 16);
	out[16] = '\0';
	buf_free(&b);
}

static void
cohort_free(struct cohort *c)
{
	for (size_t i = 0; i < c->nc; i++)
		for (int k = 0; k < IDENTITY_KEYS; k++)
			free(c->c[i].v[k]);
	free(c->c);
	for (size_t i = 0; i < c->ne; i++)
		free(c->e[i].path);
	free(c->e);
}

/* Reads cohort file hash, which must be of generation gen with count entries. */
static int
cohort_load(const char *root, const char *hash, long gen, size_t count, struct cohort *c)
{
	char *path = easprintf("%s/" COHORTS "/%s", root, hash), *line, *next, *f[IDENTITY_KEYS + 2];
	buf b = BUF_INIT;
	long long v, w;
	bool ended = false;
	int rc = -1;

	memset(c, 0, sizeof *c);
	memcpy(c->hash, hash, 17);
	c->loaded = true;
	if (read_index_file(path, &b) != 0 || b.len == 0 || b.s[b.len - 1] != '\n')
		goto out;
	next = strchr(b.s, '\n');
	*next = '\0';
	if (sscanf(b.s, "perfkite-index-cohort %lld %lld", &v, &w) != 2 || v != FORMAT ||
	    w != gen)
		goto out;
	c->gen = gen;
	c->e = emalloc((count + 1) * sizeof *c->e);
	for (line = next + 1; *line != '\0' && !ended; line = next + 1) {
		size_t n;

		next = strchr(line, '\n');
		*next = '\0';
		if (line[0] == 'e' && line[1] == '\t') {
			struct entry e;
			char *p = line + 2, *end;

			if (c->ne >= count)
				goto out;
			e.combo = strtoul(p, &end, 10);
			if (*end != '\t' || e.combo >= c->nc)
				goto out;
			p = end + 1;
			if (*p == '-' && p[1] == '\t') {
				e.instant = ISOTIME_MIN;
				end = p + 1;
			} else
				e.instant = strtoll(p, &end, 10);
			if (*end != '\t')
				goto out;
			e.ino = strtoull(end + 1, &end, 10);
			if (*end != '\t' || end[1] == '\0')
				goto out;
			e.path = estrdup(end + 1);
			c->e[c->ne++] = e;
			continue;
		}
		n = split(line, f, IDENTITY_KEYS + 2);
		if (strcmp(f[0], "c") == 0 && n == IDENTITY_KEYS + 2) {
			struct combo cb;

			if (!parse_ll(f[1], &v))
				goto out;
			cb.flags = (unsigned)v;
			for (int k = 0; k < IDENTITY_KEYS; k++)
				cb.v[k] = estrdup(f[k + 2]);
			c->c = erealloc(c->c, (c->nc + 1) * sizeof *c->c);
			c->c[c->nc++] = cb;
		} else if (strcmp(f[0], "end") == 0 && n == 3) {
			if (!parse_ll(f[1], &v) || (size_t)v != c->nc || !parse_ll(f[2], &v) ||
			    (size_t)v != c->ne || c->ne != count)
				goto out;
			ended = true;
		} else
			goto out;
	}
	rc = ended ? 0 : -1;
out:
	if (rc != 0) {
		cohort_free(c);
		memset(c, 0, sizeof *c);
	}
	buf_free(&b);
	free(path);
	return rc;
}

/* Newest first: by (instant, path), descending. */
static int
cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->instant != y->instant)
		return x->instant > y->instant ? -1 : 1;
	return strcmp(y->path, x->path);
}

/* ---- the writer ---- */

/* What the index keeps of one record file, read whole. */
struct info {
	bool indexable;		/* else the file is always read */
	char hash[17];
	struct combo cb;
	int64_t instant;
};

static const char *const info_keys[] = { "workload_id", "variant_id", "benchmark_version",
    "recipe_fingerprint", "hardware_profile_id", "software_profile_id", "success",
    "baseline_eligible", "run_source", "timestamp" };

/* The reference's str(record.get(key)), and whether it is absent or null. */
static char *
str_of(const cJSON *rec, const char *key, bool *none)
{
	const cJSON *v = json_get(rec, key);

	*none = v == NULL || cJSON_IsNull(v);
	if (*none)
		return estrdup("None");
	if (cJSON_IsString(v))
		return estrdup(v->valuestring);
	return json_pystr_dup(v);
}

static void
info_of(const char *text, size_t len, struct json_arena *arena, const struct json_keyset *ks,
    struct info *in)
{
	const cJSON *rs, *be;
	json_error e;
	cJSON *rec;
	char msg[200];
	bool none;

	memset(in, 0, sizeof *in);
	if (utf8_error(text, len, msg, sizeof msg))
		return;
	json_arena_reset(arena);
	rec = ks != NULL ? json_parse_fast(text, len, ks, arena) : NULL;
	if (rec == NULL) {
		json_arena_reset(arena);
		rec = json_parse_arena(text, len, info_keys, sizeof info_keys / sizeof *info_keys,
		    arena, &e);
	}
	if (rec == NULL || !cJSON_IsObject(rec))
		return;
	in->indexable = true;
	for (int k = 0; k < IDENTITY_KEYS; k++) {
		in->cb.v[k] = str_of(rec, identity_keys[k], &none);
		if (none)
			in->cb.flags |= F_NONE << k;
		in->indexable &= plain(in->cb.v[k]);
	}
	be = json_get(rec, "baseline_eligible");
	rs = json_get(rec, "run_source");
	if (json_get(rec, "success") == NULL || json_truthy(json_get(rec, "success")))
		in->cb.flags |= F_SUCCESS;
	if (cJSON_IsTrue(be) || (be == NULL && rs == NULL))
		in->cb.flags |= F_ELIGIBLE;
	if (cJSON_IsTrue(be) || (cJSON_IsString(rs) && strcmp(rs->valuestring, "scheduled_main") == 0))
		in->cb.flags |= F_TRUSTED;
	in->instant = store_record_instant(rec);
	cohort_hash(in->cb.v[0], in->cb.v[1], in->cb.v[2], in->hash);
}

static void
info_free(struct info *in)
{
	for (int k = 0; k < IDENTITY_KEYS; k++)
		free(in->cb.v[k]);
}

/* The combination cb in cohort c, added when new (its strings are copied). */
static size_t
combo_of(struct cohort *c, const struct combo *cb)
{
	size_t i;
	int k;

	for (i = 0; i < c->nc; i++) {
		if (c->c[i].flags != cb->flags)
			continue;
		for (k = 0; k < IDENTITY_KEYS && strcmp(c->c[i].v[k], cb->v[k]) == 0; k++)
			;
		if (k == IDENTITY_KEYS)
			return i;
	}
	c->c = erealloc(c->c, (c->nc + 1) * sizeof *c->c);
	c->c[c->nc].flags = cb->flags;
	for (k = 0; k < IDENTITY_KEYS; k++)
		c->c[c->nc].v[k] = estrdup(cb->v[k]);
	return c->nc++;
}

/* An entry kept from before, keyed by path, to save reading its file again. */
struct kept {
	char *path;
	unsigned long long ino;
	char hash[17];
	struct combo cb;	/* borrowed from its old cohort */
	int64_t instant;
	bool any_ino;		/* a git store's, its tree unchanged: whatever its inode */
};

struct update {
	const char *root;
	struct manifest old;
	bool have_old;
	struct cohort *c;	/* every cohort touched (loaded or new) */
	size_t nc;
	struct dir *d;		/* the new manifest's directories */
	size_t nd;
	char **always;
	size_t na;
	struct kept *kept;
	size_t nkept;
	char **written;
	size_t nwritten;
	char **work;		/* directories to read, found as they are read */
	size_t nwork, next, active;
	struct dirres **res;	/* res[i]: what reading work[i] found */
	struct dirres **pre;	/* pre[i]: work[i] as HEAD lists it (git), or NULL: read it */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool failed;
	bool git;		/* a git store: the old index's coverage is by trees */
};

/* One record file a directory holds, as its reader found it. */
struct found {
	char *path;
	unsigned long long ino;
	const struct kept *kept;	/* unchanged since the old index: its entry */
	bool always;			/* read whenever the index is */
	struct info in;			/* else what reading it gave */
};

/* What reading one directory found. */
struct dirres {
	struct dir d;
	struct found *f;
	size_t nf;
};

/* One reader thread's own buffers. */
struct reader {
	struct json_arena *arena;
	struct json_keyset *keys;
	struct file_batch *batch;
	buf text;
};

static int
cmp_kept(const void *a, const void *b)
{
	return strcmp(((const struct kept *)a)->path, ((const struct kept *)b)->path);
}

static struct cohort *
get_cohort(struct update *u, const char *hash)
{
	struct mcohort *mk;
	struct cohort *c;

	for (size_t i = 0; i < u->nc; i++)
		if (strcmp(u->c[i].hash, hash) == 0)
			return &u->c[i];
	u->c = erealloc(u->c, (u->nc + 1) * sizeof *u->c);
	c = &u->c[u->nc++];
	memset(c, 0, sizeof *c);
	memcpy(c->hash, hash, 17);
	c->loaded = true;
	if (u->have_old && (mk = find_mcohort(&u->old, hash)) != NULL &&
	    cohort_load(u->root, hash, mk->gen, mk->count, c) != 0) {
		u->failed = true;
		memcpy(c->hash, hash, 17);
		c->loaded = true;
	}
	return c;
}

static bool
was_written(const struct update *u, const char *path)
{
	for (size_t i = 0; i < u->nwritten; i++)
		if (strcmp(u->written[i], path) == 0)
			return true;
	return false;
}

/* Nanoseconds since the epoch. */
static long long
ns_of(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/*
 * Whether a change made from now on gives a time other than t: the file
 * system's clock (the coarse one) has moved past it. A time far ahead
 * (set by hand, restored by tar) is never given to a change either. A
 * time in whole seconds is taken for one of a file system that keeps
 * no finer ones (2 s on some): it is past once two seconds are.
 */
static bool
settled(const struct timespec *t, const struct timespec *now)
{
	long long tick = t->tv_nsec == 0 ? 2000000000LL : 0;

	return ns_of(now) > ns_of(t) + tick || ns_of(t) > ns_of(now) + 100000000LL;
}

/*
 * Stats a directory once the file system's clock has moved past its
 * times, so that a write after the stat always changes them (files
 * written within one clock tick share their times: git's "racy" case).
 */
static int
settled_stat(const char *full, struct dirstat *ds)
{
	struct timespec now, pause = { 0, 1000000 };
	struct stat st;

	for (int tries = 0; tries < 2500; tries++) {
		if (lstat(full, &st) != 0)
			return -1;
		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (settled(&st.st_mtim, &now) && settled(&st.st_ctim, &now))
			break;
		nanosleep(&pause, NULL);
	}
	fill_stat(&st, ds);
	return 0;
}

/* A file's text into in (what the index keeps of it). */
static void
read_text(struct reader *r, const char *text, size_t len, struct info *in)
{
	info_of(text, len, r->arena, r->keys, in);
}

/* Reads a file alone (one too long for the batch, or no batch). */
static void
read_alone(struct reader *r, int dfd, const char *name, struct found *f)
{
	ssize_t n = 0;
	int fd;

	if ((fd = openat(dfd, name, O_RDONLY | O_CLOEXEC)) < 0) {
		f->always = true;
		return;
	}
	buf_reset(&r->text);
	for (;;) {
		buf_grow(&r->text, 65536);
		n = read(fd, r->text.s + r->text.len, r->text.cap - r->text.len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		r->text.len += (size_t)n;
	}
	close(fd);
	if (n < 0) {
		f->always = true;
		return;
	}
	r->text.s[r->text.len] = '\0';
	read_text(r, r->text.s, r->text.len, &f->in);
	f->always = !f->in.indexable;
}

static void
add_work(struct update *u, const char *rel)
{
	pthread_mutex_lock(&u->lock);
	u->work = erealloc(u->work, (u->nwork + 1) * sizeof *u->work);
	u->res = erealloc(u->res, (u->nwork + 1) * sizeof *u->res);
	u->pre = erealloc(u->pre, (u->nwork + 1) * sizeof *u->pre);
	u->res[u->nwork] = NULL;
	u->pre[u->nwork] = NULL;
	u->work[u->nwork++] = estrdup(rel);
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
}

/* The BATCH_FILE_SIZE of read.c: record files longer are read alone. */
#define BATCH_FILE_SIZE 16384

/*
 * Reads the directory rel: its record files (those unchanged since the
 * old index are not read again), and its subdirectories that the old
 * index does not know (known ones are checked on their own).
 */
static struct dirres *
index_dir(struct update *u, struct reader *r, const char *rel)
{
	char *full = full_path(u->root, rel);
	struct dirres *dr = ecalloc(1, sizeof *dr);
	struct dirstat after;
	struct dirent *de;
	struct stat st;
	size_t *todo = NULL, ntodo = 0;
	DIR *dp;

	dr->d.rel = estrdup(rel);
	if (settled_stat(full, &dr->d.st) != 0 || (dp = opendir(full)) == NULL) {
		free(full);
		dr->d.rel[0] = '\0';	/* gone meanwhile: nothing to index */
		return dr;
	}
	while ((de = readdir(dp)) != NULL) {
		bool isdir = de->d_type == DT_DIR, isreg = de->d_type == DT_REG;
		bool plainfile = isreg;		/* a regular file, not a link to one */
		struct kept key, *k;
		struct found *f;
		char *path;
		size_t n;

		if (de->d_name[0] == '.')
			continue;
		if ((de->d_type == DT_UNKNOWN || de->d_type == DT_LNK) &&
		    fstatat(dirfd(dp), de->d_name, &st, 0) == 0) {
			isreg = S_ISREG(st.st_mode);
			isdir = de->d_type == DT_UNKNOWN && S_ISDIR(st.st_mode);
			/* A file system that gives no types: is it a link? */
			plainfile = isreg && de->d_type == DT_UNKNOWN &&
			    fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(st.st_mode);
		}
		path = join(rel, de->d_name);
		if (!plain(path))
			dr->d.uncovered = true;
		n = strlen(de->d_name);
		if (isdir && plain(path) && (!u->have_old || find_dir(&u->old, path) == NULL))
			add_work(u, path);
		if (!isreg || n < 5 || strcmp(de->d_name + n - 5, ".json") != 0) {
			free(path);
			continue;
		}
		dr->d.nfiles++;
		if (!plain(path)) {
			/* Cannot be listed: its directory is read whenever the index is. */
			free(path);
			continue;
		}
		dr->f = erealloc(dr->f, (dr->nf + 1) * sizeof *dr->f);
		f = &dr->f[dr->nf++];
		memset(f, 0, sizeof *f);
		f->path = path;
		f->ino = (unsigned long long)de->d_ino;
		key.path = path;
		k = plainfile && u->nkept > 0 ? bsearch(&key, u->kept, u->nkept,
		    sizeof *u->kept, cmp_kept) : NULL;
		if (k != NULL && (k->ino == f->ino || k->any_ino) && !was_written(u, path))
			f->kept = k;
		else if (!plainfile)
			f->always = true;	/* a link: its target may change unseen */
		else {
			todo = erealloc(todo, (ntodo + 1) * sizeof *todo);
			todo[ntodo++] = dr->nf - 1;
		}
	}
	/* The files to read, FILE_BATCH_MAX at a time. */
	for (size_t i = 0; i < ntodo; i += FILE_BATCH_MAX) {
		const char *names[FILE_BATCH_MAX];
		char *text[FILE_BATCH_MAX];
		long res[FILE_BATCH_MAX];
		size_t m = ntodo - i < FILE_BATCH_MAX ? ntodo - i : FILE_BATCH_MAX;

		for (size_t j = 0; j < m; j++) {
			const char *slash = strrchr(dr->f[todo[i + j]].path, '/');

			names[j] = slash != NULL ? slash + 1 : dr->f[todo[i + j]].path;
		}
		if (r->batch != NULL)
			file_batch_read(r->batch, dirfd(dp), names, m, text, res);
		for (size_t j = 0; j < m; j++) {
			struct found *f = &dr->f[todo[i + j]];

			if (r->batch == NULL || res[j] == FILE_BATCH_LONG)
				read_alone(r, dirfd(dp), names[j], f);
			else if (res[j] < 0)
				f->always = true;
			else {
				read_text(r, text[j], (size_t)res[j], &f->in);
				f->always = !f->in.indexable;
			}
		}
	}
	free(todo);
	closedir(dp);
	/* Changed while read (a foreign writer): read whole whenever the index is. */
	if (lstat(full, &st) != 0 || (fill_stat(&st, &after), !same_stat(&dr->d.st, &after)))
		dr->d.uncovered = true;
	free(full);
	return dr;
}

static void
dirres_free(struct dirres *dr)
{
	if (dr == NULL)
		return;
	for (size_t j = 0; j < dr->nf; j++) {
		free(dr->f[j].path);
		info_free(&dr->f[j].in);
	}
	free(dr->f);
	free(dr->d.rel);
	free(dr);
}

/*
 * Finishes a git store's directory that list_dir listed: reads, from the
 * work tree, the files it left to read (checked out by then).
 */
static struct dirres *
listed_dir(struct update *u, struct reader *r, struct dirres *dr)
{
	char *full = full_path(u->root, dr->d.rel);
	int dfd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (dfd >= 0 && fstat(dfd, &st) == 0)
		fill_stat(&st, &dr->d.st);
	for (size_t i = 0; i < dr->nf; i++) {
		struct found *f = &dr->f[i];
		const char *name = strrchr(f->path, '/');

		if (f->kept != NULL || f->always)
			continue;
		name = name != NULL ? name + 1 : f->path;
		if (dfd < 0 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode)) {
			f->always = true;
			continue;
		}
		f->ino = (unsigned long long)st.st_ino;
		read_alone(r, dfd, name, f);
	}
	if (dfd >= 0)
		close(dfd);
	free(full);
	return dr;
}

/* A reader thread: the directories to read, one at a time, until none is left. */
static void *
index_worker(void *arg)
{
	struct update *u = arg;
	struct reader r;
	size_t i;

	memset(&r, 0, sizeof r);
	r.arena = json_arena_new();
	r.keys = json_keyset_new(info_keys, sizeof info_keys / sizeof *info_keys);
	r.batch = file_batch_new(BATCH_FILE_SIZE);
	pthread_mutex_lock(&u->lock);
	for (;;) {
		while (u->next >= u->nwork && u->active > 0)
			pthread_cond_wait(&u->cond, &u->lock);
		if (u->next >= u->nwork)
			break;
		i = u->next++;
		u->active++;
		pthread_mutex_unlock(&u->lock);
		{
			char *rel = NULL;
			struct dirres *dr, *pre;

			pthread_mutex_lock(&u->lock);
			rel = estrdup(u->work[i]);
			pre = u->pre[i];
			u->pre[i] = NULL;
			pthread_mutex_unlock(&u->lock);
			dr = pre != NULL ? listed_dir(u, &r, pre) : index_dir(u, &r, rel);
			free(rel);
			pthread_mutex_lock(&u->lock);
			u->res[i] = dr;
		}
		u->active--;
		pthread_cond_broadcast(&u->cond);
	}
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	json_arena_free(r.arena);
	json_keyset_free(r.keys);
	file_batch_free(r.batch);
	buf_free(&r.text);
	return NULL;
}

/* Reads the directories of u->work on a few threads (they find more). */
static void
read_dirs(struct update *u)
{
	pthread_t tid[4];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = cpus < 1 ? 1 : cpus > 4 ? 4 : (int)cpus, started = 0;

	for (; n > 1 && started < n; started++)
		if (pthread_create(&tid[started], NULL, index_worker, u) != 0)
			break;
	if (started == 0)
		index_worker(u);
	while (started > 0)
		pthread_join(tid[--started], NULL);
}

/* Puts what the readers found into the cohorts, the directories and the always-read files. */
static void
merge(struct update *u)
{
	for (size_t i = 0; i < u->nwork; i++) {
		struct dirres *dr = u->res[i];

		if (dr == NULL)
			continue;
		for (size_t j = 0; j < dr->nf; j++) {
			struct found *f = &dr->f[j];
			struct cohort *c;
			struct entry e;

			if (f->always) {
				u->always = erealloc(u->always, (u->na + 1) * sizeof *u->always);
				u->always[u->na++] = f->path;
				info_free(&f->in);
				continue;
			}
			c = get_cohort(u, f->kept != NULL ? f->kept->hash : f->in.hash);
			e.path = f->path;
			e.ino = f->ino;
			e.instant = f->kept != NULL ? f->kept->instant : f->in.instant;
			e.combo = combo_of(c, f->kept != NULL ? &f->kept->cb : &f->in.cb);
			c->e = erealloc(c->e, (c->ne + 1) * sizeof *c->e);
			c->e[c->ne++] = e;
			c->changed = true;
			info_free(&f->in);
		}
		free(dr->f);
		if (dr->d.rel[0] != '\0') {
			u->d = erealloc(u->d, (u->nd + 1) * sizeof *u->d);
			u->d[u->nd++] = dr->d;
		} else
			free(dr->d.rel);
		free(dr);
		u->res[i] = NULL;
	}
}

static bool
in_dirs(char *const *dirs, size_t n, const char *rel)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(dirs[i], rel) == 0)
			return true;
	return false;
}

/*
 * The old index's entries of the directories to read again: taken out of
 * their cohorts into u->kept, so that files that did not change are not
 * read.
 */
static void
take_old(struct update *u, char *const *dirty, size_t ndirty)
{
	for (size_t i = 0; i < u->old.nk; i++) {
		struct mcohort *mk = &u->old.k[i];
		bool touched = false;
		struct cohort *c;
		size_t keep = 0;

		for (size_t j = 0; j < mk->ndirs && !touched; j++)
			touched = in_dirs(dirty, ndirty, mk->dirs[j]);
		if (!touched)
			continue;
		c = get_cohort(u, mk->hash);
		for (size_t j = 0; j < c->ne; j++) {
			char *dir = dir_of(c->e[j].path);

			if (in_dirs(dirty, ndirty, dir)) {
				struct dir *d = find_dir(&u->old, dir);
				struct kept k;

				/*
				 * In a git store whose tree of the directory is the
				 * indexed one, only the files written now changed; a
				 * clone's inodes are its own.
				 */
				k.any_ino = u->git && d != NULL && !d->moved;
				k.path = c->e[j].path;
				k.ino = c->e[j].ino;
				memcpy(k.hash, c->hash, 17);
				k.cb = c->c[c->e[j].combo];
				k.instant = c->e[j].instant;
				u->kept = erealloc(u->kept, (u->nkept + 1) * sizeof *u->kept);
				u->kept[u->nkept++] = k;
			} else
				c->e[keep++] = c->e[j];
			free(dir);
		}
		c->ne = keep;
		c->changed = true;
	}
	if (u->nkept > 1)
		qsort(u->kept, u->nkept, sizeof *u->kept, cmp_kept);
}

/* Writes cohort c as generation gen (its combinations renumbered to those in use). */
static int
cohort_write(const char *root, struct cohort *c, long gen)
{
	char *path = easprintf("%s/" COHORTS "/%s", root, c->hash);
	size_t *map = emalloc((c->nc + 1) * sizeof *map), nused = 0;
	buf b = BUF_INIT, gz = BUF_INIT;
	int rc;

	if (c->ne > 1)
		qsort(c->e, c->ne, sizeof *c->e, cmp_entry);
	for (size_t i = 0; i < c->nc; i++)
		map[i] = (size_t)-1;
	for (size_t i = 0; i < c->ne; i++)
		if (map[c->e[i].combo] == (size_t)-1)
			map[c->e[i].combo] = nused++;
	buf_addf(&b, "perfkite-index-cohort %d %ld\n", FORMAT, gen);
	for (size_t n = 0; n < nused; n++)
		for (size_t i = 0; i < c->nc; i++) {
			if (map[i] != n)
				continue;
			buf_addf(&b, "c\t%u", c->c[i].flags);
			for (int k = 0; k < IDENTITY_KEYS; k++)
				buf_addf(&b, "\t%s", c->c[i].v[k]);
			buf_addc(&b, '\n');
		}
	for (size_t i = 0; i < c->ne; i++) {
		buf_addf(&b, "e\t%zu\t", map[c->e[i].combo]);
		if (c->e[i].instant == ISOTIME_MIN)
			buf_addc(&b, '-');
		else
			buf_addf(&b, "%lld", (long long)c->e[i].instant);
		buf_addf(&b, "\t%llu\t%s\n", c->e[i].ino, c->e[i].path);
	}
	buf_addf(&b, "end\t%zu\t%zu\n", nused, c->ne);
	gzip_to(b.s, b.len, &gz);
	rc = save(path, gz.s, gz.len);
	buf_free(&b);
	buf_free(&gz);
	free(map);
	free(path);
	return rc;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The index of directory rel in the new manifest (sorted), or -1. */
static long
new_dir_no(const struct update *u, const char *rel)
{
	struct dir key = { .rel = (char *)rel }, *d;

	d = bsearch(&key, u->d, u->nd, sizeof *u->d, cmp_dir);
	return d == NULL ? -1 : (long)(d - u->d);
}

static void
add_dir_no(buf *b, long no, bool *first)
{
	buf_addf(b, "%s%ld", *first ? "" : ",", no);
	*first = false;
}

/* Writes the MANIFEST: every directory, every cohort with its directories, the always-read files. */
static int
manifest_write(struct update *u, long gen)
{
	char *path = easprintf("%s/" MANIFEST, u->root);
	buf b = BUF_INIT;
	size_t nk = 0;
	int rc;

	if (u->nd > 1)
		qsort(u->d, u->nd, sizeof *u->d, cmp_dir);
	if (u->na > 1)
		qsort(u->always, u->na, sizeof *u->always, cmp_str);
	buf_addf(&b, "perfkite-index %d %ld\n", FORMAT, gen);
	for (size_t i = 0; i < u->nd; i++)
		buf_addf(&b, "d\t%c\t%llu\t%lld.%09lld\t%lld.%09lld\t%zu\t%s\n",
		    u->d[i].uncovered ? 'u' : 'c', u->d[i].st.ino, u->d[i].st.ms, u->d[i].st.mns,
		    u->d[i].st.cs, u->d[i].st.cns, u->d[i].nfiles, u->d[i].rel);
	/* Cohorts the update touched, then the old ones it did not. */
	for (size_t i = 0; i < u->nc; i++) {
		struct cohort *c = &u->c[i];
		char **dirs = NULL;
		size_t nd = 0;
		bool first = true;

		if (c->ne == 0)
			continue;
		for (size_t j = 0; j < c->ne; j++) {
			char *dir = dir_of(c->e[j].path);

			if (!in_dirs(dirs, nd, dir)) {
				dirs = erealloc(dirs, (nd + 1) * sizeof *dirs);
				dirs[nd++] = dir;
			} else
				free(dir);
		}
		buf_addf(&b, "k\t%s\t%zu\t%ld\t", c->hash, c->ne, c->changed ? gen : c->gen);
		for (size_t j = 0; j < nd; j++) {
			add_dir_no(&b, new_dir_no(u, dirs[j]), &first);
			free(dirs[j]);
		}
		free(dirs);
		buf_addc(&b, '\n');
		nk++;
	}
	for (size_t i = 0; u->have_old && i < u->old.nk; i++) {
		struct mcohort *mk = &u->old.k[i];
		bool touched = false, first = true;

		for (size_t j = 0; j < u->nc && !touched; j++)
			touched = strcmp(u->c[j].hash, mk->hash) == 0;
		if (touched)
			continue;
		buf_addf(&b, "k\t%s\t%zu\t%ld\t", mk->hash, mk->count, mk->gen);
		for (size_t j = 0; j < mk->ndirs; j++)
			add_dir_no(&b, new_dir_no(u, mk->dirs[j]), &first);
		buf_addc(&b, '\n');
		nk++;
	}
	for (size_t i = 0; i < u->na; i++)
		buf_addf(&b, "a\t%s\n", u->always[i]);
	buf_addf(&b, "end\t%zu\t%zu\t%zu\n", u->nd, nk, u->na);
	rc = save(path, b.s, b.len);
	buf_free(&b);
	free(path);
	return rc;
}

static void
update_free(struct update *u)
{
	for (size_t i = 0; i < u->nc; i++)
		cohort_free(&u->c[i]);
	free(u->c);
	for (size_t i = 0; i < u->nd; i++)
		free(u->d[i].rel);
	free(u->d);
	for (size_t i = 0; i < u->na; i++)
		free(u->always[i]);
	free(u->always);
	for (size_t i = 0; i < u->nkept; i++)
		free(u->kept[i].path);
	free(u->kept);
	for (size_t i = 0; i < u->nwork; i++)
		free(u->work[i]);
	free(u->work);
	manifest_free(&u->old);
	for (size_t i = 0; i < u->nwork; i++) {
		dirres_free(u->res[i]);
		dirres_free(u->pre[i]);
	}
	free(u->res);
	free(u->pre);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->cond);
}

/* Makes the index's directories; -1 after reporting. */
static int
make_dirs(const char *root)
{
	char *path = easprintf("%s/" COHORTS, root);
	int rc = atomic_mkdirs(path);

	if (rc != 0)
		warn("%s: cannot create the store index", path);
	free(path);
	return rc;
}

/* Whether the old MANIFEST covers the directory rel (sparse_need). */
static bool
old_known(const char *rel, void *ctx)
{
	return find_dir(ctx, rel) != NULL;
}

/* One entry of a git tree's listing. */
struct lentry {
	char *name;
	char *hash;
	char type;		/* 'b' a file, 't' a directory, 'o' a link or a submodule */
};

static int
cmp_lentry(const void *a, const void *b)
{
	return strcmp(((const struct lentry *)a)->name, ((const struct lentry *)b)->name);
}

static void
lentries_free(struct lentry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].name);
		free(e[i].hash);
	}
	free(e);
}

/* The entries of the git tree rev of the work tree root, sorted by name; -1 when git cannot list it. */
static int
tree_list(const char *root, const char *rev, struct lentry **e, size_t *n)
{
	char *gd = easprintf("--git-dir=%s/.git", root), *line, *end, *tab, *sp;
	buf out = BUF_INIT;
	int rc = -1;

	*e = NULL;
	*n = 0;
	if (git_run(root, ARGS(gd, "ls-tree", "-z", rev), NULL, 0, &out, NULL) != 0)
		goto out;
	/* "<mode> <type> <hash>\t<name>\0" */
	for (line = out.s; line < out.s + out.len; line = end + 1) {
		struct lentry le;

		end = line + strlen(line);
		if ((tab = strchr(line, '\t')) == NULL || (sp = strchr(line, ' ')) == NULL ||
		    sp > tab || (sp = strchr(sp + 1, ' ')) == NULL || sp > tab)
			goto out;
		le.name = estrdup(tab + 1);
		le.hash = estrndup(sp + 1, (size_t)(tab - sp - 1));
		if (strncmp(line, "120000 ", 7) == 0)
			le.type = 'o';
		else if (strncmp(strchr(line, ' ') + 1, "blob ", 5) == 0)
			le.type = 'b';
		else if (strncmp(strchr(line, ' ') + 1, "tree ", 5) == 0)
			le.type = 't';
		else
			le.type = 'o';
		*e = erealloc(*e, (*n + 1) * sizeof **e);
		(*e)[(*n)++] = le;
	}
	if (*n > 1)
		qsort(*e, *n, sizeof **e, cmp_lentry);
	rc = 0;
out:
	if (rc != 0) {
		lentries_free(*e, *n);
		*e = NULL;
		*n = 0;
	}
	buf_free(&out);
	free(gd);
	return rc;
}

static const struct lentry *
find_lentry(const struct lentry *e, size_t n, const char *name)
{
	struct lentry key = { .name = (char *)name };

	return n > 0 ? bsearch(&key, e, n, sizeof *e, cmp_lentry) : NULL;
}

static void
push(char ***v, size_t *n, char *s)
{
	*v = erealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
}

/*
 * A git store's directory d (old index's) that must be indexed again, as
 * HEAD's tree lists it, without reading what did not change: a file whose
 * blob is the one of the tree indexed (every file, where the directory's
 * tree did not move) keeps its old entry; the files written now and those
 * a foreign commit added or replaced are to read, added to need (to be
 * checked out); subdirectories the old index does not know go to sub.
 * NULL where the directory must be read whole from the work tree (the top
 * moved: its tree is not indexed; a link, a submodule, a name the index
 * cannot hold; git cannot list it).
 */
static struct dirres *
list_dir(struct update *u, const struct dir *d, char ***need, size_t *nneed, char ***sub,
    size_t *nsub)
{
	struct lentry *now = NULL, *was = NULL;
	size_t nnow = 0, nwas = 0;
	struct dirres *dr;
	bool top = strcmp(d->rel, ".") == 0, ok;
	char *rev;

	if (d->uncovered || (d->moved && top) || d->tree == NULL)
		return NULL;
	rev = top ? estrdup("HEAD") : easprintf("HEAD:%s", d->rel);
	ok = tree_list(u->root, rev, &now, &nnow) == 0 &&
	    (!d->moved || tree_list(u->root, d->tree, &was, &nwas) == 0);
	free(rev);
	for (size_t i = 0; ok && i < nnow; i++) {
		char *path = join(d->rel, now[i].name);

		ok = now[i].name[0] == '.' || (plain(path) && now[i].type != 'o');
		free(path);
	}
	if (!ok) {
		lentries_free(now, nnow);
		lentries_free(was, nwas);
		return NULL;
	}
	dr = ecalloc(1, sizeof *dr);
	dr->d.rel = estrdup(d->rel);
	for (size_t i = 0; i < nnow + u->nwritten; i++) {
		const struct lentry *w;
		struct kept key, *k;
		struct found *f;
		char *path, *dir;
		size_t n;

		if (i < nnow) {
			if (now[i].name[0] == '.')
				continue;
			path = join(d->rel, now[i].name);
			if (now[i].type == 't') {
				if (find_dir(&u->old, path) == NULL)
					push(sub, nsub, path);
				else
					free(path);
				continue;
			}
			n = strlen(now[i].name);
			if (n < 5 || strcmp(now[i].name + n - 5, ".json") != 0) {
				free(path);
				continue;
			}
		} else {
			/* A file written now, in this directory and not in HEAD's tree. */
			const char *base = strrchr(u->written[i - nnow], '/');

			dir = dir_of(u->written[i - nnow]);
			base = base != NULL ? base + 1 : u->written[i - nnow];
			if (strcmp(dir, d->rel) != 0 || find_lentry(now, nnow, base) != NULL) {
				free(dir);
				continue;
			}
			free(dir);
			path = estrdup(u->written[i - nnow]);
		}
		dr->d.nfiles++;
		dr->f = erealloc(dr->f, (dr->nf + 1) * sizeof *dr->f);
		f = &dr->f[dr->nf++];
		memset(f, 0, sizeof *f);
		f->path = path;
		if (i < nnow && !was_written(u, path) && (!d->moved ||
		    ((w = find_lentry(was, nwas, now[i].name)) != NULL && w->type == 'b' &&
		    strcmp(w->hash, now[i].hash) == 0))) {
			key.path = path;
			k = u->nkept > 0 ? bsearch(&key, u->kept, u->nkept, sizeof *u->kept,
			    cmp_kept) : NULL;
			if (k != NULL) {
				f->kept = k;
				f->ino = k->ino;
				continue;
			}
			if (u->old.na > 0 && bsearch(&path, u->old.always, u->old.na,
			    sizeof *u->old.always, cmp_str) != NULL) {
				f->always = true;
				continue;
			}
		}
		push(need, nneed, estrdup(path));
	}
	lentries_free(now, nnow);
	lentries_free(was, nwas);
	return dr;
}

/*
 * Plans the reading of a git store's directories dirty[0..n) (the old
 * index's that changed or are written to): each listed from HEAD's tree
 * (list_dir) where it can be, else read whole (walk). The directories
 * the old index does not know (a foreign commit's, or this batch's) are
 * read whole too. need and walk are for sparse_need.
 */
static void
plan_git(struct update *u, char *const *dirty, size_t n, char ***need, size_t *nneed,
    char ***walk, size_t *nwalk)
{
	char **sub = NULL;
	size_t nsub = 0;

	for (size_t i = 0; i < u->nwritten; i++)
		push(need, nneed, estrdup(u->written[i]));
	for (size_t i = 0; i < n; i++) {
		struct dir *d = find_dir(&u->old, dirty[i]);
		struct dirres *dr;

		if (d == NULL || d->gone)
			continue;
		dr = list_dir(u, d, need, nneed, &sub, &nsub);
		add_work(u, d->rel);
		if (dr != NULL)
			u->pre[u->nwork - 1] = dr;
		else
			push(walk, nwalk, estrdup(d->rel));
	}
	/* A written file's directory the index does not hold: its topmost such one. */
	for (size_t i = 0; i < u->nwritten; i++) {
		char *cur = dir_of(u->written[i]), *top = NULL;
		struct dir *d;

		while ((d = find_dir(&u->old, cur)) == NULL || d->gone) {
			if (strcmp(cur, ".") == 0)
				break;
			free(top);
			top = cur;
			cur = dir_of(top);
		}
		/* (one read whole finds those it does not know itself) */
		if (top != NULL && !(in_dirs(*walk, *nwalk, cur) && find_dir(&u->old, top) == NULL))
			push(&sub, &nsub, top);
		else
			free(top);
		free(cur);
	}
	for (size_t i = 0; i < nsub; i++) {
		if (!in_dirs(u->work, u->nwork, sub[i])) {
			add_work(u, sub[i]);
			push(walk, nwalk, estrdup(sub[i]));
		}
		free(sub[i]);
	}
	free(sub);
}

static int
update_once(const char *root, char *const *written, size_t nw, bool full, bool git,
    bool *retry)
{
	struct update u;
	char **dirty = NULL, **need = NULL, **walk = NULL;
	size_t ndirty = 0, nneed = 0, nwalk = 0;
	int rc = 0;

	*retry = false;
	memset(&u, 0, sizeof u);
	u.root = root;
	u.written = (char **)written;
	u.nwritten = nw;
	pthread_mutex_init(&u.lock, NULL);
	pthread_cond_init(&u.cond, NULL);
	/* The index's own directory is made first: the store's times then hold. */
	if (make_dirs(root) != 0) {
		update_free(&u);
		return -1;
	}
	u.have_old = !full && manifest_load(root, &u.old) == 0;
	u.git = git;
	if (u.have_old && check_coverage(root, &u.old, git) != 0) {
		/* A git store's index without its trees: built anew. */
		manifest_free(&u.old);
		u.have_old = false;
	}
	if (u.have_old) {
		for (size_t i = 0; i < nw; i++) {
			char *dir = dir_of(written[i]);
			struct dir *d = find_dir(&u.old, dir);

			if (d != NULL)
				d->dirty = true;
			free(dir);
		}
		for (size_t i = 0; i < u.old.nd; i++) {
			struct dir *d = &u.old.d[i];

			if (d->dirty) {
				dirty = erealloc(dirty, (ndirty + 1) * sizeof *dirty);
				dirty[ndirty++] = d->rel;
				if (!d->gone && !git)
					add_work(&u, d->rel);
			} else {
				struct dir nd = *d;

				nd.rel = estrdup(d->rel);
				nd.tree = NULL;
				u.d = erealloc(u.d, (u.nd + 1) * sizeof *u.d);
				u.d[u.nd++] = nd;
			}
		}
		/* Files always read stay, where their directory did not change. */
		for (size_t i = 0; i < u.old.na; i++) {
			char *dir = dir_of(u.old.always[i]);

			if (!in_dirs(dirty, ndirty, dir)) {
				u.always = erealloc(u.always, (u.na + 1) * sizeof *u.always);
				u.always[u.na++] = estrdup(u.old.always[i]);
			}
			free(dir);
		}
		take_old(&u, dirty, ndirty);
		if (git)
			plan_git(&u, dirty, ndirty, &need, &nneed, &walk, &nwalk);
	} else
		add_work(&u, ".");
	/*
	 * A sparse checkout (sparse.h): what is read checked out first; of a
	 * directory listed from HEAD, only the files to read.
	 */
	if (git && (u.have_old ? sparse_need(root, need, nneed, walk, nwalk, old_known,
	    &u.old) : sparse_all(root)) != 0)
		rc = -1;
	for (size_t i = 0; i < nneed; i++)
		free(need[i]);
	free(need);
	for (size_t i = 0; i < nwalk; i++)
		free(walk[i]);
	free(walk);
	if (rc != 0) {
		free(dirty);
		update_free(&u);
		return -1;
	}
	if (!u.failed) {
		read_dirs(&u);
		merge(&u);
	}
	if (u.failed) {
		/* An old cohort file that is not what the MANIFEST says: start over. */
		*retry = !full;
		free(dirty);
		update_free(&u);
		return -1;
	}
	if (u.nwork > 0 || !u.have_old) {
		long gen = u.have_old ? u.old.gen + 1 : 1;

		for (size_t i = 0; i < u.nc && rc == 0; i++) {
			if (!u.c[i].changed)
				continue;
			if (u.c[i].ne == 0) {
				char *path = easprintf("%s/" COHORTS "/%s", root, u.c[i].hash);
				unlink(path);
				free(path);
			} else
				rc = cohort_write(root, &u.c[i], gen);
		}
		if (rc == 0)
			rc = manifest_write(&u, gen);
	}
	free(dirty);
	update_free(&u);
	return rc;
}

int
store_index_update(const char *root, char *const *written, size_t n, bool full, bool git)
{
	bool retry;
	int rc = update_once(root, written, n, full, git, &retry);

	if (rc != 0 && retry)
		rc = update_once(root, written, n, true, git, &retry);
	return rc;
}

/* ---- the reader's plan ---- */

/* The position of identity key name, or -1. */
static int
identity_pos(const char *name)
{
	for (int k = 0; k < IDENTITY_KEYS; k++)
		if (strcmp(identity_keys[k], name) == 0)
			return k;
	return -1;
}

/* Whether combination cb satisfies q (whose keys are all identity keys). */
static bool
combo_matches(const struct combo *cb, const struct store_query *q)
{
	if (q->successful_only && !(cb->flags & F_SUCCESS))
		return false;
	if (q->eligible_only && !(cb->flags & F_ELIGIBLE))
		return false;
	for (int i = 0; i < q->nkeys; i++)
		if (strcmp(cb->v[identity_pos(q->keys[i])], q->values[i]) != 0)
			return false;
	return true;
}

/* The cohort file a query reads, or false when it names none. */
static bool
query_cohort(const struct store_query *q, char hash[17])
{
	const char *v[3] = { NULL, NULL, NULL };

	for (int i = 0; i < q->nkeys; i++) {
		int k = identity_pos(q->keys[i]);

		if (k < 0)
			return false;
		if (k < 3)
			v[k] = q->values[i];
	}
	if (v[0] == NULL || v[1] == NULL || v[2] == NULL)
		return false;
	cohort_hash(v[0], v[1], v[2], hash);
	return true;
}

static bool
clean_dir(const struct manifest *m, const char *path)
{
	char *dir = dir_of(path);
	const struct dir *d = find_dir(m, dir);

	free(dir);
	return d != NULL && !d->dirty;
}

static void
plan_add(struct store_index_plan *p, const char *path)
{
	p->files = erealloc(p->files, (p->nfiles + 1) * sizeof *p->files);
	p->files[p->nfiles++] = estrdup(path);
}

/* What one query asks of the cohort file being read. */
struct ask {
	const struct store_query *q;
	bool limited;		/* newest or distinct: the file may be left unread */
	bool *want;		/* want[combination]: it matches the query */
	bool *seen;		/* seen[combination]: one of its entries is taken */
	size_t taken, unseen;	/* entries taken; matching combinations not seen yet */
	bool done;
};

/*
 * Reads the cohort file hash (of generation gen, count entries) for the
 * queries q[0..n), newest entry first, adding to p the files they need;
 * the rest of the file is left unread once each query has what it asks.
 * Returns -1 when the file is not what the MANIFEST says.
 */
static int
cohort_read(const char *root, const char *hash, long gen, size_t count,
    const struct store_query *const *q, size_t n, const struct manifest *m,
    struct store_index_plan *p, bool hints)
{
	char *path = easprintf("%s/" COHORTS "/%s", root, hash);
	struct combo *cb = NULL;
	struct ask *ask = ecalloc(n, sizeof *ask);
	unsigned char in[16384];
	size_t ncb = 0, nent = 0, start = 0, ndone = 0;
	buf text = BUF_INIT;
	bool header = false, asked = false, ended = false;
	z_stream z;
	int fd, zr = Z_OK, rc = -1;
	ssize_t got;

	memset(&z, 0, sizeof z);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || inflateInit2(&z, 31) != Z_OK)
		goto out;
	for (size_t i = 0; i < n; i++) {
		ask[i].q = q[i];
		ask[i].limited = hints && (q[i]->newest > 0 || q[i]->distinct);
	}
	while (!ended && ndone < n) {
		char *line, *nl;

		/* More text: inflate what the file holds next. */
		if (zr == Z_STREAM_END)
			break;
		if (z.avail_in == 0) {
			if ((got = read(fd, in, sizeof in)) <= 0)
				break;
			z.next_in = in;
			z.avail_in = (uInt)got;
		}
		buf_grow(&text, 65536);
		z.next_out = (Bytef *)text.s + text.len;
		z.avail_out = (uInt)(text.cap - text.len - 1);
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
			break;
		text.len = (size_t)((char *)z.next_out - text.s);
		text.s[text.len] = '\0';
		/* Each whole line. */
		while (!ended && ndone < n && (nl = memchr(text.s + start, '\n',
		    text.len - start)) != NULL) {
			line = text.s + start;
			*nl = '\0';
			start = (size_t)(nl - text.s) + 1;
			if (!header) {
				long long v, w;

				if (sscanf(line, "perfkite-index-cohort %lld %lld", &v, &w) != 2 ||
				    v != FORMAT || w != gen)
					goto out;
				header = true;
			} else if (line[0] == 'c' && line[1] == '\t' && !asked) {
				char *f[IDENTITY_KEYS + 2];
				long long v;

				if (split(line, f, IDENTITY_KEYS + 2) != IDENTITY_KEYS + 2 ||
				    !parse_ll(f[1], &v))
					goto out;
				cb = erealloc(cb, (ncb + 1) * sizeof *cb);
				cb[ncb].flags = (unsigned)v;
				for (int k = 0; k < IDENTITY_KEYS; k++)
					cb[ncb].v[k] = f[k + 2];	/* in text: kept below */
				for (int k = 0; k < IDENTITY_KEYS; k++)
					cb[ncb].v[k] = estrdup(cb[ncb].v[k]);
				ncb++;
			} else if (line[0] == 'e' && line[1] == '\t') {
				char *end, *ep;
				size_t c;

				if (!asked) {
					/* The combinations are known: what each query wants. */
					for (size_t i = 0; i < n; i++) {
						ask[i].want = ecalloc(ncb + 1, sizeof *ask[i].want);
						ask[i].seen = ecalloc(ncb + 1, sizeof *ask[i].seen);
						for (size_t k = 0; k < ncb; k++)
							if ((ask[i].want[k] = combo_matches(&cb[k], q[i])))
								ask[i].unseen++;
					}
					asked = true;
				}
				if (++nent > count)
					goto out;
				c = strtoul(line + 2, &end, 10);
				if (*end != '\t' || c >= ncb)
					goto out;
				/* The path is the last field, after instant and inode. */
				ep = strchr(end + 1, '\t');
				ep = ep != NULL ? strchr(ep + 1, '\t') : NULL;
				if (ep == NULL || ep[1] == '\0')
					goto out;
				ep++;
				for (size_t i = 0; i < n; i++) {
					struct ask *a = &ask[i];
					bool take;

					if (a->done || !a->want[c] || !clean_dir(m, ep))
						continue;
					take = !a->limited || (a->q->newest > 0 &&
					    a->taken < (size_t)a->q->newest) ||
					    (a->q->distinct && !a->seen[c]);
					if (!take)
						continue;
					if (!a->seen[c]) {
						a->seen[c] = true;
						a->unseen--;
					}
					a->taken++;
					plan_add(p, ep);
					if (a->limited && (a->q->newest == 0 ||
					    a->taken >= (size_t)a->q->newest) &&
					    (!a->q->distinct || a->unseen == 0)) {
						a->done = true;
						ndone++;
					}
				}
			} else if (strncmp(line, "end\t", 4) == 0) {
				char *f[3];
				long long v, w;

				if (split(line, f, 3) != 3 || !parse_ll(f[1], &v) || !parse_ll(f[2], &w) ||
				    (size_t)v != ncb || (size_t)w != nent || nent != count)
					goto out;
				ended = true;
			} else
				goto out;
		}
		/* Keep the part line for the next text. */
		if (start > 0) {
			memmove(text.s, text.s + start, text.len - start);
			text.len -= start;
			text.s[text.len] = '\0';
			start = 0;
		}
	}
	/* Either every query has what it asks, or the whole file was read. */
	rc = header && (ndone == n || (ended && zr == Z_STREAM_END)) ? 0 : -1;
out:
	if (fd >= 0)
		close(fd);
	inflateEnd(&z);
	for (size_t k = 0; k < ncb; k++)
		for (int j = 0; j < IDENTITY_KEYS; j++)
			free(cb[k].v[j]);
	free(cb);
	for (size_t i = 0; i < n; i++) {
		free(ask[i].want);
		free(ask[i].seen);
	}
	free(ask);
	buf_free(&text);
	free(path);
	return rc;
}

struct store_index_plan *
store_index_plan(const char *root, const struct store_query *q, int nq, bool hints, bool git)
{
	struct store_index_plan *p;
	struct manifest m;
	char (*hash)[17];
	size_t w = 0;
	int i;

	if (!store_index_enabled() || nq <= 0)
		return NULL;
	hash = emalloc((size_t)nq * sizeof *hash);
	for (i = 0; i < nq; i++)
		if (!query_cohort(&q[i], hash[i])) {
			free(hash);
			return NULL;
		}
	if (manifest_load(root, &m) != 0) {
		free(hash);
		return NULL;
	}
	if (check_coverage(root, &m, git) != 0) {
		manifest_free(&m);
		free(hash);
		return NULL;
	}
	p = ecalloc(1, sizeof *p);
	for (i = 0; i < nq; i++) {
		const struct store_query **mine;
		struct mcohort *mk;
		size_t n = 0;
		int j, bad;

		/* A cohort shared by queries is read once, for all of them. */
		for (j = 0; j < i && strcmp(hash[j], hash[i]) != 0; j++)
			;
		if (j < i || (mk = find_mcohort(&m, hash[i])) == NULL)
			continue;	/* read, or no record of it where the index holds */
		mine = emalloc((size_t)nq * sizeof *mine);
		for (int k = i; k < nq; k++)
			if (strcmp(hash[k], hash[i]) == 0)
				mine[n++] = &q[k];
		bad = cohort_read(root, hash[i], mk->gen, mk->count, mine, n, &m, p, hints);
		free(mine);
		if (bad != 0) {
			store_index_plan_free(p);
			manifest_free(&m);
			free(hash);
			return NULL;
		}
	}
	for (size_t a = 0; a < m.na; a++)
		if (clean_dir(&m, m.always[a]))
			plan_add(p, m.always[a]);
	if (p->nfiles > 1)
		qsort(p->files, p->nfiles, sizeof *p->files, cmp_str);
	for (size_t f = 0; f < p->nfiles; f++) {
		if (w > 0 && strcmp(p->files[w - 1], p->files[f]) == 0)
			free(p->files[f]);
		else
			p->files[w++] = p->files[f];
	}
	p->nfiles = w;
	for (size_t d = 0; d < m.nd; d++) {
		p->known = erealloc(p->known, (p->nknown + 1) * sizeof *p->known);
		p->known[p->nknown++] = estrdup(m.d[d].rel);
		if (!m.d[d].dirty)
			p->nrecords += m.d[d].nfiles;
		else if (!m.d[d].gone) {
			p->dirs = erealloc(p->dirs, (p->ndirs + 1) * sizeof *p->dirs);
			p->dirs[p->ndirs++] = estrdup(m.d[d].rel);
		}
	}
	if (p->nknown > 1)
		qsort(p->known, p->nknown, sizeof *p->known, cmp_str);
	manifest_free(&m);
	free(hash);
	return p;
}

bool
store_index_known(const struct store_index_plan *p, const char *rel)
{
	return bsearch(&rel, p->known, p->nknown, sizeof *p->known, cmp_str) != NULL;
}

void
store_index_plan_free(struct store_index_plan *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->nfiles; i++)
		free(p->files[i]);
	free(p->files);
	for (size_t i = 0; i < p->ndirs; i++)
		free(p->dirs[i]);
	free(p->dirs);
	for (size_t i = 0; i < p->nknown; i++)
		free(p->known[i]);
	free(p->known);
	free(p);
}
