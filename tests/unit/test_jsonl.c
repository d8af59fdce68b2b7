/* Unit tests for jsonl: the record reader (plain, gzip, pretty, broken). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "tap.h"

static char dir[] = "/tmp/perf-jsonl-XXXXXX";

static char *
put(const char *name, const char *data, size_t n, bool gz)
{
	char *path = malloc(strlen(dir) + strlen(name) + 2);
	FILE *fp;
	gzFile g;

	sprintf(path, "%s/%s", dir, name);
	if (gz) {
		g = gzopen(path, "wb");
		gzwrite(g, data, (unsigned)n);
		gzclose(g);
	} else {
		fp = fopen(path, "wb");
		fwrite(data, 1, n, fp);
		fclose(fp);
	}
	return path;
}

/* Reads every record of one file: "line:key" list and the error count. */
static char *
read_all(char *path, long *errors, bool any)
{
	jsonl_reader *r = jsonl_open(&path, 1);
	jsonl_span s;
	cJSON *v;
	buf b = BUF_INIT;

	if (any)
		jsonl_accept_any(r);
	while ((v = jsonl_next(r, &s)) != NULL) {
		const cJSON *k = json_get(v, "k");
		buf_addf(&b, "%s%ld:%s", b.len ? " " : "", s.line,
		    cJSON_IsString(k) ? k->valuestring : "-");
		cJSON_Delete(v);
	}
	*errors = jsonl_errors(r);
	jsonl_close(r);
	return buf_detach(&b);
}

int
main(void)
{
	static const char lines[] =
	    "{\"k\":\"a\"}\n\n   \n{\"k\":\"b\"}\r\n{\"k\":\"c\"}";
	static const char pretty[] =
	    "{\n  \"k\": \"a\",\n  \"n\": {\n    \"x\": [\n      1\n    ]\n  }\n}"
	    "{\n  \"k\": \"b\"\n}\n\n{\"k\":\"c\"}\n";
	static const char broken[] =
	    "{\"k\":\"a\"}\n"
	    "{\"k\": nope}\n"
	    "{\"k\":\"b\"} trailing\n"
	    "{\"k\":\"c\"\n"
	    "{\"k\":\"d\"}\n"
	    "[1,2]\n"
	    "42\n"
	    "{\"k\":\"e\n"
	    "{\"k\":\"f\"}\n";
	char *p, *got, *big;
	long errors;
	size_t n;

	if (mkdtemp(dir) == NULL)
		return 1;

	p = put("lines.jsonl", lines, sizeof lines - 1, false);
	got = read_all(p, &errors, false);
	is_str(got, "1:a 4:b 5:c", "JSON lines with blank lines, CRLF, no final newline");
	ok(errors == 0, "no errors");
	free(got);
	free(p);

	p = put("lines.jsonl.gz", lines, sizeof lines - 1, true);
	got = read_all(p, &errors, false);
	is_str(got, "1:a 4:b 5:c", "the same records through gzip");
	ok(errors == 0, "no errors in gzip input");
	free(got);
	free(p);

	p = put("pretty.json", pretty, sizeof pretty - 1, false);
	got = read_all(p, &errors, false);
	is_str(got, "1:a 8:b 12:c", "pretty-printed objects one after another, \"}{\" included");
	ok(errors == 0, "no errors in pretty input");
	free(got);
	free(p);

	p = put("broken.jsonl", broken, sizeof broken - 1, false);
	fprintf(stderr, "# (expect six diagnostics next)\n");
	got = read_all(p, &errors, false);
	is_str(got, "1:a 5:d 9:f", "valid records around broken ones are all read");
	ok(errors == 6, "six problems counted (%ld)", errors);
	free(got);
	got = read_all(p, &errors, true);
	is_str(got, "1:a 5:d 6:- 7:- 9:f", "non-objects are accepted on request");
	free(got);
	free(p);

	/* A line far longer than any fixed buffer. */
	n = 3 * 1024 * 1024;
	big = malloc(n + 64);
	strcpy(big, "{\"k\":\"long\",\"pad\":\"");
	memset(big + strlen(big), 'x', n);
	strcpy(big + 19 + n, "\"}\n{\"k\":\"after\"}\n");
	p = put("big.jsonl", big, strlen(big), false);
	got = read_all(p, &errors, false);
	is_str(got, "1:long 2:after", "a 3 MiB line is read whole");
	free(got);
	free(p);
	p = put("big.jsonl.gz", big, strlen(big), true);
	got = read_all(p, &errors, false);
	is_str(got, "1:long 2:after", "a 3 MiB line through gzip");
	free(got);
	free(p);

	/* A gzip stream cut short. */
	{
		char *gzp = put("cut.gz", big, strlen(big), true);
		struct stat st;

		stat(gzp, &st);
		truncate(gzp, st.st_size / 2);
		fprintf(stderr, "# (expect a gzip diagnostic next)\n");
		got = read_all(gzp, &errors, false);
		ok(errors >= 1, "a truncated gzip stream is an error (%ld)", errors);
		free(got);
		free(gzp);
	}
	free(big);

	fprintf(stderr, "# (expect two open diagnostics next)\n");
	got = read_all(dir, &errors, false);
	ok(errors == 1 && *got == '\0', "a directory is an error, not input");
	free(got);
	p = put("x", "", 0, false);
	unlink(p);
	got = read_all(p, &errors, false);
	ok(errors == 1, "a missing file is an error");
	free(got);
	free(p);
	p = put("empty", "", 0, false);
	got = read_all(p, &errors, false);
	ok(errors == 0 && *got == '\0', "an empty file has no records");
	free(got);
	free(p);
	return done_testing();
}
