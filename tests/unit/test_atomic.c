/* Unit tests for atomic: whole files or nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/atomic.h"
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

/* Writes "x" to d/name, modified age seconds ago. */
static void
put(const char *d, const char *name, long age)
{
	char p[512];
	struct timeval tv[2];
	FILE *fp;

	snprintf(p, sizeof p, "%s/%s", d, name);
	fp = fopen(p, "w");
	fputs("x", fp);
	fclose(fp);
	gettimeofday(&tv[0], NULL);
	tv[0].tv_sec -= age;
	tv[1] = tv[0];
	utimes(p, tv);
}

static bool
exists(const char *d, const char *name)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof p, "%s/%s", d, name);
	return lstat(p, &st) == 0;
}

/* Only a regular file is replaced: a link is followed, a FIFO written in place. */
static void
kinds(const char *d)
{
	char link[512], target[512], fifo[512];
	struct stat st;
	int fd;
	char got[8] = "";

	snprintf(target, sizeof target, "%s/target", d);
	snprintf(link, sizeof link, "%s/link", d);
	put(d, "target", 0);
	symlink("target", link);
	ok(atomic_write_file(link, "abc", 3) == 0 && lstat(link, &st) == 0 &&
	    S_ISLNK(st.st_mode), "a link is followed and kept");
	ok(stat(target, &st) == 0 && st.st_size == 3, "the file it names is replaced");
	unlink(link);
	symlink("nowhere", link);
	ok(atomic_write_file(link, "abc", 3) == -1 && errno == ENOENT, "a link to nothing is refused");
	ok(atomic_write_file(d, "abc", 3) == -1 && errno == EISDIR, "a directory is refused");
	snprintf(fifo, sizeof fifo, "%s/fifo", d);
	mkfifo(fifo, 0600);
	fd = open(fifo, O_RDONLY | O_NONBLOCK);
	ok(atomic_write_file(fifo, "abc", 3) == 0 && read(fd, got, sizeof got) == 3 &&
	    lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "a FIFO is written in place");
	close(fd);
	unlink(fifo);
	unlink(link);
	unlink(target);
}

static void
sweeps(const char *d)
{
	char p[512];
	int fd;

	put(d, ".old.json.tmp.Ab12Cd", 700);
	put(d, ".young.json.tmp.Ab12Cd", 100);
	put(d, ".held.json.tmp.Ab12Cd", 700);
	put(d, ".other.tmp.Ab12C", 700);
	put(d, "old.json.tmp.Ab12Cd", 700);
	snprintf(p, sizeof p, "%s/.held.json.tmp.Ab12Cd", d);
	fd = open(p, O_RDONLY);
	flock(fd, LOCK_EX);
	ok(atomic_sweep(d, ATOMIC_STALE_AGE) == 1, "one file swept");
	ok(!exists(d, ".old.json.tmp.Ab12Cd"), "an old temporary file is removed");
	ok(exists(d, ".young.json.tmp.Ab12Cd"), "a young one is kept");
	ok(exists(d, ".held.json.tmp.Ab12Cd"), "a locked one is kept");
	ok(exists(d, ".other.tmp.Ab12C") && exists(d, "old.json.tmp.Ab12Cd"),
	    "other names are kept");
	close(fd);
	ok(atomic_sweep(d, 0) == 2, "age 0: every unlocked temporary file");
	unlink(p);
	snprintf(p, sizeof p, "%s/.other.tmp.Ab12C", d);
	unlink(p);
	snprintf(p, sizeof p, "%s/old.json.tmp.Ab12Cd", d);
	unlink(p);
}

/* A directory put in place whole: atomic_dir_begin() and atomic_dir_commit(). */
static void
dirs(const char *d)
{
	char top[300], site[400], f[512], *tmp;
	struct stat st;

	snprintf(top, sizeof top, "%s/dirs", d);
	mkdir(top, 0777);
	snprintf(site, sizeof site, "%s/site", top);
	tmp = atomic_dir_begin(site);
	ok(tmp != NULL && stat(tmp, &st) == 0 && S_ISDIR(st.st_mode),
	    "begin makes a directory beside the destination");
	ok(tmp != NULL && strncmp(tmp, top, strlen(top)) == 0 &&
	    strstr(tmp, "/.site.new.") != NULL, "its name is hidden: %s", tmp ? tmp : "NULL");
	put(tmp, "old.html", 0);
	ok(atomic_dir_commit(tmp, site) == 0, "commit into a new place");
	snprintf(f, sizeof f, "%s/old.html", site);
	ok(stat(f, &st) == 0 && entries(top) == 1, "the tree is there, nothing beside it");
	free(tmp);
	snprintf(f, sizeof f, "%s/site/", top);
	tmp = atomic_dir_begin(f);
	ok(tmp != NULL && strstr(tmp, "/.site.new.") != NULL, "a trailing slash names the same");
	put(tmp, "new.html", 0);
	ok(atomic_dir_commit(tmp, site) == 0, "commit over the previous tree");
	snprintf(f, sizeof f, "%s/new.html", site);
	ok(stat(f, &st) == 0, "the new tree is in place");
	snprintf(f, sizeof f, "%s/old.html", site);
	ok(stat(f, &st) != 0 && entries(top) == 1, "the old tree is gone whole, nothing beside");
	free(tmp);
	snprintf(f, sizeof f, "%s/file", top);
	put(top, "file", 0);
	tmp = atomic_dir_begin(site);
	ok(atomic_dir_commit(tmp, f) == -1 && errno == ENOTDIR, "a file is never replaced");
	ok(stat(f, &st) == 0 && S_ISREG(st.st_mode), "and stays as it was");
	atomic_remove_tree(tmp);
	free(tmp);
	snprintf(f, sizeof f, "%s/file/site", top);
	ok(atomic_dir_begin(f) == NULL && errno == ENOTDIR,
	    "begin under a file fails before anything is made");
	atomic_remove_tree(top);
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
	kinds(sub);
	sweeps(sub);
	dirs(dir);
	snprintf(sub, sizeof sub, "%s/a", dir);
	ok(atomic_remove_tree(sub) == 0 && stat(sub, &st) != 0, "remove a tree");
	ok(atomic_remove_tree(sub) == 0, "removing a missing tree is fine");
	rmdir(dir);
	return done_testing();
}
