/*
 * store_opts: the options that name where history comes from, alike in
 * perf-changes, perf-gate-rolling, perf-seed, perf-site, perf-summarize
 * and perf-upload: -s/--store (a directory or git+URL), --cache (where a
 * git store's cache clone is) and -H/--history (a JSON-lines stream,
 * repeatable). A program puts the entries it takes in its option table
 * (core/opt.h), with its own help line, and hands every opt_next() value
 * to store_opts_take() first.
 */
#ifndef PERF_LANE_STORE_STORE_OPTS_H
#define PERF_LANE_STORE_STORE_OPTS_H

#include <stdbool.h>

struct store_opts {
	const char *spec;	/* -s, --store; NULL: none given */
	const char *cache;	/* --cache; NULL: the default */
	char **histories;	/* -H, --history, in the order given */
	int nhistories;
};

/* opt_next()'s value for --cache (no short option). */
enum { STORE_OPT_CACHE = 0x200 };

/* Entries of a core/opt.h table (struct opt_def): help is the program's --help line. */
#define STORE_OPT_STORE(help) { 's', "store", 0, "store", help, NULL, NULL }
#define STORE_OPT_CACHE_DIR(help) { 0, "cache", STORE_OPT_CACHE, "dir", help, NULL, NULL }
#define STORE_OPT_HISTORY(arg, help) { 'H', "history", 0, arg, help, NULL, NULL }
/* The same, with the line's head as the program writes it. */
#define STORE_OPT_STORE_AS(head, help) { 's', "store", 0, "store", help, head, NULL }
#define STORE_OPT_HISTORY_AS(arg, head, help) { 'H', "history", 0, arg, help, head, NULL }

/*
 * Option c (opt_next()'s value) with its argument arg into so: true when
 * it is one of the three ('s', STORE_OPT_CACHE, 'H'), false (so untouched)
 * for any other, which is the caller's.
 */
bool store_opts_take(struct store_opts *so, int c, char *arg);

/* Frees what store_opts_take() allocated (the histories' list). */
void store_opts_free(struct store_opts *so);

#endif
