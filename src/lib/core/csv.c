#include <string.h>

#include "core/csv.h"
#include "core/json.h"

/* Appends s as one field. */
static void
csv_field(buf *b, const char *s)
{
	if (strpbrk(s, ",\"\r\n") == NULL) {
		buf_adds(b, s);
		return;
	}
	buf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '"')
			buf_addc(b, '"');
		buf_addc(b, *s);
	}
	buf_addc(b, '"');
}

void
csv_value(buf *b, const cJSON *v)
{
	buf t = BUF_INIT;

	if (v == NULL || cJSON_IsNull(v))
		return;
	if (cJSON_IsBool(v))
		buf_adds(b, cJSON_IsTrue(v) ? "true" : "false");
	else if (cJSON_IsString(v))
		csv_field(b, v->valuestring);
	else {
		json_write(&t, v, JSON_COMPACT, NULL);
		csv_field(b, t.s);
	}
	buf_free(&t);
}
