/*
 * logtail: the worker-log tail block of the reference (perf-gate-static(1)),
 * printed when a benchmark breaches a fixed threshold.
 */
#ifndef PERF_LANE_LOGTAIL_H
#define PERF_LANE_LOGTAIL_H

#include "core/buf.h"

#define LOGTAIL_LINES 200

/*
 * Appends the block for benchmark `id` and worker log `path` (NULL or ""
 * when none was recorded) to out, without a final newline: a line of 78
 * '=', "Worker log tail for <id> (<path>)", another line of '=', the last
 * 200 lines of <path>.1 then <path> (after "... truncated, showing last
 * 200 of <N> lines ..." when there were more), and a closing line of '='.
 * Lines end at "\n", "\r\n" or "\r"; invalid UTF-8 becomes U+FFFD. With
 * no readable line the block says the log is unavailable.
 */
void logtail_block(buf *out, const char *id, const char *path);

/*
 * logtail_block() of the log at path, whose header names shown instead
 * of the path (a log about to be removed, or kept under another name).
 */
void logtail_block_as(buf *out, const char *id, const char *path, const char *shown);

#endif
