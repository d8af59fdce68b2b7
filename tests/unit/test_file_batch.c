/* Unit tests for file_batch: a directory's small files read together. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file_batch.h"
#include "tap.h"

#define BUFSIZE 64

static char dir[] = "/tmp/perf-file-batch-XXXXXX";

/* Writes n bytes of c (or nothing for n == 0) to dir/name. */
static void
put(const char *name, size_t n, char c)
{
	char p[512], *s = malloc(n + 1);
	FILE *fp;

	memset(s, c, n);
	snprintf(p, sizeof p, "%s/%s", dir, name);
	fp = fopen(p, "w");
	fwrite(s, 1, n, fp);
	fclose(fp);
	free(s);
}

/* Whether a file descriptor above the standard ones is still open. */
static int
open_fds(void)
{
	int n = 0;

	for (int fd = 3; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			n++;
	return n;
}

int
main(void)
{
	const char *names[FILE_BATCH_MAX];
	char *text[FILE_BATCH_MAX], nb[FILE_BATCH_MAX][16];
	long res[FILE_BATCH_MAX];
	struct file_batch *b;
	int dfd, fds, bad = 0;

	if (mkdtemp(dir) == NULL)
		return 1;
	setenv("PERF_FILE_BATCH", "0", 1);
	ok(file_batch_new(BUFSIZE) == NULL, "PERF_FILE_BATCH=0 turns batches off");
	unsetenv("PERF_FILE_BATCH");
	if ((b = file_batch_new(BUFSIZE)) == NULL) {
		/* No io_uring here (an old kernel, a seccomp filter): the callers read file by file. */
		printf("ok %d # skip io_uring is not available\n", ++tap_n);
		printf("1..%d\n", tap_n);
		rmdir(dir);
		return 0;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	fds = open_fds();
	put("small.json", 5, 'a');
	put("empty.json", 0, 'x');
	put("fits.json", BUFSIZE - 2, 'b');
	put("full.json", BUFSIZE - 1, 'c');
	put("long.json", 3 * BUFSIZE, 'd');
	{
		char p[512];

		snprintf(p, sizeof p, "%s/sub.json", dir);
		mkdir(p, 0755);
	}
	names[0] = "small.json";
	names[1] = "missing.json";
	names[2] = "empty.json";
	names[3] = "fits.json";
	names[4] = "full.json";
	names[5] = "long.json";
	names[6] = "sub.json";
	file_batch_read(b, dfd, names, 7, text, res);
	ok(res[0] == 5 && strcmp(text[0], "aaaaa") == 0, "a small file is read whole");
	ok(res[1] == -ENOENT, "a missing file is -ENOENT (%ld)", res[1]);
	ok(res[2] == 0 && text[2][0] == '\0', "an empty file is empty");
	ok(res[3] == BUFSIZE - 2 && strlen(text[3]) == BUFSIZE - 2 && text[3][0] == 'b',
	    "a file of bufsize - 2 bytes fits");
	ok(res[4] == FILE_BATCH_LONG, "a file of bufsize - 1 bytes may be longer: LONG");
	ok(res[5] == FILE_BATCH_LONG, "a longer file is LONG");
	ok(res[6] == -EISDIR, "a directory is -EISDIR (%ld)", res[6]);
	ok(open_fds() == fds, "every file opened is closed again");
	/* A full batch, twice, in the order given. */
	for (int i = 0; i < FILE_BATCH_MAX; i++) {
		snprintf(nb[i], sizeof nb[i], "f%02d.json", i);
		put(nb[i], (size_t)i % 40, (char)('A' + i % 26));
		names[i] = nb[i];
	}
	for (int round = 0; round < 2; round++) {
		file_batch_read(b, dfd, names, FILE_BATCH_MAX, text, res);
		for (int i = 0; i < FILE_BATCH_MAX; i++)
			if (res[i] != i % 40 || strspn(text[i], (char[]){ (char)('A' + i % 26), 0 }) !=
			    (size_t)(i % 40))
				bad++;
	}
	ok(bad == 0, "a full batch of %d files, twice: each file's own text", FILE_BATCH_MAX);
	ok(open_fds() == fds, "and every one closed");
	file_batch_free(b);
	close(dfd);
	{
		char cmd[600];

		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return 1;
	}
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
