/* memmem() */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/file_batch.h"
#include "core/git.h"
#include "core/isotime.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "core/text.h"
#include "core/utf8.h"
#include "lane/identity.h"
#include "lane/store/git_store.h"
#include "lane/store/index.h"
#include "lane/store/read.h"
#include "lane/store/sparse.h"

struct store {
	gitstore *git;		/* the git store whose cache is root, or NULL */
	bool clone;		/* root is a git store's cache: git's or a sparse one */
	char *root;		/* NULL when there is no directory store */
	char *name;		/* the store as messages name it, or NULL for none */
	bool empty_ok;		/* store_empty_ok() */
	bool slow;		/* store_slow() */
	char **streams;
	int nstreams;
	const char *const *want;	/* store_want(), or NULL for all */
	size_t nwant;
	int threads;			/* store_threads(), or 0 */
	size_t warnings;		/* of the last scan */
};

/* What the store reads of every record itself. */
static const char *const store_keys[] = { "model_id", "timestamp", "commit_sha",
    "success", "baseline_eligible", "run_source" };

/* The identity keys whose values are read from raw text before parsing. */
static const char *const prefilter_keys[] = { "workload_id", "variant_id" };
#define NPRE 2

/* The values a key takes in a record's raw text, as far as they can be told. */
struct textvals {
	bool unknown;		/* some occurrence is not a plain string */
	int n;
	const char *v[8];	/* pointers into the text, not terminated */
	size_t len[8];
};

/* A warning kept until the scan ends, so that threads print in path order. */
struct warning {
	char *path;
	char *text;
};

/* What every reader of one scan shares (under lock where it changes). */
struct scan {
	const struct store_query *q;
	int nq;
	void (*hit)(const struct store_hit *, void *);
	void *ctx;
	bool use_pre[NPRE];
	bool slow;		/* store_slow(): no prefilter, no quick parser */
	const char **keys;	/* the members to build, or NULL for all */
	size_t nkeys;
	struct json_keyset *fast;	/* those keys for json_parse_fast(), or NULL */
	pthread_mutex_t lock;
	char *raised, *raised_path;
	struct warning *warn;
	size_t nwarn;
	bool failed;		/* a directory could not be read */
	size_t nrecords;	/* record files and stream lines read */
	/* The store's top-level directories, taken one at a time by workers. */
	char **units;
	size_t nunits, next;
	const char *root;
	int threads;
	const struct store_units *u;	/* store_scan_units(), or NULL */
	const struct store_index_plan *plan;	/* the index's plan, or NULL */
};

/* One reader's own state. */
struct worker {
	struct scan *sc;
	bool *match;
	size_t nrecords;		/* record files and stream lines read */
	buf text;
	struct json_arena *arena;	/* each record's tree, released whole */
	size_t unit;			/* the unit being read */
	struct file_batch *batch;	/* worker_batch() */
	bool batch_tried;
	buf names;			/* the files of a directory waiting for the batch */
	size_t name_at[FILE_BATCH_MAX], nnames;
};

/* The most a record file read in a batch may hold; a longer one is read alone. */
#define BATCH_FILE_SIZE 16384

/* The length of the scheme of "scheme://...", or 0 (RFC 3986 letters). */
static size_t
url_scheme(const char *s)
{
	size_t i = 0;

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	while ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
	    (s[i] >= '0' && s[i] <= '9') || s[i] == '+' || s[i] == '-' || s[i] == '.')
		i++;
	return strncmp(s + i, "://", 3) == 0 ? i : 0;
}

/* git's scp-like "user@host:path": an '@', then a ':' before any '/'. */
static bool
scp_like(const char *s)
{
	const char *at = strchr(s, '@'), *colon = strchr(s, ':'),
	    *slash = strchr(s, '/');

	return at != NULL && at != s && colon != NULL && colon > at + 1 &&
	    (slash == NULL || colon < slash);
}

const char *
store_spec(const char *opt)
{
	const char *spec = opt;
	char *shown, *hint;
	size_t n = 0;

	if (spec == NULL && (spec = getenv("PERFORMANCE_TRACKING_ROOT")) == NULL)
		spec = "/tmp/perf-tracking";
	if (*spec == '\0')
		return ".";
	if (gitstore_is_spec(spec) || (!scp_like(spec) && (n = url_scheme(spec)) == 0))
		return spec;
	shown = git_redact(spec);
	if (scp_like(spec))
		hint = easprintf("git+%s", shown);
	else if (n == 2 && strncmp(shown, "hf", 2) == 0)
		hint = easprintf("git+https://huggingface.co/%s", shown + 5);
	else
		hint = easprintf("git+%s", shown);
	warnx("%s: a git remote needs the git+ prefix to be a store; "
	    "did you mean %s?", shown, hint);
	free(shown);
	free(hint);
	return NULL;
}

store *
store_open(const char *spec)
{
	return store_open_cache(spec, NULL);
}

store *
store_open_cache(const char *spec, const char *cache)
{
	store *s = ecalloc(1, sizeof *s);
	struct stat st;

	if (spec == NULL)
		return s;
	if (gitstore_is_spec(spec)) {
		if ((s->git = gitstore_open(spec, cache, false)) == NULL) {
			free(s);
			return NULL;
		}
		s->root = estrdup(gitstore_dir(s->git));
		s->name = git_redact(spec);
		s->clone = true;
		return s;
	}
	/* A store that is not there is a typo, never an empty history. */
	if (stat(spec, &st) != 0) {
		if (errno == ENOENT)
			warnx("%s: no such store (a directory store must exist: create "
			    "it, or name the store with --store)", spec);
		else
			warn("%s: cannot read the store", spec);
		free(s);
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		warnx("%s: the store is not a directory", spec);
		free(s);
		return NULL;
	}
	s->root = estrdup(spec);
	s->name = estrdup(spec);
	/*
	 * A git store's cache read as a directory (perf-seed's writer): a
	 * partial clone's work tree lacks records HEAD holds, so it is read
	 * as the git store it is (sparse.h).
	 */
	s->clone = sparse_on(spec);
	return s;
}

const char *
store_root(const store *s)
{
	return s->root;
}

void
store_threads(store *s, int n)
{
	s->threads = n;
}

void
store_empty_ok(store *s)
{
	s->empty_ok = true;
}

void
store_slow(store *s)
{
	s->slow = true;
}

void
store_want(store *s, const char *const *keys, size_t n)
{
	s->want = keys;
	s->nwant = n;
}

void
store_add_stream(store *s, const char *file)
{
	s->streams = erealloc(s->streams, (size_t)(s->nstreams + 1) * sizeof *s->streams);
	s->streams[s->nstreams++] = estrdup(file);
}

size_t
store_warnings(const store *s)
{
	return s->warnings;
}

void
store_close(store *s)
{
	if (s == NULL)
		return;
	/* A reader never writes in the cache: it leaves it as clean as it found it. */
	gitstore_close_clean(s->git);
	for (int i = 0; i < s->nstreams; i++)
		free(s->streams[i]);
	free(s->streams);
	free(s->root);
	free(s->name);
	free(s);
}

char *
store_record_path(const cJSON *rec)
{
	const cJSON *m = json_get(rec, "model_id"), *t = json_get(rec, "timestamp");
	const cJSON *c = json_get(rec, "commit_sha");
	char *sm, *st, *sc, *path;

	if (!cJSON_IsString(m) || !cJSON_IsString(t))
		return NULL;
	if (json_truthy(c) && !cJSON_IsString(c))
		return NULL;
	sm = text_sanitize(m->valuestring);
	st = text_sanitize(t->valuestring);
	sc = text_sanitize(json_truthy(c) ? c->valuestring : "unknown");
	path = easprintf("%s/%s_%s.json", sm, st, sc);
	free(sm);
	free(st);
	free(sc);
	return path;
}

int64_t
store_record_instant(const cJSON *rec)
{
	const cJSON *t = json_get(rec, "timestamp");
	int64_t us;
	char *s;
	bool ok;

	if (!json_truthy(t))
		return ISOTIME_MIN;
	if (cJSON_IsString(t))
		return isotime_parse(t->valuestring, &us) ? us : ISOTIME_MIN;
	s = json_pystr_dup(t);
	ok = isotime_parse(s, &us);
	free(s);
	return ok ? us : ISOTIME_MIN;
}

/* The reference's AttributeError for a top-level value that is not an object. */
static void
not_object_error(const cJSON *v, char *msg, size_t n)
{
	const char *t;

	switch (v->type & 0xff) {
	case cJSON_Array: t = "list"; break;
	case cJSON_String: t = "str"; break;
	case cJSON_True: case cJSON_False: t = "bool"; break;
	case cJSON_NULL: t = "NoneType"; break;
	default: t = json_is_int(v) ? "int" : "float"; break;
	}
	snprintf(msg, n, "'%s' object has no attribute 'get'", t);
}

/* Collects the plain string values that follow "key": in the text. */
static void
text_values(const char *text, size_t len, const char *key, struct textvals *tv)
{
	char needle[40];
	size_t nl = (size_t)snprintf(needle, sizeof needle, "\"%s\"", key);
	const char *p = text, *end = text + len, *q, *v;

	tv->unknown = false;
	tv->n = 0;
	while (p < end && (q = memmem(p, (size_t)(end - p), needle, nl)) != NULL) {
		p = q + nl;
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p >= end || *p != ':')
			continue;	/* a string value, not a key */
		p++;
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p >= end || *p != '"' || tv->n == 8) {
			tv->unknown = true;	/* a number, an object, ...: parse to know */
			return;
		}
		v = ++p;
		while (p < end && *p != '"' && *p != '\\')
			p++;
		if (p >= end || *p == '\\') {
			tv->unknown = true;
			return;
		}
		tv->v[tv->n] = v;
		tv->len[tv->n++] = (size_t)(p - v);
	}
}

/* Whether the raw text can satisfy query q, judging by the prefilter keys. */
static bool
text_may_match(const struct store_query *q, const struct textvals tv[NPRE])
{
	for (int k = 0; k < q->nkeys; k++) {
		for (int j = 0; j < NPRE; j++) {
			const struct textvals *t = &tv[j];
			size_t vl = strlen(q->values[k]);
			bool seen = false;

			if (strcmp(q->keys[k], prefilter_keys[j]) != 0 || t->unknown)
				continue;
			/*
			 * An absent key reads as None; the text cannot show that
			 * a key seen in it is not a nested object's.
			 */
			if (strcmp(q->values[k], "None") == 0)
				seen = true;
			for (int i = 0; i < t->n && !seen; i++)
				seen = t->len[i] == vl && memcmp(t->v[i], q->values[k], vl) == 0;
			if (!seen)
				return false;
		}
	}
	return true;
}

/* The reference's str(record.get(key)) == value. */
static bool
key_matches(const cJSON *rec, const char *key, const char *value)
{
	const cJSON *v = json_get(rec, key);
	bool eq;
	char *s;

	if (v == NULL || cJSON_IsNull(v))
		return strcmp(value, "None") == 0;
	if (cJSON_IsString(v))
		return strcmp(v->valuestring, value) == 0;
	s = json_pystr_dup(v);
	eq = strcmp(s, value) == 0;
	free(s);
	return eq;
}

bool
store_query_matches(const struct store_query *q, const cJSON *rec)
{
	const cJSON *succ, *elig;

	if (q->successful_only) {
		succ = json_get(rec, "success");
		if (succ != NULL && !json_truthy(succ))
			return false;
	}
	if (q->eligible_only) {
		elig = json_get(rec, "baseline_eligible");
		if (!cJSON_IsTrue(elig) &&
		    !(elig == NULL && json_get(rec, "run_source") == NULL))
			return false;
	}
	for (int k = 0; k < q->nkeys; k++)
		if (!key_matches(rec, q->keys[k], q->values[k]))
			return false;
	return true;
}

static void
note_raise(struct scan *sc, const char *path, const char *msg)
{
	pthread_mutex_lock(&sc->lock);
	if (sc->raised_path == NULL || strcmp(path, sc->raised_path) < 0) {
		free(sc->raised);
		free(sc->raised_path);
		sc->raised = estrdup(msg);
		sc->raised_path = estrdup(path);
	}
	pthread_mutex_unlock(&sc->lock);
}

/* "prog: WHERE[:LINE]: text", printed in path order when the scan ends. */
static void
warn_later(struct scan *sc, const char *where, long line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
warn_later(struct scan *sc, const char *where, long line, const char *fmt, ...)
{
	char msg[512], clean[600];
	va_list ap;

	if (sc->u != NULL && sc->u->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	err_clean(msg, clean, sizeof clean);
	pthread_mutex_lock(&sc->lock);
	sc->warn = erealloc(sc->warn, (sc->nwarn + 1) * sizeof *sc->warn);
	sc->warn[sc->nwarn].path = estrdup(where);
	sc->warn[sc->nwarn++].text = line > 0 ?
	    easprintf("%s: %s:%ld: %s", err_progname(), where, line, clean) :
	    easprintf("%s: %s: %s", err_progname(), where, clean);
	pthread_mutex_unlock(&sc->lock);
}

/* A directory that cannot be read: the scan fails. */
static void
store_failed(struct scan *sc, const char *path, int e)
{
	pthread_mutex_lock(&sc->lock);
	warnx("%s: cannot read the store: %s", path, strerror(e));
	sc->failed = true;
	pthread_mutex_unlock(&sc->lock);
}

static int
cmp_warning(const void *a, const void *b)
{
	const struct warning *x = a, *y = b;

	return strcmp(x->path, y->path);
}

/*
 * One record's text, read as the reference's loader reads a file: path is
 * its store path (NULL for a stream line, computed after parsing), where
 * names it in messages.
 */
static void
scan_text(struct worker *w, const char *text, size_t len, const char *path,
    const char *where, long line)
{
	struct scan *sc = w->sc;
	struct textvals tv[NPRE];
	struct store_hit h;
	json_error e;
	cJSON *rec;
	char msg[200], *own = NULL;
	size_t i = 0;
	bool any = false, prefilter;
	int j;

	w->nrecords++;
	if (utf8_error(text, len, msg, sizeof msg)) {
		note_raise(sc, path != NULL ? path : where, msg);
		return;
	}
	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' ||
	    text[i] == '\r'))
		i++;
	/*
	 * The prefilter reads keys and values spelled plainly: a text with
	 * any escape (a key written "workload_\u0069d") is parsed to be known.
	 */
	prefilter = i < len && text[i] == '{' && !sc->slow &&
	    memchr(text, '\\', len) == NULL;
	if (prefilter) {
		for (j = 0; j < NPRE; j++)
			if (sc->use_pre[j])
				text_values(text, len, prefilter_keys[j], &tv[j]);
			else
				tv[j].unknown = true;
		for (j = 0; j < sc->nq && !any; j++)
			any = text_may_match(&sc->q[j], tv);
		if (!any)
			return;
	}
	json_arena_reset(w->arena);
	rec = sc->fast != NULL ? json_parse_fast(text, len, sc->fast, w->arena) : NULL;
	if (rec == NULL && (json_arena_reset(w->arena),
	    rec = json_parse_arena(text, len, sc->keys, sc->nkeys, w->arena, &e)) == NULL) {
		warn_later(sc, where, line > 0 ? line + e.line - 1 : e.line,
		    "skipping invalid JSON in the history: %s", e.msg);
		return;
	}
	if (!cJSON_IsObject(rec)) {
		not_object_error(rec, msg, sizeof msg);
		note_raise(sc, path != NULL ? path : where, msg);
		return;
	}
	any = false;
	for (j = 0; j < sc->nq; j++)
		any |= w->match[j] = store_query_matches(&sc->q[j], rec);
	if (any) {
		if (path == NULL)
			path = own = store_record_path(rec);
		h.record = rec;
		h.path = path != NULL ? path : where;
		h.instant = store_record_instant(rec);
		h.stream = line > 0;
		h.text = text;
		h.len = len;
		h.match = w->match;
		h.unit = w->unit;
		if (sc->u != NULL && sc->u->unlocked)
			sc->hit(&h, sc->ctx);
		else {
			pthread_mutex_lock(&sc->lock);
			sc->hit(&h, sc->ctx);
			pthread_mutex_unlock(&sc->lock);
		}
	}
	free(own);
}

/*
 * Reads one record file (name in the open directory dfd). A regular file
 * is at its end when a read comes back short, which saves a system call
 * per file on a store of many small files.
 */
static int
read_file(struct worker *w, int dfd, const char *name, const char *full,
    const char *rel, bool regular)
{
	buf *text = &w->text;
	size_t want;
	ssize_t n;
	int fd;

	if ((fd = openat(dfd, name, O_RDONLY | O_CLOEXEC)) < 0) {
		warn_later(w->sc, full, 0, "skipping unreadable history file: %s",
		    strerror(errno));
		return 0;
	}
	buf_reset(text);
	for (;;) {
		buf_grow(text, 65536);
		want = text->cap - text->len - 1;
		n = read(fd, text->s + text->len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		text->len += (size_t)n;
		if (regular && (size_t)n < want)
			break;
	}
	if (n < 0) {
		warn_later(w->sc, full, 0, "skipping unreadable history file: %s",
		    strerror(errno));
		close(fd);
		return 0;
	}
	close(fd);
	text->s[text->len] = '\0';
	scan_text(w, text->s, text->len, rel, full, 0);
	return 0;
}

/* Adds "/name" to the path full and name to rel (a path relative to the store). */
static void
path_push(buf *full, buf *rel, const char *name)
{
	buf_addc(full, '/');
	buf_adds(full, name);
	if (rel->len > 0)
		buf_addc(rel, '/');
	buf_adds(rel, name);
}

/* Cuts full and rel back to the lengths they had before path_push(). */
static void
path_pop(buf *full, buf *rel, size_t flen, size_t rlen)
{
	full->len = flen;
	full->s[flen] = '\0';
	rel->len = rlen;
	if (rel->cap > 0)
		rel->s[rlen] = '\0';
}

/*
 * The worker's batch, made the first time a directory holds a record file
 * (a scan of streams alone needs none); NULL when files are read one by one.
 */
static struct file_batch *
worker_batch(struct worker *w)
{
	if (!w->batch_tried) {
		w->batch_tried = true;
		w->batch = file_batch_new(BATCH_FILE_SIZE);
	}
	return w->batch;
}

/*
 * Reads the files waiting in w (names in the open directory dfd, whose
 * paths full and rel hold; restored on return) with one batch, in the
 * order they were listed.
 */
static void
read_waiting(struct worker *w, int dfd, buf *full, buf *rel)
{
	size_t flen = full->len, rlen = rel->len, i;
	const char *names[FILE_BATCH_MAX];
	char *text[FILE_BATCH_MAX];
	long res[FILE_BATCH_MAX];

	if (w->nnames == 0)
		return;
	for (i = 0; i < w->nnames; i++)
		names[i] = w->names.s + w->name_at[i];
	file_batch_read(w->batch, dfd, names, w->nnames, text, res);
	for (i = 0; i < w->nnames; i++) {
		path_push(full, rel, names[i]);
		if (res[i] == FILE_BATCH_LONG)
			read_file(w, dfd, names[i], full->s, rel->s, true);
		else if (res[i] < 0)
			warn_later(w->sc, full->s, 0, "skipping unreadable history file: %s",
			    strerror((int)-res[i]));
		else
			scan_text(w, text[i], (size_t)res[i], rel->s, full->s, 0);
		path_pop(full, rel, flen, rlen);
	}
	w->nnames = 0;
	buf_reset(&w->names);
}

static bool
json_name(const char *name)
{
	size_t n = strlen(name);

	return n >= 5 && strcmp(name + n - 5, ".json") == 0;
}

/*
 * Walks the directory root/rel depth first; full and rel hold those paths
 * and are restored on return. -1 after reporting.
 */
static int
walk(struct worker *w, buf *full, buf *rel)
{
	size_t flen = full->len, rlen = rel->len;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int rc = 0;

	if ((d = opendir(full->s)) == NULL) {
		store_failed(w->sc, full->s, errno);
		return -1;
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		bool isdir, isreg;

		if (de->d_name[0] == '.')
			continue;	/* hidden files and directories, . and .. */
		isdir = de->d_type == DT_DIR;
		isreg = de->d_type == DT_REG;
		if (isreg && json_name(de->d_name) && worker_batch(w) != NULL) {
			/* Read with the next files of the directory, in one batch. */
			w->name_at[w->nnames++] = w->names.len;
			buf_add(&w->names, de->d_name, strlen(de->d_name) + 1);
			if (w->nnames == FILE_BATCH_MAX)
				read_waiting(w, dirfd(d), full, rel);
			continue;
		}
		/* What is read alone, or walked, comes after the files listed before it. */
		read_waiting(w, dirfd(d), full, rel);
		path_push(full, rel, de->d_name);
		if (de->d_type == DT_UNKNOWN || de->d_type == DT_LNK) {
			/* Follow links to files; never descend through a link. */
			if (stat(full->s, &st) == 0) {
				isreg = S_ISREG(st.st_mode);
				isdir = de->d_type == DT_UNKNOWN && S_ISDIR(st.st_mode);
			}
		}
		/* A directory the index covers is read on its own (scan_plan). */
		if (isdir && w->sc->plan != NULL && store_index_known(w->sc->plan, rel->s))
			;
		else if (isdir)
			rc = walk(w, full, rel);
		else if (isreg && json_name(de->d_name))
			rc = read_file(w, dirfd(d), de->d_name, full->s, rel->s,
			    de->d_type == DT_REG || de->d_type == DT_UNKNOWN);
		path_pop(full, rel, flen, rlen);
	}
	if (rc == 0 && errno != 0) {
		store_failed(w->sc, full->s, errno);
		rc = -1;
	}
	if (rc == 0)
		read_waiting(w, dirfd(d), full, rel);
	w->nnames = 0;
	buf_reset(&w->names);
	closedir(d);
	return rc;
}

static int
read_stream(struct worker *w, const char *file)
{
	char *paths[1] = { (char *)file };
	jsonl_reader *r = jsonl_open(paths, 1);
	jsonl_span s;
	int rc;

	/* Lines are judged as files are: invalid ones skipped, others raise. */
	jsonl_accept_any(r);
	while (jsonl_next_span(r, &s))
		scan_text(w, s.text, s.len, NULL, s.file, s.line);
	rc = jsonl_errors(r) > 0 ? -1 : 0;
	jsonl_close(r);
	return rc;
}

static void
worker_init(struct worker *w, struct scan *sc)
{
	memset(w, 0, sizeof *w);
	w->sc = sc;
	w->match = ecalloc((size_t)sc->nq + 1, sizeof *w->match);
	w->arena = json_arena_new();
}

static void
worker_free(struct worker *w)
{
	pthread_mutex_lock(&w->sc->lock);
	w->sc->nrecords += w->nrecords;
	pthread_mutex_unlock(&w->sc->lock);
	free(w->match);
	buf_free(&w->text);
	json_arena_free(w->arena);
	file_batch_free(w->batch);
	buf_free(&w->names);
}

/* A reader thread: top-level directories of the store, one at a time. */
static void *
work(void *arg)
{
	struct scan *sc = arg;
	struct worker w;
	buf full = BUF_INIT, rel = BUF_INIT;
	size_t u;

	worker_init(&w, sc);
	for (;;) {
		pthread_mutex_lock(&sc->lock);
		u = sc->failed ? sc->nunits : sc->next++;
		pthread_mutex_unlock(&sc->lock);
		if (u >= sc->nunits)
			break;
		buf_reset(&full);
		buf_reset(&rel);
		buf_addf(&full, "%s/%s", sc->root, sc->units[u]);
		buf_adds(&rel, sc->units[u]);
		w.unit = u + 1;
		if (walk(&w, &full, &rel) != 0)
			break;
		if (sc->u != NULL && sc->u->done != NULL)
			sc->u->done(u + 1, sc->units[u], sc->ctx);
	}
	buf_free(&full);
	buf_free(&rel);
	worker_free(&w);
	return NULL;
}

int
store_thread_count(int asked)
{
	const char *env = getenv("PERF_STORE_THREADS");
	long n = env != NULL ? atol(env) : asked > 0 ? asked : sysconf(_SC_NPROCESSORS_ONLN);
	long most = env != NULL ? STORE_MAX_THREADS : 4;

	return n < 1 ? 1 : n > most ? (int)most : (int)n;
}

/*
 * The directory store: files at the top level are read here, each
 * top-level directory by whichever thread takes it next.
 */
static void
scan_root(struct scan *sc, struct worker *main_w)
{
	struct dirent *de;
	struct stat st;
	pthread_t tid[STORE_MAX_THREADS];
	int nthreads, started = 0;
	DIR *d;

	if ((d = opendir(sc->root)) == NULL) {
		store_failed(sc, sc->root, errno);
		return;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		bool isdir = de->d_type == DT_DIR, isreg = de->d_type == DT_REG;
		char *full;

		if (de->d_name[0] == '.')
			continue;
		full = easprintf("%s/%s", sc->root, de->d_name);
		if ((de->d_type == DT_UNKNOWN || de->d_type == DT_LNK) &&
		    stat(full, &st) == 0) {
			isreg = S_ISREG(st.st_mode);
			isdir = de->d_type == DT_UNKNOWN && S_ISDIR(st.st_mode);
		}
		if (isdir && (sc->u == NULL || sc->u->want == NULL ||
		    sc->u->want(de->d_name, sc->ctx))) {
			sc->units = erealloc(sc->units, (sc->nunits + 1) * sizeof *sc->units);
			sc->units[sc->nunits++] = estrdup(de->d_name);
		} else if (isreg && json_name(de->d_name))
			read_file(main_w, dirfd(d), de->d_name, full, de->d_name,
			    de->d_type != DT_LNK);
		free(full);
	}
	if (errno != 0)
		store_failed(sc, sc->root, errno);
	closedir(d);
	nthreads = store_thread_count(sc->threads);
	if ((size_t)nthreads > sc->nunits)
		nthreads = (int)sc->nunits;
	for (; nthreads > 1 && started < nthreads; started++)
		if (pthread_create(&tid[started], NULL, work, sc) != 0)
			break;
	if (started == 0)
		work(sc);
	while (started > 0)
		pthread_join(tid[--started], NULL);
	for (size_t u = 0; u < sc->nunits; u++)
		free(sc->units[u]);
	free(sc->units);
}

/*
 * The store through its index: the files the plan names, then the
 * directories that changed since the index was written.
 */
static void
scan_plan(struct scan *sc, struct worker *w, const struct store_index_plan *p)
{
	buf full = BUF_INIT, rel = BUF_INIT;
	int dfd;

	if ((dfd = open(sc->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		store_failed(sc, sc->root, errno);
		return;
	}
	buf_adds(&full, sc->root);
	buf_adds(&rel, "");
	for (size_t i = 0; i < p->nfiles; i++) {
		if (worker_batch(w) == NULL) {
			path_push(&full, &rel, p->files[i]);
			read_file(w, dfd, p->files[i], full.s, rel.s, true);
			path_pop(&full, &rel, strlen(sc->root), 0);
			continue;
		}
		w->name_at[w->nnames++] = w->names.len;
		buf_add(&w->names, p->files[i], strlen(p->files[i]) + 1);
		if (w->nnames == FILE_BATCH_MAX)
			read_waiting(w, dfd, &full, &rel);
	}
	read_waiting(w, dfd, &full, &rel);
	close(dfd);
	for (size_t i = 0; i < p->ndirs && !sc->failed; i++) {
		buf_reset(&full);
		buf_reset(&rel);
		if (strcmp(p->dirs[i], ".") == 0) {
			buf_adds(&full, sc->root);
			buf_adds(&rel, "");
		} else {
			buf_addf(&full, "%s/%s", sc->root, p->dirs[i]);
			buf_adds(&rel, p->dirs[i]);
		}
		w->unit = 0;
		walk(w, &full, &rel);
	}
	buf_free(&full);
	buf_free(&rel);
	w->nrecords += p->nrecords;
}

int
store_scan(store *s, const struct store_query *q, int nq,
    void (*hit)(const struct store_hit *, void *), void *ctx, char **raised)
{
	return store_scan_units(s, q, nq, hit, NULL, ctx, raised);
}

/* Whether the plan's index covers the directory rel (sparse_need). */
static bool
plan_known(const char *rel, void *ctx)
{
	return store_index_known(ctx, rel);
}

int
store_scan_units(store *s, const struct store_query *q, int nq,
    void (*hit)(const struct store_hit *, void *), const struct store_units *u,
    void *ctx, char **raised)
{
	struct scan sc;
	struct worker w;
	int rc = 0, i, j, k;

	memset(&sc, 0, sizeof sc);
	sc.u = u;
	sc.q = q;
	sc.nq = nq;
	sc.hit = hit;
	sc.ctx = ctx;
	sc.slow = s->slow;
	pthread_mutex_init(&sc.lock, NULL);
	/* A prefilter key helps only when every query constrains it. */
	for (j = 0; j < NPRE; j++) {
		sc.use_pre[j] = nq > 0;
		for (i = 0; i < nq; i++) {
			bool has = false;
			for (k = 0; k < q[i].nkeys; k++)
				has |= strcmp(q[i].keys[k], prefilter_keys[j]) == 0;
			sc.use_pre[j] &= has;
		}
	}
	if (s->want != NULL) {
		/* The caller's keys, the store's own, and every query's. */
		size_t cap = s->nwant + sizeof store_keys / sizeof *store_keys;
		for (i = 0; i < nq; i++)
			cap += (size_t)q[i].nkeys;
		sc.keys = emalloc(cap * sizeof *sc.keys);
		for (size_t n = 0; n < s->nwant; n++)
			sc.keys[sc.nkeys++] = s->want[n];
		for (size_t n = 0; n < sizeof store_keys / sizeof *store_keys; n++)
			sc.keys[sc.nkeys++] = store_keys[n];
		for (i = 0; i < nq; i++)
			for (k = 0; k < q[i].nkeys; k++)
				sc.keys[sc.nkeys++] = q[i].keys[k];
		/* PERF_STORE_SLOW_PARSE=1: every record the full parser's way (tests). */
		if (!s->slow && getenv("PERF_STORE_SLOW_PARSE") == NULL)
			sc.fast = json_keyset_new((const char *const *)sc.keys, sc.nkeys);
	}
	worker_init(&w, &sc);
	if (s->root != NULL) {
		struct store_index_plan *plan = NULL;

		sc.root = s->root;
		sc.threads = s->threads;
		/* The index answers queries that name cohorts, read whole. */
		if (!s->slow && u == NULL)
			plan = store_index_plan(s->root, q, nq, s->nstreams == 0,
			    s->clone);
		/* A partial clone checks out what is read first (sparse.h). */
		if (s->clone && (plan != NULL ? sparse_need(s->root, plan->files,
		    plan->nfiles, plan->dirs, plan->ndirs, plan_known, plan) :
		    sparse_all(s->root)) != 0) {
			warnx("%s: cannot check out the records to read", s->name);
			sc.failed = true;
		} else if (plan != NULL) {
			sc.plan = plan;
			scan_plan(&sc, &w, plan);
		} else
			scan_root(&sc, &w);
		store_index_plan_free(plan);
	}
	rc = sc.failed ? -1 : 0;
	for (i = 0; rc == 0 && i < s->nstreams; i++)
		rc = read_stream(&w, s->streams[i]);
	worker_free(&w);
	/* A history with nothing in it checks nothing: say so (a typo?). */
	if (rc == 0 && sc.nrecords == 0 && s->name != NULL && !s->empty_ok &&
	    (u == NULL || !u->quiet))
		warnx("%s: the store holds no records%s (a new store, or the wrong "
		    "one?)", s->name, s->nstreams > 0 ? ", nor do the history streams" : "");
	s->warnings = sc.nwarn;
	if (sc.nwarn > 0)
		qsort(sc.warn, sc.nwarn, sizeof *sc.warn, cmp_warning);
	for (size_t n = 0; n < sc.nwarn; n++) {
		err_print(sc.warn[n].text);
		free(sc.warn[n].path);
		free(sc.warn[n].text);
	}
	free(sc.warn);
	if (raised != NULL)
		*raised = sc.raised;
	else
		free(sc.raised);
	free(sc.raised_path);
	free(sc.keys);
	json_keyset_free(sc.fast);
	pthread_mutex_destroy(&sc.lock);
	return rc;
}

int
store_record_text(const cJSON *rec, buf *out, buf *where)
{
	cJSON *copy = cJSON_Duplicate(rec, true);
	int rc;

	json_remove(copy, "static_failures");
	json_remove(copy, "comparison");
	rc = json_write(out, copy, JSON_INDENT2, where);
	cJSON_Delete(copy);
	return rc;
}

void
store_identity_queries(char *const *values, struct store_query *exact,
    struct store_query *cohort)
{
	memset(exact, 0, sizeof *exact);
	memset(cohort, 0, sizeof *cohort);
	for (int k = 0; k < IDENTITY_KEYS; k++) {
		exact->keys[k] = identity_keys[k];
		exact->values[k] = values[k];
	}
	exact->nkeys = IDENTITY_KEYS;
	exact->successful_only = exact->eligible_only = true;
	for (int k = 0; k < 3; k++) {
		cohort->keys[k] = identity_keys[k];
		cohort->values[k] = values[k];
	}
	cohort->nkeys = 3;
	cohort->successful_only = true;
}
