#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/path.h"

/*
 * The real path of p, as Python's os.path.realpath: the part that exists
 * resolved, the rest appended as written ("." and ".." taken lexically).
 */
char *
path_resolve(const char *p)
{
	char cwd[PATH_MAX], *abs, *head, *tail = NULL, *r, *slash, *out;
	buf rest = BUF_INIT;

	if (p[0] == '/')
		abs = estrdup(p);
	else
		abs = easprintf("%s/%s", getcwd(cwd, sizeof cwd) != NULL ? cwd : ".", p);
	head = estrdup(abs);
	while ((r = realpath(head, NULL)) == NULL && (slash = strrchr(head, '/')) != NULL) {
		char *t = easprintf("%s%s%s", slash + 1, tail != NULL ? "/" : "",
		    tail != NULL ? tail : "");

		free(tail);
		tail = t;
		if (slash == head) {
			head[1] = '\0';
			r = realpath(head, NULL);
			break;
		}
		*slash = '\0';
	}
	buf_adds(&rest, r != NULL ? r : "/");
	for (char *c = tail != NULL ? strtok(tail, "/") : NULL; c != NULL; c = strtok(NULL, "/")) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			char *last = strrchr(rest.s, '/');

			rest.len = last != NULL && last != rest.s ? (size_t)(last - rest.s) : 1;
			rest.s[rest.len] = '\0';
			continue;
		}
		if (rest.len > 1)
			buf_addc(&rest, '/');
		buf_adds(&rest, c);
	}
	out = buf_detach(&rest);
	free(abs);
	free(head);
	free(tail);
	free(r);
	return out;
}

/* a is b or lies below it. */
bool
path_within(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (strcmp(b, "/") == 0)
		return true;
	return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}


bool
path_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char *ra, *rb;
	bool same;

	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	ra = path_resolve(a);
	rb = path_resolve(b);
	same = strcmp(ra, rb) == 0;
	free(ra);
	free(rb);
	return same;
}
