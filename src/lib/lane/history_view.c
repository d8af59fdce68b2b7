#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/num.h"
#include "core/text.h"
#include "lane/history_view.h"

const char **
strset_slot(struct strset *set, const char *str)
{
	size_t i;

	if ((set->n + 1) * 2 >= set->cap) {
		const char **old = set->slot;
		size_t oc = set->cap;

		set->cap = oc ? oc * 2 : 1024;
		set->slot = ecalloc(set->cap, sizeof *set->slot);
		for (i = 0; i < oc; i++)
			if (old[i] != NULL) {
				size_t j = text_hash(old[i]) & (set->cap - 1);
				while (set->slot[j] != NULL)
					j = (j + 1) & (set->cap - 1);
				set->slot[j] = old[i];
			}
		free(old);
	}
	i = text_hash(str) & (set->cap - 1);
	while (set->slot[i] != NULL && strcmp(set->slot[i], str) != 0)
		i = (i + 1) & (set->cap - 1);
	return &set->slot[i];
}

bool
strset_has(const struct strset *set, const char *str)
{
	size_t i;

	if (set->cap == 0)
		return false;
	i = text_hash(str) & (set->cap - 1);
	while (set->slot[i] != NULL) {
		if (strcmp(set->slot[i], str) == 0)
			return true;
		i = (i + 1) & (set->cap - 1);
	}
	return false;
}

void
strset_free(struct strset *set)
{
	free(set->slot);
	set->slot = NULL;
	set->cap = set->n = 0;
}

int
history_kind(const char *const ident[IDENTITY_KEYS], const cJSON *const v[IDENTITY_KEYS],
    const cJSON *schema)
{
	bool complete = true, present = false;

	for (int i = 0; i < IDENTITY_KEYS; i++) {
		complete &= ident[i][0] != '\0';
		present |= v[i] != NULL && !cJSON_IsNull(v[i]);
	}
	if (complete)
		return KIND_V2;
	if (present || (schema != NULL && (json_is_int(schema) ?
	    strcmp(schema->valuestring, "2") == 0 :
	    cJSON_IsString(schema) && strcmp(schema->valuestring, "2") == 0)))
		return KIND_INVALID_V2;
	return KIND_LEGACY_V1;
}

void
history_label_num(buf *b, double x, int prec)
{
	char t[NUM_BUFSZ];
	size_t n;

	num_fixed(t, x, prec);
	if (strchr(t, '.') != NULL) {
		n = strlen(t);
		while (n > 0 && t[n - 1] == '0')
			t[--n] = '\0';
		if (n > 0 && t[n - 1] == '.')
			t[--n] = '\0';
	}
	buf_adds(b, strcmp(t, "-0") == 0 ? "0" : t);
}
