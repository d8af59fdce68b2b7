#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "core/err.h"
#include "core/isotime.h"
#include "core/num.h"

void
cli_version(void)
{
	printf("%s (perfkite) %s\n", err_progname(), PERFKITE_VERSION);
	exit(fflush(stdout) == 0 && !ferror(stdout) ? 0 : EXIT_TROUBLE);
}

void
cli_usage(const char *text, int status)
{
	const char *end = strstr(text, "\n\n");

	/* A usage error shows the synopsis; --help the options too. */
	if (status == 0)
		fputs(text, stdout);
	else
		fwrite(text, 1, end != NULL ? (size_t)(end - text) + 1 : strlen(text), stderr);
	if (status == 0 && (fflush(stdout) != 0 || ferror(stdout)))
		status = EXIT_TROUBLE;
	exit(status);
}

/* "name: not what: 's'" (what NULL: "a number from RANGE"), the usage, exit 2. */
static void __attribute__((noreturn))
refuse(const char *usage, const char *name, const char *s, const char *what, const char *range)
{
	if (what != NULL)
		warnx("%s: not %s: '%s'", name, what, s);
	else
		warnx("%s: not a number from %s: '%s'", name, range, s);
	cli_usage(usage, EXIT_TROUBLE);
}

long
cli_long(const char *usage, const char *name, const char *s, long min, long max,
    const char *what)
{
	char range[64];
	long v;

	if (!num_opt_long(s, min, max, &v)) {
		snprintf(range, sizeof range, "%ld to %ld", min, max);
		refuse(usage, name, s, what, range);
	}
	return v;
}

double
cli_double(const char *usage, const char *name, const char *s, double min, double max,
    const char *what)
{
	char range[64];
	double v;

	if (!num_opt_double(s, min, max, &v)) {
		snprintf(range, sizeof range, "%g to %g", min, max);
		refuse(usage, name, s, what, range);
	}
	return v;
}

void
cli_span(const char *usage, const char *name, const char *s, long min, long max, long *lo,
    long *hi)
{
	const char *colon = strchr(s, ':');
	char what[96], *a;
	bool ok;

	a = colon != NULL ? estrndup(s, (size_t)(colon - s)) : NULL;
	ok = colon != NULL && num_opt_long(a, min, max, lo) &&
	    num_opt_long(colon + 1, min, max, hi) && *lo <= *hi;
	free(a);
	if (!ok) {
		snprintf(what, sizeof what, "min:max with %ld <= min <= max <= %ld", min, max);
		refuse(usage, name, s, what, NULL);
	}
}

int64_t
cli_time(const char *usage, const char *name, const char *s, const char *what)
{
	int64_t v;

	if (!isotime_parse(s, &v))
		refuse(usage, name, s, what, NULL);
	return v;
}

unsigned long long
cli_seed(const char *usage, const char *s)
{
	long long seed;

	if (num_py_int(s, &seed) != 1 || seed < 0 || strchr(s, '_')) {
		warnx("--seed: not a non-negative integer: '%s'", s);
		cli_usage(usage, EXIT_TROUBLE);
	}
	return (unsigned long long)seed;
}
