/*
 * perf-upload: stores compared records in the history store by the upload
 * policy (perf-upload(1)): a directory or a git remote, one revision
 * (one git commit) per batch. Records pass through to stdout. With
 * --export, writes the whole store as one gzip JSON-lines stream instead.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "core/atomic.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/git.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/opt.h"
#include "core/text.h"
#include "lane/policy.h"
#include "lane/store/index.h"
#include "lane/store/read.h"
#include "lane/store/store_opts.h"
#include "lane/store/write.h"


static struct {
	struct store_opts store;	/* -s, --cache */
	const char *output;
	enum upload_policy policy;
	bool export;
	bool reindex;
} opt;

/* A record of the batch that the policy stores. */
struct item {
	char *path;		/* store-relative */
	buf text;		/* the stored bytes */
	char *file;
	long line;
	char *model_id;		/* str() */
	char *sha7;		/* first 7 of commit_sha, or "unknown" */
	enum { ITEM_NEW, ITEM_STORED, ITEM_DUPLICATE, ITEM_FAILED } state;
};

/* The batch: the records the policy stores, and whether one had a problem. */
struct batch {
	struct item *items;
	size_t n;
	bool trouble;
};

static const struct opt_def options[] = {
	STORE_OPT_STORE("the history store: a directory or git+URL"),
	STORE_OPT_CACHE_DIR("where the cache clones of git stores are"),
	{ 'p', "policy", 0, "never | pass | always",
	    "the upload policy, trimmed and lower-cased first", NULL, NULL },
	{ 0, "export", 'E', NULL,
	    "write the store as one gzip JSON-lines stream instead", NULL, NULL },
	{ 'o', "output", 0, "file", "where --export writes", NULL, NULL },
	{ 0, "reindex", 'R', NULL, "build or repair the store's index instead", NULL, NULL },
	OPT_HELP("print usage and exit"),
	OPT_VERSION,
	OPT_END,
};

static const struct opt_table option_table = {
	.synopsis =
	    "usage: perf-upload [-s store] [--cache dir] [-p never|pass|always] [file ...]\n"
	    "       perf-upload --export [-s store] [--cache dir] [-o file]\n"
	    "       perf-upload --reindex [-s store]\n",
	.width = 26,
	.flags = 0,
	.opts = options,
};

/* The reference's "success" for the policy: missing counts as true. */
static bool
record_success(const cJSON *rec)
{
	const cJSON *v = json_get(rec, "success");

	return v == NULL || json_truthy(v);
}

static char *
pystr_or_none(const cJSON *v)
{
	return v != NULL ? json_pystr_dup(v) : estrdup("None");
}

/* Passes a record to stdout; adds it to the batch (ctx) when the policy stores it. */
static void
process(jsonl_reader *r, const jsonl_span *s, cJSON *rec, void *ctx)
{
	struct batch *b = ctx;
	const cJSON *sha = json_get(rec, "commit_sha");
	bool ok = record_success(rec);
	struct item *it;
	char *path, *id, *src;
	buf where = BUF_INIT;

	jsonl_put(r, s, rec);
	id = pystr_or_none(json_get(rec, "model_id"));
	if (opt.policy == UPLOAD_NEVER || (opt.policy == UPLOAD_PASS && !ok)) {
		src = pystr_or_none(json_get(rec, "run_source"));
		fprintf(stderr, "Tracking upload skipped for %s (%s, success=%s)\n", id, src,
		    ok ? "True" : "False");
		free(src);
		free(id);
		return;
	}
	if ((path = store_record_path(rec)) == NULL) {
		jsonl_error(r, s, "cannot store the record: model_id and timestamp must be "
		    "strings");
		free(id);
		return;
	}
	b->items = erealloc(b->items, (b->n + 1) * sizeof *b->items);
	it = &b->items[b->n];
	memset(it, 0, sizeof *it);
	if (store_record_text(rec, &it->text, &where) != 0) {
		jsonl_error(r, s, "cannot store the record: %s is not a finite number",
		    where.s);
		buf_free(&where);
		buf_free(&it->text);
		free(path);
		free(id);
		return;
	}
	it->path = path;
	it->file = estrdup(s->file);
	it->line = s->line;
	it->model_id = id;
	it->sha7 = cJSON_IsString(sha) && *sha->valuestring != '\0' ?
	    estrndup(sha->valuestring, 7) : estrdup("unknown");
	b->n++;
}

static void
free_batch(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		buf_free(&b->items[i].text);
		free(b->items[i].path);
		free(b->items[i].file);
		free(b->items[i].model_id);
		free(b->items[i].sha7);
	}
	free(b->items);
}

/* Marks records of the batch that repeat an earlier one; a clash is an error. */
static void
dedupe(struct batch *b)
{
	struct item *items = b->items;

	for (size_t i = 0; i < b->n; i++)
		for (size_t j = 0; j < i && items[i].state == ITEM_NEW; j++) {
			if (items[j].state != ITEM_NEW || strcmp(items[i].path, items[j].path) != 0)
				continue;
			if (items[i].text.len == items[j].text.len &&
			    memcmp(items[i].text.s, items[j].text.s, items[i].text.len) == 0)
				items[i].state = ITEM_DUPLICATE;
			else {
				diag(items[i].file, items[i].line, "another record of the batch "
				    "(line %ld) has the same store path %s", items[j].line,
				    items[i].path);
				items[i].state = ITEM_FAILED;
				b->trouble = true;
			}
		}
}

/* A file that is already there: the same record is fine, another is not replaced. */
static void
already_there(store_writer *w, struct item *it, struct batch *b)
{
	switch (store_writer_check(w, it->path, it->text.s, it->text.len)) {
	case STOREW_SAME:
		fprintf(stderr, "already stored → %s/%s\n", store_writer_shown(w), it->path);
		it->state = ITEM_STORED;
		break;
	case STOREW_OTHER:
		diag(it->file, it->line, "%s/%s already holds a different record; "
		    "not overwritten", store_writer_shown(w), it->path);
		it->state = ITEM_FAILED;
		b->trouble = true;
		break;
	default:
		it->state = ITEM_FAILED;
		b->trouble = true;
	}
}

/*
 * A record could not be written (the store's problem, a full disk say,
 * not the record's): it and the records after it are not stored, and the
 * message says which was the first.
 */
static void
stop_batch(store_writer *w, size_t first, struct batch *b)
{
	struct item *items = b->items;
	size_t i, later = 0;

	for (i = first; i < b->n; i++)
		if (items[i].state == ITEM_NEW) {
			items[i].state = ITEM_FAILED;
			later += i > first;
		}
	diag(items[first].file, items[first].line, "not stored: %s/%s%s%zu record%s after "
	    "it not tried", store_writer_shown(w), items[first].path, later > 0 ? "; the " : "; ",
	    later, later == 1 ? "" : "s");
	b->trouble = true;
}

static void
upload(struct batch *b)
{
	struct item *items = b->items;
	size_t i, nnew = 0;
	struct item *one = NULL;
	store_writer *w;
	buf msg = BUF_INIT;
	int rc;

	dedupe(b);
	if ((w = store_writer_open(opt.store.spec, opt.store.cache)) == NULL) {
		b->trouble = true;
		return;
	}
	for (i = 0; i < b->n; i++) {
		struct item *it = &items[i];

		if (it->state != ITEM_NEW)
			continue;
		if (store_writer_check(w, it->path, it->text.s, it->text.len) != STOREW_ABSENT) {
			already_there(w, it, b);
			continue;
		}
		rc = store_writer_put(w, it->path, it->text.s, it->text.len);
		if (rc == 1)	/* another writer got there first */
			already_there(w, it, b);
		else if (rc < 0) {
			stop_batch(w, i, b);
			break;
		} else {
			nnew++;
			one = it;
		}
	}
	if (nnew == 1)
		buf_addf(&msg, "Perf: %s at %s", one->model_id, one->sha7);
	else {
		buf_addf(&msg, "Perf: %zu records\n\n", nnew);
		for (i = 0; i < b->n; i++)
			if (items[i].state == ITEM_NEW)
				buf_addf(&msg, "%s\n", items[i].path);
	}
	rc = store_writer_commit(w, msg.s);
	if (rc == 0)
		for (i = 0; i < b->n; i++)
			if (items[i].state == ITEM_NEW)
				fprintf(stderr, "uploaded → %s/%s\n", store_writer_shown(w), items[i].path);
	if (rc == 1)
		warnx("%s: not pushed; the records wait in the cache %s for the next "
		    "upload", store_writer_shown(w), store_writer_dir(w));
	if (rc != 0)
		b->trouble = true;
	buf_free(&msg);
	store_writer_close(w);
}

/* Export: the store's records, one compact line each, in path order. */
struct line {
	char *path;
	char *text;
	size_t len;
};

struct lines {
	struct line *v;
	size_t n;
};

/* The record's text on one line: whitespace outside strings removed. */
static char *
one_line(const char *t, size_t n, size_t *out_n)
{
	char *o = emalloc(n + 1);
	size_t k = 0;
	bool in = false, esc = false;

	for (size_t i = 0; i < n; i++) {
		char c = t[i];

		if (in) {
			o[k++] = c;
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in = false;
		} else if (c == '"') {
			in = true;
			o[k++] = c;
		} else if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			o[k++] = c;
	}
	o[k] = '\0';
	*out_n = k;
	return o;
}

static void
collect(const struct store_hit *h, void *ctx)
{
	struct lines *l = ctx;
	struct line *e;

	l->v = erealloc(l->v, (l->n + 1) * sizeof *l->v);
	e = &l->v[l->n++];
	e->path = estrdup(h->path);
	e->text = one_line(h->text, h->len, &e->len);
}

static int
cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->path, ((const struct line *)b)->path);
}

/* gzip of n bytes (zlib, gzip wrapper). */
static int
gzip_buf(const char *in, size_t n, buf *out)
{
	z_stream z;
	int rc;

	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	buf_grow(out, deflateBound(&z, (uLong)n) + 64);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)out->s;
	z.avail_out = (uInt)out->cap;
	rc = deflate(&z, Z_FINISH);
	out->len = z.total_out;
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -1;
}

static int
export(void)
{
	static const char *const keys[] = { "model_id" };
	struct store_query all = { .nkeys = 0 };
	struct lines l = { NULL, 0 };
	buf text = BUF_INIT, gz = BUF_INIT;
	char *raised = NULL;
	store *st;
	int rc = EXIT_PASS;

	if ((st = store_open_cache(opt.store.spec, opt.store.cache)) == NULL)
		return EXIT_TROUBLE;
	store_want(st, keys, 1);
	if (store_scan(st, &all, 1, collect, &l, &raised) != 0)
		rc = EXIT_TROUBLE;
	else if (raised != NULL) {
		warnx("%s: %s", opt.store.spec, raised);
		rc = EXIT_TROUBLE;
	}
	store_close(st);
	if (l.n > 1)
		qsort(l.v, l.n, sizeof *l.v, cmp_line);
	for (size_t i = 0; i < l.n; i++) {
		buf_add(&text, l.v[i].text, l.v[i].len);
		buf_addc(&text, '\n');
		free(l.v[i].path);
		free(l.v[i].text);
	}
	free(l.v);
	free(raised);
	if (rc == EXIT_PASS && gzip_buf(text.s, text.len, &gz) != 0) {
		warnx("cannot compress the export");
		rc = EXIT_TROUBLE;
	}
	if (rc == EXIT_PASS && opt.output != NULL) {
		if (atomic_write_file(opt.output, gz.s, gz.len) != 0) {
			warn("%s: cannot write", opt.output);
			rc = EXIT_TROUBLE;
		}
	} else if (rc == EXIT_PASS) {
		if (isatty(1)) {
			warnx("not writing compressed data to a terminal; use -o FILE");
			rc = EXIT_TROUBLE;
		} else if (fwrite(gz.s, 1, gz.len, stdout) != gz.len ||
		    jsonl_finish(stdout, "standard output") != 0)
			rc = EXIT_TROUBLE;
	}
	if (rc == EXIT_PASS)
		fprintf(stderr, "exported %zu records from %s\n", l.n, opt.store.spec);
	buf_free(&text);
	buf_free(&gz);
	return rc;
}

/*
 * --reindex: the store's index built anew from its records, whatever
 * state an earlier one is in.
 */
static int
reindex(void)
{
	store_writer *w;
	int rc;

	if (!store_index_enabled()) {
		warnx("--reindex: the store index is turned off (PERF_STORE_INDEX=0)");
		return EXIT_TROUBLE;
	}
	if ((w = store_writer_open(opt.store.spec, opt.store.cache)) == NULL)
		return EXIT_TROUBLE;
	rc = store_writer_reindex(w, true) == 0 ? EXIT_PASS : EXIT_TROUBLE;
	store_writer_close(w);
	return rc;
}

/* Records in, the policy's records stored: the exit status. */
static int
store_records(char *const *paths, int n)
{
	struct batch b = { NULL, 0, false };
	bool ok = jsonl_filter_ctx(paths, n, process, &b) == EXIT_PASS;

	if (b.n > 0)
		upload(&b);
	free_batch(&b);
	return !ok || b.trouble ? EXIT_TROUBLE : EXIT_PASS;
}

/* Reads the environment and the options into opt; exits on a usage error. */
static void
parse_options(int argc, char *argv[])
{
	const char *env;
	char *norm;
	buf shown = BUF_INIT;
	int c;

	if ((env = getenv("PERF_UPLOAD_POLICY")) != NULL &&
	    !policy_upload_parse(env, &opt.policy, &norm)) {
		/* The reference's words (the repr of the trimmed, lower-cased value) and its fallback. */
		text_py_repr(&shown, norm, strlen(norm));
		fprintf(stderr, "Invalid PERF_UPLOAD_POLICY=%s; using 'never'\n", shown.s);
		buf_free(&shown);
		free(norm);
		opt.policy = UPLOAD_NEVER;
	}
	while ((c = opt_next(&option_table, NULL, argc, argv)) != -1) {
		if (store_opts_take(&opt.store, c, optarg))
			continue;
		switch (c) {
		case 'p':
			if (!policy_upload_parse(optarg, &opt.policy, NULL)) {
				warnx("--policy: expected never, pass or always, not '%s'", optarg);
				opt_usage(&option_table, EXIT_TROUBLE);
			}
			break;
		case 'E': opt.export = true; break;
		case 'o': opt.output = optarg; break;
		case 'R': opt.reindex = true; break;
		case 'h': opt_usage(&option_table, EXIT_PASS);
		case 'V': cli_version();
		default: opt_usage(&option_table, EXIT_TROUBLE);
		}
	}
}

int
main(int argc, char *argv[])
{
	git_askpass_main(argc, argv);
	err_init(argv[0]);
	parse_options(argc, argv);
	if ((opt.store.spec = store_spec(opt.store.spec)) == NULL)
		return EXIT_TROUBLE;
	if (opt.reindex) {
		if (optind < argc || opt.export || opt.output != NULL) {
			warnx("--reindex reads the store, not records");
			opt_usage(&option_table, EXIT_TROUBLE);
		}
		return reindex();
	}
	if (opt.export) {
		if (optind < argc) {
			warnx("--export reads the store, not records");
			opt_usage(&option_table, EXIT_TROUBLE);
		}
		return export();
	}
	if (opt.output != NULL) {
		warnx("-o is for --export");
		opt_usage(&option_table, EXIT_TROUBLE);
	}
	return store_records(argv + optind, argc - optind);
}
