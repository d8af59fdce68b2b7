/* Unit tests for proc: statuses, logs, rotation, time limits, process groups. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
	return done_testing();
}
