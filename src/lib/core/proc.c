/* pipe2() */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fd.h"
#include "core/now.h"
#include "core/proc.h"

#define KILL_GRACE 5.0

static volatile sig_atomic_t stop_signal;
/* Written by the SIGCHLD handler so that poll() wakes when a child ends. */
static int chld_pipe[2] = { -1, -1 };

static void
on_signal(int sig)
{
	stop_signal = sig;
}

static void
on_child(int sig)
{
	int e = errno;

	(void)sig;
	if (chld_pipe[1] >= 0)
		(void)write(chld_pipe[1], "x", 1);
	errno = e;
}

static void
child_wakeups(void)
{
	struct sigaction sa;

	if (chld_pipe[0] >= 0)
		return;
	if (pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		die("cannot create a pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_child;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
}

void
proc_handle_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int
proc_stop_signal(void)
{
	return stop_signal;
}

static void
rotate(const struct proc_spec *spec, int *fd)
{
	char *old = easprintf("%s.1", spec->log);

	close(*fd);
	rename(spec->log, old);
	free(old);
	*fd = open(spec->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
}

/*
 * Appends to the log, moving it to <log>.1 whenever the next lines would
 * take it past the limit, so that the split does not depend on how the
 * output arrived (a single line longer than the limit stays whole). A
 * failed write is passed over: a full disk loses log lines, not the benchmark.
 */
static void
log_append(const struct proc_spec *spec, int *fd, const char *p, size_t n)
{
	struct stat st;
	size_t room, take;
	const char *nl;
	off_t size;

	while (*fd >= 0 && n > 0) {
		if (spec->rotate_bytes <= 0 || fstat(*fd, &st) != 0) {
			fd_write_all(*fd, p, n);
			return;
		}
		size = st.st_size;
		room = size < spec->rotate_bytes ? (size_t)(spec->rotate_bytes - size) : 0;
		if (n <= room) {
			fd_write_all(*fd, p, n);
			return;
		}
		if (size > 0) {
			rotate(spec, fd);
			continue;
		}
		/* An empty log and more than fits: whole lines up to the limit. */
		take = 0;
		for (nl = p; (nl = memchr(nl, '\n', n - (size_t)(nl - p))) != NULL; nl++) {
			if ((size_t)(nl - p) + 1 > room)
				break;
			take = (size_t)(nl - p) + 1;
		}
		if (take == 0)
			take = (nl = memchr(p, '\n', n)) != NULL ? (size_t)(nl - p) + 1 : n;
		fd_write_all(*fd, p, take);
		p += take;
		n -= take;
	}
}

/* The child: its own process group, output into the pipe, then exec. */
static void __attribute__((noreturn))
child(const struct proc_spec *spec, int out)
{
	int null = open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (null >= 0)
		dup2(null, STDIN_FILENO);
	dup2(out, STDOUT_FILENO);
	dup2(out, STDERR_FILENO);
	for (char *const *e = spec->env; e != NULL && *e != NULL; e++)
		putenv(*e);
	execvp(spec->argv[0], spec->argv);
	dprintf(STDERR_FILENO, "perfkite: cannot run %s: %s\n", spec->argv[0],
	    strerror(errno));
	_exit(127);
}

int
proc_run(const struct proc_spec *spec, struct proc_result *r)
{
	int p[2], logfd, st = 0, e, timeout_ms;
	double start, now, deadline, next_sample, killed_at = 0, exited_at = 0;
	bool open_pipe = true, exited = false;
	struct pollfd pfd[2];
	struct rusage ru;
	char chunk[65536];
	ssize_t n;
	pid_t pid;

	memset(r, 0, sizeof *r);
	child_wakeups();
	logfd = open(spec->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	if (logfd < 0)
		return -1;
	if (pipe2(p, O_CLOEXEC) != 0) {
		e = errno;
		close(logfd);
		errno = e;
		return -1;
	}
	start = now_monotonic();
	if ((pid = fork()) < 0) {
		e = errno;
		close(p[0]);
		close(p[1]);
		close(logfd);
		errno = e;
		return -1;
	}
	if (pid == 0)
		child(spec, p[1]);
	setpgid(pid, pid);	/* also here, so a kill cannot race the child's own */
	close(p[1]);
	next_sample = start;
	for (;;) {
		now = now_monotonic();
		if (spec->sample != NULL && !exited && now >= next_sample) {
			spec->sample(spec->ctx);
			next_sample = now + spec->interval;
		}
		if (!exited && killed_at == 0 && (proc_stop_signal() != 0 ||
		    (spec->timeout > 0 && now - start > spec->timeout))) {
			r->timed_out = proc_stop_signal() == 0;
			r->interrupted = !r->timed_out;
			kill(-pid, SIGTERM);
			killed_at = now;
		}
		if (!exited && killed_at > 0 && now - killed_at > KILL_GRACE)
			kill(-pid, SIGKILL);
		if (!exited && wait4(pid, &st, WNOHANG, &ru) == pid) {
			exited = true;
			exited_at = now_monotonic();
			r->seconds = exited_at - start;
			r->status = st;
			r->maxrss_kb = ru.ru_maxrss;
		}
		/* After the exit, drain what is left, a second at most. */
		if (exited && (!open_pipe || now_monotonic() - exited_at > 1.0))
			break;
		/* Sleep until output, a child's end, or the next thing to do. */
		deadline = -1;
		if (spec->sample != NULL && !exited)
			deadline = next_sample;
		if (spec->timeout > 0 && killed_at == 0 &&
		    (deadline < 0 || start + spec->timeout < deadline))
			deadline = start + spec->timeout;
		if (killed_at > 0 && (deadline < 0 || killed_at + KILL_GRACE < deadline))
			deadline = killed_at + KILL_GRACE;
		timeout_ms = deadline < 0 ? -1 : (int)((deadline - now_monotonic()) * 1000) + 1;
		if (exited || (timeout_ms < 0 && proc_stop_signal() != 0))
			timeout_ms = 0;
		else if (timeout_ms < 0)
			timeout_ms = 1000;	/* a lost wakeup costs at most a second */
		pfd[0].fd = open_pipe ? p[0] : -1;
		pfd[0].events = POLLIN;
		pfd[1].fd = chld_pipe[0];
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, timeout_ms) <= 0) {
			if (exited)
				open_pipe = false;
			continue;
		}
		if (pfd[1].revents & POLLIN)
			while (read(chld_pipe[0], chunk, sizeof chunk) > 0)
				;
		if (open_pipe && (pfd[0].revents & (POLLIN | POLLHUP))) {
			n = read(p[0], chunk, sizeof chunk);
			if (n > 0)
				log_append(spec, &logfd, chunk, (size_t)n);
			else if (n == 0 || errno != EINTR)
				open_pipe = false;
		}
	}
	if (killed_at == 0)
		kill(-pid, SIGKILL);	/* descendants left behind in its group */
	close(p[0]);
	close(logfd);
	return 0;
}

void
proc_describe(const struct proc_result *r, char *out, size_t n)
{
	if (r->interrupted)
		snprintf(out, n, "stopped by %s", strsignal(proc_stop_signal()));
	else if (r->timed_out)
		snprintf(out, n, "timed out after %.1f s and was killed", r->seconds);
	else if (WIFEXITED(r->status))
		snprintf(out, n, "exited with status %d", WEXITSTATUS(r->status));
	else if (WIFSIGNALED(r->status))
		snprintf(out, n, "killed by signal %d (%s)", WTERMSIG(r->status),
		    strsignal(WTERMSIG(r->status)));
	else
		snprintf(out, n, "ended with wait status %d", r->status);
}
