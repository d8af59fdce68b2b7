/*
 * failalloc: an LD_PRELOAD shim for the fault tests. With FAILALLOC_N=n the
 * n-th call (from 1) to malloc, calloc, realloc or strdup returns NULL (with
 * ENOMEM), once; with FAILALLOC_COUNT=file the number of calls is written
 * to file at exit. The real allocator is glibc's own (__libc_*).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);

static unsigned long calls, fail_at;
static int ready;

static void
setup(void)
{
	const char *s = getenv("FAILALLOC_N");

	fail_at = s != NULL ? strtoul(s, NULL, 10) : 0;
	ready = 1;
}

static int
fail_now(void)
{
	unsigned long n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);

	if (!ready)
		setup();
	if (fail_at != 0 && n == fail_at) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

void *
malloc(size_t n)
{
	return fail_now() ? NULL : __libc_malloc(n);
}

void *
calloc(size_t n, size_t m)
{
	return fail_now() ? NULL : __libc_calloc(n, m);
}

void *
realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __libc_realloc(p, n);
}

char *
strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	return d != NULL ? memcpy(d, s, n) : NULL;
}

__attribute__((destructor)) static void
report(void)
{
	const char *f = getenv("FAILALLOC_COUNT");
	FILE *fp;

	if (f != NULL && (fp = fopen(f, "w")) != NULL) {
		fprintf(fp, "%lu\n", calls);
		fclose(fp);
	}
}
