#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "err.h"

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Moves tmp to path without ever replacing a file there: renameat2's
 * RENAME_NOREPLACE, or, where the file system lacks it, a hard link.
 */
static int
place_new(const char *tmp, const char *path)
{
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (link(tmp, path) != 0)
		return -1;
	unlink(tmp);
	return 0;
}

static int
write_file(const char *path, const void *data, size_t n, bool replace)
{
	char *dcopy = estrdup(path), *bcopy = estrdup(path);
	char *dir = dirname(dcopy), *base = basename(bcopy), *tmp;
	mode_t mask;
	int fd, dfd, e;

	tmp = easprintf("%s/.%s.tmp.XXXXXX", dir, base);
	if ((fd = mkstemp(tmp)) < 0)
		goto fail;
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0 || write_all(fd, data, n) != 0 ||
	    fsync(fd) != 0) {
		e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
		goto fail;
	}
	if (close(fd) != 0 || (replace ? rename(tmp, path) : place_new(tmp, path)) != 0) {
		e = errno;
		unlink(tmp);
		errno = e;
		goto fail;
	}
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(tmp);
	free(dcopy);
	free(bcopy);
	return 0;
fail:
	e = errno;
	free(tmp);
	free(dcopy);
	free(bcopy);
	errno = e;
	return -1;
}

int
atomic_write_file(const char *path, const void *data, size_t n)
{
	return write_file(path, data, n, true);
}

int
atomic_create_file(const char *path, const void *data, size_t n)
{
	return write_file(path, data, n, false);
}

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) != 0 && errno != ENOENT ?
	    -1 : 0;
}

int
atomic_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int
atomic_mkdirs(const char *dir)
{
	char *p, *s, c;
	struct stat st;
	int rc = 0;

	if (*dir == '\0') {
		errno = ENOENT;
		return -1;
	}
	p = estrdup(dir);
	for (s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		c = *s;
		*s = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			rc = -1;
			break;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	if (rc == 0 && stat(dir, &st) != 0)
		rc = -1;
	else if (rc == 0 && !S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		rc = -1;
	}
	return rc;
}

int
atomic_save(const char *what, const char *path, const void *data, size_t n)
{
	if (atomic_write_file(path, data != NULL ? data : "", n) != 0) {
		warnx_("%s: cannot write the %s: %s", path, what, strerror(errno));
		return -1;
	}
	return 0;
}
