/*
 * parsers: one function per format, for import.c. A JSON format gets the
 * parsed document; a failure fills msg (naming the element at fault: a
 * parsed tree has no line numbers) and returns -1. The text formats
 * report the line.
 */
#ifndef PERF_LANE_IMPORT_PARSERS_H
#define PERF_LANE_IMPORT_PARSERS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "lane/import/import.h"

int gbench_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz);
/*
 * gbench_parse() of text without its tree, where the text is Google
 * Benchmark's usual output (detect: only when it is recognised as that):
 * 0, or -1 with s emptied (its format kept) for any text it does not read,
 * valid or not, and the caller parses the text.
 */
int gbench_fast(const char *text, size_t len, bool detect, struct import_suite *s);
int pytest_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz);
int hyperfine_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz);
int jmh_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz);
int bdn_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz);
int generic_parse(const cJSON *doc, struct import_suite *s, char *msg, size_t msgsz);
int criterion_parse_file(const cJSON *doc, const char *path, struct import_suite *s,
    char *msg, size_t msgsz);
int criterion_parse_dir(const char *dir, struct import_suite *s, long *line,
    char *msg, size_t msgsz);
int go_parse(const char *text, size_t len, struct import_suite *s, long *line,
    char *msg, size_t msgsz);
int catch2_parse(const char *text, size_t len, struct import_suite *s, long *line,
    char *msg, size_t msgsz);

/* Whether text reads as go test -bench output. */
bool go_looks_like(const char *text, size_t len);

/*
 * Benchmarks found by id while a parser groups repeated rows: the index
 * of id in s->b, or -1.
 */
struct import_index;
struct import_index *import_index_new(void);
long import_index_find(const struct import_index *ix, const struct import_suite *s,
    const char *id);
void import_index_add(struct import_index *ix, const struct import_suite *s, long i);
void import_index_free(struct import_index *ix);


/* A number member of o, as a double: false when absent or not a number. */
bool import_num(const cJSON *o, const char *key, double *out);

#endif
