#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "canon.h"
#include "err.h"
#include "json.h"

int
canon_json(buf *out, const cJSON *v)
{
	return json_write(out, v, JSON_CANONICAL, NULL);
}

static void
hex_of(const unsigned char *md, unsigned int len, char hex[SHA256_HEX])
{
	for (unsigned int i = 0; i < len && i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	hex[64] = '\0';
}

void
canon_sha256_hex(const void *data, size_t n, char hex[SHA256_HEX])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	if (EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) != 1)
		die("SHA-256 failed");
	hex_of(md, len, hex);
}

struct canon_sha *
canon_sha_new(void)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		die("SHA-256 failed");
	return (struct canon_sha *)ctx;
}

void
canon_sha_update(struct canon_sha *h, const void *data, size_t n)
{
	if (EVP_DigestUpdate((EVP_MD_CTX *)h, data, n) != 1)
		die("SHA-256 failed");
}

void
canon_sha_final(struct canon_sha *h, char hex[SHA256_HEX])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	if (EVP_DigestFinal_ex((EVP_MD_CTX *)h, md, &len) != 1)
		die("SHA-256 failed");
	EVP_MD_CTX_free((EVP_MD_CTX *)h);
	hex_of(md, len, hex);
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
