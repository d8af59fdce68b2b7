/* Unit tests for lock, fd, now and host: the mechanisms written once in core. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/fd.h"
#include "core/host.h"
#include "core/lock.h"
#include "core/now.h"
#include "tap.h"

int
main(void)
{
	char dir[] = "/tmp/perf-lock-XXXXXX", path[64], missing[64], why[64], want[64];
	char model[256], big[200000];
	int fd, fd2, p[2], st;
	double t0, t1;
	pid_t pid;
	ssize_t k;
	size_t got;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof path, "%s/x.lock", dir);
	snprintf(missing, sizeof missing, "%s/none.lock", dir);

	/* lock */
	fd = lock_open(path, 0);
	ok(fd >= 0, "lock_open creates and locks the file");
	ok((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0, "close-on-exec unless LOCK_OPT_INHERIT");
	fd2 = lock_open(path, LOCK_OPT_NOWAIT);
	ok(fd2 < 0 && errno == EWOULDBLOCK, "a second open file cannot take it at once: EWOULDBLOCK");
	lock_why(path, EWOULDBLOCK, why, sizeof why);
	snprintf(want, sizeof want, "held by process %ld", (long)getpid());
	is_str(why, want, "the message names the holder");
	lock_why(path, ENOENT, why, sizeof why);
	is_str(why, strerror(ENOENT), "any other error is strerror's");
	ok(lock_open(missing, LOCK_OPT_NOWAIT | LOCK_OPT_NOCREATE) < 0 && errno == ENOENT &&
	    access(missing, F_OK) != 0, "LOCK_OPT_NOCREATE: a missing file is ENOENT, not created");
	lock_why(missing, EWOULDBLOCK, why, sizeof why);
	is_str(why, "held by another process", "a holder /proc/locks does not name: another process");
	/* A waiting child gets it once the holder closes. */
	fflush(stdout);
	if ((pid = fork()) == 0) {
		int c;

		close(fd);	/* the copy of the parent's open file would hold the lock */
		c = lock_open(path, 0);

		_exit(c >= 0 ? 0 : 1);
	}
	usleep(100000);
	close(fd);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a waiter gets the lock when the holder lets go");
	/*
	 * LOCK_OPT_ORPHAN: a holder killed just after fork() leaves its lock
	 * to the child until the child closes its copy; a live holder is not
	 * waited for.
	 */
	if (pipe(p) != 0)
		return 1;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		int h = lock_open(path, 0);
		char c;

		if (h < 0)
			_exit(1);
		if (fork() == 0) {
			close(p[1]);
			(void)!read(p[0], &c, 1);
			usleep(200000);
			close(h);
			_exit(0);
		}
		_exit(0);
	}
	close(p[0]);
	waitpid(pid, &st, 0);
	fd2 = lock_open(path, LOCK_OPT_NOWAIT);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && fd2 < 0 && errno == EWOULDBLOCK,
	    "a dead holder's child still holds its lock");
	(void)!write(p[1], "x", 1);
	close(p[1]);
	fd = lock_open(path, LOCK_OPT_NOWAIT | LOCK_OPT_ORPHAN);
	ok(fd >= 0, "LOCK_OPT_ORPHAN: a lock whose holder died is waited for");
	fd2 = lock_open(path, LOCK_OPT_NOWAIT | LOCK_OPT_ORPHAN);
	ok(fd2 < 0 && errno == EWOULDBLOCK, "LOCK_OPT_ORPHAN: a live holder is EWOULDBLOCK at once");
	if (fd2 >= 0)
		close(fd2);
	if (fd >= 0)
		close(fd);
	fd = lock_open(path, LOCK_OPT_INHERIT);
	ok(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC) == 0, "LOCK_OPT_INHERIT: not close-on-exec");
	close(fd);
	fd = open(path, O_RDONLY);
	ok(lock_fd(fd, LOCK_OPT_NOWAIT) == 0, "lock_fd on an open file");
	close(fd);

	/* fd */
	if (pipe(p) != 0)
		return 1;
	memset(big, 'a', sizeof big);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		close(p[0]);
		_exit(fd_write_all(p[1], big, sizeof big) == 0 ? 0 : 1);
	}
	close(p[1]);
	got = 0;
	while ((k = read(p[0], big, sizeof big)) > 0)
		got += (size_t)k;
	close(p[0]);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && got == sizeof big,
	    "fd_write_all: every byte through a pipe smaller than the data");
	ok(fd_write_all(-1, "x", 1) == -1 && errno == EBADF, "fd_write_all: -1 with errno");
	ok(fd_write_all(-1, "", 0) == 0, "fd_write_all: nothing to write is success");

	/* now */
	t0 = now_monotonic();
	usleep(20000);
	t1 = now_monotonic();
	ok(t1 - t0 >= 0.019 && t1 - t0 < 5, "now_monotonic: seconds that advance");
	ok(now_wall() > 1.6e9, "now_wall: seconds since the epoch");

	/* host */
	ok(host_cpu_model(model, sizeof model) == (model[0] != '\0'),
	    "host_cpu_model: true exactly when it found a non-empty model");
	ok(!host_cpu_model(model, 0), "host_cpu_model: no room, no model");

	unlink(path);
	rmdir(dir);
	return done_testing();
}
