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
#define WATCH_INTERVAL 0.01

extern char **environ;

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
		die_errno("cannot create a pipe");
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_child;
	sigemptyset(&sa.sa_mask);
	/* Restarted: a child ending must not fail the reads and writes of the caller. */
	sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
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

/* The resident memory of a process in MB, from /proc; 0 when unknown. */
static double
rss_mb(pid_t pid)
{
	char path[64], line[256];
	double kb = 0;
	FILE *fp;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof line, fp) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0) {
			kb = strtod(line + 6, NULL);
			break;
		}
	fclose(fp);
	return kb / 1024;
}

/* NAME of a NAME=VALUE entry is name (a bare NAME too). */
static bool
env_is(const char *entry, const char *name, size_t len)
{
	return strncmp(entry, name, len) == 0 && (entry[len] == '=' || entry[len] == '\0');
}

/*
 * The child's environment, built before the fork (the child only execs):
 * ours without the names unset or set, then those set.
 */
static char **
child_env(const struct proc_spec *spec)
{
	size_t n = 0, k = 0, j = 0, len;
	bool keep;
	char **env;

	while (environ[n] != NULL)
		n++;
	while (spec->env != NULL && spec->env[k] != NULL)
		k++;
	env = ecalloc(n + k + 1, sizeof *env);
	for (size_t i = 0; i < n; i++) {
		keep = true;
		for (const char *const *u = spec->unset; keep && u != NULL && *u != NULL; u++)
			keep = !env_is(environ[i], *u, strlen(*u));
		for (size_t e = 0; keep && e < k; e++) {
			len = strcspn(spec->env[e], "=");
			keep = !env_is(environ[i], spec->env[e], len);
		}
		if (keep)
			env[j++] = environ[i];
	}
	for (size_t e = 0; e < k; e++)
		env[j++] = spec->env[e];
	env[j] = NULL;
	return env;
}

/* The pipes and files of a run, and where it stands. */
struct run {
	const struct proc_spec *spec;
	struct proc_result *r;
	char **env;
	pid_t pid;
	int in[2];		/* its stdin, when fed from spec->input */
	int out[2][2];		/* its stdout (and stderr, into a log), and stderr */
	int logfd;
	size_t in_off;
	double start, killed_at, exited_at, next_sample, next_watch;
	bool exited;
};

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void
close_all(struct run *u)
{
	close_fd(&u->in[0]);
	close_fd(&u->in[1]);
	for (int i = 0; i < 2; i++) {
		close_fd(&u->out[i][0]);
		close_fd(&u->out[i][1]);
	}
	close_fd(&u->logfd);
}

/* Opens what the child needs before it starts. -1 with errno set. */
static int
open_streams(struct run *u)
{
	const struct proc_spec *s = u->spec;
	int nout = s->log == NULL ? 2 : s->log_direct ? 0 : 1;

	if (s->log != NULL &&
	    (u->logfd = open(s->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666)) < 0)
		return -1;
	for (int i = 0; i < nout; i++)
		if (pipe2(u->out[i], O_CLOEXEC) != 0)
			return -1;
	if (s->input != NULL) {
		if (pipe2(u->in, O_CLOEXEC) != 0)
			return -1;
		/* Fed as far as it reads: never blocked while it waits for us to read. */
		fcntl(u->in[1], F_SETFL, O_NONBLOCK);
		if (s->input_len == 0)
			close_fd(&u->in[1]);	/* end of file at once */
	}
	return 0;
}

/* The child: its group, streams, directory, limits, then exec. */
static void __attribute__((noreturn))
child(const struct run *u)
{
	const struct proc_spec *s = u->spec;
	struct rlimit lim;
	int null;

	if (!s->same_group)
		setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (u->in[0] >= 0)
		dup2(u->in[0], STDIN_FILENO);
	else if (!s->keep_stdin && (null = open("/dev/null", O_RDONLY)) >= 0)
		dup2(null, STDIN_FILENO);
	if (s->log != NULL && s->log_direct) {
		dup2(u->logfd, STDOUT_FILENO);
		dup2(u->logfd, STDERR_FILENO);
	} else {
		dup2(u->out[0][1], STDOUT_FILENO);
		dup2(u->out[s->log != NULL ? 0 : 1][1], STDERR_FILENO);
	}
	if (s->keep_fd > STDERR_FILENO)
		fcntl(s->keep_fd, F_SETFD, 0);
	if (s->dir != NULL && chdir(s->dir) != 0) {
		dprintf(STDERR_FILENO, "cannot enter %s: %s\n", s->dir, strerror(errno));
		_exit(127);
	}
	for (size_t i = 0; i < s->nrlimits; i++) {
		lim.rlim_cur = lim.rlim_max = (rlim_t)s->rlimits[i].value;
		setrlimit(s->rlimits[i].resource, &lim);
	}
	execvpe(s->argv[0], s->argv, u->env);
	dprintf(STDERR_FILENO, "%s%s: %s\n", s->exec_error != NULL ? s->exec_error :
	    "perfkite: cannot run ", s->argv[0], strerror(errno));
	_exit(127);
}

/* A signal to the child: to its whole group when it has one. */
static void
signal_child(const struct run *u, int sig)
{
	kill(u->spec->same_group ? u->pid : -u->pid, sig);
}

/* Stops the child past a limit or when we are asked to stop. */
static void
check_limits(struct run *u, double now)
{
	const struct proc_spec *s = u->spec;
	struct proc_result *r = u->r;
	double grace = s->grace > 0 ? s->grace : KILL_GRACE;

	if (u->exited)
		return;
	if (u->killed_at > 0) {
		if (now - u->killed_at > grace)
			signal_child(u, SIGKILL);
		return;
	}
	if (proc_stop_signal() != 0 && !s->finish_on_stop)
		r->interrupted = true;
	else if (s->timeout > 0 && now - u->start > s->timeout)
		r->timed_out = true;
	else if (s->mem_mb > 0 && now >= u->next_watch) {
		u->next_watch = now + WATCH_INTERVAL;
		r->mem_exceeded = rss_mb(u->pid) > s->mem_mb;
	}
	if (r->interrupted || r->timed_out || r->mem_exceeded) {
		signal_child(u, s->kill_at_once ? SIGKILL : SIGTERM);
		u->killed_at = now;
	}
}

/* How long poll() may sleep: until the next thing to do. */
static int
poll_ms(const struct run *u)
{
	const struct proc_spec *s = u->spec;
	double deadline = -1, grace = s->grace > 0 ? s->grace : KILL_GRACE;
	int ms;

	if (u->exited)
		return 0;
	if (s->sample != NULL)
		deadline = u->next_sample;
	if (u->killed_at == 0) {
		if (s->timeout > 0 && (deadline < 0 || u->start + s->timeout < deadline))
			deadline = u->start + s->timeout;
		if (s->mem_mb > 0 && (deadline < 0 || u->next_watch < deadline))
			deadline = u->next_watch;
	} else if (deadline < 0 || u->killed_at + grace < deadline)
		deadline = u->killed_at + grace;
	if (deadline >= 0) {
		ms = (int)((deadline - now_monotonic()) * 1000) + 1;
		return ms > 0 ? ms : 0;
	}
	if (proc_stop_signal() != 0 && !s->finish_on_stop)
		return 0;
	return 1000;	/* a lost wakeup costs at most a second */
}

/* A chunk of output, where the spec says it goes. */
static void
deliver(struct run *u, int stream, const char *p, size_t n)
{
	const struct proc_spec *s = u->spec;

	if (s->log != NULL) {
		log_append(s, &u->logfd, p, n);
		return;
	}
	if (s->capture[stream] != NULL)
		buf_add(s->capture[stream], p, n);
	if (s->tee_fd[stream] > 0)
		fd_write_all(s->tee_fd[stream], p, n);
	if (s->output != NULL)
		s->output(s->ctx, stream, p, n);
}

static void
end_stream(struct run *u, int stream)
{
	close_fd(&u->out[stream][0]);
	if (u->spec->log == NULL && u->spec->output != NULL)
		u->spec->output(u->spec->ctx, stream, NULL, 0);
}

/* Feeds its stdin and reads its output: one poll(), until the next thing to do. */
static void
pump(struct run *u)
{
	struct pollfd pfd[4];
	char chunk[65536];
	int np = 0, ready;
	ssize_t n;

	for (int i = 0; i < 2; i++)
		pfd[np++] = (struct pollfd){ u->out[i][0], POLLIN, 0 };
	pfd[np++] = (struct pollfd){ u->in[1], POLLOUT, 0 };
	pfd[np++] = (struct pollfd){ chld_pipe[0], POLLIN, 0 };
	ready = poll(pfd, (nfds_t)np, poll_ms(u));
	if (ready <= 0) {
		if (ready == 0 && u->exited)	/* drained: what is left is a straggler's */
			for (int i = 0; i < 2; i++)
				if (u->out[i][0] >= 0)
					end_stream(u, i);
		return;
	}
	if (pfd[3].revents & POLLIN)
		while (read(chld_pipe[0], chunk, sizeof chunk) > 0)
			;
	for (int i = 0; i < 2; i++) {
		if (u->out[i][0] < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(u->out[i][0], chunk, sizeof chunk);
		if (n > 0)
			deliver(u, i, chunk, (size_t)n);
		else if (n == 0 || errno != EINTR)
			end_stream(u, i);
	}
	if (u->in[1] >= 0 && pfd[2].revents != 0) {
		n = write(u->in[1], u->spec->input + u->in_off, u->spec->input_len - u->in_off);
		if (n > 0)
			u->in_off += (size_t)n;
		if ((n < 0 && errno != EINTR && errno != EAGAIN) ||
		    u->in_off == u->spec->input_len)
			close_fd(&u->in[1]);
	}
}

/* Reaps the child when it has ended, with the kernel's accounting. */
static void
reap(struct run *u)
{
	struct rusage ru;
	int st;

	if (u->exited || wait4(u->pid, &st, WNOHANG, &ru) != u->pid)
		return;
	u->exited = true;
	u->exited_at = now_monotonic();
	u->r->seconds = u->exited_at - u->start;
	u->r->status = st;
	u->r->maxrss_kb = ru.ru_maxrss;
	u->r->cpu_seconds = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	close_fd(&u->in[1]);
}

int
proc_run(const struct proc_spec *spec, struct proc_result *r)
{
	struct run u = { .spec = spec, .r = r, .in = { -1, -1 },
	    .out = { { -1, -1 }, { -1, -1 } }, .logfd = -1 };
	void (*old_pipe)(int) = SIG_ERR;
	double now;
	int e;

	memset(r, 0, sizeof *r);
	child_wakeups();
	if (open_streams(&u) != 0) {
		e = errno;
		close_all(&u);
		errno = e;
		return -1;
	}
	u.env = child_env(spec);
	/* A child that stops reading must not kill us while we feed it. */
	if (u.in[1] >= 0)
		old_pipe = signal(SIGPIPE, SIG_IGN);
	u.start = now_monotonic();
	if ((u.pid = fork()) < 0) {
		e = errno;
		close_all(&u);
		free(u.env);
		if (old_pipe != SIG_ERR)
			signal(SIGPIPE, old_pipe);
		errno = e;
		return -1;
	}
	if (u.pid == 0)
		child(&u);
	if (!spec->same_group)
		setpgid(u.pid, u.pid);	/* also here, so a kill cannot race the child's own */
	free(u.env);
	close_fd(&u.in[0]);
	for (int i = 0; i < 2; i++)
		close_fd(&u.out[i][1]);
	if (spec->log_direct)
		close_fd(&u.logfd);
	u.next_sample = u.next_watch = u.start;
	for (;;) {
		now = now_monotonic();
		if (spec->sample != NULL && !u.exited && now >= u.next_sample) {
			spec->sample(spec->ctx);
			u.next_sample = now + spec->interval;
		}
		check_limits(&u, now);
		reap(&u);
		/* After the exit, drain what is left, a second at most. */
		if (u.exited && ((u.out[0][0] < 0 && u.out[1][0] < 0) ||
		    now_monotonic() - u.exited_at > 1.0))
			break;
		pump(&u);
	}
	for (int i = 0; i < 2; i++)
		if (u.out[i][0] >= 0)
			end_stream(&u, i);
	if (!spec->same_group)
		kill(-u.pid, SIGKILL);	/* descendants left behind in its group, stopped or not */
	close_all(&u);
	if (old_pipe != SIG_ERR)
		signal(SIGPIPE, old_pipe);
	return 0;
}

void
proc_describe(const struct proc_result *r, char *out, size_t n)
{
	if (r->interrupted)
		snprintf(out, n, "stopped by %s", strsignal(proc_stop_signal()));
	else if (r->timed_out)
		snprintf(out, n, "timed out after %.1f s and was killed", r->seconds);
	else if (r->mem_exceeded)
		snprintf(out, n, "exceeded its memory limit and was killed");
	else if (WIFEXITED(r->status))
		snprintf(out, n, "exited with status %d", WEXITSTATUS(r->status));
	else if (WIFSIGNALED(r->status))
		snprintf(out, n, "killed by signal %d (%s)", WTERMSIG(r->status),
		    strsignal(WTERMSIG(r->status)));
	else
		snprintf(out, n, "ended with wait status %d", r->status);
}
