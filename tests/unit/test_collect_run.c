/*
 * Unit tests for collect_run: what perf-ab and perf-bisect share (the
 * options passed on to perf-collect, a step run with its log's tail shown
 * by the caller, the scratch directory, the saved report) and cli_seed().
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/json.h"
#include "core/strvec.h"
#include "lane/collect_run.h"
#include "tap.h"

static char dir[] = "/tmp/perf-collect-run-XXXXXX";

/* What show() was called with. */
static int shown;
static char shown_what[64], shown_log[512];

static void
show(void *ctx, const char *what, const char *log)
{
	shown++;
	snprintf(shown_what, sizeof shown_what, "%s:%s", (const char *)ctx, what);
	snprintf(shown_log, sizeof shown_log, "%s", log);
}

int
main(void)
{
	struct collect_options o = { NULL, NULL, false, 0 };
	char cwd[PATH_MAX], back[PATH_MAX], log[600], *work, *runs, *p;
	struct strvec argv = STRVEC_INIT;
	char t[] = "2.5", r[] = "runner.sh", s[] = "42", bad[] = "x";
	buf text = BUF_INIT;
	struct stat st;
	cJSON *rep;

	mkdtemp(dir);
	if (getcwd(cwd, sizeof cwd) == NULL)
		return 1;

	/* Options: nothing given passes nothing; each one as perf-collect takes it. */
	strvec_push(&argv, "perf-collect");
	collect_pass_options(&argv, &o);
	ok(argv.n == 1 && argv.v[1] == NULL, "no option passes nothing on");
	ok(collect_option(&o, 'U', NULL, "usage\n") && o.cpu, "--cpu is read");
	ok(collect_option(&o, 't', t, "usage\n") && o.timeout == t, "-t is read as written");
	ok(collect_option(&o, 'r', r, "usage\n") && o.runner == r, "-r is read");
	ok(collect_option(&o, 's', s, "usage\n") && o.seed == 42, "--seed is read");
	ok(!collect_option(&o, 'o', bad, "usage\n"), "another option is the caller's");
	collect_pass_options(&argv, &o);
	ok(argv.n == 6 && strcmp(argv.v[1], "--cpu") == 0 && strcmp(argv.v[2], "-t") == 0 &&
	    strcmp(argv.v[3], "2.5") == 0 && strcmp(argv.v[4], "-r") == 0 &&
	    strcmp(argv.v[5], "runner.sh") == 0 && argv.v[6] == NULL,
	    "--cpu -t 2.5 -r runner.sh pushed on, in order");
	strvec_clear(&argv);
	ok(cli_seed("usage\n", "0") == 0 && cli_seed("usage\n", "9223372036854775807") ==
	    9223372036854775807ULL, "cli_seed: 0 and the largest seed");

	/* A step that fails: the caller's show() gets its log, from where the caller was. */
	{
		char *sh[] = { (char *)"/bin/sh", (char *)"-c", (char *)"echo built; exit 3", NULL };

		snprintf(log, sizeof log, "%s/setup.log", dir);
		ok(collect_run_shown(dir, sh, log, "--setup", show, (void *)"kept") == -1,
		    "a step that exits 3 is -1");
		ok(shown == 1, "its log's tail is shown once");
		is_str(shown_what, "kept:--setup", "show() gets the caller's context and what");
		is_str(shown_log, log, "show() gets the log");
		ok(getcwd(back, sizeof back) != NULL && strcmp(back, cwd) == 0,
		    "the working directory is the caller's again");
		ok(buf_read_file(&text, log) == 0 && strcmp(text.s, "built\n") == 0,
		    "the step's output is in its log");
		ok(collect_run_setup(dir, "exit 0", log, "--setup", show, (void *)"kept") == 0 &&
		    shown == 1, "a setup that exits 0 is 0, nothing shown");
		ok(collect_run_in("/nonexistent", sh, log, "x") == -1,
		    "a directory that does not exist is -1");
	}

	/* The scratch directory: under TMPDIR, holding runs/. */
	setenv("TMPDIR", dir, 1);
	work = collect_scratch("perf-x");
	runs = work != NULL ? malloc(strlen(work) + 6) : NULL;
	if (runs != NULL)
		sprintf(runs, "%s/runs", work);
	ok(work != NULL && strncmp(work, dir, strlen(dir)) == 0 &&
	    strstr(work, "/perf-x-") != NULL, "the scratch directory is $TMPDIR/perf-x-XXXXXX");
	ok(runs != NULL && stat(runs, &st) == 0 && S_ISDIR(st.st_mode), "with runs/ in it");
	free(runs);
	free(work);

	/* A commit as 40 hex digits; NULL for no commit. */
	p = malloc(strlen(dir) + 128);
	sprintf(p, "git init -q %s/repo && git -C %s/repo -c user.name=t -c user.email=t@t "
	    "commit -q --allow-empty -m one", dir, dir);
	if (system(p) == 0) {
		sprintf(p, "%s/repo", dir);
		work = collect_commit(p, "HEAD");
		ok(work != NULL && strlen(work) == 40 && strspn(work, "0123456789abcdef") == 40,
		    "collect_commit: HEAD as 40 hex digits");
		free(work);
		ok(collect_commit(p, "no-such-ref") == NULL, "collect_commit: no such commit");
	}
	free(p);

	/* The report saved as -o has it: indented, one newline at the end. */
	rep = json_new_object();
	json_set(rep, "status", json_new_string("found"));
	p = malloc(strlen(dir) + 16);
	sprintf(p, "%s/rep.json", dir);
	buf_reset(&text);
	ok(collect_save_report(rep, p) == 0 && buf_read_file(&text, p) == 0 &&
	    strcmp(text.s, "{\n  \"status\": \"found\"\n}\n") == 0, "the report is saved indented");
	free(p);
	cJSON_Delete(rep);
	buf_free(&text);
	atomic_remove_tree(dir);
	return done_testing();
}
