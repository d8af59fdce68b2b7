/*
 * proc: running a program, the one way perfkite does it: an argument
 * vector, never a shell; its environment edited, its working directory and
 * resource limits set; its output appended to a log (that rotates, or that
 * it writes itself), or captured, passed on and scanned; a time limit and a
 * memory watchdog that kill it (its whole process group when it has one);
 * and the kernel's accounting of what it used.
 */
#ifndef PERF_CORE_PROC_H
#define PERF_CORE_PROC_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

struct proc_result {
	int status;		/* wait status */
	bool timed_out;		/* killed at spec.timeout */
	bool mem_exceeded;	/* killed by the memory watchdog (spec.mem_mb) */
	bool interrupted;	/* perfkite itself was asked to stop */
	double seconds;		/* wall time on the monotonic clock */
	long maxrss_kb;		/* peak resident set of the child */
	double cpu_seconds;	/* user and system time of the child */
};

/* A resource limit set in the child before it starts (setrlimit(2)). */
struct proc_rlimit {
	int resource;		/* RLIMIT_AS, ... */
	unsigned long long value;	/* both the soft and the hard limit */
};

/* What to run and how; zero is the default of every field. */
struct proc_spec {
	char *const *argv;		/* argv[0] is looked up on PATH */
	const char *dir;		/* its working directory; NULL: ours */
	const char *const *unset;	/* names removed from its environment, NULL-ended */
	char *const *env;		/* NAME=VALUE set in it (replacing), NULL-ended */
	/*
	 * How the child's message starts when argv[0] cannot run ("<it>argv[0]:
	 * reason", exit status 127); NULL: "perfkite: cannot run ". A working
	 * directory it cannot enter is "cannot enter DIR: reason", status 127.
	 */
	const char *exec_error;
	/*
	 * It stays in our process group (a wrapper whose own group is killed
	 * as a whole, or a helper such as git); else it gets a group of its
	 * own, every kill reaches the whole group and, when it ends, what it
	 * left behind in the group is killed.
	 */
	bool same_group;
	int keep_fd;			/* > 2: left open in the child (a lock it holds too) */
	const struct proc_rlimit *rlimits;
	size_t nrlimits;

	/* Its stdin: input when given, else ours with keep_stdin, else /dev/null. */
	const char *input;
	size_t input_len;
	bool keep_stdin;

	/*
	 * Its output. With a log, stdout and stderr are appended to it: through
	 * us, the log moving to <log>.1 whenever it would pass rotate_bytes
	 * (0: never), or, with log_direct, written by the child itself (it may
	 * outlive us). Without a log, each of stdout (stream 0) and stderr
	 * (stream 1) is appended to capture[stream], copied to tee_fd[stream]
	 * and handed to output() when set (0 or NULL: not), and output() is
	 * called with n == 0 when the stream ends.
	 */
	const char *log;
	bool log_direct;
	long long rotate_bytes;
	buf *capture[2];
	int tee_fd[2];
	void (*output)(void *ctx, int stream, const char *p, size_t n);

	/*
	 * Limits: past timeout seconds (0: none), or a resident set above
	 * mem_mb (0: none; checked every 10 ms), it is sent SIGTERM, then
	 * SIGKILL after grace seconds (0: 5), or SIGKILL at once with
	 * kill_at_once. SIGINT or SIGTERM to us (proc_handle_signals) stops
	 * it the same way, unless finish_on_stop.
	 */
	double timeout;
	double mem_mb;
	double grace;
	bool kill_at_once;
	bool finish_on_stop;

	double interval;		/* how often sample() is called while it runs */
	void (*sample)(void *);
	void *ctx;			/* given to sample() and output() */
};

/*
 * Runs the program and waits for it. Returns 0 when it ran (see r), -1
 * when it could not be started (errno set).
 */
int proc_run(const struct proc_spec *spec, struct proc_result *r);

/* Describes how it ended: "exited with status 3", "killed by signal 9", ... */
void proc_describe(const struct proc_result *r, char *out, size_t n);

/* Makes SIGINT and SIGTERM stop the running program's group, then us. */
void proc_handle_signals(void);
/* The signal that asked us to stop, or 0. */
int proc_stop_signal(void);

#endif
