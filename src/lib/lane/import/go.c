/*
 * go: the text of go test -bench (with -benchmem, -count, -cpu). A result
 * line is NAME ITERATIONS (VALUE UNIT)...; the -P suffix of the name is
 * GOMAXPROCS, the param procs (1 when there is none, as Go omits -1);
 * ns/op is time, every other pair a metric named by its unit (B/op,
 * allocs/op, MB/s, ReportMetric's own); -count repeats are the samples.
 * "--- FAIL:" and "--- SKIP:" lines make a failed benchmark, with the
 * indented lines after them as the message.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "core/num.h"
#include "lane/import/parsers.h"

#define GO_MAX_FIELDS 64

/* Splits line[0..n) at blanks into at most max fields; their count. */
static int
fields(const char *line, size_t n, const char **f, size_t *fl, int max)
{
	int k = 0;
	size_t i = 0;

	while (i < n) {
		while (i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
			i++;
		if (i == n)
			break;
		if (k == max)
			return max + 1;
		f[k] = line + i;
		while (i < n && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			i++;
		fl[k] = (size_t)(line + i - f[k]);
		k++;
	}
	return k;
}

static bool
all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* Whether the line is a result line's start: Benchmark... and a count. */
static bool
result_line(const char **f, const size_t *fl, int k)
{
	return k >= 2 && fl[0] > 9 && strncmp(f[0], "Benchmark", 9) == 0 &&
	    all_digits(f[1], fl[1]);
}

bool
go_looks_like(const char *text, size_t len)
{
	const char *p = text, *end = text + len, *nl, *f[GO_MAX_FIELDS + 1];
	size_t fl[GO_MAX_FIELDS + 1];
	int k;

	for (; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		k = fields(p, (size_t)(nl - p), f, fl, GO_MAX_FIELDS);
		if (k <= GO_MAX_FIELDS && result_line(f, fl, k))
			return true;
	}
	return false;
}

/* The procs suffix of name[0..n): its start (n when none) and value. */
static size_t
procs_suffix(const char *name, size_t n, long *procs)
{
	size_t i = n;

	while (i > 0 && isdigit((unsigned char)name[i - 1]))
		i--;
	if (i < n && i > 1 && name[i - 1] == '-' && n - i < 6) {
		*procs = strtol(name + i, NULL, 10);
		return i - 1;
	}
	*procs = 1;
	return n;
}

/* The benchmark of full name (with suffix) in s, added when new. */
static struct import_bench *
bench_of(struct import_suite *s, struct import_index *ix, const char *name,
    const char *pkg)
{
	long i = import_index_find(ix, s, name);
	struct import_bench *b;

	if (i >= 0)
		return &s->b[i];
	b = import_add_bench(s, name);
	if (pkg != NULL)
		b->workload = estrdup(pkg);
	import_index_add(ix, s, (long)s->nb - 1);
	return b;
}

/* A context line ("goos: linux"): into the suite's context. */
static void
context_line(struct import_suite *s, const char *p, size_t n, char **pkg)
{
	static const char *const keys[] = { "goos", "goarch", "cpu", "pkg" };
	const char *colon = memchr(p, ':', n);
	char *v;

	if (colon == NULL)
		return;
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		size_t kl = strlen(keys[i]);
		if ((size_t)(colon - p) != kl || strncmp(p, keys[i], kl) != 0)
			continue;
		v = estrndup(colon + 1, n - kl - 1);
		v[strcspn(v, "\r")] = '\0';
		if (strcmp(keys[i], "pkg") == 0) {
			free(*pkg);
			*pkg = estrdup(v + strspn(v, " "));
			if (s->workload == NULL)
				s->workload = estrdup(*pkg);
		} else {
			cJSON **ctx = strcmp(keys[i], "goos") == 0 ? &s->sw_context :
			    &s->hw_context;
			if (*ctx == NULL)
				*ctx = json_new_object();
			json_set(*ctx, keys[i], json_new_string(v + strspn(v, " ")));
		}
		free(v);
	}
}

int
go_parse(const char *text, size_t len, struct import_suite *s, long *line,
    char *msg, size_t msgsz)
{
	const char *p = text, *end = text + len, *nl, *f[GO_MAX_FIELDS + 1];
	size_t fl[GO_MAX_FIELDS + 1];
	struct import_index *ix = import_index_new();
	struct import_bench *failing = NULL;
	char *pkg = NULL, *name, unit[64];
	buf pending = BUF_INIT, log = BUF_INIT;
	long ln = 0;
	int k, rc = -1;

	for (; p < end; p = nl + 1) {
		size_t n;

		ln++;
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		n = (size_t)(nl - p);
		if (n > 0 && (*p == ' ' || *p == '\t')) {
			/*
			 * A benchmark's log: the message of a failed or skipped
			 * benchmark, after its "--- SKIP:" line or (go 1.19 -v)
			 * before it.
			 */
			size_t skip = 0;
			while (skip < n && (p[skip] == ' ' || p[skip] == '\t'))
				skip++;
			buf *m = failing != NULL ? &log : &pending;
			if (failing != NULL && m->len == 0)
				buf_adds(m, failing->error);
			if (m->len > 0)
				buf_adds(m, "; ");
			buf_add(m, p + skip, n - skip);
			if (failing != NULL) {
				free(failing->error);
				failing->error = estrdup(m->s);
				failing->error[strcspn(failing->error, "\r")] = '\0';
			}
			continue;
		}
		failing = NULL;
		buf_reset(&log);
		if (n >= 19 && (strncmp(p, "--- FAIL: ", 10) == 0 || strncmp(p, "--- SKIP: ", 10) == 0) &&
		    strncmp(p + 10, "Benchmark", 9) == 0) {
			k = fields(p + 10, n - 10, f, fl, GO_MAX_FIELDS);
			name = estrndup(f[0], fl[0]);
			failing = bench_of(s, ix, name, pkg);
			free(name);
			free(failing->error);
			failing->error = pending.len > 0 ? easprintf("%s; %s", p[4] == 'S' ?
			    "skipped" : "failed", pending.s) : estrdup(p[4] == 'S' ? "skipped" : "failed");
			failing->error[strcspn(failing->error, "\r")] = '\0';
			buf_reset(&pending);
			continue;
		}
		buf_reset(&pending);
		k = fields(p, n, f, fl, GO_MAX_FIELDS);
		if (k > 0 && k <= GO_MAX_FIELDS && !result_line(f, fl, k) &&
		    !(fl[0] >= 9 && strncmp(f[0], "Benchmark", 9) == 0))
			context_line(s, p, n, &pkg);
		if (k > GO_MAX_FIELDS || !result_line(f, fl, k))
			continue;
		if (k % 2 != 0 || k < 4) {
			*line = ln;
			snprintf(msg, msgsz, "%s line: want NAME ITERATIONS and VALUE UNIT pairs",
			    k < 4 ? "a short result" : "an odd result");
			goto done;
		}
		name = estrndup(f[0], fl[0]);
		struct import_bench *b = bench_of(s, ix, name, pkg);
		free(name);
		for (int i = 2; i < k; i += 2) {
			char num[64];
			double v;

			if (fl[i] >= sizeof num || fl[i + 1] >= sizeof unit) {
				*line = ln;
				snprintf(msg, msgsz, "field %d: too long", i + 1);
				goto done;
			}
			memcpy(num, f[i], fl[i]);
			num[fl[i]] = '\0';
			memcpy(unit, f[i + 1], fl[i + 1]);
			unit[fl[i + 1]] = '\0';
			if (!num_py_float(num, &v)) {
				*line = ln;
				snprintf(msg, msgsz, "field %d: not a number", i + 1);
				goto done;
			}
			import_push_sample(b, strcmp(unit, "ns/op") == 0 ? "time" : unit, v, unit);
		}
	}
	/* The -P suffix leaves the id for the procs param. */
	for (size_t i = 0; i < s->nb; i++) {
		struct import_bench *b = &s->b[i];
		long procs;
		size_t cut = procs_suffix(b->id, strlen(b->id), &procs);

		b->id[cut] = '\0';
		json_set(b->params, "procs", json_new_int(procs));
		/* -count: how many results each benchmark has (a setting of the run). */
		if (b->nm > 0)
			json_set(b->settings, "count", json_new_int((long long)b->m[0].nsamples));
		import_finish_means(b);
	}
	rc = 0;
done:
	buf_free(&pending);
	buf_free(&log);
	free(pkg);
	import_index_free(ix);
	return rc;
}
