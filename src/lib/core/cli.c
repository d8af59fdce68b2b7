#include <stdio.h>
#include <stdlib.h>

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
	fputs(text, status == 0 ? stdout : stderr);
	if (status == 0 && (fflush(stdout) != 0 || ferror(stdout)))
		status = EXIT_TROUBLE;
	exit(status);
}

long
cli_long(const char *usage, const char *name, const char *s, long min, long max,
    const char *what)
{
	long v;

	if (!num_opt_long(s, min, max, &v)) {
		if (what != NULL)
			warnx_("%s: not %s: '%s'", name, what, s);
		else
			warnx_("%s: not a number from %ld to %ld: '%s'", name, min, max, s);
		cli_usage(usage, EXIT_TROUBLE);
	}
	return v;
}

double
cli_double(const char *usage, const char *name, const char *s, double min, double max,
    const char *what)
{
	double v;

	if (!num_opt_double(s, min, max, &v)) {
		if (what != NULL)
			warnx_("%s: not %s: '%s'", name, what, s);
		else
			warnx_("%s: not a number from %g to %g: '%s'", name, min, max, s);
		cli_usage(usage, EXIT_TROUBLE);
	}
	return v;
}

int64_t
cli_time(const char *usage, const char *name, const char *s, const char *what)
{
	int64_t v;

	if (!isotime_parse(s, &v)) {
		warnx_("%s: not %s: '%s'", name, what, s);
		cli_usage(usage, EXIT_TROUBLE);
	}
	return v;
}
