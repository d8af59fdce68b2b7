/*
 * Unit tests for proc: statuses, logs, rotation, time limits, process
 * groups, capture, tee and scanning, environment edits, fed input, the
 * memory watchdog, rlimits and rusage.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/now.h"
#include "core/proc.h"
#include "tap.h"

static char dir[] = "/tmp/perf-proc-XXXXXX";
static int samples;

static void
count_sample(void *ctx)
{
	(void)ctx;
	samples++;
}

static int
run_sh(const char *script, const char *log, double timeout, long long rotate,
    struct proc_result *r)
{
	static char sh[] = "sh", c[] = "-c", var[] = "PROC_TEST=from-perfkite";
	char *argv[] = { sh, c, (char *)script, NULL };
	char *env[] = { var, NULL };
	struct proc_spec s;

	memset(&s, 0, sizeof s);
	s.argv = argv;
	s.env = env;
	s.log = log;
	s.timeout = timeout;
	s.rotate_bytes = rotate;
	s.interval = 0.05;
	s.sample = count_sample;
	return proc_run(&s, r);
}

/* Gone, or a zombie nobody reaps (a container's PID 1 may not). */
static bool
gone(int pid)
{
	char path[64], stat[256];
	FILE *fp;
	char *paren;

	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if ((fp = fopen(path, "r")) == NULL)
		return true;
	stat[0] = '\0';
	fgets(stat, sizeof stat, fp);
	fclose(fp);
	paren = strrchr(stat, ')');
	return paren != NULL && paren[1] == ' ' && paren[2] == 'Z';
}

static long
file_size(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* The output callback's view: bytes per stream, and the ends it was told of. */
struct seen {
	buf bytes[2];
	int ends[2];
};

static void
record_output(void *ctx, int stream, const char *p, size_t n)
{
	struct seen *w = ctx;

	if (n == 0)
		w->ends[stream]++;
	else
		buf_add(&w->bytes[stream], p, n);
}

/* sh -c script, output captured, with the spec's other fields from base. */
static int
capture_sh(const char *script, struct proc_spec *base, buf *out, buf *err,
    struct proc_result *r)
{
	static char sh[] = "sh", c[] = "-c";
	char *argv[] = { sh, c, (char *)script, NULL };

	base->argv = argv;
	base->capture[0] = out;
	base->capture[1] = err;
	return proc_run(base, r);
}

static void
test_capture_env_input(void)
{
	static char set[] = "PROC_SET=new", keep[] = "PROC_KEEP=kept";
	const char *unset[] = { "PROC_GONE", NULL };
	char *env[] = { set, keep, NULL };
	struct proc_spec s;
	struct proc_result r;
	buf out = BUF_INIT, err = BUF_INIT;
	int rc;

	setenv("PROC_GONE", "still here", 1);
	setenv("PROC_SET", "old", 1);
	memset(&s, 0, sizeof s);
	s.unset = unset;
	s.env = env;
	s.dir = dir;
	s.input = "line one\nline two\n";
	s.input_len = strlen(s.input);
	ok(capture_sh("echo \"gone=${PROC_GONE-unset} set=$PROC_SET $PROC_KEEP\"; pwd; "
	    "cat; echo to-err >&2; env | grep -c '^PROC_SET='; exit 4", &s, &out, &err, &r) == 0 &&
	    WIFEXITED(r.status) && WEXITSTATUS(r.status) == 4, "captured run: exit status 4");
	{
		char want[400];

		snprintf(want, sizeof want, "gone=unset set=new kept\n%s\nline one\nline two\n1\n",
		    dir);
		is_str(out.s, want, "stdout captured: unset and set variables, the directory, "
		    "the input fed, the replaced variable once");
	}
	is_str(err.s, "to-err\n", "stderr captured on its own");
	unsetenv("PROC_GONE");
	unsetenv("PROC_SET");
	buf_free(&out);
	buf_free(&err);

	/* A large input and output at once: fed as far as it reads, never a deadlock. */
	{
		size_t n = 1 << 20;
		char *big = malloc(n);

		memset(big, 'x', n);
		memset(&s, 0, sizeof s);
		s.input = big;
		s.input_len = n;
		rc = capture_sh("cat", &s, &out, NULL, &r);
		ok(rc == 0 && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && out.len == n,
		    "1 MiB fed and read back (%zu)", out.len);
		free(big);
		buf_free(&out);
	}
	/* A child that reads nothing: its closed stdin is no SIGPIPE for us. */
	memset(&s, 0, sizeof s);
	{
		char many[200000];

		memset(many, 'y', sizeof many);
		s.input = many;
		s.input_len = sizeof many;
		ok(capture_sh("exit 0", &s, NULL, NULL, &r) == 0 && WIFEXITED(r.status),
		    "input a child never reads");
	}
}

static void
test_exec_errors(void)
{
	static char prog[] = "/nonexistent/program";
	char *argv[] = { prog, NULL };
	char nodir[320];
	struct proc_spec s;
	struct proc_result r;
	buf err = BUF_INIT;

	memset(&s, 0, sizeof s);
	s.argv = argv;
	s.capture[1] = &err;
	s.exec_error = "perf-x: ";
	ok(proc_run(&s, &r) == 0 && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 127,
	    "cannot start: 127");
	is_str(err.s, "perf-x: /nonexistent/program: No such file or directory\n",
	    "the message starts as the caller says");
	buf_reset(&err);
	snprintf(nodir, sizeof nodir, "%s/no-such-dir", dir);
	memset(&s, 0, sizeof s);
	s.dir = nodir;
	ok(capture_sh("true", &s, NULL, &err, &r) == 0 && WIFEXITED(r.status) &&
	    WEXITSTATUS(r.status) == 127, "a directory it cannot enter: 127");
	ok(err.s != NULL && strncmp(err.s, "cannot enter ", 13) == 0 &&
	    strstr(err.s, ": No such file or directory\n") != NULL, "said so on its stderr");
	buf_free(&err);
}

static void
test_tee_and_scan(void)
{
	struct seen w;
	struct proc_spec s;
	struct proc_result r;
	char path[320], text[100] = "";
	int fd;
	FILE *fp;

	snprintf(path, sizeof path, "%s/tee", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	memset(&w, 0, sizeof w);
	memset(&s, 0, sizeof s);
	s.tee_fd[0] = fd;
	s.tee_fd[1] = fd;
	s.output = record_output;
	s.ctx = &w;
	ok(capture_sh("printf 'a\\nb'; printf 'e' >&2", &s, NULL, NULL, &r) == 0,
	    "teed and scanned");
	close(fd);
	is_str(w.bytes[0].s, "a\nb", "output() saw stdout");
	is_str(w.bytes[1].s, "e", "output() saw stderr");
	ok(w.ends[0] == 1 && w.ends[1] == 1, "and each stream's end once (%d, %d)", w.ends[0],
	    w.ends[1]);
	fp = fopen(path, "r");
	if (fp != NULL) {
		fread(text, 1, sizeof text - 1, fp);
		fclose(fp);
	}
	ok(strlen(text) == 4 && strchr(text, 'e') != NULL && strstr(text, "a\nb") != NULL,
	    "the copies went to the tee file");
	buf_free(&w.bytes[0]);
	buf_free(&w.bytes[1]);
}

static int
read_pid(const char *path)
{
	FILE *fp = fopen(path, "r");
	int pid = 0;

	if (fp != NULL) {
		if (fscanf(fp, "%d", &pid) != 1)
			pid = 0;
		fclose(fp);
	}
	return pid;
}

static void
test_limits(void)
{
	struct proc_spec s;
	struct proc_result r;
	char script[600], pidf[320], log[320], how[128];
	struct proc_rlimit as = { RLIMIT_AS, 64ULL << 20 };
	int pid, rc;
	double t0;

	snprintf(pidf, sizeof pidf, "%s/pid2", dir);
	snprintf(log, sizeof log, "%s/direct.log", dir);
	/* Wall time, SIGKILL at once, the whole group, into a log the child writes itself. */
	snprintf(script, sizeof script, "trap '' TERM; sleep 30 & echo $! > %s; echo started; "
	    "wait", pidf);
	memset(&s, 0, sizeof s);
	s.log = log;
	s.log_direct = true;
	s.timeout = 0.3;
	s.kill_at_once = true;
	t0 = now_monotonic();
	ok(capture_sh(script, &s, NULL, NULL, &r) == 0 && r.timed_out && WIFSIGNALED(r.status) &&
	    WTERMSIG(r.status) == SIGKILL, "killed at the limit with SIGKILL");
	ok(now_monotonic() - t0 < 2, "at once, no grace (%.2f s)", now_monotonic() - t0);
	usleep(100 * 1000);
	pid = read_pid(pidf);
	ok(pid > 0 && gone(pid), "its whole group is gone (pid %d)", pid);
	ok(file_size(log) == 8, "the child wrote its log itself (%ld bytes)", file_size(log));

	/* The leader ends on SIGTERM; a descendant that ignores it is killed with the group. */
	unlink(pidf);
	snprintf(script, sizeof script, "(trap '' TERM; exec sleep 30) & echo $! > %s; wait",
	    pidf);
	memset(&s, 0, sizeof s);
	s.timeout = 0.3;
	t0 = now_monotonic();
	ok(capture_sh(script, &s, NULL, NULL, &r) == 0 && r.timed_out && WIFSIGNALED(r.status) &&
	    WTERMSIG(r.status) == SIGTERM, "the leader ended on SIGTERM");
	usleep(100 * 1000);
	pid = read_pid(pidf);
	ok(pid > 0 && gone(pid), "a descendant ignoring SIGTERM is gone too (pid %d)", pid);
	ok(now_monotonic() - t0 < 3, "without waiting out the grace (%.2f s)", now_monotonic() - t0);

	/* SIGTERM ignored: SIGKILL after the grace. */
	memset(&s, 0, sizeof s);
	s.timeout = 0.2;
	s.grace = 0.3;
	t0 = now_monotonic();
	ok(capture_sh("trap '' TERM; while :; do sleep 0.05; done", &s, NULL, NULL, &r) == 0 &&
	    r.timed_out && WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL,
	    "SIGTERM ignored: SIGKILL after the grace");
	ok(now_monotonic() - t0 >= 0.45 && now_monotonic() - t0 < 3, "after 0.2 + 0.3 s (%.2f s)",
	    now_monotonic() - t0);

	/* The memory watchdog. */
	memset(&s, 0, sizeof s);
	s.mem_mb = 20;
	s.kill_at_once = true;
	s.timeout = 20;
	ok(capture_sh("exec awk 'BEGIN { s = \"x\"; while (1) { s = s s; if (length(s) > "
	    "400000000) break } ; while (1) ; }'", &s, NULL, NULL, &r) == 0 &&
	    r.mem_exceeded && !r.timed_out, "the memory watchdog kills it");
	proc_describe(&r, how, sizeof how);
	is_str(how, "exceeded its memory limit and was killed", "described");

	/* An rlimit set in the child. */
	memset(&s, 0, sizeof s);
	s.rlimits = &as;
	s.nrlimits = 1;
	{
		buf out = BUF_INIT;

		rc = capture_sh("ulimit -v", &s, &out, NULL, &r);
		ok(rc == 0 && out.s != NULL && strcmp(out.s, "65536\n") == 0,
		    "RLIMIT_AS set in the child (ulimit -v says 65536)");
		buf_free(&out);
	}

	/* rusage: the CPU time it used. */
	memset(&s, 0, sizeof s);
	rc = capture_sh("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done", &s, NULL, NULL, &r);
	ok(rc == 0 && r.cpu_seconds > 0.05 && r.cpu_seconds <= r.seconds * 1.5 + 0.05,
	    "CPU seconds counted (%.3f of %.3f s)", r.cpu_seconds, r.seconds);
}

static void
test_same_group(void)
{
	struct proc_spec s;
	struct proc_result r;
	buf out = BUF_INIT;
	char want[32];

	memset(&s, 0, sizeof s);
	s.same_group = true;
	ok(capture_sh("ps -o pgid= -p $$", &s, &out, NULL, &r) == 0 && out.s != NULL,
	    "same group: ran");
	snprintf(want, sizeof want, "%d", (int)getpgrp());
	ok(out.s != NULL && atoi(out.s) == getpgrp(), "it stays in our group (%s)", want);
	buf_reset(&out);
	memset(&s, 0, sizeof s);
	ok(capture_sh("ps -o pgid= -p $$; echo $$", &s, &out, NULL, &r) == 0 && out.s != NULL,
	    "own group: ran");
	{
		char *nl = out.s != NULL ? strchr(out.s, '\n') : NULL;

		ok(nl != NULL && atoi(out.s) == atoi(nl + 1), "else a group of its own");
	}
	buf_free(&out);
}

int
main(void)
{
	struct proc_result r;
	char log[300], rot[310], pidf[300], text[600] = "", how[128];
	FILE *fp;
	int pid = 0;

	mkdtemp(dir);
	snprintf(log, sizeof log, "%s/w.log", dir);
	snprintf(rot, sizeof rot, "%s.1", log);
	snprintf(pidf, sizeof pidf, "%s/pid", dir);

	ok(run_sh("echo out; echo err >&2; echo $PROC_TEST; exit 3", log, 0, 0, &r) == 0,
	    "runs");
	ok(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3, "exit status kept");
	proc_describe(&r, how, sizeof how);
	is_str(how, "exited with status 3", "described");
	fp = fopen(log, "r");
	fread(text, 1, sizeof text - 1, fp);
	fclose(fp);
	is_str(text, "out\nerr\nfrom-perfkite\n", "stdout, stderr and the environment in the log");
	ok(r.maxrss_kb > 0 && r.seconds > 0, "peak RSS and time measured (%ld KiB, %.3f s)",
	    r.maxrss_kb, r.seconds);

	samples = 0;
	run_sh("sleep 0.3", log, 0, 0, &r);
	ok(samples >= 3, "sampled while it ran (%d times)", samples);
	ok(r.seconds >= 0.29 && r.seconds < 2, "timed on the monotonic clock (%.3f s)", r.seconds);

	snprintf(text, sizeof text, "sleep 30 & echo $! > %s; wait", pidf);
	ok(run_sh(text, log, 0.3, 0, &r) == 0 && r.timed_out, "a hang is killed at the limit");
	proc_describe(&r, how, sizeof how);
	ok(strncmp(how, "timed out", 9) == 0, "described: %s", how);
	fp = fopen(pidf, "r");
	if (fp != NULL) {
		fscanf(fp, "%d", &pid);
		fclose(fp);
	}
	usleep(100 * 1000);
	ok(pid > 0 && gone(pid), "its whole process group is gone (pid %d)", pid);

	unlink(log);
	ok(run_sh("i=0; while [ $i -lt 30 ]; do printf '%0200d\\n' 0; i=$((i+1)); done", log, 0,
	    3000, &r) == 0, "a chatty program");
	ok(file_size(rot) > 0 && file_size(log) <= 3000, "the log rotated at the limit (%ld, %ld)",
	    file_size(rot), file_size(log));
	ok(file_size(rot) + file_size(log) <= 30 * 201 && file_size(rot) <= 3000,
	    "one backup kept");

	{
		static char prog[] = "/nonexistent/program";
		char *argv[] = { prog, NULL };
		struct proc_spec s;

		memset(&s, 0, sizeof s);
		s.argv = argv;
		s.log = log;
		ok(proc_run(&s, &r) == 0 && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 127,
		    "a program that cannot start exits 127, with the reason in the log");
	}
	test_capture_env_input();
	test_exec_errors();
	test_tee_and_scan();
	test_limits();
	test_same_group();
	return done_testing();
}
