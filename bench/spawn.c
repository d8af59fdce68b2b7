/*
 * spawn: runs a program N times, one after another (fork, exec, wait), as
 * the baseline for what perf-collect adds. usage: spawn N PROGRAM [ARG...]
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	long n = argc > 2 ? atol(argv[1]) : 0;
	int st;
	pid_t pid;

	for (long i = 0; i < n; i++) {
		if ((pid = fork()) == 0) {
			execv(argv[2], argv + 2);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0)
			return 1;
	}
	return 0;
}
