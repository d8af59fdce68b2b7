#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/lock.h"

int
lock_fd(int fd, int opts)
{
	int how = LOCK_EX | ((opts & LOCK_OPT_NOWAIT) ? LOCK_NB : 0);

	while (flock(fd, how) != 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

static pid_t lock_holder(const char *path);

/*
 * Whether path's lock, just found taken, should be tried again: its
 * holder's copy outlived it (the holder /proc/locks names is dead, or
 * shown as 0: dead, or in another pid namespace), or no holder was
 * listed at all, the lock released in between (*unlisted: once).
 */
static bool
orphaned(const char *path, bool *unlisted)
{
	pid_t pid = lock_holder(path);

	if (pid == 0 && !*unlisted) {
		*unlisted = true;
		return true;
	}
	return pid < 0 || (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH);
}

int
lock_open(const char *path, int opts)
{
	int flags = O_RDWR | ((opts & LOCK_OPT_INHERIT) ? 0 : O_CLOEXEC) |
	    ((opts & LOCK_OPT_NOCREATE) ? 0 : O_CREAT);
	int fd = open(path, flags, 0666), e;
	const struct timespec step = { 0, 20 * 1000 * 1000 };
	bool unlisted = false;

	if (fd < 0)
		return -1;
	for (int waited = 0; lock_fd(fd, opts) != 0; waited += 20) {
		e = errno;
		if (e == EWOULDBLOCK && (opts & LOCK_OPT_ORPHAN) &&
		    waited < LOCK_ORPHAN_WAIT_MS && orphaned(path, &unlisted)) {
			nanosleep(&step, NULL);
			continue;
		}
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/*
 * The process holding path's lock as /proc/locks says; -1 when its line
 * shows no pid (0: the holder is dead and its pid freed, or in another
 * pid namespace); 0 when no line names the file (or no /proc).
 * Its lines read "1: FLOCK  ADVISORY  WRITE 1234 08:02:5678 0 EOF": the
 * holder's pid, then the file's device (major:minor, hex) and inode.
 */
static pid_t
lock_holder(const char *path)
{
	struct stat st;
	char line[256], kind[16];
	unsigned maj, mnr;
	unsigned long long ino;
	long pid;
	pid_t found = 0;
	FILE *fp;

	if (stat(path, &st) != 0 || (fp = fopen("/proc/locks", "r")) == NULL)
		return 0;
	while (found == 0 && fgets(line, sizeof line, fp) != NULL) {
		const char *p = strchr(line, ':');

		if (p != NULL && sscanf(p + 1, " %15s %*s %*s %ld %x:%x:%llu", kind, &pid,
		    &maj, &mnr, &ino) == 5 && strcmp(kind, "FLOCK") == 0 &&
		    ino == (unsigned long long)st.st_ino && maj == major(st.st_dev) &&
		    mnr == minor(st.st_dev))
			found = pid > 0 ? (pid_t)pid : -1;
	}
	fclose(fp);
	return found;
}

char *
lock_why(const char *path, int e, char *buf, size_t n)
{
	pid_t pid;

	if (e != EWOULDBLOCK)
		snprintf(buf, n, "%s", strerror(e));
	else if ((pid = lock_holder(path)) > 0)
		snprintf(buf, n, "held by process %ld", (long)pid);
	else
		snprintf(buf, n, "held by another process");
	return buf;
}
