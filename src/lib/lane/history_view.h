/*
 * history_view: what the two readers of the store's history for people
 * share, perf-summarize --html (lane/dash) and perf-site
 * (lane/site): how a record's fields are read, its cohort kind and key,
 * an index of cohort keys, and numbers for labels and coordinates.
 * (Their sets of strings, for interning, are core/strmap's.)
 */
#ifndef PERF_LANE_HISTORY_VIEW_H
#define PERF_LANE_HISTORY_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/strmap.h"
#include "lane/identity.h"

/* A record's cohort kind (FastVideo PR #1613), and its name in a cohort key. */
enum { KIND_V2, KIND_INVALID_V2, KIND_LEGACY_V1 };
extern const char *const history_kind_name[3];

/*
 * The parts of a cohort key: kind, model, gpu (empty for v2), then the
 * identity values, key[HKEY_IDENT + IDENTITY_RECIPE] the recipe's.
 */
enum history_key_part {
	HKEY_KIND, HKEY_MODEL, HKEY_GPU, HKEY_IDENT,
	HISTORY_KEY_PARTS = HKEY_IDENT + IDENTITY_KEYS
};

/*
 * The kind of a record from its identity: ident the str() of each key
 * ("" when missing), v the keys' values, schema result_schema_version.
 */
int history_kind(const char *const ident[IDENTITY_KEYS], const cJSON *const v[IDENTITY_KEYS],
    const cJSON *schema);

/*
 * One pass over a record's members: f[i] the member named keys[i], or
 * NULL (f has n entries, all set).
 */
void history_fields(const cJSON *rec, const char *const keys[], size_t n, const cJSON **f);

/*
 * The text of a value as Python's str() writes it, for a caller that
 * interns or keeps it: missing for a missing or null value, a string's
 * own text, else a new string left in *owned (free it after).
 */
const char *history_pystr(const cJSON *v, const char *missing, char **owned);

/* Whether v is an http(s) URL: only a web address becomes a link. */
bool history_web_url(const cJSON *v);

/* A record's success: a missing one counts as true. */
bool history_success(const cJSON *success);

/* Whether a comparison_status fails the run: REGRESSION, RECIPE_MISMATCH, INFRA_ERROR. */
bool history_failing(const char *status);

/* baseline_eligible, or, in a record with neither it nor run_source, true. */
bool history_eligible(const cJSON *eligible, const cJSON *run_source);

/* A record's cohort key. */
void history_cohort_key(const char *key[HISTORY_KEY_PARTS], int kind, const char *model,
    const char *gpu, const char *const ident[IDENTITY_KEYS]);

/* The parts of a key, each ended by 0x1f (a new string). */
char *history_key_join(const char *const key[HISTORY_KEY_PARTS]);

/* Joined cohort keys and the number each stands for (the index owns the keys). */
struct keyindex {
	struct strmap map;
};

/* An index with room for n keys. */
void keyindex_init(struct keyindex *ki, size_t n);

/*
 * The number of joined (which the index takes): the one it had, or, when
 * it is new, next and *added set. A new joined lives until keyindex_free().
 */
size_t keyindex_put(struct keyindex *ki, char *joined, size_t next, bool *added);

void keyindex_free(struct keyindex *ki);

/* A whole number, without printf. */
void history_add_int(buf *b, long long v);

/* A number for a label: up to prec decimals, no trailing zeros, never -0. */
void history_label_num(buf *b, double x, int prec);

#endif
