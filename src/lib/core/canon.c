#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The SHA256_* functions, without OpenSSL 3's deprecation warnings. */
#define OPENSSL_API_COMPAT 0x10100000L
#include <openssl/sha.h>

#include "core/canon.h"
#include "core/err.h"
#include "core/json.h"

int
canon_json(buf *out, const cJSON *v)
{
	return json_write(out, v, JSON_CANONICAL, NULL);
}

/*
 * SHA-256 through OpenSSL's SHA256_* functions, not EVP: EVP fetches the
 * digest from a provider, which allocates locks on first use, and OpenSSL 3
 * can leave a null lock behind when one of those allocations fails and
 * crash later (found by the allocation-failure tests). These allocate
 * nothing and use the same assembly.
 */
struct canon_sha {
	SHA256_CTX ctx;
};

static void
hex_of(const unsigned char *md, char hex[SHA256_HEX])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}

void
canon_sha256_hex(const void *data, size_t n, char hex[SHA256_HEX])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256_CTX ctx;

	/* not SHA256(): in OpenSSL 3 that is EVP underneath */
	SHA256_Init(&ctx);
	SHA256_Update(&ctx, data, n);
	SHA256_Final(md, &ctx);
	hex_of(md, hex);
}

struct canon_sha *
canon_sha_new(void)
{
	struct canon_sha *h = emalloc(sizeof *h);

	SHA256_Init(&h->ctx);
	return h;
}

void
canon_sha_update(struct canon_sha *h, const void *data, size_t n)
{
	SHA256_Update(&h->ctx, data, n);
}

void
canon_sha_final(struct canon_sha *h, char hex[SHA256_HEX])
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	SHA256_Final(md, &h->ctx);
	free(h);
	hex_of(md, hex);
}

void
canon_sha_peek(const struct canon_sha *h, char hex[SHA256_HEX])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256_CTX ctx = h->ctx;

	SHA256_Final(md, &ctx);
	hex_of(md, hex);
}

int
canon_sha256(const cJSON *v, char hex[SHA256_HEX])
{
	buf b = BUF_INIT;
	int rc;

	if ((rc = canon_json(&b, v)) == 0)
		canon_sha256_hex(b.s, b.len, hex);
	buf_free(&b);
	return rc;
}

int
canon_profile_id(const cJSON *v, const char *prefix, char *out, size_t n)
{
	char hex[SHA256_HEX];

	if (canon_sha256(v, hex) != 0)
		return -1;
	snprintf(out, n, "%s%.16s", prefix, hex);
	return 0;
}
