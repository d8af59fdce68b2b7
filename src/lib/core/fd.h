/*
 * fd: writing to a file descriptor whole.
 */
#ifndef PERF_CORE_FD_H
#define PERF_CORE_FD_H

#include <stddef.h>

/*
 * Writes the n bytes at p to fd, resuming after a short write or a
 * signal. 0, or -1 with errno (EIO for a write that took nothing); what
 * was written before a failure stays written.
 */
int fd_write_all(int fd, const void *p, size_t n);

#endif
