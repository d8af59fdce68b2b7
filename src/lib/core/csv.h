/*
 * csv: RFC 4180 fields (quoted only where needed).
 */
#ifndef PERF_CORE_CSV_H
#define PERF_CORE_CSV_H

#include <cjson/cJSON.h>

#include "core/buf.h"

/* Appends a JSON value as one field: empty for null or NULL, JSON text otherwise. */
void csv_value(buf *b, const cJSON *v);

#endif
