/*
 * jsonl: the input and output of every filter.
 *
 * Input: the files named as operands in order, or stdin when there are
 * none or the operand is "-". Gzip input is recognised by its magic bytes
 * and decompressed on the fly (zlib); anything else is read as it is.
 * Records are JSON values one after another: one per line (JSON lines) or
 * pretty-printed over several lines, as the reference writes its files.
 * Blank lines are skipped and lines of any length are read whole, up to
 * JSONL_MAX_RECORD bytes per record. Each record carries the file name and
 * the line where it starts.
 *
 * A problem (unreadable file, malformed or non-object record, text after a
 * record on its line) is reported on stderr as "prog: FILE:LINE: ..." and
 * counted, and reading goes on with the next record: callers exit 2 when
 * jsonl_errors() is not zero. Memory stays bounded by the largest record.
 *
 * Output: one compact JSON object per line on stdout, every write checked.
 */
#ifndef PERF_CORE_JSONL_H
#define PERF_CORE_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

#define JSONL_MAX_RECORD ((size_t)256 << 20)

typedef struct jsonl_reader jsonl_reader;

typedef struct {
	const char *file;	/* the input's name for diagnostics */
	long line;		/* line where the record starts */
	const char *text;	/* the record's text, valid until the next call */
	size_t len;
} jsonl_span;

/* Opens the inputs: paths[0..n), "-" is stdin; n == 0 reads stdin. */
jsonl_reader *jsonl_open(char *const *paths, int n);
/*
 * Names the inputs in diagnostics instead of their paths (a temporary
 * file's purpose); label must outlive the reader. Call before reading.
 */
void jsonl_label(jsonl_reader *r, const char *label);
/* Accept records that are not objects (default: objects only). */
void jsonl_accept_any(jsonl_reader *r);
/* The next record's text: 1, or 0 at the end of all inputs. */
int jsonl_next_span(jsonl_reader *r, jsonl_span *s);
/* jsonl_next_span + jsonl_parse, skipping bad records: NULL at the end. */
cJSON *jsonl_next(jsonl_reader *r, jsonl_span *s);
/* Reports a problem with a record (diag) and counts it. */
void jsonl_error(jsonl_reader *r, const jsonl_span *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
long jsonl_errors(const jsonl_reader *r);
void jsonl_close(jsonl_reader *r);

/*
 * Writes v as one compact line to fp. Returns 0, or -1 when v holds a
 * non-finite number (nothing is written; *where names the key, if given).
 * Write errors are remembered and reported by jsonl_finish().
 */
int jsonl_emit(FILE *fp, const cJSON *v, buf *where);
/*
 * jsonl_emit to stdout for the record at s; a value that cannot be written
 * is reported against s ("cannot write KEY: not a finite number") and
 * counted in r. Returns 0 or -1.
 */
int jsonl_put(jsonl_reader *r, const jsonl_span *s, const cJSON *v);

/*
 * Flushes and closes fp (stdout), checking every earlier write. Returns 0,
 * or reports "write error on NAME: reason" and returns -1.
 */
int jsonl_finish(FILE *fp, const char *name);

/*
 * The loop of a filter: every record of the inputs (as jsonl_open) goes to
 * process(), which owns nothing (the record is freed after it returns);
 * then stdout is flushed and checked. Returns 2 when a record or the output
 * had a problem, else 0.
 */
int jsonl_filter(char *const *paths, int n,
    void (*process)(jsonl_reader *, const jsonl_span *, cJSON *));
/* jsonl_filter with ctx passed to each call of process. */
int jsonl_filter_ctx(char *const *paths, int n,
    void (*process)(jsonl_reader *, const jsonl_span *, cJSON *, void *), void *ctx);

#endif
