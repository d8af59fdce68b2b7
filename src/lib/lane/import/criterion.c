/*
 * criterion: Criterion.rs's files, target/criterion/<id>/new/: the
 * benchmark's id from benchmark.json (full_id), time from estimates.json
 * (the mean's point estimate, ns; 0.3 and later write "mean", earlier
 * versions "Mean"), the samples from sample.json (each time over its
 * iteration count; {"iters", "times"} or the older [iters, times]), and a
 * throughput (Bytes or Elements) as bytes_per_second or items_per_second.
 * The operand is the tree (every new/ below it), one benchmark's
 * directory, or one of its three files.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "lane/import/parsers.h"

/*
 * Reads dir/name as JSON: the tree, NULL when the file does not exist, or
 * NULL with msg set when it is unreadable or malformed.
 */
static cJSON *
read_json(const char *dir, const char *name, char *msg, size_t msgsz)
{
	char *path = easprintf("%s/%s", dir, name);
	buf b = BUF_INIT;
	json_error je;
	cJSON *doc = NULL;

	if (buf_read_file(&b, path) != 0) {
		if (errno != ENOENT)
			snprintf(msg, msgsz, "%s: %s", path, strerror(errno));
	} else if ((doc = json_parse(b.s, b.len, &je)) == NULL) {
		snprintf(msg, msgsz, "%s:%ld: %s", path, je.line, je.msg);
	}
	buf_free(&b);
	free(path);
	return doc;
}

/* The per-iteration samples of sample.json, ns. */
static void
samples(struct import_metric *m, const cJSON *smp)
{
	const cJSON *iters = json_get(smp, "iters"), *times = json_get(smp, "times");
	double *d;
	int n;

	if (cJSON_IsArray(smp) && cJSON_GetArraySize(smp) == 2) {
		iters = cJSON_GetArrayItem(smp, 0);
		times = cJSON_GetArrayItem(smp, 1);
	}
	n = cJSON_GetArraySize(times);
	if (n == 0 || cJSON_GetArraySize(iters) != n)
		return;
	d = emalloc((size_t)n * sizeof *d);
	for (int i = 0; i < n; i++) {
		const cJSON *it = cJSON_GetArrayItem(iters, i), *t = cJSON_GetArrayItem(times, i);
		d[i] = cJSON_IsNumber(it) && cJSON_IsNumber(t) && it->valuedouble > 0 ?
		    t->valuedouble / it->valuedouble : NAN;
	}
	import_set_samples(m, d, (size_t)n, "ns");
	free(d);
}

/* The benchmark whose files are in dir (a new/ directory); -1 with msg. */
static int
bench_dir(const char *dir, struct import_suite *s, char *msg, size_t msgsz)
{
	cJSON *meta = read_json(dir, "benchmark.json", msg, msgsz), *est, *smp;
	const cJSON *mean, *tp, *v;
	struct import_bench *b;
	struct import_metric *m;
	double pe;
	char *id;
	int rc = -1;

	if (*msg != '\0')
		return -1;
	est = read_json(dir, "estimates.json", msg, msgsz);
	if (est == NULL) {
		if (*msg == '\0')
			snprintf(msg, msgsz, "%s/estimates.json: no such file", dir);
		cJSON_Delete(meta);
		return -1;
	}
	if ((mean = json_get(est, "mean")) == NULL)
		mean = json_get(est, "Mean");
	if (!import_num(mean, "point_estimate", &pe)) {
		snprintf(msg, msgsz, "%s/estimates.json: mean.point_estimate: not a number", dir);
		goto done;
	}
	if (cJSON_IsString(json_get(meta, "full_id"))) {
		id = estrdup(json_str(meta, "full_id"));
	} else {
		/* Without benchmark.json: the directory's path above new/. */
		const char *end = dir + strlen(dir);
		id = estrdup(dir);
		if (end - dir >= 4 && strcmp(end - 4, "/new") == 0)
			id[end - dir - 4] = '\0';
	}
	b = import_add_bench(s, id);
	free(id);
	if (cJSON_IsString(v = json_get(meta, "group_id")))
		b->workload = estrdup(v->valuestring);
	m = import_add_metric(b, "time", pe, "ns");
	if ((smp = read_json(dir, "sample.json", msg, msgsz)) != NULL) {
		samples(m, smp);
		/* The sample size is a setting of the run (sample_size, 100). */
		if (m->nsamples > 0)
			json_set(b->settings, "sample_size", json_new_int((long long)m->nsamples));
	}
	cJSON_Delete(smp);
	if (*msg != '\0')
		goto done;
	tp = json_get(meta, "throughput");
	if (import_num(tp, "Bytes", &pe) || import_num(tp, "BytesDecimal", &pe))
		import_add_metric(b, "bytes_per_second", pe / (m->value), "B/s");
	else if (import_num(tp, "Elements", &pe))
		import_add_metric(b, "items_per_second", pe / (m->value), "items/s");
	rc = 0;
done:
	cJSON_Delete(meta);
	cJSON_Delete(est);
	return rc;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every new/ directory below dir, in name order. */
static int
walk(const char *dir, struct import_suite *s, int depth, char *msg, size_t msgsz)
{
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	int rc = 0;

	if (depth > 32)
		return 0;
	if ((d = opendir(dir)) == NULL) {
		snprintf(msg, msgsz, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.') {
			names = erealloc(names, (n + 1) * sizeof *names);
			names[n++] = estrdup(e->d_name);
		}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n; i++) {
		char *path = easprintf("%s/%s", dir, names[i]);
		struct stat st;

		if (rc == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			char *est = easprintf("%s/estimates.json", path);
			if (strcmp(names[i], "new") == 0 && access(est, F_OK) == 0)
				rc = bench_dir(path, s, msg, msgsz);
			else if (strcmp(names[i], "base") != 0 && strcmp(names[i], "change") != 0 &&
			    strcmp(names[i], "report") != 0)
				rc = walk(path, s, depth + 1, msg, msgsz);
			free(est);
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return rc;
}

int
criterion_parse_dir(const char *dir, struct import_suite *s, long *line, char *msg,
    size_t msgsz)
{
	char *est = easprintf("%s/estimates.json", dir);
	int rc;

	*line = 0;
	rc = access(est, F_OK) == 0 ? bench_dir(dir, s, msg, msgsz) :
	    walk(dir, s, 0, msg, msgsz);
	free(est);
	if (rc == 0 && s->nb == 0) {
		snprintf(msg, msgsz, "no new/estimates.json below it");
		rc = -1;
	}
	return rc;
}

int
criterion_parse_file(const cJSON *doc, const char *path, struct import_suite *s,
    char *msg, size_t msgsz)
{
	const char *slash = path != NULL ? strrchr(path, '/') : NULL;
	char *dir = slash != NULL ? estrndup(path, (size_t)(slash - path)) : estrdup(".");
	int rc;

	(void)doc;	/* read again beside its siblings */
	if (path == NULL || strcmp(path, "-") == 0) {
		snprintf(msg, msgsz, "criterion is read from its files or directory, "
		    "not standard input");
		free(dir);
		return -1;
	}
	rc = bench_dir(dir, s, msg, msgsz);
	free(dir);
	return rc;
}
