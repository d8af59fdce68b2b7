#define _GNU_SOURCE
/*
 * perf-measure: the job-side wrapper of a campaign run
 * (perf-measure(1)). It runs the
 * command, passes its output through unchanged, keeps its exit status, and
 * writes vq-benchmark-run.json in the working directory: startup is the
 * time to the first SCF iteration line, steady the rest; the total energy,
 * the gap and the SCF iteration count, and whether the run converged, read
 * from the whole output stream by the parser of the program (vibe-qc,
 * ORCA, or patterns given as options).
 */
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "campaign/campaign.h"
#include "campaign/tree_digest.h"
#include "core/atomic.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/host.h"
#include "core/json.h"
#include "core/now.h"
#include "core/num.h"
#include "core/opt.h"
#include "core/proc.h"

/* What a program's output says, as extended regular expressions. */
enum pat {
	P_ITERATION,	/* an SCF iteration line; group 1: its number (1 starts a cycle) */
	P_SCF_START,	/* a new SCF: clears the previous cycle's completion */
	P_CYCLE,	/* a new geometry cycle: clears it too */
	P_COMPLETE,	/* the final result of an SCF cycle; group 1: the energy, if any */
	P_ENERGY,	/* the total energy; group 1 */
	P_COUNT,	/* the cycle's iteration count; group 1 */
	P_GAP,		/* the gap in eV; group 1 */
	P_SCF_FAILED,	/* the SCF did not converge */
	P_OPT_FAILED,	/* the geometry optimisation did not converge */
	P_FATAL,	/* a fatal error */
	P_COUNT_OF
};

static const char *const pat_names[P_COUNT_OF] = { "iteration", "scf-start", "cycle",
    "complete", "energy", "iterations", "gap", "scf-failed", "opt-failed", "fatal" };

#define NUM "(-?[0-9]+\\.[0-9]+([eEdD][-+]?[0-9]+)?)"

/* vibe-qc's console output (perf-measure(1) shows it). */
static const char *const vibeqc[P_COUNT_OF] = {
	[P_ITERATION] = "^[[:space:]]*iter[[:space:]]+([0-9]+)[[:space:]]+-?[0-9]+\\.[0-9]+",
	[P_SCF_START] = "^SCF \\(",
	[P_CYCLE] = "^Geometry optimization cycle [0-9]+",
	[P_COMPLETE] = "^SCF converged in [0-9]+ iterations: E = " NUM,
	[P_ENERGY] = "^Total energy: " NUM,
	[P_COUNT] = "^SCF converged in ([0-9]+) iterations",
	[P_GAP] = "^HOMO-LUMO gap: " NUM " eV",
	[P_SCF_FAILED] = "^SCF did not converge",
	[P_OPT_FAILED] = "^Geometry optimization did not converge",
	[P_FATAL] = "FATAL",
};

/* ORCA 5 and 6. */
static const char *const orca[P_COUNT_OF] = {
	[P_ITERATION] = "^[[:space:]]{0,4}([0-9]+)[[:space:]]+-[0-9]+\\.[0-9]{10}[[:space:]]+-?[0-9]+\\.[0-9]{12}[[:space:]]",
	[P_SCF_START] = "^SCF ITERATIONS$",
	[P_CYCLE] = "GEOMETRY OPTIMIZATION CYCLE[[:space:]]+[0-9]+",
	[P_COMPLETE] = "^FINAL SINGLE POINT ENERGY[[:space:]]+" NUM,
	[P_ENERGY] = "^FINAL SINGLE POINT ENERGY[[:space:]]+" NUM,
	[P_COUNT] = "SCF CONVERGED AFTER[[:space:]]+([0-9]+) CYCLES",
	[P_GAP] = NULL,
	[P_SCF_FAILED] = "SCF NOT CONVERGED|This wavefunction IS NOT CONVERGED",
	[P_OPT_FAILED] = "The optimization did not converge",
	[P_FATAL] = "FATAL|error termination",
};

static struct {
	const char *program;
	const char *digest;
	const char *root;
	const char *pats[P_COUNT_OF];
	long long ranks, threads;
} opt;

/* The state of the stream, line by line. */
struct state {
	regex_t re[P_COUNT_OF];
	bool have[P_COUNT_OF];
	double start, first_iter;
	bool iterated, complete, fatal, opt_failed;
	long long iterations, count;	/* iteration lines of the last cycle; its stated count */
	long last_iter;			/* the last iteration's number */
	bool have_energy, have_gap;
	double energy, gap;
};

static const struct opt_def options[] = {
	{ 0, "program", 'p', "vibe-qc | orca | generic",
	    "the program whose output is read (see Programs)", NULL, NULL },
	{ 0, "runtime-digest", 'd', "sha256",
	    "the runtime's identity, as declared (see Runtime identity)", NULL, NULL },
	{ 0, "runtime-root", 'r', "dir", "the runtime's identity, computed from dir", NULL, NULL },
	{ 0, "mpi-ranks", 'm', "n",
	    "the layout the job ran with", "--mpi-ranks n, --threads-per-rank n", NULL },
	{ 0, "threads-per-rank", 't', "n", NULL, NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	{ 0, "iteration", 0x100 + P_ITERATION, "re",
	    "an SCF iteration line (group 1: the iteration number)", NULL, NULL },
	{ 0, "scf-start", 0x100 + P_SCF_START, "re", "the start of an SCF cycle", NULL, NULL },
	{ 0, "cycle", 0x100 + P_CYCLE, "re",
	    "the start of a geometry optimisation cycle", NULL, NULL },
	{ 0, "complete", 0x100 + P_COMPLETE, "re",
	    "a converged SCF cycle's result (group 1: the energy)", NULL, NULL },
	{ 0, "energy", 0x100 + P_ENERGY, "re", "the total energy (group 1)", NULL, NULL },
	{ 0, "iterations", 0x100 + P_COUNT, "re",
	    "the stated iteration count of a cycle (group 1)", NULL, NULL },
	{ 0, "gap", 0x100 + P_GAP, "re", "the HOMO-LUMO gap in eV (group 1)", NULL, NULL },
	{ 0, "scf-failed", 0x100 + P_SCF_FAILED, "re", "an SCF that did not converge", NULL, NULL },
	{ 0, "opt-failed", 0x100 + P_OPT_FAILED, "re",
	    "a geometry optimisation that did not converge", NULL, NULL },
	{ 0, "fatal", 0x100 + P_FATAL, "re", "a fatal error", NULL, NULL },
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-measure [--program vibe-qc|orca|generic] {--runtime-digest sha256 |\n"
	    "                    --runtime-root dir} [--mpi-ranks n] [--threads-per-rank n]\n"
	    "                    [--iteration re] [--scf-start re] [--cycle re] [--complete re]\n"
	    "                    [--energy re] [--iterations re] [--gap re] [--scf-failed re]\n"
	    "                    [--opt-failed re] [--fatal re] -- command [arg ...]\n",
	.width = 26,
	.flags = OPT_STOP_AT_OPERAND,
	.opts = options,
	/* getopt's order before the table, for an ambiguous abbreviation's message */
	.long_order =
	    "program runtime-digest runtime-root mpi-ranks threads-per-rank "
	    "iteration scf-start cycle complete energy iterations gap scf-failed "
	    "opt-failed fatal help version",
};

/* A number as the programs print it ("1.0D-03" included). */
static bool
capture_num(const char *line, const regmatch_t *m, double *out)
{
	char t[64];
	size_t n = (size_t)(m->rm_eo - m->rm_so);

	if (m->rm_so < 0 || n == 0 || n >= sizeof t)
		return false;
	memcpy(t, line + m->rm_so, n);
	t[n] = '\0';
	for (char *p = t; *p; p++)
		if (*p == 'D' || *p == 'd')
			*p = 'e';
	return num_py_float(t, out);
}

static bool
match(struct state *s, enum pat p, const char *line, regmatch_t *m)
{
	return s->have[p] && regexec(&s->re[p], line, 3, m, 0) == 0;
}

/* A new cycle: what an earlier one completed no longer counts. */
static void
new_cycle(struct state *s)
{
	s->complete = false;
	s->iterations = 0;
	s->count = -1;
	s->last_iter = -1;
}

static void
scan_line(struct state *s, const char *line)
{
	regmatch_t m[3];
	double v;

	if (match(s, P_FATAL, line, m))
		s->fatal = true;
	if (match(s, P_OPT_FAILED, line, m))
		s->opt_failed = true;
	if (match(s, P_SCF_START, line, m) || match(s, P_CYCLE, line, m))
		new_cycle(s);
	if (match(s, P_ITERATION, line, m)) {
		long n = m[1].rm_so >= 0 ? strtol(line + m[1].rm_so, NULL, 10) : s->last_iter + 1;

		/* Iteration 1 again (numbering that starts over) is a new cycle. */
		if (s->iterations > 0 && n <= s->last_iter && n <= 1)
			new_cycle(s);
		s->last_iter = n;
		if (!s->iterated) {
			s->iterated = true;
			s->first_iter = now_monotonic();
		}
		s->iterations++;
	}
	if (match(s, P_SCF_FAILED, line, m))
		s->complete = false;
	if (match(s, P_COUNT, line, m) && m[1].rm_so >= 0)
		s->count = strtoll(line + m[1].rm_so, NULL, 10);
	if (match(s, P_COMPLETE, line, m)) {
		s->complete = true;
		if (capture_num(line, &m[1], &v)) {
			s->energy = v;
			s->have_energy = true;
		}
	}
	if (match(s, P_ENERGY, line, m) && capture_num(line, &m[1], &v)) {
		s->energy = v;
		s->have_energy = true;
	}
	if (match(s, P_GAP, line, m) && capture_num(line, &m[1], &v)) {
		s->gap = v;
		s->have_gap = true;
	}
}

/* The output of the command's streams, scanned line by line. */
struct scan {
	struct state *s;
	buf line[2];		/* the partial last line of stdout and of stderr */
};

/* A chunk of stdout (stream 0) or stderr (1); n == 0 at its end. */
static void
feed(void *ctx, int stream, const char *p, size_t n)
{
	struct scan *sc = ctx;
	buf *line = &sc->line[stream];

	if (n == 0 && line->len > 0)
		scan_line(sc->s, line->s);
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			if (line->len > 0 && line->s[line->len - 1] == '\r')
				line->s[--line->len] = '\0';
			scan_line(sc->s, line->s);
			buf_reset(line);
		} else if (line->len < 1 << 20)
			buf_addc(line, p[i]);
	}
}

/*
 * Runs argv with its output passed through and scanned; returns its wait
 * status. It stays in our process group, so that whatever stops us (a
 * terminal's ^C, a supervisor killing our group) stops it too.
 */
static int
run(struct state *s, char **argv)
{
	struct scan sc = { s, { BUF_INIT, BUF_INIT } };
	struct proc_spec spec = { 0 };
	struct proc_result res;

	spec.argv = argv;
	spec.exec_error = "perf-measure: ";
	spec.same_group = true;
	spec.keep_stdin = true;
	spec.tee_fd[0] = STDOUT_FILENO;
	spec.tee_fd[1] = STDERR_FILENO;
	spec.output = feed;
	spec.ctx = &sc;
	s->start = now_monotonic();
	if (proc_run(&spec, &res) != 0)
		die_errno("cannot start %s", argv[0]);
	buf_free(&sc.line[0]);
	buf_free(&sc.line[1]);
	return res.status;
}

/* Frees the compiled patterns. */
static void
free_patterns(struct state *s)
{
	for (int p = 0; p < P_COUNT_OF; p++)
		if (s->have[p]) {
			regfree(&s->re[p]);
			s->have[p] = false;
		}
}

/* The options into opt; the patterns of --program (NULL: generic). */
static const char *const *
parse_options(int argc, char *argv[])
{
	int c;

	opt.program = "vibe-qc";
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		if (c >= 0x100 && c < 0x100 + P_COUNT_OF) {
			opt.pats[c - 0x100] = optarg;
			continue;
		}
		switch (c) {
		case 'p': opt.program = optarg; break;
		case 'd': opt.digest = optarg; break;
		case 'r': opt.root = optarg; break;
		case 'm':
		case 't':
			*(c == 'm' ? &opt.ranks : &opt.threads) = cli_long(opt_text(&option_table),
			    c == 'm' ? "--mpi-ranks" : "--threads-per-rank", optarg, 1, 1L << 20,
			    "a positive integer");
			break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
	if (optind >= argc) {
		warnx("no command to run");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	if ((opt.digest == NULL) == (opt.root == NULL)) {
		warnx("give the runtime's identity: --runtime-digest or --runtime-root, one of them");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	if (strcmp(opt.program, "vibe-qc") == 0)
		return vibeqc;
	if (strcmp(opt.program, "orca") == 0)
		return orca;
	if (strcmp(opt.program, "generic") != 0) {
		warnx("--program: vibe-qc, orca or generic, not '%s'", opt.program);
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	return NULL;
}

/* Compiles each pattern: its option, else the program's. -1 after saying why. */
static int
compile_patterns(struct state *s, const char *const *base)
{
	for (int p = 0; p < P_COUNT_OF; p++) {
		const char *re = opt.pats[p] != NULL ? opt.pats[p] : base != NULL ? base[p] : NULL;
		int e;

		if (re == NULL || *re == '\0')
			continue;
		if ((e = regcomp(&s->re[p], re, REG_EXTENDED)) != 0) {
			char msg[128];

			regerror(e, &s->re[p], msg, sizeof msg);
			warnx("--%s: %s: %s", pat_names[p], re, msg);
			free_patterns(s);
			return -1;
		}
		s->have[p] = true;
	}
	if (!s->have[P_ITERATION] || !s->have[P_COMPLETE]) {
		warnx("--program generic needs --iteration and --complete");
		free_patterns(s);
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	return 0;
}

/*
 * The runtime's identity: --runtime-digest, or the digest of the tree of
 * --runtime-root, which {runtime} in the command's arguments then names.
 * -1 after saying why.
 */
static int
runtime_identity(char **cmd, int n, char digest[SHA256_HEX])
{
	char *why = NULL;

	if (opt.root == NULL) {
		snprintf(digest, SHA256_HEX, "%s", opt.digest);
		return 0;
	}
	if (tree_digest(opt.root, digest, &why) != 0) {
		warnx("--runtime-root: %s", why);
		free(why);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char *p = strstr(cmd[i], "{runtime}");

		if (p != NULL)
			cmd[i] = easprintf("%.*s%s%s", (int)(p - cmd[i]), cmd[i], opt.root, p + 9);
	}
	return 0;
}

/* Whether --runtime-root changed during the run (said when it did). */
static bool
runtime_changed(const char *digest)
{
	char after[SHA256_HEX], *why = NULL;

	if (opt.root == NULL)
		return false;
	if (tree_digest(opt.root, after, &why) == 0 && strcmp(after, digest) == 0)
		return false;
	warnx("%s: the runtime changed during the run; no report written%s%s",
	    opt.root, why != NULL ? ": " : "", why != NULL ? why : "");
	free(why);
	return true;
}

/* The run report (perf-measure(1)): what the stream said, and how the command ended. */
static cJSON *
build_report(const struct state *s, const char *digest, int code, double end)
{
	cJSON *rep = json_new_object(), *vals;
	char cpu[512];

	json_set(rep, "schema_name", json_new_string("vq.benchmark-run-report/1"));
	json_set(rep, "runtime_digest", json_new_string(digest));
	json_set(rep, "converged", json_new_bool(s->iterated && s->complete && !s->fatal &&
	    !s->opt_failed && code == 0));
	json_set(rep, "steady_seconds", json_new_float(end - (s->iterated ? s->first_iter :
	    s->start)));
	json_set(rep, "startup_seconds", s->iterated ? json_new_float(s->first_iter - s->start) :
	    json_new_null());
	json_set(rep, "scf_iterations", s->iterated ? json_new_int(s->count >= 0 ? s->count :
	    s->iterations) : json_new_null());
	vals = json_new_object();
	if (s->have_energy)
		json_set(vals, "total_energy", json_new_float(s->energy));
	if (s->have_gap)
		json_set(vals, "gap_ev", json_new_float(s->gap));
	json_set(rep, "values", vals);
	if (host_cpu_model(cpu, sizeof cpu))
		json_set(rep, "cpu_model", json_new_string(cpu));
	if (opt.ranks > 0)
		json_set(rep, "mpi_ranks", json_new_int(opt.ranks));
	if (opt.threads > 0)
		json_set(rep, "threads_per_rank", json_new_int(opt.threads));
	return rep;
}

/* Writes the run report; the exit status: code, or 2 when it could not be written. */
static int
write_report(const cJSON *rep, int code)
{
	buf text = BUF_INIT;

	json_write(&text, rep, JSON_INDENT2, NULL);
	buf_addc(&text, '\n');
	if (atomic_write_file(CAMPAIGN_RUN_REPORT, text.s, text.len) != 0) {
		warn("%s: cannot write", CAMPAIGN_RUN_REPORT);
		if (code == 0)
			code = EXIT_TROUBLE;
	}
	buf_free(&text);
	return code;
}

int
main(int argc, char *argv[])
{
	const char *const *base;
	char digest[SHA256_HEX] = "";
	struct state s;
	cJSON *rep;
	int status, code;
	double end;

	err_init(argv[0]);
	base = parse_options(argc, argv);
	memset(&s, 0, sizeof s);
	s.count = -1;
	if (compile_patterns(&s, base) != 0)
		return EXIT_TROUBLE;
	if (runtime_identity(argv + optind, argc - optind, digest) != 0) {
		free_patterns(&s);
		return EXIT_TROUBLE;
	}
	signal(SIGPIPE, SIG_IGN);
	status = run(&s, argv + optind);
	end = now_monotonic();
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (runtime_changed(digest)) {
		free_patterns(&s);
		return code != 0 ? code : EXIT_TROUBLE;
	}
	rep = build_report(&s, digest, code, end);
	code = write_report(rep, code);
	cJSON_Delete(rep);
	free_patterns(&s);
	return code;
}
