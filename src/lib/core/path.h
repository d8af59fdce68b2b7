/*
 * path: file names as a user means them.
 */
#ifndef PERF_CORE_PATH_H
#define PERF_CORE_PATH_H

#include <stdbool.h>

/*
 * The real path of p, as Python's os.path.realpath: the part that exists
 * resolved, the rest appended as written ("." and ".." taken lexically).
 * A new string.
 */
char *path_resolve(const char *p);

/* a is b or lies below it (both resolved). */
bool path_within(const char *a, const char *b);

/* a and b name one file: the same inode when both exist, else the same resolved path. */
bool path_same_file(const char *a, const char *b);

#endif
