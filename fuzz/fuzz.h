/*
 * fuzz.h: what the libFuzzer targets share: the input as a file (the
 * readers take paths), diagnostics silenced. Built with _GNU_SOURCE
 * (memfd_create).
 */
#ifndef PERF_FUZZ_H
#define PERF_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/err.h"

/* The data as the file /proc/self/fd/N (a memfd), its path in path. */
static int
fuzz_file(const uint8_t *data, size_t size, char path[64])
{
	int fd = memfd_create("fuzz", 0);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}

#endif
