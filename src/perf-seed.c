/*
 * perf-seed: the reviewed path from a CALIBRATION_NEEDED artifact to a
 * baseline (perf-seed(1)).
 *
 *   perf-seed prepare: validates the source artifacts, checks the store
 *     and the staging root hold no baseline for their identity, checks the
 *     batch is consistent, and stages the seeds and a digest-protected
 *     manifest in an atomic reservation. Nothing is written to the store.
 *   perf-seed reseed: FastVideo's reviewed baseline shift of a cohort that
 *     has a baseline: validates REGRESSION or PASS scheduled-main
 *     artifacts and their batch, prints the old, batch and candidate
 *     medians, and stages one reseed record per source and a manifest
 *     bound to the store's revision. Nothing is written to the store.
 *   perf-seed upload MANIFEST --confirm: checks everything again (digests,
 *     reservation, each seed re-derived from its source, the store at its
 *     current revision) and adds all seeds as one revision of the store,
 *     a compare-and-swap: a store that moved meanwhile refuses it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/canon.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/git.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/num.h"
#include "core/opt.h"
#include "core/path.h"
#include "core/stats.h"
#include "core/text.h"
#include "core/unit.h"
#include "lane/decision.h"
#include "lane/identity.h"
#include "lane/named_metric.h"
#include "lane/policy.h"
#include "lane/seed.h"
#include "lane/store/git_store.h"
#include "lane/store/read.h"
#include "lane/store/sparse.h"
#include "lane/store/store_opts.h"
#include "lane/store/write.h"

#define RESERVATIONS ".seed-reservations"
#define RESEED_RESERVATIONS ".reseed-reservations"
#define RESEED_OPERATION "baseline_reseed"
#define DECISION_RESERVATIONS ".decision-reservations"
#define DECISION_OPERATION "decision"
#define WINDOW 5	/* the rolling baseline's last records */

static struct {
	struct store_opts store;	/* -s, --cache */
	const char *staging;
	const char *rationale;
	const char *operator;
	char **sources;
	int nsources;
	double max_regression;
	const char *reason;	/* of a decision */
	const char *by;
	const char *link;
	const char *change;	/* a perf-changes line's file, "-" for stdin */
	const char *decision;	/* the decision a revert undoes */
	bool metric[METRIC_COUNT];
	char **names;		/* --metric: named metrics (a name or "<benchmark>/<name>") */
	int nnames;
	bool any_metric;
	bool json;
	bool now_given;
	int64_t now;
	bool confirm;
} opt;

/* A source artifact, or a prepared record. */
struct doc {
	const char *arg;	/* as named */
	char *real;		/* its real path */
	buf bytes;
	cJSON *rec;
	struct identity id;
};

static const struct opt_def options[] = {
	{ 0, "source-result", 'S', "file",
	    "a normalized artifact: CALIBRATION_NEEDED (prepare), REGRESSION\n"
	    "or PASS (reseed), the first run at a new level (accept)", NULL, NULL },
	{ 0, "intent-rationale", 'R', "text", "why this baseline is right", NULL, NULL },
	{ 0, "operator", 'O', "name", "who approved it", NULL, NULL },
	{ 0, "staging-root", 'G', "dir", "where prepared seeds wait for review", NULL, NULL },
	{ 0, "max-intra-batch-regression", 'M', "f",
	    "the batch consistency limit (default 0.05)", NULL, NULL },
	STORE_OPT_STORE("the history store, a directory or git+URL (perf-upload(1))"),
	STORE_OPT_CACHE_DIR("where git stores' cache clones are (perf-upload(1))"),
	{ 0, "now", 'N', "time",
	    "the seeds' timestamp (ISO 8601), for reproducible preparations", NULL, NULL },
	{ 0, "confirm", 'Y', NULL,
	    "upload for real (without it: say what would be uploaded)", NULL, NULL },
	{ 0, "reason", 'E', "text",
	    "why the decision is right (accept, acknowledge, invalid, revert)", NULL, NULL },
	{ 0, "metric", 'm', "m",
	    "the metric the decision is about, repeatable (default: all):\n"
	    "latency, throughput, memory, text_encoder_time_s, dit_time_s,\n"
	    "vae_decode_time_s, or a named metric (time, BM_Sort/1024/time)", NULL, NULL },
	{ 0, "by", 'B', "name",
	    "who decides (default BUILDKITE_BUILD_CREATOR, git's user.name)", NULL, NULL },
	{ 0, "link", 'L', "url", "the issue that tracks the change", NULL, NULL },
	{ 0, "change", 'c', "file",
	    "a perf-changes(1) JSON line (- for standard input)", NULL, NULL },
	{ 0, "decision", 'D', "id", "the decision a revert undoes", NULL, NULL },
	{ 0, "json", 'J', NULL, "with decisions: JSON lines instead of the table", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-seed prepare --source-result file [--source-result file ...]\n"
	    "                         --intent-rationale text [--operator name]\n"
	    "                         [--staging-root dir] [--max-intra-batch-regression f]\n"
	    "                         [-s store] [--cache dir] [--now time]\n"
	    "       perf-seed reseed --source-result file [--source-result file ...]\n"
	    "                         --intent-rationale text [--operator name]\n"
	    "                         [--staging-root dir] [--max-intra-batch-regression f]\n"
	    "                         [-s store] [--cache dir] [--now time]\n"
	    "       perf-seed upload [--confirm] [-s store] [--cache dir] manifest\n"
	    "       perf-seed accept --source-result record --reason text [--metric m ...]\n"
	    "                         [--by name] [--link url] [--staging-root dir]\n"
	    "                         [-s store] [--cache dir] [--now time]\n"
	    "       perf-seed acknowledge [--source-result record] [--change file]\n"
	    "                         --reason text [--metric m ...] [--by name] [--link url]\n"
	    "                         [--staging-root dir] [-s store] [--cache dir] [--now time]\n"
	    "       perf-seed invalid [--source-result record] [--change file]\n"
	    "                         --reason text [--metric m ...] [--by name] [--link url]\n"
	    "                         [--staging-root dir] [-s store] [--cache dir] [--now time]\n"
	    "       perf-seed revert --decision id --reason text [--by name]\n"
	    "                         [--staging-root dir] [-s store] [--cache dir] [--now time]\n"
	    "       perf-seed decisions [--json] [-s store] [--cache dir]\n",
	.width = 26,
	.flags = 0,
	.opts = options,
};

/*
 * Reports a failure, with ": strerror(e)" appended when e is not -1; returns
 * the exit status of one.
 */
static int
vfail(int e, const char *fmt, va_list ap)
{
	va_list again;
	buf b = BUF_INIT;

	va_copy(again, ap);
	buf_grow(&b, 256);
	b.len = (size_t)vsnprintf(b.s, b.cap, fmt, ap);
	if (b.len >= b.cap) {
		buf_grow(&b, b.len + 1);
		vsnprintf(b.s, b.cap, fmt, again);
	}
	va_end(again);
	if (e == -1) {
		warnx("%s", b.s);
	} else {
		errno = e;
		warn("%s", b.s);
	}
	buf_free(&b);
	return EXIT_TROUBLE;
}

/* Reports a failure; returns the exit status of one. */
static int __attribute__((format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(-1, fmt, ap);
	va_end(ap);
	return rc;
}

/* fail() with ": strerror(errno)" appended, errno as it was on entry. */
static int __attribute__((format(printf, 1, 2)))
fail_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(e, fmt, ap);
	va_end(ap);
	return rc;
}

/*
 * The store as the manifest names it (its "repository"): a Hugging Face
 * dataset as the reference does; another git remote by its host and path;
 * a directory by its real path.
 */
static cJSON *
repository_of(const char *spec)
{
	cJSON *o = json_new_object();
	const char *url, *sep, *auth, *path, *at, *type = "git";
	char *endpoint, *id, *scheme;

	if (!gitstore_is_spec(spec)) {
		char *real = path_resolve(spec);

		json_set(o, "endpoint", json_new_string("file"));
		json_set(o, "repo_id", json_new_string(real));
		json_set(o, "repo_type", json_new_string("directory"));
		free(real);
		return o;
	}
	url = spec + 4;
	if ((sep = strstr(url, "://")) != NULL) {
		scheme = estrndup(url, (size_t)(sep - url));
		auth = sep + 3;
		path = auth + strcspn(auth, "/");
		at = memchr(auth, '@', (size_t)(path - auth));
		if (at != NULL)
			auth = at + 1;	/* never the user or a password */
		endpoint = easprintf("%s://%.*s", scheme, (int)(path - auth), auth);
		free(scheme);
		if (*path == '/' && strcmp(endpoint, "file://") != 0)
			path++;
	} else {
		/* scp-like "user@host:path" */
		path = strchr(url, ':');
		path = path != NULL ? path + 1 : url + strlen(url);
		auth = url;
		at = memchr(url, '@', (size_t)(path - url));
		if (at != NULL)
			auth = at + 1;
		endpoint = easprintf("ssh://%.*s", (int)(path - auth - (path > auth)), auth);
	}
	if (strncmp(path, "datasets/", 9) == 0) {
		path += 9;
		type = "dataset";
	}
	id = estrdup(path);
	if (strlen(id) > 4 && strcmp(id + strlen(id) - 4, ".git") == 0 &&
	    strcmp(type, "dataset") == 0)
		id[strlen(id) - 4] = '\0';
	while (strlen(id) > 1 && id[strlen(id) - 1] == '/')
		id[strlen(id) - 1] = '\0';
	json_set(o, "endpoint", json_new_string(endpoint));
	json_set(o, "repo_id", json_new_string(id));
	json_set(o, "repo_type", json_new_string(type));
	free(endpoint);
	free(id);
	return o;
}

/* Reads and parses a document; a non-zero status after reporting. */
static int
load_doc(struct doc *d, const char *arg, const char *what_not_object)
{
	json_error e;

	memset(d, 0, sizeof *d);
	d->arg = arg;
	if ((d->real = realpath(arg, NULL)) == NULL || buf_read_file(&d->bytes, d->real) != 0)
		return fail_errno("%s", arg);
	if ((d->rec = json_parse(d->bytes.s, d->bytes.len, &e)) == NULL)
		return fail("%s:%ld: %s", arg, e.line, e.msg);
	if (!cJSON_IsObject(d->rec))
		return fail("%s: %s", what_not_object, d->real);
	identity_of(d->rec, &d->id);
	return 0;
}

static void
free_doc(struct doc *d)
{
	free(d->real);
	buf_free(&d->bytes);
	cJSON_Delete(d->rec);
	identity_free(&d->id);
}

static bool
same_identity(const struct identity *a, const struct identity *b)
{
	for (int k = 0; k < IDENTITY_KEYS; k++)
		if (strcmp(a->value[k], b->value[k]) != 0)
			return false;
	return true;
}

/* The compact sorted-key form of a record, for "duplicates source content". */
static char *
content_of(const cJSON *rec)
{
	buf b = BUF_INIT;

	if (canon_json(&b, rec) != 0) {
		buf_reset(&b);
		json_pyrepr(&b, rec);
	}
	return buf_detach(&b);
}

/* Prepare: no source repeats another; all have the first's identity. */
static int
check_batch(struct doc *s, int n)
{
	char **content = ecalloc((size_t)n + 1, sizeof *content);
	char **prov = ecalloc((size_t)n + 1, sizeof *prov);
	int rc = 0, i, j;

	for (i = 0; i < n; i++) {
		content[i] = content_of(s[i].rec);
		prov[i] = seed_provenance(s[i].rec);
	}
	for (i = 1; i < n && rc == 0; i++) {
		for (j = 0; j < i && rc == 0; j++)
			if (strcmp(s[i].real, s[j].real) == 0)
				rc = fail("source artifact %d duplicates a resolved source path", i + 1);
		for (j = 0; j < i && rc == 0; j++)
			if (strcmp(content[i], content[j]) == 0)
				rc = fail("source artifact %d duplicates source content", i + 1);
		for (j = 0; j < i && rc == 0; j++)
			if (prov[i] != NULL && prov[j] != NULL && strcmp(prov[i], prov[j]) == 0)
				rc = fail("source artifact %d duplicates source provenance", i + 1);
	}
	for (i = 1; i < n && rc == 0; i++)
		if (!same_identity(&s[i].id, &s[0].id))
			rc = fail("source artifact %d does not match the first exact comparable "
			    "identity", i + 1);
	for (i = 0; i < n; i++) {
		free(content[i]);
		free(prov[i]);
	}
	free(content);
	free(prov);
	return rc;
}

/* What a scan of the store found for the seed's identity. */
struct found {
	const struct identity *id;
	const cJSON *rec;	/* the seed's record */
	bool eligible;
	char **fps;
	size_t nfps;
};

static void
on_found(const struct store_hit *h, void *ctx)
{
	struct found *f = ctx;

	if (h->match[0])
		f->eligible = true;
	if (h->match[1] && !identity_other_benchmark(f->rec, h->record))
		identity_add_other_recipe(h->record, f->id->value[IDENTITY_RECIPE], &f->fps, &f->nfps);
}

/*
 * Prepare: the history in dir (a store directory, which must exist)
 * holds no baseline-eligible record of the identity and no trusted record
 * of another recipe of its cohort. label names it in the messages.
 */
static int
check_no_seed(const char *dir, const struct identity *id, const cJSON *rec, const char *label)
{
	struct store_query q[2];
	struct found f = { id, rec, false, NULL, 0 };
	char *raised = NULL;
	store *st;
	buf list = BUF_INIT;
	int rc = 0;

	store_identity_queries(id->value, &q[0], &q[1]);
	/* Whether one eligible record exists; other recipes, one of each. */
	q[0].newest = 1;
	q[1].distinct = true;
	if ((st = store_open(dir)) == NULL)
		return EXIT_TROUBLE;
	/* A first seed meets an empty history by design: no warning here. */
	store_empty_ok(st);
	if (store_scan(st, q, 2, on_found, &f, &raised) != 0)
		rc = EXIT_TROUBLE;
	store_close(st);
	if (rc == 0 && raised != NULL)
		rc = fail("%s: %s", label, raised);
	else if (rc == 0 && f.eligible)
		rc = fail("%s already has a baseline-eligible record for the exact comparable "
		    "identity; the CALIBRATION_NEEDED source artifact is stale", label);
	else if (rc == 0 && f.nfps > 0) {
		qsort(f.fps, f.nfps, sizeof *f.fps, text_cmp_ptr);
		for (size_t i = 0; i < f.nfps; i++)
			buf_addf(&list, "%s%s", i > 0 ? ", " : "", f.fps[i]);
		rc = fail("%s already has trusted records for another recipe in this workload, "
		    "variant, and benchmark version: %s", label, list.s);
	}
	for (size_t i = 0; i < f.nfps; i++)
		free(f.fps[i]);
	free(f.fps);
	free(raised);
	buf_free(&list);
	return rc;
}

/*
 * A named metric of a batch (lane/named_metric.h): its name, unit and
 * direction, as the first record holding it resolves them.
 */
struct named_col {
	const char *name;	/* borrowed from that record */
	const char *unit;
	enum better better;
};

/*
 * The named metrics of recs[0..n), in order of first appearance: a new
 * array of *k. Records are checked already; one that is not valid adds
 * nothing.
 */
static struct named_col *
batch_named(const cJSON *const *recs, int n, size_t *k)
{
	struct named_col *col = NULL;
	struct named_metric *m;
	struct nm_policy pol;
	size_t nm, j, c;
	char err[256], *bench;

	*k = 0;
	for (int i = 0; i < n; i++) {
		if ((m = nm_parse(json_get(recs[i], "metrics"), &nm, err, sizeof err)) == NULL)
			continue;
		bench = json_get(recs[i], "model_id") != NULL ?
		    json_pystr_dup(json_get(recs[i], "model_id")) : estrdup("unknown");
		for (j = 0; j < nm; j++) {
			for (c = 0; c < *k && strcmp(col[c].name, m[j].name) != 0; c++)
				;
			if (c < *k)
				continue;
			nm_policy_resolve(json_get(json_get(recs[i], "regression_thresholds"),
			    "metrics"), bench, &m[j], &pol);
			col = erealloc(col, (*k + 1) * sizeof *col);
			col[*k].name = m[j].name;
			col[*k].unit = m[j].unit;
			col[(*k)++].better = pol.better;
		}
		free(bench);
		free(m);
	}
	return col;
}

/* The value of named metric col in a record's metrics object: false when it has none. */
static bool
named_value(const cJSON *metrics, const struct named_col *col, double *v)
{
	const cJSON *e = json_get(metrics, col->name), *x = json_get(e, "value"),
	    *u = json_get(e, "unit");

	if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) ||
	    strcmp(cJSON_IsString(u) ? u->valuestring : "", col->unit) != 0)
		return false;
	*v = x->valuedouble;
	return true;
}

/* A named metric's value for the tables: 6 significant digits and its unit. */
static char *
sig6(char b[NUM_BUFSZ], double v, const char *unit)
{
	snprintf(b, NUM_BUFSZ, "%.6g%s%.64s", v, *unit ? " " : "", unit);
	return b;
}

/*
 * Prepare: the batch's values of named metric col against their median,
 * printed as the six's, then judged: failures gets the worst source when
 * it regresses past the limit. A metric of unknown direction is printed,
 * never judged (never guessed). Returns 0, or exit 2 after reporting a
 * non-positive median.
 */
static int
check_named(struct doc *s, int n, const struct named_col *col, buf *failures)
{
	char a[NUM_BUFSZ], b[NUM_BUFSZ], c[NUM_BUFSZ];
	double *v = ecalloc((size_t)n + 1, sizeof *v), *sorted = ecalloc((size_t)n + 1, sizeof *v);
	double med, worst = 0, r;
	int *who = ecalloc((size_t)n + 1, sizeof *who), k = 0, worst_i = -1, rc = 0;

	for (int i = 0; i < n; i++)
		if (named_value(json_get(s[i].rec, "metrics"), col, &v[k])) {
			sorted[k] = v[k];
			who[k++] = i;
		}
	if (k < 2)
		goto done;
	med = stats_median(sorted, (size_t)k);
	if (med <= 0) {
		rc = fail("cannot validate metrics.%s consistency against non-positive batch "
		    "median", col->name);
		goto done;
	}
	for (int j = 0; j < k; j++) {
		r = col->better == BETTER_HIGHER ? (med - v[j]) / med : (v[j] - med) / med;
		if (col->better != BETTER_UNKNOWN)
			strcat(num_fixed(c, r * 100, 1), "%");
		printf("  metrics.%s source=%d value=%s median=%s regression=%s\n", col->name,
		    who[j] + 1, sig6(a, v[j], col->unit), sig6(b, med, col->unit),
		    col->better == BETTER_UNKNOWN ? "n/a" : c);
		if (worst_i < 0 || r > worst) {
			worst = r;
			worst_i = who[j];
		}
	}
	if (col->better == BETTER_UNKNOWN) {
		printf("  metrics.%s direction unknown: not checked\n", col->name);
		goto done;
	}
	printf("  metrics.%s worst regression: %s%% (source=%d)\n", col->name,
	    num_fixed(a, worst * 100, 1), worst_i + 1);
	if (worst > opt.max_regression)
		buf_addf(failures, "%ssource artifact %d metrics.%s regresses by %s%% against the "
		    "batch median", failures->len > 0 ? "; " : "", worst_i + 1, col->name,
		    num_fixed(a, worst * 100, 1));
done:
	free(v);
	free(sorted);
	free(who);
	return rc;
}

/* Prepare: the batch's values against their median, printed, then judged. */
static int
check_consistency(struct doc *s, int n)
{
	char a[NUM_BUFSZ], b[NUM_BUFSZ], c[NUM_BUFSZ];
	double *v = ecalloc((size_t)n + 1, sizeof *v), *sorted = ecalloc((size_t)n + 1, sizeof *v);
	int *who = ecalloc((size_t)n + 1, sizeof *who);
	buf failures = BUF_INIT;
	int rc = 0;

	printf("Source batch consistency (maximum regression %s%%):\n",
	    num_fixed(a, opt.max_regression * 100, 1));
	for (int m = 0; m < METRIC_COUNT && rc == 0; m++) {
		const struct metric *mt = &metric_table[m];
		double med, worst = 0, r;
		int k = 0, worst_i = -1;

		for (int i = 0; i < n; i++) {
			double d;

			if (policy_coerce(json_get(s[i].rec, mt->key), &d) == COERCE_OK) {
				v[k] = sorted[k] = d;
				who[k++] = i;
			}
		}
		if (k < 2)
			continue;
		med = stats_median(sorted, (size_t)k);
		if (med <= 0) {
			rc = fail("cannot validate %s consistency against non-positive batch median",
			    mt->key);
			break;
		}
		for (int j = 0; j < k; j++) {
			r = mt->higher_is_better ? (med - v[j]) / med : (v[j] - med) / med;
			printf("  %s source=%d value=%s median=%s regression=%s%%\n", mt->key,
			    who[j] + 1, num_fixed(a, v[j], 6), num_fixed(b, med, 6),
			    num_fixed(c, r * 100, 1));
			if (worst_i < 0 || r > worst) {
				worst = r;
				worst_i = who[j];
			}
		}
		printf("  %s worst regression: %s%% (source=%d)\n", mt->key,
		    num_fixed(a, worst * 100, 1), worst_i + 1);
		if (worst > opt.max_regression)
			buf_addf(&failures, "%ssource artifact %d %s regresses by %s%% against the "
			    "batch median", failures.len > 0 ? "; " : "", worst_i + 1, mt->key,
			    num_fixed(a, worst * 100, 1));
	}
	if (rc == 0) {
		const cJSON **recs = ecalloc((size_t)n + 1, sizeof *recs);
		struct named_col *col;
		size_t nc;

		for (int i = 0; i < n; i++)
			recs[i] = s[i].rec;
		col = batch_named(recs, n, &nc);
		for (size_t j = 0; j < nc && rc == 0; j++)
			rc = check_named(s, n, &col[j], &failures);
		free(col);
		free(recs);
	}
	fflush(stdout);
	if (rc == 0 && failures.len > 0)
		rc = fail("source batch exceeds maximum intra-batch regression: %s", failures.s);
	buf_free(&failures);
	free(v);
	free(sorted);
	free(who);
	return rc;
}

/* The reservation directory of an identity in a staging root. */
static char *
reservation_of(const char *staging_real, const struct identity *id)
{
	cJSON *ident = seed_identity_json(id), *repo = repository_of(opt.store.spec);
	char hex[SHA256_HEX], *dir;

	seed_reservation_name(ident, repo, hex);
	dir = easprintf("%s/" RESERVATIONS "/%s", staging_real, hex);
	cJSON_Delete(ident);
	cJSON_Delete(repo);
	return dir;
}

/* Files and directories made by prepare, removed again when it fails. */
struct made {
	char **paths;
	size_t n;
};

static void
made_add(struct made *m, const char *path)
{
	m->paths = erealloc(m->paths, (m->n + 1) * sizeof *m->paths);
	m->paths[m->n++] = estrdup(path);
}

/* Undoes in reverse order: files unlinked, directories removed when empty. */
static void
made_undo(struct made *m)
{
	struct stat st;

	while (m->n > 0) {
		char *p = m->paths[--m->n];

		if (lstat(p, &st) == 0)
			(S_ISDIR(st.st_mode) ? rmdir : unlink)(p);
		free(p);
	}
}

static void
made_free(struct made *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->paths[i]);
	free(m->paths);
}

/* mkdir -p that records what it made. */
static int
mkdirs_noted(const char *dir, struct made *m, mode_t mode)
{
	char *p = estrdup(dir);
	struct stat st;

	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		if (stat(p, &st) != 0) {
			if (mkdir(p, mode) != 0 && errno != EEXIST) {
				free(p);
				return -1;
			}
			made_add(m, p);
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return 0;
}

static cJSON *
file_entry(const char *path, const void *bytes, size_t n)
{
	cJSON *o = json_new_object();
	char hex[SHA256_HEX];

	canon_sha256_hex(bytes, n, hex);
	json_set(o, "path", json_new_string(path));
	json_set(o, "sha256", json_new_string(hex));
	return o;
}

/*
 * Prepare: writes the seeds into the reservation res (batch order); written[i]
 * gets each one's path. Non-zero after reporting.
 */
static int
write_seeds(const char *res, cJSON **seeds, char *const *rels, int n, struct made *made,
    char **written)
{
	buf text = BUF_INIT;
	int rc = 0;

	for (int i = 0; i < n && rc == 0; i++) {
		char *slash, *path;

		path = easprintf("%s/%s", res, rels[i]);
		slash = strrchr(path, '/');
		*slash = '\0';
		if (mkdirs_noted(path, made, 0777) != 0) {
			rc = fail_errno("%s: cannot create", path);
			free(path);
			break;
		}
		*slash = '/';
		buf_reset(&text);
		if (json_write(&text, seeds[i], JSON_INDENT2, NULL) != 0)
			rc = fail("seed %d holds a number that is not finite", i + 1);
		else if (atomic_create_file(path, text.s, text.len) != 0)
			rc = fail_errno("%s: cannot write", path);
		if (rc != 0) {
			free(path);
			break;
		}
		made_add(made, path);
		written[i] = path;
	}
	buf_free(&text);
	return rc;
}

/*
 * Prepare: the manifest's entries of the sources s, each read again (it
 * must still be what was validated), into *list. Non-zero after reporting.
 */
static int
source_entries(const struct doc *s, int n, cJSON **list)
{
	buf again = BUF_INIT;
	int rc = 0;

	*list = json_new_array();
	for (int i = 0; i < n; i++) {
		cJSON *rec;
		json_error e;

		rec = buf_read_file(&again, s[i].real) == 0 ?
		    json_parse(again.s, again.len, &e) : NULL;
		if (rec == NULL || !json_equal(rec, s[i].rec)) {
			cJSON_Delete(rec);
			rc = fail("source record changed during preparation: %s", s[i].real);
			break;
		}
		cJSON_Delete(rec);
		json_append(*list, file_entry(s[i].real, again.s, again.len));
	}
	buf_free(&again);
	return rc;
}

/* Prepare: the manifest's entries of the seeds written, into *list. */
static int
prepared_entries(char *const *written, int n, cJSON **list)
{
	buf again = BUF_INIT;
	int rc = 0;

	*list = json_new_array();
	for (int i = 0; i < n; i++) {
		if (buf_read_file(&again, written[i]) != 0) {
			rc = fail_errno("%s", written[i]);
			break;
		}
		json_append(*list, file_entry(written[i], again.s, again.len));
	}
	buf_free(&again);
	return rc;
}

/*
 * Prepare: the manifest of the sources s and the seeds written. A reseed's
 * (extra not NULL) says so in "operation" and adds extra's members after
 * "staging_root".
 */
static int
manifest_of(const struct doc *s, int n, char *const *written, const char *staging_real,
    const cJSON *extra, cJSON **manifest)
{
	const cJSON *x;
	cJSON *list;
	int rc;

	*manifest = json_new_object();
	json_set(*manifest, "manifest_schema_version", json_new_int(1));
	if (extra != NULL)
		json_set(*manifest, "operation", json_new_string(RESEED_OPERATION));
	json_set(*manifest, "repository", repository_of(opt.store.spec));
	json_set(*manifest, "identity", seed_identity_json(&s[0].id));
	json_set(*manifest, "recipe_cohort", seed_cohort_json(&s[0].id));
	json_set(*manifest, "staging_root", json_new_string(staging_real));
	if (extra != NULL)
		cJSON_ArrayForEach(x, extra)
			json_set(*manifest, x->string, cJSON_Duplicate(x, true));
	rc = source_entries(s, n, &list);
	if (rc != 0) {
		cJSON_Delete(list);
		return rc;
	}
	json_set(*manifest, "source_records", list);
	rc = prepared_entries(written, n, &list);
	if (rc != 0) {
		cJSON_Delete(list);
		return rc;
	}
	json_set(*manifest, "prepared_records", list);
	return 0;
}

/* Prepare: the reservation res (its parent made as needed), noted in made. */
static int
reserve(const char *res, struct made *made)
{
	char *parent = estrdup(res);
	int rc = 0;

	*strrchr(parent, '/') = '\0';
	if (mkdirs_noted(parent, made, 0777) != 0)
		rc = fail_errno("%s: cannot create", parent);
	else if (mkdir(res, 0700) != 0)
		rc = errno == EEXIST ? fail("staging already has a reservation for the exact "
		    "comparable identity; reuse or explicitly clean the existing preparation") :
		    fail_errno("%s: cannot create", res);
	else
		made_add(made, res);
	free(parent);
	return rc;
}

/* The manifest m written as <res>/manifest (*path), noted in made; fail()s when not. */
static int
write_manifest(const char *res, const cJSON *m, struct made *made, char **path)
{
	buf text = BUF_INIT;
	int rc = 0;

	*path = easprintf("%s/manifest", res);
	json_write(&text, m, JSON_INDENT2, NULL);
	made_add(made, *path);
	if (atomic_write_file(*path, text.s, text.len) != 0)
		rc = fail_errno("%s: cannot write", *path);
	buf_free(&text);
	return rc;
}

/*
 * Prepare: reserve res, write the seeds (batch order, at rels in it) and
 * the manifest (sources s in input order); everything made is removed
 * again on failure. extra: a reseed's manifest members, NULL for a seed.
 */
static int
stage(struct doc *s, int n, cJSON **seeds, char *const *rels, const char *staging_real,
    const char *res, const cJSON *extra)
{
	struct made made = { NULL, 0 };
	char *path = NULL;
	cJSON *manifest = NULL;
	char **written = ecalloc((size_t)n + 1, sizeof *written);
	const char *what = extra != NULL ? "reseed" : "seed";
	int rc, i;

	if ((rc = reserve(res, &made)) != 0 ||
	    (rc = write_seeds(res, seeds, rels, n, &made, written)) != 0 ||
	    (rc = manifest_of(s, n, written, staging_real, extra, &manifest)) != 0 ||
	    (rc = write_manifest(res, manifest, &made, &path)) != 0)
		goto undo;
	for (i = 0; i < n; i++)
		printf("Prepared baseline %s: %s\n", what, written[i]);
	printf("Reserved exact identity in staging: %s\n", res);
	printf("Prepared upload manifest: %s\n", path);
	goto done;
undo:
	made_undo(&made);
done:
	made_free(&made);
	for (i = 0; i < n; i++)
		free(written[i]);
	free(written);
	free(path);
	cJSON_Delete(manifest);
	return rc;
}

/* The clone or directory the store's records are in, for the separation check. */
static char *
tracking_root(void)
{
	char *dir, *real;

	if (!gitstore_is_spec(opt.store.spec))
		return path_resolve(opt.store.spec);
	dir = gitstore_cache_dir(opt.store.spec, opt.store.cache);
	real = path_resolve(dir);
	free(dir);
	return real;
}

/* The staging root of what ("baseline seed", ...) apart from the tracking root. */
static int
roots_apart(const char *staging, const char *what)
{
	char *tracking = tracking_root();
	int rc = 0;

	if (path_within(staging, tracking) || path_within(tracking, staging))
		rc = fail("%s staging and canonical tracking roots must be separate and "
		    "non-nested", what);
	free(tracking);
	return rc;
}

/* Opens the store read-only, fetched: NULL after reporting. */
static store_writer *
open_fetched(void)
{
	store_writer *w = store_writer_open_readonly(opt.store.spec, opt.store.cache);

	if (w != NULL && gitstore_is_spec(opt.store.spec) && store_writer_remote_error(w) != NULL) {
		fail("%s: cannot fetch the store: %s", store_writer_shown(w),
		    store_writer_remote_error(w));
		store_writer_close(w);
		return NULL;
	}
	return w;
}

/* rec, named name, as check (seed_check_source(), ...) finds it: the failure said. */
static int
check_doc(const char *name, const cJSON *rec, char *(*check)(const cJSON *))
{
	char *msg = check(rec);
	int rc;

	if (msg == NULL)
		return 0;
	rc = fail("%s: %s", name, msg);
	free(msg);
	return rc;
}

/*
 * The n sources read, then each checked by check (seed_check_source(),
 * reseed_check_source()) in input order, the first failure winning, then
 * the batch.
 */
static int
read_sources(struct doc *s, int n, char *(*check)(const cJSON *))
{
	int rc = 0;

	for (int i = 0; i < n && rc == 0; i++)
		rc = load_doc(&s[i], opt.sources[i], "source record must contain a JSON object");
	for (int i = 0; i < n && rc == 0; i++)
		rc = check_doc(s[i].arg, s[i].rec, check);
	return rc != 0 ? rc : check_batch(s, n);
}

/*
 * The sources' order in the batch (seed_order()), into order, and the
 * identity they share, on stdout under "<verb> exact comparable identity:".
 */
static void
order_sources(const struct doc *s, int n, int *order, const char *verb)
{
	const cJSON **recs = ecalloc((size_t)n + 1, sizeof *recs);

	for (int i = 0; i < n; i++)
		recs[i] = s[i].rec;
	seed_order(recs, n, order, true);
	free(recs);
	printf("%s exact comparable identity:\n", verb);
	for (int i = 0; i < IDENTITY_KEYS; i++)
		printf("  %s: %s\n", identity_keys[i], s[0].id.value[i]);
}

static int
prepare(void)
{
	struct doc *s = ecalloc((size_t)opt.nsources + 1, sizeof *s);
	cJSON **seeds = ecalloc((size_t)opt.nsources + 1, sizeof *seeds);
	int *order = ecalloc((size_t)opt.nsources + 1, sizeof *order);
	char **rels = ecalloc((size_t)opt.nsources + 1, sizeof *rels);
	char *staging = path_resolve(opt.staging), ts[40];
	char *res = NULL;
	int n = opt.nsources, rc = 0, i;
	struct stat st;
	store_writer *w = NULL;
	size_t len;

	if ((rc = roots_apart(staging, "baseline seed")) != 0 ||
	    (rc = read_sources(s, n, seed_check_source)) != 0)
		goto done;
	/* A fresh read of the store, then of the staging root. */
	if ((w = open_fetched()) == NULL) {
		rc = EXIT_TROUBLE;
		goto done;
	}
	if ((rc = check_no_seed(store_writer_dir(w), &s[0].id, s[0].rec,
	    "remote tracking history")) != 0)
		goto done;
	store_writer_close(w);
	w = NULL;
	if (stat(staging, &st) == 0 &&
	    (rc = check_no_seed(staging, &s[0].id, s[0].rec, "local staging")) != 0)
		goto done;
	if ((rc = check_consistency(s, n)) != 0)
		goto done;
	order_sources(s, n, order, "Seeding");
	text_py_strip(opt.rationale, &len);
	if (len == 0) {
		rc = fail("baseline seed reason must be a non-empty string");
		goto done;
	}
	for (i = 0; i < n; i++) {
		const struct doc *src = &s[order[i]];

		isotime_format(ts, opt.now_given ? opt.now : isotime_now());
		seeds[i] = seed_build(src->rec, ts, opt.rationale, opt.operator, src->real,
		    i + 1, n);
		rels[i] = seed_path(seeds[i], i + 1, n);
	}
	res = reservation_of(staging, &s[0].id);
	rc = stage(s, n, seeds, rels, staging, res, NULL);
done:
	fflush(stdout);
	store_writer_close(w);
	for (i = 0; i < n; i++) {
		free_doc(&s[i]);
		cJSON_Delete(seeds[i]);
		free(rels[i]);
	}
	free(s);
	free(seeds);
	free(rels);
	free(res);
	free(order);
	free(staging);
	return rc;
}

/* Reseed: a trusted record of the cohort, for the rolling window. */
struct past {
	int64_t instant;
	char *path;
	double v[METRIC_COUNT];
	bool has[METRIC_COUNT];
	const cJSON *metrics;	/* its named metrics, or NULL (owned by the cohort's) */
};

/*
 * Reseed: what the store holds of the exact cohort: how many records, the
 * union of their keys that are not provenance (sorted), and its trusted
 * (successful, baseline-eligible) records in window order.
 */
struct cohort {
	size_t nrecords;
	char **fields;
	size_t nfields;
	struct past *base;
	size_t nbase;
};

static void
past_values(const cJSON *rec, struct past *p)
{
	for (int m = 0; m < METRIC_COUNT; m++)
		p->has[m] = policy_coerce(json_get(rec, metric_table[m].key), &p->v[m]) == COERCE_OK;
	p->metrics = NULL;
}

static void
on_cohort(const struct store_hit *h, void *ctx)
{
	struct cohort *c = ctx;
	const cJSON *v;
	size_t i;

	if (h->match[0]) {
		c->nrecords++;
		cJSON_ArrayForEach(v, h->record) {
			if (reseed_provenance_key(v->string))
				continue;
			for (i = 0; i < c->nfields && strcmp(c->fields[i], v->string) != 0; i++)
				;
			if (i == c->nfields) {
				c->fields = erealloc(c->fields, (c->nfields + 1) * sizeof *c->fields);
				c->fields[c->nfields++] = estrdup(v->string);
			}
		}
	}
	if (h->match[1]) {
		struct past *p;

		c->base = erealloc(c->base, (c->nbase + 1) * sizeof *c->base);
		p = &c->base[c->nbase++];
		p->instant = h->instant;
		p->path = estrdup(h->path);
		past_values(h->record, p);
		if (json_get(h->record, "metrics") != NULL)
			p->metrics = cJSON_Duplicate(json_get(h->record, "metrics"), true);
	}
}

/* The reference's window order: (timestamp, path). */
static int
past_cmp(const void *a, const void *b)
{
	const struct past *x = a, *y = b;

	return decision_order(x->instant, x->path, y->instant, y->path);
}

static void
free_cohort(struct cohort *c)
{
	for (size_t i = 0; i < c->nfields; i++)
		free(c->fields[i]);
	for (size_t i = 0; i < c->nbase; i++) {
		free(c->base[i].path);
		cJSON_Delete((cJSON *)c->base[i].metrics);
	}
	free(c->fields);
	free(c->base);
	memset(c, 0, sizeof *c);
}

/*
 * Reseed: reads the cohort of id from the store directory dir. A cohort
 * without a baseline is refused: its first baseline is seeded (prepare).
 */
static int
read_cohort(const char *dir, const struct identity *id, struct cohort *c)
{
	struct store_query q[2], unused;
	char *raised = NULL;
	store *st;
	int rc = 0;

	memset(c, 0, sizeof *c);
	store_identity_queries(id->value, &q[1], &unused);
	q[0] = q[1];
	q[0].successful_only = q[0].eligible_only = false;
	if ((st = store_open(dir)) == NULL)
		return EXIT_TROUBLE;
	if (store_scan(st, q, 2, on_cohort, c, &raised) != 0)
		rc = EXIT_TROUBLE;
	store_close(st);
	if (rc == 0 && raised != NULL)
		rc = fail("remote tracking history: %s", raised);
	else if (rc == 0 && c->nrecords == 0)
		rc = fail("remote tracking history has no record of the exact comparable identity; "
		    "a first baseline is seeded with perf-seed prepare");
	else if (rc == 0 && c->nbase == 0)
		rc = fail("remote tracking history has no baseline-eligible record of the exact "
		    "comparable identity; a first baseline is seeded with perf-seed prepare");
	free(raised);
	if (rc != 0)
		return rc;
	qsort(c->fields, c->nfields, sizeof *c->fields, text_cmp_ptr);
	qsort(c->base, c->nbase, sizeof *c->base, past_cmp);
	return 0;
}

/* The median of metric m over the last WINDOW of p[0..n); false when none has it. */
static bool
window_median(const struct past *p, size_t n, int m, double *med)
{
	double v[WINDOW];
	size_t k = 0;

	for (size_t i = n > WINDOW ? n - WINDOW : 0; i < n; i++)
		if (p[i].has[m])
			v[k++] = p[i].v[m];
	if (k == 0)
		return false;
	*med = stats_median(v, k);
	return true;
}

/* A number for the table, or "-". */
static const char *
cell(char b[NUM_BUFSZ], bool has, double v, int prec, const char *unit)
{
	if (!has)
		return "-";
	num_fixed(b, v, prec);
	strcat(b, unit);
	return b;
}

/* The median of named metric col over the last WINDOW of p[0..n); false when none has it. */
static bool
named_window_median(const struct past *p, size_t n, const struct named_col *col, double *med)
{
	double v[WINDOW];
	size_t k = 0;

	for (size_t i = n > WINDOW ? n - WINDOW : 0; i < n; i++)
		if (named_value(p[i].metrics, col, &v[k]))
			k++;
	if (k == 0)
		return false;
	*med = stats_median(v, k);
	return true;
}

/*
 * Reseed: the shift table's rows of the batch's named metrics (all: the
 * cohort's nbase trusted records, then the batch recs[0..n)), values to
 * 6 significant digits in their canonical unit.
 */
static void
print_named_shift(const struct past *all, size_t nbase, cJSON **recs, int n)
{
	size_t nc;
	struct named_col *col = batch_named((const cJSON *const *)recs, n, &nc);
	char a[NUM_BUFSZ], b[NUM_BUFSZ], d[NUM_BUFSZ], e[NUM_BUFSZ];

	for (size_t j = 0; j < nc; j++) {
		double old = 0, cand = 0, med = 0, lo = 0, hi = 0, *v = ecalloc((size_t)n + 1,
		    sizeof *v);
		bool has_old, has_cand;
		int k = 0;

		for (int i = 0; i < n; i++)
			if (named_value(all[nbase + (size_t)i].metrics, &col[j], &v[k])) {
				lo = k == 0 || v[k] < lo ? v[k] : lo;
				hi = k == 0 || v[k] > hi ? v[k] : hi;
				k++;
			}
		if (k > 0)
			med = stats_median(v, (size_t)k);
		free(v);
		has_old = named_window_median(all, nbase, &col[j], &old);
		has_cand = named_window_median(all, nbase + (size_t)n, &col[j], &cand);
		printf("  metrics.%s old_median=%s batch_median=%s batch_spread=%s "
		    "candidate_median=%s\n", col[j].name,
		    has_old ? sig6(a, old, col[j].unit) : "-",
		    k > 0 ? sig6(b, med, col[j].unit) : "-",
		    cell(d, k > 0 && med != 0, (hi - lo) / med * 100, 1, "%"),
		    has_cand ? sig6(e, cand, col[j].unit) : "-");
	}
	free(col);
}

/*
 * Reseed: the skill's table: per metric the old median (the last five
 * trusted records), the source batch's median and spread ((max - min) /
 * median), and the median after the n reseeds are appended; then what n
 * records do to a last-5 window.
 */
static void
print_shift(const struct cohort *c, cJSON **recs, int n, const char *revision)
{
	struct past *all = ecalloc(c->nbase + (size_t)n + 1, sizeof *all);
	char a[NUM_BUFSZ], b[NUM_BUFSZ], d[NUM_BUFSZ], e[NUM_BUFSZ];

	memcpy(all, c->base, c->nbase * sizeof *all);
	for (int i = 0; i < n; i++) {
		past_values(recs[i], &all[c->nbase + (size_t)i]);
		all[c->nbase + (size_t)i].metrics = json_get(recs[i], "metrics");
	}
	printf("Baseline shift at store revision %s: %zu record%s of the identity, "
	    "%zu successful and baseline-eligible (the last %d are the old baseline)\n",
	    revision != NULL ? revision : "(empty)", c->nrecords, c->nrecords == 1 ? "" : "s",
	    c->nbase, WINDOW);
	for (int m = 0; m < METRIC_COUNT; m++) {
		double old = 0, cand = 0, med = 0, lo = 0, hi = 0, *v;
		bool has_old, has_cand, has_batch;
		int k = 0;

		v = ecalloc((size_t)n + 1, sizeof *v);
		for (int i = 0; i < n; i++)
			if (all[c->nbase + (size_t)i].has[m]) {
				v[k] = all[c->nbase + (size_t)i].v[m];
				lo = k == 0 || v[k] < lo ? v[k] : lo;
				hi = k == 0 || v[k] > hi ? v[k] : hi;
				k++;
			}
		has_batch = k > 0;
		if (has_batch)
			med = stats_median(v, (size_t)k);
		free(v);
		has_old = window_median(c->base, c->nbase, m, &old);
		has_cand = window_median(all, c->nbase + (size_t)n, m, &cand);
		printf("  %s old_median=%s batch_median=%s batch_spread=%s candidate_median=%s\n",
		    metric_table[m].key, cell(a, has_old, old, 6, ""),
		    cell(b, has_batch, med, 6, ""),
		    cell(d, has_batch && med != 0, (hi - lo) / med * 100, 1, "%"),
		    cell(e, has_cand, cand, 6, ""));
	}
	print_named_shift(all, c->nbase, recs, n);
	if (n < 3)
		printf("Note: %d reseed record%s may not move the last-%d median immediately "
		    "(3 usually do; %d reset the window).\n", n, n == 1 ? "" : "s", WINDOW, WINDOW);
	else if (n < WINDOW)
		printf("Note: %d reseed records usually move the last-%d median immediately "
		    "(%d reset the window).\n", n, WINDOW, WINDOW);
	else
		printf("Note: %d reseed records reset the last-%d window.\n", n, WINDOW);
	free(all);
}

/* Reseed: a manifest's fields as a sorted array of strings. */
static cJSON *
fields_json(const struct cohort *c)
{
	cJSON *a = json_new_array();

	for (size_t i = 0; i < c->nfields; i++)
		json_append(a, json_new_string(c->fields[i]));
	return a;
}

/*
 * Reseed: the reservation of an identity at a store revision: one reseed
 * of a cohort per reviewed revision.
 */
static char *
reseed_reservation_of(const char *staging_real, const struct identity *id, const cJSON *revision)
{
	cJSON *o = json_new_object();
	char hex[SHA256_HEX], *dir;

	json_set(o, "identity", seed_identity_json(id));
	json_set(o, "repository", repository_of(opt.store.spec));
	json_set(o, "store_revision", cJSON_Duplicate(revision, true));
	if (canon_sha256(o, hex) != 0)
		die("the reservation of a non-finite identity");
	cJSON_Delete(o);
	dir = easprintf("%s/" RESEED_RESERVATIONS "/%s", staging_real, hex);
	return dir;
}

static int
reseed(void)
{
	struct doc *s = ecalloc((size_t)opt.nsources + 1, sizeof *s);
	cJSON **recs = ecalloc((size_t)opt.nsources + 1, sizeof *recs), *extra = NULL, *rev;
	char **rels = ecalloc((size_t)opt.nsources + 1, sizeof *rels);
	int *order = ecalloc((size_t)opt.nsources + 1, sizeof *order);
	char *staging = path_resolve(opt.staging), ts[40];
	char *res = NULL;
	int n = opt.nsources, rc = 0, i;
	struct cohort c = { 0 };
	store_writer *w = NULL;
	size_t len;

	text_py_strip(opt.rationale, &len);
	if (len == 0) {
		rc = fail("baseline reseed reason must be a non-empty string");
		goto done;
	}
	if ((rc = roots_apart(staging, "baseline reseed")) != 0 ||
	    (rc = read_sources(s, n, reseed_check_source)) != 0)
		goto done;
	if ((w = open_fetched()) == NULL) {
		rc = EXIT_TROUBLE;
		goto done;
	}
	if ((rc = read_cohort(store_writer_dir(w), &s[0].id, &c)) != 0 ||
	    (rc = check_consistency(s, n)) != 0)
		goto done;
	order_sources(s, n, order, "Reseeding");
	for (i = 0; i < n; i++) {
		const struct doc *src = &s[order[i]];

		isotime_format(ts, opt.now_given ? opt.now : isotime_now());
		recs[i] = reseed_build(src->rec, c.fields, c.nfields, ts, opt.rationale,
		    opt.operator, src->real, i + 1, n, opt.max_regression);
		if ((rels[i] = reseed_path(recs[i], i + 1)) == NULL) {
			rc = fail("%s: the reseed record has no store path", src->arg);
			goto done;
		}
	}
	print_shift(&c, recs, n, store_writer_revision(w));
	extra = json_new_object();
	rev = store_writer_revision(w) != NULL ? json_new_string(store_writer_revision(w)) :
	    json_new_null();
	json_set(extra, "store_revision", rev);
	json_set(extra, "max_intra_batch_regression", json_new_float(opt.max_regression));
	json_set(extra, "fields", fields_json(&c));
	res = reseed_reservation_of(staging, &s[0].id, rev);
	rc = stage(s, n, recs, rels, staging, res, extra);
done:
	fflush(stdout);
	store_writer_close(w);
	free_cohort(&c);
	for (i = 0; i < n; i++) {
		free_doc(&s[i]);
		cJSON_Delete(recs[i]);
		free(rels[i]);
	}
	cJSON_Delete(extra);
	free(s);
	free(recs);
	free(rels);
	free(order);
	free(res);
	free(staging);
	return rc;
}

/* manifest[key] as a non-empty array, or NULL. */
static const cJSON *
nonempty_array(const cJSON *m, const char *key)
{
	const cJSON *v = json_get(m, key);

	return cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0 ? v : NULL;
}

/*
 * Loads an entry {"path", "sha256"} of the manifest and checks its digest.
 * changed is the message for a digest that differs.
 */
static int
load_entry(struct doc *d, const cJSON *entry, const char *changed, const char *not_object)
{
	const cJSON *path = json_get(entry, "path"), *sum = json_get(entry, "sha256");
	char hex[SHA256_HEX];
	json_error e;

	memset(d, 0, sizeof *d);
	if (!cJSON_IsString(path))
		return fail("prepared-seed manifest entries must name a path");
	d->arg = path->valuestring;
	if ((d->real = realpath(d->arg, NULL)) == NULL || buf_read_file(&d->bytes, d->real) != 0)
		return fail_errno("%s", d->arg);
	canon_sha256_hex(d->bytes.s, d->bytes.len, hex);
	if (!cJSON_IsString(sum) || strcmp(sum->valuestring, hex) != 0)
		return fail("%s: %s", changed, d->real);
	if ((d->rec = json_parse(d->bytes.s, d->bytes.len, &e)) == NULL ||
	    !cJSON_IsObject(d->rec))
		return fail("%s: %s", not_object, d->real);
	identity_of(d->rec, &d->id);
	return 0;
}

/* Upload, 6: no prepared record path twice in the manifest. */
static int
check_paths_once(const struct doc *p, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(p[i].real, p[j].real) == 0)
				return fail("prepared-seed manifest repeats a prepared record path");
	return 0;
}

/* Upload, 6: the prepared record p at <res>/<rel> (rel consumed; NULL when it has none). */
static int
at_reserved_path(const struct doc *p, const char *res, char *rel)
{
	char *want = easprintf("%s/%s", res, rel != NULL ? rel : "");
	int rc = 0;

	if (rel == NULL || strcmp(want, p->real) != 0)
		rc = fail("prepared record path does not match its reserved identity: %s", p->real);
	free(rel);
	free(want);
	return rc;
}

/* want (consumed) as the manifest's got has it: "... the manifest <what>" when not. */
static int
manifest_matches(cJSON *want, const cJSON *got, const char *what)
{
	int rc = json_equal(want, got) ? 0 :
	    fail("prepared records no longer match the manifest %s", what);

	cJSON_Delete(want);
	return rc;
}

/* Upload: the prepared batch as a whole. */
static int
check_prepared_batch(struct doc *p, int n, const struct doc *src, const cJSON *manifest,
    const char *res)
{
	const cJSON *mid = json_get(manifest, "identity"), *cohort = json_get(manifest, "recipe_cohort");
	bool seen[1024] = { false };
	int i, rc;

	if ((rc = check_paths_once(p, n)) != 0)
		return rc;
	for (i = 1; i < n; i++)
		if (!same_identity(&p[i].id, &p[0].id))
			return fail("source artifact %d does not match the first exact comparable "
			    "identity", i + 1);
	if (!same_identity(&p[0].id, &src[0].id))
		return fail("prepared records do not match their reviewed source identity");
	if ((rc = manifest_matches(seed_identity_json(&p[0].id), mid, "identity")) != 0 ||
	    (rc = manifest_matches(seed_cohort_json(&p[0].id), cohort, "recipe cohort")) != 0)
		return rc;
	if (n != cJSON_GetArraySize(json_get(manifest, "source_records")))
		return fail("prepared-seed manifest source and prepared batch sizes differ");
	for (i = 1; i < n; i++)
		if (!json_equal(json_get(p[i].rec, "baseline_seed_reason"),
		    json_get(p[0].rec, "baseline_seed_reason")))
			return fail("prepared records have inconsistent approval rationales");
	for (i = 0; i < n; i++) {
		const cJSON *size = json_get(p[i].rec, "baseline_seed_batch_size");

		if (!cJSON_IsNumber(size) || size->valuedouble != n)
			return fail("prepared records have inconsistent baseline seed batch sizes");
	}
	for (i = 0; i < n; i++)
		if (!json_is_int(json_get(p[i].rec, "baseline_seed_batch_index")))
			return fail("prepared records have invalid baseline seed batch indices");
	for (i = 0; i < n; i++) {
		double x = json_get(p[i].rec, "baseline_seed_batch_index")->valuedouble;

		if (x < 1 || x > n || n > 1024 || seen[(int)x - 1])
			return fail("prepared records have inconsistent baseline seed batch indices");
		seen[(int)x - 1] = true;
	}
	for (i = 0; i < n && rc == 0; i++) {
		int index = (int)json_get(p[i].rec, "baseline_seed_batch_index")->valuedouble;
		char *real_res = realpath(res, NULL);

		rc = at_reserved_path(&p[i], real_res != NULL ? real_res : res,
		    seed_path(p[i].rec, index, n));
		free(real_res);
	}
	return rc;
}

/* Upload: each seed is exactly what its source gives. */
static int
rederive(struct doc *p, int n, struct doc *src)
{
	const cJSON **recs = ecalloc((size_t)n + 1, sizeof *recs);
	int *order = ecalloc((size_t)n + 1, sizeof *order), rc = 0;

	for (int i = 0; i < n; i++)
		recs[i] = src[i].rec;
	seed_order(recs, n, order, false);
	for (int i = 0; i < n && rc == 0; i++) {
		const cJSON *r = p[i].rec, *op = json_get(r, "baseline_seed_operator");
		int index = (int)json_get(r, "baseline_seed_batch_index")->valuedouble;
		const cJSON *ts = json_get(r, "timestamp"), *why = json_get(r, "baseline_seed_reason");
		const struct doc *s = &src[order[index - 1]];
		cJSON *want;

		want = seed_build(s->rec, cJSON_IsString(ts) ? ts->valuestring : "",
		    why->valuestring, cJSON_IsString(op) ? op->valuestring : NULL, s->real,
		    index, n);
		if (!cJSON_IsString(ts) || !json_equal(want, r))
			rc = fail("prepared record %d no longer matches its reviewed source", index);
		cJSON_Delete(want);
	}
	free(recs);
	free(order);
	return rc;
}

/* A Hugging Face remote needs a write token. */
static bool
needs_token(void)
{
	return gitstore_is_spec(opt.store.spec) && strstr(opt.store.spec, "huggingface.co") != NULL;
}

/*
 * Upload, as the reference numbers its steps: what each step has read and
 * made, for the next ones.
 */
struct upload {
	bool reseed;		/* a reseed's manifest, not a seed's */
	const char *what;	/* "seed" or "reseed" */
	struct doc m;		/* the manifest */
	struct doc *src, *p;	/* its source and prepared records */
	int ns, np;
	char *res;		/* the identity reservation, resolved */
	store_writer *w;
	char **rel;		/* each prepared record's path in the store */
	char **data;		/* borrowed from p[i].bytes */
	size_t *len;
	char parent[64];	/* the store's revision, "" when empty */
	char commit[64];	/* the seed commit */
};

/* 1: the manifest, its schema, repository, staging root and sources. */
static int
read_manifest(struct upload *u, const char *manifest_path)
{
	struct doc *m = &u->m;
	cJSON *repo = repository_of(opt.store.spec);
	const cJSON *v;
	json_error je;
	int rc = 0;

	if ((m->real = realpath(manifest_path, NULL)) == NULL ||
	    buf_read_file(&m->bytes, m->real) != 0)
		rc = fail_errno("%s", manifest_path);
	else if ((m->rec = json_parse(m->bytes.s, m->bytes.len, &je)) == NULL)
		rc = fail("%s:%ld: %s", manifest_path, je.line, je.msg);
	else if (!cJSON_IsObject(m->rec) ||
	    !cJSON_IsNumber(v = json_get(m->rec, "manifest_schema_version")) || v->valuedouble != 1)
		rc = fail("unsupported or missing prepared-seed manifest schema");
	else if (!json_equal(json_get(m->rec, "repository"), repo))
		rc = fail("prepared-seed manifest repository does not match the configured Hub "
		    "destination");
	else if (!cJSON_IsString(v = json_get(m->rec, "staging_root")) || *v->valuestring == '\0')
		rc = fail("prepared-seed manifest is missing its staging root");
	else if (nonempty_array(m->rec, "source_records") == NULL)
		rc = fail("prepared-seed manifest must retain its reviewed source records");
	else if ((v = json_get(m->rec, "operation")) != NULL &&
	    (!cJSON_IsString(v) || strcmp(v->valuestring, RESEED_OPERATION) != 0))
		rc = fail("unsupported or missing prepared-seed manifest schema");
	else if (v != NULL && (!cJSON_IsArray(json_get(m->rec, "fields")) ||
	    !cJSON_IsNumber(json_get(m->rec, "max_intra_batch_regression")) ||
	    (!cJSON_IsString(v = json_get(m->rec, "store_revision")) && !cJSON_IsNull(v))))
		rc = fail("prepared-reseed manifest must retain its store revision, fields and "
		    "maximum intra-batch regression");
	u->reseed = rc == 0 && json_get(m->rec, "operation") != NULL;
	u->what = u->reseed ? "reseed" : "seed";
	cJSON_Delete(repo);
	return rc;
}

/* 2: each source record, unchanged since review and a valid source; the batch. */
static int
load_sources(struct upload *u)
{
	const cJSON *entries = nonempty_array(u->m.rec, "source_records"), *e;
	int rc;

	u->src = ecalloc((size_t)cJSON_GetArraySize(entries) + 1, sizeof *u->src);
	cJSON_ArrayForEach(e, entries) {
		if (!cJSON_IsObject(e))
			return fail("prepared-seed manifest source entries must be objects");
		rc = load_entry(&u->src[u->ns], e, "source record changed after review",
		    "source record must contain a JSON object");
		u->ns++;
		if (rc != 0 || (rc = check_doc(u->src[u->ns - 1].real, u->src[u->ns - 1].rec,
		    u->reseed ? reseed_check_source : seed_check_source)) != 0)
			return rc;
	}
	for (int i = 0; i < u->ns; i++)
		u->src[i].arg = u->src[i].real;
	return check_batch(u->src, u->ns);
}

/* 3: the manifest lies in the reservation of its sources' identity. */
static int
check_reservation(struct upload *u)
{
	char *staging = path_resolve(json_get(u->m.rec, "staging_root")->valuestring);
	char *r = u->reseed ? reseed_reservation_of(staging, &u->src[0].id,
	    json_get(u->m.rec, "store_revision")) : reservation_of(staging, &u->src[0].id);
	char *mcopy, *mdir;
	int rc = 0;

	u->res = path_resolve(r);
	free(r);
	free(staging);
	mcopy = estrdup(u->m.real);
	mdir = estrdup(dirname(mcopy));
	if (strcmp(mdir, u->res) != 0)
		rc = fail("prepared-seed manifest is outside its identity reservation");
	free(mdir);
	free(mcopy);
	return rc;
}

/* 4, 5: each prepared record, inside the reservation, unchanged and a valid seed. */
static int
load_prepared(struct upload *u)
{
	const cJSON *entries = nonempty_array(u->m.rec, "prepared_records"), *e;
	int rc = 0;

	if (entries == NULL)
		return fail("prepared-seed manifest must contain at least one record");
	u->p = ecalloc((size_t)cJSON_GetArraySize(entries) + 1, sizeof *u->p);
	cJSON_ArrayForEach(e, entries) {
		const cJSON *path = json_get(e, "path");
		char *real;

		if (!cJSON_IsObject(e))
			return fail("prepared-seed manifest record entries must be objects");
		real = cJSON_IsString(path) ? path_resolve(path->valuestring) : estrdup("");
		if (!path_within(real, u->res) || strcmp(real, u->res) == 0) {
			rc = fail("prepared record is outside its identity reservation: %s",
			    cJSON_IsString(path) ? path->valuestring : "(none)");
			free(real);
			return rc;
		}
		free(real);
		rc = load_entry(&u->p[u->np], e, "prepared record changed after review",
		    "prepared record must contain a JSON object");
		u->np++;
		if (rc != 0)
			return rc;
	}
	for (int i = 0; i < u->np && rc == 0; i++)
		rc = check_doc(u->p[i].real, u->p[i].rec,
		    u->reseed ? reseed_check_prepared : seed_check_prepared);
	return rc;
}

/*
 * The store at its current revision (writable with --confirm) in *w, the
 * revision in parent[64] ("" when empty); what ("baseline seeds",
 * "decisions") names the upload a write token is missing for.
 */
static int
open_for_upload(const char *what, store_writer **w, char parent[64])
{
	if (opt.confirm && needs_token() && git_token() == NULL)
		return fail("a Hugging Face write token is required to upload %s", what);
	*w = opt.confirm ? store_writer_open(opt.store.spec, opt.store.cache) :
	    store_writer_open_readonly(opt.store.spec, opt.store.cache);
	if (*w == NULL)
		return EXIT_TROUBLE;
	if (store_writer_remote_error(*w) != NULL)
		return fail("could not resolve the current performance-tracking repository "
		    "revision: %s", store_writer_remote_error(*w));
	snprintf(parent, 64, "%s", store_writer_revision(*w) != NULL ?
	    store_writer_revision(*w) : "");
	return 0;
}

/* 8: the store at its current revision (writable with --confirm). */
static int
open_store(struct upload *u)
{
	return open_for_upload("baseline seeds", &u->w, u->parent);
}

/* Upload of a reseed, 6: the prepared batch as a whole. */
static int
check_reseed_batch(struct upload *u)
{
	const struct doc *p = u->p;
	bool *seen = ecalloc((size_t)u->np + 1, sizeof *seen);
	int i, n = u->np, rc = check_paths_once(p, n);

	for (i = 0; i < n && rc == 0; i++)
		if (!same_identity(&p[i].id, &u->src[0].id))
			rc = fail("prepared records do not match their reviewed source identity");
	if (rc == 0)
		rc = manifest_matches(seed_identity_json(&p[0].id), json_get(u->m.rec, "identity"),
		    "identity");
	if (rc == 0 && n != u->ns)
		rc = fail("prepared-seed manifest source and prepared batch sizes differ");
	for (i = 0; i < n && rc == 0; i++) {
		const cJSON *size = json_get(p[i].rec, "baseline_reseed_batch_size");
		double x = json_get(p[i].rec, "baseline_reseed_batch_index")->valuedouble;

		if (size->valuedouble != n || x < 1 || x > n || seen[(int)x - 1])
			rc = fail("prepared records have inconsistent baseline reseed batch indices");
		else
			seen[(int)x - 1] = true;
	}
	for (i = 0; i < n && rc == 0; i++) {
		int index = (int)json_get(p[i].rec, "baseline_reseed_batch_index")->valuedouble;

		rc = at_reserved_path(&p[i], u->res, reseed_path(p[i].rec, index));
	}
	free(seen);
	return rc;
}

/* Upload of a reseed, 7: each record is exactly what its source gives. */
static int
rederive_reseed(struct upload *u)
{
	const cJSON *list = json_get(u->m.rec, "fields"), *f;
	const cJSON **recs = ecalloc((size_t)u->np + 1, sizeof *recs);
	int *order = ecalloc((size_t)u->np + 1, sizeof *order), rc = 0;
	char **fields = ecalloc((size_t)cJSON_GetArraySize(list) + 1, sizeof *fields);
	size_t nf = 0;

	cJSON_ArrayForEach(f, list)
		if (cJSON_IsString(f))
			fields[nf++] = f->valuestring;
	qsort(fields, nf, sizeof *fields, text_cmp_ptr);
	for (int i = 0; i < u->np; i++)
		recs[i] = u->src[i].rec;
	seed_order(recs, u->np, order, false);
	for (int i = 0; i < u->np && rc == 0; i++) {
		const cJSON *r = u->p[i].rec, *op = json_get(r, "baseline_reseed_operator");
		int index = (int)json_get(r, "baseline_reseed_batch_index")->valuedouble;
		const cJSON *ts = json_get(r, "timestamp"), *why = json_get(r, "baseline_reseed_reason");
		const struct doc *s = &u->src[order[index - 1]];
		cJSON *want;

		want = reseed_build(s->rec, fields, nf, cJSON_IsString(ts) ? ts->valuestring : "",
		    why->valuestring, cJSON_IsString(op) ? op->valuestring : NULL, s->real, index,
		    u->np, json_get(u->m.rec, "max_intra_batch_regression")->valuedouble);
		if (!cJSON_IsString(ts) || !json_equal(want, r))
			rc = fail("prepared record %d no longer matches its reviewed source", index);
		cJSON_Delete(want);
	}
	free(fields);
	free(recs);
	free(order);
	return rc;
}

/*
 * Upload of a reseed, 8 and 9: the store is still at the revision the
 * reseed was reviewed at (its medians were shown for it), and its cohort
 * still infers the reviewed fields.
 */
static int
check_reseed_store(struct upload *u)
{
	const cJSON *rev = json_get(u->m.rec, "store_revision");
	const char *seen = cJSON_IsString(rev) ? rev->valuestring : "";
	struct cohort c;
	cJSON *fields;
	int rc;

	if (strcmp(seen, u->parent) != 0)
		return fail("%s: the store moved since the reseed was reviewed at revision %s "
		    "(it is at revision %s now); nothing was uploaded: prepare the reseed again",
		    store_writer_shown(u->w), seen[0] != '\0' ? seen : "(empty)",
		    u->parent[0] != '\0' ? u->parent : "(empty)");
	if ((rc = read_cohort(store_writer_dir(u->w), &u->p[0].id, &c)) != 0)
		return rc;
	fields = fields_json(&c);
	if (!json_equal(fields, json_get(u->m.rec, "fields")))
		rc = fail("%s: the cohort's records changed since the reseed was reviewed; nothing "
		    "was uploaded: prepare the reseed again", store_writer_shown(u->w));
	cJSON_Delete(fields);
	free_cohort(&c);
	return rc;
}

/*
 * 9: no seed of the identity in the store (for a reseed: the store as it
 * was reviewed); the records' store paths, all free.
 */
static int
check_paths(struct upload *u)
{
	int rc, i, j;

	if ((rc = u->reseed ? check_reseed_store(u) : check_no_seed(store_writer_dir(u->w),
	    &u->p[0].id, u->p[0].rec, "remote tracking history")) != 0)
		return rc;
	u->rel = ecalloc((size_t)u->np + 1, sizeof *u->rel);
	u->data = ecalloc((size_t)u->np + 1, sizeof *u->data);
	u->len = ecalloc((size_t)u->np + 1, sizeof *u->len);
	for (i = 0; i < u->np; i++) {
		char *s = text_sanitize(json_get(u->p[i].rec, "model_id")->valuestring);

		u->rel[i] = easprintf("%s/%s", s, strrchr(u->p[i].real, '/') + 1);
		free(s);
		u->data[i] = u->p[i].bytes.s;
		u->len[i] = u->p[i].bytes.len;
	}
	for (i = 0; i < u->np; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(u->rel[i], u->rel[j]) == 0)
				return fail("prepared records collide at Hub path %s", u->rel[i]);
		if (store_writer_check(u->w, u->rel[i], "", 0) != STOREW_ABSENT)
			return fail("Hub path already exists: %s", u->rel[i]);
	}
	return 0;
}

/* Without --confirm: what would be done. */
static void
dry_run(const struct upload *u)
{
	for (int i = 0; i < u->np; i++)
		printf("Would upload baseline %s: %s/%s\n", u->what, store_writer_shown(u->w),
		    u->rel[i]);
	printf("Would commit \"Perf: %s %s baseline\" on revision %s\n", u->what,
	    json_get(u->p[0].rec, "model_id")->valuestring, u->parent[0] != '\0' ? u->parent :
	    "(empty store)");
	printf("Nothing was uploaded; run again with --confirm to upload.\n");
}

/* 10: all seeds as one revision of the store, a compare-and-swap. */
static int
commit_seeds(struct upload *u)
{
	char *msg = easprintf("Perf: %s %s baseline", u->what,
	    json_get(u->p[0].rec, "model_id")->valuestring);
	int rc = store_writer_swap(u->w, u->rel, u->data, u->len, (size_t)u->np, msg,
	    u->commit) == 0 ? 0 : EXIT_TROUBLE;

	free(msg);
	if (rc != 0) {
		if (u->reseed)
			warnx("no reseed record landed in %s: the batch is one revision, all or "
			    "nothing", store_writer_shown(u->w));
		return rc;
	}
	for (int i = 0; i < u->np; i++)
		printf("Uploaded baseline %s: %s/%s\n", u->what, store_writer_shown(u->w),
		    u->rel[i]);
	printf("%s commit: %s (parent %s)\n", u->reseed ? "Reseed" : "Seed", u->commit,
	    u->parent[0] != '\0' ? u->parent : "none");
	return 0;
}

/* The upload marker's content. */
static cJSON *
marker_json(const char *commit, const char *parent)
{
	cJSON *marker = json_new_object();

	json_set(marker, "commit_id", json_new_string(commit));
	json_set(marker, "parent_commit", parent[0] != '\0' ? json_new_string(parent) :
	    json_new_null());
	return marker;
}

/*
 * 11: the local marker of an upload (what, commit on parent) in its
 * reservation res; its failure is only a warning.
 */
static void
write_marker(const char *res, const char *what, const char *commit, const char *parent)
{
	cJSON *marker = marker_json(commit, parent);
	char *path = easprintf("%s/uploaded", res);
	buf text = BUF_INIT;

	json_write(&text, marker, JSON_INDENT2, NULL);
	cJSON_Delete(marker);
	if (atomic_write_file(path, text.s, text.len) != 0)
		printf("Warning: %s commit %s succeeded but local upload marker failed: %s\n",
		    what, commit, strerror(errno));
	free(path);
	buf_free(&text);
}

static void
free_upload(struct upload *u)
{
	store_writer_close(u->w);
	for (int i = 0; i < u->ns; i++)
		free_doc(&u->src[i]);
	for (int i = 0; i < u->np; i++) {
		free_doc(&u->p[i]);
		if (u->rel != NULL)
			free(u->rel[i]);
	}
	free(u->src);
	free(u->p);
	free(u->rel);
	free(u->data);
	free(u->len);
	free_doc(&u->m);
	free(u->res);
}

static int upload_decision(struct doc *m);

/* Whether the manifest is a decision's: then *rc is its upload's status. */
static bool
decision_manifest(const char *manifest_path, int *rc)
{
	struct doc m;
	json_error e;
	const cJSON *op;
	bool is = false;

	memset(&m, 0, sizeof m);
	if ((m.real = realpath(manifest_path, NULL)) != NULL &&
	    buf_read_file(&m.bytes, m.real) == 0 &&
	    (m.rec = json_parse(m.bytes.s, m.bytes.len, &e)) != NULL &&
	    cJSON_IsObject(m.rec) && cJSON_IsString(op = json_get(m.rec, "operation")) &&
	    strcmp(op->valuestring, DECISION_OPERATION) == 0) {
		is = true;
		if (!cJSON_IsNumber(op = json_get(m.rec, "manifest_schema_version")) ||
		    op->valuedouble != 1)
			*rc = fail("unsupported or missing prepared-decision manifest schema");
		else
			*rc = upload_decision(&m);
	}
	free_doc(&m);
	return is;
}

static int
upload(const char *manifest_path)
{
	struct upload u;
	int rc;

	if (decision_manifest(manifest_path, &rc))
		return rc;
	memset(&u, 0, sizeof u);
	if ((rc = read_manifest(&u, manifest_path)) == 0 &&
	    (rc = load_sources(&u)) == 0 &&
	    (rc = check_reservation(&u)) == 0 &&
	    (rc = load_prepared(&u)) == 0 &&
	    (rc = u.reseed ? check_reseed_batch(&u) :
	    check_prepared_batch(u.p, u.np, u.src, u.m.rec, u.res)) == 0 &&	/* 6 */
	    (rc = u.reseed ? rederive_reseed(&u) : rederive(u.p, u.np, u.src)) == 0 &&	/* 7 */
	    (rc = open_store(&u)) == 0 &&
	    (rc = check_paths(&u)) == 0) {
		if (!opt.confirm)
			dry_run(&u);
		else if ((rc = commit_seeds(&u)) == 0)
			write_marker(u.res, u.what, u.commit, u.parent);
	}
	fflush(stdout);
	free_upload(&u);
	return rc;
}

/*
 * Decisions (perf-seed(1) DECISIONS): accept, acknowledge, invalid and
 * revert stage one decision and a manifest bound to the store's revision;
 * upload adds it as the next revision, a compare-and-swap.
 */

/* A record of the cohort, for the windows a decision changes. */
struct crec {
	int64_t instant;
	char *path, *timestamp;
	cJSON *rec;
	bool eligible;		/* by the store's rule */
};

struct crecs {
	struct crec *r;
	size_t n;
};

static void
on_crec(const struct store_hit *h, void *ctx)
{
	struct crecs *c = ctx;
	const cJSON *ts = json_get(h->record, "timestamp");

	c->r = erealloc(c->r, (c->n + 1) * sizeof *c->r);
	c->r[c->n].instant = h->instant;
	c->r[c->n].path = estrdup(h->path);
	c->r[c->n].timestamp = cJSON_IsString(ts) ? estrdup(ts->valuestring) : estrdup("");
	c->r[c->n].rec = cJSON_Duplicate(h->record, true);
	c->r[c->n].eligible = h->match[1];
	c->n++;
}

static int
crec_cmp(const void *a, const void *b)
{
	const struct crec *x = a, *y = b;

	return decision_order(x->instant, x->path, y->instant, y->path);
}

static void
free_crecs(struct crecs *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->r[i].path);
		free(c->r[i].timestamp);
		cJSON_Delete(c->r[i].rec);
	}
	free(c->r);
	memset(c, 0, sizeof *c);
}

/* Every record of the exact cohort v in the store directory dir, in window order. */
static int
read_crecs(const char *dir, char *const *v, struct crecs *c)
{
	struct store_query q[2], unused;
	char *raised = NULL;
	store *st;
	int rc = 0;

	memset(c, 0, sizeof *c);
	store_identity_queries(v, &q[1], &unused);
	q[0] = q[1];
	q[0].successful_only = q[0].eligible_only = false;
	if ((st = store_open(dir)) == NULL)
		return EXIT_TROUBLE;
	if (store_scan(st, q, 2, on_crec, c, &raised) != 0)
		rc = EXIT_TROUBLE;
	store_close(st);
	if (rc == 0 && raised != NULL)
		rc = fail("remote tracking history: %s", raised);
	free(raised);
	qsort(c->r, c->n, sizeof *c->r, crec_cmp);
	return rc;
}

/*
 * The rolling window of metric m for the next run: indices into c of its
 * last WINDOW records, under the accept in force in ds (NULL: none).
 * Returns how many; *from and *to get the first and the last.
 */
static size_t
next_window(const struct crecs *c, const struct decisions *ds, char *const *v, int m,
    const char *name, size_t *from, size_t *to)
{
	const struct decision *a = ds == NULL ? NULL : name != NULL ?
	    decisions_accept_named(ds, v, name) : decisions_accept(ds, v, m);
	size_t k = 0, i = c->n;

	*from = *to = c->n;
	while (i-- > 0 && k < WINDOW) {
		const struct crec *r = &c->r[i];
		bool in = a != NULL ? decision_admits(a, r->instant, r->path, r->rec, r->eligible) :
		    r->eligible;

		if (in) {
			if (k++ == 0)
				*to = i;
			*from = i;
		}
	}
	return k;
}

/* "YYYY-MM-DD" of a record's timestamp, or its timestamp as it is. */
static const char *
day_of(const char *ts, char out[16])
{
	snprintf(out, 16, "%.10s", ts);
	return out;
}

/* What the window of the next run is: "K records from D1 to D2" (a new string). */
static char *
window_words(const struct crecs *c, size_t k, size_t from, size_t to)
{
	char a[16], b[16];

	if (k == 0)
		return estrdup("no record (CALIBRATION_NEEDED)");
	if (k == 1)
		return easprintf("1 record from %s", day_of(c->r[from].timestamp, a));
	return easprintf("%zu records from %s to %s", k, day_of(c->r[from].timestamp, a),
	    day_of(c->r[to].timestamp, b));
}

/* The metrics of a decision, "latency, throughput" (a new string). */
static char *
metric_words(const struct decision *d)
{
	buf b = BUF_INIT;

	for (int m = 0; m < METRIC_COUNT; m++)
		if (d->metric[m])
			buf_addf(&b, "%s%s", b.len > 0 ? ", " : "", metric_table[m].key);
	for (size_t j = 0; j < d->nnamed; j++)
		buf_addf(&b, "%s%s", b.len > 0 ? ", " : "", d->named[j]);
	return buf_detach(&b);
}

/*
 * The named metric that --metric arg names in a record: arg is a name in
 * its "metrics", or "<model_id>/<name>" (the key globs name); NULL when
 * none (the name borrows from rec).
 */
static const char *
named_in(const cJSON *rec, const char *arg)
{
	const cJSON *metrics = json_get(rec, "metrics"), *e;
	const char *model = json_str(rec, "model_id");
	size_t n = strlen(model);

	if (!cJSON_IsObject(metrics))
		return NULL;
	if ((e = json_get(metrics, arg)) != NULL)
		return e->string;
	if (n > 0 && strncmp(arg, model, n) == 0 && arg[n] == '/' &&
	    (e = json_get(metrics, arg + n + 1)) != NULL)
		return e->string;
	return NULL;
}

/* Whether a record holds named metric name with a measured (finite) value. */
static bool
named_holds(const cJSON *rec, const char *name)
{
	const cJSON *v = json_get(json_get(json_get(rec, "metrics"), name), "value");

	return cJSON_IsNumber(v) && isfinite(v->valuedouble);
}

/* Metric i of a decision: one of the six below METRIC_COUNT, else a named one. */
static const char *
decided_metric(const struct decision *d, size_t i)
{
	return i < METRIC_COUNT ? metric_table[i].key : d->named[i - METRIC_COUNT];
}

static bool
decides(const struct decision *d, size_t i)
{
	return i >= METRIC_COUNT || d->metric[i];
}

/*
 * Prints what the accept windows change: the next run's window of each of
 * d's metrics with the decisions before (ds) and after (with, d added or
 * its revert's target gone).
 */
static void
print_window_change(const struct crecs *c, const struct decisions *before,
    const struct decisions *after, const struct decision *d, const char *model,
    const char *gpu)
{
	size_t all = METRIC_COUNT + d->nnamed;
	char **w0 = ecalloc(all, sizeof *w0), **w1 = ecalloc(all, sizeof *w1);
	bool *done = ecalloc(all, sizeof *done);

	for (size_t m = 0; m < all; m++) {
		size_t f0, t0, f1, t1, k0, k1;
		const char *name = m < METRIC_COUNT ? NULL : d->named[m - METRIC_COUNT];

		if (!decides(d, m))
			continue;
		k0 = next_window(c, before, d->identity, (int)m, name, &f0, &t0);
		k1 = next_window(c, after, d->identity, (int)m, name, &f1, &t1);
		w0[m] = window_words(c, k0, f0, t0);
		w1[m] = window_words(c, k1, f1, t1);
	}
	/* One line for the metrics whose windows change alike. */
	for (size_t m = 0; m < all; m++) {
		buf names = BUF_INIT;

		if (!decides(d, m) || done[m])
			continue;
		for (size_t j = m; j < all; j++)
			if (decides(d, j) && !done[j] && strcmp(w0[j], w0[m]) == 0 &&
			    strcmp(w1[j], w1[m]) == 0) {
				buf_addf(&names, "%s%s", names.len > 0 ? ", " : "",
				    decided_metric(d, j));
				done[j] = true;
			}
		if (strcmp(w0[m], w1[m]) == 0)
			printf("The next run of %s on %s keeps its window of %s: %s.\n", model, gpu,
			    names.s, w0[m]);
		else
			printf("The next run of %s on %s will be compared on %s with %s instead of "
			    "%s.\n", model, gpu, names.s, w1[m], w0[m]);
		buf_free(&names);
	}
	for (size_t m = 0; m < all; m++) {
		free(w0[m]);
		free(w1[m]);
	}
	free(w0);
	free(w1);
	free(done);
}

/* The decisions of ds and d (a copy that borrows every string). */
static void
decisions_with(const struct decisions *ds, const struct decision *d, struct decisions *out)
{
	out->n = ds->n + 1;
	out->d = ecalloc(out->n, sizeof *out->d);
	out->d[0] = *d;
	out->d[0].in_force = true;
	if (ds->n > 0)		/* ds->d is NULL when there is none */
		memcpy(out->d + 1, ds->d, ds->n * sizeof *ds->d);
	/* d is the newest: a revert undoes its target. */
	if (d->kind == DECISION_REVERT)
		for (size_t i = 1; i < out->n; i++)
			if (strcmp(out->d[i].id, d->reverts) == 0)
				out->d[i].in_force = false;
}

/* The stored record a decision is on, read from the store directory dir. */
static int
stored_record(const char *dir, const char *rel, char *const *v, cJSON **rec)
{
	char *path = easprintf("%s/%s", dir, rel);
	buf text = BUF_INIT;
	json_error e;
	struct identity id;
	int rc = 0;

	*rec = NULL;
	/* A git store's partial clone checks it out first (sparse.h). */
	if (rel[0] == '.' || strstr(rel, "/.") != NULL || strstr(rel, "..") != NULL ||
	    sparse_need_file(dir, rel) != 0 || buf_read_file(&text, path) != 0 ||
	    (*rec = json_parse(text.s, text.len, &e)) == NULL || !cJSON_IsObject(*rec))
		rc = fail("the record %s is not in the store", rel);
	else {
		identity_of(*rec, &id);
		for (int k = 0; k < IDENTITY_KEYS && rc == 0; k++)
			if (strcmp(id.value[k], v[k]) != 0)
				rc = fail("the record %s in the store is not of the cohort decided on "
				    "(its %s is %s)", rel, identity_keys[k], id.value[k]);
		identity_free(&id);
	}
	if (rc != 0) {
		cJSON_Delete(*rec);
		*rec = NULL;
	}
	free(path);
	buf_free(&text);
	return rc;
}

/*
 * The checks of a decision against the store directory dir and its
 * decisions ds, at prepare and again at upload: the record is in the
 * store and holds the metrics; nothing in the store contradicts it.
 */
static int
check_decision(const char *dir, const struct decisions *ds, const struct decision *d)
{
	const struct decision *t;
	cJSON *rec = NULL;
	size_t len;
	int rc = 0;
	double x;

	text_py_strip(d->reason, &len);
	if (len == 0)
		return fail("a decision needs a reason (--reason)");
	if (d->kind == DECISION_REVERT) {
		if ((t = decisions_find(ds, d->reverts)) == NULL)
			return fail("no decision %s in the store", d->reverts);
		if (t->kind == DECISION_REVERT)
			return fail("decision %s is a revert: decide again instead", d->reverts);
		if (!t->in_force)
			return fail("decision %s was reverted already", d->reverts);
		if (t->instant >= d->instant)
			return fail("decision %s is not older than the revert", d->reverts);
		return 0;
	}
	if ((rc = stored_record(dir, d->record, d->identity, &rec)) != 0)
		return rc;
	for (int m = 0; m < METRIC_COUNT && rc == 0; m++) {
		if (!d->metric[m])
			continue;
		if (policy_coerce(json_get(rec, metric_table[m].key), &x) != COERCE_OK)
			rc = fail("the record %s has no %s", d->record, metric_table[m].key);
	}
	for (size_t j = 0; j < d->nnamed && rc == 0; j++)
		if (!named_holds(rec, d->named[j]))
			rc = fail("the record %s has no metric '%s'", d->record, d->named[j]);
	if (rc == 0 && d->kind == DECISION_ACCEPT &&
	    (!cJSON_IsString(json_get(rec, "run_source")) ||
	    strcmp(json_get(rec, "run_source")->valuestring, "scheduled_main") != 0))
		rc = fail("the record %s is not a scheduled-main run: only one can start a "
		    "baseline", d->record);
	cJSON_Delete(rec);
	for (size_t i = 0; i < ds->n && rc == 0; i++) {
		t = &ds->d[i];
		if (!decision_on(t, d->identity) || t->kind == DECISION_REVERT)
			continue;
		for (size_t m = 0; m < METRIC_COUNT + d->nnamed && rc == 0; m++) {
			const char *name = m < METRIC_COUNT ? NULL : d->named[m - METRIC_COUNT];
			const char *what = decided_metric(d, m);
			const struct decision *in_force = name != NULL ?
			    decisions_latest_named(ds, d->identity, name, d->record) :
			    decisions_latest(ds, d->identity, (int)m, d->record);
			const struct decision *acc = name != NULL ?
			    decisions_accept_named(ds, d->identity, name) :
			    decisions_accept(ds, d->identity, (int)m);

			if (name != NULL ? !decision_on_named(t, name) : !d->metric[m] || !t->metric[m])
				continue;
			if (strcmp(t->record, d->record) == 0 && t->instant >= d->instant)
				rc = fail("it contradicts the later decision %s (%s of %s at %s, %s)",
				    t->id, decision_kind_name(t->kind), what, t->record, t->when);
			else if (strcmp(t->record, d->record) == 0 && t->in_force &&
			    t->kind == d->kind && in_force == t)
				rc = fail("%s of %s at %s is decided already: decision %s",
				    decision_kind_name(t->kind), what, t->record, t->id);
			else if (d->kind == DECISION_ACCEPT && t->kind == DECISION_ACCEPT &&
			    t->in_force && acc == t &&
			    decision_order(t->record_instant, t->record, d->record_instant,
			    d->record) > 0)
				rc = fail("it contradicts the later accept %s of %s at %s", t->id,
				    what, t->record);
		}
	}
	return rc;
}

/* --by, else $BUILDKITE_BUILD_CREATOR, else git's user.name, else $USER (a new string). */
static char *
decider(void)
{
	static const char *const args[] = { "config", "user.name", NULL };
	const char *env = getenv("BUILDKITE_BUILD_CREATOR");
	buf out = BUF_INIT;
	size_t len;
	const char *s;

	if (opt.by != NULL)
		return estrdup(opt.by);
	if (env != NULL && *env != '\0')
		return estrdup(env);
	if (git_run(".", args, NULL, 0, &out, NULL) == 0 && out.len > 0) {
		s = text_py_strip(out.s, &len);
		if (len > 0) {
			char *r = estrndup(s, len);

			buf_free(&out);
			return r;
		}
	}
	buf_free(&out);
	return estrdup((env = getenv("USER")) != NULL && *env != '\0' ? env : "unknown");
}

/* A perf-changes line (--change): the cohort, metric and record of its change point. */
static int
read_change(struct decision *d, char **model, char **gpu)
{
	char *paths[1] = { (char *)opt.change };
	jsonl_reader *r = jsonl_open(paths, 1);
	jsonl_span sp;
	cJSON *o, *extra = NULL;
	int rc = 0, m;

	if ((o = jsonl_next(r, &sp)) != NULL)
		extra = jsonl_next(r, &sp);
	if (jsonl_errors(r) > 0)
		rc = EXIT_TROUBLE;
	else if (o == NULL || extra != NULL)
		rc = fail("%s: a decision is on one change point: give one perf-changes line",
		    opt.change);
	for (int k = 0; k < IDENTITY_KEYS && rc == 0; k++) {
		const cJSON *v = json_get(o, identity_keys[k]);

		if (!cJSON_IsString(v) || *v->valuestring == '\0')
			rc = fail("%s: unknown cohort: the change point has no %s (only a v2 "
			    "cohort can be decided on)", opt.change, identity_keys[k]);
		else
			d->identity[k] = estrdup(v->valuestring);
	}
	if (rc == 0 && (*json_str(o, "metric") == '\0' || *json_str(o, "path") == '\0'))
		rc = fail("%s: a change point names its metric and path", opt.change);
	/* Not one of the six: a named metric's change point, its name within the cohort. */
	m = rc == 0 ? policy_metric_index(json_str(o, "metric")) : -1;
	if (rc == 0) {
		const char *metric = json_str(o, "metric"), *mid = json_str(o, "model_id");
		size_t n = strlen(mid);

		for (int i = 0; i < METRIC_COUNT && rc == 0; i++)
			if (opt.any_metric && opt.metric[i] && i != m)
				rc = fail("%s: the change point is of %s, not %s", opt.change,
				    metric, metric_table[i].key);
		for (int i = 0; i < opt.nnames && rc == 0; i++)
			if (m >= 0 || (strcmp(opt.names[i], metric) != 0 &&
			    !(n > 0 && strncmp(opt.names[i], mid, n) == 0 &&
			    opt.names[i][n] == '/' && strcmp(opt.names[i] + n + 1, metric) == 0)))
				rc = fail("%s: the change point is of %s, not %s", opt.change,
				    metric, opt.names[i]);
	}
	if (rc == 0) {
		if (m >= 0)
			d->metric[m] = true;
		else
			decision_add_named(d, json_str(o, "metric"));
		d->record = estrdup(json_str(o, "path"));
		if (*json_str(o, "timestamp") != '\0')
			d->record_timestamp = estrdup(json_str(o, "timestamp"));
		if (*json_str(o, "commit_sha") != '\0')
			d->commit = estrdup(json_str(o, "commit_sha"));
		*model = estrdup(json_str(o, "model_id"));
		*gpu = estrdup(json_str(o, "gpu_type"));
	}
	cJSON_Delete(o);
	cJSON_Delete(extra);
	jsonl_close(r);
	return rc;
}

/*
 * The named metrics of a decision on the record of s: those --metric
 * names (each must be in the record), else every one it measured.
 */
static int
read_target_named(struct decision *d, const struct doc *s)
{
	const cJSON *e;
	const char *name;

	for (int i = 0; i < opt.nnames; i++) {
		if ((name = named_in(s->rec, opt.names[i])) == NULL)
			return fail("%s: --metric: unknown metric '%s': the record has no such metric (one "
			    "of the six, a name in its \"metrics\", or \"%s/NAME\")", s->arg,
			    opt.names[i], json_str(s->rec, "model_id"));
		decision_add_named(d, name);
	}
	if (!opt.any_metric)
		cJSON_ArrayForEach(e, json_get(s->rec, "metrics"))
			if (named_holds(s->rec, e->string))
				decision_add_named(d, e->string);
	return 0;
}

/* --source-result: the cohort, metrics and record of a tracking record or artifact. */
static int
read_target(struct decision *d, char **model, char **gpu)
{
	struct doc s;
	char *rel;
	int rc;
	double x;

	if ((rc = load_doc(&s, opt.sources[0], "source record must contain a JSON object")) != 0) {
		free_doc(&s);
		return rc;
	}
	if (!s.id.complete)
		rc = fail("%s: unknown cohort: %s", s.arg, s.id.error != NULL ? s.id.error :
		    "no complete comparison identity");
	else if ((rel = store_record_path(s.rec)) == NULL)
		rc = fail("%s: the record has no store path (model_id and timestamp)", s.arg);
	else {
		for (int k = 0; k < IDENTITY_KEYS; k++)
			d->identity[k] = estrdup(s.id.value[k]);
		d->record = rel;
		d->record_timestamp = estrdup(json_str(s.rec, "timestamp"));
		if (*json_str(s.rec, "commit_sha") != '\0')
			d->commit = estrdup(json_str(s.rec, "commit_sha"));
		for (int m = 0; m < METRIC_COUNT; m++)
			d->metric[m] = opt.any_metric ? opt.metric[m] :
			    policy_coerce(json_get(s.rec, metric_table[m].key), &x) == COERCE_OK;
		rc = read_target_named(d, &s);
		*model = json_pystr_dup(json_get(s.rec, "model_id"));
		*gpu = json_get(s.rec, "gpu_type") != NULL ?
		    json_pystr_dup(json_get(s.rec, "gpu_type")) : estrdup("unknown");
	}
	free_doc(&s);
	return rc;
}

/*
 * The model and GPU of the record a decision is on, for the messages: its
 * stored record's, else its workload and hardware profile.
 */
static void
names_of(const char *dir, const struct decision *t, char **model, char **gpu)
{
	char *path = easprintf("%s/%s", dir, t->record);
	buf text = BUF_INIT;
	json_error e;
	cJSON *rec = NULL;

	if (sparse_need_file(dir, t->record) == 0 && buf_read_file(&text, path) == 0)
		rec = json_parse(text.s, text.len, &e);
	*model = estrdup(cJSON_IsString(json_get(rec, "model_id")) ?
	    json_get(rec, "model_id")->valuestring : t->identity[IDENTITY_WORKLOAD]);
	*gpu = estrdup(cJSON_IsString(json_get(rec, "gpu_type")) ?
	    json_get(rec, "gpu_type")->valuestring : t->identity[IDENTITY_HARDWARE]);
	cJSON_Delete(rec);
	buf_free(&text);
	free(path);
}

/* Prints what a decision changes, for the reviewer. */
static int
print_decision(const char *dir, const struct decisions *ds, const struct decision *d,
    const char *model, const char *gpu)
{
	const struct decision *t = d->kind == DECISION_REVERT ? decisions_find(ds, d->reverts) : d;
	char *metrics = metric_words(t);
	struct decisions after;
	struct crecs c;
	int rc = 0;

	printf("Decision %s: %s of %s at %s (%s, commit %s) by %s at %s\n", d->id,
	    decision_kind_name(d->kind), metrics, t->record,
	    t->record_timestamp != NULL ? t->record_timestamp : "no timestamp",
	    t->commit != NULL ? t->commit : "unknown", d->by, d->when);
	printf("  reason: %s\n", d->reason);
	if (d->link != NULL)
		printf("  link: %s\n", d->link);
	if (d->kind == DECISION_REVERT)
		printf("It undoes decision %s (%s by %s at %s).\n", t->id,
		    decision_kind_name(t->kind), t->by, t->when);
	if (t->kind == DECISION_ACCEPT) {
		if ((rc = read_crecs(dir, t->identity, &c)) == 0) {
			decisions_with(ds, d, &after);
			print_window_change(&c, ds, &after, t, model, gpu);
			free(after.d);
		}
		free_crecs(&c);
	} else if (d->kind == DECISION_REVERT)
		printf("Its change points of %s at %s will gate perf-changes again.\n", metrics,
		    t->record);
	else
		printf("Its change points of %s at %s will show as %s%s%s and no longer gate "
		    "perf-changes; the rolling baseline does not move.\n", metrics, t->record,
		    decision_state_name(d->kind), d->link != NULL ? " " : "",
		    d->link != NULL ? d->link : "");
	free(metrics);
	return rc;
}

/* The reservation of a decision: "<staging>/.decision-reservations/<id>". */
static char *
decision_reservation_of(const char *staging_real, const char *id)
{
	return easprintf("%s/" DECISION_RESERVATIONS "/%s", staging_real, id);
}

/* Stages the decision file and its manifest in the reservation; undone on failure. */
static int
stage_decision(const struct decision *d, const cJSON *dj, const char *staging,
    const char *revision)
{
	struct made made = { NULL, 0 };
	char *res = decision_reservation_of(staging, d->id), *file = NULL, *mpath = NULL;
	buf text = BUF_INIT;
	cJSON *m = NULL;
	int rc;

	if ((rc = reserve(res, &made)) != 0)
		goto undo;
	file = easprintf("%s/%s%s", res, d->id, DECISION_SUFFIX);
	json_write(&text, dj, JSON_INDENT2, NULL);
	if (atomic_create_file(file, text.s, text.len) != 0) {
		rc = fail_errno("%s: cannot write", file);
		goto undo;
	}
	made_add(&made, file);
	m = json_new_object();
	json_set(m, "manifest_schema_version", json_new_int(1));
	json_set(m, "operation", json_new_string(DECISION_OPERATION));
	json_set(m, "repository", repository_of(opt.store.spec));
	json_set(m, "staging_root", json_new_string(staging));
	json_set(m, "store_revision", revision != NULL ? json_new_string(revision) :
	    json_new_null());
	json_set(m, "decision", file_entry(file, text.s, text.len));
	if ((rc = write_manifest(res, m, &made, &mpath)) != 0)
		goto undo;
	printf("Prepared decision: %s\n", file);
	printf("Prepared upload manifest: %s\n", mpath);
	goto done;
undo:
	made_undo(&made);
done:
	made_free(&made);
	cJSON_Delete(m);
	buf_free(&text);
	free(res);
	free(file);
	free(mpath);
	return rc;
}

static int
decide(enum decision_kind kind)
{
	struct decision d;
	struct decisions ds = { NULL, 0 };
	char *staging = path_resolve(opt.staging), ts[40];
	char *model = NULL, *gpu = NULL;
	store_writer *w = NULL;
	const struct decision *t;
	cJSON *dj = NULL;
	int rc = 0;

	memset(&d, 0, sizeof d);
	d.kind = kind;
	if ((rc = roots_apart(staging, "decision")) != 0)
		goto done;
	if ((w = open_fetched()) == NULL) {
		rc = EXIT_TROUBLE;
		goto done;
	}
	if (decisions_load(store_writer_dir(w), &ds) != 0) {
		rc = EXIT_TROUBLE;
		goto done;
	}
	if (kind == DECISION_REVERT) {
		if ((t = decisions_find(&ds, opt.decision)) == NULL) {
			rc = fail("no decision %s in the store", opt.decision);
			goto done;
		}
		for (int k = 0; k < IDENTITY_KEYS; k++)
			d.identity[k] = estrdup(t->identity[k]);
		memcpy(d.metric, t->metric, sizeof d.metric);
		for (size_t j = 0; j < t->nnamed; j++)
			decision_add_named(&d, t->named[j]);
		d.record = estrdup(t->record);
		d.record_timestamp = t->record_timestamp != NULL ? estrdup(t->record_timestamp) : NULL;
		d.commit = t->commit != NULL ? estrdup(t->commit) : NULL;
		d.reverts = estrdup(t->id);
		names_of(store_writer_dir(w), t, &model, &gpu);
	} else if ((rc = opt.change != NULL ? read_change(&d, &model, &gpu) :
	    read_target(&d, &model, &gpu)) != 0)
		goto done;
	d.by = decider();
	d.when = estrdup(isotime_format(ts, opt.now_given ? opt.now : isotime_now()));
	isotime_parse(d.when, &d.instant);
	d.reason = estrdup(opt.reason);
	d.link = opt.link != NULL ? estrdup(opt.link) : NULL;
	decision_set_record_instant(&d);
	dj = decision_json(&d);
	if ((rc = check_decision(store_writer_dir(w), &ds, &d)) != 0 ||
	    (rc = print_decision(store_writer_dir(w), &ds, &d, model, gpu)) != 0)
		goto done;
	rc = stage_decision(&d, dj, staging, store_writer_revision(w));
done:
	fflush(stdout);
	store_writer_close(w);
	decisions_free(&ds);
	decision_free(&d);
	cJSON_Delete(dj);
	free(model);
	free(gpu);
	free(staging);
	return rc;
}

/* Upload of a decision: the manifest read as far as "operation" says so. */
static int
upload_decision(struct doc *m)
{
	cJSON *repo = repository_of(opt.store.spec), *again = NULL;
	const cJSON *v, *entry = json_get(m->rec, "decision"), *rev = json_get(m->rec, "store_revision");
	struct doc f;
	struct decision d;
	struct decisions ds = { NULL, 0 };
	store_writer *w = NULL;
	char *staging = NULL, *res = NULL, *mdir = NULL, *why, *rel = NULL, *msg = NULL;
	char parent[64] = "", commit[64] = "";
	int rc = 0;

	memset(&f, 0, sizeof f);
	memset(&d, 0, sizeof d);
	if (!json_equal(json_get(m->rec, "repository"), repo))
		rc = fail("prepared-decision manifest repository does not match the configured "
		    "store");
	else if (!cJSON_IsString(v = json_get(m->rec, "staging_root")) || *v->valuestring == '\0' ||
	    !cJSON_IsObject(entry) || (!cJSON_IsString(rev) && !cJSON_IsNull(rev)))
		rc = fail("prepared-decision manifest must retain its staging root, store revision "
		    "and decision");
	else if ((rc = load_entry(&f, entry, "prepared decision changed after review",
	    "prepared decision must contain a JSON object")) != 0)
		;
	else if ((why = decision_parse(f.rec, &d)) != NULL) {
		rc = fail("%s: %s", f.real, why);
		free(why);
	} else if ((again = decision_json(&d)) == NULL || !json_identical(again, f.rec))
		rc = fail("%s: prepared decision changed after review (its id no longer matches)",
		    f.real);
	if (rc != 0)
		goto done;
	staging = path_resolve(json_get(m->rec, "staging_root")->valuestring);
	res = decision_reservation_of(staging, d.id);
	mdir = estrdup(m->real);
	*strrchr(mdir, '/') = '\0';
	rel = easprintf("%s/%s%s", res, d.id, DECISION_SUFFIX);
	if (strcmp(mdir, res) != 0 || strcmp(f.real, rel) != 0) {
		rc = fail("prepared-decision manifest is outside its decision reservation");
		goto done;
	}
	free(rel);
	rel = decision_path(d.id);
	if ((rc = open_for_upload("decisions", &w, parent)) != 0)
		goto done;
	if (strcmp(cJSON_IsString(rev) ? rev->valuestring : "", parent) != 0) {
		rc = fail("%s: the store moved since the decision was reviewed at revision %s (it "
		    "is at revision %s now); nothing was uploaded: prepare the decision again",
		    store_writer_shown(w), cJSON_IsString(rev) ? rev->valuestring : "(empty)",
		    parent[0] != '\0' ? parent : "(empty)");
		goto done;
	}
	if (decisions_load(store_writer_dir(w), &ds) != 0) {
		rc = EXIT_TROUBLE;
		goto done;
	}
	if ((rc = check_decision(store_writer_dir(w), &ds, &d)) != 0)
		goto done;
	if (store_writer_check(w, rel, "", 0) != STOREW_ABSENT) {
		rc = fail("the store holds decision %s already", d.id);
		goto done;
	}
	msg = easprintf("Perf: %s decision %s", decision_kind_name(d.kind), d.id);
	if (!opt.confirm) {
		printf("Would upload decision: %s/%s\n", store_writer_shown(w), rel);
		printf("Would commit \"%s\" on revision %s\n", msg, parent[0] != '\0' ? parent :
		    "(empty store)");
		printf("Nothing was uploaded; run again with --confirm to upload.\n");
		goto done;
	}
	if (store_writer_swap(w, &rel, &f.bytes.s, &f.bytes.len, 1, msg, commit) != 0) {
		rc = EXIT_TROUBLE;
		goto done;
	}
	printf("Uploaded decision: %s/%s\n", store_writer_shown(w), rel);
	printf("Decision commit: %s (parent %s)\n", commit, parent[0] != '\0' ? parent : "none");
	write_marker(res, "decision", commit, parent);
done:
	fflush(stdout);
	store_writer_close(w);
	decisions_free(&ds);
	decision_free(&d);
	free_doc(&f);
	cJSON_Delete(repo);
	cJSON_Delete(again);
	free(staging);
	free(res);
	free(mdir);
	free(rel);
	free(msg);
	return rc;
}

/* perf-seed decisions: every decision, newest first. */
static int
list_decisions(void)
{
	store_writer *w = open_fetched();
	struct decisions ds = { NULL, 0 };
	buf text = BUF_INIT;
	int rc = 0;

	if (w == NULL)
		return EXIT_TROUBLE;
	if (decisions_load(store_writer_dir(w), &ds) != 0)
		rc = EXIT_TROUBLE;
	for (size_t i = 0; i < ds.n && rc == 0; i++) {
		struct decision *d = &ds.d[i];

		if (opt.json) {
			cJSON *o = decision_json(d);

			json_set(o, "in_force", json_new_bool(d->in_force));
			buf_reset(&text);
			json_write(&text, o, JSON_COMPACT, NULL);
			printf("%s\n", text.s);
			cJSON_Delete(o);
		} else {
			char *metrics = metric_words(d);

			printf("%s %s %-11s %s/%s on %s: %s at %s by %s%s%s: %s\n", d->when, d->id,
			    decision_kind_name(d->kind), d->identity[IDENTITY_WORKLOAD],
			    d->identity[IDENTITY_VARIANT], d->identity[IDENTITY_HARDWARE], metrics,
			    d->record, d->by,
			    d->reverts != NULL ? " reverts " : "",
			    d->reverts != NULL ? d->reverts : "", d->reason);
			if (!d->in_force)
				printf("  (reverted)\n");
			free(metrics);
		}
	}
	if (rc == 0 && ds.n == 0 && !opt.json)
		printf("No decisions.\n");
	decisions_free(&ds);
	store_writer_close(w);
	buf_free(&text);
	return rc;
}

/* The subcommands' operands, then their work. */
/* prepare, reseed: what each needs. */
static int
cmd_stage(const char *name, int nops, char **ops)
{
	(void)ops;
	if (opt.nsources == 0 || opt.rationale == NULL || nops > 0) {
		warnx(nops > 0 ? "%s takes no operands" :
		    opt.nsources == 0 ? "%s needs at least one --source-result" :
		    "%s needs --intent-rationale", name);
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	return strcmp(name, "reseed") == 0 ? reseed() : prepare();
}

static int
cmd_upload(const char *name, int nops, char **ops)
{
	(void)name;
	if (nops != 1) {
		warnx("upload takes one manifest");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	return upload(ops[0]);
}

/* accept, acknowledge, invalid, revert: what each needs. */
static int
cmd_decide(const char *name, int nops, char **ops)
{
	enum decision_kind kind;

	(void)ops;
	decision_kind_of(name, &kind);
	if (nops > 0 || opt.reason == NULL ||
	    (kind == DECISION_REVERT) != (opt.decision != NULL) ||
	    (kind != DECISION_REVERT && (opt.nsources > 0) == (opt.change != NULL)) ||
	    opt.nsources > 1 || (kind == DECISION_ACCEPT && opt.change != NULL) ||
	    (kind == DECISION_REVERT && (opt.nsources > 0 || opt.change != NULL ||
	    opt.any_metric || opt.link != NULL))) {
		warnx(nops > 0 ? "%s takes no operands" : opt.reason == NULL ?
		    "%s needs --reason" : kind == DECISION_REVERT ?
		    "%s takes --decision and no record, change or metric" :
		    kind == DECISION_ACCEPT ? "%s needs one --source-result" :
		    "%s needs one --source-result or one --change", name);
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	return decide(kind);
}

static int
cmd_decisions(const char *name, int nops, char **ops)
{
	(void)name;
	(void)ops;
	if (nops > 0) {
		warnx("decisions takes no operands");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	return list_decisions();
}

static const struct command {
	const char *name;
	const char *own;	/* the options only it takes (getopt's values) */
	int (*run)(const char *name, int nops, char **ops);
} commands[] = {
	{ "prepare", "SROGMN", cmd_stage },
	{ "reseed", "SROGMN", cmd_stage },
	{ "upload", "Y", cmd_upload },
	{ "accept", "SGNEmBL", cmd_decide },
	{ "acknowledge", "SGNEmBLc", cmd_decide },
	{ "invalid", "SGNEmBLc", cmd_decide },
	{ "revert", "GNEBD", cmd_decide },
	{ "decisions", "J", cmd_decisions },
};

/* The subcommand argv[1] names; exits after -h, --version or a usage error. */
static const struct command *
command_of(int argc, char *argv[])
{
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))
		opt_usage(&option_table, EXIT_PASS);
	if (argc >= 2 && strcmp(argv[1], "--version") == 0)
		cli_version();
	for (size_t i = 0; argc >= 2 && i < sizeof commands / sizeof *commands; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return &commands[i];
	if (argc >= 2)
		warnx("unknown command '%s'", argv[1]);
	opt_usage(&option_table, EXIT_TROUBLE);
}

/* An option of another subcommand is an unknown one. */
static bool
foreign_option(const struct command *cmd, int c)
{
	if (c > 0 && c <= 0xff && strchr(cmd->own, c) != NULL)
		return false;
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (&commands[i] != cmd && c > 0 && c <= 0xff &&
		    strchr(commands[i].own, c) != NULL)
			return true;
	return false;
}

/* Reads the environment and the options after the subcommand (argv[0]) into opt. */
static void
parse_options(int argc, char *argv[], const struct command *cmd)
{
	const char *env;
	int c;

	opt.staging = (env = getenv("PERFORMANCE_RESEED_STAGING_ROOT")) != NULL ? env :
	    "/tmp/performance_reseed_prepared";
	opt.operator = (env = getenv("USER")) != NULL && *env != '\0' ? env : NULL;
	opt.max_regression = 0.05;
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		if (foreign_option(cmd, c)) {
			warnx("%s: unknown option for %s", argv[optind - 1], cmd->name);
			opt_usage(&option_table, EXIT_TROUBLE);
		}
		if (store_opts_take(&opt.store, c, optarg))
			continue;
		switch (c) {
		case 'S':
			opt.sources = erealloc(opt.sources,
			    (size_t)(opt.nsources + 1) * sizeof *opt.sources);
			opt.sources[opt.nsources++] = optarg;
			break;
		case 'R': opt.rationale = optarg; break;
		case 'O': opt.operator = *optarg != '\0' ? optarg : NULL; break;
		case 'G': opt.staging = optarg; break;
		case 'M':
			opt.max_regression = cli_double(opt_text(&option_table),
			    "--max-intra-batch-regression", optarg, 0, INFINITY, "a finite non-negative number");
			break;
		case 'N':
			opt.now = cli_time(opt_text(&option_table), "--now", optarg,
			    "an ISO 8601 time");
			opt.now_given = true;
			break;
		case 'Y': opt.confirm = true; break;
		case 'E': opt.reason = optarg; break;
		case 'm':
			/* Not one of the six: a named metric, checked against the record. */
			if (*optarg == '\0') {
				warnx("--metric: empty metric name");
				opt_usage(&option_table, EXIT_TROUBLE);
			}
			if (policy_metric_index(optarg) >= 0)
				opt.metric[policy_metric_index(optarg)] = true;
			else {
				opt.names = erealloc(opt.names, (size_t)(opt.nnames + 1) *
				    sizeof *opt.names);
				opt.names[opt.nnames++] = optarg;
			}
			opt.any_metric = true;
			break;
		case 'B': opt.by = *optarg != '\0' ? optarg : NULL; break;
		case 'L': opt.link = *optarg != '\0' ? optarg : NULL; break;
		case 'c': opt.change = optarg; break;
		case 'D': opt.decision = optarg; break;
		case 'J': opt.json = true; break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
}

int
main(int argc, char *argv[])
{
	const struct command *cmd;
	int rc;

	git_askpass_main(argc, argv);
	err_init(argv[0]);
	cmd = command_of(argc, argv);
	argc--;
	argv++;
	parse_options(argc, argv, cmd);
	if ((opt.store.spec = store_spec(opt.store.spec)) == NULL)
		return EXIT_TROUBLE;
	/* Set but empty is the working directory, as the tracking root. */
	if (*opt.staging == '\0')
		opt.staging = ".";
	rc = cmd->run(cmd->name, argc - optind, argv + optind);
	free(opt.sources);
	free(opt.names);
	/* What was staged or uploaded is named on stdout: losing it is a failure. */
	if (jsonl_finish(stdout, "standard output") != 0)
		rc = EXIT_TROUBLE;
	return rc;
}
