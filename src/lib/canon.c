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

void
canon_sha256_hex(const void *data, size_t n, char hex[SHA256_HEX])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;

	if (EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) != 1)
		die("SHA-256 failed");
	for (i = 0; i < len && i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	hex[64] = '\0';
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
