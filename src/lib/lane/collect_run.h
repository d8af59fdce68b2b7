/*
 * collect_run: running perf-collect from a program that runs benchmarks
 * itself (perf-ab(1), perf-bisect(1)): where perf-collect is, a program
 * run in a directory with its output in a log (whose tail is shown when it
 * fails), the record perf-collect wrote, and what both programs' jobs do
 * alike: the scratch directory, worktrees, the report's outputs, the end.
 */
#ifndef PERF_LANE_COLLECT_RUN_H
#define PERF_LANE_COLLECT_RUN_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/strvec.h"

/*
 * The program name (perf-collect, perf-ab) next to this program, else
 * name itself (from PATH); malloc'd.
 */
char *collect_find(const char *name);

/* The options perf-ab and perf-bisect take alike: their runs' and --seed. */
struct collect_options {
	const char *timeout, *runner;	/* -t, -r as given, or NULL */
	bool cpu;			/* --cpu */
	unsigned long long seed;	/* --seed */
};

/*
 * The option c (getopt_long's value: 'U' for --cpu, 't', 'r', 's' for
 * --seed, 'h', 'V') with its arg, into o; false when c is none of these,
 * for the caller. -h, --version and a bad value exit as cli(3) does.
 */
bool collect_option(struct collect_options *o, int c, char *arg, const char *usage);

/*
 * The options every run passes on to perf-collect (--cpu, -t timeout,
 * -r runner, each when given), pushed onto argv.
 */
void collect_pass_options(struct strvec *argv, const struct collect_options *o);

/* Shows the tail of the log of the step what, which failed, on stderr. */
typedef void collect_show_fn(void *ctx, const char *what, const char *log);

/*
 * Runs argv in dir with its stdout and stderr in log. 0 when it exited
 * 0; -1 after saying why on stderr ("what: ..." and the log's tail), or
 * when perfkite was asked to stop (proc_stop_signal()). The caller's
 * working directory is back before anything is said.
 */
int collect_run_in(const char *dir, char **argv, const char *log, const char *what);

/* collect_run_in(), the log's tail shown by show(ctx, what, log). */
int collect_run_shown(const char *dir, char **argv, const char *log, const char *what,
    collect_show_fn *show, void *ctx);

/* "/bin/sh -c setup" run in dir, as collect_run_shown(). */
int collect_run_setup(const char *dir, const char *setup, const char *log, const char *what,
    collect_show_fn *show, void *ctx);

/*
 * perf-collect --check of the n configs (absolute), run here with its
 * output in log, as collect_run_shown() with what.
 */
int collect_check(const char *collect, char *const *configs, int n, const char *log,
    const char *what, collect_show_fn *show, void *ctx);

/*
 * A new scratch directory $TMPDIR/<prog>-XXXXXX (/tmp without TMPDIR)
 * holding runs/; malloc'd, or NULL after saying why.
 */
char *collect_scratch(const char *prog);

/*
 * git worktree add --detach dir ref in repo; -1 after saying
 * "what: <git's reason>".
 */
int collect_worktree_add(const char *repo, const char *dir, const char *ref, const char *what);

/* The commit rev names in repo, as 40 hex digits (malloc'd); NULL when none. */
char *collect_commit(const char *repo, const char *rev);

/* git worktree remove --force dir in repo, quietly. */
void collect_worktree_remove(const char *repo, const char *dir);

/* git worktree prune in repo, quietly. */
void collect_worktree_prune(const char *repo);

/* rep, indented, saved at path (-o). 0, or -1 after saying why. */
int collect_save_report(const cJSON *rep, const char *path);

/*
 * rep on stdout: as table() writes it with md, else one compact JSON
 * line. 0, or -1 after saying why it could not be written.
 */
int collect_print_report(const cJSON *rep, bool md, void (*table)(buf *, const cJSON *));

/*
 * The end of a job's main(): rc, or trouble when perfkite was stopped by
 * a signal (said) or standard output could not be written.
 */
int collect_finish(int rc, int trouble);

/* The one perf_*.json perf-collect wrote in dir, parsed; NULL when none. */
cJSON *collect_read_record(const char *dir);

/* Every perf_*.json perf-collect wrote in dir that parses, as an array. */
cJSON *collect_read_records(const char *dir);

#endif
