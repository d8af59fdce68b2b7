#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/err.h"
#include "core/json.h"
#include "core/jsonl.h"

#define CHUNK (256 * 1024)

struct jsonl_reader {
	char *const *paths;
	int npaths, next;
	bool use_stdin, any;
	gzFile gz;
	const char *name;
	const char *label;	/* the inputs' name in diagnostics, or NULL */
	bool eof;
	char *data;
	size_t cap, start, end;
	long line;	/* line number of data[start] */
	long errors;
};

jsonl_reader *
jsonl_open(char *const *paths, int n)
{
	jsonl_reader *r = ecalloc(1, sizeof *r);

	r->paths = paths;
	r->npaths = n;
	r->use_stdin = n == 0;
	return r;
}

void
jsonl_accept_any(jsonl_reader *r)
{
	r->any = true;
}

long
jsonl_errors(const jsonl_reader *r)
{
	return r->errors;
}

/* zlib's message without its "<fd:N>: " prefix. */
static const char *
zmsg(const char *msg)
{
	const char *p;

	if (strncmp(msg, "<fd:", 4) == 0 && (p = strstr(msg, ": ")) != NULL)
		return p + 2;
	return msg;
}

static void
close_input(jsonl_reader *r)
{
	int errnum = Z_OK;
	const char *msg;

	if (r->gz == NULL)
		return;
	msg = gzerror(r->gz, &errnum);
	if (errnum != Z_OK && errnum != Z_STREAM_END) {
		if (errnum == Z_BUF_ERROR)
			diag(r->name, r->line, "gzip data ends early");
		else
			diag(r->name, r->line, "corrupt gzip data: %s",
			    zmsg(msg));
		r->errors++;
	}
	gzclose(r->gz);
	r->gz = NULL;
	r->start = r->end = 0;
}

/* Opens the next input; false when there is none left. */
static bool
open_next(jsonl_reader *r)
{
	const char *path;
	struct stat st;
	int fd;

	for (;;) {
		if (r->use_stdin) {
			r->use_stdin = false;
			path = "-";
		} else if (r->next < r->npaths)
			path = r->paths[r->next++];
		else
			return false;
		if (strcmp(path, "-") == 0) {
			r->name = "<stdin>";
			fd = dup(STDIN_FILENO);
		} else {
			r->name = r->label != NULL ? r->label : path;
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
		if (fd < 0) {
			diag(r->name, 0, "cannot open: %s", strerror(errno));
			r->errors++;
			continue;
		}
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			diag(r->name, 0, "is a directory");
			r->errors++;
			close(fd);
			continue;
		}
		if ((r->gz = gzdopen(fd, "rb")) == NULL)
			die("out of memory");
		gzbuffer(r->gz, CHUNK);
		r->eof = false;
		r->line = 1;
		r->start = r->end = 0;
		return true;
	}
}

/* Reads more input after data[end]. Returns false at the end of the input. */
static bool
fill(jsonl_reader *r)
{
	int n, errnum;
	const char *msg;

	if (r->eof)
		return false;
	if (r->start > 0) {
		memmove(r->data, r->data + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->cap - r->end < CHUNK) {
		r->cap = r->cap ? r->cap * 2 : 2 * CHUNK;
		r->data = erealloc(r->data, r->cap);
	}
	n = gzread(r->gz, r->data + r->end, CHUNK);
	if (n < 0) {
		msg = gzerror(r->gz, &errnum);
		diag(r->name, r->line, "read error: %s",
		    errnum == Z_ERRNO ? strerror(errno) : zmsg(msg));
		r->errors++;
		r->eof = true;
		return false;
	}
	if (n == 0) {
		r->eof = true;
		return false;
	}
	r->end += (size_t)n;
	return true;
}

/* Ensures data[start + i] exists. */
static bool
have(jsonl_reader *r, size_t i)
{
	while (r->start + i >= r->end)
		if (!fill(r))
			return false;
	return true;
}

static long
count_lines(const char *p, size_t n)
{
	long c = 0;
	const char *q;

	while (n > 0 && (q = memchr(p, '\n', n)) != NULL) {
		c++;
		n -= (size_t)(q + 1 - p);
		p = q + 1;
	}
	return c;
}

/* Moves past n bytes of the current input. */
static void
consume(jsonl_reader *r, size_t n)
{
	r->line += count_lines(r->data + r->start, n);
	r->start += n;
}

/* Drops the rest of the current line (after an over-long record). */
static void
discard_line(jsonl_reader *r)
{
	char *q;

	for (;;) {
		q = memchr(r->data + r->start, '\n', r->end - r->start);
		if (q != NULL) {
			r->start = (size_t)(q - r->data) + 1;
			r->line++;
			return;
		}
		r->start = r->end;
		if (!fill(r))
			return;
	}
}

/* Bytes the scanner stops at, outside and inside strings. */
static const unsigned char stop_out[256] = {
	['{'] = 1, ['}'] = 1, ['['] = 1, [']'] = 1, ['"'] = 1, ['\n'] = 1,
};
static const unsigned char stop_str[256] = {
	['"'] = 1, ['\\'] = 1, ['\n'] = 1,
};

static bool
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * Finds where the value starting at data[start] ends, without parsing it:
 * an object or array ends at its closing bracket (strings and nesting
 * followed), or is cut short by a raw newline inside a string or by a line
 * that starts with '{' or '[' in column 1; anything else ends at the end of
 * its line. Sets *vend to the offset after the value. Returns false when
 * the value is longer than JSONL_MAX_RECORD.
 */
static bool
scan_value(jsonl_reader *r, size_t *vend)
{
	bool container = r->data[r->start] == '{' || r->data[r->start] == '[';
	bool instr = false, esc = false, nl = false;
	const char *p, *q;
	size_t i = 0, n;
	int depth = 0;

	for (;;) {
		if (r->start + i >= r->end && !fill(r)) {
			/* End of input: the parser says what is missing. */
			while (i > 0 && blank(r->data[r->start + i - 1]))
				i--;
			*vend = i;
			return true;
		}
		if (i > JSONL_MAX_RECORD)
			return false;
		p = r->data + r->start;
		n = r->end - r->start;
		if (!container) {
			if ((q = memchr(p + i, '\n', n - i)) != NULL) {
				*vend = (size_t)(q - p);
				return true;
			}
			i = n;
			continue;
		}
		while (i < n) {
			if (nl) {
				nl = false;
				if (p[i] == '{' || p[i] == '[') {
					/* A record starting in column 1: this one is cut short. */
					*vend = i - 1;
					return true;
				}
			}
			if (esc) {
				esc = false;
				i++;
				continue;
			}
			if (instr) {
				while (i < n && !stop_str[(unsigned char)p[i]])
					i++;
				if (i == n)
					break;
				if (p[i] == '\n') {
					*vend = i;	/* a raw newline ends a broken string */
					return true;
				}
				if (p[i++] == '"')
					instr = false;
				else
					esc = true;
				continue;
			}
			while (i < n && !stop_out[(unsigned char)p[i]])
				i++;
			if (i == n)
				break;
			switch (p[i++]) {
			case '"':
				instr = true;
				break;
			case '{':
			case '[':
				depth++;
				break;
			case '}':
			case ']':
				if (--depth == 0) {
					*vend = i;
					return true;
				}
				break;
			default:
				nl = true;
				break;
			}
		}
	}
}

int
jsonl_next_span(jsonl_reader *r, jsonl_span *s)
{
	size_t i, vend;
	bool container, garbage;
	char c;

	for (;;) {
		if (r->gz == NULL && !open_next(r))
			return 0;
		/* Skip blank space and blank lines. */
		for (;;) {
			while (r->start < r->end && blank(r->data[r->start])) {
				if (r->data[r->start] == '\n')
					r->line++;
				r->start++;
			}
			if (r->start < r->end || !fill(r))
				break;
		}
		if (r->start >= r->end) {
			close_input(r);
			continue;
		}
		s->file = r->name;
		s->line = r->line;
		container = r->data[r->start] == '{' || r->data[r->start] == '[';
		if (!scan_value(r, &vend)) {
			diag(r->name, s->line, "record longer than %zu MiB",
			    JSONL_MAX_RECORD >> 20);
			r->errors++;
			discard_line(r);
			continue;
		}
		/*
		 * The rest of the line must be blank, or start the next record
		 * ("}{" where the reference's files are concatenated).
		 */
		garbage = false;
		for (i = vend; have(r, i) && r->data[r->start + i] != '\n'; i++) {
			c = r->data[r->start + i];
			if (container && !garbage && (c == '{' || c == '['))
				break;
			if (!blank(c))
				garbage = true;
		}
		if (have(r, i) && r->data[r->start + i] == '\n')
			i++;	/* the newline */
		s->text = r->data + r->start;
		s->len = vend;
		consume(r, i);
		if (garbage) {
			diag(s->file, s->line, "unexpected text after the record");
			r->errors++;
			continue;
		}
		return 1;
	}
}

void
jsonl_error(jsonl_reader *r, const jsonl_span *s, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag(s->file, s->line, "%s", msg);
	r->errors++;
}

static const char *
type_name(const cJSON *v)
{
	switch (v->type & 0xff) {
	case cJSON_Array: return "an array";
	case cJSON_String: return "a string";
	case cJSON_Number: return "a number";
	case cJSON_NULL: return "null";
	case cJSON_True: case cJSON_False: return "a boolean";
	default: return "an object";
	}
}

/* Parses a span; NULL after reporting the problem. */
static cJSON *
jsonl_parse(jsonl_reader *r, const jsonl_span *s)
{
	json_error err;
	cJSON *v;

	v = json_parse(s->text, s->len, &err);
	if (v == NULL) {
		if (err.line <= 1)
			jsonl_error(r, s, "invalid JSON at column %ld: %s",
			    err.col, err.msg);
		else
			jsonl_error(r, s, "invalid JSON in the record starting "
			    "here: %s (line %ld, column %ld)", err.msg,
			    s->line + err.line - 1, err.col);
		return NULL;
	}
	if (!r->any && !cJSON_IsObject(v)) {
		jsonl_error(r, s, "not a JSON object (found %s)", type_name(v));
		cJSON_Delete(v);
		return NULL;
	}
	return v;
}

void
jsonl_label(jsonl_reader *r, const char *label)
{
	r->label = label;
}

cJSON *
jsonl_next(jsonl_reader *r, jsonl_span *s)
{
	cJSON *v;

	while (jsonl_next_span(r, s))
		if ((v = jsonl_parse(r, s)) != NULL)
			return v;
	return NULL;
}

void
jsonl_close(jsonl_reader *r)
{
	if (r == NULL)
		return;
	close_input(r);
	free(r->data);
	free(r);
}

/* The first write error on the output, reported by jsonl_finish(). */
static int out_errno;

int
jsonl_emit(FILE *fp, const cJSON *v, buf *where)
{
	static buf line = BUF_INIT;

	buf_reset(&line);
	if (json_write(&line, v, JSON_COMPACT, where) != 0)
		return -1;
	buf_addc(&line, '\n');
	if (fwrite(line.s, 1, line.len, fp) != line.len && out_errno == 0)
		out_errno = errno ? errno : EIO;
	return 0;
}

int
jsonl_put(jsonl_reader *r, const jsonl_span *s, const cJSON *v)
{
	buf where = BUF_INIT;
	int rc = jsonl_emit(stdout, v, &where);

	if (rc != 0)
		jsonl_error(r, s, "cannot write %s: not a finite number",
		    where.len > 0 ? where.s : "the record");
	buf_free(&where);
	return rc;
}

int
jsonl_finish(FILE *fp, const char *name)
{
	int e = out_errno;

	errno = 0;
	if (fflush(fp) != 0 && e == 0)
		e = errno ? errno : EIO;
	if (ferror(fp) && e == 0)
		e = EIO;
	if (fclose(fp) != 0 && e == 0)
		e = errno ? errno : EIO;
	if (e != 0) {
		warnx("write error on %s: %s", name, strerror(e));
		return -1;
	}
	return 0;
}

int
jsonl_filter_ctx(char *const *paths, int n,
    void (*process)(jsonl_reader *, const jsonl_span *, cJSON *, void *), void *ctx)
{
	jsonl_reader *r = jsonl_open(paths, n);
	jsonl_span s;
	cJSON *rec;
	long errors;

	while ((rec = jsonl_next(r, &s)) != NULL) {
		process(r, &s, rec, ctx);
		cJSON_Delete(rec);
	}
	errors = jsonl_errors(r);
	jsonl_close(r);
	if (jsonl_finish(stdout, "standard output") != 0 || errors > 0)
		return EXIT_TROUBLE;
	return EXIT_PASS;
}

/* jsonl_filter's process, carried through jsonl_filter_ctx. */
struct plain_process {
	void (*process)(jsonl_reader *, const jsonl_span *, cJSON *);
};

static void
call_plain(jsonl_reader *r, const jsonl_span *s, cJSON *rec, void *ctx)
{
	((const struct plain_process *)ctx)->process(r, s, rec);
}

int
jsonl_filter(char *const *paths, int n,
    void (*process)(jsonl_reader *, const jsonl_span *, cJSON *))
{
	struct plain_process p = { process };

	return jsonl_filter_ctx(paths, n, call_plain, &p);
}
