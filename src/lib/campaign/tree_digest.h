/*
 * tree_digest: the digest of a directory tree (doc/campaign-report.md): the
 * SHA-256 of the canonical JSON of the array of its entries sorted by
 * path, each {"path" (relative, "/"), "type" ("file" | "directory"),
 * "size" (0 for a directory), "sha256" (of the content; null for a
 * directory)}. A symbolic link or a special file is refused. And copying a
 * tree, for a run's workspace.
 */
#ifndef PERF_CAMPAIGN_TREE_DIGEST_H
#define PERF_CAMPAIGN_TREE_DIGEST_H

#include "core/canon.h"

/*
 * The digest of the tree below dir (dir itself is not an entry). Returns
 * 0, or -1 with *why set to a new message naming the path at fault.
 */
int tree_digest(const char *dir, char hex[SHA256_HEX], char **why);

/* Copies the tree below src into dst (created). 0, or -1 with *why. */
int tree_copy(const char *src, const char *dst, char **why);

#endif
