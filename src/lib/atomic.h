/*
 * atomic: files that others read appear whole or not at all.
 */
#ifndef PERF_ATOMIC_H
#define PERF_ATOMIC_H

#include <stddef.h>

/*
 * Writes n bytes to path through a hidden temporary file in the same
 * directory (so store readers never see it), fsync, rename over path and
 * fsync of the directory. Returns 0, or -1 with errno set; the temporary
 * file is removed on failure and path is left as it was.
 */
int atomic_write_file(const char *path, const void *data, size_t n);

/* Creates dir and its missing parents (mode 0777 & ~umask). 0 or -1/errno. */
int atomic_mkdirs(const char *dir);

/*
 * As atomic_write_file, but never replaces a file: when path exists,
 * returns -1 with errno EEXIST and leaves it as it was, even when another
 * process creates it at the same moment.
 */
int atomic_create_file(const char *path, const void *data, size_t n);

/* Removes path and everything below it (symbolic links are not followed). */
int atomic_remove_tree(const char *path);

/*
 * atomic_write_file() of n bytes, reporting a failure as
 * "PATH: cannot write the WHAT: reason". Returns 0 or -1.
 */
int atomic_save(const char *what, const char *path, const void *data, size_t n);

#endif
