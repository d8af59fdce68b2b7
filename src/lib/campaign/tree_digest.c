#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "campaign/tree_digest.h"
#include "core/atomic.h"
#include "core/err.h"
#include "core/json.h"

struct entry {
	char *path;	/* relative */
	bool dir;
	long long size;
	char sha[SHA256_HEX];
};

struct walk {
	struct entry *v;
	size_t n;
	char *why;
};

static int
hash_file(const char *path, char hex[SHA256_HEX], long long *size)
{
	unsigned char chunk[65536];
	struct canon_sha *h;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	*size = 0;
	if (fd < 0)
		return -1;
	h = canon_sha_new();
	while ((r = read(fd, chunk, sizeof chunk)) > 0) {
		canon_sha_update(h, chunk, (size_t)r);
		*size += r;
	}
	close(fd);
	canon_sha_final(h, hex);
	return r < 0 ? -1 : 0;
}

static int
walk(struct walk *w, const char *root, const char *rel)
{
	char *dirpath = *rel != '\0' ? easprintf("%s/%s", root, rel) : estrdup(root);
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dirpath);
	int rc = 0;

	if (d == NULL) {
		w->why = easprintf("%s: %s", dirpath, strerror(errno));
		free(dirpath);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char *r, *full;
		struct entry *en;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		r = *rel != '\0' ? easprintf("%s/%s", rel, e->d_name) : estrdup(e->d_name);
		full = easprintf("%s/%s", root, r);
		if (lstat(full, &st) != 0) {
			w->why = easprintf("%s: %s", full, strerror(errno));
			rc = -1;
		} else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
			w->why = easprintf("%s: %s refused", full, S_ISLNK(st.st_mode) ?
			    "a symbolic link is" : "a special file is");
			rc = -1;
		} else {
			w->v = erealloc(w->v, (w->n + 1) * sizeof *w->v);
			en = &w->v[w->n++];
			memset(en, 0, sizeof *en);
			en->path = estrdup(r);
			en->dir = S_ISDIR(st.st_mode);
			if (en->dir)
				rc = walk(w, root, r);
			else if (hash_file(full, en->sha, &en->size) != 0) {
				w->why = easprintf("%s: %s", full, strerror(errno));
				rc = -1;
			}
		}
		free(r);
		free(full);
	}
	closedir(d);
	free(dirpath);
	return rc;
}

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

int
tree_digest(const char *dir, char hex[SHA256_HEX], char **why)
{
	struct walk w = { NULL, 0, NULL };
	cJSON *arr;
	int rc;

	rc = walk(&w, dir, "");
	if (rc == 0) {
		if (w.n > 1)
			qsort(w.v, w.n, sizeof *w.v, cmp_entry);
		arr = json_new_array();
		for (size_t i = 0; i < w.n; i++) {
			cJSON *o = json_new_object();

			json_set(o, "path", json_new_string(w.v[i].path));
			json_set(o, "type", json_new_string(w.v[i].dir ? "directory" : "file"));
			json_set(o, "size", json_new_int(w.v[i].dir ? 0 : w.v[i].size));
			json_set(o, "sha256", w.v[i].dir ? json_new_null() :
			    json_new_string(w.v[i].sha));
			json_append(arr, o);
		}
		canon_sha256(arr, hex);
		cJSON_Delete(arr);
	}
	for (size_t i = 0; i < w.n; i++)
		free(w.v[i].path);
	free(w.v);
	*why = w.why;
	return rc;
}

static int
copy_file(const char *from, const char *to, mode_t mode)
{
	char chunk[65536];
	ssize_t r;
	int in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), out, e;

	if (in < 0)
		return -1;
	if ((out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 07777)) < 0) {
		e = errno;
		close(in);
		errno = e;
		return -1;
	}
	while ((r = read(in, chunk, sizeof chunk)) > 0)
		if (write(out, chunk, (size_t)r) != r) {
			r = -1;
			break;
		}
	e = errno;
	close(in);
	if (close(out) != 0 || r < 0) {
		errno = r < 0 ? e : errno;
		return -1;
	}
	return 0;
}

int
tree_copy(const char *src, const char *dst, char **why)
{
	struct walk w = { NULL, 0, NULL };
	struct stat st;
	int rc = walk(&w, src, "");

	if (rc == 0 && atomic_mkdirs(dst) != 0) {
		w.why = easprintf("%s: %s", dst, strerror(errno));
		rc = -1;
	}
	for (size_t i = 0; rc == 0 && i < w.n; i++) {
		char *from = easprintf("%s/%s", src, w.v[i].path);
		char *to = easprintf("%s/%s", dst, w.v[i].path);

		if (lstat(from, &st) != 0 ||
		    (w.v[i].dir ? mkdir(to, st.st_mode & 07777) != 0 && errno != EEXIST :
		    copy_file(from, to, st.st_mode) != 0)) {
			w.why = easprintf("%s: %s", to, strerror(errno));
			rc = -1;
		}
		free(from);
		free(to);
	}
	for (size_t i = 0; i < w.n; i++)
		free(w.v[i].path);
	free(w.v);
	*why = w.why;
	return rc;
}
