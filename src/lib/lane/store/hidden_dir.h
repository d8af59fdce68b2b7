/*
 * hidden_dir: the files of a store's hidden directory (the decisions of
 * .perfkite-decisions/, the bisect reports of .perfkite/bisect/), each one
 * JSON object, read whole.
 */
#ifndef PERF_LANE_STORE_HIDDEN_DIR_H
#define PERF_LANE_STORE_HIDDEN_DIR_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/*
 * What a reader does with one file's object o (o is freed after it
 * returns): file is the name as opened (for diagnostics), path the name
 * relative to the store ("SUB/NAME", what a record is known by). Returns 0,
 * or -1 after its own one-line warning.
 */
typedef int hidden_dir_each(void *ctx, const char *file, const char *path, const cJSON *o);

/*
 * Passes every file of dir/sub whose name ends in suffix (hidden names
 * skipped), in directory order, to each. A directory that is not there (or
 * not a directory) holds none. Every failure is warned ("DIR/SUB: cannot
 * read the WHAT: ...", "FILE: ...", "FILE:LINE: ..." for bad JSON) and
 * counted; with stop set the walk ends at the first. Returns the count.
 */
size_t hidden_dir_load(const char *dir, const char *sub, const char *suffix, const char *what,
    bool stop, hidden_dir_each *each, void *ctx);

#endif
