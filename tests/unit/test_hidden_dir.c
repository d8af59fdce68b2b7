/*
 * Unit tests for hidden_dir: which files of a store's hidden directory
 * are read, what each reader is given, and how failures are counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "lane/store/hidden_dir.h"
#include "tap.h"

struct seen {
	int n;
	char path[256];
	double v;
	int fail_on;		/* the value a reader rejects */
};

static int
each(void *ctx, const char *file, const char *path, const cJSON *o)
{
	struct seen *s = ctx;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "v");

	(void)file;
	s->n++;
	snprintf(s->path, sizeof s->path, "%s", path);
	s->v = cJSON_IsNumber(v) ? v->valuedouble : -1;
	return s->v == s->fail_on ? -1 : 0;
}

static void
put(const char *dir, const char *name, const char *text)
{
	char *path = easprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
	free(path);
}

int
main(void)
{
	char tmpl[] = "/tmp/test_hidden_dir.XXXXXX", *dir = mkdtemp(tmpl);
	char *sub = easprintf("%s/.h", dir);
	struct seen s = { 0, "", 0, 0 };

	ok(hidden_dir_load(dir, ".h", ".json", "things", false, each, &s) == 0 && s.n == 0,
	    "a directory that is not there holds no file and no failure");
	put(dir, ".h", "");
	ok(hidden_dir_load(dir, ".h", ".json", "things", false, each, &s) == 0 && s.n == 0,
	    "a file where the directory would be holds no file and no failure");
	unlink(sub);
	mkdir(sub, 0777);
	put(sub, "a.json", "{\"v\": 1}");
	put(sub, ".b.json", "{\"v\": 2}");
	put(sub, "c.txt", "{\"v\": 3}");
	put(sub, ".json", "{\"v\": 4}");
	ok(hidden_dir_load(dir, ".h", ".json", "things", false, each, &s) == 0 && s.n == 1 &&
	    s.v == 1, "only the files with the suffix, hidden ones skipped, are read");
	is_str(s.path, ".h/a.json", "the reader is given the name relative to the store");

	put(sub, "d.json", "{\"v\": ");
	put(sub, "e.json", "{\"v\": 5}");
	s.n = 0;
	s.fail_on = 5;
	ok(hidden_dir_load(dir, ".h", ".json", "things", false, each, &s) == 2 && s.n == 2,
	    "bad JSON and a reader's rejection are counted, and the walk goes on");
	s.n = 0;
	ok(hidden_dir_load(dir, ".h", ".json", "things", true, each, &s) == 1 && s.n <= 2,
	    "with stop, the walk ends at the first failure");

	chmod(sub, 0);
	if (access(sub, R_OK) == 0)
		ok(1, "# skip an unreadable directory (running as root)");
	else
		ok(hidden_dir_load(dir, ".h", ".json", "things", false, each, &s) == 1,
		    "an unreadable directory is one failure");
	chmod(sub, 0777);
	for (const char *const *n = (const char *const[]){ "a.json", ".b.json", "c.txt",
	    ".json", "d.json", "e.json", NULL }; *n != NULL; n++) {
		char *p = easprintf("%s/%s", sub, *n);
		unlink(p);
		free(p);
	}
	rmdir(sub);
	rmdir(dir);
	free(sub);
	return done_testing();
}
