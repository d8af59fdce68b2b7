/*
 * atomic: files that others read appear whole or not at all.
 */
#ifndef PERF_CORE_ATOMIC_H
#define PERF_CORE_ATOMIC_H

#include <stddef.h>

/*
 * Writes n bytes to path through a hidden temporary file in the same
 * directory (".<name>.tmp.XXXXXX", locked while it exists, so store
 * readers never see it and atomic_sweep() leaves it alone), fsync, rename
 * over path and fsync of the directory. Returns 0, or -1 with errno set;
 * the temporary file is removed on failure and path is left as it was.
 * Only a regular file is ever replaced: a symbolic link is followed (the
 * file it names is replaced, the link stays; a link to nothing is
 * refused, ENOENT); a device, FIFO or socket is opened and written in
 * place; a directory is refused (EISDIR).
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

/*
 * The safe age of a temporary file (seconds): a killed writer's older
 * ones are swept. A live writer's is locked whatever its age.
 */
#define ATOMIC_STALE_AGE 600

/*
 * Removes the temporary files of killed writers in dir: the names
 * atomic_write_file() uses, modified at least min_age seconds ago, that
 * no writer holds locked. Returns how many it removed.
 */
long atomic_sweep(const char *dir, long min_age);

/* Removes path and everything below it (symbolic links are not followed). */
int atomic_remove_tree(const char *path);

/*
 * atomic_write_file() of n bytes, reporting a failure as
 * "PATH: cannot write the WHAT: reason". Returns 0 or -1.
 */
int atomic_save(const char *what, const char *path, const void *data, size_t n);

/*
 * A directory written whole, then put in place at once: atomic_dir_begin()
 * makes a new empty directory beside dir (".<name>.new.XXXXXX" in dir's
 * parent, so the rename stays on one file system) and returns its path
 * (malloc'd), or NULL with errno set (an unwritable parent: nothing has
 * been done yet). atomic_dir_commit() flushes that tree to disk and puts
 * it at dir: an existing directory is exchanged with it in one rename
 * (renameat2's RENAME_EXCHANGE; where the file system lacks it, the old
 * tree is moved aside first) and then removed. Until the exchange, dir
 * is as it was, whatever happens to the writer; a reader sees the whole
 * old tree or the whole new one. Returns 0, or -1 with errno set (dir
 * then still holds the old tree, or nothing when it had none; tmp is
 * left for the caller to remove). A non-directory at dir is refused
 * (ENOTDIR).
 */
char *atomic_dir_begin(const char *dir);
int atomic_dir_commit(const char *tmp, const char *dir);

#endif
