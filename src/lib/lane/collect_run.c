#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/git.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/proc.h"
#include "core/strvec.h"
#include "lane/collect_run.h"
#include "lane/logtail.h"

char *
collect_find(const char *name)
{
	char self[4096], *slash, *p;
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			p = easprintf("%.*s/%s", (int)(slash - self), self, name);
			if (access(p, X_OK) == 0)
				return p;
			free(p);
		}
	}
	return estrdup(name);
}

bool
collect_option(struct collect_options *o, int c, char *arg, const char *usage)
{
	switch (c) {
	case 'U': o->cpu = true; break;
	case 'r': o->runner = arg; break;
	case 's': o->seed = cli_seed(usage, arg); break;
	case 't':
		/* Checked here, passed on as written. */
		cli_double(usage, "--timeout", arg, 0.001, 1e9, "a number of seconds");
		o->timeout = arg;
		break;
	case 'h': cli_usage(usage, EXIT_PASS);
	case 'V': cli_version();
	default: return false;
	}
	return true;
}

void
collect_pass_options(struct strvec *argv, const struct collect_options *o)
{
	if (o->cpu)
		strvec_push(argv, "--cpu");
	if (o->timeout != NULL) {
		strvec_push(argv, "-t");
		strvec_push(argv, o->timeout);
	}
	if (o->runner != NULL) {
		strvec_push(argv, "-r");
		strvec_push(argv, o->runner);
	}
}

/* The log's tail, headed by its own path. */
static void
show_tail(void *ctx, const char *what, const char *log)
{
	buf tail = BUF_INIT;

	(void)ctx;
	logtail_block(&tail, what, log);
	fprintf(stderr, "%s\n", tail.s);
	buf_free(&tail);
}

int
collect_run_shown(const char *dir, char **argv, const char *log, const char *what,
    collect_show_fn *show, void *ctx)
{
	struct proc_spec spec;
	struct proc_result res;
	int rc = 0;
	char how[128];

	/*
	 * The child enters dir (spec.dir); we stay where we are, so a relative
	 * log is ours. A directory it could not enter is said here, in one line.
	 */
	if (access(dir, X_OK) != 0) {
		warn("%s", dir);
		return -1;
	}
	memset(&spec, 0, sizeof spec);
	spec.argv = argv;
	spec.dir = dir;
	spec.log = log;
	if (proc_run(&spec, &res) != 0) {
		warn("%s: cannot run %s", what, argv[0]);
		rc = -1;
	} else if (res.interrupted) {
		rc = -1;
	} else if (!WIFEXITED(res.status) || WEXITSTATUS(res.status) != 0) {
		proc_describe(&res, how, sizeof how);
		warnx("%s: %s %s", what, argv[0], how);
		show(ctx, what, log);
		rc = -1;
	}
	return rc;
}

int
collect_run_in(const char *dir, char **argv, const char *log, const char *what)
{
	return collect_run_shown(dir, argv, log, what, show_tail, NULL);
}

int
collect_run_setup(const char *dir, const char *setup, const char *log, const char *what,
    collect_show_fn *show, void *ctx)
{
	static const char *const sh[] = { "/bin/sh", "-c", NULL };
	struct strvec argv = STRVEC_INIT;
	int rc;

	strvec_pushv(&argv, sh);
	strvec_push(&argv, setup);
	rc = collect_run_shown(dir, argv.v, log, what, show != NULL ? show : show_tail, ctx);
	strvec_clear(&argv);
	return rc;
}

int
collect_check(const char *collect, char *const *configs, int n, const char *log,
    const char *what, collect_show_fn *show, void *ctx)
{
	struct strvec argv = STRVEC_INIT;
	int rc;

	strvec_push(&argv, collect);
	strvec_push(&argv, "--check");
	for (int i = 0; i < n; i++)
		strvec_push(&argv, configs[i]);
	rc = collect_run_shown(".", argv.v, log, what, show != NULL ? show : show_tail, ctx);
	strvec_clear(&argv);
	return rc;
}

char *
collect_scratch(const char *prog)
{
	const char *tmp = getenv("TMPDIR");
	char *work = easprintf("%s/%s-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp", prog), *runs;

	if (mkdtemp(work) == NULL) {
		warn("%s: cannot create", work);
		free(work);
		return NULL;
	}
	runs = easprintf("%s/runs", work);
	if (atomic_mkdirs(runs) != 0) {
		warn("%s: cannot create", runs);
		free(runs);
		atomic_remove_tree(work);
		free(work);
		return NULL;
	}
	free(runs);
	return work;
}

int
collect_worktree_add(const char *repo, const char *dir, const char *ref, const char *what)
{
	const char *add[] = { "worktree", "add", "--detach", dir, ref, NULL };
	buf err = BUF_INIT;
	int rc = 0;

	if (git_run(repo, add, NULL, 0, NULL, &err) != 0) {
		char *why = git_last_error(&err);

		warnx("%s: %s", what, why);
		free(why);
		rc = -1;
	}
	buf_free(&err);
	return rc;
}

char *
collect_commit(const char *repo, const char *rev)
{
	char *spec = easprintf("%s^{commit}", rev), *sha = NULL;
	const char *args[] = { "rev-parse", "--verify", "--quiet", spec, NULL };
	buf out = BUF_INIT;

	if (git_run(repo, args, NULL, 0, &out, NULL) == 0 && out.len >= 40)
		sha = estrndup(out.s, 40);
	buf_free(&out);
	free(spec);
	return sha;
}

void
collect_worktree_remove(const char *repo, const char *dir)
{
	const char *rm[] = { "worktree", "remove", "--force", dir, NULL };

	git_run(repo, rm, NULL, 0, NULL, NULL);
}

void
collect_worktree_prune(const char *repo)
{
	const char *prune[] = { "worktree", "prune", NULL };

	git_run(repo, prune, NULL, 0, NULL, NULL);
}

int
collect_save_report(const cJSON *rep, const char *path)
{
	buf out = BUF_INIT;
	int rc;

	json_write(&out, rep, JSON_INDENT2, NULL);
	buf_addc(&out, '\n');
	rc = atomic_save("report", path, out.s, out.len);
	buf_free(&out);
	return rc;
}

int
collect_print_report(const cJSON *rep, bool md, void (*table)(buf *, const cJSON *))
{
	buf out = BUF_INIT;
	int rc = 0;

	if (md)
		table(&out, rep);
	else {
		json_write(&out, rep, JSON_COMPACT, NULL);
		buf_addc(&out, '\n');
	}
	if ((out.len > 0 && fwrite(out.s, 1, out.len, stdout) != out.len) ||
	    fflush(stdout) != 0) {
		/* Said here, with the reason, not as EIO by jsonl_finish(). */
		warn("write error on standard output");
		clearerr(stdout);
		rc = -1;
	}
	buf_free(&out);
	return rc;
}

int
collect_finish(int rc, int trouble)
{
	if (proc_stop_signal() != 0) {
		warnx("stopped by signal %d", proc_stop_signal());
		rc = trouble;
	}
	if (jsonl_finish(stdout, "standard output") != 0)
		rc = trouble;
	return rc;
}

/* The records of dir, parsed, until max of them (0: all) are in a. */
static void
read_records(const char *dir, cJSON *a, int max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	buf text = BUF_INIT;
	json_error e;

	if (d == NULL)
		return;
	while ((max == 0 || cJSON_GetArraySize(a) < max) && (de = readdir(d)) != NULL) {
		cJSON *rec = NULL;
		char *p;

		if (strncmp(de->d_name, "perf_", 5) != 0)
			continue;
		p = easprintf("%s/%s", dir, de->d_name);
		buf_reset(&text);
		if (buf_read_file(&text, p) == 0)
			rec = json_parse(text.s, text.len, &e);
		if (rec != NULL)
			json_append(a, rec);
		free(p);
	}
	closedir(d);
	buf_free(&text);
}

cJSON *
collect_read_record(const char *dir)
{
	cJSON *a = json_new_array(), *rec;

	read_records(dir, a, 1);
	rec = cJSON_DetachItemFromArray(a, 0);
	cJSON_Delete(a);
	return rec;
}

cJSON *
collect_read_records(const char *dir)
{
	cJSON *a = json_new_array();

	read_records(dir, a, 0);
	return a;
}
