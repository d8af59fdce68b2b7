/*
 * measure: runs one shell command line and prints "SECONDS MAXRSS_KIB CPU"
 * for it: wall-clock time, the peak resident set of the largest process it
 * ran, and the CPU seconds (user + system) of all of them (getrusage of the
 * waited-for children). For the benchmarks only.
 * usage: measure 'command line'
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	struct timespec a, b;
	struct rusage ru;
	int st;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: measure 'command line'\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	if ((pid = fork()) == 0) {
		execl("/bin/sh", "sh", "-c", argv[1], (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("%.6f %ld %.6f\n", (double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9, ru.ru_maxrss,
	    (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	/* A gate's exit 1 is a result, not a failure of the benchmark. */
	return WIFEXITED(st) && WEXITSTATUS(st) <= 1 ? 0 : 1;
}
