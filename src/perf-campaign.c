/*
 * perf-campaign: runs a paired campaign (perf-campaign(1)):
 *
 *   run PLAN BINDING RUN_DIR [--once]   the node classes bound to this
 *       machine, in the plan's seeded order, one run at a time per node
 *       class and the node classes side by side, each run in a workspace of
 *       its own under the binding's limits; safe to kill and run again;
 *   pipeline PLAN BINDING               a Buildkite pipeline for the node
 *       classes bound to agent queues;
 *   collect PLAN DIR                    results.json from the run reports
 *       such a pipeline's steps uploaded.
 *
 * The run directory holds the journal (a random campaign identity, one
 * idempotency key and state per run), results.json (rewritten after every
 * run, before the journal records it), and jobs/<key>/: the workspace, the
 * job's log, and what its supervisor wrote (job.json when started,
 * status.json when it ended). A supervisor runs in a session of its own, so
 * a runner that dies leaves its job running; the next runner finds it by its
 * key, waits for it and records it once. A job killed with its supervisor
 * (the whole tree stopped) left no status and recorded nothing: it is run
 * again.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "campaign/campaign.h"
#include "campaign/tree_digest.h"
#include "core/atomic.h"
#include "core/buf.h"
#include "core/canon.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/json.h"
#include "core/lock.h"
#include "core/now.h"
#include "core/opt.h"
#include "core/proc.h"
#include "core/strvec.h"

static const struct opt_def options[] = {
	{ 0, "once", 'o', NULL, "run only: one run per node class, then exit", NULL, "run" },
	{ 'o', NULL, 0, "results.json", "collect only: write the results to results.json", NULL,
	    "collect" },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-campaign run plan.json binding.json run-dir [--once]\n"
	    "       perf-campaign pipeline plan.json binding.json\n"
	    "       perf-campaign collect plan.json dir [-o results.json]\n",
	.width = 17,
	.flags = 0,
	.opts = options,
};

/* Lock state: the runner's lock on its run directory, closed in every supervisor. */
static int run_dir_lock = -1;

/* The binding (vq.benchmark-binding/1), checked against the plan. */
struct binding {
	cJSON *doc;
	char *dir;			/* the binding file's directory */
	const char **host;		/* per node class: NULL on this machine */
	bool *local;			/* per node class: runs here */
	const cJSON **command;		/* per variant: array of strings */
	char **sources;			/* per workload: input directory */
	const cJSON **args;		/* per workload: array of strings */
	double mem_mb, wall;
};

static char *
load_text(const char *path, buf *b)
{
	if (buf_read_file(b, path) != 0)
		return easprintf("%s: %s", path, strerror(errno));
	return NULL;
}

static bool
load_plan(const char *path, struct plan *pl)
{
	struct problems p = { NULL, 0 };
	buf text = BUF_INIT;
	char *why = load_text(path, &text);

	if (why != NULL) {
		warnx("%s", why);
		free(why);
		return false;
	}
	if (plan_load(text.s, text.len, pl, &p) != 0) {
		for (int i = 0; i < p.n; i++)
			warnx("%s: %s", p.v[i].code, p.v[i].detail);
		problems_free(&p);
		buf_free(&text);
		return false;
	}
	buf_free(&text);
	return true;
}

static bool
string_array(const cJSON *a, bool nonempty)
{
	const cJSON *e;

	if (!cJSON_IsArray(a) || (nonempty && cJSON_GetArraySize(a) == 0))
		return false;
	cJSON_ArrayForEach(e, a)
		if (!cJSON_IsString(e))
			return false;
	return true;
}

/* The hosts this machine answers to, and those configured elsewhere. */
static bool
host_is_here(const char *h)
{
	char name[256];

	if (strcmp(h, "localhost") == 0)
		return true;
	return gethostname(name, sizeof name) == 0 && strcmp(name, h) == 0;
}

static bool
host_is_configured(const char *h)
{
	const char *list = getenv("PERF_CAMPAIGN_HOSTS");
	char *copy, *tok, *save = NULL;
	bool found = false;

	if (list == NULL)
		return false;
	copy = estrdup(list);
	for (tok = strtok_r(copy, ", \t", &save); tok != NULL && !found;
	    tok = strtok_r(NULL, ", \t", &save))
		found = strcmp(tok, h) == 0;
	free(copy);
	return found;
}

/* The node classes' hosts: here (local), elsewhere (host), or a problem. */
static void
bind_node_classes(const struct plan *pl, const cJSON *ncs, struct binding *b,
    struct problems *p)
{
	const cJSON *e;
	int i;

	if (!cJSON_IsObject(ncs))
		return;
	for (i = 0; i < pl->nnode_classes; i++) {
		const cJSON *h;

		e = json_get(ncs, pl->node_classes[i]);
		if (!cJSON_IsObject(e)) {
			problems_add(p, "unbound_node_class", "node class '%s' is not bound",
			    pl->node_classes[i]);
			continue;
		}
		h = json_get(e, "host");
		if (h == NULL || cJSON_IsNull(h) || (cJSON_IsString(h) && host_is_here(h->valuestring))) {
			b->local[i] = true;
			continue;
		}
		if (!cJSON_IsString(h) || *h->valuestring == '\0')
			problems_add(p, "invalid_binding", "node class '%s': host must be a string",
			    pl->node_classes[i]);
		else if (!host_is_configured(h->valuestring))
			problems_add(p, "unknown_host", "node class '%s': host '%s' is neither this "
			    "machine nor configured (PERF_CAMPAIGN_HOSTS)", pl->node_classes[i],
			    h->valuestring);
		else
			b->host[i] = h->valuestring;
	}
	cJSON_ArrayForEach(e, ncs)
		if (plan_node_class_index(pl, e->string) < 0)
			problems_add(p, "extra_node_class", "node class '%s' is not in the plan",
			    e->string);
}

/* The variants' commands. */
static void
bind_variants(const struct plan *pl, const cJSON *vs, struct binding *b, struct problems *p)
{
	const cJSON *e;
	int i;

	if (!cJSON_IsObject(vs))
		return;
	for (i = 0; i < pl->nvariants; i++) {
		e = json_get(vs, pl->variants[i].name);
		if (!cJSON_IsObject(e)) {
			problems_add(p, "unbound_variant", "variant '%s' is not bound",
			    pl->variants[i].name);
			continue;
		}
		if (!string_array(json_get(e, "command"), true))
			problems_add(p, "invalid_binding", "variant '%s': command must be a non-empty "
			    "array of strings", pl->variants[i].name);
		else
			b->command[i] = json_get(e, "command");
	}
	cJSON_ArrayForEach(e, vs)
		if (plan_variant_index(pl, e->string) < 0)
			problems_add(p, "extra_variant", "variant '%s' is not in the plan", e->string);
}

/* The workloads' inputs and arguments; with check_inputs, their digests. */
static void
bind_workloads(const struct plan *pl, const cJSON *ws, bool check_inputs, struct binding *b,
    struct problems *p)
{
	const cJSON *e;
	int i;

	if (!cJSON_IsObject(ws))
		return;
	for (i = 0; i < pl->nworkloads; i++) {
		const cJSON *src, *args;

		e = json_get(ws, pl->workloads[i].name);
		if (!cJSON_IsObject(e)) {
			problems_add(p, "unbound_workload", "workload '%s' is not bound",
			    pl->workloads[i].name);
			continue;
		}
		src = json_get(e, "sources");
		args = json_get(e, "args");
		if (!cJSON_IsString(src) || (args != NULL && !string_array(args, false))) {
			problems_add(p, "invalid_binding", "workload '%s': sources must be a directory "
			    "and args an array of strings", pl->workloads[i].name);
			continue;
		}
		b->sources[i] = src->valuestring[0] == '/' ? estrdup(src->valuestring) :
		    easprintf("%s/%s", b->dir, src->valuestring);
		b->args[i] = args;
		if (check_inputs) {
			char hex[SHA256_HEX], *w = NULL;

			if (tree_digest(b->sources[i], hex, &w) != 0) {
				problems_add(p, "input_unreadable", "workload '%s': %s",
				    pl->workloads[i].name, w);
				free(w);
			} else if (strcmp(hex, pl->workloads[i].digest) != 0)
				problems_add(p, "input_digest_mismatch", "workload '%s': %s has digest %s, "
				    "the plan pins %s", pl->workloads[i].name, b->sources[i], hex,
				    pl->workloads[i].digest);
		}
	}
	cJSON_ArrayForEach(e, ws)
		if (plan_workload_index(pl, e->string) < 0)
			problems_add(p, "extra_workload", "workload '%s' is not in the plan", e->string);
}

/*
 * Reads and checks the binding: every problem is listed (one line each)
 * before anything runs. With check_inputs, each input's tree digest must
 * match the plan's pin.
 */
static bool
load_binding(const char *path, const struct plan *pl, struct binding *b, bool check_inputs)
{
	struct problems p = { NULL, 0 };
	buf text = BUF_INIT;
	char *why = load_text(path, &text), *copy;
	const cJSON *v, *ncs, *vs, *ws;
	json_error je;
	int i;

	memset(b, 0, sizeof *b);
	if (why != NULL) {
		warnx("%s", why);
		free(why);
		return false;
	}
	copy = estrdup(path);
	b->dir = realpath(dirname(copy), NULL);
	if (b->dir == NULL)
		b->dir = estrdup(dirname(copy));
	free(copy);
	b->host = ecalloc((size_t)pl->nnode_classes + 1, sizeof *b->host);
	b->local = ecalloc((size_t)pl->nnode_classes + 1, sizeof *b->local);
	b->command = ecalloc((size_t)pl->nvariants + 1, sizeof *b->command);
	b->sources = ecalloc((size_t)pl->nworkloads + 1, sizeof *b->sources);
	b->args = ecalloc((size_t)pl->nworkloads + 1, sizeof *b->args);
	if ((b->doc = json_parse_strict(text.s, text.len, &je)) == NULL) {
		warnx("invalid_json: %s:%ld: %s", path, je.line, je.msg);
		buf_free(&text);
		return false;
	}
	buf_free(&text);
	v = json_get(b->doc, "schema_name");
	if (!cJSON_IsObject(b->doc) || !cJSON_IsString(v) ||
	    strcmp(v->valuestring, "vq.benchmark-binding/1") != 0) {
		warnx("invalid_binding: schema_name must be \"vq.benchmark-binding/1\"");
		return false;
	}
	v = json_get(b->doc, "plan_sha256");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, pl->sha) != 0)
		problems_add(&p, "plan_mismatch", "the binding is for plan %s, not %s",
		    cJSON_IsString(v) ? v->valuestring : "(none)", pl->sha);
	ncs = json_get(b->doc, "node_classes");
	vs = json_get(b->doc, "variants");
	ws = json_get(b->doc, "workloads");
	if (!cJSON_IsObject(ncs) || !cJSON_IsObject(vs) || !cJSON_IsObject(ws))
		problems_add(&p, "invalid_binding", "node_classes, variants and workloads must be objects");
	/* Unbound names, then extra ones. */
	bind_node_classes(pl, ncs, b, &p);
	bind_variants(pl, vs, b, &p);
	bind_workloads(pl, ws, check_inputs, b, &p);
	v = json_get(b->doc, "mem_mb");
	if (!cJSON_IsNumber(v) || !(v->valuedouble > 0))
		problems_add(&p, "invalid_binding", "mem_mb must be a number > 0");
	else
		b->mem_mb = v->valuedouble;
	v = json_get(b->doc, "wall_time_seconds");
	if (!cJSON_IsNumber(v) || !(v->valuedouble > 0))
		problems_add(&p, "invalid_binding", "wall_time_seconds must be a number > 0");
	else
		b->wall = v->valuedouble;
	for (i = 0; i < p.n; i++)
		warnx("%s: %s", p.v[i].code, p.v[i].detail);
	i = p.n;
	problems_free(&p);
	return i == 0;
}

static void
free_binding(struct binding *b, const struct plan *pl)
{
	for (int i = 0; i < pl->nworkloads && b->sources != NULL; i++)
		free(b->sources[i]);
	free(b->sources);
	free(b->host);
	free(b->local);
	free(b->command);
	free(b->args);
	free(b->dir);
	cJSON_Delete(b->doc);
}

/* ---- run ---- */

enum jstate { J_NONE, J_ACCEPTED, J_RECORDED, J_MISSING };
static const char *const jstate_name[] = { "none", "accepted", "recorded", "missing" };

struct job {
	struct order_run r;
	char key[33];		/* idempotency key */
	enum jstate state;
	bool problem;
	int lost;		/* times it was found gone without a status */
};

/* A job lost this many times (its supervisor killed each time) blocks its node class. */
#define MAX_LOST 3

struct runner {
	const struct plan *pl;
	const struct binding *b;
	const char *dir;
	char campaign[33];
	struct job *jobs;
	size_t njobs;
	cJSON *results;		/* the results document */
	bool *blocked;		/* per node class: a problem stops it */
	bool problem;
};

/* RUN_DIR/jobs/<key><rest> */
static char *
job_path(const struct runner *rn, const char *key, const char *rest)
{
	return easprintf("%s/jobs/%s%s", rn->dir, key, rest);
}

static void
random_hex(char out[33])
{
	unsigned char b[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, b, sizeof b) != (ssize_t)sizeof b)
		die_errno("cannot read /dev/urandom");
	close(fd);
	for (int i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static int
save_json(const char *path, const cJSON *doc)
{
	buf t = BUF_INIT;
	int rc;

	json_write(&t, doc, JSON_INDENT2, NULL);
	buf_addc(&t, '\n');
	rc = atomic_write_file(path, t.s, t.len);
	if (rc != 0)
		warn("%s: cannot write", path);
	buf_free(&t);
	return rc;
}

static int
save_journal(struct runner *rn)
{
	cJSON *j = json_new_object(), *runs = json_new_object();
	char *path = easprintf("%s/journal.json", rn->dir);
	int rc;

	json_set(j, "schema_name", json_new_string("perfkite.campaign-journal/1"));
	json_set(j, "plan_sha256", json_new_string(rn->pl->sha));
	json_set(j, "campaign_id", json_new_string(rn->campaign));
	for (size_t i = 0; i < rn->njobs; i++)
		if (rn->jobs[i].state != J_NONE)
			json_set(runs, rn->jobs[i].key, json_new_string(jstate_name[rn->jobs[i].state]));
	json_set(j, "runs", runs);
	rc = save_json(path, j);
	cJSON_Delete(j);
	free(path);
	return rc;
}

static int
save_results(struct runner *rn)
{
	char *path = easprintf("%s/results.json", rn->dir);
	int rc = save_json(path, rn->results);

	free(path);
	return rc;
}

/* The key of a run: its place in the order, the plan, the campaign. */
static void
run_key(const struct runner *rn, size_t index, char out[33])
{
	char *s = easprintf("%s/%s/%zu", rn->campaign, rn->pl->sha, index), hex[SHA256_HEX];

	canon_sha256_hex(s, strlen(s), hex);
	snprintf(out, 33, "%.32s", hex);
	free(s);
}

static bool
same_run(const cJSON *row, const struct plan *pl, const struct order_run *r)
{
	const cJSON *b = json_get(row, "block");

	return strcmp(json_get(row, "node_class")->valuestring, pl->node_classes[r->node_class]) == 0 &&
	    strcmp(json_get(row, "workload")->valuestring, pl->workloads[r->workload].name) == 0 &&
	    strcmp(json_get(row, "variant")->valuestring, pl->variants[r->variant].name) == 0 &&
	    json_is_int(b) && strtoll(b->valuestring, NULL, 10) == r->block;
}

static cJSON *
find_row(struct runner *rn, const struct order_run *r)
{
	cJSON *row;

	cJSON_ArrayForEach(row, json_get(rn->results, "runs"))
		if (same_run(row, rn->pl, r))
			return row;
	return NULL;
}

/* Opens or starts the campaign in RUN_DIR: journal, results, their checks. */
static int
open_campaign(struct runner *rn)
{
	char *jpath = easprintf("%s/journal.json", rn->dir);
	char *rpath = easprintf("%s/results.json", rn->dir);
	buf t = BUF_INIT;
	cJSON *j = NULL;
	json_error e;
	int rc = EXIT_PASS;
	size_t n;
	struct order_run *o = plan_order(rn->pl, &n);

	rn->jobs = ecalloc(n + 1, sizeof *rn->jobs);
	rn->njobs = n;
	if (buf_read_file(&t, jpath) == 0) {
		const cJSON *v;

		if ((j = json_parse_strict(t.s, t.len, &e)) == NULL || !cJSON_IsObject(j)) {
			warnx("%s: not a journal: %s", jpath, e.msg);
			rc = EXIT_TROUBLE;
			goto done;
		}
		v = json_get(j, "plan_sha256");
		if (!cJSON_IsString(v) || strcmp(v->valuestring, rn->pl->sha) != 0) {
			warnx("plan_mismatch: %s belongs to plan %s; use another run directory for "
			    "a new campaign", jpath, cJSON_IsString(v) ? v->valuestring : "(none)");
			rc = EXIT_TROUBLE;
			goto done;
		}
		v = json_get(j, "campaign_id");
		snprintf(rn->campaign, sizeof rn->campaign, "%s", cJSON_IsString(v) ?
		    v->valuestring : "");
	} else if (errno != ENOENT) {
		warn("%s", jpath);
		rc = EXIT_TROUBLE;
		goto done;
	} else
		random_hex(rn->campaign);
	for (size_t i = 0; i < n; i++) {
		const cJSON *st;

		rn->jobs[i].r = o[i];
		run_key(rn, i, rn->jobs[i].key);
		st = j != NULL ? json_get(json_get(j, "runs"), rn->jobs[i].key) : NULL;
		for (int k = 1; cJSON_IsString(st) && k <= J_MISSING; k++)
			if (strcmp(st->valuestring, jstate_name[k]) == 0)
				rn->jobs[i].state = (enum jstate)k;
	}
	if (buf_read_file(&t, rpath) == 0) {
		const cJSON *v;

		if ((rn->results = json_parse_strict(t.s, t.len, &e)) == NULL ||
		    !cJSON_IsArray(json_get(rn->results, "runs"))) {
			warnx("%s: not a results file", rpath);
			rc = EXIT_TROUBLE;
			goto done;
		}
		v = json_get(rn->results, "plan_sha256");
		if (!cJSON_IsString(v) || strcmp(v->valuestring, rn->pl->sha) != 0) {
			warnx("plan_mismatch: %s holds results of plan %s; restore this campaign's "
			    "results or use another run directory", rpath,
			    cJSON_IsString(v) ? v->valuestring : "(none)");
			rc = EXIT_TROUBLE;
			goto done;
		}
	} else if (errno == ENOENT) {
		rn->results = json_new_object();
		json_set(rn->results, "schema_name", json_new_string("vq.benchmark-results/1"));
		json_set(rn->results, "plan_sha256", json_new_string(rn->pl->sha));
		json_set(rn->results, "runs", json_new_array());
	} else {
		warn("%s", rpath);
		rc = EXIT_TROUBLE;
		goto done;
	}
	/* Every recorded run has its row, or nothing goes on. */
	for (size_t i = 0; i < n; i++)
		if (rn->jobs[i].state == J_RECORDED && find_row(rn, &rn->jobs[i].r) == NULL) {
			warnx("%s: the journal recorded (%s, %s, %s, block %lld) but results.json has "
			    "no row for it; restore this campaign's results before resuming", rn->dir,
			    rn->pl->node_classes[o[i].node_class], rn->pl->workloads[o[i].workload].name,
			    rn->pl->variants[o[i].variant].name, o[i].block);
			rc = EXIT_TROUBLE;
			goto done;
		}
	/* The identity is on disk before anything is sent. */
	if (j == NULL && save_journal(rn) != 0)
		rc = EXIT_TROUBLE;
done:
	cJSON_Delete(j);
	free(o);
	free(jpath);
	free(rpath);
	buf_free(&t);
	return rc;
}

/* How a job ended, as status.json says it. */
static const char *
job_status(const struct proc_result *res)
{
	if (res->timed_out)
		return "time_exceeded";
	if (res->mem_exceeded)
		return "oom_killed";
	if (WIFSIGNALED(res->status))
		return "killed";
	if (WEXITSTATUS(res->status) != 0)
		return "failed";
	return "completed";
}

/*
 * The supervisor: it holds the job's lock for its whole life (inherited
 * from the runner, so that there is no moment when a started job looks
 * absent, and passed on to the job, so that a job whose supervisor was
 * killed still looks running), says it started (job.json), runs the job
 * in a process group of its own under the binding's limits, and writes
 * status.json.
 */
static void __attribute__((noreturn))
supervise(const struct runner *rn, const struct job *jb, char **argv, const char *ws,
    const char *meta, int lockfd)
{
	char *log = easprintf("%s/job.log", meta), *status_path = easprintf("%s/status.json", meta);
	char *job_path_ = easprintf("%s/job.json", meta);
	/* A backstop for runaway allocation; the watchdog is the limit. */
	struct proc_rlimit as = { RLIMIT_AS, (unsigned long long)(rn->b->mem_mb * 4 * 1024 * 1024) };
	struct proc_spec spec = { 0 };
	struct proc_result res;
	cJSON *o = json_new_object();
	buf t = BUF_INIT;

	json_set(o, "supervisor_pid", json_new_int(getpid()));
	json_set(o, "node_class", json_new_string(rn->pl->node_classes[jb->r.node_class]));
	json_set(o, "workload", json_new_string(rn->pl->workloads[jb->r.workload].name));
	json_set(o, "variant", json_new_string(rn->pl->variants[jb->r.variant].name));
	json_set(o, "block", json_new_int(jb->r.block));
	json_set(o, "started", json_new_float(now_wall()));
	json_write(&t, o, JSON_INDENT2, NULL);
	atomic_write_file(job_path_, t.s, t.len);
	cJSON_Delete(o);
	buf_reset(&t);
	spec.argv = argv;
	spec.dir = ws;
	spec.exec_error = "perf-campaign: ";
	spec.keep_fd = lockfd;	/* the job holds the lock too */
	spec.rlimits = &as;
	spec.nrlimits = 1;
	spec.log = log;
	spec.log_direct = true;	/* the job's log outlives a killed supervisor */
	spec.timeout = rn->b->wall;
	spec.mem_mb = rn->b->mem_mb;
	spec.kill_at_once = true;
	o = json_new_object();
	if (proc_run(&spec, &res) != 0) {
		/* Nothing ran: a failure, and why in its log when the log opens. */
		FILE *fp = fopen(log, "a");

		if (fp != NULL) {
			fprintf(fp, "perf-campaign: %s: %s\n", argv[0], strerror(errno));
			fclose(fp);
		}
		memset(&res, 0, sizeof res);
		res.status = 127 << 8;
	}
	json_set(o, "status", json_new_string(job_status(&res)));
	json_set(o, "ended", json_new_float(now_wall()));
	json_set(o, "exit", WIFEXITED(res.status) ? json_new_int(WEXITSTATUS(res.status)) :
	    json_new_null());
	json_set(o, "signal", WIFSIGNALED(res.status) ? json_new_int(WTERMSIG(res.status)) :
	    json_new_null());
	json_set(o, "peak_rss_mb", json_new_float((double)res.maxrss_kb / 1024));
	json_set(o, "cpu_seconds", json_new_float(res.cpu_seconds));
	json_write(&t, o, JSON_INDENT2, NULL);
	atomic_write_file(status_path, t.s, t.len);
	_exit(0);
}

/* Starts a job: workspace with its inputs, then its supervisor. 0 or -1 (problem). */
static int
start_job(struct runner *rn, struct job *jb)
{
	const struct plan *pl = rn->pl;
	char *meta = job_path(rn, jb->key, ""), *ws = easprintf("%s/work", meta);
	char *lockp = easprintf("%s/job.lock", meta), *why = NULL, hex[SHA256_HEX];
	const cJSON *cmd = rn->b->command[jb->r.variant], *args = rn->b->args[jb->r.workload], *e;
	struct strvec argv = STRVEC_INIT;
	int rc = -1, lk;
	pid_t pid;

	/* A fresh workspace with the inputs, checked against their pin before the send. */
	atomic_remove_tree(meta);
	if (tree_copy(rn->b->sources[jb->r.workload], ws, &why) != 0 ||
	    tree_digest(ws, hex, &why) != 0) {
		warnx("%s: cannot stage the inputs: %s", jb->key, why);
		goto done;
	}
	if (strcmp(hex, pl->workloads[jb->r.workload].digest) != 0) {
		warnx("%s: the staged input of '%s' no longer matches its pin; not sent", jb->key,
		    pl->workloads[jb->r.workload].name);
		goto done;
	}
	cJSON_ArrayForEach(e, cmd) {
		/* A relative program path is the binding's, like its sources. */
		if (argv.n == 0 && e->valuestring[0] != '/' && strchr(e->valuestring, '/') != NULL)
			strvec_pushf(&argv, "%s/%s", rn->b->dir, e->valuestring);
		else
			strvec_push(&argv, e->valuestring);
	}
	cJSON_ArrayForEach(e, args)
		strvec_push(&argv, e->valuestring);
	/* Locked before the fork: the supervisor holds it from its first moment. */
	if ((lk = lock_open(lockp, 0)) < 0) {
		warn("%s", lockp);
		goto done;
	}
	fflush(NULL);
	if ((pid = fork()) == 0) {
		if (run_dir_lock >= 0)
			close(run_dir_lock);	/* a later runner must get the directory */
		setsid();	/* the job outlives a runner that is killed */
		supervise(rn, jb, argv.v, ws, meta, lk);
	}
	close(lk);
	if (pid < 0) {
		warn("cannot start a job");
		goto done;
	}
	rc = 0;
done:
	strvec_clear(&argv);
	free(why);
	free(meta);
	free(ws);
	free(lockp);
	return rc;
}

/*
 * What became of an accepted job: 1 ended (status.json), 0 still running
 * (its supervisor or the job holds the lock), -1 lost (started, then gone
 * without a status: killed with its supervisor, so it recorded nothing),
 * -2 never started (safe to send under its key).
 */
static int
job_state(struct runner *rn, struct job *jb)
{
	char *status = job_path(rn, jb->key, "/status.json");
	char *job = job_path(rn, jb->key, "/job.json");
	char *lockp = job_path(rn, jb->key, "/job.lock");
	struct stat st;
	int rc, lk = -1;

	while (waitpid(-1, NULL, WNOHANG) > 0)
		;	/* our own supervisors, reaped */
	if (stat(status, &st) == 0)
		rc = 1;
	else if ((lk = lock_open(lockp, LOCK_OPT_NOWAIT | LOCK_OPT_NOCREATE)) < 0 &&
	    errno == EWOULDBLOCK)
		rc = 0;
	else
		rc = stat(status, &st) == 0 ? 1 : stat(job, &st) == 0 ? -1 : -2;
	if (lk >= 0)
		close(lk);	/* and with it a lock it may have taken */
	free(status);
	free(job);
	free(lockp);
	return rc;
}

static void
copy_field(cJSON *row, const cJSON *from, const char *key)
{
	const cJSON *v = json_get(from, key);

	if (v != NULL && !cJSON_IsNull(v))
		json_set(row, key, cJSON_Duplicate(v, true));
}

/* A new result row: the run's identity. */
static cJSON *
new_row(const struct plan *pl, const struct order_run *r)
{
	cJSON *row = json_new_object();

	json_set(row, "workload", json_new_string(pl->workloads[r->workload].name));
	json_set(row, "variant", json_new_string(pl->variants[r->variant].name));
	json_set(row, "node_class", json_new_string(pl->node_classes[r->node_class]));
	json_set(row, "block", json_new_int(r->block));
	return row;
}

/* A run report that can be recorded: an object with what perf-measure writes. */
static bool
report_valid(const cJSON *rep)
{
	const cJSON *v;

	return cJSON_IsObject(rep) && cJSON_IsString(json_get(rep, "runtime_digest")) &&
	    cJSON_IsBool(json_get(rep, "converged")) &&
	    cJSON_IsNumber(v = json_get(rep, "steady_seconds")) && v->valuedouble > 0;
}

/*
 * The row's fields from a valid report, in results order; st (the
 * supervisor's status, or NULL) adds the kernel's cpu_seconds and peak_rss_mb.
 */
static void
report_fields(cJSON *row, const cJSON *rep, const cJSON *st)
{
	cJSON *hw = json_new_object();

	json_set(row, "status", json_new_string(cJSON_IsTrue(json_get(rep, "converged")) ?
	    "completed" : "unconverged"));
	copy_field(row, rep, "runtime_digest");
	copy_field(hw, rep, "cpu_model");
	copy_field(hw, rep, "mpi_ranks");
	copy_field(hw, rep, "threads_per_rank");
	json_set(row, "hardware", hw);
	copy_field(row, rep, "steady_seconds");
	copy_field(row, rep, "startup_seconds");
	if (st != NULL) {
		copy_field(row, st, "cpu_seconds");
		copy_field(row, st, "peak_rss_mb");
	}
	copy_field(row, rep, "scf_iterations");
	if (cJSON_IsObject(json_get(rep, "values")))
		copy_field(row, rep, "values");
}

/*
 * The result row of an ended job, or NULL when a completed job left no
 * valid report (the run is then missing: vq never fills in a timing).
 */
static cJSON *
result_row(struct runner *rn, struct job *jb)
{
	const struct plan *pl = rn->pl;
	char *status = job_path(rn, jb->key, "/status.json");
	char *report = job_path(rn, jb->key, "/work/" CAMPAIGN_RUN_REPORT);
	buf t = BUF_INIT;
	json_error e;
	cJSON *st = NULL, *rep = NULL, *row = NULL;
	const char *s;

	if (buf_read_file(&t, status) != 0 || (st = json_parse(t.s, t.len, &e)) == NULL)
		goto done;
	s = json_get(st, "status")->valuestring;
	row = new_row(pl, &jb->r);
	if (strcmp(s, "completed") == 0) {
		if (buf_read_file(&t, report) != 0 ||
		    (rep = json_parse_strict(t.s, t.len, &e)) == NULL || !report_valid(rep)) {
			cJSON_Delete(row);
			row = NULL;
			goto done;
		}
		report_fields(row, rep, st);
	} else {
		/* Not completed: the planned digest, never compared. */
		json_set(row, "status", json_new_string(s));
		json_set(row, "runtime_digest", json_new_string(pl->variants[jb->r.variant].digest));
		copy_field(row, st, "cpu_seconds");
		copy_field(row, st, "peak_rss_mb");
	}
done:
	cJSON_Delete(st);
	cJSON_Delete(rep);
	buf_free(&t);
	free(status);
	free(report);
	return row;
}

/* Records an ended job: its row saved first (replacing one of the same run), then the journal. */
static int
record(struct runner *rn, struct job *jb)
{
	cJSON *row = result_row(rn, jb), *old = find_row(rn, &jb->r);

	if (old != NULL)
		cJSON_Delete(cJSON_DetachItemViaPointer(json_get(rn->results, "runs"), old));
	if (row != NULL) {
		json_append(json_get(rn->results, "runs"), row);
		if (save_results(rn) != 0)
			return -1;
		jb->state = J_RECORDED;
	} else {
		if (old != NULL && save_results(rn) != 0)
			return -1;
		warnx("%s %s %s block %lld: the job completed without a valid %s; left missing",
		    rn->pl->node_classes[jb->r.node_class], rn->pl->workloads[jb->r.workload].name,
		    rn->pl->variants[jb->r.variant].name, jb->r.block, CAMPAIGN_RUN_REPORT);
		jb->state = J_MISSING;
	}
	return save_journal(rn);
}

/*
 * An accepted job gone without a status (its supervisor killed, with the
 * whole process tree, say): it recorded nothing, so it is run again, up to
 * MAX_LOST times; then its node class is blocked. True when blocked.
 */
static bool
lost_again(struct runner *rn, struct job *jb)
{
	const struct plan *pl = rn->pl;
	int c = jb->r.node_class;

	if (++jb->lost > MAX_LOST) {
		warnx("%s: the accepted job of (%s, %s, %s, block %lld) was lost %d times "
		    "without a status; its node class is blocked", jb->key, pl->node_classes[c],
		    pl->workloads[jb->r.workload].name, pl->variants[jb->r.variant].name,
		    jb->r.block, MAX_LOST);
		rn->blocked[c] = true;
		rn->problem = true;
		return true;
	}
	warnx("%s: the accepted job of (%s, %s, %s, block %lld) is gone without a status "
	    "(killed with its supervisor); it recorded nothing and runs again", jb->key,
	    pl->node_classes[c], pl->workloads[jb->r.workload].name,
	    pl->variants[jb->r.variant].name, jb->r.block);
	return false;
}

/* Signal state: SIGINT or SIGTERM asked the runner to stop starting runs. */
static volatile sig_atomic_t stop;

static void
on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* Runs every local node class's runs in order; classes side by side. */
static int
campaign_run(struct runner *rn, bool once)
{
	const struct plan *pl = rn->pl;
	size_t *next = ecalloc((size_t)pl->nnode_classes + 1, sizeof *next);
	long *current = ecalloc((size_t)pl->nnode_classes + 1, sizeof *current);
	int *started = ecalloc((size_t)pl->nnode_classes + 1, sizeof *started);
	bool busy = true, missing = false;
	int rc = EXIT_PASS;

	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	for (int c = 0; c < pl->nnode_classes; c++) {
		current[c] = -1;
		if (!rn->b->local[c])
			fprintf(stderr, "perf-campaign: node class %s runs on %s: left to its pipeline "
			    "(perf-campaign pipeline)\n", pl->node_classes[c], rn->b->host[c]);
	}
	while (busy && !stop) {
		busy = false;
		for (int c = 0; c < pl->nnode_classes; c++) {
			struct job *jb;
			int s;

			if (!rn->b->local[c] || rn->blocked[c])
				continue;
			if (current[c] < 0) {
				/* The next run of this class not yet recorded. */
				while (next[c] < rn->njobs && (rn->jobs[next[c]].r.node_class != c ||
				    rn->jobs[next[c]].state == J_RECORDED ||
				    rn->jobs[next[c]].state == J_MISSING))
					next[c]++;
				if (next[c] >= rn->njobs || (once && started[c] > 0))
					continue;
				jb = &rn->jobs[next[c]];
				busy = true;
				if (jb->state == J_ACCEPTED) {
					if ((s = job_state(rn, jb)) >= 0) {
						/* The job the queue already accepted: waited for, not resent. */
						current[c] = (long)next[c];
						continue;
					}
					if (s == -1 && lost_again(rn, jb))
						continue;
				}
				jb->state = J_ACCEPTED;
				if (save_journal(rn) != 0 || start_job(rn, jb) != 0) {
					rn->blocked[c] = true;
					rn->problem = true;
					continue;
				}
				started[c]++;
				current[c] = (long)next[c];
				continue;
			}
			busy = true;
			jb = &rn->jobs[current[c]];
			s = job_state(rn, jb);
			if (s == 0)
				continue;
			if (s < 0) {
				/* Run again, unless lost too often. */
				if (lost_again(rn, jb) || start_job(rn, jb) != 0) {
					rn->blocked[c] = true;
					rn->problem = true;
					current[c] = -1;
				}
				continue;
			}
			if (record(rn, jb) != 0) {
				rn->blocked[c] = true;
				rn->problem = true;
			}
			missing |= jb->state == J_MISSING;
			current[c] = -1;
		}
		if (busy)
			usleep(10000);
	}
	for (size_t i = 0; i < rn->njobs; i++)
		if (rn->b->local[rn->jobs[i].r.node_class] && rn->jobs[i].state != J_RECORDED &&
		    !once)
			missing = true;
	if (rn->problem || (missing && !once) || stop)
		rc = EXIT_GATE;
	free(next);
	free(current);
	free(started);
	return rc;
}

static int
cmd_run(int argc, char **argv)
{
	struct plan pl;
	struct binding b;
	struct runner rn;
	bool once = false;
	int lock, rc, c;
	char *lockpath, *real = NULL, why[64];

	optind = 1;
	while ((c = opt_next(&option_table, "run", argc, argv)) != -1) {
		if (c != 'o')
			opt_usage(&option_table, EXIT_TROUBLE);
		once = true;
	}
	if (argc - optind != 3)
		opt_usage(&option_table, EXIT_TROUBLE);
	if (!load_plan(argv[optind], &pl))
		return EXIT_TROUBLE;
	if (!load_binding(argv[optind + 1], &pl, &b, true)) {
		free_binding(&b, &pl);
		plan_free(&pl);
		return EXIT_TROUBLE;
	}
	memset(&rn, 0, sizeof rn);
	rn.pl = &pl;
	rn.b = &b;
	rn.blocked = ecalloc((size_t)pl.nnode_classes + 1, sizeof *rn.blocked);
	rc = EXIT_TROUBLE;
	lock = -1;
	if (atomic_mkdirs(argv[optind + 2]) != 0 || (real = realpath(argv[optind + 2], NULL)) == NULL) {
		warn("%s", argv[optind + 2]);
		goto out;
	}
	rn.dir = real;
	lockpath = easprintf("%s/.lock", rn.dir);
	/* A runner killed just after a fork leaves the lock to its supervisor for a moment. */
	if ((lock = lock_open(lockpath, LOCK_OPT_NOWAIT | LOCK_OPT_ORPHAN)) < 0) {
		if (errno == EWOULDBLOCK)
			warnx("%s: another perf-campaign runs this campaign (%s)", rn.dir,
			    lock_why(lockpath, errno, why, sizeof why));
		else
			warn("%s", rn.dir);
		free(lockpath);
		goto out;
	}
	free(lockpath);
	run_dir_lock = lock;
	/* Under the directory's lock: every temporary file here is a killed runner's. */
	atomic_sweep(rn.dir, 0);
	rc = open_campaign(&rn);
	if (rc == EXIT_PASS)
		rc = campaign_run(&rn, once);
out:
	cJSON_Delete(rn.results);
	free(rn.jobs);
	free(rn.blocked);
	free(real);
	free_binding(&b, &pl);
	plan_free(&pl);
	if (lock >= 0)
		close(lock);
	return rc;
}

/* ---- pipeline and collect ---- */

/* Appends s quoted for a POSIX shell. */
static void
sh_quote(buf *b, const char *s)
{
	buf_addc(b, '\'');
	for (; *s; s++)
		if (*s == '\'')
			buf_adds(b, "'\\''");
		else
			buf_addc(b, *s);
	buf_addc(b, '\'');
}

/* Appends s as a YAML double-quoted scalar. */
static void
yaml_quote(buf *b, const char *s)
{
	json_write_string(b, s);	/* JSON strings are YAML double-quoted scalars */
}

static int
cmd_pipeline(int argc, char **argv)
{
	struct plan pl;
	struct binding b;
	struct order_run *o;
	size_t n;
	buf y = BUF_INIT;
	int remote = 0;

	if (argc != 3)
		opt_usage(&option_table, EXIT_TROUBLE);
	if (!load_plan(argv[1], &pl))
		return EXIT_TROUBLE;
	if (!load_binding(argv[2], &pl, &b, false)) {
		free_binding(&b, &pl);
		plan_free(&pl);
		return EXIT_TROUBLE;
	}
	o = plan_order(&pl, &n);
	buf_addf(&y, "# perf-campaign pipeline: plan %s (%s), one step per run in the plan's\n"
	    "# seeded order, one run at a time per node class (a concurrency group).\n"
	    "steps:\n", pl.id, pl.sha);
	for (size_t i = 0; i < n; i++) {
		const struct order_run *r = &o[i];
		const cJSON *e;
		buf cmd = BUF_INIT, label = BUF_INIT;
		char *dir;

		if (b.host[r->node_class] == NULL)
			continue;
		remote++;
		buf_addf(&label, "%s %s %s block %lld%s", pl.node_classes[r->node_class],
		    pl.workloads[r->workload].name, pl.variants[r->variant].name, r->block,
		    r->block <= 0 ? " (warm-up)" : "");
		buf_adds(&cmd, "set -u; d=");
		dir = campaign_report_dir("", &pl, r);
		sh_quote(&cmd, dir);
		free(dir);
		buf_adds(&cmd, "; rm -rf \"$d\"; mkdir -p \"$d\"; cp -R ");
		{
			char *src = easprintf("%s/.", json_get(json_get(json_get(b.doc, "workloads"),
			    pl.workloads[r->workload].name), "sources")->valuestring);

			sh_quote(&cmd, src);
			free(src);
		}
		buf_adds(&cmd, " \"$d/\"; (cd \"$d\" &&");
		cJSON_ArrayForEach(e, b.command[r->variant]) {
			buf_addc(&cmd, ' ');
			sh_quote(&cmd, e->valuestring);
		}
		cJSON_ArrayForEach(e, b.args[r->workload]) {
			buf_addc(&cmd, ' ');
			sh_quote(&cmd, e->valuestring);
		}
		buf_adds(&cmd, "); s=$?; buildkite-agent artifact upload \"$d/" CAMPAIGN_RUN_REPORT "\" || true; "
		    "exit $s");
		buf_adds(&y, "  - label: ");
		yaml_quote(&y, label.s);
		buf_addf(&y, "\n    key: \"run-%zu\"\n    command: ", i + 1);
		yaml_quote(&y, cmd.s);
		buf_adds(&y, "\n    agents:\n      queue: ");
		yaml_quote(&y, b.host[r->node_class]);
		buf_adds(&y, "\n    concurrency_group: ");
		{
			char *g = easprintf("perf-campaign/%.12s/%s", pl.sha, pl.node_classes[r->node_class]);

			yaml_quote(&y, g);
			free(g);
		}
		buf_addf(&y, "\n    concurrency: 1\n    timeout_in_minutes: %.0f\n    soft_fail: true\n",
		    b.wall / 60 + 1);
		buf_free(&cmd);
		buf_free(&label);
	}
	buf_adds(&y, "  - wait: ~\n    continue_on_failure: true\n"
	    "  - label: \"collect the run reports\"\n    key: \"collect\"\n    command: ");
	{
		buf c = BUF_INIT;

		buf_adds(&c, "buildkite-agent artifact download 'campaign/**/" CAMPAIGN_RUN_REPORT "' . && "
		    "perf-campaign collect ");
		sh_quote(&c, argv[1]);
		buf_adds(&c, " . -o results.json && buildkite-agent artifact upload results.json");
		yaml_quote(&y, c.s);
		buf_free(&c);
	}
	buf_addc(&y, '\n');
	if (remote == 0)
		fprintf(stderr, "perf-campaign: no node class is bound to an agent queue; "
		    "perf-campaign run runs them here\n");
	fwrite(y.s, 1, y.len, stdout);
	buf_free(&y);
	free(o);
	free_binding(&b, &pl);
	plan_free(&pl);
	return fflush(stdout) == 0 ? EXIT_PASS : EXIT_TROUBLE;
}

static int
cmd_collect(int argc, char **argv)
{
	struct plan pl;
	struct order_run *o;
	const char *out = NULL;
	size_t n, got = 0, bad = 0;
	struct stat st = { 0 };
	cJSON *res, *runs;
	int c, rc = EXIT_PASS;

	optind = 1;
	while ((c = opt_next(&option_table, "collect", argc, argv)) != -1) {
		if (c != 'o')
			opt_usage(&option_table, EXIT_TROUBLE);
		out = optarg;
	}
	if (argc - optind != 2)
		opt_usage(&option_table, EXIT_TROUBLE);
	if (!load_plan(argv[optind], &pl))
		return EXIT_TROUBLE;
	if (stat(argv[optind + 1], &st) != 0 || !S_ISDIR(st.st_mode)) {
		if (!S_ISDIR(st.st_mode) && st.st_mode != 0)
			errno = ENOTDIR;
		warn("%s", argv[optind + 1]);
		plan_free(&pl);
		return EXIT_TROUBLE;
	}
	o = plan_order(&pl, &n);
	res = json_new_object();
	runs = json_new_array();
	json_set(res, "schema_name", json_new_string("vq.benchmark-results/1"));
	json_set(res, "plan_sha256", json_new_string(pl.sha));
	for (size_t i = 0; i < n; i++) {
		const struct order_run *r = &o[i];
		char *d = campaign_report_dir(argv[optind + 1], &pl, r);
		char *p = easprintf("%s/" CAMPAIGN_RUN_REPORT, d);
		buf t = BUF_INIT;
		json_error e;
		cJSON *rep = NULL, *row;

		if (buf_read_file(&t, p) != 0) {
			if (errno != ENOENT) {
				warn("%s", p);
				bad++;
			}
		} else if ((rep = json_parse_strict(t.s, t.len, &e)) == NULL) {
			diag(p, e.line, "not a run report: %s", e.msg);
			bad++;
		} else if (!report_valid(rep)) {
			diag(p, 0, "not a run report: it needs runtime_digest, converged and a "
			    "positive steady_seconds");
			bad++;
		} else {
			row = new_row(&pl, r);
			report_fields(row, rep, NULL);
			json_append(runs, row);
			got++;
		}
		cJSON_Delete(rep);
		buf_free(&t);
		free(p);
		free(d);
	}
	json_set(res, "runs", runs);
	fprintf(stderr, "perf-campaign: %zu of %zu planned runs reported\n", got, n);
	if (bad > 0) {
		warnx("%zu run report%s could not be read; nothing written", bad,
		    bad == 1 ? "" : "s");
		rc = EXIT_TROUBLE;
	} else if (out != NULL) {
		if (save_json(out, res) != 0)
			rc = EXIT_TROUBLE;
	} else {
		buf t = BUF_INIT;

		json_write(&t, res, JSON_INDENT2, NULL);
		buf_addc(&t, '\n');
		if (fwrite(t.s, 1, t.len, stdout) != t.len || fflush(stdout) != 0) {
			warn("write error on standard output");
			rc = EXIT_TROUBLE;
		}
		buf_free(&t);
	}
	cJSON_Delete(res);
	free(o);
	plan_free(&pl);
	return rc;
}

/* The commands, one function each. */
static const struct command {
	const char *name;
	int (*run)(int, char **);
} commands[] = {
	{ "run", cmd_run },
	{ "pipeline", cmd_pipeline },
	{ "collect", cmd_collect },
};

int
main(int argc, char *argv[])
{
	err_init(argv[0]);
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))
		opt_usage(&option_table, EXIT_PASS);
	if (argc >= 2 && strcmp(argv[1], "--version") == 0)
		cli_version();
	for (size_t i = 0; argc >= 2 && i < sizeof commands / sizeof *commands; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	if (argc >= 2)
		warnx("unknown command '%s'", argv[1]);
	opt_usage(&option_table, EXIT_TROUBLE);
}
