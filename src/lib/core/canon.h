/*
 * canon: canonical JSON and the SHA-256 fingerprints built on it.
 *
 * The canonical text is byte-identical to Python's
 * json.dumps(value, sort_keys=True, separators=(",", ":")): keys sorted by
 * code point, ASCII escapes, integers as integers and floats as repr().
 */
#ifndef PERF_CORE_CANON_H
#define PERF_CORE_CANON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

#define SHA256_HEX 65

/* Appends the canonical text of v. Returns -1 for a non-finite number. */
int canon_json(buf *out, const cJSON *v);
/* Lowercase hex SHA-256 of n bytes (OpenSSL EVP). */
void canon_sha256_hex(const void *data, size_t n, char hex[SHA256_HEX]);
/* SHA-256 of a stream: new, update as the bytes come, final (which frees it). */
struct canon_sha;
struct canon_sha *canon_sha_new(void);
void canon_sha_update(struct canon_sha *h, const void *data, size_t n);
void canon_sha_final(struct canon_sha *h, char hex[SHA256_HEX]);
/* The SHA-256 of the bytes h has had so far; h goes on as it was. */
void canon_sha_peek(const struct canon_sha *h, char hex[SHA256_HEX]);
/* SHA-256 of the canonical text of v. Returns -1 for a non-finite number. */
int canon_sha256(const cJSON *v, char hex[SHA256_HEX]);
/*
 * A profile id: prefix + the first 16 hex digits of canon_sha256(v), as
 * "hw-41f86157a00d7e43". out must hold strlen(prefix) + 17 bytes.
 */
int canon_profile_id(const cJSON *v, const char *prefix, char *out, size_t n);

#endif
