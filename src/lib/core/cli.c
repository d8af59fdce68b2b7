#include <stdio.h>
#include <stdlib.h>

#include "core/cli.h"
#include "core/err.h"

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
