#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "core/proc.h"
#include "lane/collect_run.h"
#include "lane/logtail.h"

char *
collect_find(void)
{
	char self[4096], *slash, *p;
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			p = easprintf("%.*s/perf-collect", (int)(slash - self), self);
			if (access(p, X_OK) == 0)
				return p;
			free(p);
		}
	}
	return estrdup("perf-collect");
}

int
collect_run_in(const char *dir, char **argv, const char *log, const char *what)
{
	struct proc_spec spec;
	struct proc_result res;
	char how[128];
	buf tail = BUF_INIT;
	int here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (here < 0 || chdir(dir) != 0) {
		warnx_("%s: %s", dir, strerror(errno));
		if (here >= 0)
			close(here);
		return -1;
	}
	memset(&spec, 0, sizeof spec);
	spec.argv = argv;
	spec.log = log;
	if (proc_run(&spec, &res) != 0) {
		warnx_("%s: cannot run %s: %s", what, argv[0], strerror(errno));
		rc = -1;
	} else if (res.interrupted) {
		rc = -1;
	} else if (!WIFEXITED(res.status) || WEXITSTATUS(res.status) != 0) {
		proc_describe(&res, how, sizeof how);
		warnx_("%s: %s %s", what, argv[0], how);
		logtail_block(&tail, what, log);
		fprintf(stderr, "%s\n", tail.s);
		buf_free(&tail);
		rc = -1;
	}
	if (fchdir(here) != 0)
		die("cannot return to the working directory: %s", strerror(errno));
	close(here);
	return rc;
}

/* The records of dir, parsed, until max of them (0: all) are in a. */
static void
read_records(const char *dir, cJSON *a, int max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	buf text = BUF_INIT;
	json_error e;

	if (d == NULL)
		return;
	while ((max == 0 || cJSON_GetArraySize(a) < max) && (de = readdir(d)) != NULL) {
		cJSON *rec = NULL;
		char *p;

		if (strncmp(de->d_name, "perf_", 5) != 0)
			continue;
		p = easprintf("%s/%s", dir, de->d_name);
		buf_reset(&text);
		if (buf_read_file(&text, p) == 0)
			rec = json_parse(text.s != NULL ? text.s : "", text.len, &e);
		if (rec != NULL)
			json_append(a, rec);
		free(p);
	}
	closedir(d);
	buf_free(&text);
}

cJSON *
collect_read_record(const char *dir)
{
	cJSON *a = json_new_array(), *rec;

	read_records(dir, a, 1);
	rec = cJSON_DetachItemFromArray(a, 0);
	cJSON_Delete(a);
	return rec;
}

cJSON *
collect_read_records(const char *dir)
{
	cJSON *a = json_new_array();

	read_records(dir, a, 0);
	return a;
}
