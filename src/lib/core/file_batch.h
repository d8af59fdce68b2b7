/*
 * file_batch: the small files of one directory read with few system calls.
 * On Linux with io_uring every file of a batch is opened by one call, then
 * read and closed by another; a store of many record files spends most of
 * its time entering the kernel otherwise (three calls a file). Where
 * io_uring is missing or refused (an older kernel, a seccomp filter),
 * file_batch_new() returns NULL and the caller reads file by file.
 */
#ifndef PERF_CORE_FILE_BATCH_H
#define PERF_CORE_FILE_BATCH_H

#include <stddef.h>

/* The most files one file_batch_read() takes. */
#define FILE_BATCH_MAX 64

/* The file did not fit the batch's buffer: read it by other means. */
#define FILE_BATCH_LONG (-100000L)

struct file_batch;

/*
 * A batch whose files are read up to bufsize - 1 bytes each; NULL when
 * io_uring cannot be used, or PERF_FILE_BATCH is 0 (the tests' switch).
 */
struct file_batch *file_batch_new(size_t bufsize);
void file_batch_free(struct file_batch *b);

/*
 * Reads the files names[0..n) (n <= FILE_BATCH_MAX) of the directory
 * dfd, each opened O_RDONLY | O_CLOEXEC and read once from its start. For
 * each file: res[i] is its length, -errno when it could not be opened or
 * read, or FILE_BATCH_LONG; text[i] is its text, '\0'-terminated, in the
 * batch's buffer until the next call.
 */
void file_batch_read(struct file_batch *b, int dfd, const char *const *names, size_t n,
    char **text, long *res);

#endif
