#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/err.h"
#include "core/fd.h"
#include "core/lock.h"

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

/* Writes n bytes to something that is not a regular file (a device, a FIFO) in place. */
static int
write_in_place(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC), e;

	if (fd < 0)
		return -1;
	if (fd_write_all(fd, data, n) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

/*
 * What a write to path replaces: 0 a regular file or nothing (*target is
 * where the file goes: path, or the file a symbolic link names), 1 a file
 * written in place (a device, a FIFO, a socket), -1 refused with errno
 * (EISDIR a directory, ENOENT a symbolic link to nothing).
 */
static int
target_of(const char *path, char **target)
{
	struct stat st;

	*target = NULL;
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT)
			return -1;
		*target = estrdup(path);
		return 0;
	}
	if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
		return -1;	/* a link to nothing is refused */
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		/* Opened through the link, as /dev/stdout is. */
		*target = estrdup(path);
		return 1;
	}
	/* The file a link names is replaced, the link stays. */
	if ((*target = realpath(path, NULL)) == NULL)
		return -1;
	return 0;
}

static int
write_file(const char *path, const void *data, size_t n, bool replace)
{
	char *dcopy, *bcopy, *dir, *base, *tmp = NULL, *target = NULL;
	mode_t mask;
	int fd, dfd, e, kind;

	if (replace) {
		if ((kind = target_of(path, &target)) < 0)
			return -1;
		if (kind == 1) {
			kind = write_in_place(target, data, n);
			e = errno;
			free(target);
			errno = e;
			return kind;
		}
		path = target;
	}
	dcopy = estrdup(path);
	bcopy = estrdup(path);
	dir = dirname(dcopy);
	base = basename(bcopy);
	tmp = easprintf("%s/.%s.tmp.XXXXXX", dir, base);
	if ((fd = mkstemp(tmp)) < 0)
		goto fail;
	/* Held until the file is in place: atomic_sweep() leaves it alone. */
	lock_fd(fd, LOCK_OPT_NOWAIT);
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0 || fd_write_all(fd, data, n) != 0 ||
	    fsync(fd) != 0) {
		e = errno;
		unlink(tmp);
		close(fd);
		errno = e;
		goto fail;
	}
	if ((replace ? rename(tmp, path) : place_new(tmp, path)) != 0) {
		e = errno;
		unlink(tmp);
		close(fd);
		errno = e;
		goto fail;
	}
	if (close(fd) != 0)
		goto fail;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(tmp);
	free(dcopy);
	free(bcopy);
	free(target);
	return 0;
fail:
	e = errno;
	free(tmp);
	free(dcopy);
	free(bcopy);
	free(target);
	errno = e;
	return -1;
}

/* True when name is one of write_file()'s temporary names: ".<base>.tmp.XXXXXX". */
static bool
is_temp_name(const char *name)
{
	size_t n = strlen(name);

	if (name[0] != '.' || n < 1 + 1 + 5 + 6 || strncmp(name + n - 11, ".tmp.", 5) != 0)
		return false;
	for (size_t i = n - 6; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

long
atomic_sweep(const char *dir, long min_age)
{
	DIR *d;
	struct dirent *e;
	struct stat st, fst;
	time_t now = time(NULL);
	long removed = 0;
	int dfd, fd;

	if ((d = opendir(dir)) == NULL)
		return 0;
	dfd = dirfd(d);
	while ((e = readdir(d)) != NULL) {
		if (!is_temp_name(e->d_name) ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || now - st.st_mtime < min_age)
			continue;
		/* Not one a writer holds (it is locked until it is renamed). */
		fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (lock_fd(fd, LOCK_OPT_NOWAIT) == 0 && fstat(fd, &fst) == 0 &&
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_ino == fst.st_ino && st.st_dev == fst.st_dev &&
		    unlinkat(dfd, e->d_name, 0) == 0)
			removed++;
		close(fd);
	}
	closedir(d);
	return removed;
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
		warn("%s: cannot write the %s", path, what);
		return -1;
	}
	return 0;
}

char *
atomic_dir_begin(const char *dir)
{
	char *copy = estrdup(dir), *d, *b, *tmp;
	size_t n = strlen(copy);

	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	b = estrdup(basename(copy));
	free(copy);
	copy = estrdup(dir);
	d = dirname(copy);
	tmp = easprintf("%s/.%s.new.XXXXXX", d, b);
	free(copy);
	free(b);
	if (mkdtemp(tmp) == NULL) {
		free(tmp);
		return NULL;
	}
	return tmp;
}

/* fsync of the file system holding path (syncfs), else of path alone. */
static void
sync_tree(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (syncfs(fd) != 0)
		fsync(fd);
	close(fd);
}

int
atomic_dir_commit(const char *tmp, const char *dir)
{
	struct stat st;
	char *old, *copy, *parent;
	int rc = 0;

	sync_tree(tmp);
	if (lstat(dir, &st) != 0) {
		if (errno != ENOENT)
			return -1;
		if (rename(tmp, dir) != 0)
			return -1;
	} else if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	} else if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
		/* tmp now holds the previous tree. */
		rc = atomic_remove_tree(tmp);
	} else if (errno == EINVAL || errno == ENOSYS) {
		/* No exchange here: the old tree steps aside, then the new one moves in. */
		old = easprintf("%s.old", tmp);
		if (rename(dir, old) != 0) {
			free(old);
			return -1;
		}
		if (rename(tmp, dir) != 0) {
			int e = errno;
			rename(old, dir);
			free(old);
			errno = e;
			return -1;
		}
		rc = atomic_remove_tree(old);
		free(old);
	} else
		return -1;
	copy = estrdup(dir);
	parent = dirname(copy);
	sync_tree(parent);
	free(copy);
	return rc;
}
