/* Unit tests for atomic: whole files or nothing. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "tap.h"

static char dir[] = "/tmp/perf-atomic-XXXXXX";

static int
entries(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	while ((e = readdir(dp)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(dp);
	return n;
}

int
main(void)
{
	char path[256], sub[256], got[64] = "";
	FILE *fp;
	struct stat st;

	mkdtemp(dir);
	snprintf(sub, sizeof sub, "%s/a/b/c", dir);
	ok(atomic_mkdirs(sub) == 0 && stat(sub, &st) == 0 && S_ISDIR(st.st_mode),
	    "mkdirs creates parents");
	ok(atomic_mkdirs(sub) == 0, "mkdirs on an existing directory");
	snprintf(path, sizeof path, "%s/a/b/c/rec.json", dir);
	ok(atomic_write_file(path, "{\"a\": 1}", 8) == 0, "atomic write");
	fp = fopen(path, "r");
	fgets(got, sizeof got, fp);
	fclose(fp);
	is_str(got, "{\"a\": 1}", "content written");
	ok(atomic_write_file(path, "{}", 2) == 0, "overwrite");
	ok(entries(sub) == 1, "no temporary file left behind");
	ok(stat(path, &st) == 0 && st.st_size == 2, "replaced whole");
	ok(atomic_mkdirs(path) == -1 && errno == ENOTDIR, "mkdirs over a file fails");
	snprintf(path, sizeof path, "%s/missing/x.json", dir);
	ok(atomic_write_file(path, "x", 1) == -1 && errno == ENOENT,
	    "missing directory fails with ENOENT");
	snprintf(path, sizeof path, "%s/a/b/c/new.json", dir);
	ok(atomic_create_file(path, "{\"n\": 1}", 8) == 0, "create a new file");
	ok(atomic_create_file(path, "{}", 2) == -1 && errno == EEXIST,
	    "create never replaces a file");
	ok(stat(path, &st) == 0 && st.st_size == 8, "the first file is kept whole");
	ok(entries(sub) == 2, "no temporary file left behind a refused create");
	snprintf(sub, sizeof sub, "%s/a", dir);
	ok(atomic_remove_tree(sub) == 0 && stat(sub, &st) != 0, "remove a tree");
	ok(atomic_remove_tree(sub) == 0, "removing a missing tree is fine");
	rmdir(dir);
	return done_testing();
}
