/*
 * proc: running a benchmark's program: an argument vector, never a shell,
 * its output appended to a log that rotates, a time limit that kills its
 * whole process group, and the kernel's accounting of what it used.
 */
#ifndef PERF_CORE_PROC_H
#define PERF_CORE_PROC_H

#include <stdbool.h>

struct proc_result {
	int status;		/* wait status */
	bool timed_out;
	bool interrupted;	/* perfkite itself was asked to stop */
	double seconds;		/* wall time on the monotonic clock */
	long maxrss_kb;		/* peak resident set of the child */
};

struct proc_spec {
	char *const *argv;
	char *const *env;	/* NAME=VALUE added to the environment, NULL-ended */
	const char *log;	/* stdout and stderr go here (appended) */
	long long rotate_bytes;	/* the log moves to <log>.1 past this size */
	double timeout;		/* seconds; 0 for none */
	double interval;	/* how often sample() is called while it runs */
	void (*sample)(void *);
	void *ctx;
};

/*
 * Runs the program and waits for it. Returns 0 when it ran (see r), -1
 * when it could not be started (errno set; the reason is also in the log).
 */
int proc_run(const struct proc_spec *spec, struct proc_result *r);

/* Describes how it ended: "exited with status 3", "killed by signal 9", ... */
void proc_describe(const struct proc_result *r, char *out, size_t n);

/* Makes SIGINT and SIGTERM stop the running program's group, then us. */
void proc_handle_signals(void);
/* The signal that asked us to stop, or 0. */
int proc_stop_signal(void);

#endif
