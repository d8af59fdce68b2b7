/*
 * lock: one exclusive flock(2) a file, for every place that takes turns
 * (the stores, the git cache, a campaign's directory and its jobs).
 *
 * A lock belongs to the open file: it is held until every descriptor of
 * it is closed (a child that inherits one holds it too) and is released
 * when its holder dies, however it dies.
 */
#ifndef PERF_CORE_LOCK_H
#define PERF_CORE_LOCK_H

#include <stddef.h>

enum {
	LOCK_OPT_NOWAIT = 1,	/* fail at once (EWOULDBLOCK) when another holds it */
	LOCK_OPT_INHERIT = 2,	/* not close-on-exec: a program we start holds it too */
	LOCK_OPT_NOCREATE = 4,	/* a missing file is ENOENT, not created */
	/*
	 * With LOCK_OPT_NOWAIT: a lock whose holder (as /proc/locks names
	 * it) has died is waited for, up to LOCK_ORPHAN_WAIT_MS: a process
	 * killed just after fork() leaves its lock to the child until the
	 * child closes its copy of the descriptor.
	 */
	LOCK_OPT_ORPHAN = 8
};

#define LOCK_ORPHAN_WAIT_MS 10000

/*
 * Takes the exclusive lock of the open file fd, waiting for it unless
 * LOCK_OPT_NOWAIT; a signal that interrupts the wait does not end it.
 * 0, or -1 with errno (EWOULDBLOCK: another holds it).
 */
int lock_fd(int fd, int opts);

/*
 * Opens path read-write (creating it, mode 0666 less the umask, unless
 * LOCK_OPT_NOCREATE) and takes its lock as lock_fd() does. Returns the
 * descriptor, to be closed to release the lock, or -1 with errno.
 */
int lock_open(const char *path, int opts);

/*
 * Why path could not be locked, errno e from lock_open(): "held by
 * process N" (from /proc/locks) or "held by another process" for
 * EWOULDBLOCK, else strerror(e). Written into buf (size n); returns buf.
 */
char *lock_why(const char *path, int e, char *buf, size_t n);

#endif
