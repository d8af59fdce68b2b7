/*
 * history_view: what the two readers of the store's history for people
 * share, perf-summarize --html (lane/dashboard) and perf-site
 * (lane/site): a set of strings for interning, the cohort kind of a
 * record, and numbers for labels.
 */
#ifndef PERF_LANE_HISTORY_VIEW_H
#define PERF_LANE_HISTORY_VIEW_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "lane/identity.h"

/* A record's cohort kind (FastVideo PR #1613). */
enum { KIND_V2, KIND_INVALID_V2, KIND_LEGACY_V1 };

/* An open-addressed set of strings; the set holds pointers, not copies. */
struct strset {
	const char **slot;
	size_t cap, n;
};

/*
 * Where str is in the set, or the empty slot it goes in, the set grown
 * first so that one more fits. A caller that fills an empty slot
 * (with str or a copy) counts it in n.
 */
const char **strset_slot(struct strset *set, const char *str);

/* Whether str is in the set. */
bool strset_has(const struct strset *set, const char *str);

/* Frees the set's table, not its strings. */
void strset_free(struct strset *set);

/*
 * The kind of a record from its identity: ident the str() of each key
 * ("" when missing), v the keys' values, schema result_schema_version.
 */
int history_kind(const char *const ident[IDENTITY_KEYS], const cJSON *const v[IDENTITY_KEYS],
    const cJSON *schema);

/* A number for a label: up to prec decimals, no trailing zeros, never -0. */
void history_label_num(buf *b, double x, int prec);

#endif
