/*
 * perf-collect: runs benchmarks from their JSON configs and writes the
 * reference's raw records (perf-collect(1)): config discovery and
 * validation, GPU discovery, the runner protocol, measurement,
 * aggregates, the v2 identity block, and the worker log.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/canon.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/fd.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/num.h"
#include "core/opt.h"
#include "core/proc.h"
#include "core/strvec.h"
#include "core/text.h"
#include "lane/config.h"
#include "lane/events.h"
#include "lane/gpu.h"
#include "lane/import/import.h"
#include "lane/logtail.h"
#include "lane/provenance.h"
#include "lane/recipe.h"

#define DEFAULT_CONFIGS ".buildkite/performance-benchmarks/tests"
#define LOG_ROTATE (10LL * 1024 * 1024)

/* What perf-collect does: the run, or one of --check, --plan, --telemetry. */
enum mode { MODE_RUN, MODE_CHECK, MODE_PLAN, MODE_TELEMETRY };

static struct {
	enum mode mode;
	const char *configs;
	const char *runner;
	const char *results;
	const char *telemetry;
	const char *written;	/* --written: the list of the files written */
	FILE *written_fp;
	bool written_failed;
	double timeout;
	double interval;
	double sample;
	bool cpu, strict;
	struct provenance_env env;
	struct gpu gpu;
} opt;

/* A benchmark config read from its file. */
struct bench {
	char *path;
	cJSON *cfg;
	bool valid;
};

static const struct opt_def options[] = {
	{ 0, "check", 'C', NULL, "validate the configs and list them", NULL, NULL },
	{ 0, "strict", 'X', NULL, "make every config warning an error", NULL, NULL },
	{ 0, "plan", 'P', NULL,
	    "print, for each config, what would happen on this machine", NULL, NULL },
	{ 'c', "configs", 0, "dir", "the directory read when no config is named", NULL, NULL },
	{ 'r', "runner", 0, "command", "the runner of every benchmark", NULL, NULL },
	{ 'o', "results", 0, "dir", "where records and worker logs go", NULL, NULL },
	{ 't', "timeout", 0, "seconds",
	    "kill a runner, and its process group, after this long", NULL, NULL },
	{ 0, "cpu", 'U', NULL, "run on a machine without a GPU", NULL, NULL },
	{ 0, "sample-interval", 'S', "seconds",
	    "how often GPU memory is sampled while a self-timed runner runs", NULL, NULL },
	{ 0, "written", 'W', "file",
	    "list each worker log and record written, a path a line", NULL, NULL },
	{ 0, "telemetry", 'T', "file",
	    "append one CSV line per GPU every --interval seconds to file", NULL, NULL },
	{ 0, "interval", 'I', "seconds", "with --telemetry: the time between samples", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-collect [--check | --plan] [--strict] [-c configs-dir]\n"
	    "                    [-r runner] [-o results-dir] [-t seconds] [--cpu]\n"
	    "                    [--sample-interval seconds] [--written file]\n"
	    "                    [config | dir ...]\n"
	    "       perf-collect --telemetry file [--interval seconds]\n",
	.width = 26,
	.flags = 0,
	.opts = options,
	/* getopt's order before the table, for an ambiguous abbreviation's message */
	.long_order =
	    "configs runner results timeout check plan cpu telemetry interval "
	    "sample-interval strict written help version",
};

/* Adds path, or the *.json files of directory path, to the list. */
static int
add_configs(const char *path, char ***list, size_t *n)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	size_t len;

	if (stat(path, &st) != 0) {
		warn("%s", path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		*list = erealloc(*list, (*n + 1) * sizeof **list);
		(*list)[(*n)++] = estrdup(path);
		return 0;
	}
	if ((d = opendir(path)) == NULL) {
		warn("%s", path);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 5 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		*list = erealloc(*list, (*n + 1) * sizeof **list);
		(*list)[(*n)++] = easprintf("%s/%s", path, de->d_name);
	}
	closedir(d);
	return 0;
}

/*
 * Reports the typos of a valid config; false when one is an error (every
 * one with --strict).
 */
static bool
lint_config(const struct bench *b, const char *text)
{
	struct config_issue *is;
	size_t n;
	bool ok = true;

	is = config_lint(b->cfg, text, &n);
	for (size_t i = 0; i < n; i++) {
		bool error = is[i].error || opt.strict;
		diag(b->path, is[i].line, "%s%s", error ? "" : "warning: ", is[i].msg);
		ok &= !error;
	}
	config_issues_free(is, n);
	return ok;
}

/* Reads and validates every config; reports every invalid one. */
static int
load_configs(char **paths, size_t n, struct bench **out)
{
	struct bench *b = ecalloc(n + 1, sizeof *b);
	json_error e;
	buf text = BUF_INIT;
	char chunk[65536], *msg;
	size_t got;
	int bad = 0;
	FILE *fp;

	for (size_t i = 0; i < n; i++) {
		b[i].path = paths[i];
		buf_reset(&text);
		if ((fp = fopen(paths[i], "rb")) == NULL) {
			warn("%s", paths[i]);
			bad++;
			continue;
		}
		while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0)
			buf_add(&text, chunk, got);
		fclose(fp);
		b[i].cfg = json_parse(text.s, text.len, &e);
		if (b[i].cfg == NULL) {
			diag(paths[i], e.line, "invalid JSON at column %ld: %s", e.col, e.msg);
			bad++;
			continue;
		}
		if ((msg = config_validate(b[i].cfg, paths[i])) != NULL) {
			warnx("%s", msg);
			free(msg);
			bad++;
			continue;
		}
		b[i].valid = lint_config(&b[i], text.s);
		bad += !b[i].valid;
	}
	buf_free(&text);
	*out = b;
	return bad;
}

/* Splits a --runner command into words pushed onto w: blanks separate, quotes group. */
static void
split_words(const char *s, struct strvec *w)
{
	buf cur = BUF_INIT;
	bool in_word = false;
	char q = 0;

	for (;; s++) {
		if (*s == '\0' || (!q && (*s == ' ' || *s == '\t'))) {
			if (in_word) {
				strvec_push(w, cur.s);
				buf_reset(&cur);
				in_word = false;
			}
			if (*s == '\0')
				break;
			continue;
		}
		in_word = true;
		if (!q && (*s == '\'' || *s == '"'))
			q = *s;
		else if (q && *s == q)
			q = 0;
		else if (*s == '\\' && q != '\'' && s[1] != '\0')
			buf_addc(&cur, *++s);
		else
			buf_addc(&cur, *s);
	}
	buf_free(&cur);
}

/*
 * A program named in a config: a relative path with a '/' is relative to
 * the config's directory; a bare name is looked up in PATH.
 */
static char *
config_relative(const char *config, const char *prog)
{
	const char *slash = strrchr(config, '/');

	if (prog[0] == '/' || strchr(prog, '/') == NULL || slash == NULL)
		return estrdup(prog);
	return easprintf("%.*s/%s", (int)(slash - config), config, prog);
}

/* The runner's argument vector, config path last, pushed onto argv; -1 with *err. */
static int
runner_argv(const struct bench *b, const char *id, struct strvec *argv, char **err)
{
	const cJSON *cmd = json_get(config_run_config(b->cfg), "command"), *c;
	char *prog;

	if (opt.runner != NULL) {
		split_words(opt.runner, argv);
	} else if (cmd != NULL) {
		if (!cJSON_IsArray(cmd) || cmd->child == NULL) {
			*err = easprintf("%s: run_config.command must be a non-empty list of "
			    "strings", id);
			return -1;
		}
		cJSON_ArrayForEach(c, cmd) {
			if (!cJSON_IsString(c) || c->valuestring[0] == '\0') {
				*err = easprintf("%s: run_config.command must be a non-empty list "
				    "of strings", id);
				strvec_clear(argv);
				return -1;
			}
			if (argv->n > 0) {
				strvec_push(argv, c->valuestring);
				continue;
			}
			prog = config_relative(b->path, c->valuestring);
			strvec_push(argv, prog);
			free(prog);
		}
	}
	if (argv->n == 0) {
		*err = easprintf("%s: no runner: give --runner or run_config.command", id);
		return -1;
	}
	strvec_push(argv, b->path);
	return 0;
}

/* What is known before running: the plan of one benchmark. */
struct plan {
	char *id;
	long count, warmup, measure;
	const cJSON *prompt;
	cJSON *thresholds;
	char *skip;		/* skip reason, or NULL */
	char *error;		/* why it cannot run, or NULL */
	const char *format;	/* run_config.output.format: a tool's output, or NULL */
	char *out_file;		/* the file it writes, or NULL: its standard output */
};

/*
 * run_config.output: {"format": F, "file": PATH} (file relative to the
 * results directory; without it, the command's standard output). NULL
 * when valid (or absent), else the message.
 */
static char *
output_plan(const struct bench *b, struct plan *p)
{
	const cJSON *out = json_get(config_run_config(b->cfg), "output");
	const cJSON *f = json_get(out, "format"), *file = json_get(out, "file"), *k;

	if (out == NULL || cJSON_IsNull(out))
		return NULL;
	if (!cJSON_IsObject(out))
		return easprintf("%s: run_config.output must be an object", p->id);
	cJSON_ArrayForEach(k, out)
		if (strcmp(k->string, "format") != 0 && strcmp(k->string, "file") != 0)
			return easprintf("%s: run_config.output: unknown key '%s' (format, file)",
			    p->id, k->string);
	if (!cJSON_IsString(f) || !import_format_known(f->valuestring))
		return easprintf("%s: run_config.output.format must be one of google-benchmark, "
		    "pytest-benchmark, hyperfine, go, catch2, criterion, jmh, benchmarkdotnet, "
		    "perfkite", p->id);
	if (file != NULL && !cJSON_IsNull(file) &&
	    (!cJSON_IsString(file) || file->valuestring[0] == '\0'))
		return easprintf("%s: run_config.output.file must be a non-empty string", p->id);
	p->format = f->valuestring;
	if (cJSON_IsString(file)) {
		/* Absolute: the tool may well run in a directory of its own. */
		char cwd[4096];
		if (file->valuestring[0] == '/')
			p->out_file = estrdup(file->valuestring);
		else if (opt.results[0] == '/' || getcwd(cwd, sizeof cwd) == NULL)
			p->out_file = easprintf("%s/%s", opt.results, file->valuestring);
		else
			p->out_file = easprintf("%s/%s/%s", cwd, opt.results, file->valuestring);
	}
	return NULL;
}

static void
make_plan(const struct bench *b, struct plan *p)
{
	const char *device = gpu_device_name(&opt.gpu);
	int available = opt.gpu.cuda ? opt.gpu.count : 0;
	char *err = NULL;
	cJSON *recipe;

	memset(p, 0, sizeof *p);
	p->id = config_display_id(b->cfg);
	if ((p->error = config_gpu_count(b->cfg, &p->count)) != NULL)
		return;
	if ((p->error = output_plan(b, p)) != NULL)
		return;
	/* A tool's suite runs on the CPU unless its config declares GPUs. */
	if (p->format != NULL && json_get(json_get(b->cfg, "init_kwargs"), "num_gpus") == NULL &&
	    json_get(config_run_config(b->cfg), "required_gpus") == NULL)
		p->count = 0;
	if (available < p->count && !(opt.cpu && !opt.gpu.cuda)) {
		p->skip = easprintf("Need %ld GPUs, only %d available", p->count, available);
		return;
	}
	if ((p->skip = config_gpu_types_skip(b->cfg, device)) != NULL)
		return;
	if ((p->prompt = recipe_prompt(b->cfg, &p->error)) == NULL)
		return;
	if ((p->error = config_run_counts(b->cfg, &p->warmup, &p->measure)) != NULL)
		return;
	if ((p->thresholds = config_thresholds(b->cfg, device, &p->error)) == NULL)
		return;
	if (!cJSON_IsString(json_get(b->cfg, "benchmark_id"))) {
		p->error = easprintf("%s: benchmark_id must be a string", p->id);
		return;
	}
	/* The identity is checked now, not after the GPUs have been busy. */
	if (config_is_v2(b->cfg) && p->format == NULL) {
		if ((recipe = recipe_build(b->cfg, p->count, NULL, &err)) == NULL) {
			p->error = easprintf("%s: %s", p->id, err);
			free(err);
			return;
		}
		cJSON_Delete(recipe);
	}
}

static void
free_plan(struct plan *p)
{
	free(p->id);
	free(p->skip);
	free(p->error);
	free(p->out_file);
	cJSON_Delete(p->thresholds);
}

/* Sets the v2 identity keys of a record, in the raw record's key order. */
static int
add_identity(cJSON *rec, const struct bench *b, long count, const cJSON *runtime,
    char **err)
{
	cJSON *recipe, *hw, *sw, *env;
	char hex[SHA256_HEX];

	if ((recipe = recipe_build(b->cfg, count, runtime, err)) == NULL)
		return -1;
	if (recipe_fingerprint(recipe, hex) != 0) {
		*err = estrdup("the recipe holds a number that is not finite");
		cJSON_Delete(recipe);
		return -1;
	}
	hw = import_hardware_profile(&opt.gpu, count);
	sw = recipe_software_profile(runtime);
	env = recipe_environment_metadata(runtime, hw, sw);
	json_set(rec, "recipe", recipe);
	json_set(rec, "recipe_fingerprint", json_new_string(hex));
	json_set(rec, "hardware_profile", hw);
	json_set(rec, "hardware_profile_id", recipe_profile_id(hw, "hw-"));
	json_set(rec, "software_profile", sw);
	json_set(rec, "software_profile_id", recipe_profile_id(sw, "sw-"));
	json_set(rec, "environment_metadata", env);
	json_set(rec, "environment_fingerprint", recipe_profile_id(env, "env-"));
	json_set(rec, "workload_id", cJSON_Duplicate(json_get(b->cfg, "workload_id"), true));
	json_set(rec, "variant_id", cJSON_Duplicate(json_get(b->cfg, "variant_id"), true));
	json_set(rec, "benchmark_version",
	    cJSON_Duplicate(json_get(b->cfg, "benchmark_version"), true));
	return 0;
}

/* GPU memory in use during a run, above what was in use before it. */
struct sampler {
	int n;
	unsigned long long base[GPU_MAX];
	double peak_mb;
	bool known;
	buf *capture;		/* the runner's standard output, when it is the tool's */
	int logfd;		/* the worker log then */
};

static void
sample_gpu(void *ctx)
{
	struct sampler *s = ctx;
	unsigned long long used;

	for (int i = 0; i < s->n; i++)
		if (gpu_memory_used(&opt.gpu, i, &used)) {
			double mb = used > s->base[i] ?
			    (double)(used - s->base[i]) / (1024.0 * 1024.0) : 0;
			if (!s->known || mb > s->peak_mb)
				s->peak_mb = mb;
			s->known = true;
		}
}

/* With a capture: both streams into the log, standard output kept too. */
static void
runner_output(void *ctx, int stream, const char *p, size_t n)
{
	struct sampler *s = ctx;

	if (n == 0)
		return;
	if (stream == 0)
		buf_add(s->capture, p, n);
	if (s->logfd >= 0 && fd_write_all(s->logfd, p, n) != 0) {
		close(s->logfd);
		s->logfd = -1;
	}
}

/* One measured run, whatever reported it. */
struct measured {
	double seconds;
	cJSON *peak;			/* a number node; NULL when not known */
	double comp[COMP_COUNT];
	bool has[COMP_COUNT];
};

/*
 * Runs the runner once; capture, when not NULL, gets its standard output
 * (which then also goes to the log, unrotated). -1 after reporting a
 * failure.
 */
static int
execute(char **argv, char **env, const char *log, long count, const char *id,
    struct measured *m, buf *capture)
{
	struct sampler smp;
	struct proc_spec spec;
	struct proc_result res;
	char how[128], *dir;
	buf tail = BUF_INIT;
	int rc;

	memset(&smp, 0, sizeof smp);
	memset(m, 0, sizeof *m);
	smp.n = opt.gpu.nvml && count <= opt.gpu.count ? (int)count : 0;
	for (int i = 0; i < smp.n; i++)
		gpu_memory_used(&opt.gpu, i, &smp.base[i]);
	memset(&spec, 0, sizeof spec);
	spec.argv = argv;
	spec.env = env;
	spec.timeout = opt.timeout;
	spec.interval = opt.sample;
	spec.sample = smp.n > 0 ? sample_gpu : NULL;
	spec.ctx = &smp;
	smp.logfd = -1;
	if (capture != NULL) {
		dir = estrdup(log);
		*strrchr(dir, '/') = '\0';
		atomic_mkdirs(dir);
		free(dir);
		smp.capture = capture;
		smp.logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		spec.output = runner_output;
	} else {
		spec.log = log;
		spec.rotate_bytes = LOG_ROTATE;
	}
	rc = proc_run(&spec, &res);
	if (smp.logfd >= 0)
		close(smp.logfd);
	if (rc != 0) {
		warn("%s: cannot run %s", id, argv[0]);
		return -1;
	}
	if (res.interrupted || res.timed_out || !WIFEXITED(res.status) ||
	    WEXITSTATUS(res.status) != 0) {
		proc_describe(&res, how, sizeof how);
		warnx("%s: the runner %s", id, how);
		logtail_block(&tail, id, log);
		fprintf(stderr, "%s\n", tail.s);
		buf_free(&tail);
		return -1;
	}
	m->seconds = res.seconds;
	/* GPU memory when the device says, else the process's own peak. */
	m->peak = json_new_float(smp.known ? smp.peak_mb : (double)res.maxrss_kb / 1024.0);
	return 0;
}

/* The environment of the runner (perf-collect(1) lists it), pushed onto env. */
static void
runner_env(const struct bench *b, const struct plan *p, const char *events,
    const char *log, struct strvec *env)
{
	strvec_pushf(env, "PERF_CONFIG=%s", b->path);
	strvec_pushf(env, "PERF_EVENTS=%s", events);
	strvec_pushf(env, "PERF_WORKER_LOG=%s", log);
	strvec_pushf(env, "PERF_NUM_WARMUP_RUNS=%ld", p->warmup);
	strvec_pushf(env, "PERF_NUM_MEASUREMENT_RUNS=%ld", p->measure);
	strvec_pushf(env, "PERF_NUM_GPUS=%ld", p->count);
	/* The reference forces stage logging for the run only. */
	strvec_push(env, "FASTVIDEO_STAGE_LOGGING=1");
	strvec_push(env, "PERF_STAGE_LOGGING=1");
}

/*
 * The measured runs the runner reported itself, appended to *ms (ev is
 * freed). -1 after reporting invalid lines or too few runs.
 */
static int
event_runs(const struct bench *b, const struct plan *p, struct events *ev,
    struct measured **ms, size_t *n)
{
	long bad;

	for (size_t i = 0; i < ev->nruns; i++) {
		struct measured *m;

		if (ev->runs[i].warmup)
			continue;
		*ms = erealloc(*ms, (*n + 1) * sizeof **ms);
		m = &(*ms)[(*n)++];
		m->seconds = ev->runs[i].seconds;
		m->peak = ev->runs[i].peak;
		ev->runs[i].peak = NULL;
		memcpy(m->comp, ev->runs[i].comp, sizeof m->comp);
		memcpy(m->has, ev->runs[i].has_comp, sizeof m->has);
	}
	bad = ev->bad;
	events_free(ev);
	if (bad > 0) {
		warnx("%s: %s: the runner wrote %ld invalid event line%s", p->id,
		    b->path, bad, bad == 1 ? "" : "s");
		return -1;
	}
	if ((long)*n < p->measure) {
		warnx("%s: %s: the runner reported %zu valid measured run%s, "
		    "%ld configured", p->id, b->path, *n, *n == 1 ? "" : "s", p->measure);
		return -1;
	}
	return 0;
}

/*
 * Runs a benchmark: once, and when the runner reports its own runs that
 * is all; otherwise warm-up + measurement times, timed here. Fills the
 * measured runs, the runtime event and the named metrics of metric events
 * (NULL for none). -1 after reporting a failure.
 */
static int
measure(const struct bench *b, const struct plan *p, const char *log,
    struct measured **out, size_t *nout, cJSON **runtime, cJSON **named)
{
	struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
	char *err = NULL, *events, *label;
	struct events ev;
	struct measured first, *ms = NULL;
	size_t n = 0;
	long total = p->warmup + p->measure;
	int fd, rc = -1;
	const char *tmp = getenv("TMPDIR");

	*runtime = NULL;
	*named = NULL;
	if (runner_argv(b, p->id, &argv, &err) != 0) {
		warnx("%s", err);
		free(err);
		return -1;
	}
	events = easprintf("%s/perf-events-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
	if ((fd = mkstemp(events)) < 0) {
		warn("%s: cannot create the events file", events);
		free(events);
		strvec_clear(&argv);
		return -1;
	}
	close(fd);
	runner_env(b, p, events, log, &env);

	if (execute(argv.v, env.v, log, p->count, p->id, &first, NULL) != 0)
		goto done;
	label = easprintf("%s: PERF_EVENTS", p->id);
	events_read(events, label, &ev);
	free(label);
	*runtime = ev.runtime;
	ev.runtime = NULL;
	*named = ev.named;
	ev.named = NULL;
	if (ev.lines > 0) {
		/* The runner reports its own runs: all of them, all valid. */
		cJSON_Delete(first.peak);
		if (event_runs(b, p, &ev, &ms, &n) != 0)
			goto done;
	} else {
		/* No events at all: timed here, that was run 1 of warm-up + measurement. */
		events_free(&ev);
		ms = emalloc((size_t)(total > 0 ? total : 1) * sizeof *ms);
		ms[n++] = first;
		while ((long)n < total) {
			if (execute(argv.v, env.v, log, p->count, p->id, &ms[n], NULL) != 0)
				goto done;
			n++;
		}
		for (long w = 0; w < p->warmup && w < (long)n; w++)
			cJSON_Delete(ms[w].peak);
		memmove(ms, ms + p->warmup, (n - (size_t)p->warmup) * sizeof *ms);
		n -= (size_t)p->warmup;
	}
	if (n == 0) {
		warnx("%s: Cannot build a performance result record without measurement "
		    "runs", p->id);
		goto done;
	}
	rc = 0;
done:
	if (rc != 0) {
		for (size_t i = 0; i < n; i++)
			cJSON_Delete(ms[i].peak);
		free(ms);
		ms = NULL;
		n = 0;
	}
	*out = ms;
	*nout = n;
	unlink(events);
	free(events);
	strvec_clear(&env);
	strvec_clear(&argv);
	return rc;
}

/*
 * Python's round(v, nd) of a reported number, keeping an integer an
 * integer; null for a value nobody measured.
 */
static cJSON *
round_number(const cJSON *v, int nd)
{
	if (v == NULL)
		return json_new_null();
	if (json_is_int(v))
		return cJSON_Duplicate(v, true);
	return json_new_float(num_round(v->valuedouble, nd));
}

static cJSON *
str_or_empty(const char *s)
{
	return json_new_string(s != NULL ? s : "");
}

/* The raw record, its keys in the reference's order. */
static cJSON *
build_record(const struct bench *b, const struct plan *p, const char *log,
    const struct measured *ms, size_t n, const cJSON *runtime, const cJSON *named,
    char **err)
{
	const cJSON *cfg = b->cfg, *model = json_get(cfg, "model"), *v, *peak = NULL;
	cJSON *rec = json_new_object(), *arr;
	double sum = 0, avg, frames, best = 0;
	char ts[40];
	size_t i;
	int c;

	json_set(rec, "benchmark_id", cJSON_Duplicate(json_get(cfg, "benchmark_id"), true));
	if (config_is_v2(cfg))
		json_set(rec, "result_schema_version", json_new_int(2));
	v = json_get(model, "model_short_name");
	json_set(rec, "model_short_name", v != NULL ? cJSON_Duplicate(v, true) :
	    json_new_string(""));
	json_set(rec, "device", json_new_string(gpu_device_name(&opt.gpu)));
	json_set(rec, "num_gpus", json_new_int(p->count));
	json_set(rec, "num_warmup_runs", json_new_int(p->warmup));
	json_set(rec, "num_measurement_runs", json_new_int(p->measure));
	for (i = 0; i < n; i++)
		sum += ms[i].seconds;
	avg = sum / (double)n;
	json_set(rec, "avg_generation_time_s", json_new_float(num_round(avg, 3)));
	arr = json_new_array();
	for (i = 0; i < n; i++)
		json_append(arr, json_new_float(num_round(ms[i].seconds, 3)));
	json_set(rec, "individual_times_s", arr);
	/* num_frames / avg, or runs per second; a boolean counts as a number. */
	v = json_get(json_get(cfg, "generation_kwargs"), "num_frames");
	frames = 1.0;
	if (cJSON_IsNumber(v))
		frames = v->valuedouble;
	else if (cJSON_IsBool(v))
		frames = cJSON_IsTrue(v) ? 1.0 : 0.0;
	json_set(rec, "throughput_fps", avg > 0 ?
	    json_new_float(num_round(frames / avg, 3)) : json_new_null());
	/* max() keeps the first of equal values, and its type; runs without a peak do not count. */
	for (i = 0; i < n; i++) {
		if (ms[i].peak == NULL)
			continue;
		if (peak == NULL || ms[i].peak->valuedouble > best) {
			best = ms[i].peak->valuedouble;
			peak = ms[i].peak;
		}
	}
	json_set(rec, "max_peak_memory_mb", round_number(peak, 1));
	arr = json_new_array();
	for (i = 0; i < n; i++)
		json_append(arr, round_number(ms[i].peak, 1));
	json_set(rec, "individual_peak_memories_mb", arr);
	json_set(rec, "thresholds", cJSON_Duplicate(p->thresholds, true));
	json_set(rec, "worker_log_path", json_new_string(log));
	v = json_get(cfg, "regression_thresholds");
	json_set(rec, "regression_thresholds", v != NULL ? cJSON_Duplicate(v, true) :
	    json_new_object());
	json_set(rec, "commit", str_or_empty(opt.env.commit));
	json_set(rec, "run_source", json_new_string(provenance_infer_run_source(&opt.env, false)));
	json_set(rec, "branch", str_or_empty(opt.env.branch));
	json_set(rec, "pr_number", str_or_empty(provenance_pr_truthy(opt.env.pull_request) ?
	    opt.env.pull_request : NULL));
	json_set(rec, "test_scope", str_or_empty(opt.env.test_scope));
	json_set(rec, "build_url", str_or_empty(opt.env.build_url));
	json_set(rec, "build_id", str_or_empty(opt.env.build_id));
	json_set(rec, "job_id", str_or_empty(opt.env.job_id));
	json_set(rec, "timestamp", json_new_string(isotime_format(ts, isotime_now())));
	for (c = 0; c < 2; c++) {
		const char *k = c == 0 ? "quality_metadata" : "variant_metadata";
		if ((v = json_get(cfg, k)) != NULL && !cJSON_IsNull(v))
			json_set(rec, k, cJSON_Duplicate(v, true));
	}
	for (c = 0; c < COMP_COUNT; c++) {
		double csum = 0;
		size_t cn = 0;
		for (i = 0; i < n; i++)
			if (ms[i].has[c]) {
				csum += ms[i].comp[c];
				cn++;
			}
		json_set(rec, events_component_keys[c], cn > 0 ?
		    json_new_float(num_round(csum / (double)cn, 3)) : json_new_null());
	}
	/* The runner's metric events (issue 24); none: no key, as the reference. */
	if (named != NULL)
		json_set(rec, "metrics", cJSON_Duplicate(named, true));
	if (config_is_v2(cfg) && add_identity(rec, b, p->count, runtime, err) != 0) {
		cJSON_Delete(rec);
		return NULL;
	}
	return rec;
}

/*
 * Adds path to the --written list, when there is one, and when the file (or,
 * for a worker log, its rotated part) exists.
 */
static void
note_written(const char *path, bool log)
{
	char *rotated;
	bool there;

	if (opt.written_fp == NULL)
		return;
	there = access(path, F_OK) == 0;
	if (!there && log) {
		rotated = easprintf("%s.1", path);
		there = access(rotated, F_OK) == 0;
		free(rotated);
	}
	if (there && (fprintf(opt.written_fp, "%s\n", path) < 0 || fflush(opt.written_fp) != 0))
		opt.written_failed = true;
}

/* "YYYYmmddTHHMMSSZ" of now, UTC. */
static void
stamp(char out[20])
{
	int y, mo, d, h, mi, s, us;

	isotime_fields(isotime_now(), &y, &mo, &d, &h, &mi, &s, &us);
	snprintf(out, 20, "%04d%02d%02dT%02d%02d%02dZ", y, mo, d, h, mi, s);
}

/*
 * Writes rec as perf_<id>_<stamp>.json in the results directory and on
 * stdout. 0, or -2 when the file cannot be written.
 */
static int
write_record(const cJSON *rec, const char *id)
{
	char ts[20], *safe = text_sanitize(id), *path;
	buf text = BUF_INIT;
	int rc = 0;

	stamp(ts);
	path = easprintf("%s/perf_%s_%s.json", opt.results, safe, ts);
	free(safe);
	if (json_write(&text, rec, JSON_INDENT2, NULL) != 0) {
		warnx("%s: the record holds a number that is not finite", id);
		rc = -1;
	} else if (atomic_write_file(path, text.s, text.len) != 0) {
		warn("%s: cannot write", path);
		rc = -2;
	} else {
		note_written(path, false);
		if (jsonl_emit(stdout, rec, NULL) != 0)
			rc = -1;
		fflush(stdout);
	}
	buf_free(&text);
	free(path);
	return rc;
}

/* The file's identity before a run, to tell a fresh output from a stale one. */
static bool
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/*
 * A config whose run_config.output names a tool's format: the command
 * runs once (as any runner: its time limit, worker log, environment, with
 * PERF_OUTPUT naming the file and "{output}" in its arguments replaced by
 * it), then what it wrote is imported, one record per benchmark. 0, -1
 * (it failed, or one of its benchmarks did), -2 (a record not written).
 */
static int
run_tool(const struct bench *b, const struct plan *p)
{
	char *err = NULL, *events, *safe, *log, ts[20], *label;
	const char *tmp = getenv("TMPDIR");
	struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
	struct measured m;
	struct import_suite s;
	struct import_identity id;
	struct stat before, after;
	buf out = BUF_INIT;
	bool existed;
	const cJSON *v;
	char *ov[2] = { NULL, NULL };
	int fd, rc = -1, i;

	if (runner_argv(b, p->id, &argv, &err) != 0) {
		warnx("%s", err);
		free(err);
		return -1;
	}
	/* The tool gets its own arguments, not the config's path (the last). */
	free(argv.v[--argv.n]);
	argv.v[argv.n] = NULL;
	for (size_t k = 0; k < argv.n; k++) {
		char *at;
		while (p->out_file != NULL && (at = strstr(argv.v[k], "{output}")) != NULL) {
			char *x = easprintf("%.*s%s%s", (int)(at - argv.v[k]), argv.v[k],
			    p->out_file, at + 8);
			free(argv.v[k]);
			argv.v[k] = x;
		}
	}
	events = easprintf("%s/perf-events-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
	if ((fd = mkstemp(events)) >= 0)
		close(fd);
	safe = text_sanitize(p->id);
	stamp(ts);
	log = easprintf("%s/worker_logs/worker_%s_%s.log", opt.results, safe, ts);
	free(safe);
	runner_env(b, p, events, log, &env);
	strvec_pushf(&env, "PERF_OUTPUT=%s", p->out_file != NULL ? p->out_file : "");
	existed = p->out_file != NULL && stat(p->out_file, &before) == 0;
	if (p->out_file != NULL) {
		char *dir = estrdup(p->out_file);
		*strrchr(dir, '/') = '\0';
		atomic_mkdirs(dir);
		free(dir);
	}
	if (fd < 0 || execute(argv.v, env.v, log, p->count, p->id, &m,
	    p->out_file == NULL ? &out : NULL) != 0) {
		note_written(log, true);
		goto done;
	}
	note_written(log, true);
	cJSON_Delete(m.peak);
	if (p->out_file != NULL) {
		if (stat(p->out_file, &after) != 0 || (existed && same_file(&before, &after))) {
			warnx("%s: the command wrote no %s", p->id, p->out_file);
			goto done;
		}
		if (import_read(p->format, p->out_file, p->out_file, &s) != 0)
			goto done;
	} else {
		label = easprintf("%s: standard output", p->id);
		i = import_text(p->format, NULL, out.s, out.len, label, &s);
		free(label);
		if (i != 0)
			goto done;
	}
	memset(&id, 0, sizeof id);
	import_provenance(&id, &opt.env);
	id.device = gpu_device_name(&opt.gpu);
	id.hardware = import_hardware_profile(&opt.gpu, p->count);
	id.thresholds = p->thresholds;
	id.regression_thresholds = json_get(b->cfg, "regression_thresholds");
	id.worker_log = log;
	if ((v = json_get(b->cfg, "benchmark_version")) != NULL && cJSON_IsNumber(v))
		id.benchmark_version = (cJSON *)v;
	if (cJSON_IsString(v = json_get(b->cfg, "workload_id"))) {
		ov[0] = easprintf("workload_id=%s", v->valuestring);
		id.overrides = (const char *const *)ov;
	}
	rc = import_report_failures(&s, p->id) > 0 ? -1 : 0;
	for (size_t k = 0; k < s.nb; k++) {
		cJSON *rec = import_record(&s, &s.b[k], &id);
		int w = write_record(rec, json_str(rec, "benchmark_id"));

		cJSON_Delete(rec);
		if (w == -2)
			rc = -2;
		else if (w != 0 && rc == 0)
			rc = -1;
	}
	cJSON_Delete(id.hardware);
	free(ov[0]);
	import_suite_free(&s);
done:
	unlink(events);
	free(events);
	strvec_clear(&env);
	strvec_clear(&argv);
	buf_free(&out);
	free(log);
	return rc;
}

/*
 * Runs one benchmark. 0: a record; 1: skipped; -1: it failed; -2: its record
 * could not be written (each reported).
 */
static int
run_benchmark(const struct bench *b)
{
	struct plan p;
	struct measured *ms = NULL;
	size_t n = 0;
	cJSON *rec = NULL, *runtime = NULL, *named = NULL;
	char ts[20], *safe, *log = NULL, *path = NULL, *err = NULL;
	buf text = BUF_INIT;
	bool measured;
	int rc = -1;

	make_plan(b, &p);
	if (p.error != NULL) {
		warnx("%s", p.error);
		goto done;
	}
	if (p.skip != NULL) {
		warnx("%s: skipped: %s", p.id, p.skip);
		rc = 1;
		goto done;
	}
	if (p.format != NULL) {
		rc = run_tool(b, &p);
		goto done;
	}
	safe = text_sanitize(p.id);
	stamp(ts);
	log = easprintf("%s/worker_logs/worker_%s_%s.log", opt.results, safe, ts);
	free(safe);
	measured = measure(b, &p, log, &ms, &n, &runtime, &named) == 0;
	note_written(log, true);	/* a failed run's log too */
	if (!measured)
		goto done;
	if ((rec = build_record(b, &p, log, ms, n, runtime, named, &err)) == NULL) {
		warnx("%s: %s", p.id, err);
		goto done;
	}
	safe = text_sanitize(p.id);
	stamp(ts);
	path = easprintf("%s/perf_%s_%s.json", opt.results, safe, ts);
	free(safe);
	if (json_write(&text, rec, JSON_INDENT2, NULL) != 0) {
		warnx("%s: the record holds a number that is not finite", p.id);
		goto done;
	}
	if (atomic_write_file(path, text.s, text.len) != 0) {
		warn("%s: cannot write", path);
		rc = -2;	/* perf-collect failed, not the benchmark */
		goto done;
	}
	note_written(path, false);
	if (jsonl_emit(stdout, rec, NULL) != 0)
		goto done;
	fflush(stdout);
	rc = 0;
done:
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(ms[i].peak);
	free(ms);
	cJSON_Delete(rec);
	cJSON_Delete(runtime);
	cJSON_Delete(named);
	buf_free(&text);
	free(err);
	free(log);
	free(path);
	free_plan(&p);
	return rc;
}

/* --plan: one line per config saying what would happen here. */
static int
print_plan(const struct bench *b)
{
	struct plan p;
	cJSON *o = json_new_object(), *recipe, *hw;
	char hex[SHA256_HEX], *err = NULL;
	int rc = 0;

	make_plan(b, &p);
	json_set(o, "benchmark_id", cJSON_Duplicate(json_get(b->cfg, "benchmark_id"), true));
	json_set(o, "config", json_new_string(b->path));
	json_set(o, "action", json_new_string(p.error ? "error" : p.skip ? "skip" : "run"));
	json_set(o, "reason", p.error ? json_new_string(p.error) :
	    p.skip ? json_new_string(p.skip) : json_new_null());
	json_set(o, "device", json_new_string(gpu_device_name(&opt.gpu)));
	json_set(o, "num_gpus", p.count > 0 ? json_new_int(p.count) : json_new_null());
	/* Shown for skipped benchmarks too: what this GPU would be held to. */
	if (p.thresholds == NULL)
		p.thresholds = config_thresholds(b->cfg, gpu_device_name(&opt.gpu), &err);
	free(err);
	err = NULL;
	json_set(o, "thresholds", p.thresholds != NULL ?
	    cJSON_Duplicate(p.thresholds, true) : json_new_null());
	recipe = config_is_v2(b->cfg) && p.count > 0 ?
	    recipe_build(b->cfg, p.count, NULL, &err) : NULL;
	if (recipe != NULL && recipe_fingerprint(recipe, hex) == 0) {
		json_set(o, "recipe", recipe);
		json_set(o, "recipe_fingerprint", json_new_string(hex));
	} else {
		cJSON_Delete(recipe);
		json_set(o, "recipe", json_new_null());
		json_set(o, "recipe_fingerprint", json_new_null());
	}
	hw = import_hardware_profile(&opt.gpu, p.count > 0 ? p.count : 1);
	json_set(o, "hardware_profile", hw);
	json_set(o, "hardware_profile_id", recipe_profile_id(hw, "hw-"));
	if (jsonl_emit(stdout, o, NULL) != 0)
		rc = -1;
	if (p.error != NULL)
		rc = -1;
	free(err);
	cJSON_Delete(o);
	free_plan(&p);
	return rc;
}

/* --telemetry: samples every interval until stopped. */
static int
telemetry(void)
{
	struct stat st;
	FILE *fp;
	buf line = BUF_INIT;
	struct timespec ts;

	gpu_open(&opt.gpu);
	if (!opt.gpu.nvml) {
		warnx("--telemetry: NVML is not available (no NVIDIA driver here)");
		return EXIT_TROUBLE;
	}
	if ((fp = fopen(opt.telemetry, "a")) == NULL) {
		warn("%s", opt.telemetry);
		return EXIT_TROUBLE;
	}
	if (fstat(fileno(fp), &st) == 0 && st.st_size == 0)
		fputs(gpu_telemetry_header, fp);
	proc_handle_signals();
	while (proc_stop_signal() == 0) {
		buf_reset(&line);
		gpu_telemetry(&opt.gpu, &line);
		if (fwrite(line.s, 1, line.len, fp) != line.len || fflush(fp) != 0) {
			warn("%s", opt.telemetry);
			fclose(fp);
			return EXIT_TROUBLE;
		}
		ts.tv_sec = (time_t)opt.interval;
		ts.tv_nsec = (long)((opt.interval - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);	/* a signal ends the sleep early */
	}
	buf_free(&line);
	gpu_close(&opt.gpu);
	return fclose(fp) == 0 ? EXIT_PASS : EXIT_TROUBLE;
}

/*
 * The results directory must take files before anything runs: makes its
 * worker_logs and probes it with a file made and removed. 0, or -1 after
 * saying why.
 */
static int
results_ready(void)
{
	char *logs = easprintf("%s/worker_logs", opt.results), *probe;
	int fd;

	if (atomic_mkdirs(logs) != 0) {
		warn("%s: cannot create", logs);
		free(logs);
		return -1;
	}
	probe = easprintf("%s/.perf-collect-XXXXXX", opt.results);
	if ((fd = mkstemp(probe)) < 0) {
		warn("%s: cannot write", opt.results);
		free(probe);
		free(logs);
		return -1;
	}
	close(fd);
	unlink(probe);
	free(probe);
	free(logs);
	return 0;
}

static double
seconds_opt(const char *name, const char *s, double min)
{
	return cli_double(opt_text(&option_table), name, s, min, 1e9, "a number of seconds");
}

/* The configs given (or the default directory), read and checked. */
struct configs {
	char **paths;
	struct bench *b;
	size_t n;
	int bad;		/* how many are not valid */
};

/* Finds and reads the configs. -1 after saying why nothing can run. */
static int
read_configs(int argc, char **argv, struct configs *cf)
{
	if (argc == 0 && add_configs(opt.configs, &cf->paths, &cf->n) != 0)
		return -1;
	for (int i = 0; i < argc; i++)
		if (add_configs(argv[i], &cf->paths, &cf->n) != 0)
			return -1;
	if (cf->n == 0) {
		warnx("no benchmark configs (*.json) found");
		return -1;
	}
	qsort(cf->paths, cf->n, sizeof *cf->paths, text_cmp_ptr);
	cf->bad = load_configs(cf->paths, cf->n, &cf->b);
	return 0;
}

static void
free_configs(struct configs *cf)
{
	for (size_t i = 0; i < cf->n; i++) {
		if (cf->b != NULL)
			cJSON_Delete(cf->b[i].cfg);
		free(cf->paths[i]);
	}
	free(cf->b);
	free(cf->paths);
}

/* --check: path, id and schema of each valid config. */
static int
mode_check(const struct configs *cf)
{
	for (size_t i = 0; i < cf->n; i++)
		if (cf->b[i].valid) {
			char *id = config_display_id(cf->b[i].cfg);

			printf("%s\t%s\t%s\n", cf->b[i].path, id, config_is_v2(cf->b[i].cfg) ?
			    "v2" : "v1");
			free(id);
		}
	return cf->bad ? EXIT_TROUBLE : EXIT_PASS;
}

/* --plan: what would happen to each config here. */
static int
mode_plan(const struct configs *cf)
{
	bool failed = false;

	if (cf->bad)
		return EXIT_TROUBLE;	/* like the reference: nothing runs */
	gpu_open(&opt.gpu);
	for (size_t i = 0; i < cf->n; i++)
		failed |= print_plan(&cf->b[i]) != 0;
	return failed ? EXIT_TROUBLE : EXIT_PASS;
}

/* The run: every benchmark in turn, until one of SIGINT or SIGTERM. */
static int
mode_run(const struct configs *cf)
{
	int failed = 0, trouble = 0;

	if (cf->bad || results_ready() != 0)
		return EXIT_TROUBLE;
	if (opt.written != NULL && (opt.written_fp = fopen(opt.written, "w")) == NULL) {
		warn("%s: cannot write", opt.written);
		return EXIT_TROUBLE;
	}
	gpu_open(&opt.gpu);
	proc_handle_signals();
	for (size_t i = 0; i < cf->n && proc_stop_signal() == 0; i++)
		switch (run_benchmark(&cf->b[i])) {
		case -2: trouble++; break;
		case -1: failed++; break;
		}
	if (opt.written_fp != NULL && (fclose(opt.written_fp) != 0 || opt.written_failed)) {
		warn("%s: cannot write", opt.written);
		trouble++;
	}
	return proc_stop_signal() != 0 || trouble ? EXIT_TROUBLE : failed ? EXIT_GATE :
	    EXIT_PASS;
}

/* --telemetry: no configs; the sampler until stopped. */
static int
mode_telemetry(const struct configs *cf)
{
	(void)cf;
	return telemetry();
}

/* The modes, one function each; configs: whether the mode reads them first. */
static const struct collect_mode {
	bool configs;
	int (*run)(const struct configs *);
} modes[] = {
	[MODE_RUN] = { true, mode_run },
	[MODE_CHECK] = { true, mode_check },
	[MODE_PLAN] = { true, mode_plan },
	[MODE_TELEMETRY] = { false, mode_telemetry },
};

/* The options into opt; returns the index of the first config argument. */
static int
parse_options(int argc, char *argv[])
{
	bool check = false, plan = false;
	const char *env;
	int c;

	provenance_env_load(&opt.env);
	opt.configs = DEFAULT_CONFIGS;
	opt.results = "results";
	opt.interval = 10;
	opt.sample = 0.1;
	opt.cpu = (env = getenv("PERF_ALLOW_CPU")) != NULL && strcmp(env, "1") == 0;
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		switch (c) {
		case 'c': opt.configs = optarg; break;
		case 'r': opt.runner = optarg; break;
		case 'o': opt.results = optarg; break;
		case 't': opt.timeout = seconds_opt("--timeout", optarg, 0.001); break;
		case 'C': check = true; break;
		case 'P': plan = true; break;
		case 'U': opt.cpu = true; break;
		case 'X': opt.strict = true; break;
		case 'W': opt.written = optarg; break;
		case 'T': opt.telemetry = optarg; break;
		case 'I': opt.interval = seconds_opt("--interval", optarg, 0.01); break;
		case 'S': opt.sample = seconds_opt("--sample-interval", optarg, 0.001); break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
	opt.mode = opt.telemetry != NULL ? MODE_TELEMETRY : check ? MODE_CHECK :
	    plan ? MODE_PLAN : MODE_RUN;
	return optind;
}

int
main(int argc, char *argv[])
{
	struct configs cf = { NULL, NULL, 0, 0 };
	const struct collect_mode *m;
	int first, rc;

	err_init(argv[0]);
	first = parse_options(argc, argv);
	m = &modes[opt.mode];
	if (!m->configs)
		return m->run(NULL);
	if (read_configs(argc - first, argv + first, &cf) != 0)
		return EXIT_TROUBLE;
	rc = m->run(&cf);
	gpu_close(&opt.gpu);
	free_configs(&cf);
	if (jsonl_finish(stdout, "standard output") != 0)
		return EXIT_TROUBLE;
	return rc;
}
