/*
 * change_state: the state file of perf-changes(1) --incremental
 * (lane/change_state.h).
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/canon.h"
#include "core/err.h"
#include "core/json.h"
#include "core/num.h"
#include "lane/change_state.h"
#include "lane/changes.h"

/*
 * SHA-256 of the first n values as stored in memory (little-endian) into
 * hex and, in the same pass, of the first at values into at_hex when
 * at <= n.
 */
void
change_state_digest(const double *x, size_t n, char hex[SHA256_HEX], size_t at,
    char at_hex[SHA256_HEX])
{
	struct canon_sha *h = canon_sha_new();
	unsigned char b[8 * 512];	/* 512 values at a time */
	size_t i, j, end;

	for (i = 0; i <= n; i += j) {
		if (i == at)
			canon_sha_peek(h, at_hex);
		end = i + 512 < n ? i + 512 : n;
		end = at > i && at < end ? at : end;
		for (j = 0; i + j < end; j++) {
			uint64_t u;

			memcpy(&u, &x[i + j], sizeof u);
			for (int k = 0; k < 8; k++)
				b[8 * j + k] = (unsigned char)(u >> (8 * k));
		}
		canon_sha_update(h, b, 8 * j);
		if (i == n)
			break;
	}
	canon_sha_final(h, hex);
}

/*
 * The saved state of a series of n points made from no more points, taken
 * (marked used) under the lock of st, as analysis threads look at once.
 */
struct saved *
change_state_find(struct change_state *st, const char *series, size_t n)
{
	struct saved *sv = NULL;

	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < st->nsaved && sv == NULL; i++)
		if (!st->saved[i].used && strcmp(st->saved[i].series, series) == 0 &&
		    st->saved[i].n <= n) {
			sv = &st->saved[i];
			sv->used = true;
		}
	pthread_mutex_unlock(&st->lock);
	return sv;
}

/*
 * The format of the state file: 2 carries a checksum on every line (1,
 * without them, is read as stale).
 */
enum { STATE_FORMAT = 2 };

/* The end of a state line: ,"sum":"<SHA-256 hex>"} */
#define SUM_OPEN ",\"sum\":\""
enum { SUM_TAIL = sizeof SUM_OPEN - 1 + SHA256_HEX - 1 + 2 };

/*
 * Appends o to out as a state line: its compact JSON with a last member
 * "sum", the SHA-256 of the line without that member (the same text with
 * the object closed where "sum" begins), and a newline.
 */
void
change_state_line(buf *out, const cJSON *o)
{
	buf line = BUF_INIT;
	char hex[SHA256_HEX];

	json_write(&line, o, JSON_COMPACT, NULL);
	canon_sha256_hex(line.s, line.len, hex);
	buf_add(out, line.s, line.len - 1);
	buf_addf(out, SUM_OPEN "%s\"}\n", hex);
	buf_free(&line);
}

/*
 * The content of a state line s[0..len) (no newline) whose checksum holds,
 * NUL-terminated in place of its "sum" member; NULL with *why set when it
 * has none or it fails.
 */
char *
change_state_checked(char *s, size_t len, const char **why)
{
	char hex[SHA256_HEX], *sum;

	if (len < SUM_TAIL + 2 || memcmp(s + len - SUM_TAIL, SUM_OPEN, sizeof SUM_OPEN - 1) != 0 ||
	    strcmp(s + len - 2, "\"}") != 0) {
		*why = "malformed state line, no checksum";
		return NULL;
	}
	sum = s + len - SUM_TAIL + sizeof SUM_OPEN - 1;
	s[len - SUM_TAIL] = '}';
	canon_sha256_hex(s, len - SUM_TAIL + 1, hex);
	if (memcmp(hex, sum, SHA256_HEX - 1) != 0) {
		*why = "checksum mismatch";
		return NULL;
	}
	s[len - SUM_TAIL + 1] = '\0';
	return s;
}

/* The header line of a state file for the options in force. */
cJSON *
change_state_header(long window, double pvalue, bool all)
{
	cJSON *o = json_new_object();

	json_set(o, "perf_changes_state", json_new_int(STATE_FORMAT));
	json_set(o, "window", json_new_int(window));
	json_set(o, "pvalue", json_new_float(pvalue));
	json_set(o, "all", json_new_bool(all));
	return o;
}

/*
 * The merge's comparisons on a state line, one string each: lo, index
 * and hi in decimal, then the means before and after, the standard
 * deviations before and after and the p-value as C's hexadecimal floats
 * (%a, num_hex(): exact), separated by single spaces, with lo < index < hi <= n.
 * False when they are not that.
 */
static bool
load_memo(struct saved *sv, const cJSON *a)
{
	const cJSON *e;
	unsigned long long p[3];
	double f[5];
	const char *s;
	char *end;

	if (!cJSON_IsArray(a))
		return false;
	sv->memo = emalloc(((size_t)cJSON_GetArraySize(a) + 1) * sizeof *sv->memo);
	cJSON_ArrayForEach(e, a) {
		if ((s = cJSON_GetStringValue(e)) == NULL)
			return false;
		for (int k = 0; k < 8; k++) {
			/* One space between fields, none around them. */
			if ((k > 0 && *s++ != ' ') || *s == '\0' || isspace((unsigned char)*s))
				return false;
			errno = 0;
			if (k < 3) {
				if (!isdigit((unsigned char)*s))
					return false;
				p[k] = strtoull(s, &end, 10);
				if (errno != 0)
					return false;
			} else	/* ERANGE for a subnormal: still exact */
				f[k - 3] = strtod(s, &end);
			if (end == s)
				return false;
			s = end;
		}
		if (*s != '\0' || !(p[0] < p[1] && p[1] < p[2] && p[2] <= sv->n))
			return false;
		sv->memo[sv->nmemo++] = (struct changes_memo){ .lo = (size_t)p[0],
		    .hi = (size_t)p[2], .cp = { .index = (size_t)p[1],
		    .n_before = (size_t)(p[1] - p[0]), .n_after = (size_t)(p[2] - p[1]),
		    .mean_before = f[0], .mean_after = f[1], .std_before = f[2],
		    .std_after = f[3], .pvalue = f[4] } };
	}
	return true;
}

/*
 * One line of the state (line no, text s[0..len), no newline) into the
 * state st: its checksum checked, then the header's options or a series' split
 * and merge. Returns NULL when it is good, else why the state is not used.
 */
static const char *
load_state_line(struct change_state *st, long no, char *s, size_t len, const cJSON *head)
{
	const cJSON *w, *v;
	struct saved sv = { 0 };
	const char *why = NULL;
	json_error e;
	cJSON *o;
	char *t;
	double d;

	if ((t = change_state_checked(s, len, &why)) == NULL) {
		/* A header without a checksum: an earlier version's state (format 1). */
		if (no == 1 && strcmp(why, "malformed state line, no checksum") == 0 &&
		    (o = json_parse(s, len, &e)) != NULL) {
			if (json_get(o, "perf_changes_state") != NULL)
				why = "a state of an earlier format, without checksums";
			cJSON_Delete(o);
		}
		return why;
	}
	if ((o = json_parse(t, strlen(t), &e)) == NULL)
		return "malformed state line";
	if (no == 1) {
		why = json_equal(o, head) ? NULL : !json_is_int(json_get(o, "perf_changes_state")) ||
		    json_num(o, "perf_changes_state") != STATE_FORMAT ? "not a state of this format" :
		    "ignoring the incremental state: not this program's state for these options";
		cJSON_Delete(o);
		return why;
	}
	w = json_get(o, "weak");
	if (!cJSON_IsString(json_get(o, "series")) ||
	    strlen(json_str(o, "digest")) != SHA256_HEX - 1 || !cJSON_IsArray(w) ||
	    !json_is_int(json_get(o, "n")) || !json_is_int(json_get(o, "resume")) ||
	    json_num(o, "n") < 0 || json_num(o, "resume") < 0) {
		cJSON_Delete(o);
		return "malformed state line";
	}
	sv.series = estrdup(json_str(o, "series"));
	memcpy(sv.digest, json_str(o, "digest"), SHA256_HEX);
	sv.n = (size_t)json_num(o, "n");
	sv.resume = (size_t)json_num(o, "resume");
	sv.early = emalloc(((size_t)cJSON_GetArraySize(w) + 1) * sizeof *sv.early);
	cJSON_ArrayForEach(v, w) {
		d = v->valuedouble;
		if (!json_is_int(v) || d < 0 || d >= (double)sv.n) {
			why = "malformed state line";
			break;
		}
		sv.early[sv.nearly++] = (size_t)d;
	}
	if (why == NULL && sv.resume >= sv.n)
		why = "malformed state line";
	if (why == NULL && json_get(o, "merge") != NULL && !load_memo(&sv, json_get(o, "merge")))
		why = "malformed state line";
	st->saved = erealloc(st->saved, (st->nsaved + 1) * sizeof *st->saved);
	st->saved[st->nsaved++] = sv;
	cJSON_Delete(o);
	return why;
}

/*
 * Loads --incremental's state; a state that cannot be used is ignored (a
 * cache), with one line naming the line of the file that failed and why:
 * a checksum that fails, a malformed line, a state of an earlier format
 * or written for other options.
 */
void
change_state_load(struct change_state *st, const char *path, const cJSON *head)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL;
	const char *why = NULL;
	size_t cap = 0;
	ssize_t len;
	long no = 0;

	if (fp == NULL)
		return;
	while (why == NULL && (len = getline(&line, &cap, fp)) > 0) {
		no++;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		why = load_state_line(st, no, line, (size_t)len, head);
	}
	if (why != NULL) {
		if (strncmp(why, "ignoring", 8) == 0)
			diag(path, no, "%s", why);
		else
			diag(path, no, "%s: ignoring the incremental state", why);
		for (size_t i = 0; i < st->nsaved; i++) {
			free(st->saved[i].series);
			free(st->saved[i].early);
			free(st->saved[i].memo);
		}
		st->nsaved = 0;
	}
	free(line);
	fclose(fp);
}

/* The state line of a series, after its merge. */
void
change_state_keep(buf *out, const char *series, const char *hex, const struct changes_split *sp)
{
	cJSON *o = json_new_object(), *w = json_new_array(), *a = json_new_array();
	struct changes_memo *m;
	size_t nm = changes_memo_get(sp, &m);

	json_set(o, "series", json_new_string(series));
	json_set(o, "n", json_new_int((long long)sp->n));
	json_set(o, "digest", json_new_string(hex));
	json_set(o, "resume", json_new_int((long long)sp->resume));
	for (size_t i = 0; i < sp->nearly; i++)
		json_append(w, json_new_int((long long)sp->early[i]));
	json_set(o, "weak", w);
	for (size_t i = 0; i < nm; i++) {
		const struct change_point *cp = &m[i].cp;
		const double f[5] = { cp->mean_before, cp->mean_after, cp->std_before,
		    cp->std_after, cp->pvalue };
		char t[5 * 32 + 3 * 24], *e;

		e = t + snprintf(t, 3 * 24, "%zu %zu %zu", m[i].lo, cp->index, m[i].hi);
		for (int k = 0; k < 5; k++) {
			*e++ = ' ';
			e = num_hex(e, f[k]);
		}
		*e = '\0';
		json_append(a, json_new_string(t));
	}
	json_set(o, "merge", a);
	free(m);
	change_state_line(out, o);
	cJSON_Delete(o);
}
