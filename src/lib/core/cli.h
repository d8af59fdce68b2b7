/*
 * cli: what every program's main() does the same way: --version, usage
 * on the right stream with the right status.
 */
#ifndef PERF_CORE_CLI_H
#define PERF_CORE_CLI_H

#include <stdio.h>

#ifndef PERFKITE_VERSION
#define PERFKITE_VERSION "unknown"
#endif

/* Prints "<prog> (perfkite) <version>" on stdout and exits 0. */
void cli_version(void) __attribute__((noreturn));

/*
 * Prints text (the usage) on stdout and exits 0 when status is 0, or on
 * stderr and exits with status otherwise.
 */
void cli_usage(const char *text, int status) __attribute__((noreturn));

#endif
